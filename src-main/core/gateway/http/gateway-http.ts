/**
 * The gateway's HTTP plumbing (docs/ARCHITECTURE.md §11): reading a request's body within its limit, telling when
 * the delegate hangs up, copying an answer on with backpressure, reading an error answer and ending a broken one,
 * and the small parsers around them. Nothing here knows about jobs or money; gateway.ts does. Which headers pass
 * each way is gateway-headers.ts; answering a refused request without losing the answer to a reset is
 * platform/refused-body.ts, which the listener uses too.
 */
import type http from 'node:http';
import { errorCode, errorMessage, isRecord } from '../../../common/errors.js';
import { truncateEnd } from '../../../common/format.js';
import { anthropicError, anthropicErrorEvent } from './anthropic-error.js';
import type { AnthropicErrorType } from './anthropic-error.js';
import type { UpstreamAnswer } from './upstream.js';
import type { UsageMeter } from '../measure/usage-meter.js';

/** An error answer from OpenRouter is read whole (to scrub it) up to this; the rest is dropped. */
const MAX_ERROR_BYTES = 1024 * 1024;

/**
 * Tells when the delegate hangs up: `signal` aborts when the response closes before it was sent whole. Call
 * `stop` once done with the response.
 */
export function watchHangUp(res: http.ServerResponse): { signal: AbortSignal; stop: () => void } {
  const hangUp = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) hangUp.abort();
  };
  res.on('close', onClose);
  return { signal: hangUp.signal, stop: () => res.off('close', onClose) };
}

/**
 * Copies the answer to the delegate as it arrives, chunk by chunk, waiting for the delegate to take each
 * one (backpressure). Says who broke off, if anyone.
 */
export async function pipe(
  upstream: UpstreamAnswer,
  res: http.ServerResponse,
  meter: UsageMeter,
  onFirstByte: () => void,
): Promise<'client' | 'upstream' | null> {
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

/**
 * Ends an answer OpenRouter broke off: a stream with the Messages API's `error` event, so the delegate's Claude Code
 * sees why; anything else by cutting the connection, so it cannot pass for a whole answer.
 */
export function endBroken(res: http.ServerResponse, streaming: boolean): void {
  if (streaming && !res.writableEnded) res.end(anthropicErrorEvent('api_error', 'OpenRouter broke off the answer; try again.'));
  else res.destroy();
}

/** An error answer's body as text, cut at 1 MiB; null when it broke off before its end. */
export function readErrorBody(upstream: UpstreamAnswer): Promise<string | null> {
  return readCapped(upstream.body, MAX_ERROR_BYTES);
}

/** An answer's body as text, at most `limit` bytes of it; null when it broke off before its end. */
export async function readCapped(body: http.IncomingMessage, limit: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (size < limit) chunks.push(chunk.subarray(0, limit - size));
      size += chunk.length;
    }
  } catch {
    return null;
  }
  return Buffer.concat(chunks).toString('utf8');
}

const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'timed out',
};

/** Why OpenRouter could not be reached (postUpstream's node:http error), in words and with the system's code. */
export function unreachable(error: unknown): string {
  const code = errorCode(error);
  const said = truncateEnd(errorMessage(error), 200);
  return code === undefined ? said : `${NETWORK_WORDS[code] ?? said} (${code})`;
}

export function bearerOf(req: http.IncomingMessage): string | null {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^Bearer /i.test(auth)) return auth.slice(7).trim() || null;
  const apiKey = req.headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey ? apiKey : null;
}

export function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer | 'too_large' | 'aborted'> {
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
    // A body that came in one read is not copied again.
    req.on('end', () => settle(chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks, size)));
    req.on('error', () => settle('aborted'));
    req.on('close', () => settle('aborted'));
  });
}

/** The request-target as a URL; null when it cannot be one (an absolute form with a bad port, say). */
export function parseTarget(target: string): URL | null {
  try {
    return new URL(target, 'http://gateway');
  } catch {
    return null;
  }
}

export function parseObject(body: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

export function fail(res: http.ServerResponse, status: number, type: AnthropicErrorType, message: string): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
  res.end(anthropicError(type, message));
}
