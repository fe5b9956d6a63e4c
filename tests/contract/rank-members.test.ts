/**
 * A fan-out ranked by its verify commands (docs/VERIFY.md, "Fan-out, ranked"): unflagged first, then commands
 * passed, then cost, then diff size; the best named only once every candidate has ended, and never a flagged one.
 */
import { describe, expect, it } from 'vitest';
import { rankMembers } from '../../src-main/contract/index.js';
import type { GroupMember, JobState } from '../../src-main/contract/index.js';

function member(jobId: string, verify: Partial<NonNullable<GroupMember['verify']>> | null, options: { state?: JobState; size?: number } = {}): GroupMember {
  return {
    jobId,
    model: `m/${jobId}`,
    state: options.state ?? 'succeeded',
    estimatedCostUsd: 0,
    billedCostUsd: null,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    elapsedSeconds: 1,
    branch: `delegate/${jobId}`,
    changes: { files: 1, added: options.size ?? 1, removed: 0 },
    runsCode: [],
    verify: verify === null ? null : { outcome: 'passed', passed: 2, total: 2, flagged: false, rounds: 0, costUsd: 0.01, jobId, ...verify },
  };
}

const order = (members: GroupMember[]) => rankMembers(members).ranked.map((m) => m.jobId);

describe('rankMembers', () => {
  it('puts the unflagged pass first, the failure next, the flagged pass last, and names the pass best', () => {
    const ranked = rankMembers([
      member('rewrite', { flagged: true }),
      member('fail', { outcome: 'failed', passed: 0, costUsd: 0.001 }),
      member('pass', { costUsd: 0.02 }),
    ]);
    expect(ranked.ranked.map((m) => m.jobId)).toEqual(['pass', 'fail', 'rewrite']);
    expect(ranked.best).toBe('pass');
  });

  it('orders by commands passed, then by what the conversation cost, then by the size of the diff', () => {
    expect(order([member('one', { outcome: 'failed', passed: 1 }), member('none', { outcome: 'failed', passed: 0 })])).toEqual(['one', 'none']);
    expect(order([member('dear', { costUsd: 0.05 }), member('cheap', { costUsd: 0.01 })])).toEqual(['cheap', 'dear']);
    expect(order([member('big', {}, { size: 300 }), member('small', {}, { size: 3 })])).toEqual(['small', 'big']);
  });

  it('names no best while a candidate still runs or verifies, nor when none passed unflagged', () => {
    expect(rankMembers([member('pass', {}), member('busy', { outcome: 'running' }, { state: 'verifying' })]).best).toBeNull();
    expect(rankMembers([member('fail', { outcome: 'failed', passed: 1 }), member('rewrite', { flagged: true })]).best).toBeNull();
  });

  it('keeps candidates not judged after the judged ones, in their order; without verify commands, the order named', () => {
    expect(order([member('a', null), member('b', { outcome: 'skipped', passed: 0 }), member('c', {})])).toEqual(['c', 'a', 'b']);
    expect(order([member('x', null), member('y', null)])).toEqual(['x', 'y']);
    expect(rankMembers([member('x', null)]).best).toBeNull();
  });
});
