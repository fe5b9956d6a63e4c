/**
 * A request on its way through the metering gateway (docs/ARCHITECTURE.md §11): what it is, the prices it is capped
 * at, what it is held at while in flight, and its request-log entry as it fills in; and how its answer is priced.
 */
import { randomBytes } from 'node:crypto';
import type { GatewayRequest } from '../../contract/index.js';
import type { CatalogPricing } from '../catalog/parse.js';
import { estimateCostUsd } from '../catalog/cost-estimate.js';
import { ceilingPrices, dearestPricing, withMaxTokens } from './measure/ceiling.js';
import type { Prices } from './measure/ceiling.js';
import type { GatewayJob } from './gateway-jobs.js';
import { measurePrompt } from './measure/prompt-measure.js';
import type { PromptMeasure } from './measure/prompt-measure.js';
import type { MeteredAnswer } from './measure/usage-meter.js';

export interface Flight {
  /** Its key in the ledger. */
  id: number;
  job: GatewayJob;
  /** The path and query it goes upstream to. */
  path: string;
  /** The OpenRouter key it goes with. */
  key: string;
  /** A count_tokens call: free, so held at $0, sent without the policy or fallbacks, and not logged as `pending`. */
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

/** What a request is made of when its flight opens: the body it will send, written. */
export interface FlightInput {
  id: number;
  started: number;
  job: GatewayJob;
  path: string;
  key: string;
  counting: boolean;
  fallbacks: GatewayJob['fallbacks'];
  /** The body as it goes upstream (writeBody), and the object it was written from. */
  outgoing: Record<string, unknown>;
  written: WrittenBody;
}

/** A body as it goes upstream: its JSON, and that JSON's length in UTF-8 bytes. */
export interface WrittenBody {
  json: string;
  bytes: number;
  /** Its `tools` as written, in UTF-8 bytes (null: none): the measure reads the tools' length here rather than writing them again. */
  toolsBytes: number | null;
}

/** count_tokens rather than a message. */
export function isCounting(path: string): boolean {
  return path.startsWith('/v1/messages/count_tokens');
}

/** The job's fallbacks that may be sent: a fallback no cap could hold is never sent (admission keeps none; this holds whatever the job says). */
export function sendableFallbacks(job: GatewayJob): GatewayJob['fallbacks'] {
  return job.fallbacks.filter((f) => ceilingPrices(f.pricing) !== null);
}

/**
 * The body's JSON as it goes upstream; null when it is nested deeper than JSON.stringify walks. Written a field at a
 * time, which is what JSON.stringify of the whole object writes (its keys in the same order, a field whose value has
 * no JSON left out), so the tools' length is known without writing them twice. It stays a string: the socket encodes
 * it as it writes, and no Buffer of the whole body is made.
 */
export function writeBody(outgoing: Record<string, unknown>): WrittenBody | null {
  try {
    const fields: string[] = [];
    let toolsBytes: number | null = null;
    for (const key of Object.keys(outgoing)) {
      const value: string | undefined = JSON.stringify(outgoing[key]);
      if (value === undefined) continue;
      fields.push(`${JSON.stringify(key)}:${value}`);
      if (key === 'tools') toolsBytes = Buffer.byteLength(value, 'utf8');
    }
    const json = `{${fields.join(',')}}`;
    return { json, bytes: Buffer.byteLength(json, 'utf8'), toolsBytes };
  } catch {
    return null;
  }
}

/**
 * The body with max_tokens as admitted. A lowered max_tokens is written into the object the bound was measured on,
 * and the body can only get shorter: a smaller whole number has no more digits, and the extended-thinking budget, a
 * whole number too (request-refusal.ts), is lowered below it or dropped (withMaxTokens). So the bound measured on
 * `written` still covers every byte that goes.
 */
export function lowered(outgoing: Record<string, unknown>, written: WrittenBody, asked: unknown, maxTokens: number | null): string {
  if (maxTokens === null || maxTokens === asked) return written.json;
  return JSON.stringify(withMaxTokens(outgoing, maxTokens));
}

/** A request's flight before anything is decided: its prices, its prompt measured on the body it will send, and its log entry. */
export function openFlight(input: FlightInput): Flight {
  const { id, started, job, path, key, counting, fallbacks, outgoing, written } = input;
  const maxTokens = counting ? null : (outgoing.max_tokens as number);
  return {
    id,
    job,
    path,
    key,
    counting,
    started,
    streaming: outgoing.stream === true,
    fallbacks,
    // Capped at the dearest model that may serve it, so the cap holds whichever does.
    prices: ceilingPrices(fallbacks.length > 0 ? dearestPricing([job.pricing, ...fallbacks.map((f) => f.pricing)]) : job.pricing),
    prompt: measurePrompt(outgoing, written.bytes, written.toolsBytes),
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

/** What an answer (or the part of it read so far) costs: OpenRouter prices a request by the model that served it, which its answer names. */
export function answerCostUsd(flight: Flight, answer: MeteredAnswer): number {
  const pricing = servedPricing(flight.job, flight.fallbacks, answer.model);
  return pricing ? (estimateCostUsd([answer.usage], pricing) ?? 0) : 0;
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
