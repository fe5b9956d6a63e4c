/**
 * How the Jobs page shows a job's verify commands (docs/VERIFY.md): each command's end and time, the one-line state
 * before they have judged anything, and a fan-out's Verify column and best candidate. The words follow the bridge's
 * (src-bridge/render/verify-lines.ts), so the page and the parent model read the same. Pure functions of contract
 * data, tested in tests/renderer/verify.test.ts.
 */
import { lastOutputLine, verifyEndText, verifyTimeText } from '../../src-main/common/verify-words.js';
import type { GroupMember, JobGroup, JobVerify, VerifyRun } from '../../src-main/contract/index.js';
import { isActiveState, plural } from './jobs.js';

export { lastOutputLine, verifyEndText, verifyTimeText };

/** A command's row, after its mark and the command: its time, and how it failed: "1.2 s", "exit 1, 0.5 s", "timed out, 10 min". */
export function verifyRunText(run: Pick<VerifyRun, 'ok' | 'exitCode' | 'signal' | 'timedOut' | 'ms'>): string {
  return run.ok ? verifyTimeText(run.ms) : `${verifyEndText(run)}, ${verifyTimeText(run.ms)}`;
}

/** The mark of a command or a tally, and the word a screen reader says for it (the mark alone is not enough). */
export function passMark(ok: boolean): { mark: '✓' | '✗'; word: 'Passed' | 'Failed'; tone: 'ok' | 'fail' } {
  return ok ? { mark: '✓', word: 'Passed', tone: 'ok' } : { mark: '✗', word: 'Failed', tone: 'fail' };
}

/**
 * The one line that stands for the commands before (or instead of) their runs; null once they judged the branch
 * (passed or failed: each command has its row then).
 */
export function verifyStateLine(verify: Pick<JobVerify, 'outcome' | 'note'>): string | null {
  switch (verify.outcome) {
    case 'pending':
      return 'Runs on its branch when its turn ends.';
    case 'running':
      return 'Running…';
    case 'skipped':
    case 'interrupted':
      return `Not run: ${(verify.note ?? 'the service stopped while they ran.').replace(/^Not run: /, '')}`;
    case 'cancelled':
      return 'Cancelled before they finished.';
    default:
      return null;
  }
}

/** The note beside a judged outcome (a changed lockfile …); a skipped or interrupted run's note is its state line already. */
export function verifyNote(verify: Pick<JobVerify, 'outcome' | 'note'>): string | null {
  return verify.outcome === 'passed' || verify.outcome === 'failed' ? verify.note : null;
}

/** The section's lead once the commands judged the branch: "1 of 2 passed, on a clean checkout of its branch."; null before. */
export function verifyLead(verify: Pick<JobVerify, 'outcome' | 'runs' | 'commands'>): string | null {
  if (verify.outcome !== 'passed' && verify.outcome !== 'failed') return null;
  return `${verify.runs.filter((run) => run.ok).length} of ${verify.commands.length} passed, on a clean checkout of its branch.`;
}

/** The words before the flags' list. */
export const FLAGS_INTRO = 'Its branch changes what judges it, so a pass proves less:';

/** A fix round's turn says so: "This turn is fix round 1, started with its previous turn's failure."; null for the delegation's own. */
export function verifyRoundText(verify: Pick<JobVerify, 'round'>): string | null {
  return verify.round > 0 ? `This turn is fix round ${verify.round}, started with its previous turn's failure.` : null;
}

/** The words before the link to the fix round this failure started: "Fix round 1 started with the failure:". */
export function fixRoundIntro(verify: Pick<JobVerify, 'round'>): string {
  return `Fix round ${verify.round + 1} started with the failure:`;
}

type MemberVerify = NonNullable<GroupMember['verify']>;

/**
 * A fan-out member's Verify cell: "✓ 2/2", "✗ 1/2", with "⚠ changes what judges it" and its fix rounds when it has
 * them; "not run yet" and the like before they judged it; a dash without verify commands.
 */
export function memberVerifyText(verify: MemberVerify | null): string {
  if (verify === null) return '—';
  switch (verify.outcome) {
    case 'pending':
      return 'not run yet';
    case 'running':
      return 'running…';
    case 'skipped':
    case 'interrupted':
      return 'not run';
    case 'cancelled':
      return 'cancelled';
    default:
      break;
  }
  const parts = [`${passMark(verify.outcome === 'passed').mark} ${verify.passed}/${verify.total}`];
  if (verify.flagged) parts.push('⚠ changes what judges it');
  if (verify.rounds > 0) parts.push(`after ${plural(verify.rounds, 'fix round')}`);
  return parts.join(', ');
}

/** The same cell for a screen reader, where a mark is read as a symbol's name: "Passed 2 of 2". */
export function memberVerifyLabel(verify: MemberVerify | null): string | null {
  if (verify === null || (verify.outcome !== 'passed' && verify.outcome !== 'failed')) return null;
  const parts = [`${passMark(verify.outcome === 'passed').word} ${verify.passed} of ${verify.total}`];
  if (verify.flagged) parts.push('warning: its branch changes what judges it');
  if (verify.rounds > 0) parts.push(`after ${plural(verify.rounds, 'fix round')}`);
  return parts.join(', ');
}

/** Whether the comparison has a Verify column: some member has verify commands. */
export function groupHasVerify(group: Pick<JobGroup, 'jobs'>): boolean {
  return group.jobs.some((member) => member.verify !== null);
}

/**
 * The best member to take, and the turn to take it from: its latest judged turn (a fix round's, when one passed),
 * whose branch tip the commands judged. Null when the comparison names no best.
 */
export function bestToTake(group: Pick<JobGroup, 'jobs' | 'best'>): { memberId: string; jobId: string; model: string } | null {
  const member = group.best === null ? undefined : group.jobs.find((m) => m.jobId === group.best);
  if (!member) return null;
  return { memberId: member.jobId, jobId: member.verify?.jobId ?? member.jobId, model: member.model };
}

/** Why there is no best to take, for a comparison with verify commands; null when there is one, or none is judged. */
export function noBestReason(group: Pick<JobGroup, 'jobs' | 'best'>): string | null {
  if (group.best !== null || !groupHasVerify(group)) return null;
  if (group.jobs.some((member) => isActiveState(member.state) || member.verify?.outcome === 'running' || member.verify?.outcome === 'pending')) {
    return 'No best yet: some candidates are still running or being verified.';
  }
  return 'No best to take: none passed every command without changing what judges it.';
}
