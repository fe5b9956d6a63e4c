/**
 * Which headers pass through the gateway, each way (docs/ARCHITECTURE.md §11). A delegate is untrusted (any program
 * it runs holds its token), so its request headers go on to OpenRouter by an allowlist, not a drop list: only those
 * the pinned Claude Code was seen sending (OUR capture, tests/fixtures/claude/request-shapes-<version>.json, made by
 * scripts/capture-claude-requests.ts) that OpenRouter has a use for, each only with values Claude Code was seen
 * sending; then the gateway's own (the key above all). Nothing is refused for a header: what may not go is dropped.
 * tests/core/gateway/http/gateway-headers.test.ts holds these lists to the capture, so the two cannot drift apart.
 * OpenRouter's headers go back to the delegate without those of its connection, and scrubbed of the key.
 */
import type http from 'node:http';
import { scrubSecrets } from '../../secrets/redact.js';

/** What the gateway itself tells OpenRouter on every request. */
export interface OwnHeaders {
  /** The OpenRouter key. */
  key: string;
  attribution: { url: string; title: string };
  /** The job's conversation, for OpenRouter's sticky routing. */
  sessionId: string;
}

/**
 * The `anthropic-beta` values that go on: each with the capture's scenarios it was seen in and what it turns on.
 * Any other value is taken out of the header (`context-1m-2025-08-07`, say, bills a long prompt at twice the input
 * price), and a header left with none is dropped.
 */
export const ALLOWED_BETAS: ReadonlyMap<string, { seenIn: string; turnsOn: string }> = new Map([
  ['claude-code-20250219', { seenIn: 'every scenario', turnsOn: 'says the request is Claude Code’s' }],
  ['context-management-2025-06-27', { seenIn: 'every scenario', turnsOn: 'the body’s `context_management` (its clear_thinking edit)' }],
  ['effort-2025-11-24', { seenIn: 'every scenario', turnsOn: 'the body’s `output_config.effort`' }],
  ['interleaved-thinking-2025-05-14', { seenIn: 'every scenario', turnsOn: 'thinking between tool calls (the thinking scenario hands such blocks back)' }],
  ['thinking-token-count-2026-05-13', { seenIn: 'every scenario', turnsOn: 'thinking tokens counted apart in the answer’s usage' }],
  ['thinking-display-updates-2026-08-18', { seenIn: 'every scenario but thinking-off', turnsOn: 'the body’s `thinking.display`' }],
  [
    'mid-conversation-tool-changes-2026-07-01',
    { seenIn: 'every scenario but minimal (--bare)', turnsOn: 'a tool list that changes within a conversation (deferred tools loaded later)' },
  ],
  ['advanced-tool-use-2025-11-20', { seenIn: 'subagent, web', turnsOn: 'tools with `defer_loading` and `tool_reference` blocks (ToolSearch)' }],
]);

/** The `user-agent` forms Claude Code was seen sending, `#` a number: only these go on, so the header carries no free text. */
export const USER_AGENT_SHAPES: readonly string[] = ['claude-cli/#.#.# (external, sdk-cli)'];

/** A request header's value as it goes on, or null: dropped. */
type Pass = (value: string, own: OwnHeaders) => string | null;

function oneOf(values: readonly string[]): Pass {
  const allowed = new Set(values);
  return (value) => (allowed.has(value) ? value : null);
}

function shapedAs(shapes: readonly string[]): Pass {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`^(?:${shapes.map((shape) => shape.split('#').map(escape).join('\\d{1,9}')).join('|')})$`);
  return (value) => (pattern.test(value) ? value : null);
}

function allowedBetas(value: string): string | null {
  const kept = value
    .split(',')
    .map((beta) => beta.trim())
    .filter((beta) => ALLOWED_BETAS.has(beta));
  return kept.length > 0 ? kept.join(',') : null;
}

/** A request header that goes on: why OpenRouter needs it, and which of its values pass. */
interface Passed {
  why: string;
  pass: Pass;
}

/** The request headers that go on (of those Claude Code sends), each for a reason; every other header is dropped. */
const PASSED_REQUEST_HEADERS: ReadonlyMap<string, Passed> = new Map([
  ['content-type', { why: 'says the body is JSON, which OpenRouter reads it as', pass: oneOf(['application/json']) }],
  ['accept', { why: 'asks for a JSON answer (a stream is asked for in the body)', pass: oneOf(['application/json']) }],
  ['anthropic-version', { why: 'the version of the Messages API the body is written in', pass: oneOf(['2023-06-01']) }],
  ['anthropic-beta', { why: 'turns on what the body uses (context_management, effort, thinking display): the values in ALLOWED_BETAS', pass: allowedBetas }],
  [
    'user-agent',
    {
      why: 'names the client and its version, as Claude Code sent straight to OpenRouter names itself; only Claude Code’s own form',
      pass: shapedAs(USER_AGENT_SHAPES),
    },
  ],
  [
    'x-claude-code-session-id',
    {
      why: 'the conversation as Claude Code names it: the job’s session, which the gateway sends as x-session-id anyway; any other value is dropped',
      pass: (value, own) => (value === own.sessionId ? value : null),
    },
  ],
]);

/** The names of the request headers that may go on. */
export const ALLOWED_REQUEST_HEADERS: readonly string[] = [...PASSED_REQUEST_HEADERS.keys()];

/** Why each allowed request header goes on. */
export function allowedBecause(name: string): string | null {
  return PASSED_REQUEST_HEADERS.get(name)?.why ?? null;
}

/**
 * Request headers Claude Code sends (or a delegate might) that never go on, with why; `x-stainless-*` is a prefix.
 * Dropping needs no entry here (whatever is not allowed is dropped): this says why for those the capture shows.
 */
export const DROPPED_REQUEST_HEADERS: ReadonlyMap<string, string> = new Map([
  ['host', 'the connection’s own'],
  ['connection', 'the connection’s own'],
  ['content-length', 'the connection’s own: the body is framed anew'],
  ['accept-encoding', 'the gateway’s own: identity, so the meter reads the bytes the delegate gets'],
  ['authorization', 'the gateway’s own: the OpenRouter key, in place of the job’s token'],
  ['x-api-key', 'a key of the delegate’s: the gateway’s key is the only one that goes'],
  ['cookie', 'the delegate’s, not the user’s account’s'],
  ['http-referer', 'the gateway’s own: the app’s attribution'],
  ['x-title', 'the gateway’s own: the app’s attribution'],
  ['x-session-id', 'the gateway’s own: the job’s session'],
  ['x-app', 'Anthropic’s tag of the client for its own analytics; OpenRouter documents no use for it, and our attribution is http-referer and x-title'],
  [
    'anthropic-dangerous-direct-browser-access',
    'lets a web page call Anthropic’s API across origins; the gateway is no browser, so it would only widen what upstream allows',
  ],
  ['x-claude-code-agent-id', 'names a sub-agent inside Claude Code’s own session (the subagent scenario); OpenRouter documents no use for it'],
  [
    'x-stainless-*',
    'the Anthropic SDK’s description of the delegate’s machine (operating system, architecture, runtime and versions) and of its retries and timeout: no use upstream, and it tells OpenRouter about the user’s machine',
  ],
]);

/** Why a request header is dropped on purpose, or null when it is simply not allowed. */
export function droppedBecause(name: string): string | null {
  return DROPPED_REQUEST_HEADERS.get(name) ?? (name.startsWith('x-stainless-') ? (DROPPED_REQUEST_HEADERS.get('x-stainless-*') ?? null) : null);
}

/** Answer headers that belong to OpenRouter's connection (ours frames the body anew), and cookies: never passed back. */
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding', 'set-cookie']);

/** The headers a delegate's request goes to OpenRouter with: the allowed ones it sent, with allowed values, then ours. */
export function upstreamHeaders(req: http.IncomingMessage, own: OwnHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    const passed = PASSED_REQUEST_HEADERS.get(name);
    if (passed === undefined || value === undefined) continue;
    const kept = passed.pass(Array.isArray(value) ? value.join(', ') : value, own);
    if (kept !== null) headers[name] = kept;
  }
  headers.authorization = `Bearer ${own.key}`;
  headers['http-referer'] = own.attribution.url;
  headers['x-title'] = own.attribution.title;
  // OpenRouter's sticky routing: every request of the conversation to the provider whose cache it warmed.
  headers['x-session-id'] = own.sessionId;
  // Read as it passes: the meter must see the bytes the delegate sees.
  headers['accept-encoding'] = 'identity';
  return headers;
}

/** The headers OpenRouter's answer goes back to the delegate with: an echoed header could quote the key. */
export function downstreamHeaders(upstream: Record<string, string>, key: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(upstream)) if (!DROPPED_RESPONSE_HEADERS.has(name)) headers[name] = scrubSecrets(value, key);
  return headers;
}
