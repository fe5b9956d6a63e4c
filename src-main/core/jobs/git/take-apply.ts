/**
 * The user's side of a take, once take-git.ts has planned it cleanly (docs/ISOLATION.md, "Taking the work"): the
 * commit the user's branch moves to is made in git's object store, then the index and the files the take changes,
 * then the branch, compare-and-swap. A step that fails puts back what the steps before it changed.
 */
import { lstat, rm } from 'node:fs/promises';
import path from 'node:path';
import type { TakePlan, TakeWay } from '../../../contract/index.js';
import { errorCode, errorMessage } from '../../../common/errors.js';
import { allOrFirstError } from '../../../common/promises.js';
import { git } from './git.js';
import type { GitOptions } from './git.js';

/** The real git (git.ts), or a test's wrapper round it. */
export type GitRun = (args: readonly string[], options: GitOptions) => Promise<{ stdout: string; code: number }>;

/** The branch to take and what its commits' messages are made from. */
export interface TakeSource {
  repo: string;
  branch: string;
  /** The commit the branch was made from. */
  base: string;
  /** The first line of the squash commit's message (the job's task), and the line that says whose work it is. */
  task: string;
  credit: string;
  /** How many days after the job ended its worktree and branch may go, once taken (the user's retentionDays). */
  retentionDays: number;
}

/** Where the work goes: the branch HEAD is on, and its commit. */
export interface UserPlace {
  into: string;
  ref: string;
  head: string;
}

/** A way, planned: what the preview says of it, and what doing it needs. */
export interface PlannedWay extends TakePlan {
  /** The tree the user's branch will have. */
  tree: string | null;
  /** The paths it changes, each with how (A, M, D, T: `git diff --name-status`). */
  paths: Map<string, string>;
  /** A rebase's commits, each with the tree it leads to once replayed. */
  replayed: Replayed[];
}

/** A commit of the delegate's, and the tree it leads to once replayed onto the user's branch. */
export interface Replayed {
  commit: string;
  tree: string;
}

/** Thrown when a take is refused: the message says why and what to do; nothing was touched (or all was put back). */
export class TakeRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TakeRefused';
  }
}

/** git in the repository the work is taken into: the real one with the service's environment, or a test's wrapper. */
export class TakeRepository {
  protected readonly source: TakeSource;
  protected readonly env: NodeJS.ProcessEnv | undefined;
  protected readonly runGit: GitRun;

  constructor(source: TakeSource, options: { env?: NodeJS.ProcessEnv | undefined; run?: GitRun } = {}) {
    this.source = source;
    this.env = options.env;
    this.runGit = options.run ?? git;
  }

  protected git(args: readonly string[], more: Omit<GitOptions, 'cwd' | 'env'> = {}) {
    return this.runGit(args, { cwd: this.source.repo, ...(this.env ? { env: this.env } : {}), ...more });
  }

  protected async line(args: readonly string[]): Promise<string> {
    return (await this.git(args)).stdout.trim();
  }

  protected async occupied(file: string): Promise<boolean> {
    return lstat(path.join(this.source.repo, file)).then(
      () => true,
      (error: unknown) => errorCode(error) !== 'ENOENT',
    );
  }

  /** Does a plan the survey found clean: the commit the user's branch moves to, then the files and the branch. */
  protected async apply(plan: PlannedWay, place: UserPlace, tip: string): Promise<string> {
    const after = await this.commitFor(plan, place, tip);
    await this.moveBranch(place, after, plan.paths, plan.how);
    return after;
  }

  /** The commit the user's branch moves to: the branch's own tip, a merge or squash commit, or the replayed commits' last. */
  private async commitFor(plan: PlannedWay, place: UserPlace, tip: string): Promise<string> {
    if (plan.fastForward) return tip;
    if (plan.how === 'rebase') {
      let parent = place.head;
      for (const step of plan.replayed) parent = await this.recommit(step, parent);
      return parent;
    }
    const parents = plan.how === 'merge' ? [place.head, tip] : [place.head];
    const made = await this.git(['commit-tree', plan.tree ?? '', ...parents.flatMap((p) => ['-p', p]), '-F', '-'], { input: plan.message ?? '' });
    return made.stdout.trim();
  }

  /** A replayed commit: its tree on `parent`, its author, date and message as they were; the user commits it. */
  private async recommit(step: Replayed, parent: string): Promise<string> {
    const [author, { stdout: message }] = await allOrFirstError([
      this.line(['log', '-1', '--format=%an%x00%ae%x00%ad', '--date=raw', step.commit]),
      this.git(['log', '-1', '--format=%B', step.commit]),
    ] as const);
    const [name = '', email = '', date = ''] = author.split('\0');
    const made = await this.git(['commit-tree', step.tree, '-p', parent, '-F', '-'], {
      input: message,
      vars: { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_AUTHOR_DATE: date },
    });
    return made.stdout.trim();
  }

  /**
   * The user's side, in two steps: the index and the files that change (`read-tree -m -u`: two-tree, so every other
   * path's uncommitted change stays, and git refuses before it writes when a changed path is not clean), then the
   * branch, only if it is still where it was. A failed step puts back what the one before it changed.
   */
  private async moveBranch(place: UserPlace, after: string, paths: ReadonlyMap<string, string>, how: TakeWay): Promise<void> {
    // The index's file times, brought up to date (as `git status` or `git merge` would): read-tree goes by them, and
    // would take a file that was only touched for one that was changed. Exit 1 just says some files are changed.
    await this.git(['update-index', '-q', '--refresh'], { okCodes: [0, 1] });
    try {
      await this.git(['read-tree', '-m', '-u', place.head, after]);
    } catch (error) {
      await this.putBack(after, paths);
      throw new TakeRefused(`git could not update your files (${errorMessage(error)}): nothing was taken; your files are as they were. Take again.`);
    }
    try {
      await this.git(['update-ref', '-m', `openrouter-delegate take --${how} ${this.source.branch}`, place.ref, after, place.head]);
    } catch (error) {
      const back = await this.git(['read-tree', '-m', '-u', after, place.head]).then(
        () => 'your files are as they were',
        () => `your files hold the take's changes, staged: \`git read-tree -m -u ${after} ${place.head}\` puts them back`,
      );
      throw new TakeRefused(`${place.into} could not be moved (${errorMessage(error)}; did it change meanwhile?): nothing was taken; ${back}. Take again.`);
    }
  }

  /**
   * After a `read-tree -u` that failed: git writes the index last, so it still holds HEAD's entries, and the files
   * it wrote before it failed are the take's. Each such file is put back from the index (or removed, if the take
   * added it); a file holding anything else (the user's) is left as it is.
   */
  private async putBack(after: string, paths: ReadonlyMap<string, string>): Promise<void> {
    for (const [file, kind] of paths) {
      const theirs = kind === 'D' ? null : await this.blobOf(`${after}:${file}`);
      const current = (await this.occupied(file))
        ? await this.git(['hash-object', '--', file]).then(
            (r) => r.stdout.trim(),
            () => 'unreadable',
          )
        : null;
      if (current !== theirs) continue;
      if (kind === 'A') await rm(path.join(this.source.repo, file), { force: true }).catch(() => undefined);
      else await this.git(['checkout-index', '--force', '--quiet', '--', file]).catch(() => undefined);
    }
  }

  private async blobOf(name: string): Promise<string | null> {
    const found = await this.git(['rev-parse', '--verify', '--quiet', name], { okCodes: [0, 1, 128] });
    return found.code === 0 ? found.stdout.trim() : null;
  }
}
