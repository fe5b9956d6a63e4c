import { describe, expect, it } from 'vitest';
import {
  boundUsd,
  ceilingPrices,
  cheapestPricing,
  dearestPricing,
  decide,
  promptTokensBound,
  promptTokensExpected,
  withMaxTokens,
} from '../../../../src-main/core/gateway/measure/ceiling.js';
import { measurePrompt } from '../../../../src-main/core/gateway/measure/prompt-measure.js';
import type { PromptMeasure } from '../../../../src-main/core/gateway/measure/prompt-measure.js';

/** A body measured as the gateway measures what it forwards: on the JSON it writes. */
const measure = (body: Record<string, unknown>): PromptMeasure => measurePrompt(body, Buffer.byteLength(JSON.stringify(body)));

const pricing = { inputPerM: 1, outputPerM: 2, cacheReadPerM: 0.1, cacheWritePerM: 1.25, variable: false, tieredFromPromptTokens: null };
const prices = ceilingPrices(pricing) ?? { promptMax: 0, output: 0 };
const standing = (jobCommittedUsd: number, dayCommittedUsd = 0) => ({ jobCapUsd: 0.5, jobCommittedUsd, dayCapUsd: 5, dayCommittedUsd });

describe('what a request can cost at most', () => {
  it('prices every prompt token at the dearer of input and cache write, the answer at max_tokens', () => {
    expect(prices.promptMax).toBeCloseTo(1.25e-6, 15);
    expect(prices.output).toBeCloseTo(2e-6, 15);
    const decision = decide({ standing: standing(0), prices, promptTokens: 1000, maxTokens: 32000 });
    expect(decision).toEqual({ go: true, ceilingUsd: expect.closeTo(1000 * 1.25e-6 + 32000 * 2e-6, 12) as unknown, maxTokens: 32000, maxTokensAsked: null });
  });

  it('estimates a prompt from the text the model reads, at one token per 3 bytes until measured and never below one per 4', () => {
    // 3,000 bytes of text in one message: 1,000 tokens at first, 4 more for the message around it.
    const prompt = measure({ messages: [{ role: 'user', content: 'x'.repeat(3000) }] });
    expect(prompt).toMatchObject({ textBytes: 3000, otherBytes: 0, blocks: 1, images: 0 });
    expect(promptTokensExpected(prompt)).toBe(1004);
    expect(promptTokensExpected(prompt, 0.5)).toBe(1504);
    // A ratio measured on a padded prompt cannot talk the estimate below the floor.
    expect(promptTokensExpected(prompt, 5e-6)).toBe(754);
  });

  it('counts no JSON whitespace, and every byte of text once, whatever the body is padded with', () => {
    const body = { system: [{ type: 'text', text: 'be brief' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'héllo' }] }] };
    const padded = JSON.parse(JSON.stringify(body, null, 200_000)) as Record<string, unknown>;
    expect(measure(padded)).toEqual(measure(body));
    // 'be brief' (8 bytes) + 'héllo' (6 bytes); the system block, the message and its block.
    expect(measure(body)).toMatchObject({ textBytes: 14, otherBytes: 0, blocks: 3, images: 0 });
  });

  it('holds a request in flight at one token per byte it forwards, a few per block and the template, its images at their pixels, and all of max_tokens', () => {
    const prompt = { textBytes: 90_000, otherBytes: 0, blocks: 10, images: 1, boundBytes: 100_000, mediaTokensBound: 6_400 };
    expect(promptTokensBound(prompt)).toBe(100_000 + 10 * 8 + 6_400 + 1_000);
    expect(boundUsd(prompt, prices, 32_000)).toBeCloseTo(promptTokensBound(prompt) * 1.25e-6 + 32_000 * 2e-6, 12);
    expect(boundUsd(prompt, prices, null)).toBeCloseTo(promptTokensBound(prompt) * 1.25e-6, 12);
  });

  it('knows no ceiling for a model without a price (router models)', () => {
    expect(ceilingPrices({ ...pricing, variable: true })).toBeNull();
    expect(ceilingPrices({ ...pricing, outputPerM: null })).toBeNull();
    expect(ceilingPrices(null)).toBeNull();
  });

  it('lowers max_tokens to what the money left pays for', () => {
    // $0.01 left: 1,000 prompt tokens cost $0.00125, the rest buys 4,375 output tokens.
    const decision = decide({ standing: standing(0.49), prices, promptTokens: 1000, maxTokens: 32000 });
    expect(decision).toMatchObject({ go: true, maxTokens: 4375, maxTokensAsked: 32000 });
  });

  it('refuses when not even a useful answer (1,024 tokens, or max_tokens if smaller) fits, naming the figures', () => {
    const decision = decide({ standing: standing(0.499), prices, promptTokens: 1000, maxTokens: 32000 });
    expect(decision.go).toBe(false);
    if (!decision.go) expect(decision.reason).toMatch(/^budget reached: .* the next request \(about 1,000 prompt tokens\) could cost up to \$0\.0033/);
    // A tiny request still fits where a big one would not.
    expect(decide({ standing: standing(0.499), prices, promptTokens: 100, maxTokens: 100 })).toMatchObject({ go: true, maxTokens: 100 });
  });

  it('takes the smaller of what the job and the day have left, and says which ran out', () => {
    const decision = decide({ standing: { ...standing(0), dayCapUsd: 5, dayCommittedUsd: 4.9999 }, prices, promptTokens: 1000, maxTokens: 32000 });
    expect(decision.go).toBe(false);
    if (!decision.go) expect(decision.reason).toMatch(/^daily budget reached/);
  });

  it('refuses when the prompt alone does not fit, even where the answer is free', () => {
    const freeAnswer = { promptMax: 1e-6, output: 0 };
    // $0.001 left: 2,000 prompt tokens cost $0.002, 500 cost $0.0005.
    expect(decide({ standing: standing(0.499), prices: freeAnswer, promptTokens: 2000, maxTokens: 32000 }).go).toBe(false);
    expect(decide({ standing: standing(0.499), prices: freeAnswer, promptTokens: 500, maxTokens: 32000 })).toMatchObject({ go: true, maxTokens: 32000 });
  });

  it('lets a request without an answer (count_tokens) through while its prompt fits', () => {
    expect(decide({ standing: standing(0), prices, promptTokens: 1000, maxTokens: null })).toMatchObject({ go: true, maxTokens: null });
    expect(decide({ standing: standing(0.5), prices, promptTokens: 1000, maxTokens: null }).go).toBe(false);
  });
});

describe("the dearest of a job's model and its fallbacks", () => {
  const fallback = { inputPerM: 3, outputPerM: 1.5, cacheReadPerM: null, cacheWritePerM: null, variable: false, tieredFromPromptTokens: 32000 };

  it('takes each price from whichever model is dearer for it, a missing cache price counting at the input price', () => {
    expect(dearestPricing([pricing, fallback])).toEqual({
      inputPerM: 3,
      outputPerM: 2,
      // The fallback publishes no cache prices: its cached tokens are charged at its $3/M input.
      cacheReadPerM: 3,
      cacheWritePerM: 3,
      variable: false,
      tieredFromPromptTokens: 32000,
    });
    // Its ceiling: prompt tokens at the dearest prompt price of either, the answer at the dearest output price.
    expect(ceilingPrices(dearestPricing([pricing, fallback]))).toEqual({ promptMax: 3e-6, output: 2e-6 });
  });

  it('and the cheapest: each price at its lowest, tiers from the latest, none when one model has none', () => {
    expect(cheapestPricing([pricing, fallback])).toEqual({
      inputPerM: 1,
      outputPerM: 1.5,
      cacheReadPerM: 0.1,
      cacheWritePerM: 1.25,
      variable: false,
      tieredFromPromptTokens: null,
    });
    expect(cheapestPricing([{ ...pricing, tieredFromPromptTokens: 128000 }, fallback])?.tieredFromPromptTokens).toBe(128000);
    expect(cheapestPricing([pricing, null])).toBeNull();
    expect(cheapestPricing([pricing, { ...fallback, variable: true }])).toBeNull();
  });

  it('caps a request so that it fits whichever model serves it', () => {
    const dearest = ceilingPrices(dearestPricing([pricing, fallback])) ?? prices;
    // $0.01 left: at the job's own prices 1,000 prompt tokens leave 4,375 output tokens; at the dearest, 3,500.
    expect(decide({ standing: standing(0.49), prices, promptTokens: 1000, maxTokens: 32000 })).toMatchObject({ maxTokens: 4375 });
    expect(decide({ standing: standing(0.49), prices: dearest, promptTokens: 1000, maxTokens: 32000 })).toMatchObject({ go: true, maxTokens: 3500 });
  });

  it('is unknown when any price is (a router), and one model alone prices as itself', () => {
    expect(dearestPricing([pricing, { ...fallback, variable: true }])).toBeNull();
    expect(dearestPricing([pricing, { ...fallback, outputPerM: null }])).toBeNull();
    expect(dearestPricing([null, fallback])).toBeNull();
    expect(ceilingPrices(dearestPricing([pricing]))).toEqual(ceilingPrices(pricing));
  });
});

describe('lowering max_tokens in a body', () => {
  it('keeps the thinking budget below max_tokens, or drops thinking when it cannot be 1,024', () => {
    const body = { model: 'm', max_tokens: 32000, thinking: { type: 'enabled', budget_tokens: 16000 } };
    expect(withMaxTokens(body, 8000)).toEqual({ model: 'm', max_tokens: 8000, thinking: { type: 'enabled', budget_tokens: 7999 } });
    expect(withMaxTokens(body, 1000)).toEqual({ model: 'm', max_tokens: 1000 });
    expect(withMaxTokens(body, 20000)).toEqual({ ...body, max_tokens: 20000 });
    expect(withMaxTokens({ model: 'm', max_tokens: 5 }, 3)).toEqual({ model: 'm', max_tokens: 3 });
  });
});
