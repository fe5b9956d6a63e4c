/**
 * What taking a job's work does, in words (docs/ISOLATION.md, "Taking the work"): each way as the preview says it,
 * and what a take did. Written once, for the CLI (`openrouter-delegate take`) and the Jobs page alike. Pure.
 */
import type { CodeRunningFile, TakePlan, TakeResult, TakeWay } from '../contract/take.js';
import { shellWord } from './shell-word.js';

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
const short = (commit: string) => commit.slice(0, 12);

/** The way's name as a person reads it, capitalised: "Merge", "Squash", "Rebase". */
export const TAKE_WAY_NAMES: Record<TakeWay, string> = { merge: 'Merge', squash: 'Squash', rebase: 'Rebase' };

/** "3 files, +12 −4". */
export function takeFilesText(effect: Pick<TakePlan, 'files' | 'added' | 'removed'>): string {
  return `${plural(effect.files, 'file')}, +${effect.added} −${effect.removed}`;
}

/** A commit message's first line. */
export function subjectOf(message: string | null): string {
  return (message ?? '').split('\n', 1)[0] ?? '';
}

/** What one way would do to `into`, or why it would be refused. */
export function takePlanText(plan: TakePlan, into: string | null): string {
  if (plan.refusal !== null) return `refused: ${plan.refusal}`;
  const branch = into ?? 'your branch';
  const files = takeFilesText(plan);
  switch (plan.how) {
    case 'merge':
      return plan.fastForward
        ? `fast-forward: ${branch} moves to the delegate's ${plural(plan.commits, 'commit')}; ${files}`
        : `a merge commit: ${branch} gets the delegate's ${plural(plan.commits - 1, 'commit')} and the merge; ${files}`;
    case 'squash':
      return `one commit on ${branch}, "${subjectOf(plan.message)}"; ${files}`;
    case 'rebase':
      return plan.fastForward
        ? `nothing to replay: ${branch} fast-forwards to the delegate's ${plural(plan.commits, 'commit')}; ${files}`
        : `the delegate's ${plural(plan.commits, 'commit')} replayed onto ${branch}, which then fast-forwards to them; ${files}`;
  }
}

/** What a take did, what becomes of the job's worktree and branch, and how to undo it: one sentence a line. */
export function takeResultLines(done: TakeResult): string[] {
  const files = takeFilesText(done);
  const did =
    done.how === 'merge'
      ? done.fastForward
        ? `Merged ${done.branch} into ${done.into} by fast-forward: ${done.into} is at ${short(done.after)}, the delegate's ${plural(done.commits, 'commit')}; ${files}.`
        : `Merged ${done.branch} into ${done.into} with a merge commit, ${short(done.after)} (the delegate's ${plural(done.commits - 1, 'commit')} and the merge); ${files}.`
      : done.how === 'squash'
        ? `Squashed ${done.branch} into ${done.into}: one commit, ${short(done.after)} "${subjectOf(done.message)}"; ${files}.`
        : done.fastForward
          ? `Rebased ${done.branch} onto ${done.into}: nothing to replay, ${done.into} fast-forwarded to ${short(done.after)}; ${files}.`
          : `Rebased ${done.branch} onto ${done.into}: its ${plural(done.commits, 'commit')} replayed, ${done.into} fast-forwarded to ${short(done.after)}; ${files}.`;
  const after = done.takenBy
    ? `The cleanup finds its work in ${done.into}, so its worktree and branch go at the first prune ${plural(done.retentionDays, 'day')} after the job ended; \`openrouter-delegate worktrees --remove-taken\` removes them now.`
    : `Its worktree and branch ${done.branch} are kept: the cleanup does not find its work taken.`;
  return [did, after, `Undo: \`git reset --keep ${short(done.before)}\` on ${done.into} in ${done.repo}.`];
}

/** ".envrc (direnv runs it on cd), package.json (postinstall runs on npm install)": at most `max`, then how many more. */
export function runsCodeList(files: readonly CodeRunningFile[], max = Number.POSITIVE_INFINITY): string {
  const shown = files.slice(0, max).map((file) => `${file.path} (${file.reason})`);
  return files.length > shown.length ? `${shown.join(', ')} and ${files.length - shown.length} more` : shown.join(', ');
}

/** The line each surface shows where its reader sees the branch's changes; null when nothing runs code. */
export function runsCodeLine(files: readonly CodeRunningFile[], max = 10): string | null {
  return files.length === 0 ? null : `Runs code when taken: ${runsCodeList(files, max)} — review before taking.`;
}

/** The take that names every file that runs code: `openrouter-delegate take <job> [--squash|--rebase] --yes=a,b`. */
export function takeWithYes(jobId: string, how: TakeWay | null, paths: readonly string[]): string {
  const way = how === null || how === 'merge' ? '' : ` --${how}`;
  return `openrouter-delegate take ${jobId}${way} ${shellWord(`--yes=${paths.join(',')}`)}`;
}
