/**
 * Worktrees (docs/ISOLATION.md, docs/ARCHITECTURE.md §4): the git side of isolation. Each delegation in a
 * git repository gets a worktree of its own under the service's data folder, on a new branch from the repository's
 * HEAD, so the user's tree and index are never touched and two delegates never see each other's edits. When a job
 * ends, what its delegate left uncommitted is committed onto the branch; a worktree goes only once its branch's work is
 * taken (in another branch by any route: worktree-cleanup.ts), or when the user discards it. Everything here runs the real `git` (git.ts).
 */
import { leftoverCommitMessage } from './leftover-commit.js';
import type { Ending } from './leftover-commit.js';
import { lstat, mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DiffLine, FileChange, FileDiff, JobChanges, JobIsolation } from '../../../contract/index.js';
import { MAX_CHANGED_FILES } from '../../../contract/index.js';
import { errorCode, errorMessage } from '../../../common/errors.js';
import { truncateEnd } from '../../../common/format.js';
import { isInside } from '../../fs/paths.js';
import { GitError, STATUS_SUBMODULES, countChanges, git, parseNumstat, parseWorktreeStatus } from './git.js';
import { branchCommands } from '../../../common/git-commands.js';
import { isSandboxPlaceholder } from '../process/sandbox.js';
import { findTaken } from './worktree-cleanup.js';

/** Who the service's own commits are by: no git config is needed, and nobody mistakes them for the user's. */
export const SERVICE_AUTHOR = { name: 'OpenRouter Delegate', email: 'delegate@openrouter-delegate.invalid' } as const;
export const BRANCH_PREFIX = 'delegate/';

/** A path in the user's repository as the same path in the worktree; a path outside the repository stays as it is. */
export function intoWorktree(file: string, repo: string, worktree: string): string {
  return isInside(file, repo) ? path.join(worktree, path.relative(repo, file)) : file;
}

/** The reverse: a path in the worktree as the same path in the user's repository. */
export function outOfWorktree(file: string, repo: string, worktree: string): string {
  return isInside(file, worktree) ? path.join(repo, path.relative(worktree, file)) : file;
}

/**
 * A permission rule whose absolute path (`Read(//dir/**)`, as job-request.ts writes them) lies in one of `moves`'
 * folders, moved to that folder's new place; any other rule unchanged. The longest folder that holds it wins.
 */
export function moveRulePath(rule: string, moves: ReadonlyArray<readonly [from: string, to: string]>): string {
  const match = /^([A-Za-z_][\w-]*)\(\/\/(.*)\)$/s.exec(rule);
  if (!match) return rule;
  const [, tool, rest = ''] = match;
  const file = `/${rest}`;
  const move = [...moves].sort((a, b) => b[0].length - a[0].length).find(([from]) => file === from || file.startsWith(`${from.replace(/\/+$/, '')}/`));
  if (!move) return rule;
  return `${tool}(/${move[1].replace(/\/+$/, '')}${file.slice(move[0].replace(/\/+$/, '').length)})`;
}

/** `delegate/k3m9qz` for job_20261130T091500Z_k3m9qz: short enough to type, the job's own suffix. */
export function branchForJob(jobId: string): string {
  return `${BRANCH_PREFIX}${jobId.slice(jobId.lastIndexOf('_') + 1)}`;
}

/** How much of a diff one answer carries: it must fit a frame (1 MiB), and a page shows no more. */
export const DIFF_LIMITS = { files: 200, linesPerFile: 400, lines: 2000, lineChars: 300 } as const;

/**
 * `git diff` (patch) as lines per file, in the order `files` (numstat, same options) lists them: each file's
 * headers dropped, then hunks, added, removed and unchanged lines; long lines cut, long files and long diffs cut.
 */
export function parsePatch(patch: string, files: readonly FileChange[]): FileDiff[] {
  const chunks = patch.split(/^diff --git /m).slice(1);
  let budget: number = DIFF_LIMITS.lines;
  return files.slice(0, DIFF_LIMITS.files).map((file, index) => {
    const lines: DiffLine[] = [];
    let cut = false;
    let body = false;
    for (const raw of (chunks[index] ?? '').split('\n')) {
      if (!body) {
        if (raw.startsWith('@@') || raw.startsWith('Binary files')) body = true;
        else continue;
      }
      if (raw === '') continue;
      if (lines.length >= DIFF_LIMITS.linesPerFile || budget <= 0) {
        cut = true;
        break;
      }
      const kind: DiffLine['kind'] = raw.startsWith('@@')
        ? 'hunk'
        : raw.startsWith('+')
          ? 'add'
          : raw.startsWith('-')
            ? 'del'
            : raw.startsWith(' ')
              ? 'ctx'
              : 'note';
      const text = kind === 'hunk' || kind === 'note' ? raw : raw.slice(1);
      lines.push({ kind, text: truncateEnd(text, DIFF_LIMITS.lineChars) });
      budget--;
    }
    return { ...file, lines, cut };
  });
}

/**
 * True only when git could find no repository from `cwd`: neither it nor any folder above holds a `.git` (a work tree's)
 * or a `HEAD` (a bare repository's). The service's git sees no GIT_DIR (git.ts), so these are the only places it looks.
 * Anything else, an unreadable folder included, leaves the answer to git.
 */
async function noRepositoryAbove(cwd: string): Promise<boolean> {
  const absent = (file: string) =>
    lstat(file).then(
      () => false,
      (error: unknown) => ['ENOENT', 'ENOTDIR'].includes(errorCode(error) ?? ''),
    );
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const [noDotGit, noHead] = await Promise.all([absent(path.join(dir, '.git')), absent(path.join(dir, 'HEAD'))]);
    if (!noDotGit || !noHead) return false;
    if (path.dirname(dir) === dir) return true;
  }
}

/**
 * The service's folders a worktree job's file tools are denied, with one way left open: `allowed` (its worktree,
 * which lies inside the data folder). Every folder holding `allowed` is opened one level at a time: its other
 * entries are denied one by one, `known` ones included even before they exist (Claude Code makes its config folder
 * on its first run). Deny rules win over allow rules, so denying the data folder whole would close the worktree.
 */
export async function serviceFoldersToDeny(
  serviceDirs: readonly string[],
  known: readonly string[],
  allowed: string,
): Promise<{ dirs: string[]; files: string[] }> {
  const dirs: string[] = [];
  const files: string[] = [];
  const expand = async (dir: string): Promise<void> => {
    const children = new Map<string, { dir: boolean; file: boolean }>();
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      // A symlink may lead to a folder or a file: deny it as both.
      const link = entry.isSymbolicLink();
      children.set(path.join(dir, entry.name), { dir: entry.isDirectory() || link, file: !entry.isDirectory() || link });
    }
    for (const folder of known) if (path.dirname(folder) === dir && !children.has(folder)) children.set(folder, { dir: true, file: false });
    for (const [child, kind] of [...children].sort(([a], [b]) => a.localeCompare(b))) {
      if (child === allowed) continue;
      if (isInside(allowed, child)) await expand(child);
      else {
        if (kind.dir) dirs.push(child);
        if (kind.file) files.push(child);
      }
    }
  };
  for (const dir of serviceDirs) {
    if (dir === allowed) continue;
    if (isInside(allowed, dir)) await expand(dir);
    else dirs.push(dir);
  }
  return { dirs, files };
}

/** What a folder is to isolation: in a repository (its top, HEAD's commit, whether the tree has uncommitted changes), or not. */
export type RepoProbe = { kind: 'repo'; root: string; head: string | null; dirty: boolean } | { kind: 'none'; reason: string };

export interface WorktreesOptions {
  /** `<data>/worktrees`: one worktree per conversation, named by its first job's id. */
  dir: string;
  log?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

export type { Ending } from './leftover-commit.js';

export class Worktrees {
  readonly dir: string;
  private readonly log: (line: string) => void;
  /** The environment git runs with (tests aim it at a fake HOME). */
  readonly env: NodeJS.ProcessEnv | undefined;
  /** Changes to a repository's worktrees, one at a time per repository (git locks some of them, not all). */
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(options: WorktreesOptions) {
    this.dir = options.dir;
    this.log = options.log ?? (() => undefined);
    this.env = options.env;
  }

  pathFor(jobId: string): string {
    return path.join(this.dir, jobId);
  }

  private git(args: readonly string[], cwd: string, okCodes?: readonly number[]) {
    return git(args, { cwd, ...(okCodes ? { okCodes } : {}), ...(this.env ? { env: this.env } : {}) });
  }

  /** `work` on the repository, while no other change to its worktrees or branches of ours runs (a take: take.ts). */
  exclusive<T>(repo: string, work: () => Promise<T>): Promise<T> {
    return this.locked(repo, work);
  }

  private locked<T>(repo: string, work: () => Promise<T>): Promise<T> {
    const before = this.locks.get(repo) ?? Promise.resolve();
    const next = before.then(work, work);
    const settled = next.catch(() => undefined);
    this.locks.set(repo, settled);
    void settled.then(() => {
      if (this.locks.get(repo) === settled) this.locks.delete(repo);
    });
    return next;
  }

  /** Whether `cwd` is in a git work tree, and if so its top folder, HEAD's commit (null before the first commit) and whether it is dirty. */
  async probe(cwd: string): Promise<RepoProbe> {
    // Most of a start's time outside a repository was spent asking git what a look at the folders says.
    if (await noRepositoryAbove(cwd)) return { kind: 'none', reason: 'not inside a git repository' };
    let root: string;
    try {
      root = (await this.git(['rev-parse', '--show-toplevel'], cwd)).stdout.trim();
    } catch (error) {
      if (error instanceof GitError && error.code === 'ENOENT') return { kind: 'none', reason: 'git is not installed' };
      if (error instanceof GitError && /not a git repository/i.test(error.stderr)) return { kind: 'none', reason: 'not inside a git repository' };
      return { kind: 'none', reason: `not in a git work tree (${errorMessage(error)})` };
    }
    const head = await this.git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], root, [0, 1]);
    // Untracked files count: they are not in the worktree either. --no-optional-locks (git.ts): the index is not rewritten.
    const status = await this.git(['status', '--porcelain', '-z', '--untracked-files=normal', STATUS_SUBMODULES], root);
    return { kind: 'repo', root, head: head.code === 0 ? head.stdout.trim() : null, dirty: status.stdout.length > 0 };
  }

  /** Makes the worktree of a new conversation: a new branch from `base`, checked out at `<dir>/<jobId>`. */
  async create(input: { jobId: string; repo: string; base: string }): Promise<{ worktree: string; branch: string; gitDir: string }> {
    const worktree = this.pathFor(input.jobId);
    return this.locked(input.repo, async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      let branch = branchForJob(input.jobId);
      // The short name is the job's random suffix: should another branch have it, the whole id is unique.
      if (await this.branchTip(input.repo, branch)) branch = `${BRANCH_PREFIX}${input.jobId.replace(/^job_/, '')}`;
      await this.git(['worktree', 'add', '--quiet', '-b', branch, worktree, input.base], input.repo);
      // Read before any delegate runs there: later, the worktree's `.git` file is the delegate's to rewrite.
      const gitDir = (await this.git(['rev-parse', '--absolute-git-dir'], worktree)).stdout.trim();
      return { worktree, branch, gitDir };
    });
  }

  /** The worktree is still there (a folder that git can use), not deleted by hand. */
  async present(isolation: Pick<JobIsolation, 'worktree'>): Promise<boolean> {
    if (!isolation.worktree) return false;
    const [folder, dotGit] = await Promise.all([stat(isolation.worktree).catch(() => null), stat(path.join(isolation.worktree, '.git')).catch(() => null)]);
    return folder !== null && folder.isDirectory() && dotGit !== null;
  }

  /** The branch's last commit, or null when the branch is gone. */
  async branchTip(repo: string, branch: string): Promise<string | null> {
    const tip = await this.git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], repo, [0, 1]);
    return tip.code === 0 ? tip.stdout.trim() : null;
  }

  /**
   * When a job ends: commits whatever its delegate left uncommitted onto the branch (its own commits stay), so the
   * branch holds all of its work. Never throws: what went wrong is said in `problem`. The job's processes must be
   * gone (the supervisor sweeps them first), so nothing writes to the worktree any more.
   */
  async saveToBranch(isolation: JobIsolation, ending: Ending): Promise<JobIsolation> {
    const { repo, worktree, branch, baseCommit, gitDir } = isolation;
    if (isolation.mode !== 'worktree' || !repo || !worktree || !branch || !baseCommit) return isolation;
    const cleared = { ...isolation, savedCommit: null, problem: null };
    try {
      if (!(await this.present(isolation))) {
        await this.pruneRepo(repo);
        const head = await this.branchTip(repo, branch).catch(() => null);
        return {
          ...cleared,
          worktreeState: 'missing',
          headCommit: head,
          changes: head ? countChanges(await this.numstat(repo, baseCommit, head)) : null,
          problem: `The worktree ${worktree} was deleted before the job ended: what the delegate had not committed there is lost; the branch ${branch} holds what was committed.`,
        };
      }
      if (!gitDir) throw new Error('its git folder was not recorded when it was made');
      // The worktree's own git folder, named: a `.git` file the delegate rewrote (to a config of its own, with programs
      // for git to run) is never read.
      const inWorktree = (args: readonly string[], okCodes?: readonly number[]) =>
        this.git([`--git-dir=${gitDir}`, `--work-tree=${worktree}`, ...args], worktree, okCodes);
      await this.clearStaleIndexLock(gitDir);
      // What the delegate left, in one look: the untracked files one by one (what `add --all` would take), and whether
      // anything tracked changed (a submodule: its commit, all `add` stages of it). Renames off: one path per entry.
      const { untracked, tracked } = parseWorktreeStatus(
        (await inWorktree(['status', '--porcelain', '-z', '--untracked-files=all', '--no-renames', STATUS_SUBMODULES])).stdout,
      );
      // Empty files the sandbox made for a command the delegate's kill cut short are not its work.
      const sizes = await Promise.all(
        untracked.map((f) =>
          lstat(path.join(worktree, f)).then(
            (st) => (st.isFile() ? st.size : -1),
            () => -1,
          ),
        ),
      );
      const leftovers = untracked.filter((f, i) => isSandboxPlaceholder(f, sizes[i] ?? -1));
      // Nothing left to commit (a delegate that only read, or committed all itself): no add, no commit.
      let committed = false;
      if (tracked || untracked.length > leftovers.length) {
        await inWorktree(['add', '--all', '--', '.', ...leftovers.map((f) => `:(exclude,literal)${f}`)]);
        // A change add does not stage (a submodule's own edits) leaves nothing to commit.
        committed = (await inWorktree(['diff', '--cached', '--quiet'], [0, 1])).code === 1;
      }
      if (committed) {
        const message = leftoverCommitMessage(ending);
        const identity = ['-c', `user.name=${SERVICE_AUTHOR.name}`, '-c', `user.email=${SERVICE_AUTHOR.email}`];
        await this.git([...identity, `--git-dir=${gitDir}`, `--work-tree=${worktree}`, 'commit', '--quiet', '--no-verify', '-m', message], worktree);
      }
      // Where HEAD is, and on which branch, asked at once: the job waits on its end for these.
      const [tip, on] = await Promise.all([inWorktree(['rev-parse', 'HEAD']), inWorktree(['symbolic-ref', '--quiet', 'HEAD'], [0, 1])]);
      const head = tip.stdout.trim();
      const savedCommit = committed ? head : null;
      const problem =
        on.stdout.trim() === `refs/heads/${branch}`
          ? null
          : `The delegate moved its worktree off ${branch} (to ${on.code === 0 ? on.stdout.trim().replace(/^refs\/heads\//, '') : `commit ${head.slice(0, 12)}`}): its last work is there, not on the branch.`;
      // A branch still at its base changed nothing: no diff to ask git for.
      const changes = countChanges(head === baseCommit ? [] : await this.numstat(repo, baseCommit, head));
      return { ...cleared, savedCommit, headCommit: head, changes, problem };
    } catch (error) {
      this.log(`worktrees: ${ending.jobId}: ${errorMessage(error)}`);
      return { ...cleared, problem: `The service could not commit what the delegate left in ${worktree}: ${errorMessage(error)}. It is still there.` };
    }
  }

  /**
   * A git the delegate's kill cut short leaves the worktree's index locked, and every later `git add` fails. Its
   * processes are gone by now (swept), so the lock is stale.
   */
  private async clearStaleIndexLock(gitDir: string): Promise<void> {
    const file = path.join(gitDir, 'index.lock');
    if (await stat(file).catch(() => null)) {
      this.log(`worktrees: removing the stale ${file} a killed git left behind`);
      await rm(file, { force: true });
    }
  }

  private async numstat(repo: string, from: string, to: string): Promise<FileChange[]> {
    return parseNumstat((await this.git(['diff', '--numstat', '-z', '--no-renames', from, to], repo)).stdout);
  }

  /** What the branch holds against its base, with the commands that show and take it; null when the branch is gone. */
  async changes(isolation: JobIsolation): Promise<Omit<JobChanges, 'runsCode'> | null> {
    const { repo, branch, baseCommit } = isolation;
    if (isolation.mode !== 'worktree' || !repo || !branch || !baseCommit) return null;
    const head = await this.branchTip(repo, branch).catch(() => null);
    if (!head) return null;
    const files = await this.numstat(repo, baseCommit, head);
    const counts = countChanges(files);
    const base = (await this.git(['rev-parse', '--short', baseCommit], repo)).stdout.trim();
    return {
      repo,
      branch,
      baseCommit,
      baseShort: base,
      headCommit: head,
      baseDirty: isolation.baseDirty,
      files: files.slice(0, MAX_CHANGED_FILES),
      totalFiles: counts.files,
      added: counts.added,
      removed: counts.removed,
      commands: branchCommands(base, branch),
      worktree: (await this.present(isolation)) ? isolation.worktree : null,
    };
  }

  /** The branch against its base, file by file and line by line (parsePatch's limits); null when the branch is gone. */
  async diff(isolation: JobIsolation): Promise<{ baseShort: string; files: FileDiff[]; totalFiles: number } | null> {
    const { repo, branch, baseCommit } = isolation;
    if (isolation.mode !== 'worktree' || !repo || !branch || !baseCommit) return null;
    const head = await this.branchTip(repo, branch).catch(() => null);
    if (!head) return null;
    const files = await this.numstat(repo, baseCommit, head);
    // The same options as numstat (so the files come in the same order), as text: no external diff or textconv program.
    const patch = (await this.git(['diff', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', baseCommit, head], repo)).stdout;
    const baseShort = (await this.git(['rev-parse', '--short', baseCommit], repo)).stdout.trim();
    return { baseShort, files: parsePatch(patch, files), totalFiles: files.length };
  }

  /**
   * For history pruning: removes the worktree and its branch only when the branch's work is taken — in another branch
   * by any route: merged, fast-forwarded, cherry-picked, rebased or squashed (worktree-cleanup.ts). `unmerged`: nothing
   * was touched. `kept`: taken, but the worktree has changes of someone's since the job ended (git refuses to remove
   * it), so it stays.
   */
  async removeIfMerged(isolation: Pick<JobIsolation, 'repo' | 'branch' | 'worktree' | 'baseCommit'>): Promise<'removed' | 'unmerged' | 'kept'> {
    const { repo, branch, worktree } = isolation;
    if (!repo || !branch || !worktree) return 'unmerged';
    return this.locked(repo, async () => {
      const { route, tip } = await findTaken(repo, branch, isolation.baseCommit, this.env);
      if (!route || !tip) return 'unmerged';
      if (await this.present(isolation)) {
        // No --force: a worktree someone changed after the job ended is not ours to throw away.
        const removed = await this.git(['worktree', 'remove', worktree], repo).then(
          () => true,
          (error: unknown) => {
            this.log(`worktrees: keeping ${worktree} (its branch is taken, but: ${errorMessage(error)})`);
            return false;
          },
        );
        if (!removed) return 'kept';
      }
      // Deleted only if it still points where it did when it was found taken.
      await this.git(['update-ref', '-d', `refs/heads/${branch}`, tip], repo);
      await this.git(['worktree', 'prune'], repo);
      return 'removed';
    });
  }

  /** On the user's request: removes the worktree (changes in it included) and deletes the branch. */
  async discard(
    isolation: Pick<JobIsolation, 'repo' | 'branch' | 'worktree'>,
  ): Promise<{ removedWorktree: boolean; deletedBranch: boolean; lastCommit: string | null }> {
    const { repo, branch, worktree } = isolation;
    if (!repo || !branch || !worktree) return { removedWorktree: false, deletedBranch: false, lastCommit: null };
    return this.locked(repo, async () => {
      const tip = await this.branchTip(repo, branch).catch(() => null);
      let removedWorktree = false;
      if (await stat(worktree).catch(() => null)) {
        await this.git(['worktree', 'remove', '--force', '--force', worktree], repo).catch(async (error: unknown) => {
          // The repository may be gone, or no longer know the worktree: the folder is ours (under `dir`), so it goes.
          this.log(`worktrees: git could not remove ${worktree} (${errorMessage(error)}); removing the folder`);
          if (path.dirname(worktree) === this.dir) await rm(worktree, { recursive: true, force: true });
        });
        removedWorktree = !(await stat(worktree).catch(() => null));
      }
      await this.pruneRepo(repo);
      let deletedBranch = false;
      if (tip)
        deletedBranch = await this.git(['update-ref', '-d', `refs/heads/${branch}`, tip], repo).then(
          () => true,
          () => false,
        );
      return { removedWorktree, deletedBranch, lastCommit: tip };
    });
  }

  /** `git worktree prune`: forgets worktrees whose folders are gone, so their branches can be checked out again. */
  async pruneRepo(repo: string): Promise<void> {
    await this.git(['worktree', 'prune'], repo).catch((error: unknown) => this.log(`worktrees: git worktree prune in ${repo}: ${errorMessage(error)}`));
  }
}
