/**
 * The files of a delegate's branch that run code on the user's machine once taken, or later by the user's tools
 * (docs/ISOLATION.md, "Taking the work"): git hooks, direnv, package manager scripts and config, Python and Rust build
 * files, tool managers, editor and agent config, CI, git's own attributes and submodules, symbolic links out of the
 * tree, new executable bits. Each with a short reason. The result the bridge shows, `take --dry-run`, the Jobs page and the take
 * itself all read this one list.
 *
 * A Makefile is not on it: make runs it only when the user runs make, by name, as the project's tests and scripts run
 * when they are run; the list is for what runs without being asked for by name (on install, on cd, on commit, when the
 * editor or an agent opens the folder, on a push). Deleted files are not on it: a file taken away runs nothing.
 *
 * Pure but for `codeRunningFilesBetween`, which reads the branch through the git it is given.
 */
import path from 'node:path';
import type { CodeRunningFile } from '../../../contract/index.js';

export type { CodeRunningFile } from '../../../contract/index.js';

/** One entry of `git diff --raw`: the path and how it changed (A, M, D, T), with both sides' modes and blobs. */
export interface BranchChange {
  path: string;
  status: string;
  oldMode: string;
  newMode: string;
  oldBlob: string;
  newBlob: string;
}

/** The texts of the blobs a rule reads (package.json, pyproject.toml, .gitattributes, symbolic links), by id. */
export type Blobs = ReadonlyMap<string, string>;

const NO_BLOB = /^0+$/;
const SYMLINK = '120000';
const EXECUTABLE = '100755';

/** `git diff --raw -z --no-renames`: ":old new oldblob newblob status\0path\0" each. */
export function parseRawDiff(output: string): BranchChange[] {
  const parts = output.split('\0');
  const changes: BranchChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const match = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) ([A-Z])\d*$/.exec((parts[i] ?? '').replace(/^\n/, ''));
    if (!match) continue;
    const [, oldMode = '', newMode = '', oldBlob = '', newBlob = '', status = ''] = match;
    changes.push({ path: parts[i + 1] ?? '', status, oldMode, newMode, oldBlob, newBlob });
  }
  return changes;
}

/** npm's lifecycle scripts: they run on `npm install` (or pack, publish), not by name. */
const LIFECYCLE = ['preinstall', 'install', 'postinstall', 'dependencies', 'preprepare', 'prepare', 'postprepare', 'prepublish', 'prepack', 'postpack'];

/** A blob's text, undefined when it was not read, null when there is none (the file was added, or deleted). */
function textOf(blob: string, blobs: Blobs): string | null | undefined {
  return NO_BLOB.test(blob) ? null : blobs.get(blob);
}

function scriptsOf(text: string | null): Record<string, unknown> | 'invalid' {
  if (text === null) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    const scripts = (parsed as { scripts?: unknown } | null)?.scripts;
    return scripts !== null && typeof scripts === 'object' && !Array.isArray(scripts) ? (scripts as Record<string, unknown>) : {};
  } catch {
    return 'invalid';
  }
}

/** package.json: on the list only when its scripts changed; lifecycle scripts named first, as what runs on install. */
function packageScripts(change: BranchChange, blobs: Blobs): string | null {
  const before = textOf(change.oldBlob, blobs);
  const after = textOf(change.newBlob, blobs);
  if (before === undefined || after === undefined) return 'its scripts could not be read: review them';
  const [old, now] = [scriptsOf(before), scriptsOf(after)];
  if (old === 'invalid' || now === 'invalid') return 'not valid JSON, so its scripts cannot be compared: review them';
  const changed = [...new Set([...Object.keys(old), ...Object.keys(now)])].filter(
    (name) => name in now && JSON.stringify(old[name]) !== JSON.stringify(now[name]),
  );
  if (changed.length === 0) return null;
  const onInstall = changed.filter((name) => LIFECYCLE.includes(name));
  const others = changed.filter((name) => !LIFECYCLE.includes(name));
  return [
    ...(onInstall.length > 0 ? [`${onInstall.join(', ')} run${onInstall.length === 1 ? 's' : ''} on npm install`] : []),
    ...(others.length > 0 ? [`scripts ${others.join(', ')}`] : []),
  ].join('; ');
}

/** The `[build-system]` table of a pyproject.toml, as text: what pip builds the package with. */
function buildSystem(text: string | null): string {
  if (text === null) return '';
  const lines = text.split('\n');
  const start = lines.findIndex((line) => /^\s*\[build-system\]\s*(#.*)?$/.test(line));
  if (start < 0) return '';
  const end = lines.findIndex((line, i) => i > start && /^\s*\[/.test(line));
  return lines
    .slice(start, end < 0 ? undefined : end)
    .map((line) => line.trim())
    .filter(Boolean)
    .join('\n');
}

function pyprojectBackend(change: BranchChange, blobs: Blobs): string | null {
  const before = textOf(change.oldBlob, blobs);
  const after = textOf(change.newBlob, blobs);
  if (before === undefined || after === undefined) return 'its build backend could not be read: review it';
  return buildSystem(before) === buildSystem(after) || buildSystem(after) === '' ? null : 'its build backend runs on pip install';
}

function gitattributesDrivers(change: BranchChange, blobs: Blobs): string | null {
  const after = textOf(change.newBlob, blobs);
  if (after === undefined) return 'could not be read: review which filter, diff and merge programs it names';
  return after !== null && /(^|\s)(filter|diff|merge)=/m.test(after) ? 'names filter, diff or merge drivers git runs on checkout and diff' : null;
}

type Reason = string | ((change: BranchChange, blobs: Blobs) => string | null);

/** What runs a file, by its path (relative to the repository, with /): `at` matches anywhere in the tree unless said. */
interface Rule {
  name: string;
  matches: (file: string) => boolean;
  reason: Reason;
}

const baseName = (file: string) => file.slice(file.lastIndexOf('/') + 1);
const named =
  (...names: string[]) =>
  (file: string) =>
    names.includes(baseName(file));
/** Inside a folder of this name, at any depth. */
const within =
  (...folders: string[]) =>
  (file: string) =>
    file
      .split('/')
      .slice(0, -1)
      .some((folder) => folders.includes(folder));
/** Under this folder of the repository's root. */
const under = (prefix: string) => (file: string) => file.startsWith(prefix);

/** One entry per kind of file; tests/core/jobs/git/code-running-files.test.ts has one case per entry. */
export const CODE_RUNNING_RULES: readonly Rule[] = [
  { name: 'husky', matches: within('.husky'), reason: 'a git hook (husky): git runs it on commit or push' },
  { name: 'githooks', matches: within('.githooks'), reason: 'a git hook (core.hooksPath): git runs it on commit or push' },
  {
    name: 'lefthook',
    matches: named('lefthook.yml', 'lefthook.yaml', '.lefthook.yml', '.lefthook.yaml', 'lefthook-local.yml', 'lefthook-local.yaml'),
    reason: 'lefthook runs its commands on commit or push',
  },
  { name: 'pre-commit', matches: named('.pre-commit-config.yaml'), reason: 'pre-commit runs its hooks on every commit' },
  { name: 'envrc', matches: named('.envrc'), reason: 'direnv runs it on cd' },
  { name: 'package.json', matches: named('package.json'), reason: packageScripts },
  { name: 'npmrc', matches: named('.npmrc'), reason: "npm's config: script shell, node options, registries" },
  { name: 'yarnrc', matches: named('.yarnrc.yml', '.yarnrc'), reason: 'yarn runs the yarnPath and plugins it names' },
  { name: 'pnpmfile', matches: named('.pnpmfile.cjs', '.pnpmfile.mjs'), reason: 'pnpm runs it on install' },
  { name: 'yarn pnp', matches: named('.pnp.cjs', '.pnp.js', '.pnp.loader.mjs'), reason: 'yarn loads it into every node it runs' },
  { name: 'yarn folder', matches: under('.yarn/'), reason: 'yarn runs the release and plugins it holds' },
  { name: 'bunfig', matches: named('bunfig.toml', '.bunfig.toml'), reason: 'bun preloads the scripts it names' },
  { name: 'bazel', matches: named('.bazelrc', '.bazelversion', '.bazeliskrc'), reason: 'bazel and bazelisk fetch and run what it names' },
  {
    name: 'build wrappers',
    matches: named('gradle-wrapper.properties', 'maven-wrapper.properties'),
    reason: 'the wrapper downloads and runs the distribution it names',
  },
  { name: 'conftest', matches: named('conftest.py'), reason: 'pytest runs it before the tests' },
  { name: 'setup.py', matches: named('setup.py'), reason: 'runs on pip install' },
  { name: 'pyproject', matches: named('pyproject.toml'), reason: pyprojectBackend },
  { name: 'sitecustomize', matches: named('sitecustomize.py', 'usercustomize.py'), reason: 'Python runs it at start when it is on the path' },
  { name: 'pth', matches: (file) => file.endsWith('.pth'), reason: 'Python runs its import lines at start from site-packages' },
  { name: 'build.rs', matches: named('build.rs'), reason: 'cargo runs it on build, rust-analyzer when the editor opens the folder' },
  { name: 'cargo config', matches: (file) => /(^|\/)\.cargo\/config(\.toml)?$/.test(file), reason: "cargo's config: runners, wrappers, aliases" },
  { name: 'mise', matches: named('.mise.toml', 'mise.toml', '.mise.local.toml'), reason: 'mise runs its hooks, tasks and env on cd' },
  { name: 'tool-versions', matches: named('.tool-versions'), reason: 'asdf or mise installs and runs the tools it names' },
  {
    name: 'devcontainer',
    matches: (file) => within('.devcontainer')(file) || named('.devcontainer.json')(file),
    reason: 'the editor builds and runs the dev container it describes',
  },
  { name: 'vscode', matches: within('.vscode'), reason: 'VS Code runs its tasks and the programs its settings name' },
  { name: 'cursor', matches: within('.cursor'), reason: "Cursor's rules and MCP servers" },
  { name: 'idea', matches: within('.idea'), reason: 'JetBrains IDEs run its run configurations and tools' },
  { name: 'pyright', matches: named('pyrightconfig.json'), reason: 'the editor runs the Python environment it names' },
  { name: 'github workflows', matches: under('.github/workflows/'), reason: "CI runs it with the repository's secrets once pushed" },
  { name: 'github actions', matches: under('.github/actions/'), reason: "CI runs it with the repository's secrets once pushed" },
  { name: 'gitlab-ci', matches: (file) => file === '.gitlab-ci.yml', reason: "CI runs it with the repository's secrets once pushed" },
  { name: 'gitattributes', matches: named('.gitattributes'), reason: gitattributesDrivers },
  { name: 'gitmodules', matches: (file) => file === '.gitmodules', reason: 'git submodule update fetches what it names and runs its update commands' },
  { name: 'gitconfig', matches: named('.gitconfig'), reason: 'git config once included: core.fsmonitor, hooksPath and aliases run programs' },
  { name: 'mcp.json', matches: named('.mcp.json'), reason: 'Claude Code starts the MCP servers it names' },
  { name: 'claude', matches: within('.claude'), reason: 'Claude Code runs the hooks and allows the commands it sets' },
  {
    name: 'steering',
    matches: named('CLAUDE.md', 'CLAUDE.local.md', 'AGENTS.md', 'GEMINI.md', '.cursorrules'),
    reason: 'steers the coding agents that read it',
  },
];

/** A symbolic link's target, when it leads out of the repository or into its .git; null when it stays inside. */
function linkOutside(file: string, target: string): string | null {
  if (path.posix.isAbsolute(target) || /^[A-Za-z]:[\\/]|^[\\/]{2}/.test(target)) return target;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), target.replace(/\\/g, '/')));
  if (resolved === '..' || resolved.startsWith('../')) return target;
  return resolved === '.git' || resolved.startsWith('.git/') ? target : null;
}

/** Why a change runs code, or null; every reason that holds, joined. */
function reasonFor(change: BranchChange, blobs: Blobs): string | null {
  const reasons = CODE_RUNNING_RULES.filter((rule) => rule.matches(change.path)).map((rule) =>
    typeof rule.reason === 'string' ? rule.reason : rule.reason(change, blobs),
  );
  if (change.newMode === SYMLINK) {
    const target = textOf(change.newBlob, blobs);
    if (target === undefined) reasons.push('a symbolic link that could not be read');
    else if (target !== null && linkOutside(change.path, target) !== null) reasons.push(`a symbolic link to ${target}, outside the repository`);
  } else if (change.newMode === EXECUTABLE && change.oldMode !== EXECUTABLE) reasons.push('made executable');
  const said = reasons.filter((reason): reason is string => reason !== null);
  return said.length > 0 ? said.join('; ') : null;
}

/** The blobs `codeRunningFiles` reads for these changes: both sides of the files whose content decides, a link's target. */
export function blobsToRead(changes: readonly BranchChange[]): string[] {
  const wanted = new Set<string>();
  for (const change of changes) {
    if (change.status === 'D') continue;
    const byContent = CODE_RUNNING_RULES.some((rule) => typeof rule.reason !== 'string' && rule.matches(change.path));
    if (byContent) [change.oldBlob, change.newBlob].forEach((blob) => wanted.add(blob));
    if (change.newMode === SYMLINK) wanted.add(change.newBlob);
  }
  return [...wanted].filter((blob) => !NO_BLOB.test(blob));
}

/** The branch's files that run code, with why, in the diff's order (by path). `blobs`: blobsToRead's texts; one missing is said. */
export function codeRunningFiles(changes: readonly BranchChange[], blobs: Blobs): CodeRunningFile[] {
  return changes.flatMap((change) => {
    if (change.status === 'D') return [];
    const reason = reasonFor(change, blobs);
    return reason === null ? [] : [{ path: change.path, reason }];
  });
}

/** Blobs read at most, each at most this long: past them a file is listed as not read, for the user to review. */
export const BLOB_LIMITS = { count: 200, chars: 1_000_000 } as const;

/** git in the repository, answering its stdout. */
export type GitText = (args: readonly string[]) => Promise<string>;

/** The files between `base` and `tip` that run code, read with `git`. */
export async function codeRunningFilesBetween(git: GitText, base: string, tip: string): Promise<CodeRunningFile[]> {
  const changes = parseRawDiff(await git(['diff', '--raw', '-z', '--no-renames', '--no-abbrev', '--no-ext-diff', '--no-textconv', base, tip]));
  const blobs = new Map<string, string>();
  // One at a time: there are seldom more than a few, and a branch of many must not start hundreds of gits at once.
  for (const blob of blobsToRead(changes).slice(0, BLOB_LIMITS.count)) {
    const text = await git(['cat-file', 'blob', blob]);
    if (text.length <= BLOB_LIMITS.chars) blobs.set(blob, text);
  }
  return codeRunningFiles(changes, blobs);
}
