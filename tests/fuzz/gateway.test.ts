/**
 * Fuzz of the metering gateway (docs/ARCHITECTURE.md §11): the door every delegate request goes through, and the
 * only place the OpenRouter key is put on a request.
 *
 * 1. Thousands of malformed and hostile requests over real sockets to a live GatewayServer + MeteringGateway in
 *    process, with a job table of the test's own and the fake OpenRouter behind: odd methods and request-targets
 *    (`..`, encoded bytes, absolute forms, very long), missing, repeated and wrong credentials (the key itself
 *    among them), wrong Host headers, bodies of random bytes, truncated or mutated JSON, JSON that is no object,
 *    deep nesting, duplicate keys, every wrong max_tokens, `model` and `thinking`, bodies just over 32 MiB,
 *    bodies dripped slowly, hop-by-hop headers, broken framing, and clients that hang up mid-body and
 *    mid-answer. A token is sometimes looked up late, as while a restarted service adopts its jobs.
 *    Properties: nothing throws unhandled, and the gateway never falls back on its catch-all; every request it
 *    takes settles; every whole answer is the fake's own answer to that very request (byte for byte) or an
 *    Anthropic-shaped error with the status the request earns (a model of the documented checks, in order),
 *    never a 5xx of the gateway's own while OpenRouter is up; answers Node's HTTP parser gives before the
 *    gateway sees a request are bare 4xx; no answer carries the key; OpenRouter receives only requests with a
 *    live job's token, that job's model, a JSON object body and a whole positive max_tokens no larger than
 *    asked, each with the key, the attribution and the job's session and never a job token, and only fields Claude
 *    Code sends; no job's metered spend passes its cap by more than its largest request's cost; every request log entry is one the contract's schema reads back; and afterwards a
 *    valid request is still answered.
 * 2. UsageMeter: random SSE streams of realistic events (and a few non-streaming bodies) with garbage between
 *    them, \n and \r\n, multi-line data, multi-byte text, cut into random chunks: it never throws, and ends
 *    with the usage, id, model, provider and error the events say (last figure per field wins). Endless lines
 *    and endless events cost no more than its cap.
 * 3. ceiling.decide and withMaxTokens on random standings, prices, prompts and bodies: a go never commits more
 *    than is left, never more tokens than asked, a refusal only when not even a useful answer fits, and a
 *    lowered body's thinking budget stays below max_tokens or thinking goes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRecord } from '../../src-main/common/errors.js';
import { GatewayRequestSchema } from '../../src-main/contract/jobs.js';
import type { GatewayRequest, Usage } from '../../src-main/contract/jobs.js';
import type { CatalogPricing } from '../../src-main/core/catalog/parse.js';
import { MIN_USEFUL_OUTPUT_TOKENS, decide, withMaxTokens } from '../../src-main/core/gateway/measure/ceiling.js';
import type { Prices } from '../../src-main/core/gateway/measure/ceiling.js';
import { MAX_BODY_BYTES, MeteringGateway } from '../../src-main/core/gateway/gateway.js';
import type { GatewayJob, GatewayJobs } from '../../src-main/core/gateway/gateway.js';
import { newJobToken, tokenHash } from '../../src-main/core/gateway/job-token.js';
import { checkRequest } from '../../src-main/core/gateway/request/request-fields.js';
import { UsageMeter } from '../../src-main/core/gateway/measure/usage-meter.js';
import type { MeteredAnswer } from '../../src-main/core/gateway/measure/usage-meter.js';
import { GatewayServer } from '../../src-main/ipc/gateway-server.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import type { RecordedRequest } from '../support/fake-openrouter.js';
import { exchange } from './support/http-wire.js';
import type { Exchange, Plan } from './support/http-wire.js';
import { deepNestingText, mutateBytes, mutateJson, randomChunks, randomJson, randomString } from './support/mutate.js';
import { Rng, fuzzScale, fuzzSeed, reproduceHint } from './support/prng.js';
import { heapMiB } from './support/heap.js';

const FILE = 'tests/fuzz/gateway.test.ts';
const SEED = fuzzSeed();
const SCALE = fuzzScale();
const REQUESTS = Math.round(4000 * SCALE);
const CONCURRENCY = 8;
const STREAMS = Math.round(3000 * SCALE);
const DECISIONS = Math.round(200_000 * SCALE);
const BODIES = Math.round(20_000 * SCALE);
/** A request neither answered nor closed for this long is hung (a bound, not a speed requirement). */
const HANG_MS = 20_000;
const MAX_PROBLEMS = 25;

const KEY = `sk-or-v1-${'5eedc0de'.repeat(8)}`;
const ATTRIBUTION = { url: 'https://example.org/openrouter-delegate', title: 'OpenRouter Delegate' };
const POLICY = { data_collection: 'deny', sort: 'throughput' };
const FORWARDED = new Set(['/v1/messages', '/v1/messages/count_tokens']);
const ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'api_error',
  'overloaded_error',
]);

// ---- the job table ------------------------------------------------------------------------------

const pricing = (inputPerM: number, outputPerM: number, cacheWritePerM: number | null): CatalogPricing => ({
  inputPerM,
  outputPerM,
  cacheReadPerM: inputPerM / 10,
  cacheWritePerM,
  variable: false,
  tieredFromPromptTokens: null,
});

/** A loose cap, a tight one (lowered, then refused), a router model without a price, and a job all but spent. */
const JOB_SPECS: ReadonlyArray<Omit<GatewayJob, 'id' | 'sessionId'> & { weight: number }> = [
  { model: 'deepseek/deepseek-v4-flash-0731', pricing: pricing(0.27, 1.1, null), maxCostUsd: 50, estimatedCostUsd: 0, fallbacks: [], weight: 40 },
  { model: 'moonshotai/kimi-k2-0905', pricing: pricing(1, 2, 1.25), maxCostUsd: 0.25, estimatedCostUsd: 0, fallbacks: [], weight: 25 },
  { model: 'openrouter/auto', pricing: null, maxCostUsd: 1, estimatedCostUsd: 0, fallbacks: [], weight: 20 },
  { model: 'z-ai/glm-4.6', pricing: pricing(0.6, 2.2, null), maxCostUsd: 1, estimatedCostUsd: 0.97, fallbacks: [], weight: 15 },
];

interface FuzzJob extends GatewayJob {
  token: string;
  weight: number;
}

/** The supervisor as the gateway sees it, kept the way GatewayLink keeps it. */
class FuzzJobs implements GatewayJobs {
  readonly jobs: FuzzJob[];
  /** Tokens of jobs that ended: no longer any job's. */
  readonly ended = [newJobToken(), newJobToken()];
  readonly entries: Array<{ jobId: string; entry: GatewayRequest }> = [];
  readonly dayCapUsd = 1000;
  spentTodayUsd = 0;
  private readonly byHash: Map<string, FuzzJob>;

  constructor(private readonly rng: Rng) {
    this.jobs = JOB_SPECS.map((spec, i) => ({ ...spec, id: `job_${i + 1}`, sessionId: `sess-${i + 1}`, token: newJobToken() }));
    this.byHash = new Map(this.jobs.map((job) => [tokenHash(job.token), job]));
  }

  byToken(token: string | null): FuzzJob | null {
    return this.jobs.find((job) => job.token === token) ?? null;
  }

  async byTokenHash(hash: string): Promise<GatewayJob | null> {
    // Sometimes late, as while a restarted service adopts its jobs: a delegate may hang up meanwhile.
    const wait = this.rng.float();
    if (wait < 0.25) await nextTurn();
    else if (wait < 0.5) await sleep(this.rng.int(1, 15));
    const job = this.byHash.get(hash);
    if (!job) return null;
    const { token: _token, weight: _weight, ...seen } = job;
    return seen;
  }

  day(): { spentUsd: number; capUsd: number } {
    return { spentUsd: this.spentTodayUsd, capUsd: this.dayCapUsd };
  }

  /** First lines of requests that went upstream; each must be answered by a last line with the same id. */
  readonly started = new Set<string>();

  async requestStarted(_jobId: string, entry: GatewayRequest): Promise<void> {
    expect(entry.outcome).toBe('pending');
    this.started.add(entry.id);
  }

  logRequest(jobId: string, entry: GatewayRequest, meteredUsd: number): void {
    // As stored: one JSON line.
    this.entries.push({ jobId, entry: JSON.parse(JSON.stringify(entry)) as GatewayRequest });
    this.spentTodayUsd += entry.costUsd;
    const job = this.jobs.find((j) => j.id === jobId);
    if (job) job.estimatedCostUsd = Math.max(job.estimatedCostUsd, meteredUsd);
  }

  stopForBudget(): void {
    // The real one ends the job; here its token stays good, so later requests keep meeting the spent cap.
  }
}

// ---- the fake OpenRouter's answers ----------------------------------------------------------------

/**
 * Which case a request is, and how the fake OpenRouter answers it, ride in the User-Agent in Claude Code's own form
 * (`claude-cli/<case>.<how>.0 (external, sdk-cli)`): one of the few headers the gateway's allowlist passes on
 * (gateway-headers.ts), and sent first, so Node keeps it over a User-Agent among a case's extra headers.
 */
const UPSTREAM_HOW = ['ok', 'slow', 'error', 'break'] as const;
const caseTag = (id: number, how: (typeof UPSTREAM_HOW)[number]) => `User-Agent: claude-cli/${id}.${UPSTREAM_HOW.indexOf(how)}.0 (external, sdk-cli)`;
function caseOf(headers: http.IncomingHttpHeaders): { id: number; how: string } {
  const tag = /^claude-cli\/(\d+)\.(\d+)\.0 /.exec(String(headers['user-agent'] ?? ''));
  return { id: Number(tag?.[1]), how: UPSTREAM_HOW[Number(tag?.[2])] ?? 'ok' };
}

/** Every answer carries this, so an answer can be told from the gateway's own, and from another request's. */
const marker = (id: number) => `fuzz-case-${id}`;
const MARKER = /fuzz-case-(\d+)/g;

function sseOf(events: Array<Record<string, unknown>>): string[] {
  return events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`);
}

/** Answers like the Messages API: a stream or a message whose usage is the most the request allows (1 prompt token, all of max_tokens). */
function upstreamRoute(answers: Map<number, string>) {
  return async (request: RecordedRequest, res: http.ServerResponse): Promise<void> => {
    const { id, how } = caseOf(request.headers);
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(request.body);
      if (isRecord(parsed)) body = parsed;
    } catch {
      // Answered below as the API would.
    }
    const json = (status: number, value: unknown) => {
      const text = JSON.stringify(value);
      answers.set(id, text);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(text);
    };
    if (request.path.endsWith('/count_tokens')) return json(200, { input_tokens: 7, note: marker(id) });
    const maxTokens = body.max_tokens;
    if (!(Number.isSafeInteger(maxTokens) && (maxTokens as number) >= 1)) {
      // The API takes its time to refuse: long enough for a negative reservation to matter to requests in flight.
      await sleep(30);
      return json(400, { type: 'error', error: { type: 'invalid_request_error', message: `${marker(id)}: max_tokens: must be a positive integer` } });
    }
    if (how === 'error') {
      const [status, type] = (
        [
          [429, 'rate_limit_error'],
          [500, 'api_error'],
          [529, 'overloaded_error'],
          [400, 'invalid_request_error'],
        ] as const
      )[id % 4] ?? [500, 'api_error'];
      return json(status, { type: 'error', error: { type, message: `${marker(id)}: scripted` } });
    }
    const message = { id: `gen-${marker(id)}`, type: 'message', role: 'assistant', model: body.model };
    const text = `${marker(id)}: héllo 中文 😀`;
    const output = maxTokens as number;
    if (body.stream !== true) {
      const whole = JSON.stringify({ ...message, content: [{ type: 'text', text }], usage: { input_tokens: 1, output_tokens: output } });
      if (how === 'slow') await sleep(20);
      if (how === 'break') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(whole.length + 10) });
        res.write(whole.slice(0, 20));
        setTimeout(() => res.socket?.destroy(), 5);
        return;
      }
      answers.set(id, whole);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(whole);
      return;
    }
    const events = sseOf([
      { type: 'message_start', message: { ...message, content: [], usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: output } },
      { type: 'message_stop' },
    ]);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (how === 'break') {
      res.write(events.slice(0, 3).join(''));
      setTimeout(() => res.socket?.destroy(), 5);
      return;
    }
    answers.set(id, events.join(''));
    for (const event of events) {
      if (how === 'slow') await sleep(8);
      if (res.destroyed) return;
      res.write(event);
    }
    res.end();
  };
}

// ---- requests -------------------------------------------------------------------------------------

type Framing = 'length' | 'chunked' | 'none' | 'long-length' | 'bad-chunked' | 'double-length';
type Behavior = 'full' | 'drip' | 'cut-body' | 'cut-early' | 'cut-answer';
type Upstream = 'ok' | 'slow' | 'error' | 'break';

interface Case {
  id: number;
  kind: string;
  method: string;
  target: string;
  /** Host lines as written (none, one, or two). */
  hosts: string[];
  /** Credential headers as written: [name, value]. */
  credentials: Array<[string, string]>;
  extra: Array<[string, string]>;
  body: Buffer;
  framing: Framing;
  behavior: Behavior;
  upstream: Upstream;
  connection: 'close' | 'keep-alive' | null;
  /** Nested deeper than JSON.stringify walks: the gateway may refuse to write it anew. */
  deep: boolean;
}

/** What the gateway must do with a request: its documented checks, in its order (host, route, token, size, JSON, model, max_tokens). */
type Verdict = { kind: 'refuse'; status: 421 | 404 | 401 | 413 | 400; type: string } | { kind: 'forward'; job: FuzzJob; pathname: string; maxTokens: unknown };

/** What is kept of a case once it has been sent. */
interface Sent {
  id: number;
  kind: string;
  behavior: Behavior;
  upstream: Upstream;
  verdict: Verdict;
  /** Framing Node refuses or never completes: no body reaches the gateway. */
  badFraming: boolean;
  deep: boolean;
  method: string;
  /** For the report: how it was framed and where it went. */
  framing: Framing;
  target: string;
  bodyBytes: number;
}

const REFUSAL_TYPES = { 421: 'permission_error', 404: 'not_found_error', 401: 'authentication_error', 413: 'request_too_large', 400: 'invalid_request_error' };

/** Header values as Node gives them: the first of a repeated Host or Authorization, others joined; outer blanks trimmed. */
function nodeHeader(c: Case, name: string): string | undefined {
  const values = [...c.credentials, ...c.extra, ...c.hosts.map((h): [string, string] => ['host', h])]
    .filter(([n]) => n.toLowerCase() === name)
    .map(([, v]) => v.replace(/^[ \t]+|[ \t]+$/g, ''));
  if (values.length === 0) return undefined;
  return name === 'host' || name === 'authorization' ? values[0] : values.join(', ');
}

/** The token a request presents, read the way the gateway documents: a Bearer Authorization, else x-api-key. */
function credentialOf(c: Case): string | null {
  const auth = nodeHeader(c, 'authorization');
  if (auth !== undefined && /^Bearer /i.test(auth)) return auth.slice(7).trim() || null;
  const apiKey = nodeHeader(c, 'x-api-key');
  return apiKey ? apiKey : null;
}

function verdictOf(c: Case, port: number, jobs: FuzzJobs): Verdict {
  const refuse = (status: 421 | 404 | 401 | 413 | 400): Verdict => ({ kind: 'refuse', status, type: REFUSAL_TYPES[status] });
  const host = nodeHeader(c, 'host');
  if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return refuse(421);
  let pathname: string | null = null;
  try {
    pathname = new URL(c.target, 'http://gateway').pathname;
  } catch {
    // No URL: no route.
  }
  if (c.method !== 'POST' || pathname === null || !FORWARDED.has(pathname)) return refuse(404);
  const job = jobs.byToken(credentialOf(c));
  if (!job) return refuse(401);
  const body = c.framing === 'none' ? Buffer.alloc(0) : c.body;
  if (body.length > MAX_BODY_BYTES) return refuse(413);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return refuse(400);
  }
  if (!isRecord(parsed) || parsed.model !== job.model) return refuse(400);
  if (pathname === '/v1/messages' && !(Number.isSafeInteger(parsed.max_tokens) && (parsed.max_tokens as number) >= 1)) return refuse(400);
  // A thinking budget is lowered with max_tokens and written as a whole number: anything else is refused.
  const thinking = parsed.thinking;
  if (pathname === '/v1/messages' && isRecord(thinking) && Object.hasOwn(thinking, 'budget_tokens')) {
    if (!(Number.isSafeInteger(thinking.budget_tokens) && (thinking.budget_tokens as number) >= 1)) return refuse(400);
  }
  // Only what Claude Code sends (request-fields.ts, tested on its own in tests/core/gateway/request/request-fields.test.ts).
  if (checkRequest(parsed, { counting: pathname !== '/v1/messages', allow: { serverTools: false, urlSources: false } })) return refuse(400);
  return { kind: 'forward', job, pathname, maxTokens: parsed.max_tokens };
}

const MAX_TOKENS = [1, 16, 512, 1023, 1024, 4096, 8192, 21_333, 32_000, 64_000, 128_000];
const ODD_MAX_TOKENS = [
  '0',
  '-1',
  '-100000000',
  '1.5',
  '1e999',
  '-1e999',
  '1e300',
  '9007199254740993',
  '"1000"',
  'null',
  'true',
  '[]',
  '{}',
  '1E3',
  '1.0',
  '-0',
];
const ODD_METHODS = ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PROPFIND', 'post', 'FOO', 'P0ST'];
const CANONICAL_TARGETS = ['/v1/messages', '/v1/messages?beta=true', '/v1/messages/count_tokens', '/v1/messages/count_tokens?beta=true'];
const ODD_TARGETS = [
  '/v1/messages/',
  '/V1/messages',
  '/v1/messages/../messages',
  '/v1/../v1/messages',
  '/v1/%2e%2e/v1/messages',
  '/v1/%2E%2E/%2e%2e/v1/messages?beta=true',
  '/v1/messages%2f',
  '/v1/%6d%65ssages',
  '//v1/messages',
  '/v1//messages',
  '/v1/messages#frag',
  '/v1/messages\\..\\messages',
  'http://evil.example/v1/messages',
  'http://a:99999/v1/messages',
  'http://[::1/v1/messages',
  '*',
  '/',
  '/v1/models',
  '/api/v1/messages',
  '/v1/messages/count_tokens/../../messages',
  '/v1/messages;x',
  '/v1/messages?%00',
  '/\u0001',
  '/v1/messages\u00e9',
];
const EXTRA_HEADERS: ReadonlyArray<[string, string]> = [
  ['Content-Type', 'application/json'],
  ['anthropic-version', '2023-06-01'],
  ['anthropic-beta', 'claude-code-20250219,interleaved-thinking-2025-05-14'],
  ['User-Agent', 'claude-cli/2.1.332 (external, cli)'],
  ['Expect', '100-continue'],
  ['TE', 'trailers'],
  ['Cookie', 'session=1'],
  ['Proxy-Connection', 'keep-alive'],
  ['Keep-Alive', 'timeout=5'],
  ['Upgrade', 'h2c'],
  ['X-Session-Id', 'evil-session'],
  ['X-Title', 'evil'],
  ['HTTP-Referer', 'https://evil.example'],
  ['Accept-Encoding', 'gzip, br'],
  ['X-Forwarded-For', '10.0.0.1'],
  ['constructor', 'x'],
  ['__proto__', 'x'],
  ['Content-Type', 'text/plain; charset=latin1'],
  ['X-Latin1', 'caf\u00e9 \u00ff'],
  ['X-Control', 'a\u0001b'],
  ['Trailer', 'x-checksum'],
  ['Content-Encoding', 'identity'],
];

function weightedJob(rng: Rng, jobs: FuzzJobs): FuzzJob {
  return rng.weighted(jobs.jobs.map((job) => [job.weight, job] as const));
}

/** A header value of printable Latin-1, sometimes with blanks around it. */
function headerText(rng: Rng, max: number): string {
  let out = '';
  for (let n = rng.size(max); n > 0; n--) out += String.fromCharCode(rng.chance(0.9) ? rng.int(0x21, 0x7e) : rng.int(0xa0, 0xff));
  return out;
}

function thinkingOf(rng: Rng, maxTokens: number): unknown {
  const shape = rng.below(12);
  if (shape < 4) return { type: 'enabled', budget_tokens: rng.int(1024, Math.max(1024, maxTokens - 1)) };
  if (shape === 4) return { type: 'enabled', budget_tokens: maxTokens + rng.int(0, 5000) };
  if (shape === 5) return { type: 'enabled', budget_tokens: rng.pick([0, -1, 1023, 1e9, 1.5]) };
  if (shape === 6) return { type: 'enabled', budget_tokens: String(rng.int(1, 99_999)) };
  if (shape === 7) return rng.pick<unknown>([{ type: 'enabled' }, { type: 'adaptive' }, { type: 'disabled', budget_tokens: 99_999 }, { budget_tokens: 5000 }]);
  return rng.pick<unknown>([[], null, 'enabled', 5, true, randomJson(rng, 2)]);
}

function content(rng: Rng): unknown {
  const r = rng.float();
  if (r < 0.5) return randomString(rng, 400);
  if (r < 0.55) return 'x'.repeat(rng.int(10_000, 200_000));
  return Array.from({ length: rng.int(1, 4) }, () =>
    rng.pick<unknown>([
      { type: 'text', text: randomString(rng, 200) },
      { type: 'tool_use', id: `toolu_${rng.below(1e6)}`, name: 'Bash', input: { command: randomString(rng, 80) } },
      { type: 'tool_result', tool_use_id: `toolu_${rng.below(1e6)}`, content: randomString(rng, 200) },
      { type: 'text', text: 'ok', cache_control: { type: 'ephemeral' } },
    ]),
  );
}

/** A body Claude Code could send for this job. */
function goodBody(rng: Rng, job: FuzzJob): Record<string, unknown> {
  const maxTokens = rng.chance(0.8) ? rng.pick(MAX_TOKENS) : rng.int(1, 200_000);
  const body: Record<string, unknown> = {
    model: job.model,
    max_tokens: maxTokens,
    messages: Array.from({ length: rng.int(1, 5) }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: content(rng) })),
  };
  if (rng.chance(0.7)) body.stream = true;
  if (rng.chance(0.3)) body.system = [{ type: 'text', text: randomString(rng, 300) }];
  if (rng.chance(0.35)) body.thinking = thinkingOf(rng, maxTokens);
  if (rng.chance(0.2))
    body.tools = [{ name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }];
  if (rng.chance(0.1)) body.provider = rng.chance(0.5) ? { order: ['DeepInfra'], sort: 'price' } : randomJson(rng, 2);
  if (rng.chance(0.1)) body.metadata = { user_id: randomString(rng, 40) };
  if (rng.chance(0.2)) body.temperature = rng.pick([0, 0.7, 1]);
  return body;
}

/** One request body by kind; `deep` when it is nested past what JSON.stringify walks. */
function bodyOf(rng: Rng, kind: string, job: FuzzJob, jobs: FuzzJobs): { body: Buffer; deep: boolean } {
  const text = (value: unknown) => Buffer.from(JSON.stringify(value) ?? 'null');
  const good = goodBody(rng, job);
  switch (kind) {
    case 'valid':
      return { body: text(good), deep: false };
    case 'count': {
      const { max_tokens: _max, stream: _stream, ...counted } = good;
      return { body: text(rng.chance(0.7) ? counted : good), deep: false };
    }
    case 'model': {
      const other = rng.pick(jobs.jobs.filter((j) => j.model !== job.model)).model;
      const wrong = rng.pick<unknown>([
        other,
        job.model.toUpperCase(),
        `${job.model} `,
        ` ${job.model}`,
        `${job.model}:free`,
        42,
        null,
        [job.model],
        { id: job.model },
        true,
        '',
      ]);
      if (rng.chance(0.15)) delete good.model;
      else good.model = wrong;
      return { body: text(good), deep: false };
    }
    case 'max_tokens': {
      if (rng.chance(0.15)) {
        delete good.max_tokens;
        return { body: text(good), deep: false };
      }
      return {
        body: Buffer.from(JSON.stringify({ ...good, max_tokens: 777 }).replace('"max_tokens":777', `"max_tokens":${rng.pick(ODD_MAX_TOKENS)}`)),
        deep: false,
      };
    }
    case 'thinking':
      good.thinking = thinkingOf(rng, typeof good.max_tokens === 'number' ? good.max_tokens : 1000);
      return { body: text(good), deep: false };
    case 'json-mutated': {
      let value: unknown = good;
      for (let i = rng.int(1, 3); i > 0; i--) value = mutateJson(rng, value);
      return { body: text(value), deep: false };
    }
    case 'byte-mutated':
      return { body: mutateBytes(rng, text(good), text(goodBody(rng, job))), deep: false };
    case 'truncated': {
      const whole = text(good);
      return { body: whole.subarray(0, rng.below(whole.length)), deep: false };
    }
    case 'not-object':
      return { body: text(rng.pick<unknown>([[good], [], JSON.stringify(good), 42, -1, null, true, 'model', randomJson(rng, 3)])), deep: false };
    case 'random-bytes':
      return { body: rng.bytes(rng.size(2000)), deep: false };
    case 'deep': {
      const depth = rng.pick([1000, 30_000, 200_000]);
      if (rng.chance(0.3)) return { body: Buffer.from(deepNestingText(rng, depth)), deep: false };
      const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const head = JSON.stringify({ ...good, messages: 'NESTED' });
      return { body: Buffer.from(head.replace('"NESTED"', `[{"role":"user","content":${nested}}]`)), deep: depth > 1000 };
    }
    case 'duplicate-keys': {
      const whole = JSON.stringify(good);
      const variant = rng.below(3);
      // The gateway reads JSON as JSON.parse does: the last of a repeated key.
      if (variant === 0) return { body: Buffer.from(`{"model":"${rng.pick(jobs.jobs).model}",${whole.slice(1)}`), deep: false };
      if (variant === 1) return { body: Buffer.from(`${whole.slice(0, -1)},"model":"${rng.pick(jobs.jobs).model}"}`), deep: false };
      return { body: Buffer.from(`${whole.slice(0, -1)},"max_tokens":${rng.pick(['-5', '100', '0', '99999999'])}}`), deep: false };
    }
    case 'empty':
      return { body: Buffer.from(rng.pick(['', ' ', '\r\n', '\t\t'])), deep: false };
    default: {
      // Encodings the gateway does not read: a byte order mark, UTF-16.
      const whole = JSON.stringify(good);
      return { body: rng.chance(0.5) ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(whole)]) : Buffer.from(whole, 'utf16le'), deep: false };
    }
  }
}

/** A body just over (or exactly at) the 32 MiB limit, cheap to make. */
function hugeBody(job: FuzzJob, size: number): Buffer {
  const head = Buffer.from(`{"model":${JSON.stringify(job.model)},"max_tokens":1000,"messages":[{"role":"user","content":"`);
  const tail = Buffer.from('"}]}');
  return Buffer.concat([head, Buffer.alloc(size - head.length - tail.length, 0x78), tail]);
}

function credentialsOf(rng: Rng, jobs: FuzzJobs): { job: FuzzJob; credentials: Array<[string, string]> } {
  const job = weightedJob(rng, jobs);
  const other = () =>
    rng.pick([
      rng.pick(jobs.ended),
      newJobTokenLike(rng),
      KEY,
      headerText(rng, 60),
      job.token.slice(0, -1),
      `${job.token}x`,
      job.token.toUpperCase(),
      weightedJob(rng, jobs).token,
    ]);
  const token = rng.chance(0.78) ? job.token : other();
  const style = rng.weighted<string>([
    [55, 'bearer'],
    [8, 'bearer-case'],
    [5, 'bearer-spaces'],
    [10, 'x-api-key'],
    [4, 'none'],
    [3, 'basic'],
    [3, 'raw'],
    [2, 'bearer-empty'],
    [3, 'two-auth'],
    [3, 'two-api-keys'],
    [4, 'auth-and-api-key'],
  ]);
  switch (style) {
    case 'bearer':
      return { job, credentials: [['Authorization', `Bearer ${token}`]] };
    case 'bearer-case':
      return { job, credentials: [[rng.pick(['authorization', 'AUTHORIZATION']), `${rng.pick(['bearer', 'BEARER', 'BeArEr'])} ${token}`]] };
    case 'bearer-spaces':
      return { job, credentials: [['Authorization', `  Bearer ${' '.repeat(rng.int(1, 4))}${token}${'\t'.repeat(rng.int(0, 2))} `]] };
    case 'x-api-key':
      return { job, credentials: [[rng.pick(['x-api-key', 'X-Api-Key']), token]] };
    case 'none':
      return { job, credentials: [] };
    case 'basic':
      return { job, credentials: [['Authorization', `Basic ${Buffer.from(`user:${token}`).toString('base64')}`]] };
    case 'raw':
      return { job, credentials: [['Authorization', token]] };
    case 'bearer-empty':
      return {
        job,
        credentials: [
          ['Authorization', rng.pick(['Bearer', 'Bearer ', 'Bearer    '])],
          ['x-api-key', token],
        ],
      };
    case 'two-auth':
      return {
        job,
        credentials: rng.shuffle<[string, string]>([
          ['Authorization', `Bearer ${token}`],
          ['Authorization', `Bearer ${other()}`],
        ]),
      };
    case 'two-api-keys':
      return {
        job,
        credentials: [
          ['x-api-key', token],
          ['x-api-key', rng.chance(0.5) ? token : other()],
        ],
      };
    default:
      return {
        job,
        credentials: rng.shuffle<[string, string]>([
          ['Authorization', rng.chance(0.5) ? `Bearer ${other()}` : `Basic ${headerText(rng, 20)}`],
          ['x-api-key', token],
        ]),
      };
  }
}

function newJobTokenLike(rng: Rng): string {
  return `ordg-${rng.bytes(32).toString('base64url')}`;
}

function hostsOf(rng: Rng, port: number): string[] {
  if (rng.chance(0.88)) return [rng.chance(0.8) ? `127.0.0.1:${port}` : `localhost:${port}`];
  return rng.pick<string[]>([
    [`evil.example:${port}`],
    ['127.0.0.1'],
    [`127.0.0.1:${port + 1}`],
    [`LOCALHOST:${port}`],
    [`[::1]:${port}`],
    [`127.0.0.1:${port}.`],
    [`127.0.0.1:0${port}`],
    [`127.0.0.1:${port}@evil.example`],
    [''],
    [],
    [`127.0.0.1:${port}`, `evil.example:${port}`],
    [`evil.example:${port}`, `127.0.0.1:${port}`],
  ]);
}

const KINDS: ReadonlyArray<readonly [number, string]> = [
  [34, 'valid'],
  [6, 'count'],
  [8, 'model'],
  [10, 'max_tokens'],
  [5, 'thinking'],
  [7, 'json-mutated'],
  [6, 'byte-mutated'],
  [4, 'truncated'],
  [4, 'not-object'],
  [3, 'random-bytes'],
  [4, 'deep'],
  [4, 'duplicate-keys'],
  [2, 'empty'],
  [2, 'encoding'],
];
/** Case indices that send a body at or just past the 32 MiB limit. */
const HUGE_AT = new Set([11, Math.floor(REQUESTS / 4), Math.floor(REQUESTS / 2), Math.floor((3 * REQUESTS) / 4)]);

function makeCase(id: number, rng: Rng, port: number, jobs: FuzzJobs): Case {
  const kind = rng.weighted(KINDS);
  const { job, credentials } = credentialsOf(rng, jobs);
  const huge = HUGE_AT.has(id);
  const target = rng.chance(0.88) ? rng.pick(kind === 'count' ? CANONICAL_TARGETS.slice(2) : CANONICAL_TARGETS.slice(0, 2)) : rng.pick(ODD_TARGETS);
  const extra: Array<[string, string]> = [];
  if (rng.chance(0.85)) extra.push(['Content-Type', 'application/json']);
  const extras: number = rng.weighted([
    [60, 0],
    [25, 1],
    [10, 2],
    [5, 4],
  ] as const);
  for (let n = extras; n > 0; n--) extra.push(rng.pick(EXTRA_HEADERS));
  if (rng.chance(0.01)) extra.push(['X-Long', 'a'.repeat(rng.pick([4000, 20_000]))]);
  const { body, deep } = huge
    ? { body: hugeBody(id === 11 ? (jobs.jobs[2] as FuzzJob) : job, id === 11 ? MAX_BODY_BYTES : MAX_BODY_BYTES + rng.pick([1, 2, 4096])), deep: false }
    : bodyOf(rng, kind, job, jobs);
  const framing: Framing = huge
    ? rng.pick(['length', 'chunked'])
    : rng.weighted([
        [80, 'length'],
        [12, 'chunked'],
        [2, 'none'],
        [2, 'long-length'],
        [2, 'bad-chunked'],
        [2, 'double-length'],
      ] as const);
  const behavior: Behavior =
    framing === 'long-length'
      ? 'cut-body'
      : huge
        ? 'full'
        : rng.weighted([
            [78, 'full'],
            [4, 'drip'],
            [6, 'cut-body'],
            [6, 'cut-early'],
            [6, 'cut-answer'],
          ] as const);
  // A huge body comes as a plain request, for its size alone to decide; the one exactly at the limit goes to the job without a price.
  const hugeToken = id === 11 ? (jobs.jobs[2] as FuzzJob).token : rng.chance(0.5) ? rng.pick(jobs.ended) : job.token;
  return {
    id,
    kind: huge ? 'huge' : kind,
    method: huge || rng.chance(0.92) ? 'POST' : rng.pick(ODD_METHODS),
    target: huge ? '/v1/messages' : target,
    hosts: huge ? [`127.0.0.1:${port}`] : hostsOf(rng, port),
    credentials: huge ? [['Authorization', `Bearer ${hugeToken}`]] : credentials,
    extra,
    body,
    framing,
    behavior,
    upstream: rng.weighted([
      [80, 'ok'],
      [10, 'slow'],
      [5, 'error'],
      [5, 'break'],
    ] as const),
    connection: rng.weighted([
      [50, 'close'],
      [20, 'keep-alive'],
      [30, null],
    ] as const),
    deep,
  };
}

function headOf(c: Case, declared: number | null): Buffer {
  const lines = [`${c.method} ${c.target} HTTP/1.1`, ...c.hosts.map((h) => `Host: ${h}`), caseTag(c.id, c.upstream)];
  for (const [name, value] of [...c.credentials, ...c.extra]) lines.push(`${name}: ${value}`);
  if (c.framing === 'length') lines.push(`Content-Length: ${c.body.length}`);
  if (c.framing === 'long-length') lines.push(`Content-Length: ${c.body.length + (declared ?? 1)}`);
  if (c.framing === 'double-length') lines.push(`Content-Length: ${c.body.length}`, `Content-Length: ${c.body.length + 1}`);
  if (c.framing === 'chunked' || c.framing === 'bad-chunked') lines.push('Transfer-Encoding: chunked');
  if (c.connection) lines.push(`Connection: ${c.connection}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

function chunked(rng: Rng, body: Buffer, broken: boolean): Buffer {
  const parts: Buffer[] = [];
  const pieces = body.length > 1024 * 1024 ? randomChunks(rng, body, 4 * 1024 * 1024) : randomChunks(rng, body, 4096);
  const breakAt = broken ? rng.below(pieces.length + 1) : -1;
  pieces.forEach((piece, i) => {
    if (i === breakAt) parts.push(Buffer.from(rng.pick(['zz\r\n', '-1\r\n', '5\r\nab\r\n', 'ffffffffffffffffff\r\n'])));
    parts.push(Buffer.from(`${piece.length.toString(16)}${rng.chance(0.05) ? ';ext=1' : ''}\r\n`), piece, Buffer.from('\r\n'));
  });
  if (breakAt === pieces.length) parts.push(Buffer.from('g\r\n'));
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/** How the client sends the case: whole, dripped, or cut where the behaviour says. */
function planOf(c: Case, rng: Rng): Plan {
  const head = headOf(c, rng.int(1, 1000));
  const body = c.framing === 'chunked' || c.framing === 'bad-chunked' ? chunked(rng, c.body, c.framing === 'bad-chunked') : c.body;
  const wire = Buffer.concat([head, body]);
  const plan: Plan = { pieces: [], hangUpAfterMs: null, hangUpOnFirstByte: false, head: c.method === 'HEAD', timeoutMs: HANG_MS };
  switch (c.behavior) {
    case 'drip': {
      // Slowly, in up to 40 pieces: at most about half a second in all.
      const cuts = randomChunks(rng, wire, Math.max(1, Math.ceil(wire.length / rng.int(5, 40))));
      plan.pieces = cuts.map((bytes) => ({ bytes, delayMs: rng.int(0, Math.max(1, Math.floor(500 / cuts.length))) }));
      break;
    }
    case 'cut-body':
      plan.pieces = [{ bytes: wire.subarray(0, head.length + rng.below(body.length + 1)), delayMs: 0 }];
      plan.hangUpAfterMs = rng.int(0, 25);
      break;
    case 'cut-early':
      // Inside the head, or just after it: often while the token is still being looked up.
      plan.pieces = [
        { bytes: wire.subarray(0, rng.chance(0.3) ? rng.below(head.length) : head.length + rng.below(Math.min(body.length, 64) + 1)), delayMs: 0 },
      ];
      plan.hangUpAfterMs = rng.pick([0, 0, 1, 5]);
      break;
    case 'cut-answer':
      plan.pieces = [{ bytes: wire, delayMs: 0 }];
      plan.hangUpOnFirstByte = true;
      break;
    default:
      plan.pieces = wire.length > 1024 * 1024 ? randomChunks(rng, wire, 1024 * 1024).map((bytes) => ({ bytes, delayMs: 0 })) : [{ bytes: wire, delayMs: 0 }];
  }
  return plan;
}

// ---- checking what came back ------------------------------------------------------------------------

interface Stats {
  sent: number;
  byStatus: Map<string, number>;
  forwarded: number;
  lowered: number;
  refusedForBudget: number;
  bare: number;
  cut: number;
  bytesOut: number;
}

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function anthropicError(body: Buffer): { type: string; message: string } | null {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (!isRecord(value) || value.type !== 'error' || Object.keys(value).length !== 2 || !isRecord(value.error)) return null;
  const { type, message } = value.error;
  if (typeof type !== 'string' || typeof message !== 'string' || Object.keys(value.error).length !== 2) return null;
  return { type, message };
}

/** The problems with one exchange's answer, or none. */
function answerProblems(c: Sent, got: Exchange, reached: boolean, answers: Map<number, string>, stats: Stats): string[] {
  const problems: string[] = [];
  const label = `case ${c.id} (${c.kind}, ${c.method} ${JSON.stringify(c.target)}, ${c.framing}, ${c.behavior}, upstream ${c.upstream}, verdict ${c.verdict.kind === 'refuse' ? c.verdict.status : c.verdict.kind})`;
  const raw = got.raw.toString('latin1');
  if (raw.includes(KEY)) problems.push(`${label}: the answer carries the OpenRouter key`);
  for (const [, other] of raw.matchAll(MARKER)) if (Number(other) !== c.id) problems.push(`${label}: the answer carries case ${other}'s answer`);
  if (got.malformed) problems.push(`${label}: an answer that is not HTTP: ${JSON.stringify(raw.slice(0, 300))}`);
  // A broken chunk that claims more bytes than follow leaves the body unfinished: the server rightly waits for the rest
  // (its requestTimeout, 120 s, ends the wait), as it would for any slow sender.
  if (got.timedOut && c.behavior !== 'cut-answer' && c.framing !== 'bad-chunked') problems.push(`${label}: no answer and no close within ${HANG_MS} ms`);
  const answer = got.answer;
  const cut = c.behavior === 'cut-body' || c.behavior === 'cut-early' || c.behavior === 'cut-answer';
  if (!answer) {
    if (cut) stats.cut++;
    else if (c.verdict.kind === 'forward' && c.upstream === 'break') count(stats.byStatus, 'broken by upstream');
    else if (c.badFraming || !reached) count(stats.byStatus, 'closed');
    else if (c.verdict.kind === 'refuse' && c.verdict.status !== 400 && (c.behavior === 'drip' || c.bodyBytes > 64 * 1024))
      // Refused before its body was read, with Connection: close: Node closes the socket while the body still arrives, and the
      // reset that follows can take the answer with it (a known limit, not checked here).
      count(stats.byStatus, 'reset before the answer was read');
    else problems.push(`${label}: the connection closed without an answer: ${JSON.stringify(raw.slice(0, 200))}`);
    return problems;
  }
  const type = answer.headers.get('content-type')?.[0] ?? '';
  const bare = type === '' && answer.body.length === 0;
  if (bare) {
    // Node's own parser refused the bytes before the gateway saw a request (or, broken framing, mid-body).
    stats.bare++;
    count(stats.byStatus, `${answer.status} (node)`);
    if (reached && !c.badFraming) problems.push(`${label}: a bare ${answer.status} to a request the gateway took`);
    if (![400, 408, 413, 431].includes(answer.status)) problems.push(`${label}: a bare ${answer.status}`);
    return problems;
  }
  count(stats.byStatus, String(answer.status));
  const text = answer.body.toString('utf8');
  if (text.includes(marker(c.id))) {
    // OpenRouter's own answer, passed through.
    if (c.verdict.kind !== 'forward' || c.badFraming) problems.push(`${label}: OpenRouter answered a request the gateway should have refused`);
    // Byte for byte what OpenRouter sent; a stream it broke off ends with an error event of the gateway's.
    const sent = answers.get(c.id);
    if (sent !== undefined) {
      if (text !== sent) problems.push(`${label}: the answer differs from what OpenRouter sent`);
    } else if (c.upstream !== 'break') problems.push(`${label}: an answer OpenRouter did not finish sending`);
    else if (!/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"OpenRouter broke off/.test(text))
      problems.push(`${label}: a stream OpenRouter broke off does not end with an error event`);
    return problems;
  }
  if (!type.startsWith('application/json')) problems.push(`${label}: ${answer.status} with content-type ${JSON.stringify(type)}`);
  if (!reached && answer.status !== 421) problems.push(`${label}: ${answer.status} from a request the gateway never took`);
  const verdict = c.verdict;
  if (c.method === 'HEAD') {
    // The same refusal, without its body.
    if (verdict.kind !== 'refuse' || (answer.status !== verdict.status && !c.badFraming)) problems.push(`${label}: HEAD got ${answer.status}`);
    return problems;
  }
  const error = anthropicError(answer.body);
  if (!error || !ERROR_TYPES.has(error.type)) {
    problems.push(`${label}: ${answer.status} is no Anthropic error: ${JSON.stringify(text.slice(0, 300))}`);
    return problems;
  }
  if (answer.status >= 500 || answer.status < 400) problems.push(`${label}: the gateway answered ${answer.status} ${error.type}: ${error.message}`);
  if (c.badFraming) return problems;
  if (verdict.kind === 'refuse') {
    if (answer.status !== verdict.status || error.type !== verdict.type)
      problems.push(`${label}: expected ${verdict.status} ${verdict.type}, got ${answer.status} ${error.type}: ${error.message}`);
  } else {
    // count_tokens too is refused once the job's cap is spent, and past its allowance of calls.
    const billing = answer.status === 402 && error.type === 'billing_error' && verdict.job.pricing !== null;
    const countAllowance = answer.status === 403 && verdict.pathname !== '/v1/messages' && /count_tokens calls/.test(error.message);
    const tooDeep = answer.status === 400 && c.deep && /nested too deeply/.test(error.message);
    if (billing) stats.refusedForBudget++;
    if (!billing && !tooDeep && !countAllowance) problems.push(`${label}: a valid request got ${answer.status} ${error.type}: ${error.message}`);
  }
  return problems;
}

/** What OpenRouter received must be what the gateway may send: checked request by request. */
function upstreamProblems(requests: RecordedRequest[], sent: Map<number, Sent>, jobs: FuzzJobs, stats: Stats): string[] {
  const problems: string[] = [];
  const seen = new Map<number, number>();
  const tokens = [...jobs.jobs.map((j) => j.token), ...jobs.ended];
  for (const request of requests) {
    const { id } = caseOf(request.headers);
    const c = sent.get(id);
    const label = `upstream request for case ${id}`;
    if (!c) {
      problems.push(`${label}: no such case (${request.method} ${request.path})`);
      continue;
    }
    seen.set(id, (seen.get(id) ?? 0) + 1);
    if (seen.get(id) === 2) problems.push(`${label}: sent twice`);
    const verdict = c.verdict;
    if (verdict.kind !== 'forward' || c.badFraming) {
      problems.push(
        `${label} (${c.kind}): forwarded, but it should have got ${verdict.kind === 'refuse' ? `${verdict.status} ${verdict.type}` : 'no body at all'}`,
      );
      continue;
    }
    stats.forwarded++;
    const { job } = verdict;
    if (request.method !== 'POST' || request.path !== `/api${verdict.pathname}`) problems.push(`${label}: ${request.method} ${request.path}`);
    if (request.headers.authorization !== `Bearer ${KEY}`) problems.push(`${label}: authorization is ${JSON.stringify(request.headers.authorization)}`);
    for (const name of ['x-api-key', 'expect', 'cookie', 'proxy-connection', 'keep-alive', 'upgrade', 'te', 'trailer'])
      if (request.headers[name] !== undefined) problems.push(`${label}: ${name} was passed on`);
    if (request.headers['x-session-id'] !== job.sessionId) problems.push(`${label}: x-session-id ${JSON.stringify(request.headers['x-session-id'])}`);
    if (request.headers['x-title'] !== ATTRIBUTION.title || request.headers['http-referer'] !== ATTRIBUTION.url) problems.push(`${label}: not attributed`);
    const whole = `${request.path}?${JSON.stringify(request.query)} ${JSON.stringify(request.headers)} ${request.body}`;
    if (tokens.some((token) => whole.includes(token))) problems.push(`${label}: carries a job token`);
    let body: unknown;
    try {
      body = JSON.parse(request.body);
    } catch {
      problems.push(`${label}: the body is not JSON`);
      continue;
    }
    if (!isRecord(body)) {
      problems.push(`${label}: the body is no object`);
      continue;
    }
    if (body.model !== job.model) problems.push(`${label}: model ${JSON.stringify(body.model)} for a job on ${job.model}`);
    if (verdict.pathname !== '/v1/messages') continue;
    const asked = verdict.maxTokens as number;
    const maxTokens = body.max_tokens;
    if (!Number.isSafeInteger(maxTokens) || (maxTokens as number) < 1 || (maxTokens as number) > asked)
      problems.push(`${label}: max_tokens ${JSON.stringify(maxTokens)} where ${asked} was asked`);
    else if ((maxTokens as number) < asked) {
      stats.lowered++;
      if (job.pricing === null) problems.push(`${label}: max_tokens lowered for a job without a price`);
      const thinking = body.thinking;
      if (isRecord(thinking) && thinking.type === 'enabled' && typeof thinking.budget_tokens === 'number' && thinking.budget_tokens >= (maxTokens as number))
        problems.push(`${label}: thinking budget ${thinking.budget_tokens} not below the lowered max_tokens ${String(maxTokens)}`);
    }
  }
  return problems;
}

/** The request log: every entry readable by the contract, no job past its cap, no request past its own ceiling. */
function logProblems(jobs: FuzzJobs, sent: Map<number, Sent>): string[] {
  const problems: string[] = [];
  const spent = new Map<string, number>();
  for (const { jobId, entry } of jobs.entries) {
    const parsed = GatewayRequestSchema.safeParse(entry);
    if (!parsed.success) problems.push(`${jobId}: a log entry the contract cannot read back: ${JSON.stringify(entry).slice(0, 300)}`);
    spent.set(jobId, (spent.get(jobId) ?? 0) + entry.costUsd);
    const job = jobs.jobs.find((j) => j.id === jobId);
    if (job?.pricing && entry.outcome !== 'refused' && entry.costUsd > entry.ceilingUsd + 1e-9)
      problems.push(`${jobId}: a request cost ${entry.costUsd}, above its ceiling ${entry.ceilingUsd}`);
    if (entry.ceilingUsd < 0) problems.push(`${jobId}: a negative ceiling ${entry.ceilingUsd}`);
    const id = /^gen-fuzz-case-(\d+)$/.exec(entry.generationId ?? '')?.[1];
    if (entry.generationId !== null) {
      const c = id === undefined ? undefined : sent.get(Number(id));
      if (!c || c.verdict.kind !== 'forward' || c.badFraming || c.verdict.job.id !== jobId)
        problems.push(`${jobId}: a log entry for ${entry.generationId}, not one of its requests`);
    }
  }
  for (const job of jobs.jobs) {
    const total = spent.get(job.id) ?? 0;
    const own = jobs.entries.filter((e) => e.jobId === job.id);
    // Past the cap by less than one request's cost at most: only the request being decided counts at an estimate
    // (a hung-up one counts at its ceiling here, with no generation record to ask). Costs are rounded to 1e-9 each.
    const largest = Math.max(0, ...own.map((e) => e.entry.costUsd));
    if (job.pricing && total > job.maxCostUsd + largest + 1e-9 * (own.length + 1))
      problems.push(`${job.id}: metered $${total} against a cap of $${job.maxCostUsd} (its largest request: $${largest})`);
  }
  if (jobs.spentTodayUsd > jobs.dayCapUsd) problems.push(`the day: $${jobs.spentTodayUsd} against a cap of $${jobs.dayCapUsd}`);
  // Every request that went upstream was written first (pending) and then finished with the same id: the log is whole.
  const finished = new Set(jobs.entries.map((e) => e.entry.id));
  for (const id of jobs.started) if (!finished.has(id)) problems.push(`request ${id} was started in the log but never finished`);
  return problems;
}

// ---- UsageMeter ---------------------------------------------------------------------------------------

const USAGE_FIELDS = [
  ['input_tokens', 'inputTokens'],
  ['output_tokens', 'outputTokens'],
  ['cache_read_input_tokens', 'cacheReadTokens'],
  ['cache_creation_input_tokens', 'cacheWriteTokens'],
] as const;

/** A usage object: each field a figure, left out, or something that is no figure. */
function usageObject(rng: Rng): Record<string, unknown> {
  const usage: Record<string, unknown> = {};
  for (const [field] of USAGE_FIELDS) {
    const r = rng.float();
    if (r < 0.3) continue;
    if (r < 0.85) usage[field] = rng.chance(0.9) ? rng.int(0, 2_000_000) : rng.pick([0, 0.5, 1e15]);
    else usage[field] = rng.pick<unknown>([-1, null, '12', [], {}, true, -0.5]);
  }
  if (rng.chance(0.1)) usage.server_tool_use = { web_search_requests: 1 };
  return usage;
}

const TEXTS = ['héllo wörld', '中文テキスト', '😀👩‍👩‍👧', 'line\nbreak', 'tab\tand "quotes"', '\u2028\u2029', 'data: not a line', '\r\n\r\n', 'ß'.repeat(300)];

function sseEvent(rng: Rng): Record<string, unknown> {
  const r = rng.float();
  if (r < 0.12)
    return {
      type: 'message_start',
      message: {
        id: rng.chance(0.9) ? `gen-${rng.below(1e9)}` : rng.pick<unknown>([null, 5, '']),
        type: 'message',
        role: 'assistant',
        model: rng.chance(0.9) ? rng.pick(['deepseek/deepseek-v4-flash-0731', 'moonshotai/kimi-k2-0905']) : rng.pick<unknown>([null, 1, '']),
        ...(rng.chance(0.5) ? { provider: rng.pick<unknown>(['DeepInfra', 'Novita', 'Chutes', null, 7]) } : {}),
        content: [],
        stop_reason: null,
        ...(rng.chance(0.9) ? { usage: usageObject(rng) } : {}),
      },
    };
  if (r < 0.25)
    return {
      type: 'message_delta',
      delta: { stop_reason: rng.pick(['end_turn', 'tool_use', 'max_tokens']) },
      ...(rng.chance(0.9) ? { usage: usageObject(rng) } : {}),
    };
  if (r < 0.32)
    return {
      type: 'content_block_start',
      index: rng.int(0, 3),
      content_block: rng.pick<unknown>([
        { type: 'text', text: '' },
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {} },
      ]),
    };
  if (r < 0.7)
    return {
      type: 'content_block_delta',
      index: rng.int(0, 3),
      delta: rng.chance(0.7)
        ? { type: 'text_delta', text: rng.chance(0.5) ? rng.pick(TEXTS) : randomString(rng, 200) }
        : { type: 'input_json_delta', partial_json: '{"command": "ls' },
    };
  if (r < 0.78) return { type: 'content_block_stop', index: rng.int(0, 3) };
  if (r < 0.88) return { type: 'ping' };
  if (r < 0.94) return { type: 'message_stop' };
  return {
    type: 'error',
    error: rng.chance(0.8)
      ? { type: rng.pick(['overloaded_error', 'api_error']), message: rng.chance(0.2) ? 'é'.repeat(400) : randomString(rng, 80) }
      : { type: 'api_error' },
  };
}

/** The meter's answer by the documented rules, from the events alone. */
function expectedAnswer(events: Array<Record<string, unknown>>): MeteredAnswer {
  const answer: MeteredAnswer = {
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    generationId: null,
    model: null,
    provider: null,
    error: null,
  };
  const take = (usage: unknown) => {
    if (!isRecord(usage)) return;
    for (const [field, key] of USAGE_FIELDS) {
      const value = usage[field];
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) answer.usage[key] = value;
    }
  };
  for (const event of events) {
    const message = event.type === 'message' ? event : event.message;
    if (isRecord(message)) {
      if (typeof message.id === 'string') answer.generationId = message.id;
      if (typeof message.model === 'string') answer.model = message.model;
      if (typeof message.provider === 'string') answer.provider = message.provider;
      take(message.usage);
    }
    take(event.usage);
    if (event.type === 'error' && isRecord(event.error)) answer.error = typeof event.error.message === 'string' ? event.error.message.slice(0, 300) : 'error';
  }
  return answer;
}

/** Blocks between events that carry nothing: comments, lone fields, data that is no event, bytes. Each ends an event of its own. */
function garbage(rng: Rng, eol: () => string): Buffer {
  const r = rng.below(8);
  if (r === 5) {
    // Bytes of anything but a line break, as a comment: invalid UTF-8 included.
    const bytes = Buffer.from(rng.bytes(rng.size(200)).map((b) => (b === 0x0a || b === 0x0d ? 0x20 : b)));
    return Buffer.concat([Buffer.from(':'), bytes, Buffer.from(`${eol()}${eol()}`)]);
  }
  return Buffer.from(garbageText(rng, r, eol));
}

function garbageText(rng: Rng, r: number, eol: () => string): string {
  if (r === 0) return `: ${rng.pick(['OPENROUTER PROCESSING', 'keep-alive', ''])}${eol()}${eol()}`;
  if (r === 1) return `event: ${rng.pick(['ping', 'message_start', 'weird'])}${eol()}${eol()}`;
  if (r === 2) return `${rng.pick(['id: 7', 'retry: 1000', 'data', 'x-data: {}', 'DATA: {"usage":{"input_tokens":9}}'])}${eol()}${eol()}`;
  if (r === 3) return `data: ${rng.pick(['{not json', '[1,2]', '42', '"usage"', 'null', '{"type":"ping"}', '{"type":"message_start"', ''])}${eol()}${eol()}`;
  if (r === 4) return eol();
  if (r === 6) return `data: ${JSON.stringify(randomJson(rng, 2)).replace(/usage|message|provider|error|\n|\r/g, 'x')}${eol()}${eol()}`;
  return `data: {"type":"content_block_delta","delta":{"text":"${'x'.repeat(rng.int(1, 3000))}"}${eol()}${eol()}`;
}

/** A random stream and the events in it. */
function randomStream(rng: Rng): { bytes: Buffer; events: Array<Record<string, unknown>> } {
  const style = rng.pick(['\n', '\r\n', 'mixed']);
  const eol = () => (style === 'mixed' ? rng.pick(['\n', '\r\n']) : style);
  const parts: Buffer[] = [];
  const events: Array<Record<string, unknown>> = [];
  const n = rng.size(40);
  for (let i = 0; i < n; i++) {
    if (rng.chance(0.25)) parts.push(garbage(rng, eol));
    const event = sseEvent(rng);
    events.push(event);
    let text = rng.chance(0.8) ? `event: ${String(event.type)}${eol()}` : '';
    if (rng.chance(0.1)) text += `: comment inside${eol()}`;
    if (rng.chance(0.2)) {
      // One event over several data lines: joined with \n they are the pretty-printed JSON again.
      for (const line of JSON.stringify(event, null, rng.int(1, 3)).split('\n')) text += `data:${rng.chance(0.7) ? ' ' : ''}${line}${eol()}`;
    } else {
      text += `data:${rng.chance(0.9) ? ' ' : ''}${JSON.stringify(event)}${eol()}`;
    }
    if (rng.chance(0.05)) text += `id: ${i}${eol()}`;
    // The last event may end with the stream instead of a blank line.
    if (i < n - 1 || rng.chance(0.7)) text += eol();
    parts.push(Buffer.from(text, 'utf8'));
  }
  return { bytes: Buffer.concat(parts), events };
}

function meterRun(streaming: boolean, chunks: Buffer[]): { answer: MeteredAnswer; lastSeen: Usage | null } {
  let lastSeen: Usage | null = null;
  const meter = new UsageMeter(streaming, (answer) => (lastSeen = { ...answer.usage }));
  for (const chunk of chunks) meter.push(chunk);
  return { answer: meter.end(), lastSeen };
}

// ---- the suite --------------------------------------------------------------------------------------

describe('fuzz: the metering gateway', () => {
  let dir: string;
  let fake: FakeOpenRouter;
  let jobs: FuzzJobs;
  let gateway: MeteringGateway;
  let server: GatewayServer;
  const answers = new Map<number, string>();
  const reached = new Set<number>();
  const gatewayLog: string[] = [];
  const unhandled: string[] = [];
  let handledCount = 0;
  let settledCount = 0;
  const onRejection = (reason: unknown) => unhandled.push(`unhandledRejection: ${String((reason as Error)?.stack ?? reason)}`);
  const onException = (error: Error) => unhandled.push(`uncaughtException: ${error.stack ?? error.message}`);

  beforeAll(async () => {
    process.on('unhandledRejection', onRejection);
    process.on('uncaughtException', onException);
    dir = await mkdtemp(path.join(os.tmpdir(), 'ord-fuzz-gw-'));
    fake = new FakeOpenRouter();
    await fake.start();
    const route = upstreamRoute(answers);
    fake.route('POST', '/api/v1/messages', route);
    fake.route('POST', '/api/v1/messages/count_tokens', route);
    jobs = new FuzzJobs(new Rng(SEED).fork('lookups'));
    let policyCalls = 0;
    gateway = new MeteringGateway({
      jobs,
      upstream: fake.baseUrl,
      apiKey: () => KEY,
      attribution: ATTRIBUTION,
      // Now and then none: the body then goes on as the bytes that came, not written anew.
      provider: () => (policyCalls++ % 3 === 0 ? null : POLICY),
      log: (line) => gatewayLog.push(line),
    });
    server = new GatewayServer({
      handle: (req, res) => {
        reached.add(caseOf(req.headers).id);
        handledCount++;
        void gateway.handle(req, res).finally(() => settledCount++);
      },
      stateFile: path.join(dir, 'gateway.json'),
      onListening: (url) => (gateway.url = url),
    });
    await server.start();
  });

  afterAll(async () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
    await server?.stop();
    await fake?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`answers ${REQUESTS} malformed and hostile requests as it should, and forwards only what it may`, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const rng = new Rng(SEED).fork('requests');
    const port = server.port;
    const problems: string[] = [];
    const sent = new Map<number, Sent>();
    const stats: Stats = { sent: 0, byStatus: new Map(), forwarded: 0, lowered: 0, refusedForBudget: 0, bare: 0, cut: 0, bytesOut: 0 };
    const kinds = new Map<string, number>();
    const results: Array<{ c: Sent; got: Exchange }> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (;;) {
          const i = next++;
          if (i >= REQUESTS) return;
          // Each case from a stream of its own: the same case whichever worker sends it.
          const caseRng = rng.fork(`case-${i}`);
          const c = makeCase(i, caseRng, port, jobs);
          const plan = planOf(c, caseRng);
          const verdict = verdictOf(c, port, jobs);
          // Without a length, a body is read as a second request, whose refusal by Node's parser may come first.
          const badFraming = ['bad-chunked', 'double-length', 'long-length'].includes(c.framing) || (c.framing === 'none' && c.body.length > 0);
          const kept: Sent = {
            id: c.id,
            kind: c.kind,
            behavior: c.behavior,
            upstream: c.upstream,
            verdict,
            badFraming,
            deep: c.deep,
            method: c.method,
            framing: c.framing,
            target: c.target.slice(0, 60),
            bodyBytes: c.body.length,
          };
          sent.set(c.id, kept);
          count(kinds, c.kind);
          stats.bytesOut += plan.pieces.reduce((n, p) => n + p.bytes.length, 0);
          results.push({ c: kept, got: await exchange(port, plan) });
          stats.sent++;
        }
      }),
    );
    // Hung-up requests finish on the gateway's side after the client has gone: wait for every one to settle.
    const deadline = Date.now() + HANG_MS;
    while (settledCount < handledCount && Date.now() < deadline) await sleep(50);
    if (settledCount < handledCount) problems.push(`${handledCount - settledCount} of ${handledCount} requests the gateway took never settled`);

    for (const { c, got } of results) problems.push(...answerProblems(c, got, reached.has(c.id), answers, stats));
    problems.push(...upstreamProblems(fake.requests, sent, jobs, stats));
    problems.push(...logProblems(jobs, sent));
    problems.push(...unhandled, ...gatewayLog.map((line) => `the gateway logged: ${line}`));

    // Still itself afterwards: a plain valid request gets OpenRouter's answer (from the job without a price: the others may be spent).
    const job = jobs.jobs[2] as FuzzJob;
    const last = REQUESTS + 1;
    const body = JSON.stringify({ model: job.model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'still there?' }] });
    const final = await exchange(port, {
      pieces: [
        {
          bytes: Buffer.from(
            `POST /v1/messages?beta=true HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${caseTag(last, 'ok')}\r\nAuthorization: Bearer ${job.token}\r\n` +
              `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
          ),
          delayMs: 0,
        },
      ],
      hangUpAfterMs: null,
      hangUpOnFirstByte: false,
      head: false,
      timeoutMs: HANG_MS,
    });

    console.log(
      `[fuzz gateway] seed ${SEED}: ${stats.sent} requests (${(stats.bytesOut / 1024 / 1024).toFixed(1)} MiB) on ${CONCURRENCY} connections at a time; ` +
        `${stats.forwarded} reached OpenRouter (${stats.lowered} with max_tokens lowered), ${stats.refusedForBudget} refused for budget, ${stats.cut} cut by the client, ` +
        `${stats.bare} refused by Node's parser; answers: ${[...stats.byStatus]
          .sort((a, b) => b[1] - a[1])
          .map(([s, n]) => `${s} ${n}`)
          .join(', ')}; kinds: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    );
    expect(problems.slice(0, MAX_PROBLEMS), `${problems.length} problem(s); ${reproduceHint(SEED, FILE)}`).toEqual([]);
    expect(final.answer?.status).toBe(200);
    expect(final.answer?.body.toString('utf8')).toBe(answers.get(last));
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${KEY}`);
    // The run was what it claims: requests of every sort reached every stage.
    expect(stats.forwarded).toBeGreaterThan(REQUESTS / 20);
    expect(stats.lowered).toBeGreaterThan(0);
    expect(stats.refusedForBudget).toBeGreaterThan(0);
    expect(handledCount).toBeGreaterThan(REQUESTS / 2);
  }, 120_000);
});

describe('fuzz: the usage meter', () => {
  it(`reads ${STREAMS} random streams cut anywhere as their events say`, ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const rng = new Rng(SEED).fork('usage-meter');
    const problems: string[] = [];
    let bytes = 0;
    let events = 0;
    let chunks = 0;
    for (let i = 0; i < STREAMS && problems.length < MAX_PROBLEMS; i++) {
      const stream = randomStream(rng);
      const pieces = randomChunks(rng, stream.bytes, rng.pick([16, 256, 4096, 65_536]));
      bytes += stream.bytes.length;
      events += stream.events.length;
      chunks += pieces.length;
      try {
        const { answer, lastSeen } = meterRun(true, pieces);
        const want = expectedAnswer(stream.events);
        if (JSON.stringify(answer) !== JSON.stringify(want))
          problems.push(
            `stream ${i}: got ${JSON.stringify(answer)}, the events say ${JSON.stringify(want)}: ${JSON.stringify(stream.bytes.toString('latin1').slice(0, 600))}`,
          );
        if (lastSeen !== null && JSON.stringify(lastSeen) !== JSON.stringify(answer.usage))
          problems.push(`stream ${i}: the last usage reported ${JSON.stringify(lastSeen)}`);
      } catch (error) {
        problems.push(`stream ${i}: threw ${(error as Error).stack?.slice(0, 400)}`);
      }
    }
    // Non-streaming answers: one JSON body, however it is cut.
    for (let i = 0; i < STREAMS / 10 && problems.length < MAX_PROBLEMS; i++) {
      const message: Record<string, unknown> = {
        id: `gen-${i}`,
        type: 'message',
        model: 'm',
        content: [{ type: 'text', text: rng.pick(TEXTS) }],
        usage: usageObject(rng),
      };
      const body = rng.chance(0.8) ? Buffer.from(JSON.stringify(message)) : mutateBytes(rng, Buffer.from(JSON.stringify(message)));
      let want: MeteredAnswer;
      try {
        const parsed: unknown = JSON.parse(body.toString('utf8'));
        want = expectedAnswer(isRecord(parsed) ? [parsed] : []);
      } catch {
        want = expectedAnswer([]);
      }
      try {
        const { answer } = meterRun(false, randomChunks(rng, body, 64));
        if (JSON.stringify(answer) !== JSON.stringify(want)) problems.push(`body ${i}: got ${JSON.stringify(answer)}, expected ${JSON.stringify(want)}`);
      } catch (error) {
        problems.push(`body ${i}: threw ${(error as Error).stack?.slice(0, 400)}`);
      }
    }
    console.log(
      `[fuzz gateway] usage meter: ${STREAMS} streams, ${events} events, ${(bytes / 1024 / 1024).toFixed(1)} MiB in ${chunks} chunks, and ${STREAMS / 10} bodies`,
    );
    expect(problems.slice(0, MAX_PROBLEMS), `${problems.length} problem(s); ${reproduceHint(SEED, FILE)}`).toEqual([]);
  }, 60_000);

  it('keeps no more than its cap of an endless line or an endless event, and reads on after it', ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const rng = new Rng(SEED).fork('endless');
    const total = 64 * 1024 * 1024;
    const piece = 64 * 1024;
    const after = Buffer.from('\n\nevent: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":4242}}\n\n');
    const results: string[] = [];
    for (const shape of ['comment line', 'data line', 'data lines'] as const) {
      const meter = new UsageMeter(true);
      meter.push(Buffer.from('data: {"type":"message_start","message":{"id":"gen-1","usage":{"input_tokens":17}}}\n\n'));
      const before = heapMiB();
      const unit = shape === 'data lines' ? Buffer.from(`data: ${'y'.repeat(piece - 7)}\n`) : Buffer.alloc(piece, rng.chance(0.5) ? 0x78 : 0x7a);
      meter.push(Buffer.from(shape === 'comment line' ? ': ' : 'data: {"type":"message_delta","usage":{"output_tokens":1},"pad":"'));
      for (let sent = 0; sent < total; sent += piece) meter.push(unit);
      const kept = heapMiB() - before;
      meter.push(after);
      const answer = meter.end();
      results.push(`${shape} ${kept.toFixed(1)} MiB`);
      // 4 Mi characters at most, at two bytes each: well under 64 MiB.
      expect(kept, `an endless ${shape} of ${total / 1024 / 1024} MiB kept ${kept.toFixed(1)} MiB`).toBeLessThan(24);
      expect(answer.usage).toMatchObject({ inputTokens: 17, outputTokens: 4242 });
    }
    console.log(`[fuzz gateway] usage meter: 64 MiB without an event's end kept ${results.join(', ')}`);
  }, 60_000);
});

describe('fuzz: the ceiling', () => {
  it(`never lets ${DECISIONS} random requests commit more than is left, nor refuses one a useful answer would fit`, ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const rng = new Rng(SEED).fork('ceiling');
    const problems: string[] = [];
    const money = () => rng.pick([0, 0.5, 5, 20, rng.float() * 10 ** rng.int(-4, 3), rng.float()]);
    const price = () => rng.pick([0, 1e-7, 1.5e-5, 7.5e-5, rng.float() * 10 ** -rng.int(5, 9), rng.float() * 2e-4]);
    const outcomes = { full: 0, lowered: 0, refused: 0 };
    for (let i = 0; i < DECISIONS && problems.length < MAX_PROBLEMS; i++) {
      const jobCapUsd = money();
      const dayCapUsd = money();
      const standing = {
        jobCapUsd,
        jobCommittedUsd: rng.chance(0.1) ? jobCapUsd : rng.float() * jobCapUsd * 1.2,
        dayCapUsd,
        dayCommittedUsd: rng.chance(0.1) ? dayCapUsd : rng.float() * dayCapUsd * 1.2,
      };
      const prices: Prices = { promptMax: price(), output: price() };
      const promptTokens = rng.pick([0, rng.int(1, 1000), rng.int(1000, 200_000), rng.int(200_000, 11_000_000)]);
      const maxTokens = rng.chance(0.1)
        ? null
        : rng.pick([1, 1023, 1024, 1025, 4096, 32_000, 64_000, 128_000, rng.int(1, 200_000), 2 ** 31, Number.MAX_SAFE_INTEGER]);
      const input = { standing, prices, promptTokens, maxTokens };
      const decision = decide(input);
      const left = Math.min(standing.jobCapUsd - standing.jobCommittedUsd, standing.dayCapUsd - standing.dayCommittedUsd);
      const promptUsd = promptTokens * prices.promptMax;
      const say = (what: string) => problems.push(`${what}: ${JSON.stringify(input)} → ${JSON.stringify(decision)}`);
      if (decision.go) {
        const m = decision.maxTokens;
        if (maxTokens === null) {
          if (m !== null) say('a request without max_tokens was given one');
          if (promptUsd > left + 1e-9) say('a prompt that does not fit went');
          continue;
        }
        if (m === null || !Number.isInteger(m)) {
          say('go without a whole max_tokens');
          continue;
        }
        if (m > maxTokens) say('more tokens than asked');
        if (m < Math.min(maxTokens, MIN_USEFUL_OUTPUT_TOKENS)) say('fewer tokens than a useful answer');
        if (promptUsd + m * prices.output > left + 1e-9) say('committed more than is left');
        if (Math.abs(decision.ceilingUsd - (promptUsd + m * prices.output)) > 1e-9) say('a ceiling that is not the prompt and the answer');
        if (m < maxTokens !== (decision.maxTokensAsked === maxTokens) || (m === maxTokens && decision.maxTokensAsked !== null))
          say('maxTokensAsked does not say it was lowered');
        if (m < maxTokens) outcomes.lowered++;
        else outcomes.full++;
        if (m < maxTokens && promptUsd + maxTokens * prices.output <= left - 1e-9) say('lowered though the whole answer fits');
      } else {
        outcomes.refused++;
        const useful = maxTokens === null ? 0 : Math.min(maxTokens, MIN_USEFUL_OUTPUT_TOKENS);
        if (promptUsd + useful * prices.output <= left - 1e-9) say('refused though a useful answer fits');
        if (!/^(daily )?budget reached: /.test(decision.reason)) say('a refusal that does not say which budget');
      }
    }
    console.log(`[fuzz gateway] ceiling: ${DECISIONS} decisions, ${outcomes.full} whole, ${outcomes.lowered} lowered, ${outcomes.refused} refused`);
    expect(problems.slice(0, MAX_PROBLEMS), `${problems.length} problem(s); ${reproduceHint(SEED, FILE)}`).toEqual([]);
    // About 1 s alone (6.4 s while each refusal built its number formatter anew); give a loaded machine room.
  }, 180_000);

  it(`keeps the thinking budget of ${BODIES} lowered bodies below max_tokens, or drops thinking`, ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const rng = new Rng(SEED).fork('with-max-tokens');
    const problems: string[] = [];
    let dropped = 0;
    let cut = 0;
    for (let i = 0; i < BODIES && problems.length < MAX_PROBLEMS; i++) {
      const asked = rng.chance(0.8) ? rng.pick(MAX_TOKENS) : rng.int(1, 200_000);
      const body: Record<string, unknown> = { model: 'm', max_tokens: asked, messages: [{ role: 'user', content: 'hi' }] };
      if (rng.chance(0.8)) body.thinking = thinkingOf(rng, asked);
      if (rng.chance(0.3)) body.stream = true;
      const before = JSON.stringify(body);
      const m = rng.chance(0.8) ? rng.int(1, asked) : rng.int(1, 200_000);
      const out = withMaxTokens(body, m);
      const say = (what: string) => problems.push(`${what}: ${before} with ${m} → ${JSON.stringify(out)}`);
      if (JSON.stringify(body) !== before) say('the body given was changed');
      if (out.max_tokens !== m) say('max_tokens is not the one given');
      for (const key of Object.keys(body)) if (key !== 'max_tokens' && key !== 'thinking' && out[key] !== body[key]) say(`${key} changed`);
      const was = body.thinking;
      const now = out.thinking;
      const enabled = (t: unknown): t is { type: 'enabled'; budget_tokens: number } =>
        isRecord(t) && t.type === 'enabled' && typeof t.budget_tokens === 'number';
      if (enabled(was) && was.budget_tokens >= m) {
        if (now === undefined) dropped++;
        else if (!enabled(now) || now.budget_tokens >= m || now.budget_tokens < 1024) say('a thinking budget not below max_tokens, or under 1,024');
        else cut++;
        if (now === undefined && m - 1 >= 1024) say('thinking dropped where a budget of 1,024 or more fits');
      } else if (JSON.stringify(now) !== JSON.stringify(was) || (was === undefined && 'thinking' in out)) say('thinking changed though it fitted');
    }
    console.log(`[fuzz gateway] withMaxTokens: ${BODIES} bodies, ${cut} thinking budgets lowered, ${dropped} dropped`);
    expect(problems.slice(0, MAX_PROBLEMS), `${problems.length} problem(s); ${reproduceHint(SEED, FILE)}`).toEqual([]);
  }, 60_000);
});
