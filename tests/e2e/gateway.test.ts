/**
 * The metering gateway with the real service and the real `claude -p` as the delegate (docs/ARCHITECTURE.md §11):
 * what the pinned CLI sends to it, what OpenRouter then receives (the key, the attribution, the session, the
 * user's provider policy, the job's fallback models), the per-job request log, and a cap that stops a job before
 * the request that would cross it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEY, MODEL } from '../support/delegation.js';
import { MESSAGES_PATH, ScriptedModel } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';

const m = ScriptedModel.marker;
let world: FaultWorld;

beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

describe('the metering gateway, with the real Claude Code as delegate', { timeout: 90_000 }, () => {
  it("forwards each request with the key, the attribution, the conversation's session and the provider policy; logs each", async () => {
    await world.start({ provider: { dataCollection: 'deny', zdr: true, sort: 'price', only: ['deepinfra'], allowFallbacks: false } });
    world.model.script('routed', [
      { toolUse: { name: 'Bash', input: { command: 'echo one', description: 'One step' } }, usage: { input_tokens: 3000, output_tokens: 40 } },
      { text: 'Routed.', usage: { input_tokens: 3100, output_tokens: 10, cache_read_input_tokens: 2900 } },
    ]);
    await world.serve();
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: `${m('routed')} go`, allowedTools: ['Bash'] });
    const end = await world.waitForEnd(client, started.job.id);
    expect(end.job.state).toBe('succeeded');

    // What the pinned CLI calls under ANTHROPIC_BASE_URL: POST /v1/messages?beta=true, nothing else.
    expect(world.fake.requests.filter((r) => r.method === 'POST').map((r) => `${r.path}?${new URLSearchParams(r.query).toString()}`)).toEqual([
      `${MESSAGES_PATH}?beta=true`,
      `${MESSAGES_PATH}?beta=true`,
    ]);
    const requests = world.model.requestsFor('routed');
    for (const request of requests) {
      expect(request.bearer).toBe(KEY);
      expect(request.headers.httpReferer).toMatch(/^https:\/\//);
      expect(request.headers.xTitle).toBe('OpenRouter Delegate');
      expect(request.headers.xSessionId).toBe(end.job.sessionId);
      expect(request.headers.sessionId).toBe(end.job.sessionId);
      expect(request.model).toBe(MODEL);
      expect((request.body as { provider?: unknown }).provider).toEqual({
        allow_fallbacks: false,
        data_collection: 'deny',
        zdr: true,
        only: ['deepinfra'],
        sort: 'price',
      });
    }

    const log = await client.call('jobs.requests', { jobId: end.job.id });
    expect(log.requests.map((r) => [r.status, r.outcome, r.generationId])).toEqual(requests.map((r) => [200, 'ok', r.messageId]));
    expect(log.requests.map((r) => r.usage)).toEqual([
      { inputTokens: 3000, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0 },
      { inputTokens: 3100, outputTokens: 10, cacheReadTokens: 2900, cacheWriteTokens: 0 },
    ]);
    // Priced at the catalog's list prices for the model ($0.14/M in, $0.28/M out, $0.028/M cache reads).
    expect(log.requests[1]?.costUsd).toBeCloseTo((3100 * 0.14 + 10 * 0.28 + 2900 * 0.028) / 1e6, 12);
    expect(end.job.requests).toEqual({ total: 2, failed: 0, refused: 0, clamped: 0 });
    expect(end.job.estimatedCostUsd).toBeCloseTo(
      log.requests.reduce((sum, r) => sum + r.costUsd, 0),
      9,
    );
  });

  it('sends the fallback models that pass the policy with every request, and logs and prices an answer by the model that served it', async () => {
    const fallback = 'z-ai/glm-4.7';
    await world.start({ fallbackModels: ['qwen/qwen3-coder', fallback], blocklist: ['qwen/*'] });
    world.model.script('fallen-back', [
      { toolUse: { name: 'Bash', input: { command: 'echo one', description: 'One step' } }, usage: { input_tokens: 3000, output_tokens: 40 } },
      // OpenRouter served this one with the fallback, and says so in the answer.
      { text: 'Served by the fallback.', model: fallback, usage: { input_tokens: 3100, output_tokens: 10, cache_read_input_tokens: 2900 } },
    ]);
    const service = await world.serve();
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: `${m('fallen-back')} go`, allowedTools: ['Bash'] });
    const end = await world.waitForEnd(client, started.job.id);
    expect(end.job.state).toBe('succeeded');
    expect(end.tail.some((e) => e.kind === 'text' && e.text.includes('Served by the fallback.'))).toBe(true);

    // The blocklisted fallback is never sent: skipped at admission, with a note in the service's log.
    expect(end.job.fallbacks?.map((f) => f.model)).toEqual([fallback]);
    expect(service.stderr()).toContain(`jobs: ${end.job.id}: fallback qwen/qwen3-coder skipped: is on your blocklist (qwen/*)`);
    const requests = world.model.requestsFor('fallen-back');
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.model).toBe(MODEL);
      expect((request.body as { fallbacks?: unknown }).fallbacks).toEqual([{ model: fallback }]);
    }

    const log = await client.call('jobs.requests', { jobId: end.job.id });
    expect(log.requests.map((r) => [r.model, r.outcome, r.generationId])).toEqual([
      [MODEL, 'ok', requests[0]?.messageId],
      [fallback, 'ok', requests[1]?.messageId],
    ]);
    // Each at its own model's list prices from the catalog: $0.14/M in, $0.28/M out for the job's model; $0.40/M in,
    // $1.75/M out, $0.08/M cache reads for the fallback.
    expect(log.requests[0]?.costUsd).toBeCloseTo((3000 * 0.14 + 40 * 0.28) / 1e6, 12);
    expect(log.requests[1]?.costUsd).toBeCloseTo((3100 * 0.4 + 10 * 1.75 + 2900 * 0.08) / 1e6, 12);
    expect(end.job.estimatedCostUsd).toBeCloseTo(
      log.requests.reduce((sum, r) => sum + r.costUsd, 0),
      9,
    );
  });

  it('stops a job before the request that would cross its cap: OpenRouter never sees that request', async () => {
    await world.start();
    world.model.script('capped', [
      // $0.0168 of a $0.02 cap: under it, but the next prompt (as large again) cannot fit in what is left.
      { toolUse: { name: 'Bash', input: { command: 'echo spent > spent.txt', description: 'Spend' } }, usage: { input_tokens: 120_000, output_tokens: 20 } },
      { text: 'never asked for' },
    ]);
    await world.serve();
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: `${m('capped')} go`, allowedTools: ['Bash'], maxCostUsd: 0.02 });
    const end = await world.waitForEnd(client, started.job.id);

    expect(end.job.state).toBe('budget_exceeded');
    expect(end.job.endReason).toMatch(
      /^Stopped before a request: budget reached: \$0\.0168 of the job's \$0\.02 spent or committed; the next request \(about [0-9,]+ prompt tokens\) could cost up to \$0\.0[0-9]+, more than the \$0\.00319 left\./,
    );
    expect(world.model.requestsFor('capped')).toHaveLength(1);
    expect(end.tail.some((e) => e.kind === 'tool_result')).toBe(true);
    const log = await client.call('jobs.requests', { jobId: end.job.id });
    expect(log.requests.map((r) => [r.status, r.outcome])).toEqual([
      [200, 'ok'],
      [402, 'refused'],
    ]);
    expect(end.job.requests).toMatchObject({ total: 2, refused: 1 });
    expect(end.job.estimatedCostUsd).toBeLessThanOrEqual(0.02);
  });

  it('lowers max_tokens to what the cap pays for, and the delegate carries on', async () => {
    await world.start();
    world.model.script('clamped', [{ text: 'Short and cheap.', usage: { input_tokens: 500, output_tokens: 30 } }]);
    await world.serve();
    const client = await world.connect();
    // $0.004 at $0.28/M out buys ~14,000 tokens, fewer than the 32,000 Claude Code asks for.
    const started = await world.startJob(client, { prompt: `${m('clamped')} go`, maxCostUsd: 0.004 });
    const end = await world.waitForEnd(client, started.job.id);
    expect(end.job.state).toBe('succeeded');
    const [request] = world.model.requestsFor('clamped');
    const sent = (request?.body as { max_tokens: number }).max_tokens;
    expect(sent).toBeLessThan(14_300);
    expect(sent).toBeGreaterThan(1024);
    const log = await client.call('jobs.requests', { jobId: end.job.id });
    expect(log.requests[0]).toMatchObject({ maxTokens: sent, maxTokensAsked: 32000, outcome: 'ok' });
    expect(end.job.requests).toMatchObject({ total: 1, clamped: 1 });
  });
});
