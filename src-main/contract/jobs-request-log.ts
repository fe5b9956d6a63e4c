/**
 * A job's request log (docs/ARCHITECTURE.md §11): one line per request its delegate made through the metering
 * gateway, as `requests.jsonl` keeps it; and the words the gateway uses when OpenRouter cannot be reached.
 */
import { z } from 'zod';
import { UsageSchema } from './jobs-record.js';

/**
 * One request a delegate made through the service's metering gateway (docs/ARCHITECTURE.md §11), as the
 * job's request log keeps it: what was asked, what OpenRouter answered, what it cost by the list prices.
 */
export const GatewayRequestSchema = z.object({
  /** Its own id: the line written when it starts and the one written when it ends share it (the last wins). */
  id: z.string(),
  at: z.string(),
  /** The model OpenRouter says served it: the job's model, or one of its fallbacks when that failed. */
  model: z.string(),
  /** The provider, when OpenRouter names it. */
  provider: z.string().nullable(),
  /** OpenRouter's generation id (`gen-…`), when it answered with one. */
  generationId: z.string().nullable(),
  /** HTTP status returned to the delegate; 0 when the delegate hung up first. */
  status: z.number().int(),
  /**
   * `ok`, or why not: refused by a cap, an upstream error, the delegate or OpenRouter breaking off. `pending`:
   * under way; `interrupted`: the service itself stopped before it ended (its delegate retried it).
   */
  outcome: z.enum(['ok', 'refused', 'upstream_error', 'aborted', 'broken', 'pending', 'interrupted']),
  usage: UsageSchema,
  costUsd: z.number(),
  /** The most the request could have cost when it was let through (its input and max_tokens at list prices). */
  ceilingUsd: z.number(),
  /** max_tokens as sent upstream; `maxTokensAsked` when the gateway lowered it to stay under a cap. */
  maxTokens: z.number().int().nullable(),
  maxTokensAsked: z.number().int().nullable(),
  firstByteMs: z.number().nullable(),
  durationMs: z.number(),
  /** A short reason for anything but `ok` (never the key). */
  note: z.string().nullable(),
});
export type GatewayRequest = z.infer<typeof GatewayRequestSchema>;

/**
 * What the metering gateway tells a delegate when OpenRouter itself cannot be reached (refused, not found, timed out):
 * how a job's end tells that apart from a provider's own 502 (core/jobs/supervisor/job-outcome.ts).
 */
export const OPENROUTER_UNREACHABLE = 'OpenRouter could not be reached from OpenRouter Delegate';
