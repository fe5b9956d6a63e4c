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
 * This file is the metering: which request may go, what it is held at, and what it cost. The HTTP plumbing is in
 * gateway-http.ts and gateway-headers.ts; a request in flight and its pricing in flight.ts. The listening socket is
 * the host's (src-main/ipc/gateway-server.ts); this is what answers on it.
 */
import type http from 'node:http';
import { OPENROUTER_UNREACHABLE } from '../../contract/index.js';
import { errorMessage } from '../../common/errors.js';
import { formatUsd } from '../../common/format.js';
import type { AnthropicErrorType } from './http/anthropic-error.js';
import { boundUsd, decide, promptTokensExpected } from './measure/ceiling.js';
import type { Decision, Prices } from './measure/ceiling.js';
import { answerCostUsd, isCounting, lowered, openFlight, sendableFallbacks, writeBody } from './flight.js';
import type { Flight } from './flight.js';
import { downstreamHeaders, upstreamHeaders } from './http/gateway-headers.js';
import { bearerOf, endBroken, fail, parseObject, parseTarget, pipe, readBody, readErrorBody, unreachable, watchHangUp } from './http/gateway-http.js';
import type { GatewayJob } from './gateway-jobs.js';
import type { GatewayOptions } from './gateway-options.js';
import { tokenHash } from './job-token.js';
import { refusalOf } from './request/request-refusal.js';
import { MAX_COUNT_TOKENS_PER_JOB, MAX_IN_FLIGHT_PER_JOB, SpendLedger } from './measure/spend-ledger.js';
import { scrubSecrets } from '../secrets/redact.js';
import { REFUSED_BODY_MS, answerAfterBody } from '../../platform/refused-body.js';
import { postUpstream } from './http/upstream.js';
import type { UpstreamAnswer } from './http/upstream.js';
import { UsageMeter } from './measure/usage-meter.js';
import type { MeteredAnswer } from './measure/usage-meter.js';

export type { GatewayJob, GatewayJobs } from './gateway-jobs.js';
export type { GatewayOptions } from './gateway-options.js';

/** Anthropic's own limit for a Messages request. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** The paths Claude Code calls under ANTHROPIC_BASE_URL (captured from the pinned CLI: tests/e2e/gateway.test.ts). */
const FORWARDED = new Set(['/v1/messages', '/v1/messages/count_tokens']);
/** A request that passed every check of its own and may now be metered. */
interface Checked {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  job: GatewayJob;
  path: string;
  parsed: Record<string, unknown>;
  key: string;
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
  /** How long a refused request's body is waited for (GatewayOptions.refusedBodyMs). */
  readonly refusedBodyMs: number;
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
    this.refusedBodyMs = options.refusedBodyMs ?? REFUSED_BODY_MS;
  }

  /** Answers one HTTP request; settles once done with it, never rejects. Whatever a client sends gets an Anthropic-shaped answer. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    return this.serve(req, res).catch((error: unknown) => {
      this.log(`gateway: ${errorMessage(error)}`);
      fail(res, 500, 'api_error', 'The OpenRouter Delegate gateway failed on this request; it has been logged.');
    });
  }

  /** Forgets a job's money once it has ended (what it still has in flight counts until it settles). */
  forget(jobId: string): void {
    this.ledger.forget(jobId);
  }

  /** Everything a request must be before it is metered: a path we serve, a live job's token, a body we can read and accept. */
  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = parseTarget(req.url ?? '/');
    if (req.method !== 'POST' || !url || !FORWARDED.has(url.pathname)) {
      const what = `${req.method ?? '?'} ${(url?.pathname ?? req.url ?? '').slice(0, 100)}`;
      answerAfterBody(
        req,
        () => this.fail(res, 404, 'not_found_error', `The OpenRouter Delegate gateway serves POST /v1/messages only, not ${what}.`),
        this.refusedBodyMs,
      );
      return;
    }
    const token = bearerOf(req);
    const job = token ? await this.options.jobs.byTokenHash(tokenHash(token)) : null;
    if (!job) {
      answerAfterBody(
        req,
        () => this.fail(res, 401, 'authentication_error', 'This token belongs to no running OpenRouter Delegate job (it ended, or was never issued).'),
        this.refusedBodyMs,
      );
      return;
    }
    this.onAuthenticated?.(req);
    const body = await readBody(req, MAX_BODY_BYTES);
    if (body === 'too_large') {
      answerAfterBody(req, () => this.fail(res, 413, 'request_too_large', `The request is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB.`));
      return;
    }
    if (body === 'aborted') return;
    const parsed = parseObject(body);
    if (!parsed) {
      this.fail(res, 400, 'invalid_request_error', 'The request body is not a JSON object.');
      return;
    }
    const refusal = refusalOf(parsed, job.model, url.pathname, () => this.options.allowServerTools?.() ?? false);
    if (refusal !== null) {
      this.fail(res, 400, 'invalid_request_error', refusal);
      return;
    }
    const key = this.options.apiKey();
    if (!key) {
      this.fail(res, 401, 'authentication_error', 'No OpenRouter key is set in OpenRouter Delegate.');
      return;
    }
    // The query Claude Code sends is `?beta=true`, and only that goes on: a delegate's own parameters never reach OpenRouter.
    const query = url.searchParams.get('beta') === 'true' ? '?beta=true' : '';
    await this.forward({ req, res, job, path: url.pathname + query, parsed, key });
  }

  /**
   * One request, metered in the order that keeps every cap:
   * 1. write: the body that goes upstream, written anew before anything is decided, so its bound is measured on
   *    every byte that will go (a lowered max_tokens is written into it later: see `lowered`);
   * 2. open: what the request is, and the prices its cost is capped at;
   * 3. admit: whether it may go, and with what max_tokens; once admitted it is held in the ledger at the most it
   *    can cost, so the job's other requests are decided with it counted;
   * 4. logPending: its first log line, on disk before it goes;
   * 5. relay: sent to OpenRouter, its answer copied back to the delegate as it arrives;
   * 6. settle: what it cost takes the place of its hold, and its last log line is written.
   * A request admitted lets go of its hold in settle or, when something of ours throws before settle is done, in
   * `finally`.
   */
  private async forward(input: Checked): Promise<void> {
    const { req, res } = input;
    const counting = isCounting(input.path);
    const fallbacks = sendableFallbacks(input.job);
    const outgoing = this.outgoing(input.parsed, counting, fallbacks);
    const written = writeBody(outgoing);
    if (written === null) {
      this.fail(res, 400, 'invalid_request_error', 'The request body is nested too deeply to be forwarded.');
      return;
    }
    const flight = openFlight({
      id: this.nextRequest++,
      started: this.now(),
      job: input.job,
      path: input.path,
      key: input.key,
      counting,
      fallbacks,
      outgoing,
      written,
    });
    const hangUp = watchHangUp(res);
    let held = false;
    try {
      const admitted = flight.counting ? this.admitCount(flight, res) : await this.admit(flight, res, hangUp.signal);
      if (!admitted) return;
      held = true;
      const payload = lowered(outgoing, written, input.parsed.max_tokens, admitted.maxTokens);
      if (!flight.counting) await this.logPending(flight);
      const relayed = await this.relay(flight, req, res, payload, hangUp.signal);
      await this.settle(flight, relayed);
      held = false;
    } finally {
      hangUp.stop();
      // A failure of our own between the hold and the settling: what may have gone counts at the most it can cost,
      // and the job's other requests are not left waiting on a hold nobody lets go of.
      if (held) this.ledger.settle(flight.job.id, flight.id, flight.boundUsd);
    }
  }

  /**
   * Whether a Messages request may go, and with what max_tokens. It waits while the job has as many requests in
   * flight as it may, and while the money held by requests in flight is all that keeps it from going whole;
   * otherwise it is decided, and a refusal answers 402 and stops the job. Null: refused, or the delegate hung up
   * while it waited.
   */
  private async admit(flight: Flight, res: http.ServerResponse, hungUp: AbortSignal): Promise<{ maxTokens: number | null } | null> {
    const { job, prices } = flight;
    const maxTokens = flight.entry.maxTokens;
    if (!prices) {
      // No list price, so no cap can hold it (admission refuses such models): it goes as asked, held at $0.
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

  /** Acts on a decision: a refusal is answered, logged and stops the job; a request let go is held at its bound. */
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
   * provider policy and the job's fallbacks; max_tokens as asked (a lowered one is written in by `lowered`).
   */
  private outgoing(parsed: Record<string, unknown>, counting: boolean, fallbacks: GatewayJob['fallbacks']): Record<string, unknown> {
    // A delegate's own `provider`, `fallbacks` or `models` passed no policy and no cap (Claude Code sends none).
    const { provider: _provider, fallbacks: _fallbacks, models: _models, ...outgoing } = parsed;
    if (counting) return outgoing;
    const provider = this.options.provider?.() ?? null;
    if (provider) outgoing.provider = provider;
    if (fallbacks.length > 0) outgoing.fallbacks = fallbacks.map((f) => ({ model: f.model }));
    return outgoing;
  }

  /**
   * The request's first log line (`pending`), on disk before it goes: a request the service's own death cuts off
   * still has its line (read back as `interrupted`), so the log stays whole.
   */
  private logPending(flight: Flight): Promise<void> {
    return this.options.jobs.requestStarted(flight.job.id, { ...flight.entry, outcome: 'pending' });
  }

  /** Sends the request to OpenRouter and copies its answer back; what goes back to the delegate never carries the key. */
  private async relay(flight: Flight, req: http.IncomingMessage, res: http.ServerResponse, payload: string, hungUp: AbortSignal): Promise<Relayed> {
    const { job, entry, key } = flight;
    const headers = upstreamHeaders(req, { key, attribution: this.options.attribution, sessionId: job.sessionId });
    let upstream: UpstreamAnswer;
    try {
      upstream = await postUpstream(`${this.options.upstream}${flight.path}`, headers, payload, hungUp);
    } catch (error) {
      return this.unanswered(flight, res, error, hungUp);
    }
    entry.status = upstream.status;
    if (upstream.status === 401) this.options.onUnauthorized?.();
    if (upstream.status < 200 || upstream.status >= 300) return this.relayError(flight, upstream, res, hungUp);
    return this.relayAnswer(flight, upstream, res);
  }

  /** OpenRouter did not answer: the delegate hung up first, or OpenRouter could not be reached (502). */
  private unanswered(flight: Flight, res: http.ServerResponse, error: unknown, hungUp: AbortSignal): Relayed {
    const { entry } = flight;
    if (hungUp.aborted) {
      Object.assign(entry, { outcome: 'aborted', note: 'the delegate hung up before OpenRouter answered' });
      return { answer: null, reachedUpstream: true, hungUp: true };
    }
    const problem = unreachable(error);
    Object.assign(entry, { status: 502, outcome: 'upstream_error', note: `OpenRouter could not be reached: ${problem}` });
    this.fail(res, 502, 'api_error', `${OPENROUTER_UNREACHABLE}: ${problem}.`);
    return { answer: null, reachedUpstream: false, hungUp: false };
  }

  /**
   * OpenRouter's error answer, passed on with its status. It is small and may quote what it was sent (a key
   * OpenRouter refused, an echoed header), so it is read whole and scrubbed of the key before it goes back.
   */
  private async relayError(flight: Flight, upstream: UpstreamAnswer, res: http.ServerResponse, hungUp: AbortSignal): Promise<Relayed> {
    const { entry, key } = flight;
    const headers = downstreamHeaders(upstream.headers, key);
    Object.assign(entry, { outcome: 'upstream_error', note: `OpenRouter answered ${upstream.status}` });
    const text = await readErrorBody(upstream);
    entry.firstByteMs = this.now() - flight.started;
    if (!res.destroyed) {
      res.writeHead(upstream.status, headers);
      res.end(scrubSecrets(text ?? '', key));
    }
    return { answer: null, reachedUpstream: true, hungUp: text === null && hungUp.aborted };
  }

  /** OpenRouter's answer, copied to the delegate as it arrives and metered on the way. */
  private async relayAnswer(flight: Flight, upstream: UpstreamAnswer, res: http.ServerResponse): Promise<Relayed> {
    const { job, entry, key } = flight;
    const usageMeter = new UsageMeter(flight.streaming, (soFar) => {
      // While the answer streams, the request is held at what it has cost so far once that passes its bound.
      this.ledger.holdAtLeast(job.id, flight.id, answerCostUsd(flight, soFar));
    });
    res.writeHead(upstream.status, downstreamHeaders(upstream.headers, key));
    const broken = await pipe(upstream, res, usageMeter, () => {
      entry.firstByteMs ??= this.now() - flight.started;
    });
    const answer = usageMeter.end();
    if (broken === 'client') Object.assign(entry, { outcome: 'aborted', status: 0, note: 'the delegate hung up mid-answer' });
    else if (broken === 'upstream') {
      Object.assign(entry, { outcome: 'broken', note: 'OpenRouter broke off the answer' });
      endBroken(res, flight.streaming);
    } else if (answer.error && entry.outcome === 'ok') Object.assign(entry, { outcome: 'upstream_error', note: scrubSecrets(answer.error, key) });
    return { answer, reachedUpstream: true, hungUp: broken !== null };
  }

  /**
   * What the request cost takes the place of its hold in the ledger; its last log line is written, and the job is
   * stopped at once if that put it past its cap.
   */
  private async settle(flight: Flight, relayed: Relayed): Promise<void> {
    const { job, entry } = flight;
    const { answer } = relayed;
    if (answer) {
      entry.usage = { ...answer.usage };
      entry.generationId = answer.generationId;
      entry.provider = answer.provider;
      if (answer.model) entry.model = answer.model;
    }
    entry.costUsd = answer ? answerCostUsd(flight, answer) : 0;
    if (relayed.hungUp && !flight.counting) await this.costCutShort(flight);
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

  /**
   * The cost of an answer cut short: a provider that cannot cancel a stream bills all of it, so it is what
   * OpenRouter's generation record says (asked while the request stays held at its bound), or its bound when there
   * is no record; never less than what was metered of it.
   */
  private async costCutShort(flight: Flight): Promise<void> {
    const { entry } = flight;
    const metered = entry.costUsd;
    const billed = entry.generationId && this.options.billedCost ? await this.options.billedCost(entry.generationId).catch(() => null) : null;
    if (billed !== null) {
      entry.costUsd = Math.max(billed, metered);
      entry.note = `${entry.note ?? 'cut short'}; cost from OpenRouter's generation record`;
    } else {
      entry.costUsd = Math.max(flight.boundUsd, metered);
      entry.note = `${entry.note ?? 'cut short'}; counted at its ceiling, the most it could have cost (OpenRouter kept no record of it)`;
    }
  }

  /** Answers with an Anthropic-shaped error, scrubbed of the key. */
  private fail(res: http.ServerResponse, status: number, type: AnthropicErrorType, message: string): void {
    fail(res, status, type, scrubSecrets(message, this.options.apiKey()));
  }
}
