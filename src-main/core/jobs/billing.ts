/**
 * What a finished job really cost (docs/ARCHITECTURE.md §4): OpenRouter's billed cost per `gen-…` id,
 * asked with retries because a generation's record appears seconds after it ends. Claude Code's own
 * `total_cost_usd` (Anthropic's prices) is never used.
 */
import { fetchBilledCost } from './cost.js';
import type { JobRegistry, LiveJob } from './job-registry.js';

export class JobBilling {
  private readonly registry: JobRegistry;
  /** Aborted by stop(): a look-up waiting out its retry schedule must not hold the service open. */
  private readonly shutdown = new AbortController();

  constructor(registry: JobRegistry) {
    this.registry = registry;
  }

  /** Asks OpenRouter what the job cost, in the background; the record says `pending` until it answers. */
  bill(job: LiveJob): void {
    const { registry } = this;
    const key = job.apiKey ?? registry.deps.apiKey()?.value ?? null;
    if (!key) {
      job.record.billing = 'unavailable';
      void registry.persist(job);
      return;
    }
    registry.track(
      (async () => {
        const billed = await fetchBilledCost({
          getGeneration: (id) => registry.deps.getGeneration(key, id),
          ids: job.record.generationIds,
          ...(registry.deps.billingDelaysMs ? { delaysMs: registry.deps.billingDelaysMs } : {}),
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

  stop(): void {
    this.shutdown.abort();
  }
}
