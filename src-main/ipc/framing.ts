/**
 * Newline-delimited JSON frames (docs/ARCHITECTURE.md §2, and §9 "Frames, not chunks").
 *
 * A socket delivers chunks, not frames: a chunk may hold half a frame, several frames, or end in the
 * middle of a multi-byte character. The decoder therefore keeps raw bytes, splits on the '\n' byte and
 * decodes UTF-8 only once a line is complete. Partial lines are kept as a list of buffers and joined
 * once per line, so feeding a frame in many small chunks stays linear.
 */
import { Buffer } from 'node:buffer';
import { MAX_FRAME_BYTES, ServiceError } from '../contract/protocol.js';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export type DecodedFrame = { ok: true; value: unknown } | { ok: false; code: 'bad_frame' | 'frame_too_large'; message: string };

function describeLimit(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/**
 * One frame: `JSON.stringify(value) + '\n'`. Throws ServiceError('frame_too_large') when the JSON is
 * longer than `maxBytes` (the peer would refuse it anyway), and ServiceError('internal') when the
 * value has no JSON form (undefined, a function, a cycle, a BigInt).
 */
export function encodeFrame(value: unknown, maxBytes: number = MAX_FRAME_BYTES): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new ServiceError('internal', `Cannot encode a frame: ${(error as Error).message}`, { cause: error });
  }
  if (json === undefined) throw new ServiceError('internal', 'Cannot encode a frame: the value has no JSON form.');
  // Cheap check first: a UTF-8 string is at most 3 bytes per UTF-16 unit.
  if (json.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > maxBytes) {
      throw new ServiceError('frame_too_large', `The frame is ${bytes} bytes; the limit is ${describeLimit(maxBytes)}.`);
    }
  }
  return `${json}\n`;
}

export interface FrameDecoderOptions {
  /** Longest accepted line, newline excluded. Default MAX_FRAME_BYTES. */
  maxFrameBytes?: number;
}

/**
 * Turns a byte stream into parsed frames. `push()` returns every frame completed by the chunk, in order:
 * parsed JSON, or an error item (`bad_frame` for a line that is not JSON or not UTF-8, `frame_too_large`
 * for an over-long line). An over-long line yields its error once, as soon as it is known to be too
 * long, and the rest of it is discarded up to the next newline; the frames after it decode normally.
 * Empty (or whitespace-only) lines are ignored.
 */
export class FrameDecoder {
  readonly maxFrameBytes: number;
  private parts: Buffer[] = [];
  private partsBytes = 0;
  /** Inside an over-long line whose error was already reported: drop bytes up to the next newline. */
  private discarding = false;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });

  constructor(options: FrameDecoderOptions = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? MAX_FRAME_BYTES;
  }

  /** Bytes of an incomplete line held so far (0 while discarding). */
  get pendingBytes(): number {
    return this.partsBytes;
  }

  push(chunk: Uint8Array): DecodedFrame[] {
    const out: DecodedFrame[] = [];
    const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    while (start <= data.length) {
      const newline = data.indexOf(NEWLINE, start);
      if (newline === -1) {
        this.keep(data.subarray(start), out);
        break;
      }
      this.finishLine(data.subarray(start, newline), out);
      start = newline + 1;
    }
    return out;
  }

  /** Forget any partial line (e.g. when the connection is closed). */
  reset(): void {
    this.parts = [];
    this.partsBytes = 0;
    this.discarding = false;
  }

  private keep(rest: Buffer, out: DecodedFrame[]): void {
    if (rest.length === 0 || this.discarding) return;
    this.parts.push(rest);
    this.partsBytes += rest.length;
    if (this.partsBytes > this.maxFrameBytes) {
      out.push(this.tooLarge());
      this.parts = [];
      this.partsBytes = 0;
      this.discarding = true;
    }
  }

  private finishLine(tail: Buffer, out: DecodedFrame[]): void {
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    const total = this.partsBytes + tail.length;
    let line: Buffer;
    if (this.parts.length === 0) line = tail;
    else {
      this.parts.push(tail);
      line = Buffer.concat(this.parts, total);
    }
    this.parts = [];
    this.partsBytes = 0;
    if (total > this.maxFrameBytes) {
      out.push(this.tooLarge());
      return;
    }
    const frame = this.parse(line);
    if (frame) out.push(frame);
  }

  private parse(line: Buffer): DecodedFrame | null {
    let end = line.length;
    if (end > 0 && line[end - 1] === CARRIAGE_RETURN) end -= 1;
    if (end === 0) return null;
    let text: string;
    try {
      text = this.utf8.decode(line.subarray(0, end));
    } catch {
      return { ok: false, code: 'bad_frame', message: 'The frame is not valid UTF-8.' };
    }
    if (text.trim() === '') return null;
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch {
      // The parser's message quotes the input, which may hold a secret: keep it out of replies and logs.
      return { ok: false, code: 'bad_frame', message: 'The frame is not valid JSON (one JSON value per line is expected).' };
    }
  }

  private tooLarge(): DecodedFrame {
    return {
      ok: false,
      code: 'frame_too_large',
      message: `The frame is larger than the ${describeLimit(this.maxFrameBytes)} limit.`,
    };
  }
}
