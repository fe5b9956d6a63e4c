/**
 * Isolation for jobs (docs/ISOLATION.md, docs/ARCHITECTURE.md §4): where a delegation works — a git
 * worktree of its own, or the user's folder in place — decided from the request and the user's setting; a new job's
 * folders and file rules moved into its worktree; what a follow-up inherits; which jobs history pruning must keep;
 * a worktree deleted by hand, noticed; the kept worktrees surveyed and the taken ones removed. The git work itself is
 * worktrees.ts and worktree-cleanup.ts.
 */
import { mkdir, realpath } from 'node:fs/promises';
import { ServiceError, isActive } from '../../../contract/index.js';
import type { IsolationMode, JobIsolation, JobRecord, Settings, WorktreeCleanup } from '../../../contract/index.js';
import type { JobRegistry, LiveJob } from './job-registry.js';
import { isInside } from '../../fs/paths.js';
import { intoWorktree, moveRulePath } from '../git/worktrees.js';
import type { Worktrees } from '../git/worktrees.js';
import { asKept, removeTaken, reportOf, surveyWorktrees } from '../git/worktree-cleanup.js';
import type { NamedWorktree, SurveyedWorktree } from '../git/worktree-cleanup.js';

/** What a first turn will get: a worktree made from `base` in `repo`, or the folder in place and why. */
export type IsolationPlan =
  { mode: 'none'; note: string } | { mode: 'worktree'; repo: string; base: string; dirty: boolean; realCwd: string; realAddDirs: string[] };

const NONE: Omit<JobIsolation, 'mode' | 'note'> = {
  repo: null,
  worktree: null,
  gitDir: null,
  branch: null,
  baseCommit: null,
  baseDirty: false,
  worktreeState: 'present',
  savedCommit: null,
  headCommit: null,
  changes: null,
  problem: null,
};

/** The record of a job that runs in place, saying why. */
export function inPlace(note: string): JobIsolation {
  return { mode: 'none', note, ...NONE };
}

/**
 * The request's isolation, else the user's setting. The setting's `worktree` outside a git repository runs in place
 * (the record says so); asked for explicitly, it is refused there, naming the alternative. A repository without a
 * commit has nothing to make a worktree from: refused either way.
 */
export async function planIsolation(
  worktrees: Worktrees,
  requested: IsolationMode | undefined,
  settings: Settings,
  cwd: string,
  addDirs: readonly string[],
): Promise<IsolationPlan> {
  const mode = requested ?? settings.isolation;
  if (mode === 'none') return { mode: 'none', note: requested ? 'isolation "none" was asked for' : "the user's setting is isolation none" };
  const probe = await worktrees.probe(cwd);
  if (probe.kind === 'none') {
    if (requested === 'worktree') {
      throw new ServiceError(
        'invalid_request',
        `isolation "worktree" needs a git repository, and ${cwd} is ${probe.reason.replace(/^git is not installed$/, 'not usable: git is not installed')}. Pass isolation: "none" to let the delegate work in that folder in place, or delegate from inside a git repository.`,
      );
    }
    return { mode: 'none', note: probe.reason };
  }
  if (probe.head === null) {
    throw new ServiceError(
      'invalid_request',
      `The git repository ${probe.root} has no commit yet, so there is nothing to make the delegate's worktree from. Commit something first, or pass isolation: "none" to let the delegate work in the folder in place.`,
    );
  }
  return {
    mode: 'worktree',
    repo: probe.root,
    base: probe.head,
    dirty: probe.dirty,
    // git names the repository by its real path: the folders are compared the same way.
    realCwd: await realpath(cwd),
    realAddDirs: await Promise.all(addDirs.map((dir) => realpath(dir))),
  };
}

/**
 * Makes a first turn's worktree and moves its folders there: cwd and the add_dirs inside the repository become the
 * same folders in the worktree (made when the tree does not have them: an untracked or ignored folder), the file
 * rules of its allowed_tools follow them; add_dirs outside the repository stay.
 */
export async function placeInWorktree(
  worktrees: Worktrees,
  record: JobRecord,
  plan: Extract<IsolationPlan, { mode: 'worktree' }>,
): Promise<Pick<JobRecord, 'cwd' | 'addDirs' | 'allowedTools' | 'isolation'>> {
  const { worktree, branch, gitDir } = await worktrees.create({ jobId: record.id, repo: plan.repo, base: plan.base });
  const cwd = intoWorktree(plan.realCwd, plan.repo, worktree);
  const addDirs = record.addDirs.map((dir, i) => {
    const real = plan.realAddDirs[i] ?? dir;
    return isInside(real, plan.repo) ? intoWorktree(real, plan.repo, worktree) : dir;
  });
  for (const dir of [cwd, ...addDirs]) if (isInside(dir, worktree)) await mkdir(dir, { recursive: true });
  const moves = [[record.cwd, cwd] as const, ...record.addDirs.map((dir, i) => [dir, addDirs[i] ?? dir] as const)].filter(([from, to]) => from !== to);
  return {
    cwd,
    addDirs,
    allowedTools: record.allowedTools.map((rule) => moveRulePath(rule, moves)),
    isolation: { ...NONE, mode: 'worktree', note: null, repo: plan.repo, worktree, gitDir, branch, baseCommit: plan.base, baseDirty: plan.dirty },
  };
}

/** A follow-up's isolation: its conversation's worktree and branch, nothing yet of its own end. */
export function followOn(previous: JobIsolation | undefined): JobIsolation | undefined {
  if (!previous) return undefined;
  return { ...previous, savedCommit: null, headCommit: null, changes: null, problem: null };
}

/** A follow-up continues in its conversation's worktree: refused, saying what became of it, when it is gone. */
export async function assertWorktreeUsable(worktrees: Worktrees, isolation: JobIsolation | undefined): Promise<void> {
  if (isolation?.mode !== 'worktree') return;
  const gone =
    isolation.worktreeState === 'merged' || isolation.worktreeState === 'discarded'
      ? `was removed (its branch ${isolation.branch ?? ''} was ${isolation.worktreeState})`
      : (await worktrees.present(isolation))
        ? null
        : `${isolation.worktree ?? ''} was deleted; its branch ${isolation.branch ?? ''} holds what was committed`;
  if (gone === null) return;
  throw new ServiceError('invalid_request', `This conversation's worktree ${gone}, so it cannot continue there. Start a new delegation instead.`);
}

/**
 * Notices worktrees deleted by hand among `jobs` (finished ones: a running job's end notices its own): their records
 * say so, and git forgets them (`git worktree prune`), so their branches can be checked out again.
 */
export async function noticeMissingWorktrees(registry: JobRegistry, jobs: readonly LiveJob[]): Promise<void> {
  const repos = new Set<string>();
  for (const job of jobs) {
    const isolation = job.record.isolation;
    if (isolation?.mode !== 'worktree' || isolation.worktreeState !== 'present' || isActive(job.record.state)) continue;
    if (await registry.worktrees.present(isolation)) continue;
    job.record.isolation = {
      ...isolation,
      worktreeState: 'missing',
      problem: `The worktree ${isolation.worktree ?? ''} was deleted by hand; the branch ${isolation.branch ?? ''} holds what was committed.`,
    };
    registry.log(`jobs: ${job.record.id}: its worktree ${isolation.worktree ?? ''} is gone`);
    if (isolation.repo) repos.add(isolation.repo);
    await registry.persist(job);
    registry.emit(job);
  }
  for (const repo of repos) await registry.worktrees.pruneRepo(repo);
}

/**
 * History pruning, worktree by worktree (JobStore.prune asks): when every turn of a conversation is due, its worktree
 * is removed if its branch is merged into another branch; otherwise the turns are kept, so the work stays reachable
 * and can still be discarded. Turns of a conversation whose later turns are not due go alone. Returns the ids to keep.
 */
export async function jobsKeptFromPrune(worktrees: Worktrees, doomed: readonly JobRecord[], all: readonly JobRecord[]): Promise<Set<string>> {
  const due = new Set(doomed.map((record) => record.id));
  const conversations = new Map<string, JobRecord[]>();
  for (const record of all) {
    const worktree = record.isolation?.mode === 'worktree' ? record.isolation.worktree : null;
    if (worktree) conversations.set(worktree, [...(conversations.get(worktree) ?? []), record]);
  }
  const spare = new Set<string>();
  for (const records of conversations.values()) {
    if (!records.every((record) => due.has(record.id))) continue;
    const latest = records.reduce((a, b) => (b.turn > a.turn ? b : a));
    const isolation = latest.isolation;
    if (!isolation || isolation.worktreeState === 'merged' || isolation.worktreeState === 'discarded') continue;
    const outcome = await worktrees.removeIfMerged(isolation).catch(() => 'unmerged' as const);
    if (outcome !== 'removed') for (const record of records) spare.add(record.id);
  }
  return spare;
}

/** Each conversation's worktree, by path: its latest turn's isolation, and whether a turn of it is queued or running. */
function namedWorktrees(jobs: readonly LiveJob[]): Map<string, NamedWorktree> {
  const named = new Map<string, NamedWorktree>();
  for (const { record } of jobs) {
    const isolation = record.isolation;
    if (isolation?.mode !== 'worktree' || !isolation.worktree) continue;
    const known = named.get(isolation.worktree);
    const active = (known?.active ?? false) || isActive(record.state);
    const latest = !known || record.turn > known.turn;
    named.set(isolation.worktree, latest ? { jobId: record.id, isolation, active, turn: record.turn } : { ...known, active });
  }
  return named;
}

/**
 * The kept worktrees under the data folder, each with what removing it needs: job, branch, taken or not, orphans, disk
 * (`worktrees.list`, through kept-survey.ts, which keeps the numbers for the job list).
 */
export function surveyAll(registry: JobRegistry): Promise<SurveyedWorktree[]> {
  const { worktrees } = registry;
  return surveyWorktrees(worktrees.dir, namedWorktrees(registry.all()), worktrees.env);
}

/**
 * `worktrees.removeTaken`: removes the worktrees whose work is taken or discarded, orphans too, and says so on every
 * turn of their conversations (merged, or discarded), as history pruning does; the rest are kept, each with why.
 */
export async function removeTakenWorktrees(registry: JobRegistry): Promise<WorktreeCleanup> {
  const { worktrees } = registry;
  const jobs = registry.all();
  const { removed, kept } = await removeTaken(worktrees, await surveyWorktrees(worktrees.dir, namedWorktrees(jobs), worktrees.env));
  for (const w of removed) {
    registry.log(`jobs: removed the worktree ${w.worktree} (${w.state}${w.takenBy ? `, its work ${w.takenBy} into ${w.into ?? '?'}` : ''})`);
    for (const turn of jobs.filter((j) => j.record.isolation?.worktree === w.worktree)) {
      if (turn.record.isolation) turn.record.isolation = { ...turn.record.isolation, worktreeState: w.state === 'discarded' ? 'discarded' : 'merged' };
      await registry.persist(turn);
      registry.emit(turn);
    }
  }
  const done = reportOf(worktrees.dir, removed);
  return { removed: done.worktrees, kept: kept.map((k) => ({ ...asKept(k), why: k.why })), freedBytes: done.totalBytes };
}
