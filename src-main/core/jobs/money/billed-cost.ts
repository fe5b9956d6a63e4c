/**
 * What a delegated job really cost (docs/ARCHITECTURE.md §4): after the job, what OpenRouter billed per
 * generation, asked with retries because a generation's record appears seconds after it ends. The estimate from
 * list prices is `core/catalog/cost-estimate.ts`; Claude Code's own `total_cost_usd` is never used here.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { roundUsd } from '../../catalog/cost-estimate.js';
import type { GenerationRecord } from '../../openrouter/client.js';

/** OpenRouter records a generation a few seconds after it ends (a 404 at 3 s, found at 5 s). */
export const BILLING_RETRY_DELAYS_MS: readonly number[] = [2000, 4000, 8000, 16000, 30000];
/** Look-ups in flight at once: a long job has hundreds of generations; OpenRouter rate-limits. */
const LOOKUP_CONCURRENCY = 4;

export interface FetchBilledCostOptions {
  /** Usually `(id) => client.getGeneration(key, id)`: null = not recorded yet. */
  getGeneration: (id: string) => Promise<GenerationRecord | null>;
  ids: string[];
  /** Waits before each retry of the ids still missing; the first look-up is immediate. */
  delaysMs?: readonly number[];
  sleep?: (ms: number) => Promise<void>;
  /** Service shutdown: stops waiting and rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface BilledCost {
  /** Σ billed cost of the generations found; null when none was found. */
  billedUsd: number | null;
  /** complete: every id found (also when there were none); partial: some; unavailable: none. */
  state: 'complete' | 'partial' | 'unavailable';
  missing: string[];
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

/** An injected sleep need not know about the signal, so the abort races it. */
function sleepUnlessAborted(sleep: (ms: number) => Promise<void>, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return sleep(ms);
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    sleep(ms).then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Looks up what OpenRouter billed for each generation id, retrying the missing ones on the delay
 * schedule. A look-up that fails (401, 5xx, network) counts as missing for that attempt only: the
 * next attempt tries again.
 */
export async function fetchBilledCost(options: FetchBilledCostOptions): Promise<BilledCost> {
  const { getGeneration, signal } = options;
  const delays = options.delaysMs ?? BILLING_RETRY_DELAYS_MS;
  const sleep = options.sleep ?? ((ms: number) => delay(ms, undefined, signal ? { signal } : {}));
  const found = new Map<string, number>();
  let missing = [...new Set(options.ids)];

  const attempt = async (): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < missing.length) {
        signal?.throwIfAborted();
        const id = missing[next++] as string;
        try {
          const record = await getGeneration(id);
          if (record !== null) found.set(id, record.totalCostUsd);
        } catch {
          // Counted as missing this time; the schedule retries it.
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(LOOKUP_CONCURRENCY, missing.length) }, worker));
    missing = missing.filter((id) => !found.has(id));
  };

  signal?.throwIfAborted();
  await attempt();
  for (const ms of delays) {
    if (missing.length === 0) break;
    await sleepUnlessAborted(sleep, ms, signal);
    signal?.throwIfAborted();
    await attempt();
  }

  if (missing.length === 0) return { billedUsd: roundUsd(sum(found.values())), state: 'complete', missing };
  if (found.size === 0) return { billedUsd: null, state: 'unavailable', missing };
  return { billedUsd: roundUsd(sum(found.values())), state: 'partial', missing };
}

function sum(values: Iterable<number>): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}
