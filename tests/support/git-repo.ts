/**
 * Real git repositories for the isolation tests: made with the machine's `git`, committed as a test author (no git
 * config needed), and read back — status, files, a branch's commits — the way a user would look.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The machine's git, without the test process's own GIT_* variables, as a test author. */
export async function gitIn(dir: string, args: string[]): Promise<string> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_')));
  const { stdout } = await run('git', ['-c', 'user.name=Test User', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false', ...args], {
    cwd: dir,
    env: { ...env, GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' },
  });
  return stdout;
}

/** `git init` in `dir` (made if need be) with `files` committed on main; returns the commit. */
export async function makeRepo(dir: string, files: Record<string, string>): Promise<string> {
  await mkdir(dir, { recursive: true });
  await gitIn(dir, ['init', '--quiet', '-b', 'main']);
  await writeFiles(dir, files);
  await gitIn(dir, ['add', '--all']);
  await gitIn(dir, ['commit', '--quiet', '-m', 'initial']);
  return (await gitIn(dir, ['rev-parse', 'HEAD'])).trim();
}

/**
 * A repository made once with git (makeRepo, then `prepare`) and copied for each test that needs one as it was made.
 * Nothing in a new repository's .git names its folder, so git cannot tell a copy from one it made (the index's file
 * times differ, and git compares those files' contents instead); a copy costs one `cp`, where makeRepo costs four gits.
 * Every test still has a repository of its own.
 */
export class RepoTemplate {
  private made: Promise<{ root: string; repo: string; base: string }> | null = null;

  constructor(
    private readonly files: Record<string, string>,
    private readonly prepare: (repo: string) => Promise<void> = async () => undefined,
  ) {}

  /** A copy of the repository at `dir` (which must not exist); returns its first commit. */
  async copyTo(dir: string): Promise<string> {
    this.made ??= this.make();
    const { repo, base } = await this.made;
    // `cp -a` copies a new .git in a third of the time fs.cp takes (one file at a time, several calls each).
    if (process.platform === 'win32') await cp(repo, dir, { recursive: true, errorOnExist: true, force: false });
    else await run('cp', ['-a', repo, dir]);
    return base;
  }

  /** Removes the repository the copies are made from (afterAll). */
  async remove(): Promise<void> {
    const made = this.made;
    this.made = null;
    if (made) await rm((await made).root, { recursive: true, force: true });
  }

  private async make(): Promise<{ root: string; repo: string; base: string }> {
    const root = await mkdtemp(path.join(os.tmpdir(), 'od-repo-template-'));
    const repo = path.join(root, 'repo');
    const base = await makeRepo(repo, this.files);
    await this.prepare(repo);
    return { root, repo, base };
  }
}

export async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  }
}

/** Every file under `dir` but .git, by relative path, with its text: the tree as the user sees it. */
export async function treeOf(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const visit = async (sub: string): Promise<void> => {
    for (const entry of await readdir(path.join(dir, sub), { withFileTypes: true })) {
      const name = path.join(sub, entry.name);
      if (entry.name === '.git') continue;
      if (entry.isDirectory()) await visit(name);
      else files[name] = await readFile(path.join(dir, name), 'utf8');
    }
  };
  await visit('');
  return files;
}

/** What the user would check first: `git status --porcelain`, the index's own listing, and HEAD. */
export async function repoState(dir: string): Promise<{ status: string; index: string; head: string; branch: string }> {
  return {
    status: await gitIn(dir, ['status', '--porcelain', '--untracked-files=all']),
    index: await gitIn(dir, ['ls-files', '--stage']),
    head: (await gitIn(dir, ['rev-parse', 'HEAD'])).trim(),
    branch: (await gitIn(dir, ['symbolic-ref', '--short', 'HEAD'])).trim(),
  };
}

/** A branch's files and their text at its tip. */
export async function branchFiles(repo: string, branch: string): Promise<Record<string, string>> {
  const names = (await gitIn(repo, ['ls-tree', '-r', '--name-only', branch])).split('\n').filter(Boolean);
  const files: Record<string, string> = {};
  for (const name of names) files[name] = await gitIn(repo, ['show', `${branch}:${name}`]);
  return files;
}

/** The branch's commits since `base`, newest first: author and subject. */
export async function commitsSince(repo: string, base: string, branch: string): Promise<Array<{ author: string; subject: string }>> {
  const log = await gitIn(repo, ['log', '--format=%an <%ae>%x09%s', `${base}..${branch}`]);
  return log
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [author = '', subject = ''] = line.split('\t');
      return { author, subject };
    });
}

export async function branches(repo: string): Promise<string[]> {
  return (await gitIn(repo, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/'])).split('\n').filter(Boolean);
}

export async function worktreeList(repo: string): Promise<string> {
  return gitIn(repo, ['worktree', 'list', '--porcelain']);
}

/** What startWithRepo needs of a test world (tests/support/faults.ts's FaultWorld). */
interface RepoWorld<Client> {
  project: string;
  start(settings: Record<string, unknown>): Promise<void>;
  serve(): Promise<unknown>;
  connect(): Promise<Client>;
}

/** Starts the world with its project as a git repository holding `files`, then its service; returns the first commit. */
export async function startWithRepo<Client>(
  world: RepoWorld<Client>,
  files: Record<string, string>,
  settings: Record<string, unknown> = {},
): Promise<{ base: string; client: Client }> {
  await world.start(settings);
  const base = await makeRepo(world.project, files);
  await world.serve();
  return { base, client: await world.connect() };
}
