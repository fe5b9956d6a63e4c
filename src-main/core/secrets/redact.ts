/**
 * The one redaction of OpenRouter keys (SECURITY.md §2): the current key by its value, and anything shaped
 * like an OpenRouter key, replaced in whatever the service writes for others or hands out. A job's gateway token
 * (core/gateway/job-token.ts) goes the same way by its shape: a delegate's programs can read it in their box and print
 * it, and no view passes it on.
 */
import { ServiceError } from '../../contract/protocol.js';
import type { NextCall } from '../../contract/protocol.js';

export const REDACTED = '[redacted]';
/** Not inside a word: "risk-or-reward" in a model's description is no key. */
const KEY_SHAPE = /(?<![A-Za-z0-9])sk-or-[\w-]+/g;
/** A job's gateway token: `ordg-` and 32 random bytes in base64url. */
const JOB_TOKEN_SHAPE = /(?<![A-Za-z0-9])ordg-[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g;
/** A "key" shorter than this is no OpenRouter key, and replacing it by value would garble ordinary text. */
const MIN_KEY_CHARS = 8;

/** The keys to scrub by value: one, or several (the user's key and the key the service made for its delegates). */
export type ScrubKeys = string | null | undefined | readonly (string | null | undefined)[];

/** Removes the keys, and anything that looks like an OpenRouter key, from text. */
export function scrubSecrets(text: string, key?: ScrubKeys): string {
  let clean = text;
  for (const one of typeof key === 'string' || key == null ? [key] : key) {
    if (one && one.length >= MIN_KEY_CHARS) clean = clean.split(one).join(REDACTED);
  }
  return clean
    .replace(KEY_SHAPE, (found, at: number) => (isMaskedLabel(found, clean, at) ? found : `sk-or-${REDACTED}`))
    .replace(JOB_TOKEN_SHAPE, `ordg-${REDACTED}`);
}

/**
 * OpenRouter's own masked label of a key, `sk-or-v1-726...f5c`: three characters of it each side, no secret. Left as
 * it is, so the key shows one way on every surface (issue 38: "sk-or-[redacted]...f5c" beside "sk-or-v1-726...f5c").
 * Only when what precedes the dots is too short to be any key.
 */
function isMaskedLabel(found: string, text: string, at: number): boolean {
  const after = text.slice(at + found.length, at + found.length + 3);
  return /^sk-or-v\d+-[\w]{0,4}$/.test(found) && (after === '...' || after.startsWith('…'));
}

/** Whether text holds the key, or anything shaped like an OpenRouter key. */
export function holdsSecret(text: string, key?: ScrubKeys): boolean {
  return scrubSecrets(text, key) !== text;
}

/**
 * A JSON-like value (an answer, an event) with every string in it scrubbed, property names included.
 * The value itself is never changed; what holds nothing to scrub comes back as it was.
 */
export function scrubDeep<T>(value: T, key?: ScrubKeys): T {
  return scrubValue(value, key) as T;
}

function scrubValue(value: unknown, key: ScrubKeys): unknown {
  if (typeof value === 'string') return scrubSecrets(value, key);
  if (Array.isArray(value)) {
    const items = value.map((item) => scrubValue(item, key));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return value;
  let changed = false;
  const entries = Object.entries(value).map(([name, item]) => {
    const clean: [string, unknown] = [scrubSecrets(name, key), scrubValue(item, key)];
    if (clean[0] !== name || clean[1] !== item) changed = true;
    return clean;
  });
  return changed ? Object.fromEntries(entries) : value;
}

/** An error whose message (and stack) cannot carry the key; a ServiceError keeps its code. */
export function scrubError(error: unknown, key?: ScrubKeys): unknown {
  if (!(error instanceof Error)) return typeof error === 'string' ? scrubSecrets(error, key) : error;
  const message = scrubSecrets(error.message, key);
  const stack = error.stack === undefined ? undefined : scrubSecrets(error.stack, key);
  const next = error instanceof ServiceError ? scrubValue(error.next, key) : undefined;
  if (message === error.message && stack === error.stack && (!(error instanceof ServiceError) || next === error.next)) return error;
  const clean =
    error instanceof ServiceError
      ? ServiceError.fromWire({ ...error.toWire(), message, ...(next === undefined ? {} : { next: next as NextCall }) })
      : new Error(message);
  clean.stack = stack;
  return clean;
}
