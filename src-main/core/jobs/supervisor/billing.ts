/**
 * What a finished job really cost (docs/ARCHITECTURE.md §4): OpenRouter's billed cost per `gen-…` id,
 * asked with retries because a generation's record appears seconds after it ends. Claude Code's own
 * `total_cost_usd` (Anthropic's prices) is never used.
 */
import { fetchBilledCost } from '../money/billed-cost.js';
import type { JobRegistry, LiveJob, SupervisorDeps } from './job-registry.js';

/**
 * Look-ups in flight at once for all jobs together. fetchBilledCost keeps a few in flight per job, so 20 jobs
 * ending together sent 80 at once: against OpenRouter's rate limits, and about 20 MB of the service's memory
 * while they ran (bench/delegation.ts). A job's billing is in the background; it can wait its turn.
 */
export const LOOKUPS_AT_ONCE = 4;

/** Turns to run a task, at most `count` at a time, in the order asked; the waits end when `signal` aborts. */
class Turns {
  private free: number;
  /** Each waiter's wake-up: true hands it a turn, false (the abort) does not. */
  private readonly waiting: Array<(turn: boolean) => void> = [];

  constructor(
    count: number,
    private readonly signal: AbortSignal,
  ) {
    this.free = count;
    signal.addEventListener('abort', () => {
      for (const wake of this.waiting.splice(0)) wake(false);
    });
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    this.signal.throwIfAborted();
    if (this.free > 0) this.free--;
    else if (!(await new Promise<boolean>((wake) => this.waiting.push(wake)))) this.signal.throwIfAborted();
    try {
      return await task();
    } finally {
      // Handed on, not freed: a caller arriving meanwhile cannot take it ahead of those waiting.
      const next = this.waiting.shift();
      if (next) next(true);
      else this.free++;
    }
  }
}

/** What billing uses of the supervisor's dependencies: the key and OpenRouter's generation records. */
export type BillingDeps = Pick<SupervisorDeps, 'apiKey' | 'getGeneration' | 'billingDelaysMs'>;

export class JobBilling {
  private readonly registry: JobRegistry;
  private readonly deps: BillingDeps;
  /** Aborted by stop(): a look-up waiting out its retry schedule must not hold the service open. */
  private readonly shutdown = new AbortController();
  private readonly lookups = new Turns(LOOKUPS_AT_ONCE, this.shutdown.signal);

  constructor(registry: JobRegistry, deps: BillingDeps) {
    this.registry = registry;
    this.deps = deps;
  }

  /** Asks OpenRouter what the job cost, in the background; the record says `pending` until it answers. */
  bill(job: LiveJob): void {
    const { registry } = this;
    const key = job.apiKey ?? this.deps.apiKey()?.value ?? null;
    if (!key) {
      job.record.billing = 'unavailable';
      void registry.persist(job);
      return;
    }
    registry.runInBackground(
      (async () => {
        // The generations the gateway's requests were answered with, as its request log names them: never ids the
        // delegate's stream names, which the delegate writes (a record from before the gateway keeps its own).
        const logged = await registry.store.readRequests(job.record.id, Number.POSITIVE_INFINITY).catch(() => []);
        const ids = [...new Set([...job.record.generationIds, ...logged.flatMap((r) => (r.generationId === null ? [] : [r.generationId]))])];
        job.record.generationIds = ids;
        if (ids.length === 0) {
          // No request of the job was answered with a generation (none sent, or all refused): none to look up.
          job.record.billing = 'unavailable';
          await registry.persist(job);
          registry.emit(job);
          return;
        }
        const billed = await fetchBilledCost({
          getGeneration: (id) => this.lookups.run(() => this.deps.getGeneration(key, id)),
          ids,
          ...(this.deps.billingDelaysMs ? { delaysMs: this.deps.billingDelaysMs } : {}),
          signal: this.shutdown.signal,
        });
        if (registry.stopped) return;
        job.record.billedCostUsd = billed.billedUsd;
        job.record.billing = billed.state;
        await registry.persist(job);
        registry.emit(job);
      })(),
    );
  }

  /**
   * What one generation was billed, once its record is in (null when none came, or the service is stopping): the
   * gateway asks this of a request its delegate hung up on, which a provider may have billed in full.
   */
  async generationCost(id: string): Promise<number | null> {
    const key = this.deps.apiKey()?.value ?? null;
    if (!key) return null;
    try {
      const billed = await fetchBilledCost({
        getGeneration: (one) => this.lookups.run(() => this.deps.getGeneration(key, one)),
        ids: [id],
        ...(this.deps.billingDelaysMs ? { delaysMs: this.deps.billingDelaysMs } : {}),
        signal: this.shutdown.signal,
      });
      return billed.billedUsd;
    } catch {
      return null;
    }
  }

  stop(): void {
    this.shutdown.abort();
  }
}
