/**
 * `openrouter-delegate worktrees`: what it prints of the kept worktrees — each with its job, branch, state and size,
 * the total, the command that removes what may go — and of a cleanup, what went and what stayed and why.
 */
import { describe, expect, it } from 'vitest';
import type { KeptWorktree } from '../../../src-main/contract/index.js';
import { describeCleanup, describeWorktrees } from '../../../src-main/cli/commands/worktrees-command.js';

const kept = (over: Partial<KeptWorktree>): KeptWorktree => ({
  worktree: '/data/worktrees/job_1_aaaaaa',
  jobId: 'job_1_aaaaaa',
  repo: '/home/me/repo',
  branch: 'delegate/aaaaaa',
  state: 'taken',
  takenBy: 'squashed',
  into: 'main',
  bytes: 1_500_000,
  sizeComplete: true,
  ...over,
});

describe('worktrees', () => {
  it('lists each kept worktree with its job, branch, state and size, the total, and what --remove-taken would remove', () => {
    const lines = describeWorktrees({
      dir: '/data/worktrees',
      totalBytes: 3_700_000,
      worktrees: [
        kept({}),
        kept({
          worktree: '/data/worktrees/job_2_bbbbbb',
          jobId: 'job_2_bbbbbb',
          branch: 'delegate/bbbbbb',
          state: 'untaken',
          takenBy: null,
          into: null,
          bytes: 2_000_000,
        }),
        kept({
          worktree: '/data/worktrees/job_3_cccccc',
          jobId: null,
          branch: 'delegate/cccccc',
          state: 'orphan',
          takenBy: null,
          into: null,
          bytes: 200_000,
          sizeComplete: false,
        }),
      ],
    });
    expect(lines).toEqual([
      'Kept worktrees in /data/worktrees:',
      '  job_1_aaaaaa  delegate/aaaaaa  taken (squashed into main)  1.5 MB  /data/worktrees/job_1_aaaaaa',
      '  job_2_bbbbbb  delegate/bbbbbb  untaken  2 MB  /data/worktrees/job_2_bbbbbb',
      '  (no job)  delegate/cccccc  orphan, work in no other branch  ≥ 200 kB  /data/worktrees/job_3_cccccc',
      'Total: 3 worktrees, 3.7 MB (1 orphan: no job names them any more).',
      '`openrouter-delegate worktrees --remove-taken` removes the 1 whose work is in another branch, discarded or none (1.5 MB); the others stay.',
    ]);
  });

  it('says when none are kept', () => {
    expect(describeWorktrees({ dir: '/data/worktrees', totalBytes: 0, worktrees: [] })).toEqual(['No worktrees are kept in /data/worktrees.']);
  });

  it('says what a cleanup removed, and what it kept and why', () => {
    const lines = describeCleanup({
      removed: [kept({})],
      kept: [{ ...kept({ jobId: 'job_2_bbbbbb', state: 'untaken', takenBy: null, into: null }), why: 'commits on delegate/bbbbbb are in no other branch' }],
      freedBytes: 1_500_000,
    });
    expect(lines[0]).toBe('Removed 1 worktree, 1.5 MB:');
    expect(lines).toContain('Kept:');
    expect(lines.at(-1)).toBe('      because commits on delegate/bbbbbb are in no other branch');
  });
});
