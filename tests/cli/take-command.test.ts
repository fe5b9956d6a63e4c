/**
 * `openrouter-delegate take --dry-run`: the preview as printed — the branch, where it would go, a line per way (or the
 * one asked for) — and a refusal every way shares, which is said once.
 */
import { describe, expect, it } from 'vitest';
import type { TakePreview } from '../../src-main/contract/index.js';
import { describePreview, sharedRefusal } from '../../src-main/cli/take-command.js';

const way = { commits: 1, fastForward: true, files: 1, added: 2, removed: 0, message: null };
const preview: TakePreview = {
  jobId: 'job_20261130T091500Z_k3m9qz',
  repo: '/home/me/project',
  branch: 'delegate/k3m9qz',
  into: 'main',
  branchCommits: 1,
  ways: [
    { how: 'merge', refusal: null, ...way },
    { how: 'squash', refusal: null, ...way, fastForward: false, message: 'Add a test\n\nDelegated to …' },
    { how: 'rebase', refusal: 'delegate/k3m9qz has a merge commit, which a rebase does not replay: take it by merge or squash.', ...way },
  ],
};

describe('take --dry-run', () => {
  it('prints the branch, where it goes, and what each way would do or why it would be refused', () => {
    expect(describePreview(preview, null)).toEqual([
      'Take delegate/k3m9qz (1 commit) into main, in /home/me/project:',
      "  --merge   fast-forward: main moves to the delegate's 1 commit; 1 file, +2 −0",
      '  --squash  one commit on main, "Add a test"; 1 file, +2 −0',
      '  --rebase  refused: delegate/k3m9qz has a merge commit, which a rebase does not replay: take it by merge or squash.',
      'Nothing was changed: run it without --dry-run to take it.',
    ]);
  });

  it('prints only the way asked for', () => {
    expect(describePreview(preview, 'squash')[1]).toBe('  --squash  one commit on main, "Add a test"; 1 file, +2 −0');
    expect(describePreview(preview, 'squash')).toHaveLength(3);
  });

  it('finds a refusal every way shares (the job, the repository), and none when the ways differ', () => {
    expect(sharedRefusal(preview)).toBeNull();
    const refused = { ...preview, ways: preview.ways.map((w) => ({ ...w, refusal: 'HEAD in /home/me/project is detached.' })) };
    expect(sharedRefusal(refused)).toBe('HEAD in /home/me/project is detached.');
  });
});
