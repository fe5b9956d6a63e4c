import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findCycles, importGraph } from '../../scripts/lint/import-cycles.mjs';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ord-cycles-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function files(sources: Record<string, string>): Promise<string[]> {
  for (const [name, text] of Object.entries(sources)) await writeFile(path.join(dir, name), text);
  return Object.keys(sources).map((name) => path.join(dir, name));
}

describe('import-cycles: no file circles, types included', () => {
  it('finds a circle of value imports, a re-export and a dynamic import among them (what import-x/no-cycle held before it)', async () => {
    const graph = importGraph(
      await files({
        'a.ts': "export { b } from './b.js';\nexport const a = 1;\n",
        'b.ts': "export const b = async () => (await import('./c.js')).c;\n",
        'c.ts': "import { a } from './a.js';\nexport const c = a;\n",
      }),
    );
    expect(findCycles(graph).map((cycle) => cycle.map((f) => path.basename(f)))).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('finds a circle closed by a type import, which import-x/no-cycle let pass', async () => {
    const graph = importGraph(
      await files({
        'a.ts': "import { b } from './b.js';\nexport const a = b;\n",
        'b.ts': "import type { A } from './c.js';\nexport const b = 1 as unknown as A;\n",
        'c.ts': "import type { a } from './a.js';\nexport type A = typeof a;\n",
        'd.ts': "import { a } from './a.js';\nexport const d = a;\n",
      }),
    );
    expect(findCycles(graph).map((cycle) => cycle.map((f) => path.basename(f)))).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('finds none in a tree, and counts packages and missing files as no edge', async () => {
    const graph = importGraph(
      await files({
        'a.ts': "import { b } from './b.js';\nimport { z } from 'zod';\nimport { gone } from './gone.js';\nexport const a = [b, z, gone];\n",
        'b.ts': "export const b = await import('./c.js');\n",
        'c.ts': 'export const c = 1;\n',
      }),
    );
    expect(findCycles(graph)).toEqual([]);
    expect(graph.get(path.join(dir, 'b.ts'))).toEqual([path.join(dir, 'c.ts')]);
  });
});
