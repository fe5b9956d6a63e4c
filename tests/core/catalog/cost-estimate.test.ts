import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { estimateCostUsd } from '../../../src-main/core/catalog/cost-estimate.js';
import { parseModelsBody } from '../../../src-main/core/catalog/parse.js';
import type { CatalogPricing } from '../../../src-main/core/catalog/parse.js';
import { StreamParser } from '../../../src-main/core/jobs/stream/stream-parser.js';
import { readJsonFixture } from '../../support/fake-openrouter.js';
import { usage } from '../../support/usage.js';

const catalog = parseModelsBody(readJsonFixture('models-2026-08.json'));

function pricingOf(id: string): CatalogPricing {
  const model = catalog.find((m) => m.id === id);
  if (!model) throw new Error(`${id} is not in the catalog`);
  return model.pricing;
}

describe('estimateCostUsd', () => {
  it('prices a real capture’s messages at deepseek-v4-flash list prices, cache writes at the input price', () => {
    const pricing = pricingOf('deepseek/deepseek-v4-flash-0731');
    // $0.14 in, $0.28 out, $0.028 cache read, no cache-write price.
    expect(pricing).toMatchObject({ inputPerM: 0.14, outputPerM: 0.28, cacheReadPerM: 0.028, cacheWritePerM: null });
    const parser = new StreamParser();
    const stream = readFileSync(new URL('../../fixtures/claude/stream-success-tooluse-2.1.154.jsonl', import.meta.url), 'utf8');
    for (const line of stream.split('\n')) parser.push(line);
    // (3 + 1) × 0.14 + (6 + 4) × 0.28 + (17057 + 20674) × 0.028 + (3617 + 127) × 0.14, per million.
    expect(estimateCostUsd(parser.usageByMessage.values(), pricing)).toBe(0.001583988);
  });

  it('gives the same answer for the sum as for the messages (prices are linear)', () => {
    const pricing = pricingOf('anthropic/claude-sonnet-5');
    const messages = [usage(10, 200, 30_000, 4_000), usage(3, 50, 34_000, 100)];
    expect(estimateCostUsd([usage(13, 250, 64_000, 4_100)], pricing)).toBe(estimateCostUsd(messages, pricing));
  });

  it('uses published cache read and write prices', () => {
    // claude-sonnet-5: $2 in, $10 out, $0.2 cache read, $2.5 cache write.
    const pricing = pricingOf('anthropic/claude-sonnet-5');
    expect(estimateCostUsd([usage(1_000_000, 0, 0, 0)], pricing)).toBe(2);
    expect(estimateCostUsd([usage(0, 1_000_000, 0, 0)], pricing)).toBe(10);
    expect(estimateCostUsd([usage(0, 0, 1_000_000, 0)], pricing)).toBe(0.2);
    expect(estimateCostUsd([usage(0, 0, 0, 1_000_000)], pricing)).toBe(2.5);
  });

  it('charges cached tokens at the input price when no cache price is published', () => {
    // mistral-medium-3-5 publishes neither cache price: $1.5 in, $7.5 out.
    const pricing = pricingOf('mistralai/mistral-medium-3-5');
    expect(pricing).toMatchObject({ cacheReadPerM: null, cacheWritePerM: null });
    expect(estimateCostUsd([usage(0, 0, 1_000_000, 1_000_000)], pricing)).toBe(3);
  });

  it('is zero for no usage and for a free model', () => {
    expect(estimateCostUsd([], pricingOf('deepseek/deepseek-v4-flash-0731'))).toBe(0);
    expect(estimateCostUsd([usage(5000, 5000, 5000, 5000)], pricingOf('z-ai/glm-5.2:free'))).toBe(0);
  });

  it('is null for a router model, whose price is that of the model it picks', () => {
    const pricing = pricingOf('openrouter/auto');
    expect(pricing.variable).toBe(true);
    expect(estimateCostUsd([usage(1, 1, 1, 1)], pricing)).toBeNull();
  });

  it('is null when the prompt or completion price is unknown', () => {
    const base: CatalogPricing = { inputPerM: 1, outputPerM: 2, cacheReadPerM: null, cacheWritePerM: null, variable: false, tieredFromPromptTokens: null };
    expect(estimateCostUsd([usage(1, 1, 0, 0)], { ...base, inputPerM: null })).toBeNull();
    expect(estimateCostUsd([usage(1, 1, 0, 0)], { ...base, outputPerM: null })).toBeNull();
  });
});
