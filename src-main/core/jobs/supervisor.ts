/**
 * The job supervisor (docs/ARCHITECTURE.md §4): starts delegated `claude -p` sessions, follows their streams,
 * prices them, enforces budgets and timeouts, kills whole process trees, and survives its own
 * restarts: jobs are files first, processes second.
 */
import { randomUUID } from 'node:crypto';
import { ENV, ServiceError, isActive } from '../../contract/index.js';
import type {
  Balance,
  JobList,
  JobRecord,
  JobResult,
  JobState,
  JobView,
  ParsedRequestOf,
  Settings,
} from '../../contract/index.js';
import type { CatalogModel, CatalogPricing } from '../catalog/parse.js';
import type { GenerationRecord } from '../openrouter/client.js';
import { holdsSecret, scrubSecrets } from '../secrets/redact.js';
import { checkBudget, jobCostUsd, localDayKey, reservationOf, spentOnDay } from './budget.js';
import { claudeArgs } from './claude-args.js';
import { newJobRecord } from './job-record.js';
import type { JobRequestFields } from './job-record.js';
import { estimateCostUsd, fetchBilledCost } from './cost.js';
import { promptPreview, resolveDirectory, resolveAllowedTools, resolveMaxCost, resolveModel, resolvePermission, resolvePrompt, resolveTimeout } from './job-request.js';
import { JobNotFoundError } from './job-store.js';
import type { JobStore } from './job-store.js';
import { killTree } from './kill-tree.js';
import { isSameProcess, processesByEnv, processesWithEnv } from './process-table.js';
import { spawnDetached } from './spawn-detached.js';
import { StreamParser } from './stream-parser.js';
import { StreamTail, readStreamFile } from './stream-tail.js';

type StartRequest = ParsedRequestOf<'jobs.start'>;
type FollowupRequest = ParsedRequestOf<'jobs.followup'>;

export interface SupervisorDeps {
  store: JobStore;
  settings: () => Settings;
  /** The catalog, for prices and the policy check. */
  models: () => Promise<CatalogModel[]>;
  apiKey: () => { value: string; source: string } | null;
  balance: (options: { refresh: boolean }) => Promise<Balance>;
  getGeneration: (key: string, id: string) => Promise<GenerationRecord | null>;
  /** The environment of a delegate on this model (the key inside; see child-env.ts). */
  childEnv: (model: string, apiKey: string, callerPath: string | undefined) => Record<string, string>;
  locateClaude: (callerPath: string | undefined) => Promise<string>;
  onChange?: (job: JobRecord) => void;
  log?: (line: string) => void;
  now?: () => number;
  /** How often an adopted job (not our child: no exit event) is checked for life. */
  adoptedPollMs?: number;
  killGraceMs?: number;
  /** Billing retry schedule (the generation record appears a few seconds late). */
  billingDelaysMs?: number[];
  /** How soon a job.json that could not be written is tried again (default 2000 ms). */
  persistRetryMs?: number;
  /** Injected by tests of the failure paths; the real ones by default. */
  spawn?: typeof spawnDetached;
  /** The service's own folders (runtime, data, config, cache, logs): no prompt_file is read from them, and every delegate is denied its file tools there. */
  serviceDirs?: readonly string[];
}

/** Why a job is being stopped by us rather than ending by itself. */
type Termination = Extract<JobState, 'cancelled' | 'timed_out' | 'budget_exceeded'>;

interface LiveJob {
  record: JobRecord;
  parser: StreamParser | null;
  tail: StreamTail | null;
  pricing: CatalogPricing | null;
  apiKey: string | null;
  callerPath: string | undefined;
  terminating: Termination | null;
  terminationReason: string | null;
  timers: Set<NodeJS.Timeout>;
  waiters: Set<() => void>;
  finishing: Promise<void> | null;
  /** The last write of job.json failed (a full or read-only disk, say). */
  unsaved: boolean;
  /** The next try to write it. */
  persistRetry: NodeJS.Timeout | null;
}

const TAIL_LIMIT_DEFAULT = 15;
const LOST_REASON =
  'The job\'s process ended while the service was not running, and its stream has no result. What it did is in its stream file.';
const FINAL_PERSIST_THROTTLE_MS = 2000;

export class Supervisor {
  private readonly deps: SupervisorDeps;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly jobs = new Map<string, LiveJob>();
  private readonly queue: string[] = [];
  private unreadable: Array<{ dir: string; problem: string }> = [];
  private running = 0;
  private stopped = false;
  private readonly billing = new AbortController();
  private readonly background = new Set<Promise<unknown>>();
  private started: Promise<void> | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;

  constructor(deps: SupervisorDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
    this.log = deps.log ?? (() => undefined);
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
    const { records, unreadable } = await this.deps.store.loadAll();
    this.unreadable = unreadable;
    for (const problem of unreadable) this.log(`jobs: cannot read ${problem.dir}: ${problem.problem}`);
    records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    const loaded = records.map((record) => this.live(record));
    for (const job of loaded) this.jobs.set(job.record.id, job);
    // Queued jobs may have been spawned by a service that died before recording it: one look at /proc for all of them.
    const marked = loaded.some((job) => job.record.state === 'queued') ? await processesByEnv(ENV.job) : new Map<string, never[]>();
    for (const job of loaded) {
      if (job.record.state === 'running') await this.recover(job);
      else if (job.record.state === 'queued') await this.requeue(job, marked.get(job.record.id) ?? []);
      else if (job.record.billing === 'pending' && job.record.generationIds.length > 0) this.bill(job);
    }
    await this.prune();
    // History is pruned at start and then twice a day, for a service that runs for weeks.
    this.pruneTimer = setInterval(() => this.track(this.prune()), 12 * 3600_000);
    this.pruneTimer.unref();
    this.pump();
  }

  /**
   * A job the last service left queued. If its stream has output, the last service spawned it and died
   * before it could record that: never spawn it twice — finish it from its stream instead.
   */
  private async requeue(job: LiveJob, marked: Array<{ pid: number; startTime: string | null }>): Promise<void> {
    // Spawned, but the service died before it could record that: its process carries the job's marker.
    const spawned = oldestProcess(marked);
    if (spawned) {
      Object.assign(job.record, { state: 'running', startedAt: job.record.startedAt ?? new Date(this.now()).toISOString(), pid: spawned.pid, pidStartTime: spawned.startTime });
      await this.persist(job);
      await this.recover(job);
      return;
    }
    const parser = new StreamParser();
    const read = await readStreamFile(this.deps.store.paths(job.record.id).stream, (line) => parser.push(line)).catch(() => null);
    if (!read || read.bytes === 0) {
      this.queue.push(job.record.id);
      return;
    }
    job.parser = parser;
    this.running++;
    await this.finish(job, { code: null, signal: null }, parser.result ? undefined : LOST_REASON);
  }

  /** Stops following jobs. Their processes keep running and are re-adopted by the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.billing.abort();
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    const tails: Array<Promise<void>> = [];
    for (const job of this.jobs.values()) {
      if (job.tail) tails.push(job.tail.stop());
      job.tail = null;
      for (const timer of job.timers) clearTimeout(timer);
      job.timers.clear();
      if (job.persistRetry) clearTimeout(job.persistRetry);
      job.persistRetry = null;
      this.wake(job);
    }
    await Promise.allSettled([...this.background, ...tails]);
  }

  // ── requests ──────────────────────────────────────────────────────────────────────────────

  async startJob(request: StartRequest, client: string): Promise<JobView> {
    await this.ready();
    const settings = this.deps.settings();
    this.assertDelegationOn(settings);
    const callerCwd = request.caller.cwd;
    const cwd = await resolveDirectory(request.cwd ?? callerCwd, callerCwd, 'cwd');
    const addDirs = await Promise.all((request.addDirs ?? []).map((d) => resolveDirectory(d, callerCwd, 'add_dirs entry')));
    const prompt = await resolvePrompt(request, callerCwd, { workDirs: [cwd, ...addDirs], serviceDirs: this.deps.serviceDirs ?? [] });
    const model = resolveModel(request.model, await this.deps.models(), settings);
    const permissionMode = resolvePermission(request.permissionMode, settings);
    const allowedTools = resolveAllowedTools(request.allowedTools, settings, [cwd, ...addDirs]);
    const timeoutMinutes = resolveTimeout(request.timeoutMinutes, settings);
    const maxCostUsd = resolveMaxCost(request.maxCostUsd, settings);
    const key = this.requireKey();
    await this.deps.locateClaude(request.caller.path);
    const record = this.newRecord({
      sessionId: randomUUID(),
      turn: 1,
      previousJobId: null,
      model: model.id,
      permissionMode,
      cwd,
      addDirs,
      allowedTools,
      disallowedTools: request.disallowedTools ?? [],
      appendSystemPrompt: request.appendSystemPrompt ?? null,
      maxTurns: request.maxTurns ?? null,
      maxCostUsd,
      timeoutMinutes,
      promptPreview: promptPreview(prompt, key),
      client,
    });
    const job = await this.admit(record, prompt, model.pricing, key, request.caller.path, settings);
    return this.view(job, { waitSeconds: request.waitSeconds, progressLimit: TAIL_LIMIT_DEFAULT });
  }

  async followup(request: FollowupRequest, client: string): Promise<JobView> {
    await this.ready();
    const settings = this.deps.settings();
    this.assertDelegationOn(settings);
    if ((request.jobId === undefined) === (request.sessionId === undefined)) {
      throw new ServiceError('invalid_request', 'Give either job_id or session_id of the conversation to continue.');
    }
    const previous = request.jobId !== undefined ? this.find(request.jobId).record : this.latestOfSession(request.sessionId ?? '');
    const latest = this.latestOfSession(previous.sessionId);
    // Checked now, and again at admission: two follow-ups racing must not both resume one session.
    const stillLatest = () => {
      const now = this.latestOfSession(latest.sessionId);
      if (now.id === latest.id && !isActive(now.state)) return;
      const which = now.id === latest.id ? 'The previous turn of this conversation' : 'Another follow-up of this conversation';
      throw new ServiceError(
        'conflict',
        `${which} (job ${now.id}) is ${now.state}. Wait for it with delegate_result {"job_id": "${now.id}", "wait_seconds": 120}, then follow up.`,
      );
    };
    stillLatest();
    const prompt = await resolvePrompt(request, request.caller.cwd, { workDirs: [latest.cwd, ...latest.addDirs], serviceDirs: this.deps.serviceDirs ?? [] });
    const model = resolveModel(latest.model, await this.deps.models(), settings);
    const permissionMode = resolvePermission(request.permissionMode ?? latest.permissionMode, settings);
    // Checked again: the user may have narrowed what callers may pre-approve since the first turn.
    const allowedTools = resolveAllowedTools(latest.allowedTools, settings, [latest.cwd, ...latest.addDirs]);
    const maxCostUsd = resolveMaxCost(request.maxCostUsd, settings);
    const key = this.requireKey();
    await this.deps.locateClaude(request.caller.path);
    await resolveDirectory(latest.cwd, latest.cwd, 'The conversation\'s directory');
    const record = this.newRecord({
      sessionId: latest.sessionId,
      turn: latest.turn + 1,
      previousJobId: latest.id,
      model: model.id,
      permissionMode,
      cwd: latest.cwd,
      addDirs: latest.addDirs,
      allowedTools,
      disallowedTools: latest.disallowedTools,
      appendSystemPrompt: latest.appendSystemPrompt,
      maxTurns: request.maxTurns ?? latest.maxTurns,
      maxCostUsd,
      timeoutMinutes: Math.min(latest.timeoutMinutes, settings.jobTimeoutMinutes),
      promptPreview: promptPreview(prompt, key),
      client,
    });
    const job = await this.admit(record, prompt, model.pricing, key, request.caller.path, settings, stillLatest);
    return this.view(job, { waitSeconds: request.waitSeconds, progressLimit: TAIL_LIMIT_DEFAULT });
  }

  async status(request: ParsedRequestOf<'jobs.status'>): Promise<JobView> {
    await this.ready();
    return this.view(this.find(request.jobId), { waitSeconds: request.waitSeconds, progressLimit: request.progressLimit });
  }

  async result(request: ParsedRequestOf<'jobs.result'>): Promise<JobResult> {
    await this.ready();
    const job = this.find(request.jobId);
    const view = await this.view(job, { waitSeconds: request.waitSeconds, progressLimit: TAIL_LIMIT_DEFAULT });
    if (isActive(job.record.state)) return { ...view, resultText: null, truncatedAt: null };
    const text = await this.deps.store.readResult(job.record.id);
    if (text === null) return { ...view, resultText: null, truncatedAt: null };
    const truncated = text.length > request.maxChars;
    return { ...view, resultText: truncated ? text.slice(0, request.maxChars) : text, truncatedAt: truncated ? request.maxChars : null };
  }

  async cancel(jobId: string): Promise<JobView> {
    await this.ready();
    const job = this.find(jobId);
    await this.terminate(job, 'cancelled', 'Cancelled on request.');
    return this.view(job, { waitSeconds: 0, progressLimit: TAIL_LIMIT_DEFAULT });
  }

  /** Cancels every queued and running job; resolves once their trees are gone. */
  async killAll(): Promise<number> {
    await this.ready();
    const active = [...this.jobs.values()].filter((j) => isActive(j.record.state));
    await Promise.all(active.map((j) => this.terminate(j, 'cancelled', 'Cancelled by kill-all.')));
    return active.length;
  }

  list(request: ParsedRequestOf<'jobs.list'>): JobList {
    const all = [...this.jobs.values()].map((j) => j.record).sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));
    const matching = request.state ? all.filter((r) => r.state === request.state) : all;
    const shown = matching.slice(0, request.limit);
    const conversations = new Map<string, JobList['conversations'][number]>();
    for (const record of shown) {
      let conversation = conversations.get(record.sessionId);
      if (!conversation) {
        conversation = { sessionId: record.sessionId, model: record.model, cwd: record.cwd, jobs: [], costUsd: 0 };
        conversations.set(record.sessionId, conversation);
      }
      conversation.jobs.push(record);
      conversation.costUsd += jobCostUsd(record);
    }
    const settings = this.deps.settings();
    return {
      conversations: [...conversations.values()],
      shownJobs: shown.length,
      totalJobs: matching.length,
      totalCostUsd: shown.reduce((sum, r) => sum + jobCostUsd(r), 0),
      spentTodayUsd: this.spentToday(),
      dailyBudgetUsd: settings.budgets.perDayUsd,
      running: all.filter((r) => r.state === 'running').length,
      queued: all.filter((r) => r.state === 'queued').length,
      unreadable: this.unreadable,
    };
  }

  /** Active jobs, for the tray and kill-all confirmations. */
  activeJobs(): JobRecord[] {
    return [...this.jobs.values()].filter((j) => isActive(j.record.state)).map((j) => j.record);
  }

  spentToday(): number {
    return spentOnDay(
      [...this.jobs.values()].map((j) => j.record),
      localDayKey(this.now()),
    );
  }

  // ── admission ─────────────────────────────────────────────────────────────────────────────

  private assertDelegationOn(settings: Settings): void {
    if (settings.mode === 'off') {
      throw new ServiceError(
        'delegation_off',
        'Delegation is turned off in the user\'s OpenRouter Delegate settings, so nothing was started. Only the user can turn it on (mode "ondemand" or "auto"); tell them if delegating would help.',
      );
    }
  }

  private requireKey(): string {
    const key = this.deps.apiKey();
    if (!key) throw new ServiceError('no_key', 'No OpenRouter key is set, so nothing was started. The user can add one with `openrouter-delegate key set`.');
    return key.value;
  }

  private reservedUsd(): number {
    let total = 0;
    for (const job of this.jobs.values()) if (isActive(job.record.state)) total += reservationOf(job.record);
    return total;
  }

  /** The balance a new job may draw on; refuses at once when OpenRouter has rejected the key. */
  private async remainingBalance(): Promise<number | null> {
    const balance = await this.deps.balance({ refresh: false });
    if (balance.keyProblemCode === 'openrouter_unauthorized' || balance.keyProblemCode === 'openrouter_payment_required') {
      // Claude Code would retry a dead key for minutes before giving up: say it now instead.
      throw new ServiceError(balance.keyProblemCode, `Nothing was started: ${balance.keyProblem ?? 'OpenRouter refused the key.'}`);
    }
    if (balance.key?.remainingUsd !== null && balance.key?.remainingUsd !== undefined) return balance.key.remainingUsd;
    if (balance.credits) return balance.credits.remainingUsd;
    return null;
  }

  /** Budget check and reservation in one synchronous step, then the files, then the queue. */
  private async admit(
    record: JobRecord,
    prompt: string,
    pricing: CatalogPricing,
    key: string,
    callerPath: string | undefined,
    settings: Settings,
    precondition: () => void = () => undefined,
  ): Promise<LiveJob> {
    if (estimateCostUsd([], pricing) === null) {
      throw new ServiceError('policy_refused', `${record.model} has no fixed price (a router), so its cost cannot be capped. Pick a model with list prices.`);
    }
    const remainingUsd = await this.remainingBalance();
    // No await between the checks and the insertion below: concurrent requests see each other.
    precondition();
    checkBudget({ settings, spentTodayUsd: this.spentToday(), reservedUsd: this.reservedUsd(), maxCostUsd: record.maxCostUsd, remainingUsd });
    const job = this.live(record);
    job.pricing = pricing;
    record.prices = pricing;
    job.apiKey = key;
    job.callerPath = callerPath;
    this.jobs.set(record.id, job);
    try {
      // The delegate never gets the key from its prompt either: it would go to the model's provider.
      await this.deps.store.create(record, scrubSecrets(prompt, key));
    } catch (error) {
      // Nothing was written; a kill-all waiting on this job must not wait forever.
      this.jobs.delete(record.id);
      record.state = 'failed';
      this.wake(job);
      throw new ServiceError('io_error', error instanceof Error ? error.message : String(error));
    }
    this.queue.push(record.id);
    this.emit(job);
    this.pump();
    return job;
  }

  /**
   * The one place what a caller sent becomes a record (job.json, every view and event, and the delegate's
   * command line): without the key. A folder cannot be renamed, so one whose path holds it is refused.
   */
  private newRecord(fields: JobRequestFields): JobRecord {
    const key = this.deps.apiKey()?.value;
    for (const dir of [fields.cwd, ...fields.addDirs]) {
      if (holdsSecret(dir, key)) {
        throw new ServiceError(
          'invalid_request',
          `The folder ${scrubSecrets(dir, key)} has an OpenRouter key in its path, and a job's folders are shown in its views and given to its model. Rename the folder, or delegate from another one.`,
        );
      }
    }
    const scrub = (text: string) => scrubSecrets(text, key);
    return newJobRecord(
      this.deps.store.newJobId(),
      {
        ...fields,
        promptPreview: scrub(fields.promptPreview),
        appendSystemPrompt: fields.appendSystemPrompt === null ? null : scrub(fields.appendSystemPrompt),
        allowedTools: fields.allowedTools.map(scrub),
        disallowedTools: fields.disallowedTools.map(scrub),
        client: scrub(fields.client),
      },
      this.now(),
    );
  }

  private live(record: JobRecord): LiveJob {
    return {
      record,
      parser: null,
      tail: null,
      pricing: null,
      apiKey: null,
      callerPath: undefined,
      terminating: null,
      terminationReason: null,
      timers: new Set(),
      waiters: new Set(),
      finishing: null,
      unsaved: false,
      persistRetry: null,
    };
  }

  // ── running ───────────────────────────────────────────────────────────────────────────────

  /** Starts queued jobs while there is room under the concurrency limit. */
  private pump(): void {
    if (this.stopped) return;
    const limit = this.deps.settings().concurrency;
    while (this.running < limit && this.queue.length > 0) {
      const id = this.queue.shift() ?? '';
      const job = this.jobs.get(id);
      if (!job || job.record.state !== 'queued') continue;
      this.running++;
      this.track(this.launch(job));
    }
  }

  private track(promise: Promise<unknown>): void {
    const tracked = promise.catch((error: unknown) => this.log(`jobs: ${error instanceof Error ? error.message : String(error)}`));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }

  private async launch(job: LiveJob): Promise<void> {
    const record = job.record;
    const paths = this.deps.store.paths(record.id);
    try {
      // A job re-queued after a restart lost its in-memory key and prices: look them up again.
      job.apiKey ??= this.requireKey();
      job.pricing ??= record.prices ?? resolveModel(record.model, await this.deps.models(), this.deps.settings()).pricing;
      const command = await this.deps.locateClaude(job.callerPath);
      if (job.terminating) {
        // Cancelled before it was spawned: nothing to kill.
        this.running = Math.max(0, this.running - 1);
        await this.settleUnstarted(job, job.terminating, job.terminationReason);
        return;
      }
      const spawn = this.deps.spawn ?? spawnDetached;
      const child = await spawn({
        command,
        args: claudeArgs(record, this.deps.serviceDirs ?? []),
        cwd: record.cwd,
        env: { ...this.deps.childEnv(record.model, job.apiKey, job.callerPath), [ENV.job]: record.id },
        stdinFile: paths.prompt,
        stdoutFile: paths.stream,
        stderrFile: paths.stderr,
      });
      const started = { state: 'running' as const, startedAt: new Date(this.now()).toISOString(), claudePath: command, pid: child.pid, pidStartTime: child.startTime };
      // On disk before any client can see it: a service killed right after a client saw "running" must
      // find the job running, with its pid, when it starts again (not queued, to be spawned twice).
      const saved = await this.deps.store.write({ ...record, ...started }).then(
        () => true,
        () => false,
      );
      Object.assign(record, started);
      if (!saved) await this.persist(job);
      this.emit(job);
      this.follow(job);
      this.armTimeout(job);
      // Not tracked: a job outlives stop() (it is re-adopted by the next start), so stop() must not wait for it.
      child.exited.then(({ code, signal }) => this.finish(job, { code, signal })).catch((error: unknown) => this.log(`jobs: ${record.id}: ${String(error)}`));
      // Cancelled while it was being spawned: the process exists now, so end it like any other.
      if (job.terminating) this.track(this.kill(job));
    } catch (error) {
      this.running = Math.max(0, this.running - 1);
      await this.settleUnstarted(job, 'failed', error instanceof Error ? error.message : String(error));
    }
  }

  /** A job that ends without ever having run (refused at launch, or cancelled first). */
  private async settleUnstarted(job: LiveJob, state: JobState, reason: string | null): Promise<void> {
    Object.assign(job.record, { state, endedAt: new Date(this.now()).toISOString(), endReason: reason === null ? null : this.redact(reason), billing: 'unavailable' });
    await this.persist(job);
    this.emit(job);
    this.wake(job);
    this.pump();
  }

  /** Tails the job's stream into its parser, pricing each assistant message as it arrives. */
  private follow(job: LiveJob): void {
    const parser = (job.parser = new StreamParser());
    let lastPersist = 0;
    job.tail = new StreamTail({
      file: this.deps.store.paths(job.record.id).stream,
      onLine: (line) => {
        parser.push(line);
        this.absorb(job);
        // Lines flushed after the process exited belong to a job that is already ending by itself.
        if (job.record.state !== 'running' || job.finishing) return;
        if (job.record.estimatedCostUsd > job.record.maxCostUsd && !job.terminating) {
          this.track(this.terminate(
            job,
            'budget_exceeded',
            `Stopped: the estimated cost passed the job's cap of $${job.record.maxCostUsd.toFixed(2)}.`,
          ));
        } else if (this.now() - lastPersist > FINAL_PERSIST_THROTTLE_MS) {
          // At most every 2 s while it runs: save its progress, and tell the windows (tool calls, tokens, cost).
          lastPersist = this.now();
          void this.persist(job);
          this.emit(job);
        }
      },
    });
    job.tail.start();
  }

  /** Copies what the stream has told so far into the record. */
  private absorb(job: LiveJob): void {
    const parser = job.parser;
    if (!parser) return;
    const record = job.record;
    record.toolCalls = parser.toolCalls;
    // Live, the stream under-reports output tokens (each message's usage is a snapshot taken as it
    // began); the result line's totals correct that at the end. bestUsage is the larger of the two.
    record.usage = parser.bestUsage;
    record.generationIds = [...parser.generationIds];
    if (job.pricing) record.estimatedCostUsd = estimateCostUsd([parser.bestUsage], job.pricing) ?? record.estimatedCostUsd;
    const result = parser.result;
    if (result) {
      record.resultSubtype = result.subtype;
      record.isError = result.isError;
      record.numTurns = result.numTurns;
    }
  }

  private armTimeout(job: LiveJob): void {
    const started = Date.parse(job.record.startedAt ?? job.record.createdAt);
    const remaining = Math.max(0, started + job.record.timeoutMinutes * 60_000 - this.now());
    const timer = setTimeout(() => {
      job.timers.delete(timer);
      this.track(this.terminate(job, 'timed_out', `Stopped: the job ran longer than its timeout of ${job.record.timeoutMinutes} minutes.`));
    }, remaining);
    timer.unref();
    job.timers.add(timer);
  }

  private async terminate(job: LiveJob, state: Termination, reason: string): Promise<void> {
    const record = job.record;
    if (!isActive(record.state)) return;
    if (!job.terminating) {
      job.terminating = state;
      job.terminationReason = reason;
    }
    if (record.state === 'queued') {
      const index = this.queue.indexOf(record.id);
      if (index >= 0) {
        this.queue.splice(index, 1);
        await this.settleUnstarted(job, state, reason);
        return;
      }
      // Being spawned right now: launch() sees `terminating` and kills it once it exists.
      await this.waitUntilFinal(job);
      return;
    }
    await this.kill(job);
    await this.waitUntilFinal(job);
  }

  /**
   * Ends what a finished job left running: processes that still carry its marker (ENV.job) in their
   * environment. Claude Code's Bash tool starts commands in sessions of their own, so once the delegate
   * itself is gone, neither its process group nor its tree reaches them.
   */
  private async sweep(jobId: string): Promise<void> {
    const left = await processesWithEnv(ENV.job, jobId);
    if (left.length === 0) return;
    this.log(`jobs: ${jobId}: ending ${left.length} process(es) the delegate left running: ${left.map((p) => p.pid).join(', ')}`);
    await Promise.all(
      left.map((p) => killTree(p.pid, { startTime: p.startTime, graceMs: this.deps.killGraceMs ?? 2000, log: this.log }).catch(() => undefined)),
    );
  }

  private async kill(job: LiveJob): Promise<void> {
    const { pid, pidStartTime } = job.record;
    if (pid === null) return;
    const outcome = await killTree(pid, { startTime: pidStartTime, ...(this.deps.killGraceMs !== undefined ? { graceMs: this.deps.killGraceMs } : {}), log: this.log });
    if (outcome.survivors.length > 0) this.log(`jobs: ${job.record.id}: processes survived the kill: ${outcome.survivors.join(', ')}`);
  }

  private waitUntilFinal(job: LiveJob, abandon?: AbortSignal): Promise<void> {
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

  /** The process ended: read the rest of its stream and settle the job's outcome. */
  private finish(job: LiveJob, exit: { code: number | null; signal: string | null }, lostReason?: string): Promise<void> {
    job.finishing ??= (async () => {
      if (this.stopped) return;
      job.tail?.flush();
      job.tail?.stop();
      job.tail = null;
      for (const timer of job.timers) clearTimeout(timer);
      job.timers.clear();
      this.absorb(job);
      const record = job.record;
      const stderrTail = await this.deps.store.readStderrTail(record.id).catch(() => '');
      Object.assign(record, { exitCode: exit.code, signal: exit.signal, endedAt: new Date(this.now()).toISOString() });
      const outcome = lostReason ? { state: 'lost' as const, endReason: lostReason } : this.outcome(job, exit, stderrTail);
      Object.assign(record, { state: outcome.state, endReason: outcome.endReason === null ? null : this.redact(outcome.endReason) });
      const raw = job.parser?.result?.text ?? job.parser?.lastAssistantText ?? null;
      const text = raw === null ? null : this.redact(raw);
      if (text !== null) await this.deps.store.writeResult(record.id, text).catch((e: unknown) => this.log(`jobs: ${record.id}: result not saved: ${String(e)}`));
      record.billing = record.generationIds.length > 0 ? 'pending' : 'unavailable';
      await this.persist(job);
      // A delegate that died (killed from outside, crashed) cannot end what its tools started.
      this.track(this.sweep(record.id));
      this.running = Math.max(0, this.running - 1);
      this.emit(job);
      this.wake(job);
      this.pump();
      if (record.billing === 'pending') this.bill(job);
    })();
    return job.finishing;
  }

  private outcome(job: LiveJob, exit: { code: number | null; signal: string | null }, stderrTail: string): Pick<JobRecord, 'state' | 'endReason'> {
    if (job.terminating) return { state: job.terminating, endReason: job.terminationReason };
    const result = job.parser?.result;
    if (result) {
      if (!result.isError && result.subtype === 'success') return { state: 'succeeded', endReason: null };
      return { state: 'failed', endReason: describeFailure(result, stderrTail) };
    }
    const how = exit.signal ? `was killed by ${exit.signal}` : exit.code === null ? 'ended' : `exited with code ${exit.code}`;
    const detail = lastLine(stderrTail);
    return { state: 'failed', endReason: `Claude Code ${how} without a result.${detail ? ` Its last words: ${detail}` : ''}` };
  }

  /** Asks OpenRouter what the job really cost (the records appear a few seconds late). */
  private bill(job: LiveJob): void {
    const key = job.apiKey ?? this.deps.apiKey()?.value ?? null;
    if (!key) {
      job.record.billing = 'unavailable';
      void this.persist(job);
      return;
    }
    this.track(
      (async () => {
        const billed = await fetchBilledCost({
          getGeneration: (id) => this.deps.getGeneration(key, id),
          ids: job.record.generationIds,
          ...(this.deps.billingDelaysMs ? { delaysMs: this.deps.billingDelaysMs } : {}),
          signal: this.billing.signal,
        });
        if (this.stopped) return;
        job.record.billedCostUsd = billed.billedUsd;
        job.record.billing = billed.state;
        await this.persist(job);
        this.emit(job);
      })(),
    );
  }

  // ── recovery ──────────────────────────────────────────────────────────────────────────────

  /** A job the last service left running: adopt its process if it is still the same one, else finish it from its stream. */
  private async recover(job: LiveJob): Promise<void> {
    const { pid, pidStartTime } = job.record;
    const alive = pid !== null && pidStartTime !== null && (await isSameProcess(pid, pidStartTime));
    // The prices kept at admission: the cap is enforced even offline, or if the model left the catalog.
    job.pricing =
      job.record.prices ??
      (await this.deps
        .models()
        .then((models) => models.find((m) => m.id === job.record.model)?.pricing ?? null)
        .catch(() => null));
    if (!job.pricing) this.log(`jobs: ${job.record.id}: no prices for ${job.record.model}; its cost cannot be estimated until it ends`);
    job.apiKey = this.deps.apiKey()?.value ?? null;
    if (alive) {
      this.log(`jobs: re-adopting ${job.record.id} (pid ${pid})`);
      this.running++;
      this.follow(job);
      this.armTimeout(job);
      this.watchAdopted(job);
      return;
    }
    // The process is gone: whatever it wrote is in the stream file.
    const parser = (job.parser = new StreamParser());
    await readStreamFile(this.deps.store.paths(job.record.id).stream, (line) => parser.push(line)).catch(() => undefined);
    this.running++;
    await this.finish(job, { code: null, signal: null }, parser.result ? undefined : LOST_REASON);
  }

  /** An adopted process is not our child, so no exit event: check on it until it is gone. */
  private watchAdopted(job: LiveJob): void {
    const { pid, pidStartTime } = job.record;
    const poll = () => {
      const timer = setTimeout(() => {
        job.timers.delete(timer);
        if (this.stopped) return;
        void isSameProcess(pid ?? 0, pidStartTime ?? '').then((alive) => {
          if (alive) poll();
          else this.track(this.finish(job, { code: null, signal: null }));
        });
      }, this.deps.adoptedPollMs ?? 500);
      job.timers.add(timer);
    };
    poll();
  }

  private async prune(): Promise<void> {
    const settings = this.deps.settings();
    const { removed } = await this.deps.store.prune({ retentionDays: settings.retentionDays, isActive: (r) => isActive(r.state) });
    for (const id of removed) this.jobs.delete(id);
  }

  // ── views ─────────────────────────────────────────────────────────────────────────────────

  private find(jobId: string): LiveJob {
    const job = this.jobs.get(jobId);
    if (!job) {
      throw new ServiceError('not_found', `No job "${jobId.slice(0, 100)}". delegate_list shows the jobs there are.`);
    }
    return job;
  }

  private latestOfSession(sessionId: string): JobRecord {
    let latest: JobRecord | null = null;
    for (const { record } of this.jobs.values()) if (record.sessionId === sessionId && (!latest || record.turn > latest.turn)) latest = record;
    if (!latest) throw new ServiceError('not_found', `No conversation with session_id "${sessionId.slice(0, 100)}". delegate_list shows the sessions there are.`);
    return latest;
  }

  private async wait(job: LiveJob, seconds: number): Promise<boolean> {
    if (seconds <= 0 || !isActive(job.record.state)) return false;
    const giveUp = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      giveUp.abort();
    }, seconds * 1000);
    await this.waitUntilFinal(job, giveUp.signal);
    clearTimeout(timer);
    return timedOut && isActive(job.record.state);
  }

  private async view(job: LiveJob, options: { waitSeconds: number; progressLimit: number }): Promise<JobView> {
    const waitTimedOut = await this.wait(job, options.waitSeconds);
    const record = job.record;
    if (!job.parser && !isActive(record.state)) {
      // A finished job from history: its tail is in its stream file.
      const parser = new StreamParser();
      await readStreamFile(this.deps.store.paths(record.id).stream, (line) => parser.push(line)).catch(() => undefined);
      job.parser = parser;
    }
    const paths = this.deps.store.paths(record.id);
    const end = record.endedAt ? Date.parse(record.endedAt) : this.now();
    const start = record.startedAt ? Date.parse(record.startedAt) : end;
    const view: JobView = {
      job: record,
      elapsedSeconds: Math.max(0, Math.round((end - start) / 1000)),
      unverified: !isActive(record.state) && record.toolCalls === 0,
      tail: job.parser?.tail(options.progressLimit) ?? [],
      queuePosition: record.state === 'queued' ? this.queue.indexOf(record.id) + 1 || null : null,
      files: { dir: paths.dir, prompt: paths.prompt, stream: paths.stream, stderr: paths.stderr, result: paths.result },
      waitTimedOut,
    };
    if (record.state === 'failed' || record.state === 'lost') {
      const stderr = await this.deps.store.readStderrTail(record.id, 2000).catch(() => '');
      if (stderr.trim()) view.stderrTail = stderr;
    }
    return view;
  }

  // ── plumbing ──────────────────────────────────────────────────────────────────────────────

  /**
   * A delegate can print its own environment (`env`), key included. What it wrote to its stream stays in
   * the job's private folder; what the supervisor writes for others (the end reason in job.json, result.txt)
   * never carries the key. Views and events are scrubbed as they leave the service (Service.dispatch, emit).
   */
  private redact(text: string): string {
    return scrubSecrets(text, this.deps.apiKey()?.value);
  }

  private async persist(job: LiveJob): Promise<void> {
    try {
      await this.deps.store.write(job.record);
      job.unsaved = false;
    } catch (error) {
      if (!job.unsaved) this.log(`jobs: ${job.record.id}: job.json not saved: ${error instanceof Error ? error.message : String(error)}; trying again until it is`);
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

  private emit(job: LiveJob): void {
    this.deps.onChange?.(job.record);
  }

  private wake(job: LiveJob): void {
    for (const waiter of [...job.waiters]) waiter();
  }
}

/** The delegate among a job's marked processes: the oldest (its children start later). */
function oldestProcess(marked: Array<{ pid: number; startTime: string | null }>): { pid: number; startTime: string } | null {
  const known = marked.filter((p): p is { pid: number; startTime: string } => p.startTime !== null);
  const ticks = (p: { startTime: string }) => Number(p.startTime.split(':').pop());
  return known.sort((a, b) => ticks(a) - ticks(b))[0] ?? null;
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}

function describeFailure(result: NonNullable<StreamParser['result']>, stderrTail: string): string {
  const status = result.apiErrorStatus;
  const said = result.text ? ` Claude Code said: ${result.text.slice(0, 500)}` : '';
  switch (status) {
    case 401:
      return `OpenRouter rejected the key (401). The user can set a valid one with \`openrouter-delegate key set\`.${said}`;
    case 402:
      return `OpenRouter says the account is out of credits (402). Top up at https://openrouter.ai/settings/credits.${said}`;
    case 429:
      return `OpenRouter rate-limited the model (429) and Claude Code gave up retrying. Try again later or pick another model.${said}`;
    default:
      // Every server error (500, 502, 503, 504, Anthropic's 529 …), not only some of them.
      if (status !== null && status >= 500) return `The model's provider is overloaded or unavailable (${status}). Try again later or pick another model.${said}`;
      break;
  }
  if (result.subtype === 'error_max_turns') return `The delegate used up its max_turns before finishing.${said}`;
  if (result.subtype === 'error_during_execution') return `Claude Code stopped with an error during execution.${said}${stderrTail ? ` ${lastLine(stderrTail)}` : ''}`;
  // Claude Code reports a turn that failed on a connection error as subtype "success": not worth repeating.
  const details = [...(result.subtype === 'success' ? [] : [result.subtype]), ...(status ? [`HTTP ${status}`] : [])];
  return `The delegate ended with an error${details.length > 0 ? ` (${details.join(', ')})` : ''}.${said}`;
}
