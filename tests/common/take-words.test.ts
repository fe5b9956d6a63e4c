/**
 * What taking a job's work does, in words (common/take-words.ts), as the CLI and the Jobs page both say it: each way
 * of the preview, a refusal, and what a take did, what becomes of the job's worktree and branch, and how to undo it.
 */
import { describe, expect, it } from 'vitest';
import type { TakePlan, TakeResult } from '../../src-main/contract/index.js';
import { takePlanText, takeResultLines } from '../../src-main/common/take-words.js';

const plan = (over: Partial<TakePlan>): TakePlan => ({
  how: 'merge',
  refusal: null,
  commits: 2,
  fastForward: true,
  files: 3,
  added: 12,
  removed: 4,
  message: null,
  ...over,
});

const result = (over: Partial<TakeResult>): TakeResult => ({
  jobId: 'job_20261130T091500Z_k3m9qz',
  how: 'merge',
  repo: '/home/me/project',
  branch: 'delegate/k3m9qz',
  into: 'main',
  before: '1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d',
  after: 'ffeeddccbbaa99887766554433221100ffeeddcc',
  commits: 2,
  fastForward: true,
  files: 3,
  added: 12,
  removed: 4,
  message: null,
  takenBy: 'merged',
  retentionDays: 30,
  worktree: '/data/worktrees/job_20261130T091500Z_k3m9qz',
  ...over,
});

describe('each way, as the preview says it', () => {
  it('says whether a merge fast-forwards or makes a merge commit, what a squash commit is called, what a rebase replays', () => {
    expect(takePlanText(plan({}), 'main')).toBe("fast-forward: main moves to the delegate's 2 commits; 3 files, +12 −4");
    expect(takePlanText(plan({ fastForward: false, commits: 3 }), 'main')).toBe(
      "a merge commit: main gets the delegate's 2 commits and the merge; 3 files, +12 −4",
    );
    expect(takePlanText(plan({ how: 'squash', fastForward: false, commits: 1, message: 'Add the parser tests\n\nDelegated to …' }), 'main')).toBe(
      'one commit on main, "Add the parser tests"; 3 files, +12 −4',
    );
    expect(takePlanText(plan({ how: 'rebase', fastForward: false }), 'main')).toBe(
      "the delegate's 2 commits replayed onto main, which then fast-forwards to them; 3 files, +12 −4",
    );
    expect(takePlanText(plan({ how: 'rebase', commits: 1, files: 1 }), 'main')).toBe(
      "nothing to replay: main fast-forwards to the delegate's 1 commit; 1 file, +12 −4",
    );
  });

  it('gives a refusal as it is, with what to do', () => {
    expect(takePlanText(plan({ refusal: 'HEAD is detached: check out a branch.' }), null)).toBe('refused: HEAD is detached: check out a branch.');
  });
});

describe('what a take did', () => {
  it('says which way it went, what the branch now is, when the worktree goes, and how to undo it', () => {
    expect(takeResultLines(result({}))).toEqual([
      "Merged delegate/k3m9qz into main by fast-forward: main is at ffeeddccbbaa, the delegate's 2 commits; 3 files, +12 −4.",
      'The cleanup finds its work in main, so its worktree and branch go at the first prune 30 days after the job ended; `openrouter-delegate worktrees --remove-taken` removes them now.',
      'Undo: `git reset --keep 1a2b3c4d5e6f` on main in /home/me/project.',
    ]);
    expect(takeResultLines(result({ fastForward: false, commits: 3 }))[0]).toBe(
      "Merged delegate/k3m9qz into main with a merge commit, ffeeddccbbaa (the delegate's 2 commits and the merge); 3 files, +12 −4.",
    );
    expect(takeResultLines(result({ how: 'squash', fastForward: false, commits: 1, message: 'Add the parser tests\n' }))[0]).toBe(
      'Squashed delegate/k3m9qz into main: one commit, ffeeddccbbaa "Add the parser tests"; 3 files, +12 −4.',
    );
    expect(takeResultLines(result({ how: 'rebase', fastForward: false }))[0]).toBe(
      'Rebased delegate/k3m9qz onto main: its 2 commits replayed, main fast-forwarded to ffeeddccbbaa; 3 files, +12 −4.',
    );
  });

  it('says the worktree and branch are kept when the cleanup cannot find the work taken', () => {
    expect(takeResultLines(result({ takenBy: null }))[1]).toBe('Its worktree and branch delegate/k3m9qz are kept: the cleanup does not find its work taken.');
  });
});
