/**
 * Taking a finished worktree job's work (docs/ISOLATION.md, "Taking the work"), the job's side: which jobs may be
 * taken at all (a worktree job whose conversation has ended, whose worktree and branch are as it left them), what
 * the commits are made from (the conversation's task), what each way would do, and the take itself under the
 * repository's lock. The git side is take-git.ts.
 */
import { ServiceError, isActive, nextCall } from '../../../contract/index.js';
import type { JobIsolation, TakePlan, TakePreview, TakeResult, TakeWay } from '../../../contract/index.js';
import type { NextCall } from '../../../contract/index.js';
import { TAKE_WAYS } from '../../../contract/index.js';
import { runsCodeList, takeWithYes } from '../../../common/take-words.js';
import type { CodeRunningFile } from '../git/code-running-files.js';
import type { JobRegistry, LiveJob } from './job-registry.js';
import { BranchTake, TakeRefused } from '../git/take-git.js';
import type { GitRun, PlannedWay, TakeSource } from '../git/take-git.js';

/** Why a job cannot be taken at all, with its error code (and the call that helps, if one does). */
interface JobRefusal {
  code: 'invalid_request' | 'conflict';
  message: string;
  next?: NextCall;
}

type Takeable = { source: TakeSource; isolation: JobIsolation } | { refusal: JobRefusal; isolation: JobIsolation | undefined };

/** The subject line of a squash commit: the task, as the job list shows it, cut to what a log line holds. */
export function taskLine(preview: string, jobId: string): string {
  const line = preview.replace(/\s+/g, ' ').trim();
  if (line === '') return `Work of delegate job ${jobId}`;
  if (line.length <= 72) return line;
  const cut = line.slice(0, 71);
  const atWord = cut.lastIndexOf(' ');
  return `${(atWord > 40 ? cut.slice(0, atWord) : cut).replace(/[\s,;:.…]+$/, '')}…`;
}

/**
 * Why a take is refused for the files of its branch that run code once taken (code-running-files.ts), or null: the
 * take must name exactly those (`runsCodeConfirmed`), so a bare yes, a subset or other files are not enough. Says
 * which, how to review them, and the command that takes it.
 */
export function runsCodeRefusal(
  job: { jobId: string; how: TakeWay; repo: string; branch: string; base: string },
  flagged: readonly CodeRunningFile[],
  confirmed: readonly string[] | undefined,
): string | null {
  const named = new Set(confirmed ?? []);
  const paths = flagged.map((file) => file.path);
  const missing = flagged.filter((file) => !named.has(file.path));
  const extra = [...named].filter((name) => !paths.includes(name));
  if (missing.length === 0 && extra.length === 0) return null;
  if (flagged.length === 0) return `--yes names ${extra.join(', ')}, but ${job.branch} has no file that runs code once taken: take it without --yes.`;
  const what =
    confirmed === undefined
      ? `${job.branch} (job ${job.jobId}) has files that run code on your machine once taken: ${runsCodeList(flagged)}.`
      : [
          missing.length > 0 ? `--yes does not name ${runsCodeList(missing)}, which run${missing.length === 1 ? 's' : ''} code once taken.` : '',
          extra.length > 0 ? `--yes names ${extra.join(', ')}, which ${job.branch} does not have as files that run code.` : '',
        ]
          .filter(Boolean)
          .join(' ');
  const review = `git diff ${job.base.slice(0, 7)}..${job.branch} -- ${paths.join(' ')}`;
  return `${what} Review them (\`${review}\` in ${job.repo}), then take it naming each one: \`${takeWithYes(job.jobId, job.how, paths)}\`.`;
}

/** What a take checks of the tip it would take, under the repository's lock: runsCodeRefusal, thrown as TakeRefused. */
export function vetRunsCode(
  taker: BranchTake,
  job: { jobId: string; how: TakeWay; repo: string; branch: string; base: string },
  confirmed?: readonly string[],
) {
  return async (tip: string): Promise<void> => {
    const refusal = runsCodeRefusal(job, await taker.runsCode(tip), confirmed);
    if (refusal) throw new TakeRefused(refusal);
  };
}

/** Whether the job may be taken, and if so what from: every turn of its conversation shares its worktree and branch. */
async function takeable(registry: JobRegistry, job: LiveJob): Promise<Takeable> {
  const { record } = job;
  const isolation = record.isolation;
  if (isolation?.mode !== 'worktree' || !isolation.repo || !isolation.worktree || !isolation.branch || !isolation.baseCommit) {
    return {
      isolation,
      refusal: {
        code: 'invalid_request',
        message: `Job ${record.id} worked in ${record.cwd} in place: its changes are in your files already, and it has no branch to take.`,
      },
    };
  }
  const turns = registry.turnsOf(isolation.worktree);
  const refuse = (message: string, next?: NextCall): Takeable => ({ isolation, refusal: { code: 'conflict', message, ...(next ? { next } : {}) } });
  const active = turns.find((j) => isActive(j.record.state));
  if (active)
    return refuse(
      `Job ${active.record.id} of this conversation is ${active.record.state}: let it end (or cancel it), then take its work.`,
      nextCall('jobs.cancel', { jobId: active.record.id }),
    );
  const latest = turns.at(-1)?.record.isolation ?? isolation;
  const { repo, branch, baseCommit, worktree } = isolation;
  if (latest.worktreeState === 'discarded')
    return refuse(`The work of job ${record.id} was discarded: its worktree and branch ${branch} are gone; there is nothing to take.`);
  if (latest.worktreeState === 'merged')
    return refuse(`The work of job ${record.id} was taken already: its worktree and branch ${branch} were removed once its work was in another branch.`);
  const byHand = `take it with git yourself if it is what you want (\`git diff ${baseCommit.slice(0, 7)}..${branch}\`, then \`git merge ${branch}\`, in ${repo}), or discard it (\`openrouter-delegate discard ${record.id}\`)`;
  if (latest.worktreeState === 'missing' || !(await registry.worktrees.present(isolation)))
    return refuse(
      `The worktree ${worktree} of job ${record.id} was deleted by hand, so what its delegate had not committed there is lost and ${branch} may not hold all of its work: ${byHand}.`,
    );
  if (latest.problem) return refuse(`${latest.problem} So ${branch} may not hold all of the delegate's work: ${byHand}.`);
  const first = turns[0]?.record ?? record;
  const settings = registry.settings();
  return {
    isolation,
    source: {
      repo,
      branch,
      base: baseCommit,
      task: taskLine(first.promptPreview, first.id),
      credit: `Delegated to ${first.model} (OpenRouter Delegate job ${first.id}${turns.length > 1 ? `, ${turns.length} turns` : ''})`,
      retentionDays: settings.retentionDays,
    },
  };
}

/** The wire form of a planned way. */
function asPlan({ tree: _tree, paths: _paths, replayed: _replayed, ...plan }: PlannedWay): TakePlan {
  return plan;
}

/** What each way would do, or why it would be refused (`jobs.takePreview`). Touches nothing of the user's. */
export async function previewTake(registry: JobRegistry, jobId: string, run?: GitRun): Promise<TakePreview> {
  const job = registry.find(jobId);
  const found = await takeable(registry, job);
  const base = { jobId: job.record.id, repo: found.isolation?.repo ?? null, branch: found.isolation?.branch ?? null };
  if ('refusal' in found) {
    const ways = TAKE_WAYS.map((how) => ({
      how,
      refusal: found.refusal.message,
      commits: 0,
      fastForward: false,
      files: 0,
      added: 0,
      removed: 0,
      message: null,
    }));
    return { ...base, into: null, branchCommits: 0, ways, runsCode: [] };
  }
  const taker = new BranchTake(found.source, { env: registry.worktrees.env, ...(run ? { run } : {}) });
  const survey = await taker.survey();
  const runsCode = survey.tip ? await taker.runsCode(survey.tip) : [];
  return { ...base, into: survey.place?.into ?? null, branchCommits: survey.branchCommits, ways: survey.ways.map(asPlan), runsCode };
}

/**
 * Takes the job's branch into the repository's current branch by `how` (`jobs.take`), under the repository's lock:
 * only when it can be done cleanly, and `confirmed` names exactly the files of the tip taken that run code (found under
 * the lock, so a branch changed since the preview is refused); else refused with nothing touched. The branch and worktree stay; once the work is
 * in the user's branch, history pruning removes them past retentionDays (worktree-cleanup.ts finds it taken).
 */
export async function takeJob(registry: JobRegistry, jobId: string, how: TakeWay, confirmed?: readonly string[], run?: GitRun): Promise<TakeResult> {
  const job = registry.find(jobId);
  const found = await takeable(registry, job);
  if ('refusal' in found) {
    const { code, message, next } = found.refusal;
    throw new ServiceError(code, message, next ? { next } : undefined);
  }
  const { source } = found;
  const taker = new BranchTake(source, { env: registry.worktrees.env, ...(run ? { run } : {}) });
  const done = await registry.worktrees
    .exclusive(source.repo, () => taker.take(how, vetRunsCode(taker, { jobId: job.record.id, how, ...source }, confirmed)))
    .catch((error: unknown) => {
      if (error instanceof TakeRefused) throw new ServiceError('conflict', error.message);
      throw error;
    });
  registry.log(`jobs: ${job.record.id}: took ${source.branch} into ${done.into} by ${how} (${done.before.slice(0, 12)} → ${done.after.slice(0, 12)})`);
  const { commits, fastForward, files, added, removed, message } = done.plan;
  return {
    jobId: job.record.id,
    how,
    repo: source.repo,
    branch: source.branch,
    into: done.into,
    before: done.before,
    after: done.after,
    commits,
    fastForward,
    files,
    added,
    removed,
    message,
    takenBy: done.taken.route,
    retentionDays: source.retentionDays,
    worktree: found.isolation.worktree,
  };
}
