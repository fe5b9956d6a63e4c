/**
 * Every source path the docs and the code's comments mention exists: `src-main/…`, `src-bridge/…`, `src-renderer/…`,
 * `tests/…`, `scripts/…` and `bench/…` from the repository's top, and `core/…`, `platform/…`, `contract/…` … from
 * src-main (the way comments name files). A file moved or renamed cannot leave a mention behind. Tests are read as
 * docs only, not as sources: their strings name made-up files on purpose.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SKIP = new Set(['node_modules', 'dist', 'test-results', 'release']);

function walk(dir: string, keep: (name: string) => boolean, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name) || entry.name.startsWith('.')) continue;
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(file, keep, out);
    else if (keep(entry.name)) out.push(file);
  }
  return out;
}

const MARKDOWN = walk(ROOT, (name) => name.endsWith('.md'));
const SOURCES = ['src-main', 'src-bridge', 'src-renderer', 'scripts', 'bench'].flatMap((dir) =>
  walk(path.join(ROOT, dir), (name) => /\.(ts|mts|mjs|svelte)$/.test(name)),
);
const FROM_TOP = /(?<![\w/.-])((?:src-main|src-bridge|src-renderer|tests|scripts|bench)\/[\w./-]*\w\.(?:ts|mts|mjs|cjs|md|svelte|json|sh))/g;
const FROM_SRC_MAIN = /(?<![\w/.-])((?:core|platform|contract|cli|electron|common|ipc|host)\/[\w./-]*\w\.(?:ts|mjs))/g;

/** The mentions in `file` that name nothing: from the top, from src-main, or from the file's own folder. */
function broken(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const missing: string[] = [];
  for (const match of text.matchAll(FROM_TOP)) if (!existsSync(path.join(ROOT, match[1] ?? ''))) missing.push(match[1] ?? '');
  for (const match of text.matchAll(FROM_SRC_MAIN)) {
    const mention = match[1] ?? '';
    if (!existsSync(path.join(ROOT, 'src-main', mention)) && !existsSync(path.join(path.dirname(file), mention))) missing.push(`src-main/${mention}`);
  }
  return missing.map((mention) => `${path.relative(ROOT, file)}: ${mention}`);
}

describe('path mentions', () => {
  it('are read from every Markdown file and every source', () => {
    expect(MARKDOWN.map((file) => path.relative(ROOT, file))).toEqual(expect.arrayContaining(['README.md', 'SECURITY.md', 'docs/ARCHITECTURE.md']));
    expect(SOURCES.length).toBeGreaterThan(200);
  });

  it('each name a file that exists', () => {
    expect([...MARKDOWN, ...SOURCES].flatMap(broken)).toEqual([]);
  });

  it('catch a file that is not there, from the top and from src-main', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'ord-mentions-')), 'note.md');
    writeFileSync(file, 'See src-main/core/jobs/process/box.ts, core/jobs/process/box.ts, src-main/core/jobs/no-such.ts and core/jobs/gone.ts.\n');
    try {
      expect(broken(file).map((line) => line.split(': ')[1])).toEqual(['src-main/core/jobs/no-such.ts', 'src-main/core/jobs/gone.ts']);
    } finally {
      rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });
});
