/**
 * What the IPC server must answer to a byte stream, written from docs/ARCHITECTURE.md §2 and the contract, not
 * from the server's code: frames are the lines between '\n' bytes; a line past MAX_FRAME_BYTES ends
 * the connection with `frame_too_large`; a blank line is nothing; the first frame must be a hello with
 * the token (a wrong or missing token is `unauthorized`, a wrong protocol `protocol_mismatch`, a
 * malformed hello `bad_frame`), refused with one error and a closed connection; after it, every frame
 * gets exactly one reply: a request frame one with its id, anything else a `bad_frame` error carrying
 * the frame's id when it has a usable one.
 */
import { MAX_FRAME_BYTES, PROTOCOL_VERSION, RequestFrameSchema } from '../../../src-main/contract/protocol.js';
import type { ErrorCode } from '../../../src-main/contract/protocol.js';
import { ClientHelloSchema } from '../../../src-main/contract/protocol.js';
import { isRecord } from '../../../src-main/common/errors.js';

export type Line =
  | { kind: 'blank' }
  | { kind: 'too_large' }
  /** Not UTF-8, or not JSON. */
  | { kind: 'undecodable' }
  | { kind: 'json'; value: unknown };

export function classifyLine(bytes: Buffer): Line {
  if (bytes.length > MAX_FRAME_BYTES) return { kind: 'too_large' };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { kind: 'undecodable' };
  }
  if (text.trim() === '') return { kind: 'blank' };
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'undecodable' };
  }
}

/** The lines of `stream`, each with the offset just past its newline (the stream's unterminated tail is left out). */
export function splitLines(stream: Buffer): Array<{ bytes: Buffer; end: number }> {
  const lines: Array<{ bytes: Buffer; end: number }> = [];
  let start = 0;
  for (;;) {
    const newline = stream.indexOf(0x0a, start);
    if (newline === -1) return lines;
    lines.push({ bytes: stream.subarray(start, newline), end: newline + 1 });
    start = newline + 1;
  }
}

/** The id a reply to this frame carries, as JSON text ('null' when the frame has no usable id). */
export function replyIdOf(value: unknown): string {
  const parsed = RequestFrameSchema.safeParse(value);
  if (parsed.success) return JSON.stringify(parsed.data.id);
  const id = isRecord(value) ? value.id : undefined;
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? JSON.stringify(id) : 'null';
}

export interface ExpectedReply {
  /** JSON text of the id the reply must carry. */
  id: string;
  /** A request frame (answered by the dispatcher) rather than a bad frame (answered `bad_frame`). */
  request: boolean;
  method?: string;
}

export interface SessionModel {
  hello: { ok: true } | { ok: false; code: ErrorCode };
  /** After an accepted hello, one entry per frame, in order. */
  replies: ExpectedReply[];
  /** A line past the cap ends the connection after the replies above. */
  tooLarge: boolean;
  /** Bytes of the stream the server reads before it must close (all of it when it stays open). */
  cutAt: number;
  /** Lines that are frames (not blank), after the hello. */
  frameLines: number;
}

export function helloVerdict(line: Line, token: string): { ok: true } | { ok: false; code: ErrorCode } {
  if (line.kind !== 'json') return { ok: false, code: 'unauthorized' };
  const value = line.value;
  if (!isRecord(value) || value.type !== 'hello' || typeof value.token !== 'string' || value.token !== token) {
    return { ok: false, code: 'unauthorized' };
  }
  if (value.protocol !== PROTOCOL_VERSION) return { ok: false, code: 'protocol_mismatch' };
  return ClientHelloSchema.safeParse(value).success ? { ok: true } : { ok: false, code: 'bad_frame' };
}

export function modelSession(stream: Buffer, token: string): SessionModel {
  const model: SessionModel = { hello: { ok: false, code: 'unauthorized' }, replies: [], tooLarge: false, cutAt: stream.length, frameLines: 0 };
  let greeted = false;
  for (const { bytes, end } of splitLines(stream)) {
    const line = classifyLine(bytes);
    if (line.kind === 'blank') continue;
    if (!greeted) {
      greeted = true;
      model.hello = helloVerdict(line, token);
      if (!model.hello.ok) {
        model.cutAt = end;
        return model;
      }
      continue;
    }
    model.frameLines++;
    if (line.kind === 'too_large') {
      model.tooLarge = true;
      model.cutAt = end;
      return model;
    }
    if (line.kind === 'undecodable') {
      model.replies.push({ id: 'null', request: false });
      continue;
    }
    const request = RequestFrameSchema.safeParse(line.value);
    model.replies.push(
      request.success ? { id: JSON.stringify(request.data.id), request: true, method: request.data.method } : { id: replyIdOf(line.value), request: false },
    );
  }
  if (!greeted) model.cutAt = stream.length;
  return model;
}

/** The request frames in `bytes` (split and decoded as the server would), for the generator's safety check. */
export function requestsIn(bytes: Buffer): Array<{ method: string; params: unknown }> {
  const out: Array<{ method: string; params: unknown }> = [];
  for (const { bytes: line } of splitLines(Buffer.concat([bytes, Buffer.from('\n')]))) {
    const decoded = classifyLine(line);
    if (decoded.kind !== 'json') continue;
    const request = RequestFrameSchema.safeParse(decoded.value);
    if (request.success) out.push({ method: request.data.method, params: request.data.params });
  }
  return out;
}
