/**
 * Reads a Messages API answer as it passes through the gateway (docs/ARCHITECTURE.md §11) for what it costs:
 * the usage in `message_start` and `message_delta` of a stream, or in the body of a non-streaming answer,
 * plus the generation id, the model and the provider OpenRouter names. It only reads: the bytes the delegate
 * receives are the bytes that arrived.
 *
 * Usage in a stream is cumulative (each `message_delta` carries the totals so far), so the last figure of
 * each field wins; a field an event leaves out keeps what the earlier event said.
 */
import type { Usage } from '../../../contract/index.js';
import { ZERO_USAGE } from '../../../contract/index.js';

/** A single SSE event's data may be large (a long text block); beyond this many bytes the meter stops reading it. */
const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/**
 * Events of the Messages API's stream that carry no usage, id, model or error. Events named otherwise, or not
 * named at all, are read.
 */
const SKIPPED_EVENTS = new Set(['content_block_delta', 'content_block_start', 'content_block_stop', 'ping', 'message_stop']);

export interface MeteredAnswer {
  usage: Usage;
  generationId: string | null;
  model: string | null;
  provider: string | null;
  /** An `error` event in the stream, or the error body of a non-streaming answer. */
  error: string | null;
}

/**
 * The stream is read as Latin-1, a character a byte: decoding is a copy, and since no byte of a multi-byte
 * UTF-8 character is a newline, lines split the same. Only the data of an event that is read is turned back
 * into UTF-8 text, once, whole. Most of an answer is text deltas, which are skipped by their `event:` line
 * without a character of their data being copied.
 */
export class UsageMeter {
  readonly answer: MeteredAnswer = { usage: { ...ZERO_USAGE }, generationId: null, model: null, provider: null, error: null };
  /** The start of a line whose newline has not arrived yet (Latin-1). */
  private pending = '';
  private data: string[] = [];
  private dataBytes = 0;
  private overflow = false;
  /** The current event is one that never carries usage (named so by its `event:` line). */
  private skipping = false;
  private readonly streaming: boolean;
  private readonly body: Buffer[] = [];
  private bodyBytes = 0;
  /** Called whenever the usage moved (the gateway re-prices the job as the answer streams). */
  private readonly onUsage: (answer: MeteredAnswer) => void;

  constructor(streaming: boolean, onUsage: (answer: MeteredAnswer) => void = () => undefined) {
    this.streaming = streaming;
    this.onUsage = onUsage;
  }

  push(chunk: Uint8Array): void {
    if (!this.streaming) {
      if (this.bodyBytes < MAX_EVENT_BYTES) {
        this.body.push(Buffer.from(chunk));
        this.bodyBytes += chunk.byteLength;
      }
      return;
    }
    const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    let start = 0;
    if (this.pending !== '') {
      // The pending line ends in this chunk, or grows by all of it.
      const newline = text.indexOf('\n');
      if (newline < 0) {
        this.pending += text;
        this.capPending();
        return;
      }
      const line = this.pending + text.slice(0, newline);
      this.pending = '';
      this.line(line, 0, line.length);
      start = newline + 1;
    }
    for (let newline = text.indexOf('\n', start); newline >= 0; newline = text.indexOf('\n', start)) {
      this.line(text, start, newline);
      start = newline + 1;
    }
    if (start < text.length) {
      this.pending = text.slice(start);
      this.capPending();
    }
  }

  /** The answer has ended: reads what was left (a non-streaming body, a last event without its blank line). */
  end(): MeteredAnswer {
    if (this.streaming) {
      const last = this.pending;
      this.pending = '';
      if (last !== '') this.line(last, 0, last.length);
      this.dispatch();
    } else {
      const parsed = parseJson(Buffer.concat(this.body).toString('utf8'));
      if (parsed) this.absorb(parsed);
    }
    return this.answer;
  }

  /** A line longer than any event we read: dropped, and the event it belongs to. */
  private capPending(): void {
    if (this.pending.length > MAX_EVENT_BYTES) {
      this.pending = '';
      this.overflow = true;
    }
  }

  /** The line text[start, newline), without a carriage return before the newline. */
  private line(text: string, start: number, newline: number): void {
    const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
    if (end === start) {
      this.dispatch();
      return;
    }
    if (text.startsWith('event:', start)) {
      // The bulk of an answer is its text deltas, which carry no usage: their data is not even kept, let alone parsed.
      this.skipping = SKIPPED_EVENTS.has(text.slice(start + (text.charCodeAt(start + 6) === 32 ? 7 : 6), end));
      return;
    }
    if (this.skipping || !text.startsWith('data:', start)) return; // id:, retry:, comments: the data says it all
    const from = start + (text.charCodeAt(start + 5) === 32 ? 6 : 5);
    this.dataBytes += end - from;
    if (this.dataBytes > MAX_EVENT_BYTES) this.overflow = true;
    else this.data.push(text.slice(from, end));
  }

  private dispatch(): void {
    this.skipping = false;
    // The end of a skipped event: nothing was kept.
    if (this.data.length === 0 && !this.overflow) return;
    const overflow = this.overflow;
    const data = this.data.join('\n');
    this.data = [];
    this.dataBytes = 0;
    this.overflow = false;
    if (overflow || data === '') return;
    const event = parseJson(Buffer.from(data, 'latin1').toString('utf8'));
    if (event) this.absorb(event);
  }

  private absorb(event: Record<string, unknown>): void {
    const message = record(event.message) ?? (event.type === 'message' ? event : null);
    if (message) {
      if (typeof message.id === 'string') this.answer.generationId = message.id;
      if (typeof message.model === 'string') this.answer.model = message.model;
      if (typeof message.provider === 'string') this.answer.provider = message.provider;
      this.usage(record(message.usage));
    }
    if (typeof event.provider === 'string') this.answer.provider = event.provider;
    this.usage(record(event.usage));
    const error = record(event.error);
    if (event.type === 'error' && error) this.answer.error = typeof error.message === 'string' ? error.message.slice(0, 300) : 'error';
  }

  private usage(usage: Record<string, unknown> | null): void {
    if (!usage) return;
    const u = this.answer.usage;
    const before = JSON.stringify(u);
    u.inputTokens = count(usage.input_tokens) ?? u.inputTokens;
    u.outputTokens = count(usage.output_tokens) ?? u.outputTokens;
    u.cacheReadTokens = count(usage.cache_read_input_tokens) ?? u.cacheReadTokens;
    u.cacheWriteTokens = count(usage.cache_creation_input_tokens) ?? u.cacheWriteTokens;
    if (JSON.stringify(u) !== before) this.onUsage(this.answer);
  }
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    return record(JSON.parse(text));
  } catch {
    return null;
  }
}
