/**
 * The git side of isolation (worktrees.ts), with the machine's real git: a worktree per conversation outside the
 * user's tree, the work left behind committed when a job ends, the branch read back, and a worktree removed only once
 * its branch is merged or on discard. The pure helpers beside them.
 */
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobIsolation } from '../../../../src-main/contract/index.js';
import {
  SERVICE_AUTHOR,
  Worktrees,
  branchForJob,
  serviceFoldersToDeny,
  intoWorktree,
  moveRulePath,
  outOfWorktree,
  parsePatch,
  DIFF_LIMITS,
} from '../../../../src-main/core/jobs/git/worktrees.js';
import { parseNumstat } from '../../../../src-main/core/jobs/git/git.js';
import { RepoTemplate, branchFiles, branches, commitsSince, gitIn, repoState, treeOf, worktreeList, writeFiles } from '../../../support/git-repo.js';

const JOB = 'job_20261130T091500Z_k3m9qz';

describe('the pure parts', () => {
  it('names the branch after the job', () => {
    expect(branchForJob(JOB)).toBe('delegate/k3m9qz');
  });

  it('moves a path of the repository into the worktree and back, and leaves others where they are', () => {
    expect(intoWorktree('/home/me/repo/src', '/home/me/repo', '/data/worktrees/j')).toBe('/data/worktrees/j/src');
    expect(intoWorktree('/home/me/repo', '/home/me/repo', '/data/worktrees/j')).toBe('/data/worktrees/j');
    expect(intoWorktree('/home/me/repo-other', '/home/me/repo', '/data/worktrees/j')).toBe('/home/me/repo-other');
    expect(outOfWorktree('/data/worktrees/j/src', '/home/me/repo', '/data/worktrees/j')).toBe('/home/me/repo/src');
    expect(outOfWorktree('/elsewhere', '/home/me/repo', '/data/worktrees/j')).toBe('/elsewhere');
  });

  it("moves a file rule's absolute path with its folder, the longest folder first, and leaves other rules alone", () => {
    const moves = [
      ['/home/me/repo', '/data/wt/j'],
      ['/home/me/repo/pkg', '/data/wt/j/pkg'],
    ] as const;
    expect(moveRulePath('Read(//home/me/repo/**)', moves)).toBe('Read(//data/wt/j/**)');
    expect(moveRulePath('Grep(//home/me/repo/pkg/src/**)', moves)).toBe('Grep(//data/wt/j/pkg/src/**)');
    expect(moveRulePath('Read(//home/me/repository/**)', moves)).toBe('Read(//home/me/repository/**)');
    expect(moveRulePath('Bash(npm test:*)', moves)).toBe('Bash(npm test:*)');
    expect(moveRulePath('Read', moves)).toBe('Read');
  });

  it('reads numstat -z: counts, binary files, odd names', () => {
    const output = '3\t1\tsrc/a.ts\0-\t-\timg.png\0' + '0\t2\twith\ttab and\nnewline.txt\0';
    expect(parseNumstat(output)).toEqual([
      { path: 'src/a.ts', added: 3, removed: 1 },
      { path: 'img.png', added: null, removed: null },
      { path: 'with\ttab and\nnewline.txt', added: 0, removed: 2 },
    ]);
    expect(parseNumstat('')).toEqual([]);
  });
});

describe('parsePatch', () => {
  const patch = [
    'diff --git a/a.txt b/a.txt',
    'index 1111111..2222222 100644',
    '--- a/a.txt',
    '+++ b/a.txt',
    '@@ -1,3 +1,3 @@',
    ' one',
    '-two',
    '+TWO',
    ' three',
    'diff --git a/img.png b/img.png',
    'new file mode 100644',
    'index 0000000..3333333',
    'Binary files /dev/null and b/img.png differ',
    'diff --git a/n.txt b/n.txt',
    '--- a/n.txt',
    '+++ b/n.txt',
    '@@ -1 +1 @@',
    '-x',
    '\\ No newline at end of file',
    '+y',
    '',
  ].join('\n');

  it('gives each file of numstat its lines: hunks, removed, added, unchanged and notes, without the headers', () => {
    const files = parsePatch(patch, [
      { path: 'a.txt', added: 1, removed: 1 },
      { path: 'img.png', added: null, removed: null },
      { path: 'n.txt', added: 1, removed: 1 },
    ]);
    expect(files.map((f) => f.lines)).toEqual([
      [
        { kind: 'hunk', text: '@@ -1,3 +1,3 @@' },
        { kind: 'ctx', text: 'one' },
        { kind: 'del', text: 'two' },
        { kind: 'add', text: 'TWO' },
        { kind: 'ctx', text: 'three' },
      ],
      [{ kind: 'note', text: 'Binary files /dev/null and b/img.png differ' }],
      [
        { kind: 'hunk', text: '@@ -1 +1 @@' },
        { kind: 'del', text: 'x' },
        { kind: 'note', text: '\\ No newline at end of file' },
        { kind: 'add', text: 'y' },
      ],
    ]);
    expect(files.every((f) => !f.cut)).toBe(true);
  });

  it("cuts a long file and long lines, within a frame's size", () => {
    const long = ['diff --git a/big b/big', '@@ -0,0 +1,900 @@', ...Array.from({ length: 900 }, () => `+${'x'.repeat(1000)}`)].join('\n');
    const [big] = parsePatch(long, [{ path: 'big', added: 900, removed: 0 }]);
    expect(big?.cut).toBe(true);
    expect(big?.lines).toHaveLength(DIFF_LIMITS.linesPerFile);
    expect(big?.lines[1]?.text).toHaveLength(DIFF_LIMITS.lineChars);
  });
});

describe('serviceFoldersToDeny', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ord-deny-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('opens the one way to the worktree: every other entry of the folders on the way is denied, known ones before they exist', async () => {
    const data = path.join(root, 'data');
    const runtime = path.join(root, 'run');
    await mkdir(path.join(data, 'jobs'), { recursive: true });
    await mkdir(path.join(data, 'worktrees', 'job_a'), { recursive: true });
    await mkdir(path.join(data, 'worktrees', 'job_b'), { recursive: true });
    await writeFile(path.join(data, 'stray.json'), '{}');
    await symlink(path.join(root, 'run'), path.join(data, 'link'));
    const allowed = path.join(data, 'worktrees', 'job_a');

    const denied = await serviceFoldersToDeny([runtime, data], [path.join(data, 'jobs'), path.join(data, 'claude-config')], allowed);

    expect(denied.dirs.sort()).toEqual(
      [runtime, path.join(data, 'claude-config'), path.join(data, 'jobs'), path.join(data, 'link'), path.join(data, 'worktrees', 'job_b')].sort(),
    );
    expect(denied.files.sort()).toEqual([path.join(data, 'link'), path.join(data, 'stray.json')].sort());
    expect([...denied.dirs, ...denied.files].some((p) => allowed.startsWith(p))).toBe(false);
  });
});

describe('Worktrees, with the real git', () => {
  let root: string;
  let repo: string;
  let base: string;
  let worktrees: Worktrees;
  const logged: string[] = [];

  const template = new RepoTemplate({ 'a.txt': 'one\ntwo\n', 'src/keep.ts': 'export const keep = 1;\n', 'old.txt': 'to be removed\n' });

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ord-worktrees-'));
    repo = path.join(root, 'repo');
    base = await template.copyTo(repo);
    worktrees = new Worktrees({ dir: path.join(root, 'data', 'worktrees'), log: (line) => logged.push(line) });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  afterAll(async () => {
    await template.remove();
  });

  const isolationOf = async (jobId = JOB): Promise<JobIsolation> => {
    const probe = await worktrees.probe(repo);
    if (probe.kind !== 'repo' || probe.head === null) throw new Error('not a repository with a commit');
    const made = await worktrees.create({ jobId, repo: probe.root, base: probe.head });
    return {
      mode: 'worktree',
      note: null,
      repo: probe.root,
      ...made,
      baseCommit: probe.head,
      baseDirty: probe.dirty,
      worktreeState: 'present',
      savedCommit: null,
      headCommit: null,
      changes: null,
      problem: null,
    };
  };

  it('probes: a repository (its top from a subfolder, HEAD, clean or dirty), one with no commit, and a plain folder', async () => {
    expect(await worktrees.probe(path.join(repo, 'src'))).toEqual({ kind: 'repo', root: repo, head: base, dirty: false });
    await writeFile(path.join(repo, 'untracked.txt'), 'new\n');
    expect(await worktrees.probe(repo)).toMatchObject({ dirty: true });
    const empty = path.join(root, 'empty');
    await mkdir(empty);
    await gitIn(empty, ['init', '--quiet']);
    expect(await worktrees.probe(empty)).toMatchObject({ kind: 'repo', head: null });
    const plain = path.join(root, 'plain');
    await mkdir(plain);
    expect(await worktrees.probe(plain)).toEqual({ kind: 'none', reason: 'not inside a git repository' });
  });

  it('answers "not inside a git repository" without asking git only when nothing of git\'s is above the folder', async () => {
    // No git on this PATH: an answer that needed git says so.
    const noGit = new Worktrees({ dir: path.join(root, 'data', 'worktrees'), env: { ...process.env, PATH: path.join(root, 'no-such-folder') } });
    const plain = path.join(root, 'plain', 'deeper');
    await mkdir(plain, { recursive: true });
    expect(await noGit.probe(plain)).toEqual({ kind: 'none', reason: 'not inside a git repository' });
    // A `.git` above (a work tree's) or a `HEAD` (a bare repository's) leaves the answer to git.
    for (const marker of ['.git', 'HEAD']) {
      const folder = path.join(root, `under-${marker}`);
      await mkdir(path.join(folder, 'sub'), { recursive: true });
      await writeFile(path.join(folder, marker), '');
      expect(await noGit.probe(path.join(folder, 'sub'))).toEqual({ kind: 'none', reason: 'git is not installed' });
    }
    // With git, a folder inside a bare repository is in no work tree.
    const bare = path.join(root, 'bare.git');
    await mkdir(bare);
    await gitIn(bare, ['init', '--quiet', '--bare']);
    expect(await worktrees.probe(bare)).toMatchObject({ kind: 'none', reason: expect.stringMatching(/^not in a git work tree/) });
  });

  it("makes the worktree outside the user's tree, on a new branch from HEAD, leaving the tree, index and HEAD as they were", async () => {
    await writeFiles(repo, { 'a.txt': 'one\ntwo\nuncommitted\n', 'scratch.txt': 'mine\n' });
    const before = { state: await repoState(repo), tree: await treeOf(repo) };

    const isolation = await isolationOf();

    expect(isolation.worktree).toBe(path.join(root, 'data', 'worktrees', JOB));
    expect(isolation.branch).toBe('delegate/k3m9qz');
    expect(isolation.baseDirty).toBe(true);
    // The worktree holds the commit, not the user's uncommitted changes.
    expect(await treeOf(isolation.worktree ?? '')).toEqual({ 'a.txt': 'one\ntwo\n', 'src/keep.ts': 'export const keep = 1;\n', 'old.txt': 'to be removed\n' });
    expect({ state: await repoState(repo), tree: await treeOf(repo) }).toEqual(before);
    expect(await worktreeList(repo)).toContain(`branch refs/heads/delegate/k3m9qz`);
  });

  it('takes the whole job id as the branch when the short name is taken', async () => {
    await gitIn(repo, ['branch', 'delegate/k3m9qz']);
    expect((await isolationOf()).branch).toBe('delegate/20261130T091500Z_k3m9qz');
  });

  it("commits what the delegate left uncommitted onto its branch, as the service, and keeps the delegate's own commits", async () => {
    const isolation = await isolationOf();
    const wt = isolation.worktree ?? '';
    await writeFiles(wt, { 'committed.txt': 'by the delegate\n' });
    await gitIn(wt, ['add', 'committed.txt']);
    await gitIn(wt, ['commit', '--quiet', '-m', 'the delegate commits']);
    await writeFiles(wt, { 'new.txt': 'created\n', 'a.txt': 'one\nTWO\n' });
    await rm(path.join(wt, 'old.txt'));
    const before = await repoState(repo);

    const task = 'Add a retry to the fetch client\u001b[31m, with\ttests';
    const sealed = await worktrees.saveToBranch(isolation, { jobId: JOB, state: 'cancelled', reason: 'Cancelled on request.', task, model: 'z-ai/glm-4.7' });

    expect(sealed.problem).toBeNull();
    expect(sealed.savedCommit).toMatch(/^[0-9a-f]{40}$/);
    expect(sealed.headCommit).toBe(sealed.savedCommit);
    expect(sealed.changes).toEqual({ files: 4, added: 3, removed: 2 });
    const commits = await commitsSince(repo, base, 'delegate/k3m9qz');
    expect(commits).toEqual([
      // What was asked, control characters gone, as the subject (issue 38); which job and model, as trailers.
      { author: `${SERVICE_AUTHOR.name} <${SERVICE_AUTHOR.email}>`, subject: 'Add a retry to the fetch client [31m, with tests' },
      { author: 'Test User <test@example.invalid>', subject: 'the delegate commits' },
    ]);
    const trailers = await gitIn(repo, ['log', '-1', '--format=%(trailers:only,unfold)', 'delegate/k3m9qz']);
    expect(trailers.trim().split('\n')).toEqual([`Delegate-Job: ${JOB}`, 'Delegate-Model: z-ai/glm-4.7']);
    expect(await branchFiles(repo, 'delegate/k3m9qz')).toEqual({
      'a.txt': 'one\nTWO\n',
      'committed.txt': 'by the delegate\n',
      'new.txt': 'created\n',
      'src/keep.ts': 'export const keep = 1;\n',
    });
    expect(await repoState(repo)).toEqual(before);
    // Nothing left to commit the second time.
    expect((await worktrees.saveToBranch(sealed, { jobId: JOB, state: 'succeeded', reason: null })).savedCommit).toBeNull();
  });

  it("takes each kind of change a delegate leaves, alone: a file only staged, an untracked one deep in a new folder under an odd name; and nothing from one that left only ignored files and the sandbox's empty ones", async () => {
    const end = (isolation: JobIsolation) => worktrees.saveToBranch(isolation, { jobId: JOB, state: 'succeeded', reason: null });
    // Staged by the delegate, never committed.
    const staged = await isolationOf('job_20260101T000000Z_st4ged');
    await writeFiles(staged.worktree ?? '', { 'a.txt': 'one\nstaged\n' });
    await gitIn(staged.worktree ?? '', ['add', 'a.txt']);
    expect(await end(staged)).toMatchObject({ savedCommit: expect.stringMatching(/^[0-9a-f]{40}$/), changes: { files: 1, added: 1, removed: 1 } });
    // Untracked only, in folders git has never seen, its name with a space and a newline.
    const deep = await isolationOf('job_20260101T000000Z_deep01');
    await writeFiles(deep.worktree ?? '', { 'new dir/sub/odd name\nhere.txt': 'x\n' });
    const deepEnd = await end(deep);
    expect(deepEnd.savedCommit).toMatch(/^[0-9a-f]{40}$/);
    expect((await gitIn(repo, ['ls-tree', '-r', '-z', '--name-only', deep.branch ?? ''])).split('\0')).toContain('new dir/sub/odd name\nhere.txt');
    // Only what is not its work: a file the project ignores, and the empty files the sandbox makes.
    const idle = await isolationOf('job_20260101T000000Z_idle01');
    await writeFiles(idle.worktree ?? '', { '.gitignore': 'build/\n' });
    await gitIn(idle.worktree ?? '', ['add', '.gitignore']);
    await gitIn(idle.worktree ?? '', ['commit', '--quiet', '-m', 'ignore build']);
    await writeFiles(idle.worktree ?? '', { 'build/out.js': 'built\n', '.bashrc': '', '.claude/settings.json': '' });
    const idleEnd = await end(idle);
    expect(idleEnd).toMatchObject({ savedCommit: null, problem: null, changes: { files: 1, added: 1, removed: 0 } });
    expect(Object.keys(await branchFiles(repo, idle.branch ?? '')).sort()).toEqual(['.gitignore', 'a.txt', 'old.txt', 'src/keep.ts']);
    // A branch still at its base: no changes, no commit.
    const untouched = await isolationOf('job_20260101T000000Z_none01');
    expect(await end(untouched)).toMatchObject({ savedCommit: null, headCommit: base, changes: { files: 0, added: 0, removed: 0 } });
  });

  it("never runs a program the delegate put in a submodule's git config: its end does not look inside the submodule, and still takes a submodule's new commit", async () => {
    // The user's repository has a submodule, `sub`: in a worktree it is an empty folder, the delegate's to fill.
    const inner = path.join(root, 'inner');
    await new RepoTemplate({ 'lib.txt': 'lib\n' }).copyTo(inner);
    const innerHead = (await gitIn(inner, ['rev-parse', 'HEAD'])).trim();
    await gitIn(repo, ['update-index', '--add', '--cacheinfo', `160000,${innerHead},sub`]);
    await gitIn(repo, ['commit', '--quiet', '-m', 'add the submodule']);
    const isolation = await isolationOf();
    const wt = isolation.worktree ?? '';
    const ran = path.join(root, 'filter-ran');
    // A repository of the delegate's own in that folder, at the recorded commit, whose config runs a program as a clean
    // filter; a file touched after its commit, so a git asking whether it changed would run the filter.
    const sub = path.join(wt, 'sub');
    await rm(sub, { recursive: true, force: true });
    await gitIn(root, ['clone', '--quiet', inner, sub]);
    await gitIn(sub, ['config', 'filter.evil.clean', `sh -c 'touch ${ran}; cat'`]);
    await writeFiles(sub, { '.git/info/attributes': '* filter=evil\n' });
    const later = new Date(Date.now() + 60_000);
    await utimes(path.join(sub, 'lib.txt'), later, later);

    const untouched = await worktrees.saveToBranch(isolation, { jobId: JOB, state: 'succeeded', reason: null });
    expect(existsSync(ran)).toBe(false);
    // Nor does the look at a folder before a job starts there (an in-place job's delegate writes the user's own).
    expect(await worktrees.probe(wt)).toMatchObject({ kind: 'repo', dirty: false });
    expect(existsSync(ran)).toBe(false);
    expect(untouched).toMatchObject({ savedCommit: null, problem: null });

    // A new commit in the submodule is the delegate's work: the branch takes the submodule's new commit.
    await writeFiles(sub, { 'lib.txt': 'lib two\n' });
    await gitIn(sub, ['-c', 'filter.evil.clean=cat', 'commit', '--quiet', '-am', 'move the submodule']);
    const moved = (await gitIn(sub, ['rev-parse', 'HEAD'])).trim();
    const saved = await worktrees.saveToBranch(untouched, { jobId: JOB, state: 'succeeded', reason: null });
    expect(saved.savedCommit).toMatch(/^[0-9a-f]{40}$/);
    expect((await gitIn(repo, ['ls-tree', saved.branch ?? '', 'sub'])).trim()).toBe(`160000 commit ${moved}\tsub`);
    expect(existsSync(ran)).toBe(false);
  });

  it('never goes through a .git file the delegate rewrote: a git folder of its own, with programs in its config, is never read', async () => {
    const isolation = await isolationOf();
    const wt = isolation.worktree ?? '';
    const ran = path.join(root, 'a-program-ran');
    // What a delegate with nothing but file tools could write: its own git folder, and the worktree's .git pointing there.
    const evil = path.join(wt, 'evil');
    await gitIn(root, ['init', '--quiet', '--bare', evil]);
    await writeFile(
      path.join(evil, 'config'),
      `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "touch ${ran}-fsmonitor; false"\n[filter "x"]\n\tclean = "sh -c 'touch ${ran}-filter; cat'"\n`,
    );
    await writeFiles(wt, { '.gitattributes': '* filter=x\n', 'work.txt': 'done\n', '.git': `gitdir: ${evil}\n` });

    const sealed = await worktrees.saveToBranch(isolation, { jobId: JOB, state: 'succeeded', reason: null });

    expect(sealed.problem).toBeNull();
    expect(existsSync(`${ran}-fsmonitor`)).toBe(false);
    expect(existsSync(`${ran}-filter`)).toBe(false);
    expect(await branchFiles(repo, 'delegate/k3m9qz')).toMatchObject({ 'work.txt': 'done\n', '.gitattributes': '* filter=x\n' });
  });

  it('gets past the index lock a killed git left in the worktree', async () => {
    const isolation = await isolationOf();
    const wt = isolation.worktree ?? '';
    await writeFiles(wt, { 'half.txt': 'written before the kill\n' });
    const lock = path.resolve(wt, (await gitIn(wt, ['rev-parse', '--git-path', 'index.lock'])).trim());
    await writeFile(lock, '');

    const sealed = await worktrees.saveToBranch(isolation, { jobId: JOB, state: 'timed_out', reason: null });

    expect(sealed.problem).toBeNull();
    expect((await branchFiles(repo, 'delegate/k3m9qz'))['half.txt']).toBe('written before the kill\n');
  });

  it('lists what the branch changed with the commands to see and take it', async () => {
    const isolation = await isolationOf();
    await writeFiles(isolation.worktree ?? '', { 'new.txt': 'a\nb\n' });
    const sealed = await worktrees.saveToBranch(isolation, { jobId: JOB, state: 'succeeded', reason: null });

    const changes = await worktrees.changes(sealed);

    const short = (await gitIn(repo, ['rev-parse', '--short', base])).trim();
    expect(changes).toEqual({
      repo,
      branch: 'delegate/k3m9qz',
      baseCommit: base,
      baseShort: short,
      headCommit: sealed.headCommit,
      baseDirty: false,
      files: [{ path: 'new.txt', added: 2, removed: 0 }],
      totalFiles: 1,
      added: 2,
      removed: 0,
      commands: { diff: `git diff ${short}..delegate/k3m9qz`, merge: 'git merge delegate/k3m9qz', cherryPick: `git cherry-pick ${short}..delegate/k3m9qz` },
      worktree: isolation.worktree,
    });
    // The commands do what they say, from the user's repository.
    expect(await gitIn(repo, changes?.commands.diff.split(' ').slice(1) ?? [])).toContain('+a\n+b');
  });

  it("gives the branch's diff line by line, file by file", async () => {
    const isolation = await isolationOf();
    await writeFiles(isolation.worktree ?? '', { 'a.txt': 'one\nTWO\n', 'new.txt': 'fresh\n' });
    await rm(path.join(isolation.worktree ?? '', 'old.txt'));
    const sealed = await worktrees.saveToBranch(isolation, { jobId: JOB, state: 'succeeded', reason: null });

    const diff = await worktrees.diff(sealed);

    expect(diff?.totalFiles).toBe(3);
    expect(diff?.files.map((f) => [f.path, f.lines.filter((l) => l.kind === 'add' || l.kind === 'del').map((l) => `${l.kind} ${l.text}`)])).toEqual([
      ['a.txt', ['del two', 'add TWO']],
      ['new.txt', ['add fresh']],
      ['old.txt', ['del to be removed']],
    ]);
  });

  it('reports a worktree deleted by hand, and lets git forget it', async () => {
    const isolation = await isolationOf();
    await rm(isolation.worktree ?? '', { recursive: true, force: true });

    const sealed = await worktrees.saveToBranch(isolation, { jobId: JOB, state: 'failed', reason: null });

    expect(sealed.worktreeState).toBe('missing');
    expect(sealed.problem).toContain('was deleted before the job ended');
    expect(await worktreeList(repo)).not.toContain(isolation.worktree ?? '');
    expect(await branches(repo)).toContain('delegate/k3m9qz');
  });

  it('removes a worktree only once its branch is merged into another, never before', async () => {
    const isolation = await isolationOf();
    await writeFiles(isolation.worktree ?? '', { 'new.txt': 'work\n' });
    const sealed = await worktrees.saveToBranch(isolation, { jobId: JOB, state: 'succeeded', reason: null });

    expect(await worktrees.removeIfMerged(sealed)).toBe('unmerged');
    expect(existsSync(isolation.worktree ?? '')).toBe(true);
    expect(await branches(repo)).toContain('delegate/k3m9qz');

    await gitIn(repo, ['merge', '--quiet', '--no-edit', 'delegate/k3m9qz']);
    expect(await worktrees.removeIfMerged(sealed)).toBe('removed');
    expect(existsSync(isolation.worktree ?? '')).toBe(false);
    expect(await branches(repo)).toEqual(['main']);
    expect(await treeOf(repo)).toMatchObject({ 'new.txt': 'work\n' });
  });

  it('keeps a merged worktree someone changed after the job ended', async () => {
    const isolation = await isolationOf();
    await writeFiles(isolation.worktree ?? '', { 'later.txt': 'edited after the job\n' });

    expect(await worktrees.removeIfMerged(isolation)).toBe('kept');
    expect(existsSync(path.join(isolation.worktree ?? '', 'later.txt'))).toBe(true);
  });

  it('discards on request: the worktree, changes in it included, and the branch; the last commit is named', async () => {
    const isolation = await isolationOf();
    await writeFiles(isolation.worktree ?? '', { 'new.txt': 'work\n' });
    const sealed = await worktrees.saveToBranch(isolation, { jobId: JOB, state: 'succeeded', reason: null });
    await writeFiles(isolation.worktree ?? '', { 'uncommitted.txt': 'after\n' });

    const outcome = await worktrees.discard(sealed);

    expect(outcome).toEqual({ removedWorktree: true, deletedBranch: true, lastCommit: sealed.headCommit });
    expect(existsSync(isolation.worktree ?? '')).toBe(false);
    expect(await branches(repo)).toEqual(['main']);
    expect(await worktreeList(repo)).not.toContain(isolation.worktree ?? '');
  });
});
