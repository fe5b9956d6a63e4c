import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Usage } from '../../../src-main/contract/jobs.js';
import { parseModelsBody } from '../../../src-main/core/catalog/parse.js';
import type { CatalogPricing } from '../../../src-main/core/catalog/parse.js';
import { BILLING_RETRY_DELAYS_MS, estimateCostUsd, fetchBilledCost } from '../../../src-main/core/jobs/cost.js';
import { StreamParser } from '../../../src-main/core/jobs/stream-parser.js';
import { OpenRouterClient } from '../../../src-main/core/openrouter/client.js';
import type { GenerationRecord } from '../../../src-main/core/openrouter/client.js';
import { generationRecord } from '../../support/generation-record.js';
import { FakeOpenRouter, readJsonFixture } from '../../support/fake-openrouter.js';

const catalog = parseModelsBody(readJsonFixture('models-2026-08.json'));

function pricingOf(id: string): CatalogPricing {
  const model = catalog.find((m) => m.id === id);
  if (!model) throw new Error(`${id} is not in the catalog`);
  return model.pricing;
}

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens: number, cacheWriteTokens: number): Usage => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});

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

/** OpenRouter as a table: each id answers null (404) until it has been asked `lateBy` times. */
function lateGenerations(costs: Record<string, { usd: number; lateBy?: number; failWith?: Error }>) {
  const calls: string[] = [];
  const getGeneration = async (id: string): Promise<GenerationRecord | null> => {
    calls.push(id);
    const entry = costs[id];
    if (!entry) return null;
    if (entry.failWith) throw entry.failWith;
    const asked = calls.filter((c) => c === id).length;
    return asked > (entry.lateBy ?? 0) ? generationRecord(id, entry.usd) : null;
  };
  return { calls, getGeneration };
}

function recordingSleep() {
  const slept: number[] = [];
  return { slept, sleep: async (ms: number) => void slept.push(ms) };
}

describe('fetchBilledCost', () => {
  it('retries ids not recorded yet on the schedule and sums them', async () => {
    const { calls, getGeneration } = lateGenerations({ 'gen-a': { usd: 0.001 }, 'gen-b': { usd: 0.002, lateBy: 2 } });
    const { slept, sleep } = recordingSleep();
    const billed = await fetchBilledCost({ getGeneration, ids: ['gen-a', 'gen-b'], sleep });
    expect(billed).toEqual({ billedUsd: 0.003, state: 'complete', missing: [] });
    // The first look-up is immediate; gen-b appears on the third.
    expect(slept).toEqual([2000, 4000]);
    expect(calls).toEqual(['gen-a', 'gen-b', 'gen-b', 'gen-b']);
  });

  it('waits 2, 4, 8, 16 and 30 s by default, then reports what it found', async () => {
    expect(BILLING_RETRY_DELAYS_MS).toEqual([2000, 4000, 8000, 16000, 30000]);
    const { calls, getGeneration } = lateGenerations({ 'gen-a': { usd: 0.25 } });
    const { slept, sleep } = recordingSleep();
    const billed = await fetchBilledCost({ getGeneration, ids: ['gen-a', 'gen-never'], sleep });
    expect(billed).toEqual({ billedUsd: 0.25, state: 'partial', missing: ['gen-never'] });
    expect(slept).toEqual([2000, 4000, 8000, 16000, 30000]);
    expect(calls.filter((c) => c === 'gen-never')).toHaveLength(6);
    expect(calls.filter((c) => c === 'gen-a')).toHaveLength(1);
  });

  it('is unavailable, with no amount, when no record ever appears', async () => {
    const { getGeneration } = lateGenerations({});
    const billed = await fetchBilledCost({ getGeneration, ids: ['gen-x', 'gen-y'], delaysMs: [1, 1], sleep: async () => {} });
    expect(billed).toEqual({ billedUsd: null, state: 'unavailable', missing: ['gen-x', 'gen-y'] });
  });

  it('counts a failed look-up (401, 5xx) as missing for that attempt only', async () => {
    let failures = 2;
    const getGeneration = async (id: string) => {
      if (failures-- > 0) throw new Error('OpenRouter had a server error (502)');
      return generationRecord(id, 0.5);
    };
    const billed = await fetchBilledCost({ getGeneration, ids: ['gen-a'], delaysMs: [1, 1, 1], sleep: async () => {} });
    expect(billed).toEqual({ billedUsd: 0.5, state: 'complete', missing: [] });
  });

  it('keeps a key that is always rejected from failing the whole job', async () => {
    const { getGeneration } = lateGenerations({ 'gen-a': { usd: 1, failWith: new Error('OpenRouter rejected the key (401)') } });
    const billed = await fetchBilledCost({ getGeneration, ids: ['gen-a'], delaysMs: [1], sleep: async () => {} });
    expect(billed).toEqual({ billedUsd: null, state: 'unavailable', missing: ['gen-a'] });
  });

  it('looks each id up once per attempt, duplicates included', async () => {
    const { calls, getGeneration } = lateGenerations({ 'gen-a': { usd: 0.1 } });
    const billed = await fetchBilledCost({ getGeneration, ids: ['gen-a', 'gen-a'], sleep: async () => {} });
    expect(billed.billedUsd).toBe(0.1);
    expect(calls).toEqual(['gen-a']);
  });

  it('is complete and zero when the job made no generation', async () => {
    const { calls, getGeneration } = lateGenerations({});
    expect(await fetchBilledCost({ getGeneration, ids: [], sleep: async () => {} })).toEqual({ billedUsd: 0, state: 'complete', missing: [] });
    expect(calls).toEqual([]);
  });

  it('stops waiting when aborted (service shutdown)', async () => {
    const controller = new AbortController();
    const { calls, getGeneration } = lateGenerations({ 'gen-a': { usd: 1, lateBy: 10 } });
    // A sleep that never ends by itself: only the abort can end the wait.
    const sleep = () => {
      queueMicrotask(() => controller.abort(new Error('shutting down')));
      return new Promise<void>(() => {});
    };
    await expect(fetchBilledCost({ getGeneration, ids: ['gen-a'], sleep, signal: controller.signal })).rejects.toThrow('shutting down');
    expect(calls).toEqual(['gen-a']);
  });

  it('does not start when already aborted', async () => {
    const { calls, getGeneration } = lateGenerations({ 'gen-a': { usd: 1 } });
    await expect(fetchBilledCost({ getGeneration, ids: ['gen-a'], signal: AbortSignal.abort() })).rejects.toThrow();
    expect(calls).toEqual([]);
  });

  it('aborts the default sleep too', async () => {
    const controller = new AbortController();
    const { getGeneration } = lateGenerations({});
    const pending = fetchBilledCost({ getGeneration, ids: ['gen-a'], delaysMs: [60_000], signal: controller.signal });
    setTimeout(() => controller.abort(new Error('bye')), 10);
    await expect(pending).rejects.toThrow('bye');
  });

  describe('against the fake OpenRouter, whose records appear late', () => {
    let fake: FakeOpenRouter | null = null;
    afterEach(async () => {
      await fake?.stop();
      fake = null;
    });

    it('finds a record that answers 404 first, with the real client', async () => {
      let clock = 0;
      fake = new FakeOpenRouter({ now: () => clock });
      await fake.start();
      fake.addKey('sk-or-v1-test-key-for-billing');
      fake.addGeneration({ id: 'gen-1782395748-RbpAzhCNny8TxgUgPC4P', totalCost: 0.00000602, visibleAfterMs: 5000 });
      fake.addGeneration({ id: 'gen-2', totalCost: 0.0001 });
      const client = new OpenRouterClient({ baseUrl: fake.baseUrl });
      const billed = await fetchBilledCost({
        getGeneration: (id) => client.getGeneration('sk-or-v1-test-key-for-billing', id),
        ids: ['gen-1782395748-RbpAzhCNny8TxgUgPC4P', 'gen-2'],
        // The fake's clock moves instead of the test waiting.
        sleep: async (ms) => void (clock += ms),
      });
      expect(billed).toEqual({ billedUsd: 0.00010602, state: 'complete', missing: [] });
      const lookups = fake.requests.filter((r) => r.path === '/api/v1/generation').map((r) => r.query.id);
      // At 0 s, 2 s (both 404) and 6 s (found).
      expect(lookups.filter((id) => id === 'gen-1782395748-RbpAzhCNny8TxgUgPC4P')).toHaveLength(3);
      expect(lookups.filter((id) => id === 'gen-2')).toHaveLength(1);
    });
  });
});
