/**
 * What one request can cost at most, and whether it may go (docs/ARCHITECTURE.md §11). Pure, so every
 * figure of the decision is tested on its own.
 *
 * Two figures per prompt (prompt-measure.ts):
 * - the **estimate** a request is let through on: the text the model reads at a ratio of tokens to bytes that
 *   starts at one token per 3 bytes (prose and code run about 1 per 4) and then follows the largest ratio
 *   OpenRouter reported for the job, never below one per 4 bytes; every other value of the body at a token a byte;
 * - the **bound** it is held at while it is in flight: every byte the gateway forwards at a token (a byte-level
 *   BPE tokenizer never makes more), the JSON a template prints again at its worst, a few tokens per block and per
 *   request for the template, images at their pixels. No field is left out of it, so none can be forgotten.
 * Every prompt token is priced at the dearer of the input and cache-write prices, and the answer as if it used
 * all of `max_tokens`. When the money left cannot pay for the whole answer, the request goes with `max_tokens`
 * lowered to what it can pay for; when it cannot pay for a useful answer, it is refused and the job ends
 * `budget_exceeded`.
 */
import { formatCount, formatUsdPrecise } from '../../../common/format.js';
import type { CatalogPricing } from '../../catalog/parse.js';
import type { PromptMeasure } from './prompt-measure.js';

/** Tokens per byte of text before OpenRouter has reported on any of the job's requests. */
export const FIRST_TOKENS_PER_TEXT_BYTE = 1 / 3;
/** The estimate's ratio never falls below this, whatever the job's earlier requests measured. */
export const FLOOR_TOKENS_PER_TEXT_BYTE = 1 / 4;
/** Template tokens per block (role markers, block wrappers) in the estimate, and at most. */
const BLOCK_TOKENS = 4;
const BLOCK_TOKENS_BOUND = 8;
/** Tokens an image is estimated at (Anthropic's ≈ 1.15 MP image). */
const IMAGE_TOKENS = 1_600;
/** A chat template's own text around the tools and the conversation, at most. */
const TEMPLATE_TOKENS_BOUND = 1_000;
/** An answer shorter than this (or than max_tokens, if smaller) is not worth sending. */
export const MIN_USEFUL_OUTPUT_TOKENS = 1024;

export interface Prices {
  /** USD per token. */
  promptMax: number;
  output: number;
}

/** The prices a request is capped at; null when the model's price is unknown (router models). */
export function ceilingPrices(pricing: CatalogPricing | null): Prices | null {
  if (!pricing || pricing.variable || pricing.inputPerM === null || pricing.outputPerM === null) return null;
  return { promptMax: Math.max(pricing.inputPerM, pricing.cacheWritePerM ?? pricing.inputPerM) / 1e6, output: pricing.outputPerM / 1e6 };
}

/**
 * Prices no model of `pricings` is dearer than, field by field (a cache price left out counts at the input
 * price, as the cost estimate charges it): what a request is capped at when OpenRouter may serve it with any of
 * them, and what an answer is priced at when it names none of them. Null when any price is unknown.
 */
export function dearestPricing(pricings: ReadonlyArray<CatalogPricing | null>): CatalogPricing | null {
  return boundPricing(pricings, 'dearest');
}

/**
 * The same, each price at its lowest: what the stream's own estimate of a job with fallbacks prices at (the
 * stream does not say which model served each request; the gateway's per-request figure, taken with it at
 * its larger, does).
 */
export function cheapestPricing(pricings: ReadonlyArray<CatalogPricing | null>): CatalogPricing | null {
  return boundPricing(pricings, 'cheapest');
}

function boundPricing(pricings: ReadonlyArray<CatalogPricing | null>, bound: 'dearest' | 'cheapest'): CatalogPricing | null {
  const known = pricings.filter((p): p is CatalogPricing => p !== null && !p.variable && p.inputPerM !== null && p.outputPerM !== null);
  if (known.length === 0 || known.length < pricings.length) return null;
  const pick = bound === 'dearest' ? Math.max : Math.min;
  const each = (of: (p: CatalogPricing) => number) => pick(...known.map(of));
  // Long-prompt prices start at a tier: the dearest starts soonest; the cheapest latest, or never.
  const tiers = known.map((p) => p.tieredFromPromptTokens);
  const tiered = tiers.filter((t): t is number => t !== null);
  let tieredFromPromptTokens: number | null;
  if (bound === 'dearest') tieredFromPromptTokens = tiered.length > 0 ? Math.min(...tiered) : null;
  else tieredFromPromptTokens = tiered.length === tiers.length ? Math.max(...tiered) : null;
  return {
    inputPerM: each((p) => p.inputPerM ?? 0),
    outputPerM: each((p) => p.outputPerM ?? 0),
    cacheReadPerM: each((p) => p.cacheReadPerM ?? p.inputPerM ?? 0),
    cacheWritePerM: each((p) => p.cacheWritePerM ?? p.inputPerM ?? 0),
    variable: false,
    tieredFromPromptTokens,
  };
}

/** The prompt's tokens as a request is let through on them: `tokensPerTextByte` is the job's measured ratio, if any. */
export function promptTokensExpected(prompt: PromptMeasure, tokensPerTextByte: number = FIRST_TOKENS_PER_TEXT_BYTE): number {
  const ratio = Math.max(tokensPerTextByte, FLOOR_TOKENS_PER_TEXT_BYTE);
  return Math.ceil(prompt.textBytes * ratio) + prompt.otherBytes + prompt.blocks * BLOCK_TOKENS + prompt.images * IMAGE_TOKENS;
}

/**
 * The prompt's tokens at most: what a request in flight is held at until OpenRouter says what it cost. Every byte
 * the gateway writes upstream at a token, what templates print in addition, images at their pixels
 * (prompt-measure.ts), and the template's own tokens.
 */
export function promptTokensBound(prompt: PromptMeasure): number {
  return prompt.boundBytes + prompt.blocks * BLOCK_TOKENS_BOUND + prompt.mediaTokensBound + TEMPLATE_TOKENS_BOUND;
}

/** What a request costs at most: its prompt's bound and all of `maxTokens` (null: count_tokens, which answers nothing). */
export function boundUsd(prompt: PromptMeasure, prices: Prices, maxTokens: number | null): number {
  return promptTokensBound(prompt) * prices.promptMax + (maxTokens ?? 0) * prices.output;
}

/** Where the money stands for one job when a request arrives. */
export interface Standing {
  jobCapUsd: number;
  /** What the job has spent (finished requests) plus what its requests in flight may still spend. */
  jobCommittedUsd: number;
  dayCapUsd: number;
  /** Spent today by every job, plus what requests in flight may still spend. */
  dayCommittedUsd: number;
}

export type Decision =
  { go: true; ceilingUsd: number; maxTokens: number | null; maxTokensAsked: number | null } | { go: false; reason: string; ceilingUsd: number };

/**
 * `maxTokens` is the body's max_tokens (null: count_tokens and other requests that produce nothing).
 * `thinkingBudget`, when the request asks for extended thinking, must stay below max_tokens.
 */
export function decide(input: { standing: Standing; prices: Prices; promptTokens: number; maxTokens: number | null }): Decision {
  const { standing, prices, promptTokens, maxTokens } = input;
  const promptUsd = promptTokens * prices.promptMax;
  const jobLeft = standing.jobCapUsd - standing.jobCommittedUsd;
  const dayLeft = standing.dayCapUsd - standing.dayCommittedUsd;
  const left = Math.min(jobLeft, dayLeft);
  // Words only for a refusal: most requests go, and a message is not free.
  const which = (): string =>
    jobLeft <= dayLeft
      ? `budget reached: ${formatUsdPrecise(standing.jobCommittedUsd)} of the job's ${formatUsdPrecise(standing.jobCapUsd)} spent or committed`
      : `daily budget reached: ${formatUsdPrecise(standing.dayCommittedUsd)} of ${formatUsdPrecise(standing.dayCapUsd)} spent or committed today`;
  if (maxTokens === null) {
    if (promptUsd <= left + 1e-12) return { go: true, ceilingUsd: 0, maxTokens: null, maxTokensAsked: null };
    return { go: false, ceilingUsd: promptUsd, reason: `${which()}; this request could cost up to ${formatUsdPrecise(promptUsd)}.` };
  }
  const full = promptUsd + maxTokens * prices.output;
  if (full <= left + 1e-12) return { go: true, ceilingUsd: full, maxTokens, maxTokensAsked: null };
  // With a free answer only the prompt can be what does not fit: then nothing is affordable.
  const affordable = prices.output > 0 ? Math.floor((left - promptUsd) / prices.output) : -1;
  const useful = Math.min(maxTokens, MIN_USEFUL_OUTPUT_TOKENS);
  if (affordable >= useful) {
    return { go: true, ceilingUsd: promptUsd + affordable * prices.output, maxTokens: affordable, maxTokensAsked: maxTokens };
  }
  return {
    go: false,
    ceilingUsd: promptUsd + useful * prices.output,
    reason: `${which()}; the next request (about ${formatCount(promptTokens)} prompt tokens) could cost up to ${formatUsdPrecise(promptUsd + useful * prices.output)}, more than the ${formatUsdPrecise(left)} left.`,
  };
}

/**
 * Lowers a body's max_tokens to `maxTokens`, and its extended-thinking budget with it (the API wants the
 * budget below max_tokens and at least 1024; below that the request goes without extended thinking).
 */
export function withMaxTokens(body: Record<string, unknown>, maxTokens: number): Record<string, unknown> {
  const next: Record<string, unknown> = { ...body, max_tokens: maxTokens };
  const thinking = body.thinking;
  if (thinking && typeof thinking === 'object' && (thinking as { type?: unknown }).type === 'enabled') {
    const budget = (thinking as { budget_tokens?: unknown }).budget_tokens;
    if (typeof budget === 'number' && budget >= maxTokens) {
      if (maxTokens - 1 >= 1024) next.thinking = { ...thinking, budget_tokens: maxTokens - 1 };
      else delete next.thinking;
    }
  }
  return next;
}
