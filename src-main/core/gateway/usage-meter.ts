/**
 * Reads a Messages API answer as it passes through the gateway (docs/ARCHITECTURE.md §11) for what it costs:
 * the usage in `message_start` and `message_delta` of a stream, or in the body of a non-streaming answer,
 * plus the generation id, the model and the provider OpenRouter names. It only reads: the bytes the delegate
 * receives are the bytes that arrived.
 *
 * Usage in a stream is cumulative (each `message_delta` carries the totals so far), so the last figure of
 * each field wins; a field an event leaves out keeps what the earlier event said.
 */
import type { Usage } from '../../contract/index.js';
import { ZERO_USAGE } from '../../contract/index.js';

/** A single SSE event's data may be large (a long text block); beyond this the meter stops reading it. */
const MAX_EVENT_CHARS = 4 * 1024 * 1024;

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

export class UsageMeter {
  readonly answer: MeteredAnswer = { usage: { ...ZERO_USAGE }, generationId: null, model: null, provider: null, error: null };
  private readonly decoder = new TextDecoder();
  private pending = '';
  private data: string[] = [];
  private dataChars = 0;
  private overflow = false;
  /** The current event is one that never carries usage (named so by its `event:` line). */
  private skipping = false;
  private readonly streaming: boolean;
  private body = '';
  /** Called whenever the usage moved (the gateway re-prices the job as the answer streams). */
  private readonly onUsage: (answer: MeteredAnswer) => void;

  constructor(streaming: boolean, onUsage: (answer: MeteredAnswer) => void = () => undefined) {
    this.streaming = streaming;
    this.onUsage = onUsage;
  }

  push(chunk: Uint8Array): void {
    const text = this.decoder.decode(chunk, { stream: true });
    if (!this.streaming) {
      if (this.body.length < MAX_EVENT_CHARS) this.body += text;
      return;
    }
    // What was pending holds no newline: look for one only in what is new, and cut each line once.
    const scanFrom = this.pending.length;
    const all = this.pending + text;
    let start = 0;
    for (let newline = all.indexOf('\n', scanFrom); newline >= 0; newline = all.indexOf('\n', start)) {
      const end = newline > start && all.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      this.line(all.slice(start, end));
      start = newline + 1;
    }
    this.pending = start === 0 ? all : all.slice(start);
    // A line longer than any event we read: drop it, and the event it belongs to.
    if (this.pending.length > MAX_EVENT_CHARS) {
      this.pending = '';
      this.overflow = true;
    }
  }

  /** The answer has ended: reads what was left (a non-streaming body, a last event without its blank line). */
  end(): MeteredAnswer {
    if (this.streaming) {
      if (this.pending) this.line(this.pending);
      this.pending = '';
      this.dispatch();
    } else {
      this.body += this.decoder.decode();
      const parsed = parseJson(this.body);
      if (parsed) this.absorb(parsed);
    }
    return this.answer;
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith('event:')) {
      // The bulk of an answer is its text deltas, which carry no usage: their data is not even kept, let alone parsed.
      this.skipping = SKIPPED_EVENTS.has(line.slice(line[6] === ' ' ? 7 : 6));
      return;
    }
    if (this.skipping || !line.startsWith('data:')) return; // id:, retry:, comments: the data says it all
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    this.dataChars += value.length;
    if (this.dataChars > MAX_EVENT_CHARS) this.overflow = true;
    else this.data.push(value);
  }

  private dispatch(): void {
    this.skipping = false;
    const overflow = this.overflow;
    const data = this.data.join('\n');
    this.data = [];
    this.dataChars = 0;
    this.overflow = false;
    if (overflow || data === '') return;
    const event = parseJson(data);
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
