/**
 * A raw HTTP/1.1 client for the gateway fuzz: it writes a request's bytes exactly as told (in pieces, slowly,
 * or only in part before hanging up) and reads the answer with its own small parser, not node:http's, so that
 * whatever the server sends is seen as it was sent.
 */
import { once } from 'node:events';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface HttpAnswer {
  status: number;
  /** Lowercased names; a repeated header keeps every value. */
  headers: Map<string, string[]>;
  /** Dechunked. */
  body: Buffer;
}

export interface Plan {
  /** Written in order, each after its delay. */
  pieces: Array<{ bytes: Buffer; delayMs: number }>;
  /** Hang up this long after the last piece instead of waiting for the answer. */
  hangUpAfterMs: number | null;
  /** Hang up as soon as the first bytes of the answer arrive. */
  hangUpOnFirstByte: boolean;
  /** The request was HEAD: its answer has no body. */
  head: boolean;
  timeoutMs: number;
}

export interface Exchange {
  /** The final (not 1xx) answer, when one arrived whole. */
  answer: HttpAnswer | null;
  /** Every byte received, interim answers included. */
  raw: Buffer;
  /** What arrived is not HTTP. */
  malformed: boolean;
  timedOut: boolean;
}

type Parsed = HttpAnswer | 'incomplete' | 'malformed';

/** The first final answer in `data`; `closed` says the connection is over (an answer without a length ends there). */
export function parseAnswer(data: Buffer, head: boolean, closed: boolean): Parsed {
  let at = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', at);
    if (end < 0) return closed && data.length > at ? 'malformed' : 'incomplete';
    const lines = data.subarray(at, end).toString('latin1').split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
    if (!status) return 'malformed';
    const headers = new Map<string, string[]>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) return 'malformed';
      const name = line.slice(0, colon).toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
    }
    const code = Number(status[1]);
    const start = end + 4;
    if (code >= 100 && code < 200) {
      at = start;
      continue;
    }
    if (head || code === 204 || code === 304) return { status: code, headers, body: Buffer.alloc(0) };
    if ((headers.get('transfer-encoding') ?? []).join(',').toLowerCase().includes('chunked')) return dechunk(data, start, code, headers);
    const length = headers.get('content-length');
    if (length) {
      const n = Number(length[0]);
      if (!Number.isSafeInteger(n) || n < 0) return 'malformed';
      return data.length - start >= n ? { status: code, headers, body: data.subarray(start, start + n) } : 'incomplete';
    }
    return closed ? { status: code, headers, body: data.subarray(start) } : 'incomplete';
  }
}

function dechunk(data: Buffer, start: number, status: number, headers: Map<string, string[]>): Parsed {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) return 'incomplete';
    const size = Number.parseInt(data.subarray(at, eol).toString('latin1').split(';')[0] ?? '', 16);
    if (!Number.isSafeInteger(size) || size < 0) return 'malformed';
    if (size === 0) {
      // No trailers from these servers: the last chunk is followed by one empty line.
      if (data.length < eol + 4) return 'incomplete';
      return data.subarray(eol + 2, eol + 4).toString('latin1') === '\r\n' ? { status, headers, body: Buffer.concat(parts) } : 'malformed';
    }
    if (data.length < eol + 2 + size + 2) return 'incomplete';
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** One connection, one request as planned, and the answer as it came. */
export function exchange(port: number, plan: Plan): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let answer: HttpAnswer | null = null;
    let malformed = false;
    let timedOut = false;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ answer, raw: Buffer.concat(received), malformed, timedOut });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      finish();
    }, plan.timeoutMs);
    const read = (closed: boolean) => {
      const parsed = parseAnswer(Buffer.concat(received), plan.head, closed);
      if (parsed === 'malformed') malformed = true;
      else if (parsed !== 'incomplete') answer = parsed;
      if (parsed !== 'incomplete' || closed) finish();
    };
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      if (plan.hangUpOnFirstByte) finish();
      else read(false);
    });
    // EPIPE or ECONNRESET when the server answered early and closed: what it sent is still read.
    socket.on('error', () => undefined);
    socket.on('close', () => read(true));
    socket.on('connect', () => {
      void (async () => {
        for (const piece of plan.pieces) {
          if (piece.delayMs > 0) await sleep(piece.delayMs);
          if (done || socket.destroyed) return;
          if (!socket.write(piece.bytes)) {
            // The listener that loses the race is taken off again: left on, a slow socket gathered one per piece.
            const settled = new AbortController();
            await Promise.race([once(socket, 'drain', { signal: settled.signal }), once(socket, 'close', { signal: settled.signal })]).catch(() => undefined);
            settled.abort();
          }
        }
        if (plan.hangUpAfterMs !== null) {
          await sleep(plan.hangUpAfterMs);
          finish();
        }
      })();
    });
  });
}
