/**
 * Cleanup that knows a squash (worktree-cleanup.ts), with the machine's real git: a delegate's branch counts as taken
 * when its work is in another branch by any route — merge, squash, cherry-pick, rebase — and never when a commit of it
 * is nowhere else; the disk a worktree takes; the worktrees no job names any more, and where they came from.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobIsolation } from '../../../../src-main/contract/index.js';
import {
  findOrphans,
  findTaken,
  folderSize,
  removeTaken,
  reportOf,
  surveyWorktrees,
  worktreeOrigin,
} from '../../../../src-main/core/jobs/git/worktree-cleanup.js';
import type { NamedWorktree } from '../../../../src-main/core/jobs/git/worktree-cleanup.js';
import { Worktrees } from '../../../../src-main/core/jobs/git/worktrees.js';
import { RepoTemplate, branches, gitIn, writeFiles } from '../../../support/git-repo.js';

let root: string;
let repo: string;
let base: string;

const template = new RepoTemplate({ 'README.md': '# demo\n', 'src/app.ts': 'export const a = 1;\n' });

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'od-cleanup-'));
  repo = path.join(root, 'repo');
  base = await template.copyTo(repo);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

afterAll(async () => {
  await template.remove();
});

/** A delegate's branch from the base, with one commit per change. */
async function delegateBranch(branch: string, changes: Array<Record<string, string>>): Promise<void> {
  await gitIn(repo, ['branch', branch, base]);
  await gitIn(repo, ['checkout', '--quiet', branch]);
  for (const [i, files] of changes.entries()) {
    await writeFiles(repo, files);
    await gitIn(repo, ['add', '--all']);
    await gitIn(repo, ['commit', '--quiet', '-m', `delegate change ${i + 1}`]);
  }
  await gitIn(repo, ['checkout', '--quiet', 'main']);
}

/** Someone else's work on main meanwhile, so nothing can be a fast-forward. */
async function moveMain(): Promise<void> {
  await writeFiles(repo, { 'NOTES.md': 'meanwhile\n' });
  await gitIn(repo, ['add', '--all']);
  await gitIn(repo, ['commit', '--quiet', '-m', 'meanwhile on main']);
}

const TWO_CHANGES: Array<Record<string, string>> = [{ 'src/app.ts': 'export const a = 2;\n' }, { 'src/b.ts': 'export const b = 1;\n' }];

describe('taken by any route', () => {
  it('counts a merged branch as taken', async () => {
    await delegateBranch('delegate/m', TWO_CHANGES);
    await moveMain();
    await gitIn(repo, ['merge', '--quiet', '--no-edit', 'delegate/m']);
    expect(await findTaken(repo, 'delegate/m', base)).toMatchObject({ route: 'merged', into: 'main' });
  });

  it("never counts another delegate's branch as holding the work: two delegates that made the same change are both kept", async () => {
    await delegateBranch('delegate/one', TWO_CHANGES);
    await delegateBranch('delegate/two', TWO_CHANGES);
    // The same tip, even: one branch made from the other.
    await gitIn(repo, ['branch', 'delegate/copy', 'delegate/one']);
    for (const branch of ['delegate/one', 'delegate/two', 'delegate/copy']) expect(await findTaken(repo, branch, base)).toMatchObject({ route: null });
    // A branch of the user's holding it is another matter.
    await gitIn(repo, ['branch', 'keep', 'delegate/one']);
    expect(await findTaken(repo, 'delegate/one', base)).toMatchObject({ route: 'merged', into: 'keep' });
  });

  it('counts a branch squash-merged into main as taken', async () => {
    await delegateBranch('delegate/s', TWO_CHANGES);
    await moveMain();
    await gitIn(repo, ['merge', '--quiet', '--squash', 'delegate/s']);
    await gitIn(repo, ['commit', '--quiet', '-m', 'the delegate work, squashed']);
    await writeFiles(repo, { 'src/app.ts': 'export const a = 3;\n' });
    await gitIn(repo, ['commit', '--quiet', '-am', 'later work on the same file']);
    expect(await findTaken(repo, 'delegate/s', base)).toMatchObject({ route: 'squashed', into: 'main' });
  });

  it('counts a branch cherry-picked into main as taken', async () => {
    await delegateBranch('delegate/c', TWO_CHANGES);
    await moveMain();
    await gitIn(repo, ['cherry-pick', 'main..delegate/c']);
    expect(await findTaken(repo, 'delegate/c', base)).toMatchObject({ route: 'picked', into: 'main' });
  });

  it('counts a branch rebased onto main and fast-forwarded as taken', async () => {
    await delegateBranch('delegate/r', TWO_CHANGES);
    await moveMain();
    await gitIn(repo, ['checkout', '--quiet', '-b', 'rebased', 'delegate/r']);
    await gitIn(repo, ['rebase', '--quiet', 'main']);
    await gitIn(repo, ['checkout', '--quiet', 'main']);
    await gitIn(repo, ['merge', '--quiet', '--ff-only', 'rebased']);
    await gitIn(repo, ['branch', '-D', 'rebased']);
    expect(await findTaken(repo, 'delegate/r', base)).toMatchObject({ route: 'picked', into: 'main' });
  });

  it('counts a branch whose changes all landed next to lines that moved (other patch ids) as taken: merging it would change nothing', async () => {
    await writeFiles(repo, { 'lines.txt': 'one\ntwo\nthree\nfour\n' });
    await gitIn(repo, ['add', '--all']);
    await gitIn(repo, ['commit', '--quiet', '-m', 'lines']);
    const from = (await gitIn(repo, ['rev-parse', 'HEAD'])).trim();
    await gitIn(repo, ['checkout', '--quiet', '-b', 'delegate/n']);
    await writeFiles(repo, { 'lines.txt': 'one\ntwo\nTHREE\nfour\n' });
    await gitIn(repo, ['commit', '--quiet', '-am', 'delegate change']);
    await gitIn(repo, ['checkout', '--quiet', 'main']);
    // Main changes a line two above it: the picked commit's context, so its patch id, differs from the branch's.
    await writeFiles(repo, { 'lines.txt': 'ONE\ntwo\nthree\nfour\n' });
    await gitIn(repo, ['commit', '--quiet', '-am', 'one moved']);
    await gitIn(repo, ['cherry-pick', 'delegate/n']);
    expect(await findTaken(repo, 'delegate/n', from)).toMatchObject({ route: 'applied', into: 'main' });
    // Taken back out again: its change is no longer there, so neither is the branch's work.
    await gitIn(repo, ['revert', '--no-edit', 'HEAD']);
    expect(await findTaken(repo, 'delegate/n', from)).toMatchObject({ route: null });
  });

  it('keeps a branch with a commit whose change is in no other branch', async () => {
    await delegateBranch('delegate/u', [{ 'src/app.ts': 'export const a = 42;\n' }]);
    await moveMain();
    expect(await findTaken(repo, 'delegate/u', base)).toMatchObject({ route: null, into: null });
  });

  it('keeps a branch of which only part was cherry-picked or squashed', async () => {
    await delegateBranch('delegate/p', TWO_CHANGES);
    await moveMain();
    await gitIn(repo, ['cherry-pick', 'delegate/p~1']);
    expect(await findTaken(repo, 'delegate/p', base)).toMatchObject({ route: null });
    await writeFiles(repo, { 'src/b.ts': 'export const b = 1; // edited while squashing\n' });
    await gitIn(repo, ['add', '--all']);
    await gitIn(repo, ['commit', '--quiet', '-m', 'a squash that changed the work']);
    expect(await findTaken(repo, 'delegate/p', base)).toMatchObject({ route: null });
  });

  it('finds the work taken without a recorded base (an orphan), from where the branches meet', async () => {
    await delegateBranch('delegate/o', TWO_CHANGES);
    await moveMain();
    await gitIn(repo, ['merge', '--quiet', '--squash', 'delegate/o']);
    await gitIn(repo, ['commit', '--quiet', '-m', 'squashed']);
    expect(await findTaken(repo, 'delegate/o', null)).toMatchObject({ route: 'squashed' });
  });

  it('says nothing is taken of a branch that is gone', async () => {
    expect(await findTaken(repo, 'delegate/gone', base)).toEqual({ route: null, into: null, tip: null });
  });
});

describe('disk', () => {
  it("adds the files' sizes, not following symlinks and skipping .git", async () => {
    const dir = path.join(root, 'tree');
    await mkdir(path.join(dir, 'deep', 'er'), { recursive: true });
    await writeFile(path.join(dir, 'big.bin'), Buffer.alloc(100_000));
    await writeFile(path.join(dir, 'deep', 'er', 'small.txt'), 'x'.repeat(234));
    await writeFile(path.join(dir, '.git'), 'gitdir: /somewhere/else\n');
    await symlink(repo, path.join(dir, 'link-to-repo'));
    const size = await folderSize(dir);
    expect(size).toMatchObject({ complete: true });
    // The symlink counts as itself (its own tiny size), never as the repository it points to.
    expect(size.bytes).toBeGreaterThanOrEqual(100_234);
    expect(size.bytes).toBeLessThan(100_234 + 4096);
  });

  it('stops at its bound and says the figure is partial', async () => {
    const dir = path.join(root, 'many');
    await writeFiles(dir, Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`f${i}.txt`, 'abc'])));
    expect(await folderSize(dir, 4)).toEqual({ bytes: 12, complete: false });
  });
});

describe('orphans', () => {
  it('lists the folders no job names, and reads their repository and branch back from git', async () => {
    const worktrees = path.join(root, 'data', 'worktrees');
    await mkdir(worktrees, { recursive: true });
    const kept = path.join(worktrees, 'job_1_aaaaaa');
    const orphan = path.join(worktrees, 'job_2_bbbbbb');
    await gitIn(repo, ['worktree', 'add', '--quiet', '-b', 'delegate/aaaaaa', kept, base]);
    await gitIn(repo, ['worktree', 'add', '--quiet', '-b', 'delegate/bbbbbb', orphan, base]);
    expect(await findOrphans(worktrees, new Set([kept]))).toEqual([orphan]);
    const realRepo = (await gitIn(repo, ['rev-parse', '--show-toplevel'])).trim();
    expect(await worktreeOrigin(orphan)).toEqual({ repo: realRepo, branch: 'delegate/bbbbbb' });
  });

  it('does not trust a .git file that git does not know as this worktree', async () => {
    const fake = path.join(root, 'data', 'worktrees', 'job_3_cccccc');
    await mkdir(fake, { recursive: true });
    await gitIn(repo, ['worktree', 'add', '--quiet', '-b', 'delegate/real', path.join(root, 'real'), base]);
    const adminDir = path.join(repo, '.git', 'worktrees', 'real');
    await writeFile(path.join(fake, '.git'), `gitdir: ${adminDir}\n`);
    expect(await worktreeOrigin(fake)).toBeNull();
  });
});

describe('the kept worktrees, surveyed and cleaned up', () => {
  let worktrees: Worktrees;

  beforeEach(() => {
    worktrees = new Worktrees({ dir: path.join(root, 'data', 'worktrees') });
  });

  /** A job's worktree with one file committed on its branch, as a finished job leaves it. */
  async function finishedJob(jobId: string, files: Record<string, string>): Promise<JobIsolation> {
    const made = await worktrees.create({ jobId, repo, base });
    await writeFiles(made.worktree, files);
    const isolation: JobIsolation = {
      mode: 'worktree',
      note: null,
      repo: (await gitIn(repo, ['rev-parse', '--show-toplevel'])).trim(),
      worktree: made.worktree,
      gitDir: made.gitDir,
      branch: made.branch,
      baseCommit: base,
      baseDirty: false,
      worktreeState: 'present',
      savedCommit: null,
      headCommit: null,
      changes: null,
      problem: null,
    };
    return worktrees.saveToBranch(isolation, { jobId, state: 'succeeded', reason: null });
  }

  function named(...jobs: Array<[string, JobIsolation]>): Map<string, NamedWorktree> {
    return new Map(jobs.map(([jobId, isolation]) => [isolation.worktree ?? '', { jobId, isolation, active: false, turn: 1 }]));
  }

  it('removes a squash-merged job at pruning, as a merged one', async () => {
    const sealed = await finishedJob('job_1_squash', { 'feature.txt': 'done\n' });
    expect(await worktrees.removeIfMerged(sealed)).toBe('unmerged');
    await gitIn(repo, ['merge', '--quiet', '--squash', sealed.branch ?? '']);
    await gitIn(repo, ['commit', '--quiet', '-m', 'feature, squashed']);

    expect(await worktrees.removeIfMerged(sealed)).toBe('removed');
    expect(await branches(repo)).toEqual(['main']);
  });

  it('says "no changes", not "taken", of a job that changed nothing, and removes it as one that can go (issue 38)', async () => {
    const idle = await finishedJob('job_5_idle55', {});
    const surveyed = await surveyWorktrees(worktrees.dir, named(['job_5_idle55', idle]));
    expect(reportOf(worktrees.dir, surveyed).worktrees.map((w) => [w.jobId, w.state, w.takenBy, w.into])).toEqual([['job_5_idle55', 'unchanged', null, null]]);
    const done = await removeTaken(worktrees, surveyed);
    expect(done.removed.map((w) => w.worktree)).toEqual([idle.worktree]);
    expect(await branches(repo)).toEqual(['main']);
  });

  it('lists each worktree with its job, branch, state and size; removes the taken and the orphans whose work is elsewhere, keeps the rest saying why', async () => {
    const taken = await finishedJob('job_1_taken1', { 'taken.bin': 'x'.repeat(10_000) });
    const untaken = await finishedJob('job_2_untak2', { 'mine.txt': 'only here\n' });
    const orphanTaken = await finishedJob('job_3_orphan', { 'orphan.txt': 'picked\n' });
    const orphanUntaken = await finishedJob('job_4_orphun', { 'lost.txt': 'nowhere else\n' });
    await gitIn(repo, ['merge', '--quiet', '--squash', taken.branch ?? '']);
    await gitIn(repo, ['commit', '--quiet', '-m', 'taken, squashed']);
    await gitIn(repo, ['cherry-pick', orphanTaken.branch ?? '']);

    const surveyed = await surveyWorktrees(worktrees.dir, named(['job_1_taken1', taken], ['job_2_untak2', untaken]));
    const report = reportOf(worktrees.dir, surveyed);
    // A branch of one commit, squashed, is that commit's patch: git cherry finds it first.
    expect(report.worktrees.map((w) => [w.jobId, w.branch, w.state, w.takenBy])).toEqual([
      ['job_1_taken1', 'delegate/taken1', 'taken', 'picked'],
      ['job_2_untak2', 'delegate/untak2', 'untaken', null],
      [null, 'delegate/orphan', 'orphan', 'picked'],
      [null, 'delegate/orphun', 'orphan', null],
    ]);
    expect(report.worktrees[0]?.bytes).toBeGreaterThanOrEqual(10_000);
    expect(report.totalBytes).toBe(report.worktrees.reduce((sum, w) => sum + w.bytes, 0));

    const done = await removeTaken(worktrees, surveyed);
    expect(done.removed.map((w) => w.worktree)).toEqual([taken.worktree, orphanTaken.worktree]);
    expect(done.kept.map((w) => [w.worktree, w.why])).toEqual([
      [untaken.worktree, expect.stringContaining('openrouter-delegate discard job_2_untak2')],
      [orphanUntaken.worktree, expect.stringContaining('has work in no other branch')],
    ]);
    expect((await branches(repo)).sort()).toEqual(['delegate/orphun', 'delegate/untak2', 'main']);
    expect(await findOrphans(worktrees.dir, new Set([untaken.worktree ?? '']))).toEqual([orphanUntaken.worktree]);
  });
});
