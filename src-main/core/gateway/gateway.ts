/**
 * The metering gateway (docs/ARCHITECTURE.md §11): the one door every delegate request goes through. A
 * delegate's Claude Code is pointed here (`ANTHROPIC_BASE_URL`) with its job's own token
 * (`ANTHROPIC_AUTH_TOKEN`), never the OpenRouter key. For each request the gateway finds the live job the
 * token belongs to, holds it to the job's model, prices it at most and checks that against the job's cap
 * and the day's, then forwards it to OpenRouter's Messages API with the key, the attribution, the job's
 * session (sticky routing), the user's provider policy and the job's fallback models. The answer streams
 * back as it arrives, read on the way for its usage, and each request is written to the job's request log,
 * priced by the model the answer names.
 *
 * The listening socket is the host's (src-main/ipc/gateway-server.ts); this is what answers on it.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { GatewayRequest, Usage } from '../../contract/index.js';
import { errorMessage } from '../../common/errors.js';
import { formatUsd } from '../../common/format.js';
import type { CatalogPricing } from '../catalog/parse.js';
import { estimateCostUsd } from '../jobs/cost.js';
import { anthropicError, anthropicErrorEvent } from './anthropic-error.js';
import type { AnthropicErrorType } from './anthropic-error.js';
import { FIRST_TOKENS_PER_BYTE, ceilingPrices, dearestPricing, decide, promptTokensAtMost, withMaxTokens } from './ceiling.js';
import { tokenHash } from './job-token.js';
import { postUpstream } from './upstream.js';
import type { UpstreamAnswer } from './upstream.js';
import { UsageMeter } from './usage-meter.js';
import type { MeteredAnswer } from './usage-meter.js';

/** Anthropic's own limit for a Messages request. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** The paths Claude Code calls under ANTHROPIC_BASE_URL (captured from the pinned CLI: tests/e2e/gateway.test.ts). */
const FORWARDED = new Set(['/v1/messages', '/v1/messages/count_tokens']);
/** Request headers that are the connection's, or ours to set: never passed on. */
const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'content-length',
  'authorization',
  'x-api-key',
  'cookie',
  'accept-encoding',
  'http-referer',
  'x-title',
  'x-session-id',
  // node:http has answered it (100 Continue); undici refuses to send it.
  'expect',
]);
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding', 'set-cookie']);

/** What the gateway needs of the live job a token belongs to. */
export interface GatewayJob {
  id: string;
  model: string;
  sessionId: string;
  pricing: CatalogPricing | null;
  /** Models OpenRouter may serve the job's requests with when its own fails, in order (each passed the policy at admission). */
  fallbacks: Array<{ model: string; pricing: CatalogPricing }>;
  maxCostUsd: number;
  /** What the job has spent by its own stream's estimate (kept across restarts in its record). */
  estimatedCostUsd: number;
}

/** The supervisor, as the gateway sees it. */
export interface GatewayJobs {
  /** The live (running) job whose token has this hash; waits for the history to be loaded. */
  byTokenHash(hash: string): Promise<GatewayJob | null>;
  /** Spent today by every job, and the daily cap. */
  day(): { spentUsd: number; capUsd: number };
  /** Writes a request's first line (`pending`) to the job's log; resolves once it is written (or could not be). */
  requestStarted(jobId: string, entry: GatewayRequest): Promise<void>;
  /** Appends a request's last line to the job's log; `meteredUsd` is what its finished requests cost together. */
  logRequest(jobId: string, entry: GatewayRequest, meteredUsd: number): void;
  /** The job asked for more than it may spend: it ends `budget_exceeded`. */
  stopForBudget(jobId: string, reason: string): void;
}

export interface GatewayOptions {
  jobs: GatewayJobs;
  /** OpenRouter's API root, e.g. https://openrouter.ai/api (the Messages API is under /v1). */
  upstream: string;
  apiKey: () => string | null;
  /** OpenRouter said the key is no good: read it afresh next time. */
  onUnauthorized?: () => void;
  attribution: { url: string; title: string };
  /** The user's provider policy, as OpenRouter's `provider` object; null when it says nothing. */
  provider?: () => Record<string, unknown> | null;
  now?: () => number;
  log?: (line: string) => void;
}

/** Per job: what its finished requests cost, what its requests in flight may still cost, and the prompt's size per byte. */
interface JobMeter {
  finishedUsd: number;
  inFlight: Map<number, number>;
  tokensPerByte: number;
  /** tokensPerByte comes from OpenRouter's figures, not the first guess. */
  measured: boolean;
}

export class MeteringGateway {
  private readonly options: GatewayOptions;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly meters = new Map<string, JobMeter>();
  private nextRequest = 1;
  /** Where delegates reach it, once the host listens; null until then. */
  url: string | null = null;

  constructor(options: GatewayOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.log = options.log ?? (() => undefined);
  }

  /** Answers one HTTP request; settles once done with it, never rejects. Whatever a client sends gets an Anthropic-shaped answer. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    return this.serve(req, res).catch((error: unknown) => {
      this.log(`gateway: ${errorMessage(error)}`);
      fail(res, 500, 'api_error', 'The OpenRouter Delegate gateway failed on this request; it has been logged.');
    });
  }

  /** Forgets a job's meter once it has ended. */
  forget(jobId: string): void {
    this.meters.delete(jobId);
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = parseTarget(req.url ?? '/');
    if (req.method !== 'POST' || !url || !FORWARDED.has(url.pathname)) {
      const what = `${req.method ?? '?'} ${(url?.pathname ?? req.url ?? '').slice(0, 100)}`;
      afterBody(req, () => fail(res, 404, 'not_found_error', `The OpenRouter Delegate gateway serves POST /v1/messages only, not ${what}.`));
      return;
    }
    const token = bearerOf(req);
    const job = token ? await this.options.jobs.byTokenHash(tokenHash(token)) : null;
    if (!job) {
      afterBody(req, () => fail(res, 401, 'authentication_error', 'This token belongs to no running OpenRouter Delegate job (it ended, or was never issued).'));
      return;
    }
    const body = await readBody(req, MAX_BODY_BYTES);
    if (body === 'too_large') {
      afterBody(req, () => fail(res, 413, 'request_too_large', `The request is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB.`));
      return;
    }
    if (body === 'aborted') return;
    const parsed = parseObject(body);
    if (!parsed) {
      fail(res, 400, 'invalid_request_error', 'The request body is not a JSON object.');
      return;
    }
    if (parsed.model !== job.model) {
      const asked = typeof parsed.model === 'string' ? `"${parsed.model.slice(0, 100)}"` : 'no model';
      fail(res, 400, 'invalid_request_error', `This job runs on "${job.model}"; a request for ${asked} is refused.`);
      return;
    }
    // The ceiling prices the answer at max_tokens: without a whole positive one it is no bound (a negative one would even free
    // budget for the job's other requests in flight). count_tokens has none.
    if (url.pathname === '/v1/messages' && !(Number.isSafeInteger(parsed.max_tokens) && (parsed.max_tokens as number) >= 1)) {
      fail(res, 400, 'invalid_request_error', 'max_tokens must be a positive integer.');
      return;
    }
    const key = this.options.apiKey();
    if (!key) {
      fail(res, 401, 'authentication_error', 'No OpenRouter key is set in OpenRouter Delegate.');
      return;
    }
    await this.forward({ req, res, job, path: url.pathname + url.search, body, parsed, key });
  }

  private meter(job: GatewayJob): JobMeter {
    let meter = this.meters.get(job.id);
    if (!meter) {
      meter = { finishedUsd: 0, inFlight: new Map(), tokensPerByte: FIRST_TOKENS_PER_BYTE, measured: false };
      this.meters.set(job.id, meter);
    }
    return meter;
  }

  private inFlightUsd(): number {
    let total = 0;
    for (const meter of this.meters.values()) for (const usd of meter.inFlight.values()) total += usd;
    return total;
  }

  private async forward(input: {
    req: http.IncomingMessage;
    res: http.ServerResponse;
    job: GatewayJob;
    path: string;
    body: Buffer;
    parsed: Record<string, unknown>;
    key: string;
  }): Promise<void> {
    const { req, res, job, path, parsed } = input;
    const started = this.now();
    const meter = this.meter(job);
    const counting = path.startsWith('/v1/messages/count_tokens');
    const maxTokens = counting ? null : typeof parsed.max_tokens === 'number' ? parsed.max_tokens : null;
    const requestId = this.nextRequest++;
    const entry: GatewayRequest = {
      id: `${started.toString(36)}-${requestId.toString(36)}-${randomBytes(3).toString('hex')}`,
      at: new Date(started).toISOString(),
      model: job.model,
      provider: null,
      generationId: null,
      status: 0,
      outcome: 'ok',
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      costUsd: 0,
      ceilingUsd: 0,
      maxTokens,
      maxTokensAsked: null,
      firstByteMs: null,
      durationMs: 0,
      note: null,
    };
    let outgoing = parsed;
    let modified = false;
    // A fallback no cap could hold is never sent (admission keeps none; this holds whatever the job says).
    const fallbacks = job.fallbacks.filter((f) => ceilingPrices(f.pricing) !== null);
    // Capped at the dearest model that may serve it, so the cap holds whichever does.
    const prices = ceilingPrices(fallbacks.length > 0 ? dearestPricing([job.pricing, ...fallbacks.map((f) => f.pricing)]) : job.pricing);
    if (prices && !counting) {
      const spent = Math.max(job.estimatedCostUsd, meter.finishedUsd);
      const jobInFlight = [...meter.inFlight.values()].reduce((a, b) => a + b, 0);
      const day = this.options.jobs.day();
      const promptTokens = promptTokensAtMost(input.body.length, meter.tokensPerByte);
      const decision = decide({
        standing: {
          jobCapUsd: job.maxCostUsd,
          jobCommittedUsd: spent + jobInFlight,
          dayCapUsd: day.capUsd,
          dayCommittedUsd: day.spentUsd + this.inFlightUsd(),
        },
        prices,
        promptTokens,
        maxTokens,
      });
      entry.ceilingUsd = decision.ceilingUsd;
      if (!decision.go) {
        Object.assign(entry, { status: 402, outcome: 'refused', note: decision.reason, durationMs: this.now() - started });
        fail(res, 402, 'billing_error', `OpenRouter Delegate: ${decision.reason} The job ends here; its work so far is kept.`);
        this.options.jobs.logRequest(job.id, entry, meter.finishedUsd);
        this.options.jobs.stopForBudget(job.id, `Stopped before a request: ${decision.reason}`);
        return;
      }
      if (decision.maxTokensAsked !== null && decision.maxTokens !== null) {
        outgoing = withMaxTokens(outgoing, decision.maxTokens);
        modified = true;
        entry.maxTokens = decision.maxTokens;
        entry.maxTokensAsked = decision.maxTokensAsked;
      }
      meter.inFlight.set(requestId, decision.ceilingUsd);
    }
    const provider = this.options.provider?.() ?? null;
    if (!counting && (provider !== null || 'provider' in outgoing)) {
      // The user's provider policy, and only it: a delegate's own `provider` could route to dearer providers than the
      // list prices its ceiling was reckoned at (Claude Code sends none).
      const { provider: _theirs, ...rest } = outgoing;
      outgoing = provider ? { ...rest, provider } : rest;
      modified = true;
    }
    if (!counting && (fallbacks.length > 0 || 'fallbacks' in outgoing || 'models' in outgoing)) {
      // Only the user's fallbacks, as the job recorded them: models a delegate names itself passed no policy and no cap.
      const { fallbacks: _theirs, models: _theirModels, ...rest } = outgoing;
      outgoing = fallbacks.length > 0 ? { ...rest, fallbacks: fallbacks.map((f) => ({ model: f.model })) } : rest;
      modified = true;
    }
    // Unchanged, the bytes as the delegate sent them (undici takes a Buffer; its typing here does not say so).
    let payload = input.body as unknown as string;
    if (modified) {
      try {
        payload = JSON.stringify(outgoing);
      } catch {
        // Nested deeper than JSON.stringify can walk (JSON.parse has no such limit): no fault of OpenRouter's, and no use retrying.
        meter.inFlight.delete(requestId);
        fail(res, 400, 'invalid_request_error', 'The request body is nested too deeply to be forwarded.');
        return;
      }
    }
    // On disk before it goes: a request the service's own death cuts off still has its line (`pending`, read
    // back as `interrupted`), so the log stays whole.
    if (!counting) await this.options.jobs.requestStarted(job.id, { ...entry, outcome: 'pending' });
    const abort = new AbortController();
    const hungUp = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.on('close', hungUp);
    const streaming = parsed.stream === true;
    const usageMeter = new UsageMeter(streaming, (answer) => {
      // As the answer streams, what it has cost so far replaces its share of the reservation when larger.
      const cost = costOf(answer.usage, servedPricing(job, fallbacks, answer.model));
      const reserved = meter.inFlight.get(requestId);
      if (reserved !== undefined && cost > reserved) meter.inFlight.set(requestId, cost);
    });
    try {
      let upstream: UpstreamAnswer;
      try {
        upstream = await postUpstream(`${this.options.upstream}${path}`, this.upstreamHeaders(req, input.key, job), payload, abort.signal);
      } catch (error) {
        if (abort.signal.aborted) {
          Object.assign(entry, { outcome: 'aborted', note: 'the delegate hung up before OpenRouter answered' });
          return;
        }
        const problem = unreachable(error);
        Object.assign(entry, { status: 502, outcome: 'upstream_error', note: `OpenRouter could not be reached: ${problem}` });
        fail(res, 502, 'api_error', `OpenRouter could not be reached from OpenRouter Delegate: ${problem}.`);
        return;
      }
      entry.status = upstream.status;
      if (upstream.status === 401) this.options.onUnauthorized?.();
      if (upstream.status >= 400) Object.assign(entry, { outcome: 'upstream_error', note: `OpenRouter answered ${upstream.status}` });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(upstream.headers)) if (!DROPPED_RESPONSE_HEADERS.has(name)) headers[name] = value;
      res.writeHead(upstream.status, headers);
      const broken = await pipe(upstream, res, usageMeter, () => {
        entry.firstByteMs ??= this.now() - started;
      });
      const answer = usageMeter.end();
      if (broken === 'client') Object.assign(entry, { outcome: 'aborted', status: 0, note: 'the delegate hung up mid-answer' });
      else if (broken === 'upstream') {
        Object.assign(entry, { outcome: 'broken', note: 'OpenRouter broke off the answer' });
        if (streaming && !res.writableEnded) res.end(anthropicErrorEvent('api_error', 'OpenRouter broke off the answer; try again.'));
        else res.destroy();
      } else if (answer.error && entry.outcome === 'ok') Object.assign(entry, { outcome: 'upstream_error', note: answer.error });
      this.settle(entry, answer, job, fallbacks);
    } finally {
      res.off('close', hungUp);
      meter.inFlight.delete(requestId);
      entry.durationMs = this.now() - started;
      if (!counting) {
        meter.finishedUsd += entry.costUsd;
        const promptTokens = entry.usage.inputTokens + entry.usage.cacheReadTokens + entry.usage.cacheWriteTokens;
        // From now on the prompt is estimated at the largest ratio OpenRouter reported for this job.
        if (promptTokens > 0) {
          const ratio = promptTokens / input.body.length;
          meter.tokensPerByte = meter.measured ? Math.max(meter.tokensPerByte, ratio) : ratio;
          meter.measured = true;
        }
        this.options.jobs.logRequest(job.id, entry, meter.finishedUsd);
      }
    }
  }

  private settle(entry: GatewayRequest, answer: MeteredAnswer, job: GatewayJob, fallbacks: GatewayJob['fallbacks']): void {
    entry.usage = { ...answer.usage };
    entry.generationId = answer.generationId;
    entry.provider = answer.provider;
    if (answer.model) entry.model = answer.model;
    // OpenRouter prices a request by the model that served it, which its answer names.
    entry.costUsd = costOf(answer.usage, servedPricing(job, fallbacks, answer.model));
    if (entry.ceilingUsd > 0 && entry.costUsd > entry.ceilingUsd * 1.5 + 1e-6) {
      this.log(`gateway: ${job.id}: a request cost ${formatUsd(entry.costUsd)}, above its ceiling of ${formatUsd(entry.ceilingUsd)}`);
    }
  }

  private upstreamHeaders(req: http.IncomingMessage, key: string, job: GatewayJob): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || DROPPED_REQUEST_HEADERS.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    headers.authorization = `Bearer ${key}`;
    headers['http-referer'] = this.options.attribution.url;
    headers['x-title'] = this.options.attribution.title;
    // OpenRouter's sticky routing: every request of the conversation to the provider whose cache it warmed.
    headers['x-session-id'] = job.sessionId;
    // Read as it passes: the meter must see the bytes the delegate sees.
    headers['accept-encoding'] = 'identity';
    return headers;
  }
}

/**
 * The prices of the model an answer names: the job's own or one of its fallbacks. An answer that names none
 * of them (or nothing) is priced at the dearest, never below what it may have cost.
 */
function servedPricing(job: GatewayJob, fallbacks: GatewayJob['fallbacks'], model: string | null): CatalogPricing | null {
  if (fallbacks.length === 0) return job.pricing;
  const models = [{ model: job.model, pricing: job.pricing }, ...fallbacks];
  const named = model === null ? undefined : (models.find((m) => m.model === model) ?? models.find((m) => m.model.toLowerCase() === model.toLowerCase()));
  return named ? named.pricing : dearestPricing(models.map((m) => m.pricing));
}

function costOf(usage: Usage, pricing: CatalogPricing | null): number {
  return pricing ? (estimateCostUsd([usage], pricing) ?? 0) : 0;
}

/**
 * Copies the answer to the delegate as it arrives, chunk by chunk, waiting for the delegate to take each
 * one (backpressure). Says who broke off, if anyone.
 */
async function pipe(upstream: UpstreamAnswer, res: http.ServerResponse, meter: UsageMeter, onFirstByte: () => void): Promise<'client' | 'upstream' | null> {
  const body = upstream.body;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      onFirstByte();
      meter.push(chunk);
      if (res.destroyed) return 'client';
      if (!res.write(chunk)) {
        const drained = await new Promise<boolean>((resolve) => {
          const done = (ok: boolean) => {
            res.off('drain', onDrain);
            res.off('close', onClose);
            resolve(ok);
          };
          const onDrain = () => done(true);
          const onClose = () => done(false);
          res.on('drain', onDrain);
          res.on('close', onClose);
        });
        if (!drained) return 'client';
      }
    }
    // An answer cut short by OpenRouter ends its stream early, without an error, on some Node versions.
    if (!body.complete) return res.destroyed ? 'client' : 'upstream';
    res.end();
    return null;
  } catch {
    return res.destroyed ? 'client' : 'upstream';
  } finally {
    // A delegate gone mid-answer: stop reading from OpenRouter.
    if (res.destroyed) body.destroy();
  }
}

/** Why OpenRouter could not be reached, in words and with the system's code. */
function unreachable(error: unknown): string {
  const cause =
    (error as { cause?: { code?: unknown; message?: unknown }; code?: unknown } | null)?.code !== undefined
      ? (error as { code?: unknown; message?: unknown })
      : (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : null;
  const words: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    ECONNRESET: 'connection reset',
    ETIMEDOUT: 'timed out',
    UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
  };
  if (code) return `${words[code] ?? (typeof cause?.message === 'string' ? cause.message.slice(0, 200) : 'network error')} (${code})`;
  return errorMessage(error).slice(0, 200);
}

function bearerOf(req: http.IncomingMessage): string | null {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^Bearer /i.test(auth)) return auth.slice(7).trim() || null;
  const apiKey = req.headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey ? apiKey : null;
}

/**
 * Answers a request that is refused before its body is read only once the body has arrived (and been thrown
 * away): an answer sent while the client still sends is lost to the reset when the socket closes under it.
 */
function afterBody(req: http.IncomingMessage, answer: () => void): void {
  if (req.complete || req.readableEnded) {
    answer();
    return;
  }
  req.resume();
  req.once('end', answer);
}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer | 'too_large' | 'aborted'> {
  return new Promise((resolve) => {
    // Gone while its token was looked up: its 'close' has been and gone, and no 'end' will come.
    if (req.destroyed) {
      resolve('aborted');
      return;
    }
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve('too_large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (value: Buffer | 'too_large' | 'aborted') => {
      if (settled) return;
      settled = true;
      resolve(value);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.resume();
        chunks.length = 0;
        settle('too_large');
        return;
      }
      if (!settled) chunks.push(chunk);
    });
    req.on('end', () => settle(Buffer.concat(chunks)));
    req.on('error', () => settle('aborted'));
    req.on('close', () => settle('aborted'));
  });
}

/** The request-target as a URL; null when it cannot be one (an absolute form with a bad port, say). */
function parseTarget(target: string): URL | null {
  try {
    return new URL(target, 'http://gateway');
  } catch {
    return null;
  }
}

function parseObject(body: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function fail(res: http.ServerResponse, status: number, type: AnthropicErrorType, message: string): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
  res.end(anthropicError(type, message));
}
