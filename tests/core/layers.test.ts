/**
 * core's folders in layers, and core/jobs's rooms in layers of their own (docs/ARCHITECTURE.md §9): the zones
 * eslint.config.js builds from CORE_LAYERS and JOBS_LAYERS refuse an import up the order, so no two folders import each
 * other — what a file cycle check (scripts/lint/import-cycles.mjs), which sees files, misses.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import type { Linter } from 'eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import ts from 'typescript';
import { afterEach, describe, expect, it } from 'vitest';
import { coreLayerZones } from '../../scripts/lint/core-layers.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RULE = 'import-x/no-restricted-paths';

let dir: string | null = null;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = null;
});

/** A core folder of `files` (path under core → source) in a fresh temporary folder; returns core's path. */
async function coreOf(files: Record<string, string>): Promise<string> {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ord-layers-'));
  const core = path.join(dir, 'core');
  for (const [file, source] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(core, file)), { recursive: true });
    await writeFile(path.join(core, file), source);
  }
  return core;
}

/** Lints core's files with the zones alone, resolved as eslint.config.js resolves (.js specifiers find the .ts). */
async function lintLayers(core: string, layers: string[]): Promise<Map<string, Linter.LintMessage[]>> {
  const eslint = new ESLint({
    cwd: path.dirname(core),
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { 'import-x': importX },
        settings: { 'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'], extensionAlias: { '.js': ['.ts', '.js'] } })] },
        rules: { [RULE]: ['error', { zones: coreLayerZones(core, layers) }] },
      },
    ],
  });
  const results = await eslint.lintFiles(['core/**/*.ts']);
  return new Map(results.map((r) => [path.relative(core, r.filePath), r.messages]));
}

describe('core layers', () => {
  it('refuses the import that makes two folders import each other, type imports too, naming both folders', async () => {
    const core = await coreOf({
      'gateway/gateway.ts': "import type { Job } from '../jobs/link.js';\nexport type Gateway = { job: Job };\n",
      'jobs/link.ts': "import type { Gateway } from '../gateway/gateway.js';\nexport type Job = { gateway: Gateway | null };\n",
    });
    const messages = await lintLayers(core, ['gateway', 'jobs']);
    expect(messages.get('jobs/link.ts')).toEqual([]);
    expect(messages.get('gateway/gateway.ts')).toMatchObject([
      { ruleId: RULE, line: 1, message: expect.stringContaining('core/gateway may not import core/jobs') },
    ]);
  });

  it('lets imports go down the order and refuses the one that closes a cycle through a third folder', async () => {
    const core = await coreOf({
      'catalog/price.ts': "import { ask } from '../service/call.js';\nexport const price = () => ask();\n",
      'jobs/cost.ts': "import { price } from '../catalog/price.js';\nexport const cost = () => price();\n",
      'service/call.ts': "import { cost } from '../jobs/cost.js';\nexport const ask = () => 1;\nexport const total = () => cost();\n",
    });
    const messages = await lintLayers(core, ['catalog', 'jobs', 'service']);
    expect(messages.get('jobs/cost.ts')).toEqual([]);
    expect(messages.get('service/call.ts')).toEqual([]);
    expect(messages.get('catalog/price.ts')).toMatchObject([{ ruleId: RULE, message: expect.stringContaining('core/catalog may not import core/service') }]);
  });

  it('refuses a folder the order does not place, a module outside every folder, and a folder that is gone', async () => {
    const core = await coreOf({ 'jobs/a.ts': 'export {};\n', 'pricing/b.ts': 'export {};\n', 'loose.ts': 'export {};\n' });
    expect(() => coreLayerZones(core, ['jobs', 'setup'])).toThrow(/core\/pricing is in no layer/);
    expect(() => coreLayerZones(core, ['jobs', 'setup'])).toThrow(/core\/loose\.ts lies outside/);
    expect(() => coreLayerZones(core, ['jobs', 'setup'])).toThrow(/lists core\/setup, which is not there/);
  });

  describe('in this repository (eslint.config.js)', () => {
    const eslint = new ESLint({ cwd: ROOT, ruleFilter: ({ ruleId }) => ruleId === RULE });

    /**
     * The modules of core that import from outside their own folder within core (`'../jobs/…'`, or back in through
     * `core/`), with their text: the only imports the zones judge. `npm run lint` lints every module whole.
     */
    async function crossFolderModules(): Promise<Array<{ file: string; text: string }>> {
      const core = path.join(ROOT, 'src-main/core');
      const files = (await readdir(core, { recursive: true })).filter((file) => file.endsWith('.ts')).map((file) => path.join(core, file));
      // Any import that leaves its own folder: a room of core/jobs reaches the others in one step up, core's folders in two.
      const crossing = /['"]\.\.\//;
      const texts = await Promise.all(files.map((file) => readFile(file, 'utf8')));
      return files.map((file, i) => ({ file, text: texts[i] as string })).filter(({ text }) => crossing.test(text));
    }

    /**
     * A module's import and export-from declarations alone, on the lines they hold (everything else blanked): all the
     * zones judge, for a fraction of parsing the whole module (most of this test's time was typescript-estree).
     */
    function importsOnly(text: string): string {
      const declaration = /^(?:import|export)\b[^;'"]*?\bfrom\s*(['"])[^'"\n]*\1;?|^import\s*(['"])[^'"\n]*\2;?/gm;
      let kept = '';
      let from = 0;
      for (const match of text.matchAll(declaration)) {
        kept += text.slice(from, match.index).replace(/[^\n]/g, '') + match[0];
        from = match.index + match[0].length;
      }
      return kept + text.slice(from).replace(/[^\n]/g, '');
    }

    /** What a module imports, as TypeScript's scanner finds it (static, type, dynamic and require): the same in both. */
    const specifiers = (text: string) => ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);

    it('holds for every import between the folders of src-main/core, and between the rooms of core/jobs', { timeout: 120_000 }, async () => {
      const modules = await crossFolderModules();
      expect(modules.length).toBeGreaterThan(10);
      const messages: string[] = [];
      for (const { file, text } of modules) {
        const declarations = importsOnly(text);
        // Nothing the zones would judge is left out of what they are given.
        expect(specifiers(declarations), path.relative(ROOT, file)).toEqual(specifiers(text));
        const [result] = await eslint.lintText(declarations, { filePath: file });
        messages.push(...(result?.messages ?? []).map((m) => `${path.relative(ROOT, file)}:${m.line} ${m.message}`));
      }
      expect(messages).toEqual([]);
    });

    it('refuses the gateway importing the jobs, which import the gateway', { timeout: 120_000 }, async () => {
      const probe = "import { fetchBilledCost } from '../jobs/money/billed-cost.js';\nexport const billed = fetchBilledCost;\n";
      const [result] = await eslint.lintText(probe, { filePath: path.join(ROOT, 'src-main/core/gateway/layers-probe.ts') });
      expect(result?.messages).toMatchObject([{ ruleId: RULE, line: 1, message: expect.stringContaining('core/gateway may not import core/jobs') }]);
    });

    it("refuses a room of core/jobs importing one above it: the stream, the supervisor's registry (a type import too)", { timeout: 120_000 }, async () => {
      const probe = "import type { JobRegistry } from '../supervisor/job-registry.js';\nexport type Registry = JobRegistry;\n";
      const [result] = await eslint.lintText(probe, { filePath: path.join(ROOT, 'src-main/core/jobs/stream/layers-probe.ts') });
      expect(result?.messages).toMatchObject([{ ruleId: RULE, line: 1, message: expect.stringContaining('jobs/stream may not import jobs/supervisor') }]);
    });

    it("refuses cli's support importing a command, which imports the support", { timeout: 120_000 }, async () => {
      const probe = "import { statusCommand } from '../commands/status-command.js';\nexport const status = statusCommand;\n";
      const [result] = await eslint.lintText(probe, { filePath: path.join(ROOT, 'src-main/cli/support/layers-probe.ts') });
      expect(result?.messages).toMatchObject([{ ruleId: RULE, line: 1, message: expect.stringContaining('cli/support may not import cli/commands') }]);
    });
  });
});
