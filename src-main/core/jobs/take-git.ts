/**
 * Taking a delegate's branch into the user's current branch, with the real git (docs/ISOLATION.md, "Taking the work").
 * Every way is worked out in git's object store first: `git merge-tree --write-tree` (git ≥ 2.38) finds a conflict
 * before anything is touched, and a rebase replays each commit there (a three-way merge on the commit's parent), never
 * in the delegate's worktree or on its branch. Only then is anything changed, in two steps on the user's side: the
 * index and the files the take changes (`git read-tree -m -u`, which keeps every other uncommitted change as it is),
 * then the branch, compare-and-swap. A step that fails puts back what the steps before it changed. Whatever cannot be
 * done cleanly is refused, saying what to do, with nothing touched.
 */
import { lstat, rm } from 'node:fs/promises';
import path from 'node:path';
import { TAKE_WAYS } from '../../contract/index.js';
import type { TakePlan, TakeWay } from '../../contract/index.js';
import { errorCode, errorMessage } from '../../common/errors.js';
import { git } from './git.js';
import type { GitOptions } from './git.js';
import { CLEANUP_LIMITS, findTaken } from './worktree-cleanup.js';
import type { Taken } from './worktree-cleanup.js';
import { BRANCH_PREFIX, SERVICE_AUTHOR, countChanges, parseNumstat } from './worktrees.js';

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

interface Replayed {
  commit: string;
  tree: string;
}

export interface TakeSurvey {
  place: UserPlace | null;
  tip: string | null;
  /** The delegate's commits not in the user's branch yet. */
  branchCommits: number;
  /** A refusal of every way (the repository's state, the branch), or null: each way says for itself. */
  refusal: string | null;
  ways: PlannedWay[];
}

export interface TakeDone {
  how: TakeWay;
  into: string;
  before: string;
  after: string;
  plan: PlannedWay;
  taken: Taken;
}

/** Thrown when a take is refused: the message says why and what to do; nothing was touched (or all was put back). */
export class TakeRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TakeRefused';
  }
}

/** What runs in the middle of a take in the user's repository would break, found by the files git keeps for it. */
const UNDER_WAY: ReadonlyArray<readonly [file: string, what: string, fix: string]> = [
  ['MERGE_HEAD', 'A merge', 'finish it (`git commit`) or abort it (`git merge --abort`)'],
  ['rebase-merge', 'A rebase', 'finish it (`git rebase --continue`) or abort it (`git rebase --abort`)'],
  ['rebase-apply', 'A rebase or `git am`', 'finish it (`--continue`) or abort it (`--abort`)'],
  ['CHERRY_PICK_HEAD', 'A cherry-pick', 'finish it (`git cherry-pick --continue`) or abort it (`git cherry-pick --abort`)'],
  ['REVERT_HEAD', 'A revert', 'finish it (`git revert --continue`) or abort it (`git revert --abort`)'],
  ['BISECT_LOG', 'A bisect', 'end it (`git bisect reset`)'],
  ['index.lock', 'Another git command', 'let it end (if none runs, a git that crashed left `.git/index.lock`: remove it)'],
];

/** `git merge-tree --write-tree` came with git 2.38. */
const MERGE_TREE_SINCE = [2, 38] as const;

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** At most `max` names, then how many more. */
function someOf(names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

const EMPTY_EFFECT = { commits: 0, fastForward: false, files: 0, added: 0, removed: 0, message: null };

function refusedWay(how: TakeWay, refusal: string): PlannedWay {
  return { how, refusal, ...EMPTY_EFFECT, tree: null, paths: new Map(), replayed: [] };
}

/** A commit's change merged onto another tree: the tree it leads to, or the files it conflicts in. */
type Merged = { tree: string } | { conflicts: string[] };

export class BranchTake {
  private readonly source: TakeSource;
  private readonly env: NodeJS.ProcessEnv | undefined;
  private readonly runGit: GitRun;

  constructor(source: TakeSource, options: { env?: NodeJS.ProcessEnv | undefined; run?: GitRun } = {}) {
    this.source = source;
    this.env = options.env;
    this.runGit = options.run ?? git;
  }

  private git(args: readonly string[], more: Omit<GitOptions, 'cwd' | 'env'> = {}) {
    return this.runGit(args, { cwd: this.source.repo, ...(this.env ? { env: this.env } : {}), ...more });
  }

  private async line(args: readonly string[]): Promise<string> {
    return (await this.git(args)).stdout.trim();
  }

  /** What each way (all three, or `only`) would do, or why it would be refused; changes nothing the user can see. */
  async survey(only?: TakeWay): Promise<TakeSurvey> {
    const ways = only ? [only] : [...TAKE_WAYS];
    const refuseAll = (refusal: string, place: UserPlace | null = null, tip: string | null = null, branchCommits = 0): TakeSurvey => ({
      place,
      tip,
      branchCommits,
      refusal,
      ways: ways.map((how) => refusedWay(how, refusal)),
    });
    const { repo, branch, base } = this.source;
    if (!(await lstat(repo).catch(() => null))?.isDirectory()) return refuseAll(`The repository ${repo} is gone: there is nothing to take the work into.`);
    const tooOld = await this.gitTooOld();
    if (tooOld) return refuseAll(tooOld);
    const place = await this.userPlace();
    if (typeof place === 'string') return refuseAll(place);
    const underWay = await this.operationUnderWay();
    if (underWay) return refuseAll(underWay, place);
    const tip = await this.commitOf(`refs/heads/${branch}`);
    if (!tip) return refuseAll(`The branch ${branch} is gone from ${repo} (deleted by hand?): there is nothing to take.`, place);
    if (Number(await this.line(['rev-list', '--count', `${base}..${tip}`])) === 0)
      return refuseAll(`The delegate made no commit on ${branch}: there is nothing to take.`, place, tip);
    const ahead = Number(await this.line(['rev-list', '--count', `${place.head}..${tip}`]));
    const taken = await findTaken(repo, branch, base, this.env).catch(() => null);
    if (taken?.route || ahead === 0) {
      const where = taken?.into ?? place.into;
      return refuseAll(
        `The work of ${branch} is already in ${where}: there is nothing to take. Its worktree and branch go at the first prune ${plural(this.source.retentionDays, 'day')} after the job ended (\`openrouter-delegate worktrees --remove-taken\` removes them now).`,
        place,
        tip,
        ahead,
      );
    }
    const fastForward = (await this.git(['merge-base', '--is-ancestor', place.head, tip], { okCodes: [0, 1] })).code === 0;
    const dirty = await this.dirtyPaths();
    const planned: PlannedWay[] = [];
    for (const how of ways) planned.push(await this.planWay(how, place, tip, ahead, fastForward, dirty));
    return { place, tip, branchCommits: ahead, refusal: null, ways: planned };
  }

  /**
   * Takes the branch into the user's current branch by `how`, only when the survey finds it clean; else TakeRefused.
   * Run it where nothing else changes the repository's worktrees (Worktrees.exclusive).
   */
  async take(how: TakeWay): Promise<TakeDone> {
    const survey = await this.survey(how);
    const plan = survey.ways[0];
    if (!plan || !survey.place || !survey.tip) throw new TakeRefused(survey.refusal ?? 'There is nothing to take.');
    if (plan.refusal) throw new TakeRefused(plan.refusal);
    const { place, tip } = survey;
    const after = await this.commitFor(plan, place, tip);
    await this.moveBranch(place, after, plan.paths, how);
    const taken = await findTaken(this.source.repo, this.source.branch, this.source.base, this.env).catch((): Taken => ({ route: null, into: null, tip }));
    return { how, into: place.into, before: place.head, after, plan, taken };
  }

  private async gitTooOld(): Promise<string | null> {
    const said = await this.line(['version']);
    const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(said) ?? []).slice(1).map(Number);
    if (major > MERGE_TREE_SINCE[0] || (major === MERGE_TREE_SINCE[0] && minor >= MERGE_TREE_SINCE[1])) return null;
    return `Taking needs git ${MERGE_TREE_SINCE.join('.')} or newer (\`git merge-tree --write-tree\`), and this is ${said.replace(/^git version /, '')}: take the work with git yourself (\`git merge ${this.source.branch}\` in ${this.source.repo}).`;
  }

  /** The branch HEAD is on and its commit, or why the work cannot go there. */
  private async userPlace(): Promise<UserPlace | string> {
    const { repo } = this.source;
    const switchFirst = 'check out the branch to take the work into (`git switch <branch>`), then take again';
    const symbolic = await this.git(['symbolic-ref', '--quiet', 'HEAD'], { okCodes: [0, 1] });
    if (symbolic.code !== 0) {
      const at = await this.git(['rev-parse', '--short', 'HEAD'], { okCodes: [0, 128] });
      return `HEAD in ${repo} is detached${at.code === 0 ? ` (at ${at.stdout.trim()})` : ''}: ${switchFirst}.`;
    }
    const ref = symbolic.stdout.trim();
    if (!ref.startsWith('refs/heads/')) return `HEAD in ${repo} is on ${ref}, not a local branch: ${switchFirst}.`;
    const into = ref.slice('refs/heads/'.length);
    if (into.startsWith(BRANCH_PREFIX)) return `${repo} has ${into} checked out, a delegate's branch: ${switchFirst}.`;
    const head = await this.commitOf('HEAD');
    if (!head) return `${into} in ${repo} has no commit yet: ${switchFirst}.`;
    return { into, ref, head };
  }

  private async commitOf(name: string): Promise<string | null> {
    const found = await this.git(['rev-parse', '--verify', '--quiet', `${name}^{commit}`], { okCodes: [0, 1] });
    return found.code === 0 ? found.stdout.trim() : null;
  }

  /** A merge, rebase, cherry-pick, revert, bisect or another git under way in the repository, said with its way out. */
  private async operationUnderWay(): Promise<string | null> {
    const files = (await this.line(['rev-parse', ...UNDER_WAY.flatMap(([file]) => ['--git-path', file])])).split('\n');
    for (const [i, [, what, fix]] of UNDER_WAY.entries()) {
      const file = files[i];
      if (file && (await lstat(path.resolve(this.source.repo, file)).catch(() => null)))
        return `${what} is under way in ${this.source.repo}: ${fix}, then take again.`;
    }
    return null;
  }

  /** Every path with a change not committed (staged or not) or untracked, and what it is. */
  private async dirtyPaths(): Promise<Map<string, string>> {
    const status = (await this.git(['status', '--porcelain=v1', '-z', '--no-renames', '--untracked-files=all'])).stdout;
    const dirty = new Map<string, string>();
    for (const entry of status.split('\0')) {
      if (entry.length < 4) continue;
      dirty.set(entry.slice(3), entry.startsWith('??') ? 'untracked' : 'uncommitted');
    }
    return dirty;
  }

  private async planWay(how: TakeWay, place: UserPlace, tip: string, ahead: number, fastForward: boolean, dirty: Map<string, string>): Promise<PlannedWay> {
    const { branch } = this.source;
    const moves = how !== 'squash' && fastForward;
    let tree: string;
    let commits = ahead;
    let replayed: Replayed[] = [];
    if (moves) tree = await this.line(['rev-parse', `${tip}^{tree}`]);
    else if (how === 'rebase') {
      const replay = await this.replay(place, tip);
      if (typeof replay === 'string') return refusedWay(how, replay);
      if (replay.length === 0) return refusedWay(how, `Every change of ${branch} is in ${place.into} already: there is nothing to take.`);
      replayed = replay;
      tree = replay.at(-1)?.tree ?? '';
      commits = replay.length;
    } else {
      const merged = fastForward ? { tree: await this.line(['rev-parse', `${tip}^{tree}`]) } : await this.mergeTrees(place.head, tip);
      if ('conflicts' in merged)
        return refusedWay(
          how,
          `Taking ${branch} into ${place.into} conflicts in ${someOf(merged.conflicts)}: it cannot be done cleanly. Merge it with git yourself (\`git merge ${branch}\` in ${this.source.repo}, then resolve the conflicts), or discard it and delegate again from ${place.into} as it is now.`,
        );
      tree = merged.tree;
      commits = how === 'squash' ? 1 : ahead + 1;
    }
    const changed = await this.changes(place.head, tree);
    const inTheWay = await this.inTheWay(changed.kinds, dirty);
    if (inTheWay.length > 0)
      return refusedWay(
        how,
        `You have uncommitted changes in files this take would change: ${someOf(inTheWay)}. Commit or stash them (\`git stash --include-untracked\`), or move them away, then take again.`,
      );
    if (!moves && !(await this.knowsTheUser()))
      return refusedWay(
        how,
        `git does not know who you are in ${this.source.repo}, and this way makes a commit of yours: set \`git config --global user.name "Your Name"\` and \`git config --global user.email you@example.com\`, then take again.`,
      );
    const message = moves || how === 'rebase' ? null : how === 'squash' ? this.squashMessage(ahead) : this.mergeMessage();
    return { how, refusal: null, commits, fastForward: moves, ...countChanges(changed.files), message, tree, paths: changed.kinds, replayed };
  }

  private squashMessage(commits: number): string {
    const { task, credit, branch } = this.source;
    return `${task}\n\n${credit}, squashed from ${plural(commits, 'commit')} on ${branch}.\n`;
  }

  private mergeMessage(): string {
    const { task, credit, branch } = this.source;
    return `Merge branch '${branch}'\n\n${task}\n\n${credit}.\n`;
  }

  /** `git merge-tree --write-tree`: the merged tree, or the conflicted files. */
  private async mergeTrees(ours: string, theirs: string): Promise<Merged> {
    const merged = await this.git(['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages', ours, theirs], { okCodes: [0, 1] });
    const [tree = '', ...names] = merged.stdout.split('\0');
    return merged.code === 0 ? { tree: tree.trim() } : { conflicts: [...new Set(names.filter((name) => name !== ''))] };
  }

  /** A commit of the service's own, never on a branch: only a merge base for merge-tree (git collects it later). */
  private async scaffold(tree: string, parents: readonly string[]): Promise<string> {
    const identity = ['-c', `user.name=${SERVICE_AUTHOR.name}`, '-c', `user.email=${SERVICE_AUTHOR.email}`];
    return this.line([...identity, 'commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', 'openrouter-delegate take: scaffold']);
  }

  /**
   * The rebase, in the object store: each commit of the branch that the user's branch lacks, oldest first, merged onto
   * what the ones before it made, with its parent as the merge base — a cherry-pick that touches no worktree, index
   * or branch. A commit whose change is there already is dropped, as `git rebase` drops it. The trees, or a refusal.
   */
  private async replay(place: UserPlace, tip: string): Promise<Replayed[] | string> {
    const { branch } = this.source;
    const listed = (await this.line(['rev-list', '--reverse', '--topo-order', '--parents', `${place.head}..${tip}`])).split('\n').filter(Boolean);
    if (listed.length > CLEANUP_LIMITS.commitsSinceBase)
      return `${branch} has ${listed.length} commits, more than a take replays (${CLEANUP_LIMITS.commitsSinceBase}): take it by merge or squash.`;
    const commits = listed.map((line) => line.split(' '));
    if (commits.some((ids) => ids.length !== 2)) return `${branch} has a merge commit, which a rebase does not replay: take it by merge or squash.`;
    let onto = await this.line(['rev-parse', `${place.head}^{tree}`]);
    const replayed: Replayed[] = [];
    for (const [commit = '', parent = ''] of commits) {
      const mergeBase = await this.scaffold(`${parent}^{tree}`, []);
      const merged = await this.mergeTrees(await this.scaffold(onto, [mergeBase]), await this.scaffold(`${commit}^{tree}`, [mergeBase]));
      if ('conflicts' in merged) {
        const subject = await this.line(['log', '-1', '--format=%s', commit]);
        return `Replaying ${commit.slice(0, 7)} "${subject}" of ${branch} onto ${place.into} conflicts in ${someOf(merged.conflicts)}: it cannot be rebased cleanly. Take it by merge (its conflicts are yours to resolve then: \`git merge ${branch}\`), or discard it and delegate again from ${place.into} as it is now.`;
      }
      if (merged.tree === onto) continue;
      replayed.push({ commit, tree: merged.tree });
      onto = merged.tree;
    }
    return replayed;
  }

  /** The files between two trees: counts, and how each changes (A, M, D, T). */
  private async changes(from: string, to: string) {
    const files = parseNumstat((await this.git(['diff', '--numstat', '-z', '--no-renames', from, to])).stdout);
    const kinds = new Map<string, string>();
    const listed = (await this.git(['diff', '--name-status', '-z', '--no-renames', from, to])).stdout.split('\0');
    for (let i = 0; i + 1 < listed.length; i += 2) kinds.set(listed[i + 1] ?? '', listed[i] ?? '');
    return { files, kinds };
  }

  /** The paths the take would change that hold something of the user's: an uncommitted change, or a file where it adds one. */
  private async inTheWay(kinds: ReadonlyMap<string, string>, dirty: ReadonlyMap<string, string>): Promise<string[]> {
    const found: string[] = [];
    for (const [file, kind] of kinds) {
      const what = dirty.get(file);
      if (what) found.push(what === 'untracked' ? `${file} (untracked)` : file);
      // An ignored file is in no status, and git would overwrite it.
      else if (kind === 'A' && (await this.occupied(file))) found.push(`${file} (ignored)`);
    }
    return found;
  }

  private async occupied(file: string): Promise<boolean> {
    return lstat(path.join(this.source.repo, file)).then(
      () => true,
      (error: unknown) => errorCode(error) !== 'ENOENT',
    );
  }

  private async knowsTheUser(): Promise<boolean> {
    const said = await this.git(['var', 'GIT_COMMITTER_IDENT'], { okCodes: [0, 128] });
    return said.code === 0;
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
    const [name = '', email = '', date = ''] = (await this.line(['log', '-1', '--format=%an%x00%ae%x00%ad', '--date=raw', step.commit])).split('\0');
    const message = (await this.git(['log', '-1', '--format=%B', step.commit])).stdout;
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
