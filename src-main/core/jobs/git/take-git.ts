/**
 * Taking a delegate's branch into the user's current branch, with the real git (docs/ISOLATION.md, "Taking the work").
 * Every way is worked out in git's object store first: `git merge-tree --write-tree` (git ≥ 2.38) finds a conflict
 * before anything is touched, and a rebase replays each commit there (a three-way merge on the commit's parent), never
 * in the delegate's worktree or on its branch. Only then is anything changed, in two steps on the user's side: the
 * index and the files the take changes (`git read-tree -m -u`, which keeps every other uncommitted change as it is),
 * then the branch, compare-and-swap (take-apply.ts). A step that fails puts back what the steps before it changed.
 * Whatever cannot be done cleanly is refused, saying what to do, with nothing touched.
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { TAKE_WAYS } from '../../../contract/index.js';
import type { TakeWay } from '../../../contract/index.js';
import { allOrFirstError, valueOf } from '../../../common/promises.js';
import { codeRunningFilesBetween } from './code-running-files.js';
import type { CodeRunningFile } from './code-running-files.js';
import { STATUS_SUBMODULES, countChanges, gitEnv, parseNumstat, parseStatus } from './git.js';
import { TakeRefused, TakeRepository } from './take-apply.js';
import type { GitRun, PlannedWay, Replayed, UserPlace } from './take-apply.js';
import { CLEANUP_LIMITS, findTaken } from './worktree-cleanup.js';
import type { Taken } from './worktree-cleanup.js';
import { BRANCH_PREFIX, SERVICE_AUTHOR } from './worktrees.js';

export { TakeRefused } from './take-apply.js';
export type { GitRun, PlannedWay, TakeSource, UserPlace } from './take-apply.js';

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

/**
 * The gits found new enough, by runner and the PATH they are found on, asked once: git is not downgraded under a
 * running service. One found too old is asked again at the next take, so an upgrade needs no restart.
 */
const NEW_ENOUGH = new WeakMap<GitRun, Set<string>>();

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

/**
 * What every way's plan starts from, found once for all of them. What only some ways need is asked when first needed,
 * once: a merge and a squash make the same tree, and so change the same files.
 */
interface SurveyFacts {
  place: UserPlace;
  tip: string;
  ahead: number;
  fastForward: boolean;
  dirty: ReadonlyMap<string, string>;
  tipTree: () => Promise<string>;
  /** The user's branch and the delegate's, merged (merge-tree). */
  merged: () => Promise<Merged>;
  /** The files between the user's branch and a tree. */
  changesTo: (tree: string) => Promise<Changes>;
  knowsTheUser: () => Promise<boolean>;
}

/** The files between two trees: counts, and how each changes (A, M, D, T). */
interface Changes {
  files: ReturnType<typeof parseNumstat>;
  kinds: Map<string, string>;
}

/** A question asked the first time it is needed, its answer shared by whoever needs it after. */
function once<T>(ask: () => Promise<T>): () => Promise<T> {
  let answer: Promise<T> | undefined;
  return () => (answer ??= ask());
}

/** A commit's change merged onto another tree: the tree it leads to, or the files it conflicts in. */
type Merged = { tree: string } | { conflicts: string[] };

/** Plans a take (survey) and does it (take), in the repository the work goes into. */
export class BranchTake extends TakeRepository {
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
    // Each group's questions are independent reads, asked at once; each answer is read (and a failure thrown) in the
    // order the refusals are checked, so a refusal is said exactly as if they had been asked one by one: a question
    // whose answer a refusal before it makes moot cannot fail the survey. A preview waits on four rounds, not forty runs.
    const first = await Promise.allSettled([this.gitTooOld(), this.userPlace(), this.operationUnderWay(), this.commitOf(`refs/heads/${branch}`)]);
    const tooOld = valueOf(first[0]);
    if (tooOld) return refuseAll(tooOld);
    const place = valueOf(first[1]);
    if (typeof place === 'string') return refuseAll(place);
    const underWay = valueOf(first[2]);
    if (underWay) return refuseAll(underWay, place);
    const tip = valueOf(first[3]);
    if (!tip) return refuseAll(`The branch ${branch} is gone from ${repo} (deleted by hand?): there is nothing to take.`, place);
    const second = await Promise.allSettled([
      this.line(['rev-list', '--count', `${base}..${tip}`]).then(Number),
      this.line(['rev-list', '--count', `${place.head}..${tip}`]).then(Number),
      findTaken(repo, branch, base, this.env).catch(() => null),
      this.git(['merge-base', '--is-ancestor', place.head, tip], { okCodes: [0, 1] }).then((found) => found.code === 0),
      this.dirtyPaths(),
    ] as const);
    if (valueOf(second[0]) === 0) return refuseAll(`The delegate made no commit on ${branch}: there is nothing to take.`, place, tip);
    const ahead = valueOf(second[1]);
    const taken = valueOf(second[2]);
    if (taken?.route || ahead === 0) {
      const where = taken?.into ?? place.into;
      return refuseAll(
        `The work of ${branch} is already in ${where}: there is nothing to take. Its worktree and branch go at the first prune ${plural(this.source.retentionDays, 'day')} after the job ended (\`openrouter-delegate worktrees --remove-taken\` removes them now).`,
        place,
        tip,
        ahead,
      );
    }
    const changes = new Map<string, Promise<Changes>>();
    const facts: SurveyFacts = {
      place,
      tip,
      ahead,
      fastForward: valueOf(second[3]),
      dirty: valueOf(second[4]),
      tipTree: once(() => this.line(['rev-parse', `${tip}^{tree}`])),
      merged: once(() => this.mergeTrees(place.head, tip)),
      changesTo: (tree) => changes.get(tree) ?? (changes.set(tree, this.changes(place.head, tree)).get(tree) as Promise<Changes>),
      knowsTheUser: once(() => this.knowsTheUser()),
    };
    const planned = await allOrFirstError(ways.map((how) => this.planWay(how, facts)));
    return { place, tip, branchCommits: ahead, refusal: null, ways: planned };
  }

  /** The files between the branch's base and `tip` that run code once taken (code-running-files.ts). */
  runsCode(tip: string): Promise<CodeRunningFile[]> {
    return codeRunningFilesBetween(async (args) => (await this.git(args)).stdout, this.source.base, tip);
  }

  /**
   * Takes the branch into the user's current branch by `how`, only when the survey finds it clean and `vet` passes the
   * tip it would take (it throws TakeRefused to refuse); else TakeRefused. Run it where nothing else changes the
   * repository's worktrees (Worktrees.exclusive).
   */
  async take(how: TakeWay, vet: (tip: string) => Promise<void> = async () => undefined): Promise<TakeDone> {
    const survey = await this.survey(how);
    const plan = survey.ways[0];
    if (!plan || !survey.place || !survey.tip) throw new TakeRefused(survey.refusal ?? 'There is nothing to take.');
    if (plan.refusal) throw new TakeRefused(plan.refusal);
    const { place, tip } = survey;
    await vet(tip);
    const after = await this.apply(plan, place, tip);
    const taken = await findTaken(this.source.repo, this.source.branch, this.source.base, this.env).catch((): Taken => ({ route: null, into: null, tip }));
    return { how, into: place.into, before: place.head, after, plan, taken };
  }

  private async gitTooOld(): Promise<string | null> {
    const onPath = gitEnv(this.env).PATH ?? '';
    if (NEW_ENOUGH.get(this.runGit)?.has(onPath)) return null;
    const said = await this.line(['version']);
    const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(said) ?? []).slice(1).map(Number);
    if (major > MERGE_TREE_SINCE[0] || (major === MERGE_TREE_SINCE[0] && minor >= MERGE_TREE_SINCE[1])) {
      NEW_ENOUGH.set(this.runGit, (NEW_ENOUGH.get(this.runGit) ?? new Set()).add(onPath));
      return null;
    }
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
    const status = (await this.git(['status', '--porcelain=v1', '-z', '--no-renames', '--untracked-files=all', STATUS_SUBMODULES])).stdout;
    return new Map(parseStatus(status).map((entry) => [entry.path, entry.untracked ? 'untracked' : 'uncommitted']));
  }

  private async planWay(how: TakeWay, facts: SurveyFacts): Promise<PlannedWay> {
    const { branch } = this.source;
    const { place, tip, ahead, fastForward, dirty } = facts;
    const moves = how !== 'squash' && fastForward;
    let tree: string;
    let commits = ahead;
    let replayed: Replayed[] = [];
    if (moves) tree = await facts.tipTree();
    else if (how === 'rebase') {
      const replay = await this.replay(place, tip);
      if (typeof replay === 'string') return refusedWay(how, replay);
      if (replay.length === 0) return refusedWay(how, `Every change of ${branch} is in ${place.into} already: there is nothing to take.`);
      replayed = replay;
      tree = replay.at(-1)?.tree ?? '';
      commits = replay.length;
    } else {
      const merged = fastForward ? { tree: await facts.tipTree() } : await facts.merged();
      if ('conflicts' in merged)
        return refusedWay(
          how,
          `Taking ${branch} into ${place.into} conflicts in ${someOf(merged.conflicts)}: it cannot be done cleanly. Merge it with git yourself (\`git merge ${branch}\` in ${this.source.repo}, then resolve the conflicts), or discard it and delegate again from ${place.into} as it is now.`,
        );
      tree = merged.tree;
      commits = how === 'squash' ? 1 : ahead + 1;
    }
    const changed = await facts.changesTo(tree);
    const inTheWay = await this.inTheWay(changed.kinds, dirty);
    if (inTheWay.length > 0)
      return refusedWay(
        how,
        `You have uncommitted changes in files this take would change: ${someOf(inTheWay)}. Commit or stash them (\`git stash --include-untracked\`), or move them away, then take again.`,
      );
    if (!moves && !(await facts.knowsTheUser()))
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
      const [ours, theirs] = await allOrFirstError([this.scaffold(onto, [mergeBase]), this.scaffold(`${commit}^{tree}`, [mergeBase])] as const);
      const merged = await this.mergeTrees(ours, theirs);
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
  private async changes(from: string, to: string): Promise<Changes> {
    const [numstat, nameStatus] = await allOrFirstError([
      this.git(['diff', '--numstat', '-z', '--no-renames', from, to]),
      this.git(['diff', '--name-status', '-z', '--no-renames', from, to]),
    ] as const);
    const files = parseNumstat(numstat.stdout);
    const kinds = new Map<string, string>();
    const listed = nameStatus.stdout.split('\0');
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

  private async knowsTheUser(): Promise<boolean> {
    const said = await this.git(['var', 'GIT_COMMITTER_IDENT'], { okCodes: [0, 128] });
    return said.code === 0;
  }
}
