/**
 * What the host gives the metering gateway (gateway.ts): the jobs, OpenRouter and its key, the user's policy, and the
 * deadlines it holds refused requests to.
 */
import type { GatewayJobs } from './gateway-jobs.js';

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
  /**
   * A request refused before its body is read (no live job's token, another path) is answered once that body is in,
   * or closed if it is still coming after this (default 1 s: a refused client cannot hold a socket by trickling one).
   */
  refusedBodyMs?: number;
  now?: () => number;
  log?: (line: string) => void;
}
