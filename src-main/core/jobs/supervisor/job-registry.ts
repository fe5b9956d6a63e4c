/**
 * What the supervisor's parts share (docs/ARCHITECTURE.md §4): every job it knows, live or from history,
 * the queue, and what every part does to a job — save it, announce it, wake whoever waits on it.
 * Admission, lifecycle, recovery, billing and views hold this one registry, so none keeps a copy of what
 * is running: the running count is read off the jobs themselves. Its maps are its own: the parts change
 * them only through the methods below (add, forget, enqueue, takeNextQueued, issueToken …).
 */
import path from 'node:path';
import { ServiceError, isActive, nextCall } from '../../../contract/index.js';
import type { JobRecord, JobState, Settings } from '../../../contract/index.js';
import type { CatalogModel, CatalogPricing } from '../../catalog/parse.js';
import type { GenerationRecord } from '../../openrouter/client.js';
import type { Balance } from '../../../contract/index.js';
import { scrubSecrets } from '../../secrets/redact.js';
import { localDayKey, reservationOf, spentOnDay } from '../money/budget.js';
import { JobNotFoundError } from '../record/job-store.js';
import type { JobStore } from '../record/job-store.js';
import type { spawnDetached } from '../process/spawn-detached.js';
import { TurnMeter } from '../money/turn-meter.js';
import type { StreamParser } from '../stream/stream-parser.js';
import type { StreamTail } from '../stream/stream-tail.js';
import { Worktrees } from '../git/worktrees.js';
import { errorMessage } from '../../../common/errors.js';
import type { BoxRuntime } from '../process/box.js';
import type { SandboxAvailability } from '../../../platform/sandbox-probe.js';
import type { Verifier } from './verify-link.js';
import type { ScoreArchive } from '../score/score-archive.js';

export interface SupervisorDeps {
  store: JobStore;
  settings: () => Settings;
  /** The catalog, for prices and the policy check. */
  models: () => Promise<CatalogModel[]>;
  apiKey: () => { value: string; source: string } | null;
  /** Why there is no key for delegates when `apiKey` is null (e.g. the delegate key could not be made); default: none set. */
  keyProblem?: () => string | null;
  /** The key's balance (service/balance.ts BalanceMonitor.get): `stale` serves an older copy and reads it again behind. */
  balance: (options: { refresh: boolean; stale?: { maxMs: number; notBefore: number } }) => Promise<Balance>;
  getGeneration: (key: string, id: string) => Promise<GenerationRecord | null>;
  /** The environment of a delegate on this model in this conversation, holding its gateway token (never the key; see child-env.ts). */
  childEnv: (model: string, gatewayToken: string, callerPath: string | undefined) => Record<string, string>;
  locateClaude: (callerPath: string | undefined) => Promise<string>;
  /** Whether a delegate's box can run on this machine, asked at each admission; default: platform/sandbox-probe.ts, cached. */
  sandbox?: () => Promise<SandboxAvailability>;
  /** Where the facts of pruned delegations are kept for the scoreboard; default: `scoreboard.jsonl` beside the jobs' folder. */
  scoreArchive?: ScoreArchive;
  /** Runs a job's verify commands on its branch when its turn ends (core/verify); without one, a delegation naming verify commands is refused. */
  verifier?: Verifier;
  onChange?: (job: JobRecord) => void;
  /** Told when a delegate's request was refused for its key (401), so the key is read afresh. */
  onKeyRejected?: () => void;
  log?: (line: string) => void;
  now?: () => number;
  /**
   * Runs `callback` once `ms` have passed on the clock `now` reads; returns what cancels it. A job's
   * timeout runs on it, so a test with a fake clock can let a job time out without waiting.
   */
  setDeadline?: (callback: () => void, ms: number) => () => void;
  /** How often an adopted job (not our child: no exit event) is checked for life. */
  adoptedPollMs?: number;
  killGraceMs?: number;
  /** Billing retry schedule (the generation record appears a few seconds late). */
  billingDelaysMs?: number[];
  /** How soon a job.json that could not be written is tried again (default 2000 ms). */
  persistRetryMs?: number;
  /** Injected by tests of the failure paths; the real ones by default. */
  spawn?: typeof spawnDetached;
  /** How the box's runtime is run (box.ts); default: this process's Node and the bundled runtime. */
  boxRuntime?: BoxRuntime;
  /** The warm box's root program (box-spares.ts locateBoxRoot); none: every box starts cold. */
  boxRoot?: string | null;
  /** The service's own folders (runtime, data, config, cache, logs): no prompt_file is read from them, and every delegate is denied its file tools there. */
  serviceDirs?: readonly string[];
  /**
   * Folders inside those that a worktree job's delegate is denied even before they exist (jobs, the delegates' Claude
   * Code config …): its own worktree lies in the data folder, which cannot then be denied whole (worktrees.ts).
   */
  serviceSubdirs?: readonly string[];
  /** Where jobs' worktrees go; default: `worktrees` beside the jobs folder (`<data>/worktrees`). */
  worktreesDir?: string;
}

/** Why a job is being stopped by us rather than ending by itself. */
export type Termination = Extract<JobState, 'cancelled' | 'timed_out' | 'budget_exceeded'>;

export interface LiveJob {
  record: JobRecord;
  parser: StreamParser | null;
  tail: StreamTail | null;
  pricing: CatalogPricing | null;
  apiKey: string | null;
  callerPath: string | undefined;
  /** Taken off the queue and being spawned: it holds a slot while its record still says queued. */
  launching: boolean;
  /** Called at its first stream line (its Claude Code has started): the next warm box starts then (job-launcher.ts). */
  started?: () => void;
  /** Its temp folder this launch (job-temp.ts, or its warm box's), removed when it ends. */
  tmp?: string;
  /** The folder its box shares with other in-place boxes (shared-folders.ts), while it runs. */
  sharedFolder?: string;
  terminating: Termination | null;
  terminationReason: string | null;
  /** What cancels each of its pending timers (its timeout, the checks on an adopted process). */
  timers: Set<() => void>;
  waiters: Set<() => void>;
  finishing: Promise<void> | null;
  /** The last write of job.json failed (a full or read-only disk, say). */
  unsaved: boolean;
  /** The next try to write it. */
  persistRetry: NodeJS.Timeout | null;
  /** The write of job.json under way (and any queued behind it): writes of one job never overlap. */
  saving: Promise<void>;
  /** The sha256 of the token its delegate holds for the gateway; null before launch and for jobs from before the gateway. */
  tokenHash: string | null;
  /**
   * The token admission made for its delegate, its hash already on disk with the job's files: launch hands it over
   * instead of writing another (null once launched, and for a job re-queued after a restart, which gets a new one).
   */
  tokenOnDisk: string | null;
  /** Its requests through the gateway, summed: the source of its tokens and its estimate (turn-meter.ts). */
  meter: TurnMeter;
  /** While its verify commands run: what stops them (a cancel, the service stopping). */
  verifyAbort?: AbortController;
}

export function liveJob(record: JobRecord): LiveJob {
  return {
    record,
    parser: null,
    tail: null,
    pricing: null,
    apiKey: null,
    callerPath: undefined,
    launching: false,
    terminating: null,
    terminationReason: null,
    timers: new Set(),
    waiters: new Set(),
    finishing: null,
    unsaved: false,
    persistRetry: null,
    saving: Promise.resolve(),
    tokenHash: null,
    tokenOnDisk: null,
    meter: new TurnMeter(),
  };
}

export class JobRegistry {
  /** What the registry itself uses of the supervisor's dependencies; each part is handed its own (supervisor.ts). */
  private readonly deps: Pick<SupervisorDeps, 'apiKey' | 'onChange' | 'persistRetryMs'>;
  /** The jobs' folders on disk: the registry persists what it holds there, and the parts read them. */
  readonly store: JobStore;
  /** The user's settings as they are now: the policy every part applies. */
  readonly settings: () => Settings;
  readonly now: () => number;
  readonly log: (line: string) => void;
  readonly setDeadline: (callback: () => void, ms: number) => () => void;
  /** The git side of isolation: every job's worktree and branch. */
  readonly worktrees: Worktrees;
  /** Every job it knows, by id, in the order they were added (history oldest first, then each admission). */
  private readonly jobs = new Map<string, LiveJob>();
  /** Ids waiting for a slot, first come first served. */
  private readonly queue: string[] = [];
  /** Live jobs by the hash of their gateway token. */
  private readonly byToken = new Map<string, LiveJob>();
  private unreadableDirs: Array<{ dir: string; problem: string }> = [];
  private isStopped = false;
  private readonly background = new Set<Promise<unknown>>();

  constructor(deps: SupervisorDeps) {
    this.deps = deps;
    this.store = deps.store;
    this.settings = deps.settings;
    this.now = deps.now ?? Date.now;
    this.log = deps.log ?? (() => undefined);
    this.setDeadline = deps.setDeadline ?? realDeadline;
    this.worktrees = new Worktrees({ dir: deps.worktreesDir ?? path.join(path.dirname(deps.store.dir), 'worktrees'), log: this.log });
  }

  /** Registers a job (admitted, or found on disk at start). */
  add(job: LiveJob): void {
    this.jobs.set(job.record.id, job);
  }

  /** Drops a job (pruned, or its admission taken back): out of the queue and the gateway's reach too. */
  forget(jobId: string): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    this.leaveQueue(jobId);
    this.revokeToken(job);
    this.jobs.delete(jobId);
  }

  /** The job with this id, if the registry knows it; `find` when a caller named it. */
  job(jobId: string): LiveJob | undefined {
    return this.jobs.get(jobId);
  }

  /** Every job, in the order they were added. A copy: callers may add or forget while they walk it. */
  all(): LiveJob[] {
    return [...this.jobs.values()];
  }

  /** Every turn of the conversation working in `worktree` (they share it and its branch), first turn first. */
  turnsOf(worktree: string): LiveJob[] {
    return this.all()
      .filter((j) => j.record.isolation?.worktree === worktree)
      .sort((a, b) => a.record.turn - b.record.turn);
  }

  /** Puts a queued job at the back of the queue. */
  enqueue(jobId: string): void {
    this.queue.push(jobId);
  }

  /** The next job waiting for a slot, taken off the queue; ids of jobs gone or no longer queued are dropped on the way. */
  takeNextQueued(): LiveJob | undefined {
    for (let id = this.queue.shift(); id !== undefined; id = this.queue.shift()) {
      const job = this.jobs.get(id);
      if (job && job.record.state === 'queued') return job;
    }
    return undefined;
  }

  /** Takes a job out of the queue; false when it was not there (never queued, or already taken to be spawned). */
  leaveQueue(jobId: string): boolean {
    const index = this.queue.indexOf(jobId);
    if (index < 0) return false;
    this.queue.splice(index, 1);
    return true;
  }

  /** Its place in the queue, 1 for the next to start; null when it is not waiting there. */
  queuePosition(jobId: string): number | null {
    return this.queue.indexOf(jobId) + 1 || null;
  }

  /** Lets the gateway find the job by its token's hash (`job.tokenHash`); nothing for a job that holds none. */
  issueToken(job: LiveJob): void {
    if (job.tokenHash) this.byToken.set(job.tokenHash, job);
  }

  /** The gateway no longer finds the job by its token: it has ended, or never ran. */
  revokeToken(job: LiveJob): void {
    if (job.tokenHash && this.byToken.get(job.tokenHash) === job) this.byToken.delete(job.tokenHash);
  }

  /** The job whose delegate holds the token with this hash, while its token is honoured. */
  jobByToken(hash: string): LiveJob | undefined {
    return this.byToken.get(hash);
  }

  /** The job folders the last load could not read, for the job list. */
  get unreadable(): Array<{ dir: string; problem: string }> {
    return this.unreadableDirs;
  }

  noteUnreadable(dirs: Array<{ dir: string; problem: string }>): void {
    this.unreadableDirs = dirs;
  }

  /** Once stopped, no part starts anything new, and every waiter is let go. */
  get stopped(): boolean {
    return this.isStopped;
  }

  markStopped(): void {
    this.isStopped = true;
  }

  find(jobId: string): LiveJob {
    const job = this.jobs.get(jobId);
    if (!job) {
      throw new ServiceError('not_found', `No job "${jobId.slice(0, 100)}". The job list shows the jobs there are.`, { next: nextCall('jobs.list', {}) });
    }
    return job;
  }

  latestOfSession(sessionId: string): JobRecord {
    let latest: JobRecord | null = null;
    for (const { record } of this.jobs.values()) if (record.sessionId === sessionId && (!latest || record.turn > latest.turn)) latest = record;
    if (!latest) {
      throw new ServiceError('not_found', `No conversation with session_id "${sessionId.slice(0, 100)}". The job list shows the sessions there are.`, {
        next: nextCall('jobs.list', {}),
      });
    }
    return latest;
  }

  active(): LiveJob[] {
    return [...this.jobs.values()].filter((j) => isActive(j.record.state));
  }

  /** Jobs holding a concurrency slot: running, or taken off the queue and being spawned. */
  runningCount(): number {
    let count = 0;
    for (const job of this.jobs.values()) if (job.launching || job.record.state === 'running') count++;
    return count;
  }

  reservedUsd(): number {
    let total = 0;
    // A verifying job's delegate has ended: it spends nothing more, so it holds none of the day back.
    for (const job of this.active()) if (job.record.state !== 'verifying') total += reservationOf(job.record);
    return total;
  }

  spentToday(): number {
    return spentOnDay(
      [...this.jobs.values()].map((j) => j.record),
      localDayKey(this.now()),
    );
  }

  /** Work stop() must wait for; a failure is logged, never thrown at no one. */
  runInBackground(promise: Promise<unknown>): void {
    const tracked = promise.catch((error: unknown) => this.log(`jobs: ${errorMessage(error)}`));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }

  async settled(more: Array<Promise<unknown>> = []): Promise<void> {
    await Promise.allSettled([...this.background, ...more]);
  }

  clearTimers(job: LiveJob): void {
    for (const cancel of job.timers) cancel();
    job.timers.clear();
  }

  /**
   * A delegate can print its own environment (`env`), key included. What it wrote to its stream stays in
   * the job's private folder; what the supervisor writes for others (the end reason in job.json, result.txt)
   * never carries the key. Views and events are scrubbed as they leave the service (Service.dispatch, emit).
   */
  redact(text: string): string {
    return scrubSecrets(text, this.deps.apiKey()?.value);
  }

  /**
   * Saves job.json. One write at a time per job, each of the record as it is when that write starts: a
   * progress save still under way when the job ends can then never land after the final save and put
   * "running" back on disk.
   */
  persist(job: LiveJob): Promise<void> {
    job.saving = job.saving.then(() => this.writeRecord(job));
    return job.saving;
  }

  private async writeRecord(job: LiveJob): Promise<void> {
    try {
      await this.store.write(job.record);
      job.unsaved = false;
    } catch (error) {
      if (!job.unsaved) this.log(`jobs: ${job.record.id}: job.json not saved: ${errorMessage(error)}; trying again until it is`);
      job.unsaved = true;
      // A gone folder will not come back. Otherwise (a full disk, say) try again: a record left saying
      // "running" would be finished as lost by the next start, its real end forgotten.
      if (job.persistRetry || error instanceof JobNotFoundError || this.stopped) return;
      job.persistRetry = setTimeout(() => {
        job.persistRetry = null;
        if (!this.stopped) void this.persist(job);
      }, this.deps.persistRetryMs ?? 2000);
      job.persistRetry.unref();
    }
  }

  emit(job: LiveJob): void {
    this.deps.onChange?.(job.record);
  }

  wake(job: LiveJob): void {
    for (const waiter of [...job.waiters]) waiter();
  }

  /** Resolves when the job is final, the supervisor stops, or `abandon` fires. */
  waitUntilFinal(job: LiveJob, abandon?: AbortSignal): Promise<void> {
    if (!isActive(job.record.state)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        job.waiters.delete(check);
        abandon?.removeEventListener('abort', done);
        resolve();
      };
      const check = () => {
        if (!isActive(job.record.state) || this.stopped) done();
      };
      job.waiters.add(check);
      // A wait that gave up (its time ran out) must not leave its waiter behind.
      abandon?.addEventListener('abort', done, { once: true });
    });
  }
}

/** A deadline on the real clock; unref'd, so a pending timeout never keeps the service alive. */
function realDeadline(callback: () => void, ms: number): () => void {
  const timer = setTimeout(callback, ms);
  timer.unref();
  return () => clearTimeout(timer);
}
