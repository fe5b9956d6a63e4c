import { afterEach, describe, expect, it } from 'vitest';
import { BILLING_RETRY_DELAYS_MS, fetchBilledCost } from '../../../../src-main/core/jobs/money/billed-cost.js';
import { OpenRouterClient } from '../../../../src-main/core/openrouter/client.js';
import type { GenerationRecord } from '../../../../src-main/core/openrouter/client.js';
import { generationRecord } from '../../../support/generation-record.js';
import { FakeOpenRouter } from '../../../support/fake-openrouter.js';

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
