/**
 * What a delegated job costs (docs/ARCHITECTURE.md §4): a live estimate from token usage × the model's
 * OpenRouter list prices, and, after the job, what OpenRouter actually billed per generation.
 * Claude Code's own `total_cost_usd` uses Anthropic's price list and is never used here.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Usage } from '../../contract/jobs.js';
import type { CatalogPricing } from '../catalog/parse.js';
import type { GenerationRecord } from '../openrouter/client.js';

/** Money from float sums: keep it to 1e-9 USD so totals do not print as 0.30000000000000004. */
function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}

/**
 * Σ input × prompt price + output × completion price + cache reads × cache-read price + cache
 * writes × cache-write price, prices in $/M tokens.
 *
 * When a model publishes no cache price, the provider does not discount cached tokens, so they are
 * charged at the input price: a conservative estimate, never an optimistic one.
 *
 * Returns null when the price is not known: router models (`openrouter/auto` …) whose price is
 * that of whatever model they pick, and models without a prompt or completion price. The caller
 * decides what an unknown price means for a budget; guessing a number here would hide it.
 *
 * Prompt-length tiers (`tieredFromPromptTokens`) are not priced: the catalog only keeps the base
 * price, so an estimate for prompts beyond the first tier is low.
 */
export function estimateCostUsd(usageByMessage: Iterable<Usage>, pricing: CatalogPricing): number | null {
  const input = pricing.inputPerM;
  const output = pricing.outputPerM;
  if (pricing.variable || input === null || output === null) return null;
  const cacheRead = pricing.cacheReadPerM ?? input;
  const cacheWrite = pricing.cacheWritePerM ?? input;
  let perMillion = 0;
  for (const usage of usageByMessage) {
    perMillion += usage.inputTokens * input + usage.outputTokens * output + usage.cacheReadTokens * cacheRead + usage.cacheWriteTokens * cacheWrite;
  }
  return roundUsd(perMillion / 1e6);
}

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
