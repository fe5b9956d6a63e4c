/**
 * What a delegate's branch changed of what judges it. The verify commands run on the branch tip, so a pass proves
 * little when the branch rewrote them: the package.json scripts the commands name, the files that configure how tests
 * run (make, pytest, the JavaScript test runners, Cargo's test sections, CI), the test files it deleted or renamed
 * away, and the skip or only markers it added. Each is said in a short line of plain words, in that order.
 *
 * It reads the two commits through git and runs nothing of the repository's: no external diff, no textconv, and every
 * file is diffed as text (a .gitattributes the branch wrote cannot hide a file), binary ones left out by their NUL bytes.
 * The diff it reads is bounded by the sizes of the blobs behind it, smallest first (MAX_DIFF_BYTES).
 */
import path from 'node:path';
import { git } from '../jobs/git/git.js';
import { clip, plain, quoted, shown } from './flag-words.js';

export interface RewrittenChecksInput {
  /** A git repository (a worktree or the main checkout) where both commits exist. */
  cwd: string;
  base: string;
  head: string;
  /** The verify commands, e.g. ["npm test", "npm run lint"]: they say which package.json scripts judge the work. */
  commands: readonly string[];
}

/** The most flags a result holds; when more were found, the last one says how many more. */
export const MAX_FLAGS = 6;

/** The blob bytes whose diff is read for markers and Cargo.toml lines: about as much diff text as that. */
const MAX_DIFF_BYTES = 2 * 1024 * 1024;
/** A package.json bigger than this is not read: no real one is, and its scripts would not fit a flag anyway. */
const MAX_MANIFEST_BYTES = 1024 * 1024;
/** The characters of pathspecs given to one git (Windows refuses command lines past 32 767). */
const MAX_PATHSPEC_CHARS = 8000;
const MAX_FLAG_CHARS = 140;

/** One entry of `git diff --raw -z -M`: `from` is '' for an added file, `to` is '' for a deleted one. */
interface Change {
  status: string;
  from: string;
  to: string;
  oldMode: string;
  newMode: string;
  oldBlob: string;
  newBlob: string;
}

/** A file's added and removed lines in the diff. */
interface Lines {
  added: string[];
  removed: string[];
}

const REGULAR = new Set(['100644', '100755']);
const NO_BLOB = /^0+$/;
/** Whatever the repository configures: no colour, no external diff or textconv program, paths from the root. */
const PLAIN = ['--no-color', '--no-ext-diff', '--no-textconv', '--no-relative'];

/** Finds what the branch changed of what judges it; [] when git fails, whatever the input. */
export async function rewrittenChecks(input: RewrittenChecksInput): Promise<string[]> {
  const { cwd, base, head } = input;
  // A commit written as an option would be read as one.
  if (![base, head].every((commit) => typeof commit === 'string' && commit !== '' && !commit.startsWith('-'))) return [];
  const commands = Array.isArray(input.commands) ? input.commands.filter((command): command is string => typeof command === 'string') : [];
  try {
    const changes = parseRaw((await git(['diff', '--raw', '-z', '-M', '--no-abbrev', ...PLAIN, base, head, '--'], { cwd })).stdout);
    const sizes = await blobSizes(cwd, changes);
    const lines = await changedLines(cwd, base, head, changes, sizes);
    const flags = [
      ...(await scriptFlags(cwd, changes, sizes, commands)),
      ...changes.flatMap((change) => runnerFlag(change, lines.get(change.to)) ?? []),
      ...dependencyFlags(changes),
      ...changes.flatMap((change) => removedTestFlag(change) ?? []),
      ...changes.flatMap((change) => markerFlag(change.to, lines.get(change.to)) ?? unreadTestFlag(change, lines) ?? []),
    ];
    return capped([...new Set(flags.map((flag) => clip(flag, MAX_FLAG_CHARS)))]);
  } catch {
    return [];
  }
}

/** `git diff --raw -z`: ":oldmode newmode oldblob newblob status\0path\0", with a second path for a rename. */
function parseRaw(output: string): Change[] {
  const parts = output.split('\0');
  const changes: Change[] = [];
  for (let i = 0; i + 1 < parts.length;) {
    const match = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) ([A-Z])\d*$/.exec((parts[i] ?? '').replace(/^\n/, ''));
    if (!match) {
      i += 1;
      continue;
    }
    const [, oldMode = '', newMode = '', oldBlob = '', newBlob = '', status = ''] = match;
    const paired = status === 'R' || status === 'C';
    const first = parts[i + 1] ?? '';
    const second = paired ? (parts[i + 2] ?? '') : first;
    i += paired ? 3 : 2;
    changes.push({ status, from: status === 'A' ? '' : first, to: status === 'D' ? '' : second, oldMode, newMode, oldBlob, newBlob });
  }
  return changes;
}

/** The size of every blob on either side, by id, from one `git cat-file --batch-check`. */
async function blobSizes(cwd: string, changes: readonly Change[]): Promise<Map<string, number>> {
  const ids = new Set(
    changes.flatMap((change) => [
      ...(REGULAR.has(change.oldMode) && !NO_BLOB.test(change.oldBlob) ? [change.oldBlob] : []),
      ...(REGULAR.has(change.newMode) && !NO_BLOB.test(change.newBlob) ? [change.newBlob] : []),
    ]),
  );
  const sizes = new Map<string, number>();
  if (ids.size === 0) return sizes;
  const { stdout } = await git(['cat-file', '--batch-check'], { cwd, input: [...ids].map((id) => `${id}\n`).join('') });
  for (const line of stdout.split('\n')) {
    const [id = '', type, size] = line.split(' ');
    if (type === 'blob' && size !== undefined) sizes.set(id, Number(size));
  }
  return sizes;
}

/**
 * The added and removed lines of each changed file, by its path at head, from `git diff -U0`. Files are taken smallest
 * first while the blobs behind them fit MAX_DIFF_BYTES; a rename's two paths go to the same git, so it stays one.
 */
async function changedLines(
  cwd: string,
  base: string,
  head: string,
  changes: readonly Change[],
  sizes: ReadonlyMap<string, number>,
): Promise<Map<string, Lines>> {
  const costed = changes
    .filter((change) => change.to !== '' && REGULAR.has(change.newMode) && change.oldBlob !== change.newBlob)
    .map((change) => ({ change, cost: (sizes.get(change.newBlob) ?? Infinity) + (change.from === '' ? 0 : (sizes.get(change.oldBlob) ?? 0)) }))
    .sort((a, b) => a.cost - b.cost);
  const batches: string[][] = [[]];
  let spent = 0;
  let chars = 0;
  for (const { change, cost } of costed) {
    if (spent + cost > MAX_DIFF_BYTES) break;
    spent += cost;
    // `top` reads the path from the repository's root whatever cwd is; `literal` keeps `*` and `?` as themselves.
    const specs = [...new Set([change.from, change.to].filter(Boolean))].map((file) => `:(top,literal)${file}`);
    const length = specs.reduce((sum, spec) => sum + spec.length + 1, 0);
    if (chars + length > MAX_PATHSPEC_CHARS && chars > 0) {
      batches.push([]);
      chars = 0;
    }
    batches.at(-1)?.push(...specs);
    chars += length;
  }
  const lines = new Map<string, Lines>();
  for (const specs of batches.filter((batch) => batch.length > 0)) {
    const args = ['diff', '-U0', '--text', '-M', '-D', '--src-prefix=a/', '--dst-prefix=b/', ...PLAIN, base, head, '--', ...specs];
    for (const [file, found] of parseUnified((await git(args, { cwd })).stdout)) lines.set(file, found);
  }
  return lines;
}

/** A `-U0` diff by file: the hunks' line counts say where each hunk ends, so no line of a file is read as a header. */
function parseUnified(text: string): Map<string, Lines> {
  const files = new Map<string, Lines>();
  const rows = text.split('\n');
  let current: Lines | null = null;
  for (let i = 0; i < rows.length; i += 1) {
    const row = rows[i] ?? '';
    if (row.startsWith('diff --git ')) current = null;
    else if (row.startsWith('+++ ')) {
      const file = pathOf(row.slice(4));
      current = file === null ? null : { added: [], removed: [] };
      if (file !== null && current) files.set(file, current);
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(row);
    if (!hunk || !current) continue;
    let left = Number(hunk[1] ?? '1') + Number(hunk[2] ?? '1');
    while (left > 0 && i + 1 < rows.length) {
      const body = rows[++i] ?? '';
      if (body.startsWith('\\')) continue; // "\ No newline at end of file"
      (body.startsWith('+') ? current.added : current.removed).push(body.slice(1));
      left -= 1;
    }
  }
  // A NUL byte is how git itself tells a binary file: nothing in one is a line of code.
  for (const [file, found] of files) if ([...found.added, ...found.removed].some((line) => line.includes('\0'))) files.delete(file);
  return files;
}

/** The path of a `+++ b/…` line (C-quoted when it holds odd characters, a tab after it when it holds a space). */
function pathOf(named: string): string | null {
  const quoted = named.startsWith('"');
  const name = quoted ? unquote(named) : named.replace(/\t$/, '');
  return name.startsWith('b/') ? name.slice(2) : null;
}

/** Git's C quoting undone: backslash escapes and octal bytes, read back as UTF-8. */
function unquote(quoted: string): string {
  const end = quoted.lastIndexOf('"');
  const inner = quoted.slice(1, end > 0 ? end : undefined);
  const bytes: number[] = [];
  const escapes: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13 };
  for (let i = 0; i < inner.length; i += 1) {
    const char = inner[i] ?? '';
    const next = inner[i + 1] ?? '';
    if (char !== '\\') {
      bytes.push(...Buffer.from(char));
    } else if (/[0-7]/.test(next)) {
      bytes.push(parseInt(inner.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(escapes[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

// --- 1. package.json scripts the commands name

/** The runners' own commands: `pnpm <word>` and `yarn <word>` run a script of that name unless the word is one of these. */
const NOT_SCRIPTS = new Set(
  (
    'add install i ci update up upgrade remove rm uninstall link unlink import rebuild rb prune fetch patch patch-commit audit list ls outdated why ' +
    'exec dlx create env init publish pack store root bin config get set setup server licenses deploy doctor cache self-update dedupe info ' +
    'workspace workspaces recursive plugin npm node constraints explain version help login logout'
  ).split(' '),
);
const RUN = new Set(['run', 'run-script', 'rum', 'urn']);
/** npm's (and pnpm's) own names for running a script: `npm t` runs "test". */
const DIRECT = new Map([
  ['test', 'test'],
  ['t', 'test'],
  ['tst', 'test'],
  ['start', 'start'],
  ['stop', 'stop'],
  ['restart', 'restart'],
]);
/** Options that take the next word as their value. */
const VALUED = new Set(['--prefix', '-C', '--dir', '--cwd', '--filter', '-F', '--workspace', '-w']);

/** The scripts a shell command runs through npm, pnpm, yarn or bun (`CI=1 npm run --silent lint && npm t` → lint, test). */
function scriptsRunBy(command: string): string[] {
  const names: string[] = [];
  for (const segment of command.split(/&&|\|\||[;|&\n()]/)) {
    const words = segment
      .trim()
      .split(/\s+/)
      .map((word) => word.replace(/^["']|["']$/g, ''))
      .filter(Boolean);
    while (words.length > 0 && /^(?:\w+=.*|env|cross-env)$/.test(words[0] ?? '')) words.shift();
    const [sub = '', next = ''] = positional(words.slice(1));
    const named = scriptNamed(path.posix.basename(words[0] ?? ''), sub, next);
    if (named) names.push(named);
  }
  return names;
}

/** The script `<tool> <sub> <next>` runs, if any: `npm run lint`, `npm t`, `pnpm lint`, `yarn lint`, `bun run lint`. */
function scriptNamed(tool: string, sub: string, next: string): string | null {
  if (!['npm', 'pnpm', 'yarn', 'bun'].includes(tool) || sub === '') return null;
  if (RUN.has(sub)) return next || null;
  if (tool === 'npm' || tool === 'pnpm') return DIRECT.get(sub) ?? (tool === 'pnpm' && !NOT_SCRIPTS.has(sub) ? sub : null);
  // `bun test` is bun's own test runner, not a script.
  return tool === 'yarn' && !NOT_SCRIPTS.has(sub) ? sub : null;
}

/** The words of a command that are not options (nor their values), up to `--`. */
function positional(words: readonly string[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < words.length; i += 1) {
    const word = words[i] ?? '';
    if (word === '--') break;
    if (!word.startsWith('-')) found.push(word);
    else if (VALUED.has(word)) i += 1;
  }
  return found;
}

/** The scripts the commands run, with their pre and post scripts and the scripts those call, on either side. */
function namedScripts(commands: readonly string[], sides: ReadonlyArray<ReadonlyMap<string, string>>): string[] {
  const named = new Set<string>();
  const visit = (command: string): void => {
    for (const name of scriptsRunBy(command)) {
      for (const each of [`pre${name}`, name, `post${name}`].filter((script) => !named.has(script))) {
        named.add(each);
        for (const scripts of sides) visit(scripts.get(each) ?? '');
      }
    }
  };
  commands.forEach(visit);
  return [...named];
}

/** A package.json's scripts at one side: empty when there is no file, null when it cannot be read as JSON. */
async function scriptsOf(cwd: string, mode: string, blob: string, sizes: ReadonlyMap<string, number>): Promise<Map<string, string> | null> {
  if (NO_BLOB.test(blob)) return new Map();
  if (!REGULAR.has(mode) || (sizes.get(blob) ?? Infinity) > MAX_MANIFEST_BYTES) return null;
  try {
    // npm reads a package.json that begins with a byte-order mark: so must this.
    const parsed: unknown = JSON.parse((await git(['cat-file', 'blob', blob], { cwd })).stdout.replace(/^\uFEFF/, ''));
    const scripts = (parsed as { scripts?: unknown } | null)?.scripts;
    if (scripts === null || typeof scripts !== 'object' || Array.isArray(scripts)) return new Map();
    return new Map(Object.entries(scripts).map(([name, body]) => [name, typeof body === 'string' ? body : JSON.stringify(body)]));
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}

async function scriptFlags(cwd: string, changes: readonly Change[], sizes: ReadonlyMap<string, number>, commands: readonly string[]): Promise<string[]> {
  const flags: string[] = [];
  for (const change of changes) {
    const file = change.to || change.from;
    if (path.posix.basename(file) !== 'package.json' || commands.length === 0) continue;
    const before = await scriptsOf(cwd, change.oldMode, change.oldBlob, sizes);
    const after = await scriptsOf(cwd, change.newMode, change.newBlob, sizes);
    const where = shown(file, 40);
    // What cannot be read cannot be cleared: a link, a file past the bound, or no JSON, where npm may still find scripts.
    if (!after) flags.push(`changes ${where} so that its scripts cannot be read (a link, too big, or not JSON)`);
    if (!before || !after) continue;
    for (const name of namedScripts(commands, [before, after])) {
      const [was, now, script] = [before.get(name), after.get(name), JSON.stringify(clip(plain(name), 24))];
      if (was === now) continue;
      if (was === undefined) flags.push(`adds a ${script} script to ${where} (${quoted(now ?? '')})`);
      else if (now === undefined) flags.push(`removes the ${script} script from ${where} (was ${quoted(was)})`);
      else flags.push(`changes the ${script} script in ${where} (${quoted(was)} → ${quoted(now)})`);
    }
  }
  return flags;
}

// --- 2. Files that configure how the tests run

const CI =
  /^(?:\.github\/workflows|\.circleci|\.ci|\.buildkite|\.gitlab-ci)\/|^(?:\.gitlab-ci\.yml|azure-pipelines\.ya?ml|Jenkinsfile|\.travis\.yml|bitbucket-pipelines\.yml)$/;
const MAKE = /^(?:GNUmakefile|makefile|Makefile|.+\.mk)$/;
/** Files that change what a package manager runs (`script-shell`, `node-options`, a yarn binary, pnpm hooks) or cargo's runner. */
const TOOL_CONFIG = /^(?:\.npmrc|\.yarnrc(?:\.ya?ml)?|\.pnpmfile\.c?js|\.?bunfig\.toml)$|(?:^|\/)\.cargo\/config(?:\.toml)?$/;
const TEST_CONFIG = [
  /^(?:pyproject\.toml|tox\.ini|noxfile\.py|setup\.cfg|\.?pytest\.ini|pytest\.toml|conftest\.py)$/,
  /^(?:vitest|jest|mocha|ava|playwright|karma|cypress|vite)\.(?:[\w-]+\.)*(?:config|workspace|conf)(?:\.[\w-]+)*\.(?:[cm]?[jt]s|json)$/,
  /^\.mocharc(?:\.|$)/,
];

function runnerReason(file: string): string | null {
  const name = path.posix.basename(file);
  if (CI.test(file)) return ' (CI)';
  if (MAKE.test(name)) return ', which defines the make targets';
  if (TOOL_CONFIG.test(name) || TOOL_CONFIG.test(file)) return ', which configures what the package manager or cargo runs';
  if (TEST_CONFIG.some((pattern) => pattern.test(name))) return ', which configures the tests';
  return null;
}

function runnerFlag(change: Change, lines: Lines | undefined): string | null {
  const reason = [change.to, change.from].filter(Boolean).map(runnerReason).find(Boolean);
  if (reason) return `${verbed(change)}${reason}`;
  // Cargo.toml holds the dependencies too: only its lines that mention tests ([[test]], [profile.test], harness) count.
  const cargo = path.posix.basename(change.to) === 'Cargo.toml' && [...(lines?.added ?? []), ...(lines?.removed ?? [])].some((line) => /test/i.test(line));
  return cargo ? `changes test settings in ${shown(change.to)}` : null;
}

/** "adds conftest.py", "changes Makefile", "deletes tox.ini", "renames jest.config.js → old/jest.config.js". */
function verbed(change: Change): string {
  if (change.status === 'A') return `adds ${shown(change.to)}`;
  if (change.status === 'D') return `deletes ${shown(change.from)}`;
  if (change.status === 'R') return `renames ${shown(change.from)} → ${shown(change.to)}`;
  return `changes ${shown(change.to)}`;
}

// --- 3. Test files deleted or renamed away

const TEST_DIR = /(?:^|\/)(?:test|tests|__tests__|spec)\//;
const TEST_NAME = /\.(?:test|spec)\.[^/]+$|_test\.(?:go|py)$|^test_.*\.py$/;

function isTestPath(file: string): boolean {
  return TEST_DIR.test(file) || TEST_NAME.test(path.posix.basename(file));
}

function removedTestFlag(change: Change): string | null {
  if (change.status === 'D' && isTestPath(change.from)) return verbed(change);
  // `a.test.js` → `a.test.js.off` stays in tests/ but is no longer run.
  const extension = (file: string) => path.posix.extname(file);
  if (change.status === 'R' && isTestPath(change.from) && (!isTestPath(change.to) || extension(change.from) !== extension(change.to))) return verbed(change);
  // A test made a link: it can run another file, one that passes.
  if (isTestPath(change.to) && change.newMode === '120000') return `makes ${shown(change.to)} a link`;
  return null;
}

/**
 * A test file, by its name, whose diff was not read (past the bound, or holding a NUL byte): what it added is not
 * cleared. Not every file under tests/ (a fixture image is no test).
 */
function unreadTestFlag(change: Change, lines: ReadonlyMap<string, Lines>): string | null {
  if (
    change.to === '' ||
    !TEST_NAME.test(path.posix.basename(change.to)) ||
    !REGULAR.has(change.newMode) ||
    change.oldBlob === change.newBlob ||
    lines.has(change.to)
  )
    return null;
  return `changes ${shown(change.to)} past what could be read for skip markers`;
}

// --- Installed dependencies on the branch

const DEPENDENCY_DIR = /^(node_modules|\.venv|venv)\//;

/**
 * Files the branch puts in the folders of installed dependencies: the checkout uses the user's instead (checkout.ts),
 * but a branch that tries says something.
 */
function dependencyFlags(changes: readonly Change[]): string[] {
  const folders = new Set(changes.flatMap((change) => [change.to, change.from].map((file) => DEPENDENCY_DIR.exec(file)?.[1] ?? [])).flat());
  return [...folders].map((folder) => `puts files in ${folder}/ (the commands ran on your installed ${folder} instead)`);
}

// --- 4. Skip and only markers in added lines

/**
 * What turns a test off or turns the others off. `.skip(` and its kin count only after a test function's name:
 * `iter.skip(1)` is Rust and `model.fit(x)` is Python. The match, without its parenthesis, names the marker.
 */
const MARKER = new RegExp(
  [
    /\b(?:it|test|describe|suite|context|specify|bench)(?:\.\w+)*\.(?:skip|skipIf|only|todo)\b/,
    /(?<![\w.$])(?:xit|xdescribe|xtest|fit|fdescribe)(?=\s*\()/,
    /@?pytest\.mark\.(?:skip|xfail)\w*/,
    /@?unittest\.skip\w*/,
    /\bpytest\.skip(?=\s*\()/,
    /\bself\.skipTest(?=\s*\()/,
    /#\[ignore\b[^\]]{0,40}\]/,
    /\b[tb]\.Skip(?:Now|f)?(?=\s*\()/,
  ]
    .map((pattern) => pattern.source)
    .join('|'),
);

function markerFlag(file: string, lines: Lines | undefined): string | null {
  for (const line of lines?.added ?? []) {
    const marker = MARKER.exec(line)?.[0];
    if (marker) return `adds a skip marker in ${shown(file)} (${shown(marker, 30)})`;
  }
  return null;
}

function capped(flags: string[]): string[] {
  return flags.length <= MAX_FLAGS ? flags : [...flags.slice(0, MAX_FLAGS - 1), `and ${flags.length - MAX_FLAGS + 1} more`];
}
