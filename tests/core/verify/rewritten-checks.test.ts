/**
 * What a delegate's branch changed of what judges it (rewritten-checks.ts), read from real git repositories: the
 * package.json scripts the verify commands name, the files that configure the tests and CI, tests deleted or renamed
 * away, skip and only markers in added lines; in that order, at most MAX_FLAGS lines, and [] when git cannot answer.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_FLAGS, rewrittenChecks } from '../../../src-main/core/verify/rewritten-checks.js';
import { gitIn, makeRepo, writeFiles } from '../../support/git-repo.js';

let root: string | null = null;

afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = null;
});

/** A repository of `files` at its base commit, then one commit of the delegate's: text to write, null to delete. */
async function branch(
  files: Record<string, string>,
  changes: Record<string, string | null>,
  renames: Array<[string, string]> = [],
): Promise<{ repo: string; base: string; head: string }> {
  root = await mkdtemp(path.join(tmpdir(), 'rc-'));
  const repo = path.join(root, 'repo');
  // A README, so that a base of no other files still has a commit.
  const base = await makeRepo(repo, { 'README.md': '# demo\n', ...files });
  for (const [from, to] of renames) {
    await mkdir(path.dirname(path.join(repo, to)), { recursive: true });
    await gitIn(repo, ['mv', from, to]);
  }
  for (const [name, text] of Object.entries(changes)) {
    if (text === null) await gitIn(repo, ['rm', '--quiet', name]);
    else await writeFiles(repo, { [name]: text });
  }
  await gitIn(repo, ['add', '--all']);
  await gitIn(repo, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '--allow-empty', '-m', 'delegate']);
  return { repo, base, head: (await gitIn(repo, ['rev-parse', 'HEAD'])).trim() };
}

async function flagsOf(files: Record<string, string>, changes: Record<string, string | null>, commands: string[] = ['npm test']): Promise<string[]> {
  const { repo, base, head } = await branch(files, changes);
  return rewrittenChecks({ cwd: repo, base, head, commands });
}

const manifest = (scripts: Record<string, string>, dependencies: Record<string, string> = {}) =>
  `${JSON.stringify({ name: 'demo', scripts, dependencies }, null, 2)}\n`;

const SCRIPTS = { test: 'vitest run', lint: 'eslint .', build: 'tsc -p .' };

describe('package.json scripts the verify commands name', () => {
  it('flags a changed script, with both texts', async () => {
    const flags = await flagsOf({ 'package.json': manifest(SCRIPTS) }, { 'package.json': manifest({ ...SCRIPTS, test: 'exit 0' }) });
    expect(flags).toEqual(['changes the "test" script in package.json ("vitest run" → "exit 0")']);
  });

  it('flags an added script, such as a pretest that runs before `npm test`', async () => {
    const flags = await flagsOf({ 'package.json': manifest(SCRIPTS) }, { 'package.json': manifest({ pretest: 'node shim.js', ...SCRIPTS }) });
    expect(flags).toEqual(['adds a "pretest" script to package.json ("node shim.js")']);
  });

  it('flags a removed script', async () => {
    const { lint: _lint, ...rest } = SCRIPTS;
    const flags = await flagsOf({ 'package.json': manifest(SCRIPTS) }, { 'package.json': manifest(rest) }, ['yarn lint']);
    expect(flags).toEqual(['removes the "lint" script from package.json (was "eslint .")']);
  });

  it('reads the script name from each way of running one', async () => {
    const before = { test: 'a', one: 'a', two: 'a', three: 'a', four: 'a' };
    const after = { test: 'b', one: 'b', two: 'b', three: 'b', four: 'b' };
    const commands = ['npm t', 'npm run-script one', 'pnpm run two && CI=1 npm run --silent three -- --coverage', 'pnpm four'];
    const flags = await flagsOf({ 'package.json': manifest(before) }, { 'package.json': manifest(after) }, commands);
    expect(flags).toEqual(['test', 'one', 'two', 'three', 'four'].map((name) => `changes the "${name}" script in package.json ("a" → "b")`));
  });

  it('follows `npm run X` inside a named script', async () => {
    const files = { 'package.json': manifest({ test: 'npm run unit && npm run e2e', unit: 'vitest run', e2e: 'playwright test' }) };
    const flags = await flagsOf(files, { 'package.json': manifest({ test: 'npm run unit && npm run e2e', unit: 'true', e2e: 'playwright test' }) });
    expect(flags).toEqual(['changes the "unit" script in package.json ("vitest run" → "true")']);
  });

  it('leaves dependencies, scripts no command names and commands that run no script alone', async () => {
    const after = manifest({ ...SCRIPTS, build: 'exit 0', test: 'exit 0' }, { left: '^1.0.0' });
    expect(await flagsOf({ 'package.json': manifest(SCRIPTS) }, { 'package.json': after }, ['npm run lint', 'pnpm install', 'bun test'])).toEqual([]);
  });

  it('shortens long script texts', async () => {
    const flags = await flagsOf({ 'package.json': manifest(SCRIPTS) }, { 'package.json': manifest({ ...SCRIPTS, test: `node ${'x'.repeat(200)}.js` }) });
    expect(flags).toEqual(['changes the "test" script in package.json ("vitest run" → "node xxxxxxxxxxxxxxxxxxxxxx…")']);
  });
});

describe('files that configure how the tests run', () => {
  it('flags a changed conftest.py and an added one in a folder (the classic shim)', async () => {
    const flags = await flagsOf(
      { 'conftest.py': 'import os\n', 'tests/test_a.py': 'def test_a(): pass\n' },
      {
        'conftest.py': 'import sys\n',
        'tests/conftest.py': 'def pytest_collection_modifyitems(items): items.clear()\n',
      },
    );
    expect(flags).toEqual(['changes conftest.py, which configures the tests', 'adds tests/conftest.py, which configures the tests']);
  });

  it('flags CI files', async () => {
    const flags = await flagsOf(
      { '.github/workflows/ci.yml': 'on: push\n' },
      { '.github/workflows/ci.yml': 'on: workflow_dispatch\n', '.gitlab-ci.yml': 'x: 1\n' },
    );
    expect(flags).toEqual(['changes .github/workflows/ci.yml (CI)', 'adds .gitlab-ci.yml (CI)']);
  });

  it('flags make, Python and JavaScript test runner configuration', async () => {
    const flags = await flagsOf(
      { Makefile: 'check:\n\tpytest\n', 'pyproject.toml': '[tool.pytest.ini_options]\n', 'vitest.config.ts': 'export default {};\n' },
      { Makefile: 'check:\n\ttrue\n', 'pyproject.toml': null, 'vitest.config.ts': 'export default { test: {} };\n', '.mocharc.yml': 'bail: true\n' },
    );
    expect(flags).toEqual([
      'adds .mocharc.yml, which configures the tests',
      'changes Makefile, which defines the make targets',
      'deletes pyproject.toml, which configures the tests',
      'changes vitest.config.ts, which configures the tests',
    ]);
  });

  it('flags Cargo.toml only when a line that mentions tests changed', async () => {
    const cargo = '[package]\nname = "demo"\nversion = "0.1.0"\n';
    expect(await flagsOf({ 'Cargo.toml': cargo }, { 'Cargo.toml': cargo.replace('0.1.0', '0.2.0') }, ['cargo test'])).toEqual([]);
    const flags = await flagsOf({ 'Cargo.toml': cargo }, { 'Cargo.toml': `${cargo}\n[[test]]\nname = "it"\nharness = false\n` }, ['cargo test']);
    expect(flags).toEqual(['changes test settings in Cargo.toml']);
  });
});

describe('tests deleted or renamed away', () => {
  it('flags deleted test files of each kind', async () => {
    const files = { 'tests/a.test.ts': 'a\n', 'pkg/x_test.go': 'package pkg\n', 'test_b.py': 'b\n', 'src/c.spec.js': 'c\n', 'src/keep.ts': 'k\n' };
    const flags = await flagsOf(files, { 'tests/a.test.ts': null, 'pkg/x_test.go': null, 'test_b.py': null, 'src/c.spec.js': null, 'src/keep.ts': null });
    expect(flags).toEqual(['deletes pkg/x_test.go', 'deletes src/c.spec.js', 'deletes test_b.py', 'deletes tests/a.test.ts']);
  });

  it('flags a test renamed to a name no runner collects, not one that stays a test', async () => {
    const text = 'import { it } from "vitest";\nit("adds", () => {});\n';
    const { repo, base, head } = await branch({ 'tests/a.test.ts': text, 'tests/b.test.ts': `${text}// b\n` }, {}, [
      ['tests/a.test.ts', 'notes/a.ts'],
      ['tests/b.test.ts', 'src/b.spec.ts'],
    ]);
    expect(await rewrittenChecks({ cwd: repo, base, head, commands: [] })).toEqual(['renames tests/a.test.ts → notes/a.ts']);
  });
});

describe('skip and only markers in added lines', () => {
  const SUITE = 'import { describe, it } from "vitest";\n\ndescribe("sum", () => {\n  it("adds", () => {});\n});\n';

  it('flags a skip marker once per file, naming the first', async () => {
    const flags = await flagsOf(
      { 'tests/a.test.ts': SUITE },
      { 'tests/a.test.ts': SUITE.replace('it("adds"', 'it.skip("adds"').replace('describe("sum"', 'describe.only("sum"') },
    );
    expect(flags).toEqual(['adds a skip marker in tests/a.test.ts (describe.only)']);
  });

  it('knows the markers of pytest, unittest, Rust, Go, Jasmine and Mocha', async () => {
    const flags = await flagsOf(
      {},
      {
        'a_test.go': 'func TestA(t *testing.T) {\n\tt.Skip("flaky")\n}\n',
        'b.rs': '#[test]\n#[ignore]\nfn b() {}\n',
        'c.spec.js': 'xit("c", () => {});\n',
        'd.test.js': 'fit("d", () => {});\n',
        'test_e.py': '@pytest.mark.xfail(reason="later")\ndef test_e(): pass\n',
        'test_f.py': '@unittest.skipIf(True, "no")\ndef test_f(self): pass\n',
      },
    );
    expect(flags).toEqual([
      'adds a skip marker in a_test.go (t.Skip)',
      'adds a skip marker in b.rs (#[ignore])',
      'adds a skip marker in c.spec.js (xit)',
      'adds a skip marker in d.test.js (fit)',
      'adds a skip marker in test_e.py (@pytest.mark.xfail)',
      'adds a skip marker in test_f.py (@unittest.skipIf)',
    ]);
  });

  it('leaves markers the base already had, removed ones, and words that only look like markers', async () => {
    const skipped = SUITE.replace('it("adds"', 'it.skip("adds"');
    const flags = await flagsOf(
      { 'tests/a.test.ts': skipped, 'tests/b.test.ts': skipped },
      {
        'tests/a.test.ts': `${skipped}// more\n`,
        'tests/b.test.ts': SUITE,
        'src/exit.ts': 'process.exit(1);\nmodel.fit(x);\nfor (const x of iter.skip(1)) use(x);\n',
      },
    );
    expect(flags).toEqual([]);
  });

  it('does not count the lines of a renamed file as added', async () => {
    const skipped = SUITE.replace('it("adds"', 'it.skip("adds"');
    const { repo, base, head } = await branch({ 'tests/a.test.ts': skipped }, {}, [['tests/a.test.ts', 'tests/unit/a.test.ts']]);
    expect(await rewrittenChecks({ cwd: repo, base, head, commands: [] })).toEqual([]);
  });

  it('ignores binary files', async () => {
    expect(await flagsOf({}, { 'tests/blob.bin': `\0\x01it.skip(\n` })).toEqual([]);
  });

  it('reads a file the branch marked -diff in .gitattributes all the same', async () => {
    const flags = await flagsOf({}, { '.gitattributes': '*.ts -diff\n', 'tests/a.test.ts': 'it.only("x", () => {});\n' });
    expect(flags).toEqual(['adds a skip marker in tests/a.test.ts (it.only)']);
  });

  it("names odd paths whole, from a subfolder, whatever the repository's diff settings", async () => {
    const odd = 'tests/my "odd"\tfile.test.ts';
    const { repo, base, head } = await branch({}, { [odd]: 'it.only("x", () => {});\n' });
    await gitIn(repo, ['config', 'diff.noprefix', 'true']);
    await gitIn(repo, ['config', 'diff.relative', 'true']);
    const flags = await rewrittenChecks({ cwd: path.join(repo, 'tests'), base, head, commands: [] });
    expect(flags).toEqual(['adds a skip marker in tests/my "odd"?file.test.ts (it.only)']);
  });

  it('reads no more than about 2 MB of diff, smallest files first, and says which test it did not read', async () => {
    const big = `${'const filler = 1;\n'.repeat(150_000)}it.skip("late", () => {});\n`;
    const flags = await flagsOf({}, { 'tests/big.test.ts': big, 'tests/small.test.ts': 'it.todo("later");\n' });
    expect(flags.sort()).toEqual(['adds a skip marker in tests/small.test.ts (it.todo)', 'changes tests/big.test.ts past what could be read for skip markers']);
  });
});

describe('the result', () => {
  it('is empty for an ordinary change: a source edit and a new test file', async () => {
    const files = { 'package.json': manifest(SCRIPTS), 'src/sum.ts': 'export const sum = (a: number, b: number) => a + b;\n', 'go.mod': 'module demo\n' };
    const flags = await flagsOf(files, {
      'src/sum.ts': 'export const sum = (a: number, b: number): number => a + b;\n',
      'tests/sum.test.ts': 'import { expect, it } from "vitest";\nit("adds", () => expect(1 + 1).toBe(2));\n',
      'package.json': manifest(SCRIPTS, { zod: '^3.0.0' }),
      'go.mod': 'module demo\n\ngo 1.22\n',
      'tsconfig.json': '{}\n',
    });
    expect(flags).toEqual([]);
  });

  it('orders the kinds: scripts, configuration, removed tests, markers', async () => {
    const flags = await flagsOf(
      { 'package.json': manifest(SCRIPTS), 'tests/old.test.ts': 'x\n', 'tests/a.test.ts': 'it("a", () => {});\n' },
      {
        'tests/a.test.ts': 'it.skip("a", () => {});\n',
        'tests/old.test.ts': null,
        'conftest.py': 'x = 1\n',
        'package.json': manifest({ ...SCRIPTS, test: 'true' }),
      },
    );
    expect(flags).toEqual([
      'changes the "test" script in package.json ("vitest run" → "true")',
      'adds conftest.py, which configures the tests',
      'deletes tests/old.test.ts',
      'adds a skip marker in tests/a.test.ts (it.skip)',
    ]);
  });

  it(`holds at most ${MAX_FLAGS} lines, the last saying how many more were found`, async () => {
    const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`tests/t${String(i).padStart(2, '0')}.test.ts`, `test ${i}\n`]));
    const flags = await flagsOf(files, Object.fromEntries(Object.keys(files).map((name) => [name, null])));
    expect(flags).toHaveLength(MAX_FLAGS);
    expect(flags.slice(0, 2)).toEqual(['deletes tests/t00.test.ts', 'deletes tests/t01.test.ts']);
    expect(flags.at(-1)).toBe(`and ${30 - MAX_FLAGS + 1} more`);
  });

  it('is empty when git cannot answer: unknown commits, an option for a commit, a folder that is no repository', async () => {
    const { repo, base } = await branch({ 'a.txt': 'a\n' }, { 'tests/a.test.ts': 'it.only("x");\n' });
    expect(await rewrittenChecks({ cwd: repo, base, head: 'f'.repeat(40), commands: ['npm test'] })).toEqual([]);
    expect(await rewrittenChecks({ cwd: repo, base: '--output=x', head: 'HEAD', commands: ['npm test'] })).toEqual([]);
    expect(await rewrittenChecks({ cwd: path.join(repo, 'missing'), base, head: 'HEAD', commands: [] })).toEqual([]);
    expect(await rewrittenChecks({ cwd: tmpdir(), base, head: 'HEAD', commands: [] })).toEqual([]);
  });
});

describe('what an outside review found passing unflagged', () => {
  it('reads a package.json that begins with a byte-order mark, as npm does', async () => {
    const flags = await flagsOf({ 'package.json': manifest(SCRIPTS) }, { 'package.json': `\uFEFF${manifest({ ...SCRIPTS, test: 'exit 0' })}` });
    expect(flags).toEqual(['changes the "test" script in package.json ("vitest run" → "exit 0")']);
  });

  it('flags a package.json made unreadable: a link, or no JSON, where npm may still find scripts', async () => {
    const { repo, base } = await branch({ 'package.json': manifest(SCRIPTS), 'other.json': manifest({ ...SCRIPTS, test: 'exit 0' }) }, {});
    await rm(path.join(repo, 'package.json'));
    await gitIn(repo, ['rm', '--quiet', '--cached', 'package.json']);
    await import('node:fs/promises').then(({ symlink }) => symlink('other.json', path.join(repo, 'package.json')));
    await gitIn(repo, ['add', '--all']);
    await gitIn(repo, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-m', 'link']);
    const head = (await gitIn(repo, ['rev-parse', 'HEAD'])).trim();
    expect(await rewrittenChecks({ cwd: repo, base, head, commands: ['npm test'] })).toEqual([
      'changes package.json so that its scripts cannot be read (a link, too big, or not JSON)',
    ]);
  });

  it("flags the package managers' and cargo's own config, and pytest's hidden one", async () => {
    const flags = await flagsOf(
      {},
      { '.npmrc': 'script-shell=/bin/true\n', '.pytest.ini': '[pytest]\naddopts = --collect-only\n', '.cargo/config.toml': '[target.x]\nrunner = "true"\n' },
    );
    expect(flags.sort()).toEqual(
      [
        'adds .npmrc, which configures what the package manager or cargo runs',
        'adds .pytest.ini, which configures the tests',
        'adds .cargo/config.toml, which configures what the package manager or cargo runs',
      ].sort(),
    );
  });

  it('flags files put in the folders of installed dependencies', async () => {
    const flags = await flagsOf({}, { 'node_modules/.bin/vitest': 'exit 0\n', 'venv/bin/pytest': 'exit 0\n' });
    expect(flags.sort()).toEqual([
      'puts files in node_modules/ (the commands ran on your installed node_modules instead)',
      'puts files in venv/ (the commands ran on your installed venv instead)',
    ]);
  });

  it('flags a test renamed so that it no longer runs, though it stays in tests/', async () => {
    const { repo, base, head } = await branch({ 'tests/a.test.js': 'it("a", () => {});\n' }, {}, [['tests/a.test.js', 'tests/a.test.js.off']]);
    expect(await rewrittenChecks({ cwd: repo, base, head, commands: [] })).toEqual(['renames tests/a.test.js → tests/a.test.js.off']);
  });

  it('flags a test file its diff was not read of (a NUL byte in it): what it added is not cleared', async () => {
    const flags = await flagsOf({ 'tests/a.test.js': 'it("a", () => {});\n' }, { 'tests/a.test.js': 'it.skip("a", () => {}); // \0\n' });
    expect(flags).toEqual(['changes tests/a.test.js past what could be read for skip markers']);
  });
});
