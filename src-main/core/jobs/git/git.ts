/**
 * The real `git`, as the service runs it for worktree isolation (docs/ISOLATION.md): `execFile` with
 * an argument array, never a shell. The service's own GIT_* variables are left out (a service started from a hook
 * would otherwise aim every command at that hook's repository); no hooks and no fsmonitor program run (a repository's
 * programs are not the service's to run), no optional locks (a `git status` must not rewrite the user's index), no
 * signing, no prompts, messages in English (they are matched). And what its machine-readable output says (numstat,
 * porcelain status).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { ChangeCounts, FileChange } from '../../../contract/index.js';

export class GitError extends Error {
  constructor(
    message: string,
    /** The exit code, or a spawn error's code (ENOENT: no git installed). */
    readonly code: number | string | null,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'GitError';
  }
}

/** Given on the command line, so they win over every config file (and reach the gits git itself starts). */
const FIXED_CONFIG = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'commit.gpgsign=false', '-c', 'core.quotePath=false'];

/** The environment git runs with: the service's, without GIT_* variables, and never waiting on a prompt. */
export function gitEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const kept = Object.fromEntries(Object.entries(env).filter(([name]) => !name.toUpperCase().startsWith('GIT_')));
  return { ...kept, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
}

export interface GitOptions {
  cwd: string;
  /** Exit codes that are answers, not failures (`diff --quiet` says 1 for "there are changes"). */
  okCodes?: readonly number[];
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Written to git's stdin (`git patch-id` reads a patch there); without it, stdin is closed at once. */
  input?: string;
  /** GIT_* variables of the service's own choosing (a replayed commit's author), set after the inherited ones are dropped. */
  vars?: Readonly<Record<`GIT_${string}`, string>>;
}

/**
 * The top folder of the repository holding `folder`, as git names it (its real path: the key the scoreboard's facts
 * and the saved verify commands use); null outside one, or where git cannot tell.
 */
export async function repositoryTop(folder: string): Promise<string | null> {
  const found = await git(['rev-parse', '--show-toplevel'], { cwd: folder, okCodes: [0, 128], timeoutMs: 30_000 }).catch(() => null);
  const top = found?.code === 0 ? found.stdout.trim() : '';
  return top === '' ? null : top;
}

/** Runs `git <args>` in `cwd`; resolves with its stdout and exit code, rejects with a GitError naming the command. */
export function git(args: readonly string[], options: GitOptions): Promise<{ stdout: string; code: number }> {
  const okCodes = options.okCodes ?? [0];
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...FIXED_CONFIG, ...args],
      {
        cwd: options.cwd,
        env: { ...gitEnv(options.env), ...options.vars },
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        const code = error ? ((error as NodeJS.ErrnoException & { code?: number | string }).code ?? null) : 0;
        if (typeof code === 'number' && okCodes.includes(code)) {
          resolve({ stdout, code });
          return;
        }
        if (!error) {
          resolve({ stdout, code: 0 });
          return;
        }
        const said = stderr.trim().split('\n').slice(-3).join(' ').trim();
        // A folder that is gone fails the spawn with ENOENT too: say which it was.
        const missing =
          code === 'ENOENT' ? (existsSync(options.cwd) ? 'git is not installed (or not on the PATH)' : `the folder ${options.cwd} does not exist`) : null;
        const what = missing ?? (said || error.message);
        reject(new GitError(`git ${args.join(' ')}: ${what}`, code, stderr));
      },
    );
    // A git that exits before reading all of it makes the write fail with EPIPE: its exit code says what happened.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

/**
 * For every `git status` the service runs in a folder a delegate could write: a submodule counts only when its commit
 * moved. Asking whether one is dirty runs a git inside it, with that repository's own config — which a delegate can
 * write (a clean filter, a program) — outside the box, as the service.
 */
export const STATUS_SUBMODULES = '--ignore-submodules=dirty';

/** `git diff --numstat -z` as files: "added\tremoved\tpath\0" each, "-" for a binary file's counts. */
export function parseNumstat(output: string): FileChange[] {
  const files: FileChange[] = [];
  for (const entry of output.split('\0')) {
    const match = /^(-|\d+)\t(-|\d+)\t(.+)$/s.exec(entry.replace(/^\n/, ''));
    if (!match) continue;
    const count = (text: string | undefined) => (text === undefined || text === '-' ? null : Number(text));
    files.push({ path: match[3] ?? '', added: count(match[1]), removed: count(match[2]) });
  }
  return files;
}

/**
 * `git status --porcelain -z --no-renames` as its entries, each `XY path`: the path, and whether it is untracked (`??`)
 * rather than a tracked file changed in the index or the work tree. Ignored files are not listed unless asked for.
 */
export function parseStatus(output: string): Array<{ path: string; untracked: boolean }> {
  return output
    .split('\0')
    .filter((entry) => entry.length > 3)
    .map((entry) => ({ path: entry.slice(3), untracked: entry.startsWith('??') }));
}

/** The same, read for what a job's end needs: its untracked files, and whether any tracked file changed. */
export function parseWorktreeStatus(output: string): { untracked: string[]; tracked: boolean } {
  const entries = parseStatus(output);
  const untracked = entries.filter((entry) => entry.untracked).map((entry) => entry.path);
  return { untracked, tracked: untracked.length < entries.length };
}

/** What a list of changed files adds up to: files, lines added, lines removed (a binary file counts no lines). */
export function countChanges(files: readonly FileChange[]): ChangeCounts {
  return {
    files: files.length,
    added: files.reduce((sum, f) => sum + (f.added ?? 0), 0),
    removed: files.reduce((sum, f) => sum + (f.removed ?? 0), 0),
  };
}
