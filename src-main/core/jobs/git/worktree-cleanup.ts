/**
 * Cleanup that knows a squash (docs/ISOLATION.md, "Kept until you decide"): whether a delegate's branch is taken —
 * every change on it is in another local branch by some route (merge, fast-forward, cherry-pick, rebase, squash) — how
 * much disk the kept worktrees take, and which worktrees under the data folder no job record names any more (orphans).
 * Everything here reads; removing is worktrees.ts's. Runs the real `git` (git.ts).
 */
import { lstat, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { JobIsolation, KeptWorktree, TAKEN_ROUTES, WorktreeReport } from '../../../contract/index.js';
import { git } from './git.js';

/** How a branch's work reached another branch (TAKEN_ROUTES), or `null`: some of it is in no other branch. */
export type TakenRoute = (typeof TAKEN_ROUTES)[number];
export interface Taken {
  route: TakenRoute | null;
  /** The branch holding it. */
  into: string | null;
  /** The branch's last commit when it was looked at (null: the branch is gone). */
  tip: string | null;
}

/** Bounds, so a repository with thousands of branches or commits is not walked whole twice a day. */
export const CLEANUP_LIMITS = { branches: 50, commitsSinceBase: 500, entries: 200_000 } as const;

type Git = (args: readonly string[], input?: string) => Promise<{ stdout: string; code: number }>;

function gitIn(repo: string, env?: NodeJS.ProcessEnv): Git {
  return (args, input) => git(args, { cwd: repo, ...(env ? { env } : {}), ...(input !== undefined ? { input } : {}) });
}

/**
 * Another delegate's branch never holds a job's work for it: two delegates that made the same change (a fan-out of one
 * task) would each count as taken by the other, and both be removed with the work in neither of the user's branches.
 */
const DELEGATE_BRANCHES = 'refs/heads/delegate/';

/** The same diff options for the branch's whole diff and the other branch's commits, so equal changes get equal patch ids. */
const PATCH_OPTIONS = ['--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', '--full-index', '--binary'];

/** `git patch-id --stable` output: "<patch-id> <commit>" per line; the patch ids. */
function patchIds(output: string): string[] {
  return output
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[0] ?? '')
    .filter((id) => /^[0-9a-f]{40,64}$/.test(id));
}

/**
 * Whether every change of `branch` (its commits since `base`; without a base, since where it meets each other branch)
 * is in another local branch: its last commit is in one (merge, fast-forward), or each of its commits' patches is
 * (`git cherry`: cherry-pick, rebase), or its whole diff is one commit's patch there (a squash), or else merging it
 * there would change nothing (its changes are all there, applied where the lines around them had moved, which
 * changes their patch ids). Other branches are tried a bounded number of times; whatever cannot be shown taken is not.
 */
export async function findTaken(repo: string, branch: string, base: string | null, env?: NodeJS.ProcessEnv): Promise<Taken> {
  const run = gitIn(repo, env);
  const tipped = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { cwd: repo, okCodes: [0, 1], ...(env ? { env } : {}) });
  if (tipped.code !== 0) return { route: null, into: null, tip: null };
  const tip = tipped.stdout.trim();
  const others = (await run(['for-each-ref', '--format=%(refname)', 'refs/heads/'])).stdout
    .split('\n')
    .map((ref) => ref.trim())
    .filter((ref) => ref && ref !== `refs/heads/${branch}` && !ref.startsWith(DELEGATE_BRANCHES))
    .slice(0, CLEANUP_LIMITS.branches);
  const holders = (await run(['for-each-ref', '--contains', tip, '--format=%(refname)', 'refs/heads/'])).stdout
    .split('\n')
    .map((ref) => ref.trim())
    .filter((ref) => ref && ref !== `refs/heads/${branch}` && !ref.startsWith(DELEGATE_BRANCHES));
  const short = (ref: string) => ref.replace(/^refs\/heads\//, '');
  if (holders[0]) return { route: 'merged', into: short(holders[0]), tip };
  // The branch's whole diff from each starting point, as one patch id: computed once, not once per branch.
  const wholes = new Map<string, Promise<string | undefined>>();
  const wholeFrom = (from: string) => {
    if (!wholes.has(from))
      wholes.set(
        from,
        run(['diff', ...PATCH_OPTIONS, from, tip]).then(async (diff) => patchIds((await run(['patch-id', '--stable'], diff.stdout)).stdout)[0]),
      );
    return wholes.get(from) as Promise<string | undefined>;
  };
  for (const other of others) {
    const from = base ?? (await mergeBase(run, other, tip));
    if (!from) continue;
    if (await allPicked(run, other, tip, from)) return { route: 'picked', into: short(other), tip };
    if (await squashedInto(run, other, from, await wholeFrom(from))) return { route: 'squashed', into: short(other), tip };
    if (await appliedIn(run, other, tip, from)) return { route: 'applied', into: short(other), tip };
  }
  return { route: null, into: null, tip };
}

async function mergeBase(run: Git, a: string, b: string): Promise<string | null> {
  const found = await run(['merge-base', a, b]).catch(() => null);
  return found?.stdout.trim() || null;
}

/** `git cherry <other> <tip> <base>`: "-" for a commit whose patch `other` has; every commit "-" is every commit taken. */
async function allPicked(run: Git, other: string, tip: string, base: string): Promise<boolean> {
  const lines = (await run(['cherry', other, tip, base]).catch(() => ({ stdout: '+' }))).stdout.split('\n').filter((line) => line.trim());
  return lines.length > 0 && lines.every((line) => line.startsWith('-'));
}

/** The branch's whole diff since `base`, as one patch id, among the patch ids of `other`'s commits since `base`. */
async function squashedInto(run: Git, other: string, base: string, whole: string | undefined): Promise<boolean> {
  if (!whole) return false;
  const log = await run(['log', '-p', ...PATCH_OPTIONS, '--no-merges', `--max-count=${CLEANUP_LIMITS.commitsSinceBase}`, `${base}..${other}`]);
  if (!log.stdout) return false;
  return patchIds((await run(['patch-id', '--stable'], log.stdout)).stdout).includes(whole);
}

/**
 * Merging `tip` into `other` would change nothing: `git merge-tree --write-tree` (git ≥ 2.38; older, never) merges
 * cleanly to `other`'s own tree. Only for a branch that holds the base: one from before it cannot have taken the work.
 */
async function appliedIn(run: Git, other: string, tip: string, base: string): Promise<boolean> {
  const holdsBase = await run(['merge-base', '--is-ancestor', base, other]).then(
    () => true,
    () => false,
  );
  if (!holdsBase) return false;
  const merged = await run(['merge-tree', '--write-tree', '--no-messages', other, tip]).catch(() => null);
  const tree = merged?.stdout.split('\n')[0]?.trim();
  if (!tree) return false;
  const own = await run(['rev-parse', '--verify', '--quiet', `${other}^{tree}`]).catch(() => null);
  return own?.stdout.trim() === tree;
}

/** A folder's apparent size: files' sizes, symlinks not followed, `.git` entries skipped, at most `limit` entries read. */
export async function folderSize(dir: string, limit: number = CLEANUP_LIMITS.entries): Promise<{ bytes: number; complete: boolean }> {
  let bytes = 0;
  let seen = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop() ?? dir;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.name === '.git') continue;
      if (++seen > limit) return { bytes, complete: false };
      const file = path.join(current, entry.name);
      const info = await lstat(file).catch(() => null);
      if (!info) continue;
      if (info.isDirectory()) pending.push(file);
      else bytes += info.size;
    }
  }
  return { bytes, complete: true };
}

/** What an orphan's `.git` file says: its repository and branch, read as files (never through git's config there). */
export interface WorktreeOrigin {
  /** The repository's main folder (or its git folder, for a bare one): where git runs for it. */
  repo: string;
  branch: string | null;
}

/**
 * The repository and branch of a worktree folder no job names, from its `.git` file — only when git's own record of
 * that worktree (`<git dir>/worktrees/<name>/gitdir`) points back at it, so a `.git` file a delegate rewrote cannot
 * aim the cleanup at another repository.
 */
export async function worktreeOrigin(worktree: string): Promise<WorktreeOrigin | null> {
  const dotGit = await readFile(path.join(worktree, '.git'), 'utf8').catch(() => null);
  const adminDir = /^gitdir: (.+)$/m.exec(dotGit ?? '')?.[1]?.trim();
  if (!adminDir || !path.isAbsolute(adminDir)) return null;
  const back = (await readFile(path.join(adminDir, 'gitdir'), 'utf8').catch(() => '')).trim();
  if (path.resolve(back) !== path.resolve(worktree, '.git')) return null;
  const common = (await readFile(path.join(adminDir, 'commondir'), 'utf8').catch(() => '')).trim();
  const gitDir = path.resolve(adminDir, common || '../..');
  const head = (await readFile(path.join(adminDir, 'HEAD'), 'utf8').catch(() => '')).trim();
  const branch = /^ref: refs\/heads\/(.+)$/.exec(head)?.[1] ?? null;
  return { repo: path.basename(gitDir) === '.git' ? path.dirname(gitDir) : gitDir, branch };
}

/** The folders under `dir` (`<data>/worktrees`) that no job record names: worktrees whose job is gone. */
export async function findOrphans(dir: string, named: ReadonlySet<string>): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(dir, entry.name))
    .filter((folder) => !named.has(folder))
    .sort();
}

/** What the survey needs of a conversation's worktree: its latest turn's isolation, and whether a turn is queued or running. */
export interface NamedWorktree {
  jobId: string;
  isolation: Pick<JobIsolation, 'repo' | 'worktree' | 'branch' | 'baseCommit' | 'worktreeState'>;
  active: boolean;
  turn: number;
}

/** A kept worktree as listed, with what removing it needs. */
export interface SurveyedWorktree extends KeptWorktree {
  baseCommit: string | null;
  active: boolean;
}

/**
 * Every folder under `dir` (`<data>/worktrees`): the conversation that names it (`named`, by worktree path) or none
 * (an orphan, its repository and branch read from git's own files), whether its work is taken, and its size.
 */
export async function surveyWorktrees(dir: string, named: ReadonlyMap<string, NamedWorktree>, env?: NodeJS.ProcessEnv): Promise<SurveyedWorktree[]> {
  const folders = (await readdir(dir, { withFileTypes: true }).catch(() => []))
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(dir, entry.name));
  const surveyed: SurveyedWorktree[] = [];
  for (const worktree of folders.sort()) {
    const job = named.get(worktree);
    const origin = job ? { repo: job.isolation.repo, branch: job.isolation.branch } : await worktreeOrigin(worktree);
    const baseCommit = job?.isolation.baseCommit ?? null;
    const taken: Taken =
      origin?.repo && origin.branch && job?.isolation.worktreeState !== 'discarded'
        ? await findTaken(origin.repo, origin.branch, baseCommit, env).catch(() => ({ route: null, into: null, tip: null }))
        : { route: null, into: null, tip: null };
    // A branch still at the commit its job began from holds no work: "no changes", not "taken" (its tip is in the branch it
    // came from, which findTaken reads as merged).
    const unchanged = job !== undefined && baseCommit !== null && taken.tip === baseCommit;
    const size = await folderSize(worktree);
    surveyed.push({
      worktree,
      jobId: job?.jobId ?? null,
      repo: origin?.repo ?? null,
      branch: origin?.branch ?? null,
      state: !job ? 'orphan' : job.isolation.worktreeState === 'discarded' ? 'discarded' : unchanged ? 'unchanged' : taken.route ? 'taken' : 'untaken',
      takenBy: unchanged ? null : taken.route,
      into: unchanged ? null : taken.into,
      bytes: size.bytes,
      sizeComplete: size.complete,
      baseCommit,
      active: job?.active ?? false,
    });
  }
  return surveyed;
}

/** The wire form: what removing needs left out. */
export function asKept({ baseCommit: _base, active: _active, ...kept }: SurveyedWorktree): KeptWorktree {
  return kept;
}

export function reportOf(dir: string, surveyed: readonly SurveyedWorktree[]): WorktreeReport {
  return { dir, worktrees: surveyed.map(asKept), totalBytes: surveyed.reduce((sum, w) => sum + w.bytes, 0) };
}

/** Why a worktree is not removed by `worktrees --remove-taken`, or null when it may go. */
export function keepReason(w: SurveyedWorktree): string | null {
  if (w.active) return `a turn of ${w.jobId ?? 'its job'} is queued or running`;
  if (w.state === 'discarded' || w.state === 'unchanged' || w.takenBy) return null;
  if (w.state === 'untaken' && w.jobId)
    return `commits on ${w.branch ?? 'its branch'} are in no other branch: take them (e.g. \`git merge ${w.branch ?? ''}\` in ${w.repo ?? 'the repository'}), or throw them away with \`openrouter-delegate discard ${w.jobId}\``;
  if (!w.repo || !w.branch)
    return `git does not know it as a worktree on a branch, so what it holds cannot be checked: look, and delete the folder by hand if nothing in it is needed`;
  return `its branch ${w.branch} in ${w.repo} has work in no other branch: merge it, or remove it by hand (\`git worktree remove --force ${w.worktree}\` and \`git branch -D ${w.branch}\` there)`;
}

/** What removing a taken worktree asks of the worktrees (worktrees.ts's Worktrees, which imports this file). */
export interface TakenRemover {
  discard(isolation: Pick<JobIsolation, 'repo' | 'branch' | 'worktree'>): Promise<{ removedWorktree: boolean }>;
  removeIfMerged(isolation: Pick<JobIsolation, 'repo' | 'branch' | 'worktree' | 'baseCommit'>): Promise<'removed' | 'unmerged' | 'kept'>;
}

/**
 * `worktrees --remove-taken`: removes each surveyed worktree whose work is taken (checked again under the repository's
 * lock, as pruning does) or whose job was discarded; keeps the rest, saying why. Never one with work in no other branch.
 */
export async function removeTaken(
  worktrees: TakenRemover,
  surveyed: readonly SurveyedWorktree[],
): Promise<{ removed: SurveyedWorktree[]; kept: Array<SurveyedWorktree & { why: string }> }> {
  const removed: SurveyedWorktree[] = [];
  const kept: Array<SurveyedWorktree & { why: string }> = [];
  for (const w of surveyed) {
    const why = keepReason(w);
    if (why !== null) {
      kept.push({ ...w, why });
      continue;
    }
    const isolation = { repo: w.repo, branch: w.branch, worktree: w.worktree, baseCommit: w.baseCommit };
    if (w.state === 'discarded') {
      const done = await worktrees.discard(isolation).catch(() => null);
      if (done?.removedWorktree) removed.push(w);
      else kept.push({ ...w, why: 'git could not remove it (see the service log)' });
      continue;
    }
    const outcome = await worktrees.removeIfMerged(isolation).catch(() => 'failed' as const);
    if (outcome === 'removed') removed.push(w);
    else
      kept.push({
        ...w,
        why:
          outcome === 'kept'
            ? 'it has changes made after its job ended (git refuses to remove it): look, then `git worktree remove --force` it'
            : outcome === 'unmerged'
              ? 'its work is no longer in another branch'
              : 'git could not remove it (see the service log)',
      });
  }
  return { removed, kept };
}
