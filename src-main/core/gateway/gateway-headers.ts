/**
 * Which headers pass through the gateway, each way (docs/ARCHITECTURE.md §11). A delegate's headers go on to
 * OpenRouter without those that belong to its connection or that the gateway sets itself (the key above all);
 * OpenRouter's go back to the delegate without those of its connection, and scrubbed of the key.
 */
import type http from 'node:http';
import { scrubSecrets } from '../secrets/redact.js';

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
/** Answer headers that belong to OpenRouter's connection (ours frames the body anew), and cookies: never passed back. */
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding', 'set-cookie']);

/** What the gateway itself tells OpenRouter on every request. */
export interface OwnHeaders {
  /** The OpenRouter key. */
  key: string;
  attribution: { url: string; title: string };
  /** The job's conversation, for OpenRouter's sticky routing. */
  sessionId: string;
}

/** The headers a delegate's request goes to OpenRouter with. */
export function upstreamHeaders(req: http.IncomingMessage, own: OwnHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || DROPPED_REQUEST_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
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
