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
import { OPENROUTER_UNREACHABLE } from '../../contract/index.js';
import type { GatewayRequest, Usage } from '../../contract/index.js';
import { errorMessage } from '../../common/errors.js';
import { formatUsd } from '../../common/format.js';
import type { CatalogPricing } from '../catalog/parse.js';
import { estimateCostUsd } from '../catalog/cost-estimate.js';
import { anthropicErrorEvent } from './anthropic-error.js';
import type { AnthropicErrorType } from './anthropic-error.js';
import { boundUsd, ceilingPrices, dearestPricing, decide, promptTokensExpected, withMaxTokens } from './ceiling.js';
import type { Decision, Prices } from './ceiling.js';
import { measurePrompt } from './prompt-measure.js';
import { checkRequest } from './request-fields.js';
import type { PromptMeasure } from './prompt-measure.js';
import { MAX_COUNT_TOKENS_PER_JOB, MAX_IN_FLIGHT_PER_JOB, SpendLedger } from './spend-ledger.js';
import { scrubSecrets } from '../secrets/redact.js';
import { tokenHash } from './job-token.js';
import { afterBody, bearerOf, fail, parseObject, parseTarget, pipe, readBody, readCapped, unreachable } from './gateway-http.js';
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
  // Our listener answered it (100 Continue) before reading the body; the body then goes upstream whole, so OpenRouter has
  // nothing to say to it.
  'expect',
]);
/** An error answer from OpenRouter is read whole (to scrub it) up to this; the rest is dropped. */
const MAX_ERROR_BYTES = 1024 * 1024;
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
  /**
   * OpenRouter's billed cost of one generation, once its record is in (null when none came): what a request the
   * delegate hung up on really cost. Without it such a request counts at its ceiling.
   */
  billedCost?: (generationId: string) => Promise<number | null>;
  /** The user allows server tools and URL sources (billed outside token prices); read at each request. Default: no. */
  allowServerTools?: () => boolean;
  now?: () => number;
  log?: (line: string) => void;
}

/** A request on its way through the gateway: what it is, what it is held at, and its log entry as it fills in. */
interface Flight {
  /** Its key in the ledger. */
  id: number;
  job: GatewayJob;
  path: string;
  key: string;
  counting: boolean;
  started: number;
  streaming: boolean;
  fallbacks: GatewayJob['fallbacks'];
  /** Null: no list price (a router model), so no ceiling. */
  prices: Prices | null;
  prompt: PromptMeasure;
  /** What it is held at while in flight: the most it can cost. */
  boundUsd: number;
  entry: GatewayRequest;
}

/** How a relay ended: the answer as metered (null: none came), and whether the delegate left before it was whole. */
interface Relayed {
  answer: MeteredAnswer | null;
  reachedUpstream: boolean;
  hungUp: boolean;
}

export class MeteringGateway {
  private readonly options: GatewayOptions;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly ledger = new SpendLedger();
  private nextRequest = 1;
  /** Where delegates reach it, once the host listens; null until then. */
  url: string | null = null;
  /**
   * Told of each request whose token belongs to a live job, before its body is read: the listener keeps the
   * sockets of delegates apart from those of strangers (src-main/ipc/gateway-server.ts). Set by the host.
   */
  onAuthenticated: ((req: http.IncomingMessage) => void) | null = null;

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

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = parseTarget(req.url ?? '/');
    if (req.method !== 'POST' || !url || !FORWARDED.has(url.pathname)) {
      const what = `${req.method ?? '?'} ${(url?.pathname ?? req.url ?? '').slice(0, 100)}`;
      afterBody(req, () => this.fail(res, 404, 'not_found_error', `The OpenRouter Delegate gateway serves POST /v1/messages only, not ${what}.`), 1_000);
      return;
    }
    const token = bearerOf(req);
    const job = token ? await this.options.jobs.byTokenHash(tokenHash(token)) : null;
    if (!job) {
      afterBody(
        req,
        () => this.fail(res, 401, 'authentication_error', 'This token belongs to no running OpenRouter Delegate job (it ended, or was never issued).'),
        1_000,
      );
      return;
    }
    this.onAuthenticated?.(req);
    const body = await readBody(req, MAX_BODY_BYTES);
    if (body === 'too_large') {
      afterBody(req, () => this.fail(res, 413, 'request_too_large', `The request is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB.`));
      return;
    }
    if (body === 'aborted') return;
    const parsed = parseObject(body);
    if (!parsed) {
      this.fail(res, 400, 'invalid_request_error', 'The request body is not a JSON object.');
      return;
    }
    if (parsed.model !== job.model) {
      const asked = typeof parsed.model === 'string' ? `"${parsed.model.slice(0, 100)}"` : 'no model';
      this.fail(res, 400, 'invalid_request_error', `This job runs on "${job.model}"; a request for ${asked} is refused.`);
      return;
    }
    // The ceiling prices the answer at max_tokens: without a whole positive one it is no bound (a negative one would even free
    // budget for the job's other requests in flight). count_tokens has none.
    if (url.pathname === '/v1/messages' && !(Number.isSafeInteger(parsed.max_tokens) && (parsed.max_tokens as number) >= 1)) {
      this.fail(res, 400, 'invalid_request_error', 'max_tokens must be a positive integer.');
      return;
    }
    // Only what Claude Code sends: a field or block that buys something outside token prices never goes.
    const allowed = this.options.allowServerTools?.() ?? false;
    const refusal = checkRequest(parsed, { counting: url.pathname !== '/v1/messages', allow: { serverTools: allowed, urlSources: allowed } });
    if (refusal) {
      this.fail(res, 400, 'invalid_request_error', refusal.message);
      return;
    }
    const key = this.options.apiKey();
    if (!key) {
      this.fail(res, 401, 'authentication_error', 'No OpenRouter key is set in OpenRouter Delegate.');
      return;
    }
    await this.forward({ req, res, job, path: url.pathname + url.search, parsed, key });
  }

  /** Forgets a job's money once it has ended (what it still has in flight counts until it settles). */
  forget(jobId: string): void {
    this.ledger.forget(jobId);
  }

  /**
   * One request, in the order that keeps every cap: what it is, whether (and with what max_tokens) it may go,
   * the body rewritten to the user's policy, its first log line, the relay, and what it cost.
   */
  private async forward(input: {
    req: http.IncomingMessage;
    res: http.ServerResponse;
    job: GatewayJob;
    path: string;
    parsed: Record<string, unknown>;
    key: string;
  }): Promise<void> {
    const { req, res } = input;
    const flight = this.open(input.job, input.path, input.parsed, input.key);
    const hangUp = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) hangUp.abort();
    };
    res.on('close', onClose);
    let held = false;
    try {
      const admitted = flight.counting ? this.admitCount(flight, res) : await this.admit(flight, res, hangUp.signal);
      if (!admitted) return;
      held = true;
      const payload = this.rewrite(flight, input.parsed, admitted.maxTokens);
      if (payload === null) {
        held = false;
        this.ledger.settle(flight.job.id, flight.id, 0);
        this.fail(res, 400, 'invalid_request_error', 'The request body is nested too deeply to be forwarded.');
        return;
      }
      // On disk before it goes: a request the service's own death cuts off still has its line (`pending`, read
      // back as `interrupted`), so the log stays whole.
      if (!flight.counting) await this.options.jobs.requestStarted(flight.job.id, { ...flight.entry, outcome: 'pending' });
      const relayed = await this.relay(flight, req, res, payload, hangUp.signal);
      await this.close(flight, relayed);
      held = false;
    } finally {
      res.off('close', onClose);
      // A failure of our own between the hold and the relay's end: what may have gone counts at the most it can cost,
      // and the job's other requests are not left waiting on a hold nobody settles.
      if (held) this.ledger.settle(flight.job.id, flight.id, flight.boundUsd);
    }
  }

  /** A request's entry, prices and prompt, before anything is decided. */
  private open(job: GatewayJob, path: string, parsed: Record<string, unknown>, key: string): Flight {
    const started = this.now();
    const counting = path.startsWith('/v1/messages/count_tokens');
    const id = this.nextRequest++;
    // A fallback no cap could hold is never sent (admission keeps none; this holds whatever the job says).
    const fallbacks = job.fallbacks.filter((f) => ceilingPrices(f.pricing) !== null);
    const maxTokens = counting ? null : (parsed.max_tokens as number);
    return {
      id,
      job,
      path,
      key,
      counting,
      started,
      streaming: parsed.stream === true,
      fallbacks,
      // Capped at the dearest model that may serve it, so the cap holds whichever does.
      prices: ceilingPrices(fallbacks.length > 0 ? dearestPricing([job.pricing, ...fallbacks.map((f) => f.pricing)]) : job.pricing),
      prompt: measurePrompt(parsed),
      boundUsd: 0,
      entry: {
        id: `${started.toString(36)}-${id.toString(36)}-${randomBytes(3).toString('hex')}`,
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
        note: counting ? 'count_tokens' : null,
      },
    };
  }

  /**
   * Whether a Messages request may go, and with what max_tokens: it waits while the job has as many requests in
   * flight as it may, and while money held by requests in flight is what keeps it from going whole; otherwise it
   * is decided, and a refusal answers 402 and stops the job. Null: refused, or the delegate hung up while waiting.
   */
  private async admit(flight: Flight, res: http.ServerResponse, hungUp: AbortSignal): Promise<{ maxTokens: number | null } | null> {
    const { job, prices } = flight;
    const maxTokens = flight.entry.maxTokens;
    if (!prices) {
      // No list price, no cap to hold it to (admission refuses such models): it goes as asked, held at nothing.
      this.ledger.hold(job.id, flight.id, 0);
      return { maxTokens };
    }
    for (;;) {
      if (hungUp.aborted) return null;
      if (this.ledger.inFlight(job.id) < MAX_IN_FLIGHT_PER_JOB) {
        const { decision, dayBinds } = this.decide(flight, prices, maxTokens);
        const whole = decision.go && decision.maxTokensAsked === null;
        const waitFor = dayBinds ? this.ledger.anyInFlight() : this.ledger.inFlight(job.id) > 0;
        if (whole || !waitFor) return this.decided(flight, prices, decision, res);
      }
      await this.ledger.changed(hungUp);
    }
  }

  /** The decision on the money as it stands: the job's finished spend and what its requests in flight are held at. */
  private decide(flight: Flight, prices: Prices, maxTokens: number | null): { decision: Decision; dayBinds: boolean } {
    const { job } = flight;
    const day = this.options.jobs.day();
    const standing = {
      jobCapUsd: job.maxCostUsd,
      jobCommittedUsd: Math.max(job.estimatedCostUsd, this.ledger.finishedUsd(job.id)) + this.ledger.heldUsd(job.id),
      dayCapUsd: day.capUsd,
      dayCommittedUsd: day.spentUsd + this.ledger.heldTodayUsd(),
    };
    const promptTokens = promptTokensExpected(flight.prompt, this.ledger.tokensPerTextByte(job.id));
    const decision = decide({ standing, prices, promptTokens, maxTokens });
    return { decision, dayBinds: standing.dayCapUsd - standing.dayCommittedUsd < standing.jobCapUsd - standing.jobCommittedUsd };
  }

  private decided(flight: Flight, prices: Prices, decision: Decision, res: http.ServerResponse): { maxTokens: number | null } | null {
    const { job, entry } = flight;
    entry.ceilingUsd = decision.ceilingUsd;
    if (!decision.go) {
      Object.assign(entry, { status: 402, outcome: 'refused', note: decision.reason, durationMs: this.now() - flight.started });
      this.fail(res, 402, 'billing_error', `OpenRouter Delegate: ${decision.reason} The job ends here; its work so far is kept.`);
      this.options.jobs.logRequest(job.id, entry, this.ledger.finishedUsd(job.id));
      this.options.jobs.stopForBudget(job.id, `Stopped before a request: ${decision.reason}`);
      return null;
    }
    if (decision.maxTokensAsked !== null) {
      entry.maxTokens = decision.maxTokens;
      entry.maxTokensAsked = decision.maxTokensAsked;
    }
    flight.boundUsd = boundUsd(flight.prompt, prices, entry.maxTokens);
    // Logged as its ceiling: what it was let through on is an estimate; what it can cost at most is this.
    entry.ceilingUsd = flight.boundUsd;
    this.ledger.hold(job.id, flight.id, flight.boundUsd);
    return { maxTokens: entry.maxTokens };
  }

  /** count_tokens: free, but only for a job within its cap and its allowance of such calls. */
  private admitCount(flight: Flight, res: http.ServerResponse): { maxTokens: null } | null {
    const { job, entry } = flight;
    const spent = Math.max(job.estimatedCostUsd, this.ledger.finishedUsd(job.id)) + this.ledger.heldUsd(job.id);
    const refuse = (status: number, type: AnthropicErrorType, reason: string) => {
      Object.assign(entry, { status, outcome: 'refused', note: `count_tokens: ${reason}`, durationMs: this.now() - flight.started });
      this.fail(res, status, type, `OpenRouter Delegate: ${reason}`);
      this.options.jobs.logRequest(job.id, entry, this.ledger.finishedUsd(job.id));
    };
    if (spent >= job.maxCostUsd) {
      refuse(402, 'billing_error', `budget reached: ${formatUsd(spent)} of the job's ${formatUsd(job.maxCostUsd)} spent or committed.`);
      this.options.jobs.stopForBudget(job.id, 'Stopped at a count_tokens call: the budget was reached.');
      return null;
    }
    if (!this.ledger.countTokens(job.id)) {
      refuse(403, 'permission_error', `this job has made its ${MAX_COUNT_TOKENS_PER_JOB} count_tokens calls.`);
      return null;
    }
    this.ledger.hold(job.id, flight.id, 0);
    return { maxTokens: null };
  }

  /**
   * The body that goes upstream, always written anew from what was parsed and checked: the bytes a delegate sent
   * could say two things at once (a key twice, the last one read here and the first one there). Only the user's
   * provider policy and fallbacks; max_tokens as decided. Null: nested deeper than JSON.stringify walks.
   */
  private rewrite(flight: Flight, parsed: Record<string, unknown>, maxTokens: number | null): string | null {
    // A delegate's own `provider`, `fallbacks` or `models` passed no policy and no cap (Claude Code sends none).
    const { provider: _provider, fallbacks: _fallbacks, models: _models, ...rest } = parsed;
    let outgoing: Record<string, unknown> = rest;
    if (!flight.counting) {
      const provider = this.options.provider?.() ?? null;
      if (provider) outgoing.provider = provider;
      if (flight.fallbacks.length > 0) outgoing.fallbacks = flight.fallbacks.map((f) => ({ model: f.model }));
      if (maxTokens !== null && maxTokens !== parsed.max_tokens) outgoing = withMaxTokens(outgoing, maxTokens);
    }
    try {
      return JSON.stringify(outgoing);
    } catch {
      return null;
    }
  }

  /** Sends the request and copies the answer back; an error answer's body and every header relayed lose the key. */
  private async relay(flight: Flight, req: http.IncomingMessage, res: http.ServerResponse, payload: string, hungUp: AbortSignal): Promise<Relayed> {
    const { job, entry, key } = flight;
    const usageMeter = new UsageMeter(flight.streaming, (answer) => {
      // As the answer streams, what it has cost so far holds the request when that is more than its bound.
      this.ledger.holdAtLeast(job.id, flight.id, costOf(answer.usage, servedPricing(job, flight.fallbacks, answer.model)));
    });
    let upstream: UpstreamAnswer;
    try {
      upstream = await postUpstream(`${this.options.upstream}${flight.path}`, this.upstreamHeaders(req, key, job), payload, hungUp);
    } catch (error) {
      if (hungUp.aborted) {
        Object.assign(entry, { outcome: 'aborted', note: 'the delegate hung up before OpenRouter answered' });
        return { answer: null, reachedUpstream: true, hungUp: true };
      }
      const problem = unreachable(error);
      Object.assign(entry, { status: 502, outcome: 'upstream_error', note: `OpenRouter could not be reached: ${problem}` });
      this.fail(res, 502, 'api_error', `${OPENROUTER_UNREACHABLE}: ${problem}.`);
      return { answer: null, reachedUpstream: false, hungUp: false };
    }
    entry.status = upstream.status;
    if (upstream.status === 401) this.options.onUnauthorized?.();
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(upstream.headers)) if (!DROPPED_RESPONSE_HEADERS.has(name)) headers[name] = scrubSecrets(value, key);
    if (upstream.status < 200 || upstream.status >= 300) {
      // An error is small and may quote what it was sent (a key OpenRouter refused, an echoed header): read whole, scrubbed.
      Object.assign(entry, { outcome: 'upstream_error', note: `OpenRouter answered ${upstream.status}` });
      const text = await readCapped(upstream.body, MAX_ERROR_BYTES);
      entry.firstByteMs = this.now() - flight.started;
      if (!res.destroyed) {
        res.writeHead(upstream.status, headers);
        res.end(scrubSecrets(text ?? '', key));
      }
      return { answer: null, reachedUpstream: true, hungUp: text === null && hungUp.aborted };
    }
    res.writeHead(upstream.status, headers);
    const broken = await pipe(upstream, res, usageMeter, () => {
      entry.firstByteMs ??= this.now() - flight.started;
    });
    const answer = usageMeter.end();
    if (broken === 'client') Object.assign(entry, { outcome: 'aborted', status: 0, note: 'the delegate hung up mid-answer' });
    else if (broken === 'upstream') {
      Object.assign(entry, { outcome: 'broken', note: 'OpenRouter broke off the answer' });
      if (flight.streaming && !res.writableEnded) res.end(anthropicErrorEvent('api_error', 'OpenRouter broke off the answer; try again.'));
      else res.destroy();
    } else if (answer.error && entry.outcome === 'ok') Object.assign(entry, { outcome: 'upstream_error', note: scrubSecrets(answer.error, key) });
    return { answer, reachedUpstream: true, hungUp: broken !== null };
  }

  /**
   * What the request cost, its last log line, and the job stopped at once if that put it past its cap. An answer
   * cut short is paid for: a provider that cannot cancel a stream bills all of it, so its cost is OpenRouter's
   * generation record (asked while the request stays held at its bound), or its bound when there is none.
   */
  private async close(flight: Flight, relayed: Relayed): Promise<void> {
    const { job, entry } = flight;
    const { answer } = relayed;
    if (answer) {
      entry.usage = { ...answer.usage };
      entry.generationId = answer.generationId;
      entry.provider = answer.provider;
      if (answer.model) entry.model = answer.model;
    }
    // OpenRouter prices a request by the model that served it, which its answer names.
    const metered = answer ? costOf(answer.usage, servedPricing(job, flight.fallbacks, answer.model)) : 0;
    entry.costUsd = metered;
    if (relayed.hungUp && !flight.counting) {
      const billed = entry.generationId && this.options.billedCost ? await this.options.billedCost(entry.generationId).catch(() => null) : null;
      if (billed !== null) {
        entry.costUsd = Math.max(billed, metered);
        entry.note = `${entry.note ?? 'cut short'}; cost from OpenRouter's generation record`;
      } else {
        entry.costUsd = Math.max(flight.boundUsd, metered);
        entry.note = `${entry.note ?? 'cut short'}; counted at its ceiling, the most it could have cost (OpenRouter kept no record of it)`;
      }
    }
    if (entry.ceilingUsd > 0 && entry.costUsd > entry.ceilingUsd * 1.5 + 1e-6) {
      this.log(`gateway: ${job.id}: a request cost ${formatUsd(entry.costUsd)}, above its ceiling of ${formatUsd(entry.ceilingUsd)}`);
    }
    entry.durationMs = this.now() - flight.started;
    const finished = this.ledger.settle(job.id, flight.id, entry.costUsd);
    if (answer && !relayed.hungUp) {
      this.ledger.measured(job.id, answer.usage.inputTokens + answer.usage.cacheReadTokens + answer.usage.cacheWriteTokens, flight.prompt.textBytes);
    }
    this.options.jobs.logRequest(job.id, entry, finished);
    const spent = Math.max(job.estimatedCostUsd, finished);
    if (spent > job.maxCostUsd + 1e-12) {
      this.options.jobs.stopForBudget(job.id, `Stopped: its requests have cost ${formatUsd(spent)}, past the job's ${formatUsd(job.maxCostUsd)} cap.`);
    }
  }

  private fail(res: http.ServerResponse, status: number, type: AnthropicErrorType, message: string): void {
    fail(res, status, type, scrubSecrets(message, this.options.apiKey()));
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
