/**
 * What token usage costs at a model's OpenRouter list prices (docs/ARCHITECTURE.md §4): the live estimate of a
 * job from its stream, and the gateway's price of one request. Pure pricing, so both the jobs and the gateway
 * take it from the catalog; what OpenRouter actually billed is `core/jobs/money/billed-cost.ts`.
 * Claude Code's own `total_cost_usd` uses Anthropic's price list and is never used here.
 */
import type { Usage } from '../../contract/jobs.js';
import type { CatalogPricing } from './parse.js';

/** Money from float sums: keep it to 1e-9 USD so totals do not print as 0.30000000000000004. */
export function roundUsd(usd: number): number {
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
