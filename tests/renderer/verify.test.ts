/**
 * How the Jobs page words a job's verify commands (src-renderer/lib/verify.ts, docs/VERIFY.md): each command's end
 * and time as the bridge says them, the one line before they judged the branch, and a fan-out's Verify column, its
 * best candidate and why there is none. Pure.
 */
import { describe, expect, it } from 'vitest';
import type { GroupMember, JobGroup, JobVerify, VerifyRun } from '../../src-main/contract/index.js';
import {
  bestToTake,
  fixRoundIntro,
  groupHasVerify,
  lastOutputLine,
  memberVerifyLabel,
  memberVerifyText,
  noBestReason,
  passMark,
  verifyEndText,
  verifyLead,
  verifyNote,
  verifyRoundText,
  verifyRunText,
  verifyStateLine,
  verifyTimeText,
} from '../../src-renderer/lib/verify.js';

const run = (over: Partial<VerifyRun> = {}): VerifyRun => ({
  command: 'npm test',
  ok: true,
  exitCode: 0,
  signal: null,
  timedOut: false,
  ms: 1200,
  tail: '',
  tests: null,
  testsBefore: null,
  ...over,
});

const verify = (over: Partial<JobVerify> = {}): JobVerify => ({
  commands: ['npm test', 'npm run lint'],
  fixRoundsLeft: 1,
  saved: false,
  round: 0,
  outcome: 'pending',
  note: null,
  runs: [],
  flags: [],
  fixJobId: null,
  ...over,
});

type MemberVerify = NonNullable<GroupMember['verify']>;
const judged = (over: Partial<MemberVerify> = {}): MemberVerify => ({
  outcome: 'passed',
  passed: 2,
  total: 2,
  flagged: false,
  rounds: 0,
  costUsd: 0.01,
  jobId: 'job_a',
  ...over,
});

const member = (jobId: string, over: Partial<GroupMember> = {}): GroupMember => ({
  jobId,
  model: `vendor/${jobId}`,
  state: 'succeeded',
  estimatedCostUsd: 0.01,
  billedCostUsd: null,
  usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  elapsedSeconds: 30,
  branch: `delegate/${jobId}`,
  changes: { files: 1, added: 2, removed: 0 },
  runsCode: [],
  verify: null,
  ...over,
});

describe("a job's verify commands (pure)", () => {
  it('times a command as the bridge does: tenths of a second under ten seconds, then the usual durations', () => {
    expect(verifyTimeText(500)).toBe('0.5 s');
    expect(verifyTimeText(1234)).toBe('1.2 s');
    expect(verifyTimeText(45_000)).toBe('45 s');
    expect(verifyTimeText(192_000)).toBe('3 min 12 s');
  });

  it('says how a command ended: its time when it passed, else how it failed and its time', () => {
    expect(verifyRunText(run())).toBe('1.2 s');
    expect(verifyRunText(run({ ok: false, exitCode: 1, ms: 500 }))).toBe('exit 1, 0.5 s');
    expect(verifyRunText(run({ ok: false, exitCode: null, timedOut: true, signal: 'SIGKILL', ms: 600_000 }))).toBe('timed out, 10 min');
    expect(verifyRunText(run({ ok: false, exitCode: null, signal: 'SIGTERM', ms: 2000 }))).toBe('killed by SIGTERM, 2.0 s');
    expect(verifyEndText(run({ ok: false, exitCode: null, signal: null }))).toBe('killed by a signal');
    expect(verifyEndText(run())).toBe('passed');
  });

  it('marks a command with a word as well as a mark and a tone', () => {
    expect(passMark(true)).toEqual({ mark: '✓', word: 'Passed', tone: 'ok' });
    expect(passMark(false)).toEqual({ mark: '✗', word: 'Failed', tone: 'fail' });
  });

  it("finds the last line of a command's output that says something", () => {
    expect(lastOutputLine('FAIL tests/a.test.ts\n  expected 42, got 43  \n\n  \n')).toBe('expected 42, got 43');
    expect(lastOutputLine('\n \n')).toBe('');
  });

  it('says in one line where the commands stand before they judged the branch, and nothing once they did', () => {
    expect(verifyStateLine(verify())).toBe('Runs on its branch when its turn ends.');
    expect(verifyStateLine(verify({ outcome: 'running' }))).toBe('Running…');
    expect(verifyStateLine(verify({ outcome: 'skipped', note: 'Not run: the turn left no changes.' }))).toBe('Not run: the turn left no changes.');
    expect(verifyStateLine(verify({ outcome: 'skipped', note: 'no node_modules: run your install (npm install) there first.' }))).toBe(
      'Not run: no node_modules: run your install (npm install) there first.',
    );
    expect(verifyStateLine(verify({ outcome: 'interrupted' }))).toBe('Not run: the service stopped while they ran.');
    expect(verifyStateLine(verify({ outcome: 'cancelled' }))).toBe('Cancelled before they finished.');
    expect(verifyStateLine(verify({ outcome: 'passed' }))).toBeNull();
    expect(verifyStateLine(verify({ outcome: 'failed' }))).toBeNull();
  });

  it('leads a judged run with how many passed, and keeps the note for a judged run only (a skip says it in its state line)', () => {
    const failed = verify({ outcome: 'failed', runs: [run(), run({ command: 'npm run lint', ok: false, exitCode: 1 })] });
    expect(verifyLead(failed)).toBe('1 of 2 passed, on a clean checkout of its branch.');
    expect(verifyLead(verify())).toBeNull();
    expect(verifyNote({ ...failed, note: 'Its branch changes package-lock.json.' })).toBe('Its branch changes package-lock.json.');
    expect(verifyNote(verify({ outcome: 'skipped', note: 'Not run: no changes.' }))).toBeNull();
  });

  it('names a fix round: the turn that is one, and the one a failure started', () => {
    expect(verifyRoundText(verify())).toBeNull();
    expect(verifyRoundText(verify({ round: 1 }))).toBe("This turn is fix round 1, started with its previous turn's failure.");
    expect(fixRoundIntro(verify())).toBe('Fix round 1 started with the failure:');
    expect(fixRoundIntro(verify({ round: 1 }))).toBe('Fix round 2 started with the failure:');
  });
});

describe("a fan-out's verify column and best candidate (pure)", () => {
  it("sums a member's verify commands up in its cell, with words for a screen reader", () => {
    expect(memberVerifyText(judged())).toBe('✓ 2/2');
    expect(memberVerifyLabel(judged())).toBe('Passed 2 of 2');
    expect(memberVerifyText(judged({ outcome: 'failed', passed: 1 }))).toBe('✗ 1/2');
    expect(memberVerifyLabel(judged({ outcome: 'failed', passed: 1 }))).toBe('Failed 1 of 2');
    expect(memberVerifyText(judged({ flagged: true, rounds: 1 }))).toBe('✓ 2/2, ⚠ changes what judges it, after 1 fix round');
    expect(memberVerifyLabel(judged({ flagged: true, rounds: 2 }))).toBe('Passed 2 of 2, warning: its branch changes what judges it, after 2 fix rounds');
    expect(memberVerifyText(judged({ outcome: 'running', passed: 0 }))).toBe('running…');
    expect(memberVerifyText(judged({ outcome: 'pending', passed: 0 }))).toBe('not run yet');
    expect(memberVerifyText(judged({ outcome: 'skipped', passed: 0 }))).toBe('not run');
    expect(memberVerifyText(judged({ outcome: 'cancelled', passed: 0 }))).toBe('cancelled');
    expect(memberVerifyLabel(judged({ outcome: 'running', passed: 0 }))).toBeNull();
    expect(memberVerifyText(null)).toBe('—');
    expect(memberVerifyLabel(null)).toBeNull();
  });

  it('has a Verify column only when some member has verify commands', () => {
    expect(groupHasVerify({ jobs: [member('a'), member('b')] })).toBe(false);
    expect(groupHasVerify({ jobs: [member('a'), member('b', { verify: judged({ jobId: 'b' }) })] })).toBe(true);
  });

  it("takes the best member from its latest judged turn (a fix round's), and names no best without one", () => {
    const group: JobGroup = {
      id: 'g1',
      best: 'a',
      jobs: [member('a', { verify: judged({ jobId: 'job_a_fix', rounds: 1 }) }), member('b', { verify: judged({ outcome: 'failed', passed: 1, jobId: 'b' }) })],
    };
    expect(bestToTake(group)).toEqual({ memberId: 'a', jobId: 'job_a_fix', model: 'vendor/a' });
    expect(bestToTake({ ...group, best: null })).toBeNull();
    expect(bestToTake({ ...group, best: 'gone' })).toBeNull();
    expect(noBestReason(group)).toBeNull();
  });

  it('says why there is no best: one is still running or verifying, or none passed every command unflagged', () => {
    const failed = member('b', { verify: judged({ outcome: 'failed', passed: 1, jobId: 'b' }) });
    const flagged = member('a', { verify: judged({ flagged: true }) });
    expect(noBestReason({ best: null, jobs: [flagged, failed] })).toBe('No best to take: none passed every command without changing what judges it.');
    expect(noBestReason({ best: null, jobs: [flagged, member('c', { state: 'verifying', verify: judged({ outcome: 'running', passed: 0 }) })] })).toBe(
      'No best yet: some candidates are still running or being verified.',
    );
    expect(noBestReason({ best: null, jobs: [failed, member('c', { state: 'running' })] })).toBe(
      'No best yet: some candidates are still running or being verified.',
    );
    expect(noBestReason({ best: null, jobs: [member('a'), member('b')] })).toBeNull();
  });
});
