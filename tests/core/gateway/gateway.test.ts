/**
 * The metering gateway in process (docs/ARCHITECTURE.md §11): its real listener on 127.0.0.1, a fake
 * OpenRouter on another port, and a job table of the test's own. What a delegate sends, what OpenRouter
 * receives, and what the job's request log says.
 */
import http from 'node:http';
import net from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayRequest } from '../../../src-main/contract/index.js';
import { MeteringGateway } from '../../../src-main/core/gateway/gateway.js';
import type { GatewayJob, GatewayJobs } from '../../../src-main/core/gateway/gateway.js';
import { promptTokensBound } from '../../../src-main/core/gateway/measure/ceiling.js';
import { allowedBecause, droppedBecause } from '../../../src-main/core/gateway/http/gateway-headers.js';
import { newJobToken, tokenHash } from '../../../src-main/core/gateway/job-token.js';
import { measurePrompt } from '../../../src-main/core/gateway/measure/prompt-measure.js';
import { GatewayServer } from '../../../src-main/ipc/gateway-server.js';
import { FakeOpenRouter } from '../../support/fake-openrouter.js';
import type { RecordedRequest } from '../../support/fake-openrouter.js';
import { CAPTURED_NAMES, exampleValue } from './captured-headers.js';

const KEY = `sk-or-v1-${'ab12'.repeat(16)}`;
const MODEL = 'deepseek/deepseek-v4-flash-0731';
const MESSAGES = '/api/v1/messages';
/** $1/M in, $2/M out: a request's ceiling is easy to reckon. */
const PRICING = { inputPerM: 1, outputPerM: 2, cacheReadPerM: 0.1, cacheWritePerM: 1.25, variable: false, tieredFromPromptTokens: null };
/** A dearer fallback: $3/M in, $10/M out, no cache-write price (so written at the input price). */
const FALLBACK = 'z-ai/glm-4.7';
const FALLBACK_PRICING = { inputPerM: 3, outputPerM: 10, cacheReadPerM: 0.3, cacheWritePerM: null, variable: false, tieredFromPromptTokens: null };

class Jobs implements GatewayJobs {
  readonly jobs = new Map<string, GatewayJob>();
  readonly log: Array<{ jobId: string; entry: GatewayRequest; meteredUsd: number }> = [];
  /** The lines written as requests start (`pending`), before they go upstream. */
  readonly pending: GatewayRequest[] = [];
  readonly stopped: Array<{ jobId: string; reason: string }> = [];
  spentToday = 0;
  dayCap = 5;
  lookups = 0;
  /** While set, a token is looked up only once it resolves (a restarted service adopting its jobs). */
  gate: Promise<void> | null = null;

  add(job: Partial<GatewayJob> = {}): { token: string; job: GatewayJob } {
    const token = newJobToken();
    const full: GatewayJob = {
      id: `job_${this.jobs.size + 1}`,
      model: MODEL,
      sessionId: 'sess-1',
      pricing: PRICING,
      fallbacks: [],
      maxCostUsd: 0.5,
      estimatedCostUsd: 0,
      ...job,
    };
    this.jobs.set(tokenHash(token), full);
    return { token, job: full };
  }

  async byTokenHash(hash: string): Promise<GatewayJob | null> {
    this.lookups++;
    if (this.gate) await this.gate;
    return this.jobs.get(hash) ?? null;
  }

  day(): { spentUsd: number; capUsd: number } {
    return { spentUsd: this.spentToday, capUsd: this.dayCap };
  }

  async requestStarted(_jobId: string, entry: GatewayRequest): Promise<void> {
    this.pending.push(entry);
  }

  logRequest(jobId: string, entry: GatewayRequest, meteredUsd: number): void {
    this.log.push({ jobId, entry, meteredUsd });
  }

  stopForBudget(jobId: string, reason: string): void {
    this.stopped.push({ jobId, reason });
  }
}

function sse(events: Array<Record<string, unknown>>): string {
  return events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('');
}

function answerEvents(usage: { input: number; output: number; cacheRead?: number }, text = 'Hello', model = MODEL): Array<Record<string, unknown>> {
  return [
    {
      type: 'message_start',
      message: {
        id: 'gen-123',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        usage: { input_tokens: usage.input, output_tokens: 1, cache_read_input_tokens: usage.cacheRead ?? 0, cache_creation_input_tokens: 0 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: usage.output } },
    { type: 'message_stop' },
  ];
}

let fake: FakeOpenRouter;
let jobs: Jobs;
let gateway: MeteringGateway;
let server: GatewayServer;
let dir: string;
let keyValue: string | null;
/** What the listener handed the gateway, and the gateway's promise for each. */
let incoming: http.IncomingMessage[];
let handled: Array<Promise<void>>;
let gatewayLog: string[];
/** What OpenRouter's generation record says a request cost (a hung-up one is looked up); null: no record. */
let billedCost: (id: string) => Promise<number | null>;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ord-gw-'));
  fake = new FakeOpenRouter();
  await fake.start();
  jobs = new Jobs();
  keyValue = KEY;
  incoming = [];
  handled = [];
  gatewayLog = [];
  billedCost = () => Promise.resolve(null);
  gateway = new MeteringGateway({
    jobs,
    upstream: fake.baseUrl,
    apiKey: () => keyValue,
    attribution: { url: 'https://example.org/app', title: 'OpenRouter Delegate' },
    log: (line) => gatewayLog.push(line),
    billedCost: (id) => billedCost(id),
  });
  server = new GatewayServer({
    handle: (req, res) => {
      incoming.push(req);
      handled.push(gateway.handle(req, res));
    },
    stateFile: path.join(dir, 'gateway.json'),
    onListening: (url) => (gateway.url = url),
  });
  await server.start();
});

afterEach(async () => {
  await server.stop();
  await fake.stop();
  await rm(dir, { recursive: true, force: true });
});

function body(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: MODEL, max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'hi' }], ...extra };
}

async function post(token: string | null, payload: unknown, init: { path?: string; headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${gateway.url ?? ''}${init.path ?? '/v1/messages?beta=true'}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...init.headers,
    },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
}

function streamAnswer(events: Array<Record<string, unknown>>): (request: RecordedRequest, res: http.ServerResponse) => void {
  return (_request, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-generation-id': 'gen-123' });
    res.end(sse(events));
  };
}

describe('the metering gateway', () => {
  it('passes on only the query Claude Code sends (?beta=true); a parameter of the delegate’s own never reaches OpenRouter', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    const { token } = jobs.add();
    await (await post(token, body(), { path: '/v1/messages?beta=true&api_key=x&transforms=middle-out' })).text();
    await (await post(token, body(), { path: '/v1/messages?beta=false&models=openai%2Fgpt-5-pro' })).text();
    expect(fake.requestsTo(MESSAGES).map((r) => r.query)).toEqual([{ beta: 'true' }, {}]);
  });

  it('forwards with the key, the attribution and the session, and streams the answer back byte for byte', async () => {
    const events = answerEvents({ input: 1200, output: 80, cacheRead: 300 });
    fake.route('POST', MESSAGES, streamAnswer(events));
    const { token, job } = jobs.add();

    const response = await post(token, body(), { headers: { 'anthropic-beta': 'claude-code-20250219', 'x-api-key': 'nope', cookie: 'c=1' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(sse(events));

    const [sent] = fake.requestsTo(MESSAGES);
    expect(sent?.query).toEqual({ beta: 'true' });
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.headers['x-api-key']).toBeUndefined();
    expect(sent?.headers.cookie).toBeUndefined();
    expect(sent?.headers['http-referer']).toBe('https://example.org/app');
    expect(sent?.headers['x-title']).toBe('OpenRouter Delegate');
    expect(sent?.headers['x-session-id']).toBe('sess-1');
    expect(sent?.headers['anthropic-beta']).toBe('claude-code-20250219');
    expect(sent?.headers['anthropic-version']).toBe('2023-06-01');
    // Not changed, so the very bytes the delegate sent.
    expect(sent?.body).toBe(JSON.stringify(body()));
    expect(JSON.stringify(sent?.headers)).not.toContain(token);

    expect(jobs.log).toHaveLength(1);
    const { entry, meteredUsd } = jobs.log[0] ?? { entry: null, meteredUsd: 0 };
    expect(entry).toMatchObject({
      model: MODEL,
      generationId: 'gen-123',
      status: 200,
      outcome: 'ok',
      usage: { inputTokens: 1200, outputTokens: 80, cacheReadTokens: 300, cacheWriteTokens: 0 },
      maxTokens: 1000,
      maxTokensAsked: null,
    });
    const cost = (1200 * 1 + 80 * 2 + 300 * 0.1) / 1e6;
    expect(entry?.costUsd).toBeCloseTo(cost, 12);
    expect(meteredUsd).toBeCloseTo(cost, 12);
    expect(entry?.firstByteMs).not.toBeNull();
    expect(job.id).toBe(jobs.log[0]?.jobId);
    // Its first line went before it did; the last line, with the same id, says how it ended.
    expect(jobs.pending.map((p) => [p.id, p.outcome, p.status])).toEqual([[entry?.id, 'pending', 0]]);
  });

  it('bills a request once when writing its log line fails after it was settled', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 1200, output: 80 })));
    const { token } = jobs.add();
    const logRequest = jobs.logRequest.bind(jobs);
    let failures = 1;
    jobs.logRequest = (jobId, entry, meteredUsd) => {
      logRequest(jobId, entry, meteredUsd);
      if (failures-- > 0) throw new Error('disk full');
    };
    for (let i = 0; i < 2; i++) await (await post(token, body())).text();
    await Promise.allSettled(handled);
    const cost = (1200 * 1 + 80 * 2) / 1e6;
    expect(jobs.log.map((l) => l.entry.costUsd)).toEqual([expect.closeTo(cost, 12), expect.closeTo(cost, 12)]);
    // The second request's running total counts the first once, at its cost, not a second time at its bound.
    expect(jobs.log[1]?.meteredUsd).toBeCloseTo(2 * cost, 12);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(2);
  });

  it('reads the usage of a non-streaming answer too', async () => {
    fake.route('POST', MESSAGES, (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'gen-9', type: 'message', model: MODEL, content: [], usage: { input_tokens: 50, output_tokens: 7 } }));
    });
    const { token } = jobs.add();
    const response = await post(token, body({ stream: false }));
    expect(response.status).toBe(200);
    expect(jobs.log[0]?.entry).toMatchObject({ generationId: 'gen-9', usage: { inputTokens: 50, outputTokens: 7 } });
  });

  it('refuses a wrong token, another path, another model, a body that is not JSON and one that is too large — none reaches OpenRouter', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 1, output: 1 })));
    const { token } = jobs.add();
    const expectError = async (response: Response, status: number, type: string, text: RegExp) => {
      expect(response.status).toBe(status);
      const parsed = (await response.json()) as { type: string; error: { type: string; message: string } };
      expect(parsed.type).toBe('error');
      expect(parsed.error.type).toBe(type);
      expect(parsed.error.message).toMatch(text);
    };
    await expectError(await post(null, body()), 401, 'authentication_error', /no running OpenRouter Delegate job/);
    await expectError(await post(newJobToken(), body()), 401, 'authentication_error', /no running/);
    await expectError(await post(token, body(), { path: '/v1/models' }), 404, 'not_found_error', /POST \/v1\/messages only/);
    await expectError(
      await post(token, body({ model: 'anthropic/claude-opus-4' })),
      400,
      'invalid_request_error',
      /runs on "deepseek.*anthropic\/claude-opus-4/,
    );
    await expectError(await post(token, '{"model":'), 400, 'invalid_request_error', /not a JSON object/);
    const huge = JSON.stringify(body({ messages: [{ role: 'user', content: 'x'.repeat(33 * 1024 * 1024) }] }));
    await expectError(await post(token, huge), 413, 'request_too_large', /larger than 32 MiB/);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(0);
  });

  it('refuses a request whose Host is not its own loopback address (DNS rebinding)', async () => {
    const { token } = jobs.add();
    const port = new URL(gateway.url ?? '').port;
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(
        { host: '127.0.0.1', port, path: '/v1/messages', method: 'POST', headers: { host: `evil.example:${port}`, authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify(body()));
    });
    expect(status).toBe(421);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(0);
  });

  it('lowers max_tokens (and the thinking budget) to what the cap can pay for', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    // $0.01 cap at $2/M out: at most ~5,000 output tokens, less the prompt.
    const { token } = jobs.add({ maxCostUsd: 0.01 });
    const response = await post(token, body({ max_tokens: 32000, thinking: { type: 'enabled', budget_tokens: 16000 } }));
    expect(response.status).toBe(200);
    await response.text();
    const sent = JSON.parse(fake.requestsTo(MESSAGES)[0]?.body ?? '{}') as { max_tokens: number; thinking: { budget_tokens: number } };
    expect(sent.max_tokens).toBeLessThan(5000);
    expect(sent.max_tokens).toBeGreaterThan(4000);
    expect(sent.thinking.budget_tokens).toBe(sent.max_tokens - 1);
    expect(jobs.log[0]?.entry).toMatchObject({ maxTokens: sent.max_tokens, maxTokensAsked: 32000, outcome: 'ok' });
    expect(jobs.stopped).toEqual([]);
  });

  it('refuses, before sending, a request the cap cannot pay for, and stops the job', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    const { token, job } = jobs.add({ maxCostUsd: 0.5, estimatedCostUsd: 0.499 });
    const response = await post(token, body({ max_tokens: 32000 }));
    expect(response.status).toBe(402);
    const parsed = (await response.json()) as { error: { type: string; message: string } };
    expect(parsed.error.type).toBe('billing_error');
    expect(parsed.error.message).toMatch(/budget reached: \$0\.499 of the job's \$0\.50 spent or committed; the next request .* more than the \$0\.001 left\./);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(0);
    expect(jobs.stopped).toEqual([{ jobId: job.id, reason: expect.stringMatching(/^Stopped before a request: budget reached/) as unknown }]);
    expect(jobs.log[0]?.entry).toMatchObject({ outcome: 'refused', status: 402 });
    // Refused before it went anywhere: no pending line.
    expect(jobs.pending).toEqual([]);
  });

  it('holds the daily cap across jobs: a request waits while requests in flight hold what it needs, and goes whole once they settle', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.route('POST', MESSAGES, async (_request, res) => {
      await released;
      streamAnswer(answerEvents({ input: 10, output: 5 }))(_request, res);
    });
    jobs.dayCap = 0.02;
    // Each request is held at up to ~$0.0177 while in flight (its prompt's bound and 8,000 tokens at $2/M): one fits
    // the day's $0.02, two do not.
    const first = jobs.add({ maxCostUsd: 0.5 });
    const second = jobs.add({ maxCostUsd: 0.5 });
    const pending = post(first.token, body({ max_tokens: 8000 }));
    await expect.poll(() => fake.requestsTo(MESSAGES).length).toBe(1);
    // The first is in flight: the second waits for it rather than go short or be refused.
    const waiting = post(second.token, body({ max_tokens: 8000 }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(fake.requestsTo(MESSAGES)).toHaveLength(1);
    release();
    expect((await pending).status).toBe(200);
    expect((await waiting).status).toBe(200);
    // The first cost $0.00002: the second went with all of its max_tokens.
    expect((JSON.parse(fake.requestsTo(MESSAGES)[1]?.body ?? '{}') as { max_tokens: number }).max_tokens).toBe(8000);
    // With both done, a third request of 8,000 tokens no longer fits the day at all.
    jobs.spentToday = 0.019;
    const third = await post(first.token, body({ max_tokens: 8000 }));
    expect(third.status).toBe(402);
    expect(((await third.json()) as { error: { message: string } }).error.message).toMatch(/daily budget reached/);
  });

  it('injects the provider policy into the body', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    const withPolicy = new MeteringGateway({
      jobs,
      upstream: fake.baseUrl,
      apiKey: () => KEY,
      attribution: { url: 'u', title: 't' },
      provider: () => ({ data_collection: 'deny', zdr: true }),
    });
    await server.stop();
    server = new GatewayServer({
      handle: (req, res) => withPolicy.handle(req, res),
      stateFile: path.join(dir, 'gateway.json'),
      onListening: (url) => (withPolicy.url = url),
    });
    await server.start();
    gateway = withPolicy;
    const { token } = jobs.add();
    // A delegate's own provider object is replaced by the user's policy, not merged with it.
    await (await post(token, body({ provider: { order: ['pricey-provider'], data_collection: 'allow' } }))).text();
    const sent = JSON.parse(fake.requestsTo(MESSAGES)[0]?.body ?? '{}') as { provider: unknown };
    expect(sent.provider).toEqual({ data_collection: 'deny', zdr: true });
  });

  it("adds the job's fallbacks to the body, its model unchanged, and caps the request at the dearest model", async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    const { token } = jobs.add({ fallbacks: [{ model: FALLBACK, pricing: FALLBACK_PRICING }] });
    const payload = body({ max_tokens: 1000 });
    await (await post(token, payload)).text();
    const written = fake.requestsTo(MESSAGES)[0]?.body ?? '{}';
    const sent = JSON.parse(written) as Record<string, unknown>;
    expect(sent).toEqual({ ...payload, fallbacks: [{ model: FALLBACK }] });
    // Every prompt token at the dearest prompt price ($3/M, the fallback's input), the answer at its $10/M; logged at
    // the most it could cost: its prompt's bound, measured on every byte that went.
    const promptTokens = promptTokensBound(measurePrompt(sent, Buffer.byteLength(written)));
    expect(jobs.log[0]?.entry.ceilingUsd).toBeCloseTo((promptTokens * 3 + 1000 * 10) / 1e6, 12);
  });

  it("lowers max_tokens to what the cap pays for at the dearest model, where the job's own would have fitted", async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    // $0.015: 2,000 tokens at the job's $2/M out fit; at the fallback's $10/M only about 1,450 do.
    const plain = jobs.add({ maxCostUsd: 0.015 });
    await (await post(plain.token, body({ max_tokens: 2000 }))).text();
    const withFallback = jobs.add({ maxCostUsd: 0.015, fallbacks: [{ model: FALLBACK, pricing: FALLBACK_PRICING }] });
    await (await post(withFallback.token, body({ max_tokens: 2000 }))).text();
    const [first, second] = fake.requestsTo(MESSAGES).map((r) => JSON.parse(r.body) as { max_tokens: number });
    expect(first?.max_tokens).toBe(2000);
    expect(second?.max_tokens).toBeLessThan(1500);
    expect(second?.max_tokens).toBeGreaterThan(1400);
    expect(jobs.log[1]?.entry).toMatchObject({ maxTokens: second?.max_tokens, maxTokensAsked: 2000 });
  });

  it("prices each answer by the model it names: the fallback at its prices, the job's own at its, any other at the dearest", async () => {
    const usage = { input: 1000, output: 100, cacheRead: 500 };
    const served: string[] = [FALLBACK, MODEL, 'other/model'];
    fake.route('POST', MESSAGES, (request, res) => streamAnswer(answerEvents(usage, 'Hi', served[fake.requestsTo(MESSAGES).length - 1]))(request, res));
    const { token } = jobs.add({ fallbacks: [{ model: FALLBACK, pricing: FALLBACK_PRICING }] });
    for (let i = 0; i < served.length; i++) await (await post(token, body())).text();
    const at = (p: { inputPerM: number; outputPerM: number; cacheReadPerM: number }) => (1000 * p.inputPerM + 100 * p.outputPerM + 500 * p.cacheReadPerM) / 1e6;
    expect(jobs.log.map((l) => l.entry.model)).toEqual(served);
    expect(jobs.log[0]?.entry.costUsd).toBeCloseTo(at(FALLBACK_PRICING), 12);
    expect(jobs.log[1]?.entry.costUsd).toBeCloseTo(at(PRICING), 12);
    // Named neither: the dearest of each price ($3/M in, $10/M out, $0.30/M cache reads: all the fallback's here).
    expect(jobs.log[2]?.entry.costUsd).toBeCloseTo(at({ inputPerM: 3, outputPerM: 10, cacheReadPerM: 0.3 }), 12);
    expect(jobs.log[2]?.meteredUsd).toBeCloseTo(at(FALLBACK_PRICING) + at(PRICING) + at(FALLBACK_PRICING), 12);
  });

  it('prices a non-streaming answer by the model it names too', async () => {
    fake.route('POST', MESSAGES, (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'gen-9', type: 'message', model: FALLBACK, content: [], usage: { input_tokens: 50, output_tokens: 7 } }));
    });
    const { token } = jobs.add({ fallbacks: [{ model: FALLBACK, pricing: FALLBACK_PRICING }] });
    await (await post(token, body({ stream: false }))).text();
    expect(jobs.log[0]?.entry).toMatchObject({ model: FALLBACK, costUsd: expect.closeTo((50 * 3 + 7 * 10) / 1e6, 12) as unknown });
  });

  it("sends no fallbacks with count_tokens, and none but the job's with a message: what a delegate names itself is dropped", async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    fake.route('POST', `${MESSAGES}/count_tokens`, (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"input_tokens":3}');
    });
    const own = jobs.add({ fallbacks: [{ model: FALLBACK, pricing: FALLBACK_PRICING }] });
    const counting = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
    expect((await post(own.token, counting, { path: '/v1/messages/count_tokens' })).status).toBe(200);
    expect(fake.requestsTo(`${MESSAGES}/count_tokens`)[0]?.body).toBe(JSON.stringify(counting));

    const theirs = { fallbacks: [{ model: 'anthropic/claude-opus-4' }], models: ['openai/gpt-5'] };
    await (await post(own.token, body(theirs))).text();
    const none = jobs.add();
    await (await post(none.token, body(theirs))).text();
    const [withOwn, withNone] = fake.requestsTo(MESSAGES).map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(withOwn).toEqual({ ...body(), fallbacks: [{ model: FALLBACK }] });
    expect(withNone).toEqual(body());
  });

  it('never sends a fallback without a known price: no cap could hold on it', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    const router = { ...FALLBACK_PRICING, inputPerM: null, outputPerM: null, variable: true };
    const { token } = jobs.add({ fallbacks: [{ model: 'openrouter/auto', pricing: router }] });
    await (await post(token, body())).text();
    expect(fake.requestsTo(MESSAGES)[0]?.body).toBe(JSON.stringify(body()));
  });

  it("drops a delegate's own provider object when the user has no policy", async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    const { token } = jobs.add();
    await (await post(token, body({ provider: { order: ['pricey-provider'] } }))).text();
    const sent = JSON.parse(fake.requestsTo(MESSAGES)[0]?.body ?? '{}') as Record<string, unknown>;
    expect(sent).not.toHaveProperty('provider');
    expect(sent.model).toBe(MODEL);
  });

  it('answers an unreachable OpenRouter with a 502 that Claude Code retries', async () => {
    const { token } = jobs.add();
    await fake.stop();
    const response = await post(token, body());
    expect(response.status).toBe(502);
    const { error } = (await response.json()) as { error: { type: string; message: string } };
    expect(error.type).toBe('api_error');
    // node:http's own error code, in words: what the delegate's log and the request log show.
    expect(error.message).toContain('connection refused (ECONNREFUSED)');
    expect(jobs.log[0]?.entry).toMatchObject({ outcome: 'upstream_error', status: 502 });
  });

  it('passes OpenRouter errors through as they are, and logs them', async () => {
    fake.failNext(MESSAGES, { status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } });
    const { token } = jobs.add();
    const response = await post(token, body());
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
    expect(jobs.log[0]?.entry).toMatchObject({ outcome: 'upstream_error', status: 429 });
  });

  it('ends a stream OpenRouter breaks off with an error event, and keeps what was metered', async () => {
    fake.route('POST', MESSAGES, (_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(answerEvents({ input: 400, output: 3 }).slice(0, 3)));
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const { token } = jobs.add();
    const response = await post(token, body());
    const text = await response.text();
    expect(text).toContain('event: message_start');
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"OpenRouter broke off/);
    expect(jobs.log[0]?.entry).toMatchObject({ outcome: 'broken', usage: { inputTokens: 400 } });
  });

  it('stops reading from OpenRouter when the delegate hangs up', async () => {
    let upstreamClosed = false;
    fake.route('POST', MESSAGES, (_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(answerEvents({ input: 10, output: 1 }).slice(0, 1)));
      const timer = setInterval(() => res.write(': ping\n\n'), 20);
      res.on('close', () => {
        upstreamClosed = true;
        clearInterval(timer);
      });
    });
    const { token } = jobs.add();
    const controller = new AbortController();
    const response = await fetch(`${gateway.url ?? ''}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body()),
      signal: controller.signal,
    });
    const reader = response.body?.getReader();
    await reader?.read();
    controller.abort();
    await expect.poll(() => upstreamClosed).toBe(true);
    await expect.poll(() => jobs.log.length).toBe(1);
    expect(jobs.log[0]?.entry.outcome).toBe('aborted');
  });

  it('keeps its port for the next run', async () => {
    const port = server.port;
    await server.stop();
    const again = new GatewayServer({
      handle: (req, res) => gateway.handle(req, res),
      stateFile: path.join(dir, 'gateway.json'),
      onListening: () => undefined,
    });
    await again.start();
    expect(again.port).toBe(port);
    expect(JSON.parse(await readFile(path.join(dir, 'gateway.json'), 'utf8'))).toEqual({ port });
    server = again;
  });

  it('takes another port when its own is taken, and says so', async () => {
    const port = server.port;
    await server.stop();
    const squatter = http.createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    const lines: string[] = [];
    try {
      const again = new GatewayServer({
        handle: (req, res) => gateway.handle(req, res),
        stateFile: path.join(dir, 'gateway.json'),
        onListening: () => undefined,
        log: (line) => lines.push(line),
      });
      await again.start();
      expect(again.port).not.toBe(port);
      expect(lines.join('\n')).toMatch(new RegExp(`port ${port} .* is taken`));
      server = again;
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });

  it('forwards a request sent with Expect: 100-continue, without that header (our listener answered it; the body goes upstream whole)', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    const { token } = jobs.add();
    const payload = JSON.stringify(body());
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port: new URL(gateway.url ?? '').port,
          path: '/v1/messages',
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            expect: '100-continue',
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      request.on('continue', () => request.end(payload));
      request.on('error', reject);
    });
    expect(status).toBe(200);
    const [sent] = fake.requestsTo(MESSAGES);
    expect(sent?.body).toBe(payload);
    expect(sent?.headers.expect).toBeUndefined();
  });

  it('refuses a thinking budget that is not a whole positive number: lowered with max_tokens it would be written longer than it was measured (1e400 is `null`)', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    const { token } = jobs.add();
    const text = JSON.stringify(body({ max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2000 } })).replace(
      '"budget_tokens":2000',
      '"budget_tokens":VALUE',
    );
    for (const value of ['1e400', '-1', '0', '2.5', '"2000"', 'null']) {
      const response = await post(token, text.replace('VALUE', value));
      expect(response.status, value).toBe(400);
      expect(await response.json()).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'thinking.budget_tokens must be a positive integer.' },
      });
    }
    expect(fake.requestsTo(MESSAGES)).toHaveLength(0);
    expect((await post(token, text.replace('VALUE', '2000'))).status).toBe(200);
  });

  it('refuses a Messages request whose max_tokens is not a whole positive number, which no ceiling could bound', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    fake.route('POST', `${MESSAGES}/count_tokens`, (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"input_tokens":12}');
    });
    const { token } = jobs.add();
    const text = JSON.stringify(body()).replace('"max_tokens":1000', '"max_tokens":VALUE');
    // A negative one would have been priced below nothing, and freed budget for the job's other requests in flight.
    for (const value of ['-100000', '0', '1.5', '"1000"', 'null', '1e999', '9007199254740993']) {
      const response = await post(token, text.replace('VALUE', value));
      expect(response.status, value).toBe(400);
      expect(await response.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens must be a positive integer.' } });
    }
    const { max_tokens: _none, ...unbounded } = body();
    expect((await post(token, unbounded)).status).toBe(400);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(0);
    expect(jobs.log).toHaveLength(0);
    // count_tokens has none and needs none.
    expect((await post(token, unbounded, { path: '/v1/messages/count_tokens' })).status).toBe(200);
    expect(fake.requestsTo(`${MESSAGES}/count_tokens`)).toHaveLength(1);
  });

  it('answers 400, not a 502 that Claude Code would retry, to a body nested too deeply to be written anew, and frees its reservation', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    // $0.10 pays for the ~200 KB prompt but not 32,000 tokens: max_tokens is lowered, so the body is written anew.
    const { token } = jobs.add({ maxCostUsd: 0.1 });
    const depth = 100_000;
    // Deep inside a tool call's input, which is the model's own JSON and not walked by the field check.
    const call = `{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    const deep = `{"model":"${MODEL}","max_tokens":32000,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[${call}]}]}`;
    const response = await post(token, deep);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { type: string; message: string } }).error.message).toMatch(/nested too deeply/);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(0);
    // Nothing of it stays reserved: the next request gets all it asks for.
    const next = await post(token, body({ max_tokens: 20000 }));
    expect(next.status).toBe(200);
    await next.text();
    expect(jobs.log.map((l) => l.entry)).toMatchObject([{ outcome: 'ok', maxTokens: 20000, maxTokensAsked: null }]);
  });

  it('answers a request-target that is no URL (absolute form, bad port) with a 404, not a 500', async () => {
    const { token } = jobs.add();
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port: new URL(gateway.url ?? '').port,
          path: 'http://a:99999/v1/messages',
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify(body()));
    });
    expect(answer.status).toBe(404);
    expect((JSON.parse(answer.text) as { error: { type: string } }).error.type).toBe('not_found_error');
    expect(gatewayLog).toEqual([]);
  });

  it('lets go of a request whose delegate hung up while its token was being looked up', async () => {
    const { token } = jobs.add();
    let release: () => void = () => undefined;
    jobs.gate = new Promise<void>((resolve) => (release = resolve));
    const port = Number(new URL(gateway.url ?? '').port);
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(`POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Length: 100\r\n\r\n{"model":`);
    await expect.poll(() => jobs.lookups).toBe(1);
    socket.destroy();
    await expect.poll(() => incoming[0]?.destroyed).toBe(true);
    release();
    let settled = false;
    void handled[0]?.then(() => (settled = true));
    await expect.poll(() => settled).toBe(true);
    expect(fake.requests).toHaveLength(0);
  });

  it('streams eight jobs at once, each its own answer and its own log line', async () => {
    fake.route('POST', MESSAGES, (request, res) => {
      const { messages } = JSON.parse(request.body) as { messages: Array<{ content: string }> };
      const who = messages[0]?.content ?? '?';
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const events = answerEvents({ input: 100 + who.length, output: 7 }, `answer for ${who}`);
      let i = 0;
      const timer = setInterval(() => {
        const event = events[i++];
        if (event) res.write(sse([event]));
        else {
          clearInterval(timer);
          res.end();
        }
      }, 5);
    });
    const running = Array.from({ length: 8 }, (_, n) => ({ n, ...jobs.add() }));
    const texts = await Promise.all(
      running.map(async ({ n, token }) => (await post(token, body({ messages: [{ role: 'user', content: `job ${n}` }] }))).text()),
    );
    texts.forEach((text, n) => expect(text).toContain(`answer for job ${n}`));
    expect(jobs.log).toHaveLength(8);
    for (const { n, job } of running) {
      const line = jobs.log.find((l) => l.jobId === job.id);
      expect(line?.entry.usage.inputTokens).toBe(100 + `job ${n}`.length);
    }
  });

  it('passes a slow answer on as it arrives, not when it ends', async () => {
    let sendRest: () => void = () => undefined;
    fake.route('POST', MESSAGES, (_request, res) => {
      const events = answerEvents({ input: 10, output: 2 });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(events.slice(0, 1)));
      sendRest = () => res.end(sse(events.slice(1)));
    });
    const { token } = jobs.add();
    const response = await post(token, body());
    const reader = response.body?.getReader();
    const first = await reader?.read();
    // The first event is here while OpenRouter still holds the rest.
    expect(new TextDecoder().decode(first?.value)).toContain('event: message_start');
    sendRest();
    let rest = '';
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      rest += new TextDecoder().decode(chunk.value);
    }
    expect(rest).toContain('event: message_stop');
  });

  it('answers 401 when no key is set, without calling OpenRouter', async () => {
    keyValue = null;
    const { token } = jobs.add();
    const response = await post(token, body());
    expect(response.status).toBe(401);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(0);
  });
});

/** A stream that starts (message_start with `input` tokens) and then holds until `release` is called. */
function heldStream(input: number): { handler: (request: RecordedRequest, res: http.ServerResponse) => void; release: () => void } {
  const waiting: Array<() => void> = [];
  let released = false;
  return {
    handler: (_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(answerEvents({ input, output: 1 }).slice(0, 1)));
      const finish = () => {
        if (!res.destroyed) res.end(sse(answerEvents({ input, output: 1 }).slice(1)));
      };
      if (released) finish();
      else waiting.push(finish);
    },
    release: () => {
      released = true;
      for (const finish of waiting.splice(0)) finish();
    },
  };
}

/** A delegate that reads the first chunk of its answer, then hangs up. */
async function hangUpAfterFirstChunk(token: string, payload: Record<string, unknown>): Promise<void> {
  const controller = new AbortController();
  const response = await fetch(`${gateway.url ?? ''}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
    signal: controller.signal,
  });
  await response.body?.getReader().read();
  controller.abort();
}

const settleTurns = () => new Promise((resolve) => setTimeout(resolve, 200));

describe('the metering gateway against a delegate that tries to overspend', () => {
  it('prices a padded request by its text: an answer measured on JSON whitespace cannot talk the next one down', async () => {
    // OpenRouter counts no token for whitespace between JSON values: the first answer says 10 input tokens.
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 1 })));
    const { token, job } = jobs.add({ maxCostUsd: 0.02 });
    const padded = JSON.stringify(body({ max_tokens: 1 })).replace('"messages"', `${' '.repeat(2_000_000)}"messages"`);
    expect((await post(token, padded)).status).toBe(200);
    // 90,000 bytes of dense text: at least 22,500 tokens at the dearer prompt price ($1.25/M), $0.028 — more than the cap.
    const dense = 'x7#q'.repeat(22_500);
    const refused = await post(token, body({ max_tokens: 1, messages: [{ role: 'user', content: dense }] }));
    expect(refused.status).toBe(402);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(1);
    expect(jobs.stopped.map((s) => s.jobId)).toEqual([job.id]);
  });

  it('keeps at most four requests of a job in flight; a fifth waits for one of them to end', async () => {
    const held = heldStream(10);
    fake.route('POST', MESSAGES, held.handler);
    const { token } = jobs.add();
    const responses = Array.from({ length: 5 }, () => post(token, body()));
    await expect.poll(() => fake.requestsTo(MESSAGES).length).toBe(4);
    await settleTurns();
    expect(fake.requestsTo(MESSAGES)).toHaveLength(4);
    held.release();
    for (const response of await Promise.all(responses)) expect(response.status).toBe(200);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(5);
  });

  it('holds a request in flight at its bound: a second one that fits only beside the first one’s estimate waits for it to settle', async () => {
    const held = heldStream(10);
    fake.route('POST', MESSAGES, held.handler);
    // 40,000 bytes of text: estimated at ~$0.0125 each, held at ~$0.05 while in flight; the cap pays for two estimates only.
    const { token } = jobs.add({ maxCostUsd: 0.04 });
    const big = body({ max_tokens: 1, messages: [{ role: 'user', content: 'word '.repeat(8_000) }] });
    const first = post(token, big);
    await expect.poll(() => fake.requestsTo(MESSAGES).length).toBe(1);
    const second = post(token, big);
    await settleTurns();
    expect(fake.requestsTo(MESSAGES)).toHaveLength(1);
    held.release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(2);
    expect(jobs.stopped).toEqual([]);
  });

  it('stops a job as soon as what its requests cost passes its cap, not at its next request', async () => {
    // A prompt that tokenises far denser than any estimate: OpenRouter bills 300,000 tokens ($0.30).
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 300_000, output: 1 })));
    const { token, job } = jobs.add({ maxCostUsd: 0.05 });
    expect((await post(token, body({ max_tokens: 1 }))).status).toBe(200);
    await expect.poll(() => jobs.stopped).toEqual([{ jobId: job.id, reason: expect.stringMatching(/cost \$0\.30, past the job's \$0\.05 cap/) as unknown }]);
  });

  it('keeps a request the delegate hung up on held until OpenRouter’s record says what it cost, and logs that cost', async () => {
    let recordIn: (usd: number | null) => void = () => undefined;
    const asked: string[] = [];
    billedCost = (id) => {
      asked.push(id);
      return new Promise((resolve) => (recordIn = resolve));
    };
    const held = heldStream(10);
    fake.route('POST', MESSAGES, held.handler);
    const { token } = jobs.add({ maxCostUsd: 0.5 });
    // Held at ~$0.30 (150,000 tokens at $2/M) while in flight.
    await hangUpAfterFirstChunk(token, body({ max_tokens: 150_000 }));
    await expect.poll(() => asked).toEqual(['gen-123']);
    // Its hold stays while the record is looked up: a second request that fits only without it waits.
    const second = post(token, body({ max_tokens: 150_000 }));
    await settleTurns();
    expect(fake.requestsTo(MESSAGES)).toHaveLength(1);
    // The provider could not cancel: it billed the whole completion.
    recordIn(0.3);
    held.release();
    expect((await second).status).toBe(200);
    const hungUp = jobs.log.find((l) => l.entry.outcome === 'aborted')?.entry;
    expect(hungUp).toMatchObject({ costUsd: 0.3, generationId: 'gen-123', note: expect.stringMatching(/generation record/) as unknown });
    // What was left after the $0.30 paid for fewer tokens than asked: the second went lowered.
    const sent = JSON.parse(fake.requestsTo(MESSAGES)[1]?.body ?? '{}') as { max_tokens: number };
    expect(sent.max_tokens).toBeLessThan(100_000);
    expect(sent.max_tokens).toBeGreaterThan(90_000);
  });

  it('counts a hung-up request at its ceiling when OpenRouter keeps no record of it', async () => {
    const held = heldStream(10);
    fake.route('POST', MESSAGES, held.handler);
    const { token } = jobs.add({ maxCostUsd: 0.5 });
    await hangUpAfterFirstChunk(token, body({ max_tokens: 100_000 }));
    await expect.poll(() => jobs.log.length).toBe(1);
    held.release();
    // At least all of max_tokens at $2/M.
    expect(jobs.log[0]?.entry.costUsd).toBeGreaterThanOrEqual(0.2);
    expect(jobs.log[0]?.meteredUsd).toBe(jobs.log[0]?.entry.costUsd);
    expect(jobs.log[0]?.entry.note).toMatch(/counted at its ceiling/);
  });

  it('scrubs the key from an error answer and from every header it relays', async () => {
    fake.route('POST', MESSAGES, (request, res) => {
      const echoed = String(request.headers.authorization);
      res.writeHead(401, { 'content-type': 'application/json', 'x-echo-authorization': echoed });
      res.end(JSON.stringify({ error: { message: `Invalid key: ${echoed.slice('Bearer '.length)}`, code: 401 } }));
    });
    const { token } = jobs.add();
    const response = await post(token, body());
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(text).toContain('Invalid key: [redacted]');
    expect(text).not.toContain(KEY);
    expect(response.headers.get('x-echo-authorization')).toBe('Bearer [redacted]');
    expect(JSON.stringify(jobs.log)).not.toContain(KEY);
  });

  it('logs count_tokens, refuses it once the job is past its cap, and allows a job a hundred', async () => {
    fake.route('POST', `${MESSAGES}/count_tokens`, (_request, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"input_tokens":3}');
    });
    const counting = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
    const { token } = jobs.add();
    for (let i = 0; i < 100; i++) expect((await post(token, counting, { path: '/v1/messages/count_tokens' })).status).toBe(200);
    expect(jobs.log).toHaveLength(100);
    expect(jobs.log[0]?.entry).toMatchObject({ outcome: 'ok', note: 'count_tokens', costUsd: 0 });
    const over = await post(token, counting, { path: '/v1/messages/count_tokens' });
    expect(over.status).toBe(403);
    expect(((await over.json()) as { error: { message: string } }).error.message).toMatch(/100 count_tokens calls/);

    const spent = jobs.add({ maxCostUsd: 0.5, estimatedCostUsd: 0.5 });
    expect((await post(spent.token, counting, { path: '/v1/messages/count_tokens' })).status).toBe(402);
    expect(jobs.stopped.map((s) => s.jobId)).toEqual([spent.job.id]);
    expect(fake.requestsTo(`${MESSAGES}/count_tokens`)).toHaveLength(100);
  });

  it('sends the body written anew, so a field given twice reaches OpenRouter once, as it was priced', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 1 })));
    const { token } = jobs.add({ maxCostUsd: 0.01 });
    // JSON.parse keeps the last max_tokens; a parser that kept the first would generate 100,000 tokens.
    const twice = JSON.stringify(body({ max_tokens: 1 })).replace('{', '{"max_tokens":100000,');
    expect((await post(token, twice)).status).toBe(200);
    const sent = fake.requestsTo(MESSAGES)[0]?.body ?? '';
    expect(sent.match(/"max_tokens"/g)).toHaveLength(1);
    expect((JSON.parse(sent) as { max_tokens: number }).max_tokens).toBe(1);
  });

  it('refuses, naming it, a field Claude Code never sends or a server tool the user has not allowed; none reaches OpenRouter', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 1 })));
    const { token } = jobs.add();
    const refused = async (payload: Record<string, unknown>, field: RegExp) => {
      const response = await post(token, payload);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(field);
    };
    await refused(body({ plugins: [{ id: 'web', max_results: 50 }] }), /"plugins"/);
    await refused(body({ tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 50 }] }), /tools\[0\]/);
    await refused(
      body({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.org/a.pdf' } }] }] }),
      /messages\[0\]\.content\[0\]/,
    );
    await refused(JSON.parse(JSON.stringify(body()).replace('{', '{"__proto__":{"x":1},')) as Record<string, unknown>, /__proto__/);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(0);
    expect(jobs.log).toEqual([]);
  });

  it('lets go of a request that failed on its own side before it went, counted at the most it could cost', async () => {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 1 })));
    const { token } = jobs.add({ maxCostUsd: 0.5 });
    const requestStarted = jobs.requestStarted.bind(jobs);
    let failures = 4;
    jobs.requestStarted = async (jobId, entry) => {
      if (failures-- > 0) throw new Error('the request log could not be written');
      return requestStarted(jobId, entry);
    };
    // Four failures: were their holds kept, the job (four in flight at most) could send nothing more.
    for (let i = 0; i < 4; i++) expect((await post(token, body({ max_tokens: 1000 }))).status).toBe(500);
    expect((await post(token, body({ max_tokens: 1000 }))).status).toBe(200);
    expect(fake.requestsTo(MESSAGES)).toHaveLength(1);
  });
});

describe('the headers a delegate sends, as they reach OpenRouter (the allowlist: gateway-headers.ts)', () => {
  /** The headers OpenRouter got for one request sent with `headers` (besides content-type, anthropic-version and the token). */
  async function upstreamGot(headers: Record<string, string>): Promise<http.IncomingHttpHeaders> {
    fake.route('POST', MESSAGES, streamAnswer(answerEvents({ input: 10, output: 5 })));
    const { token } = jobs.add();
    const response = await post(token, body(), { headers });
    expect(response.status).toBe(200);
    await response.text();
    const [sent] = fake.requestsTo(MESSAGES);
    return sent?.headers ?? {};
  }
  /** The gateway's own and the connection's: replaced or framed anew, never passed on as sent. */
  const OWN_OR_CONNECTION = new Set(['authorization', 'http-referer', 'x-title', 'x-session-id', 'accept-encoding', 'host', 'connection', 'content-length']);

  it('drops a header it does not know', async () => {
    const got = await upstreamGot({ 'x-made-up': 'anything', 'x-openrouter-experimental-metadata': 'enabled' });
    expect(got['x-made-up']).toBeUndefined();
    expect(got['x-openrouter-experimental-metadata']).toBeUndefined();
  });

  it('drops x-api-key: the only key that goes is the gateway’s', async () => {
    const got = await upstreamGot({ 'x-api-key': 'sk-ant-delegates-own' });
    expect(got['x-api-key']).toBeUndefined();
    expect(got.authorization).toBe(`Bearer ${KEY}`);
  });

  it('drops cookie', async () => {
    expect((await upstreamGot({ cookie: 'session=1' })).cookie).toBeUndefined();
  });

  it('takes the beta values it does not allow out of anthropic-beta and keeps the allowed ones, in order', async () => {
    const got = await upstreamGot({ 'anthropic-beta': 'claude-code-20250219,context-1m-2025-08-07, effort-2025-11-24,made-up-2030-01-01' });
    expect(got['anthropic-beta']).toBe('claude-code-20250219,effort-2025-11-24');
  });

  it('drops anthropic-beta when none of its values is allowed', async () => {
    expect((await upstreamGot({ 'anthropic-beta': 'context-1m-2025-08-07,made-up-2030-01-01' }))['anthropic-beta']).toBeUndefined();
  });

  it('drops a user-agent not in Claude Code’s form, and an x-claude-code-session-id of another session', async () => {
    const got = await upstreamGot({ 'user-agent': 'claude-cli/2.1.332 (external, sdk-cli) <free text>', 'x-claude-code-session-id': 'sess-other' });
    expect(got['user-agent']).toBeUndefined();
    expect(got['x-claude-code-session-id']).toBeUndefined();
  });

  // Generated from the capture (captured-headers.ts): a new capture widens these.
  it.each(CAPTURED_NAMES.filter((name) => allowedBecause(name) !== null))('passes %s as Claude Code sends it', async (name) => {
    const value = exampleValue(name, 'sess-1');
    expect((await upstreamGot({ [name]: value }))[name]).toBe(value);
  });

  it.each(CAPTURED_NAMES.filter((name) => droppedBecause(name) !== null && !OWN_OR_CONNECTION.has(name)))(
    'drops %s, which Claude Code sends, for its reason',
    async (name) => {
      expect((await upstreamGot({ [name]: exampleValue(name, 'sess-1') }))[name]).toBeUndefined();
    },
  );
});
