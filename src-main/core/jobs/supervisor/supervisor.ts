/**
 * The job supervisor (docs/ARCHITECTURE.md §4): starts delegated `claude -p` sessions, follows their streams,
 * prices them, enforces budgets and timeouts, kills whole process trees, and survives its own
 * restarts: jobs are files first, processes second.
 *
 * This is the facade the service calls; the work is in its parts, which share one JobRegistry:
 * admission.ts (request → record → queue), lifecycle.ts (spawn, stream, timeout, kill, end),
 * recovery.ts (adoption at start), billing.ts (billed cost), views.ts (what callers see).
 */
import { BEST_MODEL, ServiceError, isActive, nextCall } from '../../../contract/index.js';
import type {
  DiscardResult,
  JobDiff,
  JobList,
  JobRecord,
  JobRequests,
  JobResult,
  JobView,
  ParsedRequestOf,
  TakePreview,
  TakeResult,
  TakeWay,
  WorktreeCleanup,
  WorktreeReport,
} from '../../../contract/index.js';
import { randomUUID } from 'node:crypto';
import { admit, admitAll, conversationToContinue, resolveJobRequest } from './admission.js';
import type { AdmissionDeps } from './admission.js';
import { JobBilling } from './billing.js';
import { GatewayLink } from './gateway-link.js';
import { JobRegistry } from './job-registry.js';
import type { LiveJob, SupervisorDeps } from './job-registry.js';
import { fixRoundPrompt } from './verify-link.js';
import { JobLifecycle } from './lifecycle.js';
import { errorMessage } from '../../../common/errors.js';
import { JobRecovery } from './recovery.js';
import { noticeMissingWorktrees, removeTakenWorktrees, jobsKeptFromPrune, surveyAll } from './isolation.js';
import { KeptWorktreeSurvey } from '../git/kept-survey.js';
import { reportOf } from '../git/worktree-cleanup.js';
import { JobViews, TAIL_LIMIT_DEFAULT } from './views.js';
import { previewTake, takeJob } from './take.js';
import type { ScoreFact, Scoreboard, SpendReport } from '../../../contract/index.js';
import { JobScoreboard } from './scoreboard.js';

export type { SupervisorDeps } from './job-registry.js';

type StartRequest = ParsedRequestOf<'jobs.start'>;
type FollowupRequest = ParsedRequestOf<'jobs.followup'>;

export class Supervisor {
  private readonly registry: JobRegistry;
  /** Handed to admission, which is functions of the registry and these. */
  private readonly deps: AdmissionDeps;
  private readonly billing: JobBilling;
  private readonly lifecycle: JobLifecycle;
  private readonly recovery: JobRecovery;
  private readonly views: JobViews;
  /** The kept worktrees' last survey, in numbers, for the job list. */
  private readonly kept: KeptWorktreeSurvey;
  /** What the user did with each delegation's work, and the facts of pruned ones. */
  private readonly scores: JobScoreboard;
  /** What the metering gateway asks of the jobs. */
  readonly gateway: GatewayLink;
  private started: Promise<void> | null = null;
  /** When this supervisor began (a request log's pending lines from before were cut off by the last service's end). */
  private readonly startedAt: number;
  private pruneTimer: NodeJS.Timeout | null = null;

  constructor(deps: SupervisorDeps) {
    // A job that has ended lets its request log go (GatewayLink.release), before anyone hears it ended.
    this.registry = new JobRegistry({
      ...deps,
      onChange: (record) => {
        if (!isActive(record.state)) this.gateway.release(record.id);
        this.kept.jobChanged(record);
        deps.onChange?.(record);
      },
    });
    // Each part is handed the dependencies it uses; the registry holds the jobs, their store and the settings.
    this.deps = { ...deps, scoreFacts: () => this.scores.facts() };
    this.billing = new JobBilling(this.registry, deps);
    this.lifecycle = new JobLifecycle(this.registry, deps, this.billing);
    this.lifecycle.fixRound = (job) => this.fixRound(job);
    this.recovery = new JobRecovery(this.registry, deps, this.lifecycle, this.billing);
    this.views = new JobViews(this.registry);
    this.scores = new JobScoreboard(this.registry, deps.scoreArchive);
    const registry = this.registry;
    this.kept = new KeptWorktreeSurvey({
      survey: () => surveyAll(registry),
      now: registry.now,
      runInBackground: (work) => registry.runInBackground(work),
      log: registry.log,
    });
    this.gateway = new GatewayLink(this.registry, this.lifecycle, this.billing, () => this.ready());
    this.startedAt = this.registry.now();
  }

  /** Loads the history; re-adopts live jobs and finishes the ones whose process is gone. */
  start(): Promise<void> {
    this.started ??= this.load();
    return this.started;
  }

  /** Requests wait for the history to be loaded: budgets and the queue depend on it. */
  private async ready(): Promise<void> {
    await this.start();
  }

  private async load(): Promise<void> {
    const { registry } = this;
    const { records, unreadable } = await registry.store.loadAll();
    registry.noteUnreadable(unreadable);
    for (const problem of unreadable) registry.log(`jobs: cannot read ${problem.dir}: ${problem.problem}`);
    await this.recovery.recoverAll(records);
    await noticeMissingWorktrees(registry, registry.all());
    await this.prune();
    // History is pruned at start and then twice a day, for a service that runs for weeks.
    this.pruneTimer = setInterval(() => registry.runInBackground(this.prune()), 12 * 3600_000);
    this.pruneTimer.unref();
    this.lifecycle.startQueued();
    // What boxes killed outright left (box-spares.ts), and a warm box for a user whose last job ran in one.
    registry.runInBackground(this.lifecycle.launcher.tidyBoxes().catch((error: unknown) => registry.log(`jobs: ${errorMessage(error)}`)));
  }

  private async prune(): Promise<void> {
    const { registry } = this;
    const settings = registry.settings();
    const { removed } = await registry.store.prune({
      retentionDays: settings.retentionDays,
      isActive: (r) => isActive(r.state),
      // Never the only way back to unmerged work: those jobs stay until their branch is merged or discarded.
      spare: (doomed, all) => jobsKeptFromPrune(registry.worktrees, doomed, all),
    });
    await this.scores.keepPruned(removed);
    for (const id of removed) registry.forget(id);
    void this.kept.refresh();
  }

  /** A Claude Code session connected, and may delegate soon: a warm box for it, for its PATH (job-launcher.ts warmForSession). */
  sessionConnected(callerPath: string | undefined): void {
    const { registry } = this;
    registry.runInBackground(
      this.ready()
        .then(() => this.lifecycle.launcher.warmForSession(callerPath))
        .catch((error: unknown) => registry.log(`jobs: no warm box: ${errorMessage(error)}`)),
    );
  }

  /** Stops following jobs. Their processes keep running and are re-adopted by the next start. */
  async stop(): Promise<void> {
    const { registry } = this;
    registry.markStopped();
    this.billing.stop();
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.kept.stop();
    const tails: Array<Promise<void>> = [];
    for (const job of registry.all()) {
      // Verify commands end with the service; the next start runs them again (recovery.ts).
      job.verifyAbort?.abort();
      if (job.tail) tails.push(job.tail.stop());
      job.tail = null;
      registry.clearTimers(job);
      if (job.persistRetry) clearTimeout(job.persistRetry);
      job.persistRetry = null;
      registry.wake(job);
    }
    await registry.settled([...tails, this.lifecycle.launcher.spares.stop()]);
    await registry.store.closeRequestLogs();
  }

  async startJob(request: StartRequest, client: string): Promise<JobView> {
    await this.ready();
    if (request.models !== undefined) return this.startGroup(request, request.models, client);
    const resolved = await resolveJobRequest(this.registry, this.deps, request, null, client);
    const job = await admit(this.registry, this.deps, resolved);
    this.lifecycle.startQueued();
    return this.views.view(job, { waitSeconds: request.waitSeconds, progressLimit: TAIL_LIMIT_DEFAULT });
  }

  /**
   * A fan-out: one job per model, each its own conversation (and worktree), sharing a group id. Every model passes the
   * policy the way a single start's does, and the set the budgets together, before anything is made: one refusal
   * refuses them all. Answers the first job's view with the comparison.
   */
  private async startGroup(request: StartRequest, models: string[], client: string): Promise<JobView> {
    const { registry } = this;
    if (request.model !== undefined) throw new ServiceError('invalid_request', 'Give either model or models (a fan-out), not both.');
    const limit = registry.settings().fanOutLimit;
    if (models.length > limit) {
      throw new ServiceError('policy_refused', `${models.length} models are more than the user's fan-out limit of ${limit}. Name at most ${limit}.`);
    }
    if (models.includes(BEST_MODEL))
      throw new ServiceError('invalid_request', `"${BEST_MODEL}" picks one model by the scoreboard; a fan-out names its models.`);
    const twice = models.find((m, i) => models.indexOf(m) !== i);
    if (twice !== undefined) throw new ServiceError('invalid_request', `${twice} is named twice in models; name each model once.`);
    const resolved = [];
    // One after the other: each refusal names its model, and the first one stops the rest.
    for (const model of models) {
      try {
        resolved.push(await resolveJobRequest(registry, this.deps, { ...request, model }, null, client));
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        const named = error.message.includes(model) ? error.message : `${model}: ${error.message}`;
        throw new ServiceError(error.code, `${named} The fan-out was refused whole: no job was started.`, error.next ? { next: error.next } : undefined);
      }
    }
    const jobs = await admitAll(registry, this.deps, resolved, undefined, `group_${randomUUID().slice(0, 8)}`);
    this.lifecycle.startQueued();
    const [first] = jobs;
    if (!first) throw new Error('a fan-out admitted no job');
    const view = await this.views.view(first, { waitSeconds: request.waitSeconds, progressLimit: TAIL_LIMIT_DEFAULT });
    return { ...view, group: this.views.group(first.record) };
  }

  async followup(request: FollowupRequest, client: string): Promise<JobView> {
    await this.ready();
    const { latest, stillLatest } = conversationToContinue(this.registry, request);
    const resolved = await resolveJobRequest(this.registry, this.deps, request, latest, client);
    const job = await admit(this.registry, this.deps, resolved, stillLatest);
    this.lifecycle.startQueued();
    return this.views.view(job, { waitSeconds: request.waitSeconds, progressLimit: TAIL_LIMIT_DEFAULT });
  }

  /**
   * A fix round (docs/VERIFY.md): the conversation of a turn whose verify commands failed, continued with the failure
   * as a follow-up of its own — admitted like any, so held to the policy and the day's budget, at the failed turn's cap.
   */
  private async fixRound(job: LiveJob): Promise<string> {
    const { registry } = this;
    const { record } = job;
    const verify = record.verify;
    if (!verify) throw new Error('the job has no verify commands');
    const caller = { cwd: record.cwd, ...(job.callerPath ? { path: job.callerPath } : {}) };
    const request = { jobId: record.id, prompt: fixRoundPrompt(verify.runs), maxCostUsd: record.maxCostUsd, waitSeconds: 0, caller };
    const { latest, stillLatest } = conversationToContinue(registry, request);
    const resolved = await resolveJobRequest(registry, this.deps, request, latest, record.client);
    if (resolved.fields.verify) resolved.fields.verify = { ...resolved.fields.verify, fixRoundsLeft: verify.fixRoundsLeft - 1, round: verify.round + 1 };
    const fix = await admit(registry, this.deps, resolved, stillLatest);
    this.lifecycle.startQueued();
    return fix.record.id;
  }

  async status(request: ParsedRequestOf<'jobs.status'>): Promise<JobView> {
    await this.ready();
    return this.views.view(this.registry.find(request.jobId), { waitSeconds: request.waitSeconds, progressLimit: request.progressLimit });
  }

  async result(request: ParsedRequestOf<'jobs.result'>): Promise<JobResult> {
    await this.ready();
    return this.views.result(this.registry.find(request.jobId), request);
  }

  async cancel(jobId: string): Promise<JobView> {
    await this.ready();
    const job = this.registry.find(jobId);
    await this.lifecycle.terminate(job, 'cancelled', 'Cancelled on request.');
    return this.views.view(job, { waitSeconds: 0, progressLimit: TAIL_LIMIT_DEFAULT });
  }

  /** A finished worktree job's branch against its base, line by line (the Jobs page's diff). */
  async diff(jobId: string): Promise<JobDiff> {
    await this.ready();
    const job = this.registry.find(jobId);
    const isolation = job.record.isolation;
    if (isolation?.mode !== 'worktree' || !isolation.branch) {
      throw new ServiceError('invalid_request', `Job ${job.record.id} worked in ${job.record.cwd} in place: it has no branch to compare.`);
    }
    if (isActive(job.record.state))
      throw new ServiceError('conflict', `Job ${job.record.id} is ${job.record.state}: its branch is compared once it has ended.`);
    const diff = await this.registry.worktrees.diff(isolation);
    if (!diff) throw new ServiceError('not_found', `The branch ${isolation.branch} of job ${job.record.id} is gone (${isolation.worktreeState}).`);
    return { jobId: job.record.id, branch: isolation.branch, ...diff };
  }

  /**
   * Throws a worktree job's work away, on the user's word: its worktree (changes in it included) and its branch. Every
   * turn of its conversation shares them, so none may be active; each turn's record then says it was discarded.
   */
  async discard(jobId: string): Promise<DiscardResult> {
    await this.ready();
    const { registry } = this;
    const job = registry.find(jobId);
    const isolation = job.record.isolation;
    if (isolation?.mode !== 'worktree' || !isolation.repo || !isolation.worktree || !isolation.branch) {
      throw new ServiceError(
        'invalid_request',
        `Job ${job.record.id} worked in ${job.record.cwd} in place, with no worktree or branch of its own: there is nothing to discard.`,
      );
    }
    const turns = registry.turnsOf(isolation.worktree);
    const active = turns.find((j) => isActive(j.record.state));
    if (active) {
      throw new ServiceError('conflict', `Job ${active.record.id} of this conversation is ${active.record.state}: cancel it or let it end, then discard.`, {
        next: nextCall('jobs.cancel', { jobId: active.record.id }),
      });
    }
    const outcome = await registry.worktrees.discard(isolation);
    for (const turn of turns) if (turn.record.isolation) turn.record.isolation = { ...turn.record.isolation, worktreeState: 'discarded' };
    await this.scores.markFate(turns, 'discarded');
    void this.kept.refresh();
    registry.log(`jobs: ${job.record.id}: discarded ${isolation.worktree} and branch ${isolation.branch} (last commit ${outcome.lastCommit ?? 'none'})`);
    return { jobId: job.record.id, repo: isolation.repo, branch: isolation.branch, worktree: isolation.worktree, ...outcome };
  }

  /** What taking a worktree job's branch into the repository's current branch would do, each way, or why not. */
  async takePreview(jobId: string): Promise<TakePreview> {
    await this.ready();
    return previewTake(this.registry, jobId);
  }

  /**
   * Takes a worktree job's branch into the repository's current branch, on the user's word, only when it is clean and
   * `runsCodeConfirmed` names exactly its files that run code once taken.
   */
  async take(jobId: string, how: TakeWay, runsCodeConfirmed?: readonly string[]): Promise<TakeResult> {
    await this.ready();
    const taken = await takeJob(this.registry, jobId, how, runsCodeConfirmed);
    if (taken.worktree) await this.scores.markFate(this.registry.turnsOf(taken.worktree), 'taken');
    void this.kept.refresh();
    return taken;
  }

  /** The worktrees kept under the data folder: whose, taken or not, orphans, disk. */
  async keptWorktrees(): Promise<WorktreeReport> {
    await this.ready();
    return reportOf(this.registry.worktrees.dir, await this.kept.surveyNow());
  }

  /** Removes every kept worktree whose work is taken or discarded (orphans too); never one with work in no other branch. */
  async removeTakenWorktrees(): Promise<WorktreeCleanup> {
    await this.ready();
    const done = await removeTakenWorktrees(this.registry);
    void this.kept.refresh();
    return done;
  }

  /** Cancels every queued and running job; resolves once their trees are gone. */
  async killAll(): Promise<number> {
    await this.ready();
    const active = this.registry.active();
    await Promise.all(active.map((j) => this.lifecycle.terminate(j, 'cancelled', 'Cancelled by kill-all.')));
    return active.length;
  }

  /**
   * The job's request log, as the gateway wrote it. A request still `pending` that began before this service
   * started, or whose job has ended, was cut off by the end of the service that carried it.
   */
  async requests(jobId: string): Promise<JobRequests> {
    await this.ready();
    const job = this.registry.find(jobId);
    const active = isActive(job.record.state);
    const requests = (await this.registry.store.readRequests(job.record.id)).map((entry) =>
      entry.outcome === 'pending' && (!active || Date.parse(entry.at) < this.startedAt)
        ? { ...entry, outcome: 'interrupted' as const, note: 'the service stopped before this request ended; the delegate retried it' }
        : entry,
    );
    return { jobId: job.record.id, requests };
  }

  list(request: ParsedRequestOf<'jobs.list'>): JobList {
    return this.views.list(request, this.kept.summary());
  }

  /** What the jobs cost over the last 30 local days (spend.ts), once the history is loaded. */
  async spend(): Promise<SpendReport> {
    await this.ready();
    return this.views.spend();
  }

  /** Each model's delegations by repository (score-facts.ts), of every repository or of the one holding `repo`. */
  async scoreboard(repo?: string): Promise<Scoreboard> {
    await this.ready();
    return this.scores.report(repo);
  }

  /** Every delegation's scoreboard fact, for `model: "best"`. */
  async scoreFacts(): Promise<ScoreFact[]> {
    await this.ready();
    return this.scores.facts();
  }

  /**
   * Jobs that still need the key their requests went with: running, or ended and still being billed (OpenRouter's
   * records of their generations are read with that key). A rotation of the delegate key waits for none.
   */
  jobsHoldingKey(): number {
    return this.registry.all().filter((j) => isActive(j.record.state) || j.record.billing === 'pending').length;
  }

  /** Active jobs, for the tray and kill-all confirmations. */
  activeJobs(): JobRecord[] {
    return this.registry.active().map((j) => j.record);
  }

  spentToday(): number {
    return this.registry.spentToday();
  }
}
