/**
 * The verify commands suggested for a repository (suggest.ts), from real files in real temp folders: package.json
 * scripts run by the lockfile's package manager, make targets, pytest's configuration, Cargo.toml and go.mod; in that
 * order, without repeats, at most MAX_SUGGESTIONS; and nothing from a link, a file past the bound, or a broken one.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_SUGGESTIONS, suggestVerifyCommands } from '../../../src-main/core/verify/suggest.js';

let root: string | null = null;

afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = null;
});

/** A fresh folder holding `files` (name → text), inside a temp root that also has room for files outside it. */
async function repoWith(files: Record<string, string> = {}): Promise<string> {
  root = await mkdtemp(path.join(tmpdir(), 'suggest-'));
  const repo = path.join(root, 'repo');
  await mkdir(repo);
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(repo, name), text);
  return repo;
}

const manifest = (scripts: Record<string, unknown>) => `${JSON.stringify({ name: 'demo', scripts }, null, 2)}\n`;

/** Only the commands, where `from` is not what the test is about. */
async function commandsFor(files: Record<string, string>): Promise<string[]> {
  return (await suggestVerifyCommands(await repoWith(files))).map(({ command }) => command);
}

describe('nothing to suggest', () => {
  it('suggests nothing for an empty folder', async () => {
    expect(await suggestVerifyCommands(await repoWith())).toEqual([]);
  });

  it('suggests nothing, without throwing, for a folder that does not exist', async () => {
    const repo = await repoWith();
    expect(await suggestVerifyCommands(path.join(repo, 'missing'))).toEqual([]);
  });
});

describe('package.json', () => {
  it('suggests test, lint, typecheck, check and test:unit in that order, and no other script', async () => {
    const scripts = { 'test:unit': 'vitest run unit', build: 'tsc', check: 'node c.js', typecheck: 'tsc --noEmit', lint: 'eslint .', test: 'vitest run' };
    expect(await suggestVerifyCommands(await repoWith({ 'package.json': manifest(scripts) }))).toEqual([
      { command: 'npm test', from: 'package.json script test' },
      { command: 'npm run lint', from: 'package.json script lint' },
      { command: 'npm run typecheck', from: 'package.json script typecheck' },
      { command: 'npm run check', from: 'package.json script check' },
      { command: 'npm run test:unit', from: 'package.json script test:unit' },
    ]);
  });

  it("skips npm init's placeholder test script, which only fails", async () => {
    const scripts = { test: 'echo "Error: no test specified" && exit 1', lint: 'eslint .' };
    expect(await commandsFor({ 'package.json': manifest(scripts) })).toEqual(['npm run lint']);
  });

  it('skips scripts that are empty or not text', async () => {
    expect(await commandsFor({ 'package.json': manifest({ test: '  ', lint: ['eslint'], check: 'node c.js' }) })).toEqual(['npm run check']);
  });

  it('yields nothing from a package.json that is not JSON, and still reads the other files', async () => {
    expect(await commandsFor({ 'package.json': '{ "scripts": { "test": "vitest" ', 'go.mod': 'module demo\n' })).toEqual(['go test ./...']);
  });

  it('reads a package.json that begins with a byte-order mark, as npm does', async () => {
    expect(await commandsFor({ 'package.json': `\uFEFF${manifest({ test: 'vitest run' })}` })).toEqual(['npm test']);
  });

  it('skips a package.json past 1 MiB', async () => {
    const big = JSON.stringify({ scripts: { test: 'vitest run' }, padding: 'x'.repeat(1024 * 1024) });
    expect(await commandsFor({ 'package.json': big })).toEqual([]);
  });
});

describe('the package manager, from the lockfile', () => {
  const scripts = manifest({ test: 'vitest run', lint: 'eslint .' });

  it.each([
    ['package-lock.json', ['npm test', 'npm run lint']],
    ['npm-shrinkwrap.json', ['npm test', 'npm run lint']],
    ['pnpm-lock.yaml', ['pnpm test', 'pnpm run lint']],
    ['yarn.lock', ['yarn test', 'yarn run lint']],
    ['bun.lockb', ['bun run test', 'bun run lint']],
    ['bun.lock', ['bun run test', 'bun run lint']],
  ])('%s → %j', async (lockfile, expected) => {
    expect(await commandsFor({ 'package.json': scripts, [lockfile]: '' })).toEqual(expected);
  });

  it('is npm when there is no lockfile', async () => {
    expect(await commandsFor({ 'package.json': scripts })).toEqual(['npm test', 'npm run lint']);
  });

  it("prefers another manager's lockfile to a stray package-lock.json", async () => {
    expect(await commandsFor({ 'package.json': scripts, 'package-lock.json': '{}', 'yarn.lock': '' })).toEqual(['yarn test', 'yarn run lint']);
  });
});

describe('Makefile', () => {
  it('suggests the targets test, check and lint in that order, naming the file', async () => {
    const makefile = 'lint:\n\truff .\nbuild:\n\tcc x.c\ncheck: build\n\t./check\ntest:\n\tpytest\n';
    expect(await suggestVerifyCommands(await repoWith({ Makefile: makefile }))).toEqual([
      { command: 'make test', from: 'Makefile target test' },
      { command: 'make check', from: 'Makefile target check' },
      { command: 'make lint', from: 'Makefile target lint' },
    ]);
  });

  it('reads targets from a rule of several targets and a double-colon rule', async () => {
    expect(await commandsFor({ Makefile: 'lint test: deps\n\ttrue\ncheck::\n\ttrue\n' })).toEqual(['make test', 'make check', 'make lint']);
  });

  it('finds no target in a recipe line, an assignment, a comment or .PHONY', async () => {
    const makefile = '.PHONY: test check\nall:\n\ttest: x\ncheck := yes\nlint ?= no\n# lint:\n';
    expect(await commandsFor({ Makefile: makefile })).toEqual([]);
  });

  it('reads GNUmakefile, the file make reads first, and names it', async () => {
    expect(await suggestVerifyCommands(await repoWith({ GNUmakefile: 'lint:\n\ttrue\n', Makefile: 'test:\n\ttrue\n' }))).toEqual([
      { command: 'make lint', from: 'GNUmakefile target lint' },
    ]);
  });
});

describe('Python', () => {
  it('suggests pytest for a pyproject.toml that configures it', async () => {
    expect(
      await suggestVerifyCommands(await repoWith({ 'pyproject.toml': '[project]\nname = "demo"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n' })),
    ).toEqual([{ command: 'pytest -q', from: 'pyproject.toml (pytest)' }]);
  });

  it('suggests pytest for a pyproject.toml that names it as a dependency', async () => {
    expect(await commandsFor({ 'pyproject.toml': '[project.optional-dependencies]\ntest = ["pytest>=8", "pytest-cov"]\n' })).toEqual(['pytest -q']);
  });

  it('suggests pytest for a Poetry dependency', async () => {
    expect(await commandsFor({ 'pyproject.toml': '[tool.poetry.group.dev.dependencies]\npytest = "^8.0"\n' })).toEqual(['pytest -q']);
  });

  it('suggests nothing for a pyproject.toml that names only a pytest plugin, or pytest in a comment', async () => {
    expect(await commandsFor({ 'pyproject.toml': '[project]\ndependencies = ["pytest-cov"]\n# "pytest" later\n[tool.ruff]\nline-length = 100\n' })).toEqual([]);
  });

  it('suggests pytest for a setup.cfg with a [tool:pytest] section', async () => {
    expect(await suggestVerifyCommands(await repoWith({ 'setup.cfg': '[metadata]\nname = demo\n\n[tool:pytest]\ntestpaths = tests\n' }))).toEqual([
      { command: 'pytest -q', from: 'setup.cfg (pytest)' },
    ]);
  });

  it('suggests pytest for a setup.cfg that lists it among the extras', async () => {
    expect(await commandsFor({ 'setup.cfg': '[options.extras_require]\ntest =\n    pytest>=7\n' })).toEqual(['pytest -q']);
  });

  it('suggests pytest for a pytest.ini', async () => {
    expect(await suggestVerifyCommands(await repoWith({ 'pytest.ini': '[pytest]\n' }))).toEqual([{ command: 'pytest -q', from: 'pytest.ini (pytest)' }]);
  });

  it('suggests pytest for a tox.ini with a [pytest] section', async () => {
    expect(await suggestVerifyCommands(await repoWith({ 'tox.ini': '[tox]\nenvlist = py312\n\n[pytest]\naddopts = -q\n' }))).toEqual([
      { command: 'pytest -q', from: 'tox.ini (pytest)' },
    ]);
  });

  it('suggests pytest for a tox.ini whose test environment installs it', async () => {
    expect(await commandsFor({ 'tox.ini': '[tox]\nenvlist = py312\n\n[testenv]\ndeps = pytest\ncommands = pytest {posargs}\n' })).toEqual(['pytest -q']);
  });

  it('suggests nothing for a tox.ini that runs unittest', async () => {
    expect(await commandsFor({ 'tox.ini': '[tox]\nenvlist = py312\n\n[testenv]\ncommands = python -m unittest\n' })).toEqual([]);
  });

  it('suggests pytest once when several files configure it, from the first', async () => {
    const files = { 'tox.ini': '[pytest]\n', 'pytest.ini': '[pytest]\n', 'pyproject.toml': '[tool.pytest.ini_options]\n' };
    expect(await suggestVerifyCommands(await repoWith(files))).toEqual([{ command: 'pytest -q', from: 'pyproject.toml (pytest)' }]);
  });
});

describe('Rust and Go', () => {
  it('suggests cargo test for a Cargo.toml', async () => {
    expect(await suggestVerifyCommands(await repoWith({ 'Cargo.toml': '[package]\nname = "demo"\n' }))).toEqual([
      { command: 'cargo test', from: 'Cargo.toml' },
    ]);
  });

  it('suggests go test ./... for a go.mod', async () => {
    expect(await suggestVerifyCommands(await repoWith({ 'go.mod': 'module example.com/demo\n\ngo 1.22\n' }))).toEqual([
      { command: 'go test ./...', from: 'go.mod' },
    ]);
  });
});

describe('links and other files that are not regular', () => {
  it('skips a package.json that is a link to a file outside the repository', async () => {
    const repo = await repoWith();
    const outside = path.join(path.dirname(repo), 'package.json');
    await writeFile(outside, manifest({ test: 'vitest run' }));
    await symlink(outside, path.join(repo, 'package.json'));
    expect(await suggestVerifyCommands(repo)).toEqual([]);
  });

  it('skips a go.mod and a Makefile that are links, even to files inside the repository', async () => {
    const repo = await repoWith({ 'real.mod': 'module demo\n', 'real.mk': 'test:\n\ttrue\n' });
    await symlink('real.mod', path.join(repo, 'go.mod'));
    await symlink('real.mk', path.join(repo, 'Makefile'));
    expect(await suggestVerifyCommands(repo)).toEqual([]);
  });

  it('skips a package.json that is a folder', async () => {
    const repo = await repoWith();
    await mkdir(path.join(repo, 'package.json'));
    expect(await suggestVerifyCommands(repo)).toEqual([]);
  });

  it.skipIf(process.platform === 'win32')(
    'skips a named pipe called package.json without waiting on it',
    async () => {
      const repo = await repoWith({ 'Cargo.toml': '[package]\n' });
      await promisify(execFile)('mkfifo', [path.join(repo, 'package.json')]);
      expect(await suggestVerifyCommands(repo)).toEqual([{ command: 'cargo test', from: 'Cargo.toml' }]);
    },
    5_000,
  );
});

describe('order, repeats and the cap', () => {
  it('orders the ecosystems JavaScript, make, Python, Rust, Go, whatever the files', async () => {
    const files = {
      'go.mod': 'module demo\n',
      'Cargo.toml': '[package]\n',
      'pytest.ini': '[pytest]\n',
      Makefile: 'test:\n\ttrue\n',
      'package.json': manifest({ test: 'vitest run' }),
    };
    expect(await commandsFor(files)).toEqual(['npm test', 'make test', 'pytest -q', 'cargo test', 'go test ./...']);
  });

  it(`gives at most ${MAX_SUGGESTIONS}, the first in that order`, async () => {
    const files = {
      'package.json': manifest({ test: 'a', lint: 'b', typecheck: 'c', check: 'd', 'test:unit': 'e' }),
      Makefile: 'test:\ncheck:\nlint:\n',
      'go.mod': 'module demo\n',
    };
    expect(await commandsFor(files)).toEqual(['npm test', 'npm run lint', 'npm run typecheck', 'npm run check', 'npm run test:unit', 'make test']);
  });
});

it('changes nothing in the repository: no file added, none written', async () => {
  const repo = await repoWith({ 'package.json': manifest({ test: 'vitest run' }), Makefile: 'test:\n', 'pyproject.toml': '[tool.pytest.ini_options]\n' });
  // The folder's own time changes when a file is made in it, even one removed again.
  const snapshot = async () => [
    (await stat(repo)).mtimeMs,
    ...(await Promise.all((await readdir(repo)).sort().map(async (name) => [name, (await stat(path.join(repo, name))).mtimeMs]))),
  ];
  const before = await snapshot();
  expect(await suggestVerifyCommands(repo)).toHaveLength(3);
  expect(await snapshot()).toEqual(before);
});
