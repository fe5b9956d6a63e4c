/**
 * The fake's model of prompt caching behind OpenRouter (issue 12), for the scripted model
 * (fake-anthropic.ts) when a test asks for it. Two documented behaviours, nothing more:
 *
 * - OpenRouter's provider routing (its docs, "Prompt Caching → Provider Sticky Routing"): a model is
 *   served by several provider endpoints, each with its own cache. A conversation is keyed by account,
 *   model and session: the request's `session_id` (body), else its `x-session-id` header, else
 *   `prompt_cache_key`, else a hash of the first system and the first non-system message. With an explicit
 *   session the conversation sticks to the endpoint that served it after any successful request; without
 *   one, only after a request read from the cache. Stickiness ends after 10 minutes without a request.
 *   Requests that are not sticky take the endpoints in turn (round robin; OpenRouter balances load, and a
 *   fixed order keeps the tests deterministic).
 * - Anthropic's explicit caching (`cache_control` breakpoints): the prefix is tools, then system, then
 *   messages, block by block. A request reads the longest prefix cached at its endpoint that ends at a
 *   breakpoint or up to 20 blocks before one, writes the rest up to its last breakpoint, and pays plain input
 *   for what follows. Prefixes under 1,024 tokens are not cached; entries live 5 minutes from last use.
 *
 * Tokens are estimated as 4 characters each of a block's JSON (its `cache_control` left out), the same rule
 * the fake's count_tokens uses. The figures are therefore the fake's, not a tokenizer's: they compare runs
 * against each other, they do not predict a bill.
 */
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';

export const STICKY_IDLE_MS = 10 * 60_000;
const CACHE_TTL_MS = 5 * 60_000;
const LOOKBACK_BLOCKS = 20;
const MIN_CACHE_TOKENS = 1024;

export interface CacheUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** What the sim needs of a request. */
export interface CacheRequest {
  body: Record<string, unknown>;
  rawHeaders: Record<string, string | string[] | undefined>;
  bearer: string | null;
  model: string | null;
}

export interface CacheServing {
  usage: CacheUsage;
  /** Which provider endpoint served it (0-based). */
  provider: number;
  /** The conversation's routing key, and whether the client named it (session_id, x-session-id, prompt_cache_key). */
  sessionKey: string;
  explicitSession: boolean;
}

interface Segment {
  tokens: number;
  breakpoint: boolean;
  text: string;
}

const estimate = (text: string): number => Math.ceil(text.length / 4);

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A block as the cache sees it: its content, without the marker that says where a breakpoint is. */
function segmentOf(prefix: string, block: unknown): Segment {
  const fields = { ...record(block) };
  const breakpoint = fields.cache_control !== undefined;
  delete fields.cache_control;
  const text = `${prefix}${typeof block === 'string' ? block : JSON.stringify(fields)}`;
  return { tokens: estimate(text), breakpoint, text };
}

/** Tools, system, messages: the order of a cached prefix. */
export function segments(body: Record<string, unknown>): Segment[] {
  const out: Segment[] = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) out.push(segmentOf('tool:', tool));
  if (typeof body.system === 'string') out.push(segmentOf('system:', body.system));
  else for (const block of Array.isArray(body.system) ? body.system : []) out.push(segmentOf('system:', block));
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    const { role, content } = record(message);
    if (typeof content === 'string') out.push(segmentOf(`${String(role)}:`, content));
    else for (const block of Array.isArray(content) ? content : []) out.push(segmentOf(`${String(role)}:`, block));
  }
  // Automatic caching: one top-level cache_control puts the breakpoint on the last block.
  const last = out.at(-1);
  if (body.cache_control !== undefined && last) last.breakpoint = true;
  return out;
}

function header(headers: CacheRequest['rawHeaders'], name: string): string | null {
  const value = headers[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? (value[0] ?? null) : null;
}

function routingKey(request: CacheRequest): { key: string; explicit: boolean } {
  const { body } = request;
  const explicit =
    (typeof body.session_id === 'string' && body.session_id) ||
    header(request.rawHeaders, 'x-session-id') ||
    (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key) ||
    null;
  if (explicit) return { key: explicit, explicit: true };
  // Breakpoint markers move from turn to turn; the opening they mark does not.
  const unmarked = (value: unknown) => JSON.stringify(value ?? null, (name: string, v: unknown) => (name === 'cache_control' ? undefined : v));
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const first = messages.find((m) => record(m).role !== 'system');
  const digest = createHash('sha256').update(unmarked(body.system)).update(unmarked(first)).digest('hex');
  return { key: `hash:${digest.slice(0, 16)}`, explicit: false };
}

export class PromptCacheSim {
  /** Per provider endpoint: prefix hash → when the entry expires. */
  private readonly caches: Array<Map<string, number>>;
  private readonly sticky = new Map<string, { provider: number; until: number }>();
  private turn = 0;
  readonly served: CacheServing[] = [];

  constructor(
    readonly providers = 2,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(providers) || providers < 1) throw new Error('providers must be a whole number ≥ 1');
    this.caches = Array.from({ length: providers }, () => new Map<string, number>());
  }

  /** Routes a request that will be answered, and says how its prompt was paid: plain, read from cache, written to it. */
  serve(request: CacheRequest): CacheServing {
    const now = this.now();
    const { key, explicit } = routingKey(request);
    const conversation = `${request.bearer ?? ''}|${request.model ?? ''}|${key}`;
    const stuck = this.sticky.get(conversation);
    const provider = stuck && stuck.until > now ? stuck.provider : this.turn++ % this.providers;
    const cache = this.caches[provider] ?? new Map<string, number>();

    const parts = segments(request.body);
    const hash: Hash = createHash('sha256');
    const keys: string[] = [];
    const ends: number[] = [];
    let total = 0;
    for (const part of parts) {
      hash.update(part.text).update('\u0000');
      keys.push(hash.copy().digest('hex'));
      total += part.tokens;
      ends.push(total);
    }
    const breakpoints = parts.flatMap((part, i) => (part.breakpoint ? [i] : []));

    let read = 0;
    for (const b of breakpoints) {
      for (let j = b; j >= Math.max(0, b - LOOKBACK_BLOCKS); j--) {
        const expires = cache.get(keys[j] ?? '');
        if (expires !== undefined && expires > now && (ends[j] ?? 0) > read) {
          read = ends[j] ?? 0;
          cache.set(keys[j] ?? '', now + CACHE_TTL_MS);
          break;
        }
      }
    }
    const lastBreakpoint = breakpoints.at(-1);
    const cachedEnd = lastBreakpoint === undefined ? 0 : (ends[lastBreakpoint] ?? 0);
    let written = 0;
    if (cachedEnd >= MIN_CACHE_TOKENS && cachedEnd > read) {
      written = cachedEnd - read;
      for (const b of breakpoints) if ((ends[b] ?? 0) >= MIN_CACHE_TOKENS) cache.set(keys[b] ?? '', now + CACHE_TTL_MS);
    }
    if (explicit || read > 0) this.sticky.set(conversation, { provider, until: now + STICKY_IDLE_MS });

    const serving: CacheServing = {
      usage: { input_tokens: total - read - written, cache_read_input_tokens: read, cache_creation_input_tokens: written },
      provider,
      sessionKey: key,
      explicitSession: explicit,
    };
    this.served.push(serving);
    return serving;
  }
}
