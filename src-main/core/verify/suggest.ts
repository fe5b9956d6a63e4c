/**
 * Verify commands to suggest for a repository (docs/VERIFY.md), from what its top folder declares: package.json
 * scripts, make targets, pytest's configuration, Cargo.toml, go.mod. A suggestion is never run on its own: the user
 * confirms it first. So this only reads, and only the user's checkout, never a delegate's worktree, whose files the
 * delegate wrote.
 *
 * Each file is read at most once, bounded (MAX_FILE_BYTES), and only when it is a regular file in the top folder
 * itself: a link is skipped, wherever it points. A file that cannot be read or parsed yields nothing, never an error.
 */
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import path from 'node:path';
import type { VerifySuggestion } from '../../contract/index.js';

export type { VerifySuggestion } from '../../contract/index.js';

/** The most suggestions given: more would not be read, and a delegation takes at most 8 commands. */
export const MAX_SUGGESTIONS = 6;

/** A file bigger than this is not read: no real manifest is. */
const MAX_FILE_BYTES = 1024 * 1024;

/** The package.json scripts suggested, in this order, when present. */
const SCRIPTS = ['test', 'lint', 'typecheck', 'check', 'test:unit'] as const;
/** The make targets suggested, in this order, when defined. */
const MAKE_TARGETS = ['test', 'check', 'lint'] as const;
/**
 * The names make looks for: it reads the first it finds. Make looks for makefile before Makefile; asking for Makefile
 * first names the usual file right where names ignore case (macOS, Windows), and no repository holds both.
 */
const MAKEFILES = ['GNUmakefile', 'Makefile', 'makefile'] as const;

/** The script `npm init` writes: it only fails, so it judges nothing. */
const PLACEHOLDER_TEST = /^echo\s+(["']?)Error: no test specified\1\s*&&\s*exit\s+1$/;

type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun';

/**
 * The lockfiles that name a package manager. When several are there, the first in this order wins: a stray
 * package-lock.json is what `npm install` leaves in a pnpm or yarn repository.
 */
const LOCKFILES: ReadonlyArray<readonly [string, PackageManager]> = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
];

/**
 * Suggests verify commands for `repo`, the user's checkout: at most MAX_SUGGESTIONS, no command twice, in the order
 * JavaScript, make, Python, Rust, Go. [] when nothing is found or `repo` cannot be read.
 */
export async function suggestVerifyCommands(repo: string): Promise<VerifySuggestion[]> {
  const found = [
    ...(await fromPackageJson(repo)),
    ...(await fromMakefile(repo)),
    ...(await fromPython(repo)),
    ...((await isRegularFile(repo, 'Cargo.toml')) ? [{ command: 'cargo test', from: 'Cargo.toml' }] : []),
    ...((await isRegularFile(repo, 'go.mod')) ? [{ command: 'go test ./...', from: 'go.mod' }] : []),
  ];
  const byCommand = new Map<string, VerifySuggestion>();
  for (const suggestion of found) if (!byCommand.has(suggestion.command)) byCommand.set(suggestion.command, suggestion);
  return [...byCommand.values()].slice(0, MAX_SUGGESTIONS);
}

// --- JavaScript

async function fromPackageJson(repo: string): Promise<VerifySuggestion[]> {
  const text = await readTopFile(repo, 'package.json');
  if (text === null) return [];
  let scripts: unknown;
  try {
    // npm reads a package.json that begins with a byte-order mark: so does this.
    scripts = (JSON.parse(text.replace(/^\uFEFF/, '')) as { scripts?: unknown } | null)?.scripts;
  } catch {
    return [];
  }
  if (scripts === null || typeof scripts !== 'object' || Array.isArray(scripts)) return [];
  const manager = await packageManager(repo);
  const bodies = scripts as Record<string, unknown>;
  return SCRIPTS.filter((name) => {
    const body = Object.hasOwn(bodies, name) ? bodies[name] : undefined;
    return typeof body === 'string' && body.trim() !== '' && !PLACEHOLDER_TEST.test(body.trim());
  }).map((name) => ({ command: scriptCommand(manager, name), from: `package.json script ${name}` }));
}

async function packageManager(repo: string): Promise<PackageManager> {
  for (const [file, manager] of LOCKFILES) if (await isRegularFile(repo, file)) return manager;
  return 'npm';
}

/**
 * How each manager runs a script. Only `test` goes without `run`: other names can be the manager's own commands
 * (`yarn check` is yarn 1's), and `bun test` is bun's own test runner, not the script.
 */
function scriptCommand(manager: PackageManager, name: string): string {
  if (name === 'test' && manager !== 'bun') return `${manager} test`;
  return `${manager} run ${name}`;
}

// --- make

async function fromMakefile(repo: string): Promise<VerifySuggestion[]> {
  for (const name of MAKEFILES) {
    if (!(await exists(repo, name))) continue;
    // The first make would read is the one: when it cannot be read here (a link), make's targets are unknown.
    const text = await readTopFile(repo, name);
    if (text === null) return [];
    const defined = makeTargets(text);
    return MAKE_TARGETS.filter((target) => defined.has(target)).map((target) => ({ command: `make ${target}`, from: `${name} target ${target}` }));
  }
  return [];
}

/**
 * The targets of the rules that start at a line's start: `test:`, `test::`, `test lint: deps`. Not a recipe line (a
 * tab first), not an assignment (`test := x`, `test ?= x`), not a special target's prerequisites (`.PHONY: test`).
 */
function makeTargets(text: string): Set<string> {
  const targets = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    const rule = /^([^\s:=#][^:=#]*?)\s*::?(?![:=])/.exec(line);
    for (const target of rule?.[1]?.split(/\s+/) ?? []) targets.add(target);
  }
  return targets;
}

// --- Python

/** The files that can say pytest runs the tests, and how each says it. */
const PYTHON_FILES: ReadonlyArray<readonly [string, (text: string) => boolean]> = [
  ['pyproject.toml', pyprojectNamesPytest],
  ['setup.cfg', (text) => iniNamesPytest(text, { pytestSection: 'tool:pytest', listsDependencies: 'options' })],
  ['pytest.ini', () => true],
  ['tox.ini', (text) => iniNamesPytest(text, { pytestSection: 'pytest', listsDependencies: 'testenv' })],
];

/** `pytest` as a name, not a plugin's (`pytest-cov`) or a module's (`pytest_asyncio`). */
const PYTEST_NAME = /(?<![\w.-])pytest(?![\w.-])/;

async function fromPython(repo: string): Promise<VerifySuggestion[]> {
  for (const [name, namesPytest] of PYTHON_FILES) {
    const text = await readTopFile(repo, name);
    if (text !== null && namesPytest(text)) return [{ command: 'pytest -q', from: `${name} (pytest)` }];
  }
  return [];
}

/** A `[tool.pytest…]` table, or pytest named as a dependency: `"pytest>=8"` in a list, or `pytest = "^8"` (Poetry). */
function pyprojectNamesPytest(text: string): boolean {
  return withoutComments(text).some((line) => /^\s*\[\s*tool\.pytest\b/.test(line) || /^\s*pytest\s*=/.test(line) || /["']pytest(?![\w.-])/.test(line));
}

/**
 * An ini file with its pytest section (`[tool:pytest]` in setup.cfg, `[pytest]` in tox.ini), or which names pytest in a
 * section that lists what to install or run: those whose name starts with `listsDependencies` (`[options.extras_require]`,
 * `[testenv:py312]`).
 */
function iniNamesPytest(text: string, sections: { pytestSection: string; listsDependencies: string }): boolean {
  let section = '';
  for (const line of withoutComments(text)) {
    const header = /^\s*\[([^\]]*)\]/.exec(line);
    if (header) {
      section = (header[1] ?? '').trim();
      if (section === sections.pytestSection) return true;
    } else if (section.startsWith(sections.listsDependencies) && PYTEST_NAME.test(line)) return true;
  }
  return false;
}

function withoutComments(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => !/^\s*[#;]/.test(line));
}

// --- Reading the top folder

/** What lstat says of `name` in `repo`, never following a link; null when there is nothing (or it cannot be asked). */
async function statTop(repo: string, name: string): Promise<Stats | null> {
  return lstat(path.join(repo, name)).catch(() => null);
}

async function exists(repo: string, name: string): Promise<boolean> {
  return (await statTop(repo, name)) !== null;
}

async function isRegularFile(repo: string, name: string): Promise<boolean> {
  return (await statTop(repo, name))?.isFile() ?? false;
}

/**
 * The text of `name` in `repo` when it is a regular file of at most MAX_FILE_BYTES; null otherwise. A link is refused
 * twice: by lstat, and by O_NOFOLLOW where the platform has it, should the file be swapped for one in between.
 * O_NONBLOCK keeps a pipe swapped in from blocking the open.
 */
async function readTopFile(repo: string, name: string): Promise<string | null> {
  if (!(await isRegularFile(repo, name))) return null;
  const flags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  try {
    const handle = await open(path.join(repo, name), flags);
    try {
      const stats = await handle.stat();
      if (!stats.isFile() || stats.size > MAX_FILE_BYTES) return null;
      // Room for one byte more than it holds: a file that grows while it is read is not read, so the bound holds.
      const buffer = Buffer.alloc(stats.size + 1);
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return filled > stats.size ? null : buffer.subarray(0, filled).toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}
