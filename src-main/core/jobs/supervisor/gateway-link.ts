/**
 * The supervisor as the metering gateway sees it (docs/ARCHITECTURE.md §11): which live job a token belongs
 * to, the day's spending, where each request is logged, and the stop when a request would pass a cap.
 */
import { isActive } from '../../../contract/index.js';
import type { GatewayRequest, RequestCounts } from '../../../contract/index.js';
import type { GatewayJob, GatewayJobs } from '../../gateway/gateway.js';
import type { JobBilling } from './billing.js';
import type { JobRegistry } from './job-registry.js';
import type { JobLifecycle } from './lifecycle.js';
import { errorMessage } from '../../../common/errors.js';

const NO_REQUESTS: RequestCounts = { total: 0, failed: 0, refused: 0, clamped: 0 };

export class GatewayLink implements GatewayJobs {
  private readonly registry: JobRegistry;
  private readonly lifecycle: JobLifecycle;
  private readonly ready: () => Promise<void>;
  private readonly billing: JobBilling;
  /** The request-log write under way per job (and any queued behind it). */
  private readonly writes = new Map<string, Promise<void>>();

  constructor(registry: JobRegistry, lifecycle: JobLifecycle, billing: JobBilling, ready: () => Promise<void>) {
    this.registry = registry;
    this.lifecycle = lifecycle;
    this.billing = billing;
    this.ready = ready;
  }

  /** OpenRouter's billed cost of one generation (a request its delegate hung up on), once its record is in. */
  billedCost(generationId: string): Promise<number | null> {
    return this.billing.generationCost(generationId);
  }

  async byTokenHash(hash: string): Promise<GatewayJob | null> {
    // A request that arrives while a restarted service is still adopting its jobs waits for them.
    await this.ready();
    const job = this.registry.jobByToken(hash);
    if (!job || job.terminating || !(job.launching || job.record.state === 'running')) return null;
    const { record } = job;
    return {
      id: record.id,
      model: record.model,
      sessionId: record.sessionId,
      pricing: job.pricing ?? record.prices ?? null,
      fallbacks: (record.fallbacks ?? []).map((f) => ({ model: f.model, pricing: f.prices })),
      maxCostUsd: record.maxCostUsd,
      estimatedCostUsd: record.estimatedCostUsd,
    };
  }

  day(): { spentUsd: number; capUsd: number } {
    return { spentUsd: this.registry.spentToday(), capUsd: this.registry.settings().budgets.perDayUsd };
  }

  requestStarted(jobId: string, entry: GatewayRequest): Promise<void> {
    const job = this.registry.job(jobId);
    if (!job) return Promise.resolve();
    job.meter.started(entry.id);
    return this.append(jobId, entry);
  }

  /** `_meteredUsd`, the gateway's ledger for this service's life, is the sum of what the job's meter holds since then. */
  logRequest(jobId: string, entry: GatewayRequest, _meteredUsd: number): void {
    const { registry } = this;
    const job = registry.job(jobId);
    if (!job) return;
    const counts = { ...(job.record.requests ?? NO_REQUESTS) };
    counts.total++;
    if (entry.outcome === 'refused') counts.refused++;
    else if (entry.outcome !== 'ok') counts.failed++;
    if (entry.maxTokensAsked !== null) counts.clamped++;
    job.record.requests = counts;
    job.meter.settled(entry);
    this.lifecycle.absorb(job);
    const ended = !this.isLive(jobId);
    // Announced once the line is on disk: the Jobs page reads the log when it hears of a new request. A request
    // that settles after its job ended (a hang-up whose cost came later) changes the record on disk too.
    void this.append(jobId, entry).then(async () => {
      if (ended) await registry.persist(job);
      registry.emit(job);
    });
  }

  /** One append at a time per job, in order: a request's last line must land after its first. */
  private append(jobId: string, entry: GatewayRequest): Promise<void> {
    const { registry } = this;
    const clean = { ...entry, note: entry.note === null ? null : registry.redact(entry.note) };
    const write = (this.writes.get(jobId) ?? Promise.resolve())
      .then(() => registry.store.appendRequest(jobId, clean))
      .catch((error: unknown) => registry.log(`jobs: ${jobId}: request log not written: ${errorMessage(error)}`));
    this.writes.set(jobId, write);
    registry.runInBackground(write);
    void write.then(() => {
      if (this.writes.get(jobId) !== write) return;
      this.writes.delete(jobId);
      // The job has ended while its last lines were written: its log is let go now (see release).
      if (!this.isLive(jobId)) registry.runInBackground(registry.store.closeRequestLog(jobId));
    });
    return write;
  }

  /** A job has ended: its request log is closed, now or once the lines still being written are in. */
  release(jobId: string): void {
    if (!this.writes.has(jobId)) this.registry.runInBackground(this.registry.store.closeRequestLog(jobId));
  }

  private isLive(jobId: string): boolean {
    const job = this.registry.job(jobId);
    return job !== undefined && (job.launching || isActive(job.record.state));
  }

  stopForBudget(jobId: string, reason: string): void {
    const job = this.registry.job(jobId);
    if (job) this.registry.runInBackground(this.lifecycle.terminate(job, 'budget_exceeded', reason));
  }
}
