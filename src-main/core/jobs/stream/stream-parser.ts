/**
 * Reads a delegated job's `claude -p --output-format stream-json --verbose` output, one line at a
 * time, into what the service shows and bills (docs/ARCHITECTURE.md §4): a bounded tail, tool-call counts,
 * usage per assistant message and the result.
 *
 * One state machine, kept whole: every event kind it reads feeds the same per-message usage, tool-call and
 * tail state, and the rules below (repeats, snapshots, sub-agents) cut across all of them. What is not state lives
 * beside it: the tolerant field readers in stream-fields.ts, the text of tail entries in stream-text.ts, the ring in
 * ring.ts.
 *
 * What the real captures taught us (tests/fixtures/claude):
 * - Claude Code repeats the same assistant message once per content block (same `message.id`,
 *   one block each, the usage copied onto every repeat), and a sub-agent's repeats interleave with
 *   other messages. Usage is therefore kept per message id, never summed per line; repeats can
 *   carry a later snapshot (output_tokens 1, then 336), so each field keeps its largest value.
 * - The usage on stream messages is a snapshot taken while the message was still being written:
 *   output tokens come out far too low (10 against the result's 122). The result line's
 *   `modelUsage` has the real totals of every model the session called, sub-agents and Claude
 *   Code's own background calls included, so `bestUsage` prefers them once the result is in.
 * - Result lines are irregular: `error_max_turns` has no `result` key, a bad model gives
 *   `subtype:"success"` with `is_error:true` and `api_error_status`, and `error_during_execution`
 *   comes with `is_error:false`. Whether a job failed is `isError || subtype !== 'success'`.
 * - In a resumed session (a follow-up, `--resume`) the result's `modelUsage` counts every turn of the
 *   session so far, the earlier turns' jobs included (2.1.332: turn 2 of 1,000 in / 200 out reads 2,000 / 400);
 *   `model_usage_since_last_result` and `usage` count this run alone. A turn's figures are its own
 *   (issue 23), so a resumed turn never reads `modelUsage`.
 * - `total_cost_usd` and `modelUsage[*].costUSD` are Anthropic list prices for Anthropic models,
 *   not what OpenRouter charges: they are never read.
 *
 * The parser is pure and tolerant: empty lines, garbage, non-object JSON and unknown event types
 * are skipped (garbage is counted). Memory stays flat however long the stream: the tail is a ring,
 * tool names and per-message usage are remembered for a bounded window. The stream's message ids are not
 * what billing asks OpenRouter about: the delegate writes this stream, and can write any id into it; the
 * generations a job is billed for are those its requests through the gateway were answered with.
 */
import { maxUsage } from '../../../contract/jobs.js';
import type { TailEntry, Usage } from '../../../contract/jobs.js';
import { isRecord } from '../../../common/errors.js';
import { MessageUsage } from './message-usage.js';
import { Ring } from './ring.js';
import { modelUsageOf, nonEmptyString, numberOrNull, stringOrNull, usageOf } from './stream-fields.js';
import { isBlank, shorten, summarizeToolInput, toolResultText } from './stream-text.js';

/** Most tail entries kept in memory; status asks for 15 by default, 100 at most. */
export const TAIL_CAPACITY = 200;
const TOOL_CALL_CHARS = 300;
const TOOL_RESULT_CHARS = 300;
const TEXT_CHARS = 500;
const NOTICE_CHARS = 500;
/**
 * Tool calls whose names are remembered so that their results can be labelled, and repeats of a
 * call recognised. A result follows its call within a few events (parallel sub-agents make it a
 * few dozen), so a window this size is plenty and keeps a days-long stream from growing a map.
 */
const REMEMBERED_TOOL_CALLS = 4096;
/**
 * Messages whose usage is remembered, so that their repeats are merged. The repeats of a message follow
 * it within a few events (the captures have at most one other message in between; parallel sub-agents
 * make it a few dozen), so this is plenty; a message older than that is final, its usage already in the
 * total. A repeat that came later still would be counted again: the safe side for a budget, and the
 * gateway's own figures replace the stream's once the job's requests have settled.
 */
export const REMEMBERED_MESSAGES = 64;

export interface StreamInit {
  model: string | null;
  cwd: string | null;
  permissionMode: string | null;
  claudeVersion: string | null;
  tools: string[];
}

export interface StreamResult {
  subtype: string;
  /** As Claude Code wrote it; it is false for `error_during_execution`, so also check `subtype`. */
  isError: boolean;
  /** The final answer; null when the line has none (e.g. `error_max_turns`). */
  text: string | null;
  numTurns: number | null;
  durationMs: number | null;
  /** The result's `usage`: the main session only, sub-agents and background calls excluded. */
  usage: Usage | null;
  apiErrorStatus: number | null;
  /** The result's `errors` (e.g. "Reached maximum number of turns (1)"); empty when none. */
  errors: string[];
  /**
   * Token totals over every model of this run (costs ignored): `model_usage_since_last_result`, else `modelUsage`
   * unless the session was resumed (there it counts the earlier turns too); null when the line has neither.
   */
  modelUsage: Usage | null;
}

export interface ApiRetry {
  status: number | null;
  error: string | null;
  attempt: number | null;
  maxRetries: number | null;
  retryDelayMs: number | null;
}

type Json = Record<string, unknown>;

export interface StreamParserOptions {
  /** The stream is a resumed session's (a follow-up): its result's `modelUsage` counts the earlier turns too. */
  resumed?: boolean;
}

export class StreamParser {
  private readonly resumed: boolean;
  private readonly ring = new Ring<TailEntry>(TAIL_CAPACITY);
  private readonly usage = new MessageUsage(REMEMBERED_MESSAGES);
  /** tool_use id → tool name, for the last REMEMBERED_TOOL_CALLS calls (insertion order = age). */
  private readonly toolNames = new Map<string, string>();
  private session: string | null = null;
  private sessionFromInit = false;
  private initInfo: StreamInit | null = null;
  private calls = 0;
  private garbage = 0;
  private lines = 0;
  private resultInfo: StreamResult | null = null;
  private retries = 0;
  private lastRetry: ApiRetry | null = null;
  private lastText: string | null = null;

  constructor(options: StreamParserOptions = {}) {
    this.resumed = options.resumed === true;
  }

  /** One complete line of the stream, without its newline. */
  push(line: string): void {
    this.lines++;
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      // A blank line is not damage; anything else (a truncated last line, stray output) is.
      if (!isBlank(line)) this.garbage++;
      return;
    }
    if (!isRecord(event)) {
      this.garbage++;
      return;
    }
    const session = event.session_id;
    if (this.session === null && typeof session === 'string' && session !== '') this.session = session;
    switch (event.type) {
      case 'assistant':
        this.onAssistant(event);
        break;
      case 'user':
        this.onUser(event);
        break;
      case 'system':
        this.onSystem(event);
        break;
      case 'result':
        this.onResult(event);
        break;
      default:
      // Newer Claude Code versions add event types (stream_event, tool_progress …): not ours to show.
    }
  }

  get sessionId(): string | null {
    return this.session;
  }

  get init(): StreamInit | null {
    return this.initInfo;
  }

  /** Every tool_use block in assistant messages, sub-agents included, each call id once. */
  get toolCalls(): number {
    return this.calls;
  }

  /** Lines that were not a JSON object (blank lines excluded). */
  get garbageLines(): number {
    return this.garbage;
  }

  get linesSeen(): number {
    return this.lines;
  }

  /** The newest `limit` tail entries (at most TAIL_CAPACITY), newest last. */
  tail(limit: number): TailEntry[] {
    return this.ring.last(limit);
  }

  /**
   * Usage per assistant message id, each id once (the largest value of each field over its repeats), for
   * the last REMEMBERED_MESSAGES messages; totalUsage counts them all.
   */
  get usageByMessage(): ReadonlyMap<string, Usage> {
    return this.usage.byMessage();
  }

  /** Σ usageByMessage: what the stream says so far (output tokens are undercounted, see bestUsage). */
  get totalUsage(): Usage {
    return { ...this.usage.total };
  }

  /**
   * The best token count known: the stream's sum while the job runs; once the result line is in,
   * each field is the larger of that and the result's own totals (`modelUsage`, else `usage`),
   * which count the output tokens the stream's snapshots miss and Claude Code's background calls.
   * Use this for cost: prices are linear, so `estimateCostUsd([parser.bestUsage], pricing)` works.
   */
  get bestUsage(): Usage {
    let best: Usage = { ...this.usage.total };
    const result = this.resultInfo;
    if (result?.usage) best = maxUsage(best, result.usage);
    if (result?.modelUsage) best = maxUsage(best, result.modelUsage);
    return best;
  }

  get result(): StreamResult | null {
    return this.resultInfo;
  }

  get apiRetries(): { count: number; last: ApiRetry | null } {
    return { count: this.retries, last: this.lastRetry };
  }

  /** The last text block of the main session (not a sub-agent's): the answer when no result line came. */
  get lastAssistantText(): string | null {
    return this.lastText;
  }

  private addEntry(entry: TailEntry, subagent: boolean): void {
    if (subagent) entry.subagent = true;
    this.ring.push(entry);
  }

  private onAssistant(event: Json): void {
    const message = event.message;
    if (!isRecord(message)) return;
    const subagent = nonEmptyString(event.parent_tool_use_id) !== null;
    const id = nonEmptyString(message.id);
    this.recordUsage(id, message.usage);
    const content = message.content;
    if (typeof content === 'string') {
      this.onText(content, subagent);
      return;
    }
    if (!Array.isArray(content)) return;
    for (const block of content) {
      if (!isRecord(block)) continue;
      if (block.type === 'tool_use') this.onToolUse(block, subagent);
      else if (block.type === 'text') this.onText(block.text, subagent);
      // thinking / redacted_thinking: private reasoning, not progress.
    }
  }

  private recordUsage(id: string | null, raw: unknown): void {
    const usage = usageOf(raw);
    if (usage !== null) this.usage.add(id, usage);
  }

  private onToolUse(block: Json, subagent: boolean): void {
    const name = nonEmptyString(block.name) ?? 'tool';
    const id = nonEmptyString(block.id);
    if (id !== null) {
      // The same call seen again (a repeated message): count and show it once.
      if (this.toolNames.has(id)) return;
      this.toolNames.set(id, name);
      if (this.toolNames.size > REMEMBERED_TOOL_CALLS) {
        const oldest = this.toolNames.keys().next();
        if (!oldest.done) this.toolNames.delete(oldest.value);
      }
    }
    this.calls++;
    const summary = summarizeToolInput(name, block.input, TOOL_CALL_CHARS);
    this.addEntry({ kind: 'tool_call', tool: name, text: shorten(summary === '' ? name : `${name} ${summary}`, TOOL_CALL_CHARS) }, subagent);
  }

  private onText(raw: unknown, subagent: boolean): void {
    if (typeof raw !== 'string' || isBlank(raw)) return;
    if (!subagent) this.lastText = raw;
    this.addEntry({ kind: 'text', text: shorten(raw, TEXT_CHARS) }, subagent);
  }

  private onUser(event: Json): void {
    const message = event.message;
    if (!isRecord(message) || !Array.isArray(message.content)) return;
    const subagent = nonEmptyString(event.parent_tool_use_id) !== null;
    for (const block of message.content) {
      if (!isRecord(block) || block.type !== 'tool_result') continue;
      const callId = nonEmptyString(block.tool_use_id);
      const tool = callId === null ? undefined : this.toolNames.get(callId);
      const entry: TailEntry = { kind: 'tool_result', text: toolResultText(block.content, TOOL_RESULT_CHARS), isError: block.is_error === true };
      if (tool !== undefined) entry.tool = tool;
      this.addEntry(entry, subagent);
    }
  }

  private onSystem(event: Json): void {
    if (event.subtype === 'init') {
      const session = nonEmptyString(event.session_id);
      // The init line names the session this job runs in; it wins over any earlier stray line.
      if (session !== null && !this.sessionFromInit) {
        this.session = session;
        this.sessionFromInit = true;
      }
      this.initInfo = {
        model: stringOrNull(event.model),
        cwd: stringOrNull(event.cwd),
        permissionMode: stringOrNull(event.permissionMode),
        claudeVersion: stringOrNull(event.claude_code_version),
        tools: Array.isArray(event.tools) ? event.tools.filter((t): t is string => typeof t === 'string') : [],
      };
    } else if (event.subtype === 'api_retry') {
      this.onApiRetry(event);
    }
  }

  /**
   * Claude Code 2.1 writes `{subtype:"api_retry", attempt, max_retries, retry_delay_ms,
   * error_status, error}` with `error` a category ("overloaded", "rate_limit", "server_error" …).
   * Read liberally: other versions may nest the error or name the fields differently.
   */
  private onApiRetry(event: Json): void {
    const error = event.error;
    const nested = isRecord(error) ? error : null;
    const retry: ApiRetry = {
      status: numberOrNull(event.error_status) ?? numberOrNull(event.status) ?? numberOrNull(nested?.status),
      error: stringOrNull(error) ?? stringOrNull(nested?.message) ?? stringOrNull(nested?.type) ?? stringOrNull(event.error_message),
      attempt: numberOrNull(event.attempt) ?? numberOrNull(event.retry_attempt),
      maxRetries: numberOrNull(event.max_retries),
      retryDelayMs: numberOrNull(event.retry_delay_ms) ?? numberOrNull(event.retry_in_ms),
    };
    this.retries++;
    this.lastRetry = retry;
    const what = [retry.status === null ? null : String(retry.status), retry.error].filter((s) => s !== null).join(' ');
    const attempt = retry.attempt === null ? '' : retry.maxRetries === null ? ` ${retry.attempt}` : ` ${retry.attempt}/${retry.maxRetries}`;
    const wait = retry.retryDelayMs === null ? '' : ` in ${Math.round(retry.retryDelayMs / 100) / 10} s`;
    const text = `API error${what === '' ? '' : ` (${what})`}: retry${attempt}${wait}`;
    this.addEntry({ kind: 'notice', text: shorten(text, NOTICE_CHARS) }, nonEmptyString(event.parent_tool_use_id) !== null);
  }

  private onResult(event: Json): void {
    const subtype = nonEmptyString(event.subtype) ?? 'unknown';
    const errors = Array.isArray(event.errors) ? event.errors.filter((e): e is string => typeof e === 'string') : [];
    const result: StreamResult = {
      subtype,
      isError: typeof event.is_error === 'boolean' ? event.is_error : subtype !== 'success',
      text: stringOrNull(event.result),
      numTurns: numberOrNull(event.num_turns),
      durationMs: numberOrNull(event.duration_ms),
      usage: usageOf(event.usage),
      apiErrorStatus: numberOrNull(event.api_error_status),
      errors,
      modelUsage: modelUsageOf(event.model_usage_since_last_result) ?? (this.resumed ? null : modelUsageOf(event.modelUsage)),
    };
    this.resultInfo = result;
    if (!result.isError && subtype === 'success') return;
    const status = result.apiErrorStatus === null ? '' : ` (API status ${result.apiErrorStatus})`;
    const detail = errors.length > 0 ? errors.join('; ') : result.isError && result.text !== null ? result.text : null;
    const text = `${subtype}${status}${detail === null ? '' : `: ${detail}`}`;
    this.ring.push({ kind: 'notice', text: shorten(text, NOTICE_CHARS), isError: true });
  }
}

/** The parser for a job's stream: turn 2 on is a follow-up, whose session is resumed. */
export function streamParserFor(record: { turn: number }): StreamParser {
  return new StreamParser({ resumed: record.turn > 1 });
}
