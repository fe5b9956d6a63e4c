/**
 * A job's life (docs/ARCHITECTURE.md §4): the queue drained under the concurrency limit, the spawn, the
 * stream followed and priced as it grows, the timeout and the per-job cap enforced, whole process trees
 * killed, and the end settled from the stream. One class, because every step hands the job to the next
 * and each may be cut short by a cancel arriving at any point in between.
 */
import { rm } from 'node:fs/promises';
import { ENV, isActive } from '../../../contract/index.js';
import type { JobState } from '../../../contract/index.js';
import type { JobBilling } from './billing.js';
import { estimateCostUsd } from '../../catalog/cost-estimate.js';
import { jobOutcome } from './job-outcome.js';
import { removeJobTempDirs } from '../process/job-temp.js';
import { SharedFolders } from '../process/shared-folders.js';
import type { ProcessEnd } from './job-outcome.js';
import type { JobRegistry, LiveJob, SupervisorDeps, Termination } from './job-registry.js';
import { killTree } from '../process/kill-tree.js';
import { processesByEnv } from '../process/process-table.js';
import { JobLauncher } from './job-launcher.js';
import { cheapestPricing } from '../../gateway/measure/ceiling.js';
import { streamParserFor } from '../stream/stream-parser.js';
import type { StreamParser } from '../stream/stream-parser.js';
import type { TurnFigures } from '../money/turn-meter.js';
import { StreamTail } from '../stream/stream-tail.js';
import { toVerify, verifyTurn } from './verify-turn.js';
import { errorMessage } from '../../../common/errors.js';
import { formatMinutes, formatUsd } from '../../../common/format.js';

const PROGRESS_PERSIST_THROTTLE_MS = 2000;

/** Processes by the job their environment marks them with (ENV.job): what processesByEnv finds. */
type MarkedProcesses = Awaited<ReturnType<typeof processesByEnv>>;

/** What a job's launch, watch and end use of the supervisor's dependencies. */
export type LifecycleDeps = Pick<
  SupervisorDeps,
  | 'apiKey'
  | 'keyProblem'
  | 'models'
  | 'childEnv'
  | 'locateClaude'
  | 'spawn'
  | 'boxRuntime'
  | 'boxRoot'
  | 'serviceDirs'
  | 'serviceSubdirs'
  | 'killGraceMs'
  | 'onKeyRejected'
  | 'verifier'
>;

export class JobLifecycle {
  private readonly registry: JobRegistry;
  private readonly deps: LifecycleDeps;
  private readonly billing: JobBilling;
  /** The pass over /proc that the sweeps asking for one now will share; null once it has begun. */
  private nextScan: Promise<MarkedProcesses> | null = null;
  /** The last pass asked for, settled or not: the next one begins after it. */
  private lastScan: Promise<unknown> = Promise.resolve();
  /** The folders in-place boxes share, tidied when the last of them ends. */
  private readonly sharedFolders = new SharedFolders();
  /** What each launch needs before its process runs, and the spawn (job-launcher.ts). */
  readonly launcher: JobLauncher;

  constructor(registry: JobRegistry, deps: LifecycleDeps, billing: JobBilling) {
    this.registry = registry;
    this.deps = deps;
    this.billing = billing;
    this.launcher = new JobLauncher(registry, deps);
  }

  /** Starts queued jobs while there is room under the concurrency limit. */
  startQueued(): void {
    const { registry } = this;
    if (registry.stopped) return;
    const limit = registry.settings().concurrency;
    while (registry.runningCount() < limit) {
      const job = registry.takeNextQueued();
      if (!job) return;
      job.launching = true;
      registry.runInBackground(this.launch(job));
    }
  }

  private async launch(job: LiveJob): Promise<void> {
    const { registry } = this;
    const { store } = registry;
    const record = job.record;
    const paths = store.paths(record.id);
    try {
      const prepared = await this.launcher.prepare(job);
      if (prepared === null) {
        // Cancelled before it was spawned: nothing to kill.
        job.launching = false;
        await this.settleUnstarted(job, job.terminating ?? 'cancelled', job.terminationReason);
        return;
      }
      const { claude, boxed } = prepared;
      if (boxed && record.isolation?.mode !== 'worktree') {
        job.sharedFolder = record.cwd;
        await this.sharedFolders.enter(record.cwd);
      }
      registry.issueToken(job);
      const child = await this.launcher.spawn(prepared, { cwd: record.cwd, stdinFile: paths.prompt, stdoutFile: paths.stream, stderrFile: paths.stderr });
      const started = {
        state: 'running' as const,
        startedAt: new Date(registry.now()).toISOString(),
        claudePath: claude,
        pid: child.pid,
        pidStartTime: child.startTime,
      };
      // On disk before any client can see it: a service killed right after a client saw "running" must
      // find the job running, with its pid, when it starts again (not queued, to be spawned twice).
      const saved = await store.write({ ...record, ...started }).then(
        () => true,
        () => false,
      );
      Object.assign(record, started);
      // From here its state holds the slot.
      job.launching = false;
      if (!saved) await registry.persist(job);
      registry.emit(job);
      this.follow(job);
      this.armTimeout(job);
      // Not tracked: a job outlives stop() (it is re-adopted by the next start), so stop() must not wait for it.
      child.exited
        .then(({ code, signal }) => this.finish(job, { code, signal }))
        .catch((error: unknown) => registry.log(`jobs: ${record.id}: ${String(error)}`));
      // Cancelled while it was being spawned: the process exists now, so end it like any other.
      if (job.terminating) registry.runInBackground(this.kill(job));
    } catch (error) {
      job.launching = false;
      await this.leaveSharedFolder(job);
      await this.settleUnstarted(job, 'failed', errorMessage(error));
    }
  }

  /** The job's box no longer shares its folder: the last one there takes away what the boxes needed (shared-folders.ts). */
  private async leaveSharedFolder(job: LiveJob): Promise<void> {
    const folder = job.sharedFolder;
    job.sharedFolder = undefined;
    if (folder !== undefined)
      await this.sharedFolders.leave(folder).catch((error: unknown) => this.registry.log(`jobs: ${job.record.id}: ${errorMessage(error)}`));
  }

  /** A job that ends without ever having run (refused at launch, or cancelled first). */
  private async settleUnstarted(job: LiveJob, state: JobState, reason: string | null): Promise<void> {
    const { registry } = this;
    registry.revokeToken(job);
    const endReason = reason === null ? null : registry.redact(reason);
    // Nothing ran, so normally nothing is left; a worktree someone edited meanwhile is kept all the same.
    await this.keepWork(job, state, endReason);
    Object.assign(job.record, {
      state,
      endedAt: new Date(registry.now()).toISOString(),
      endReason,
      billing: 'unavailable',
    });
    await registry.persist(job);
    registry.emit(job);
    registry.wake(job);
    this.startQueued();
  }

  /** Tails the job's stream into its parser, pricing each assistant message as it arrives. */
  follow(job: LiveJob): void {
    const { registry } = this;
    const parser = (job.parser = streamParserFor(job.record));
    let lastPersist = 0;
    job.tail = new StreamTail({
      file: registry.store.paths(job.record.id).stream,
      onLine: (line) => {
        job.started?.();
        job.started = undefined;
        parser.push(line);
        this.absorb(job);
        // Lines flushed after the process exited belong to a job that is already ending by itself.
        if (job.record.state !== 'running' || job.finishing) return;
        if (job.record.estimatedCostUsd > job.record.maxCostUsd && !job.terminating) {
          registry.runInBackground(
            this.terminate(job, 'budget_exceeded', `Stopped: the estimated cost passed the job's cap of ${formatUsd(job.record.maxCostUsd)}.`),
          );
        } else if (registry.now() - lastPersist > PROGRESS_PERSIST_THROTTLE_MS) {
          // At most every 2 s while it runs: save its progress, and tell the windows (tool calls, tokens, cost).
          lastPersist = registry.now();
          void registry.persist(job);
          registry.emit(job);
        }
      },
    });
    job.tail.start();
  }

  /** Copies what the stream and the gateway have told so far into the record. */
  absorb(job: LiveJob): void {
    const { parser, record } = job;
    // The turn's own requests, as the gateway logged them, once they have all settled; the stream stands in until then.
    Object.assign(record, job.meter.figures(parser ? this.streamFigures(job, parser) : { usage: record.usage, estimatedCostUsd: record.estimatedCostUsd }));
    if (!parser) return;
    record.toolCalls = parser.toolCalls;
    const result = parser.result;
    if (result) {
      record.resultSubtype = result.subtype;
      record.isError = result.isError;
      record.numTurns = result.numTurns;
    }
  }

  /**
   * What the stream says the turn spent. Live, it under-reports output tokens (each message's usage is a snapshot
   * taken as it began); the result line's totals correct that at the end (bestUsage is the larger of the two). With
   * fallbacks, at the cheapest of them: the stream does not say which model served each request.
   */
  private streamFigures(job: LiveJob, parser: StreamParser): TurnFigures {
    const fallbacks = job.record.fallbacks ?? [];
    const pricing = fallbacks.length > 0 ? cheapestPricing([job.pricing, ...fallbacks.map((f) => f.prices)]) : job.pricing;
    const usage = parser.bestUsage;
    return { usage, estimatedCostUsd: (pricing ? estimateCostUsd([usage], pricing) : null) ?? job.record.estimatedCostUsd };
  }

  /** Counted from the job's start, so an adopted job keeps the deadline it had before the restart. */
  armTimeout(job: LiveJob): void {
    const { registry } = this;
    const started = Date.parse(job.record.startedAt ?? job.record.createdAt);
    const remaining = Math.max(0, started + job.record.timeoutMinutes * 60_000 - registry.now());
    const cancel = registry.setDeadline(() => {
      job.timers.delete(cancel);
      registry.runInBackground(
        this.terminate(job, 'timed_out', `Stopped: the job ran longer than its timeout of ${formatMinutes(job.record.timeoutMinutes)}.`),
      );
    }, remaining);
    job.timers.add(cancel);
  }

  /** Stops a job for `state`; resolves once it is final (its tree gone, or it never ran). */
  async terminate(job: LiveJob, state: Termination, reason: string): Promise<void> {
    const { registry } = this;
    const record = job.record;
    if (!isActive(record.state)) return;
    if (!job.terminating) {
      job.terminating = state;
      job.terminationReason = reason;
    }
    // Its delegate has ended: what runs is its verify commands (a job stopped before they begin runs none).
    if (record.state === 'verifying') job.verifyAbort?.abort();
    if (record.state === 'queued') {
      if (registry.leaveQueue(record.id)) {
        await this.settleUnstarted(job, state, reason);
        return;
      }
      // Being spawned right now: launch() sees `terminating` and kills it once it exists.
      await registry.waitUntilFinal(job);
      return;
    }
    await this.kill(job);
    await registry.waitUntilFinal(job);
  }

  /**
   * Ends what a finished job left running: processes that still carry its marker (ENV.job) in their
   * environment. Claude Code's Bash tool starts commands in sessions of their own, so once the delegate
   * itself is gone, neither its process group nor its tree reaches them.
   */
  async sweep(jobId: string): Promise<void> {
    const { registry } = this;
    const left = (await this.scanMarked()).get(jobId) ?? [];
    if (left.length === 0) return;
    registry.log(`jobs: ${jobId}: ending ${left.length} process(es) the delegate left running: ${left.map((p) => p.pid).join(', ')}`);
    await Promise.all(
      left.map((p) => killTree(p.pid, { startTime: p.startTime, graceMs: this.deps.killGraceMs ?? 2000, log: registry.log }).catch(() => undefined)),
    );
  }

  /**
   * One pass over /proc for every sweep that asks before it begins: each pass reads every process's
   * environment, and 20 jobs ending together made 20 passes at once (bench/delegation.ts). A pass already
   * under way may have listed the processes before this job's last ones started, so a sweep waits for the
   * next one.
   */
  private scanMarked(): Promise<MarkedProcesses> {
    if (this.nextScan === null) {
      const scan = this.lastScan.then(() => {
        this.nextScan = null;
        return processesByEnv(ENV.job);
      });
      this.nextScan = scan;
      this.lastScan = scan.catch(() => undefined);
    }
    return this.nextScan;
  }

  private async kill(job: LiveJob): Promise<void> {
    const { registry } = this;
    const { pid, pidStartTime } = job.record;
    if (pid === null) return;
    const outcome = await killTree(pid, {
      startTime: pidStartTime,
      ...(this.deps.killGraceMs !== undefined ? { graceMs: this.deps.killGraceMs } : {}),
      log: registry.log,
    });
    if (outcome.survivors.length > 0) registry.log(`jobs: ${job.record.id}: processes survived the kill: ${outcome.survivors.join(', ')}`);
  }

  /** Commits what a worktree job's delegate left uncommitted onto its branch (worktrees.ts: never throws). */
  private async keepWork(job: LiveJob, state: JobState, reason: string | null): Promise<void> {
    const isolation = job.record.isolation;
    if (isolation?.mode !== 'worktree') return;
    const { id: jobId, promptPreview: task, model } = job.record;
    job.record.isolation = await this.registry.worktrees.saveToBranch(isolation, { jobId, state, reason, task, model });
  }

  /** The process ended: read the rest of its stream and settle the job's outcome. `lostReason`: it ended unseen, without a result. */
  finish(job: LiveJob, exit: ProcessEnd, lostReason?: string): Promise<void> {
    const { registry } = this;
    const { store } = registry;
    job.finishing ??= (async () => {
      if (registry.stopped) return;
      job.tail?.flush();
      job.tail?.stop();
      job.tail = null;
      registry.clearTimers(job);
      registry.revokeToken(job);
      this.absorb(job);
      const record = job.record;
      const stderrTail = await store.readStderrTail(record.id).catch(() => '');
      Object.assign(record, { exitCode: exit.code, signal: exit.signal, endedAt: new Date(registry.now()).toISOString() });
      const termination = job.terminating ? { state: job.terminating, reason: job.terminationReason } : null;
      const outcome = lostReason ? { state: 'lost' as const, endReason: lostReason } : jobOutcome(termination, job.parser?.result, exit, stderrTail);
      if (job.parser?.result?.apiErrorStatus === 401) this.deps.onKeyRejected?.();
      const raw = job.parser?.result?.text ?? job.parser?.lastAssistantText ?? null;
      const text = raw === null ? null : registry.redact(raw);
      // The answer is on disk before the job says it has ended: a caller who sees the final state and asks for
      // the result at once must find it.
      if (text !== null) await store.writeResult(record.id, text).catch((e: unknown) => registry.log(`jobs: ${record.id}: result not saved: ${String(e)}`));
      const endReason = outcome.endReason === null ? null : registry.redact(outcome.endReason);
      // A worktree job's work is on its branch before the job says it has ended; nothing of the job may still write there.
      const worktree = record.isolation?.mode === 'worktree';
      if (worktree) {
        await this.sweep(record.id);
        await this.keepWork(job, outcome.state, endReason);
      }
      // The folder is as the user left it, but for the delegate's work, before the job says it has ended.
      await this.leaveSharedFolder(job);
      Object.assign(record, { state: outcome.state, endReason });
      // A turn that left changes on its branch is judged by its verify commands before it says it has ended.
      const verifying = toVerify(job, this.deps.verifier !== undefined);
      if (verifying) record.state = 'verifying';
      // Billing finds the generations in the request log; a job that sent nothing through the gateway has none.
      record.billing = record.generationIds.length > 0 || job.meter.requests > 0 ? 'pending' : 'unavailable';
      await registry.persist(job);
      // A delegate that died (killed from outside, crashed) cannot end what its tools started.
      if (!worktree) registry.runInBackground(this.sweep(record.id));
      // What the root left in its process group goes too: one killed outright (the OOM killer, a user's `kill -9`)
      // ran no exit handler, and a warm box's socat bridges are in its group, started before its job, so without the
      // job's marker. Only for a root whose start time is known, so its pid cannot mean another's (kill-tree.ts);
      // a cancel or a timeout has killed the whole tree already.
      if (!job.terminating && record.pidStartTime !== null && process.platform !== 'win32') registry.runInBackground(this.kill(job));
      // Its temp folders go before its verify commands make theirs, under the job's name too.
      const tidied = Promise.all([removeJobTempDirs(record.id), job.tmp && rm(job.tmp, { recursive: true, force: true }).catch(() => undefined)]);
      registry.runInBackground(verifying ? tidied.then(() => verifyTurn(registry, this.deps.verifier, job, outcome.state, this.fixRound)) : tidied);
      registry.emit(job);
      if (!verifying) registry.wake(job);
      this.startQueued();
      if (record.billing === 'pending') this.billing.bill(job);
    })();
    return job.finishing;
  }

  /** Continues a conversation whose verify commands failed, with the failure (the supervisor's); resolves to the new turn's id. */
  fixRound: ((job: LiveJob) => Promise<string>) | null = null;
}
