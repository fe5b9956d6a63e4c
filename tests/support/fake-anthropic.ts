/**
 * Plays the model for the real `claude -p` CLI (docs/ARCHITECTURE.md §8): installs OpenRouter's Anthropic-compatible
 * `POST /api/v1/messages` on a FakeOpenRouter and answers it from scripts, in the Messages API's SSE
 * format (or JSON when `stream` is false), with OpenRouter-style `gen-…` message ids whose cost the fake's
 * `/api/v1/generation` then reports.
 *
 * Choosing a script. A test puts a marker `[[script:NAME]]` in its prompt. A request belongs to the script
 * named by the LAST marker found in the text blocks of its user messages (tool results are never searched,
 * so a command that echoes a marker cannot hijack a script). The step to answer is the number of assistant
 * messages that come after the user message carrying that marker. Nothing is remembered between requests,
 * so:
 *  - a retried request (429/529 …) asks for the same step again;
 *  - a resumed follow-up WITHOUT a marker continues the same script: its request repeats the earlier turns,
 *    so the step index simply keeps counting (script `[{ text: 'first' }, { text: 'second' }]` answers the
 *    first turn with "first" and a marker-less follow-up with "second");
 *  - a follow-up WITH its own marker starts that script at step 0 (counting from the follow-up's prompt),
 *    whatever the earlier turns were.
 * After the last step every request of the script is answered with the text "done".
 *
 * Requests without any marker are Claude Code's own side requests (none are made by 2.1.332 in `-p` mode
 * with the delegate environment, see the tests): they get a short text and are kept in `sideRequests`.
 *
 * Usage: a step's `usage`, else DEFAULT_USAGE; with `options.promptCache`, the prompt's tokens are measured
 * from the request and split into plain input, cache reads and cache writes by that model of OpenRouter's
 * routing and the provider's cache (prompt-cache.ts), unless the step names its own.
 *
 * Cost: every answered message is registered with the fake as a generation whose `total_cost` is
 * `usage × DEFAULT_TOKEN_PRICES` (USD per token; override with `options.prices`), see `costOf`.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { fileURLToPath } from 'node:url';
import type { FakeOpenRouter, RecordedRequest } from './fake-openrouter.js';
import type { PromptCacheSim } from './prompt-cache.js';

/** The real Claude Code CLI, a devDependency (docs/ARCHITECTURE.md §8). */
export const CLAUDE_CLI = fileURLToPath(new URL('../../node_modules/.bin/claude', import.meta.url));

/**
 * Claude Code retries 401, 429 and 529 ten times with backoff (about 3 minutes); 402 is not retried.
 * Tests that script errors add this to the child environment (buildChildEnv drops every CLAUDE_* of
 * the parent, so it has to be added after it). `CLAUDE_CODE_MAX_RETRIES: '1'` keeps one retry (~0.6 s).
 */
export const NO_RETRY_ENV: Readonly<Record<string, string>> = { CLAUDE_CODE_MAX_RETRIES: '0' };

export const MESSAGES_PATH = '/api/v1/messages';
export const COUNT_TOKENS_PATH = '/api/v1/messages/count_tokens';
const MARKER = /\[\[script:([A-Za-z0-9_.-]+)\]\]/g;
/** What a script answers once its steps are used up. */
export const FINAL_TEXT = 'done';
/** What a request without a marker (a side request) is answered. */
export const SIDE_TEXT = 'OK';

export interface ScriptUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}
export type Usage = Required<ScriptUsage>;

/** Used for every field a step leaves out. */
export const DEFAULT_USAGE: Usage = { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };

/** USD per token: $1/M prompt, $2/M completion, $0.10/M cache read, $1.25/M cache write. */
export interface TokenPrices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}
export const DEFAULT_TOKEN_PRICES: TokenPrices = { input: 1e-6, output: 2e-6, cacheRead: 1e-7, cacheWrite: 1.25e-6 };

export function costOf(usage: Usage, prices: TokenPrices = DEFAULT_TOKEN_PRICES): number {
  return (
    usage.input_tokens * prices.input +
    usage.output_tokens * prices.output +
    usage.cache_read_input_tokens * prices.cacheRead +
    usage.cache_creation_input_tokens * prices.cacheWrite
  );
}

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
  /** Default: a fresh `toolu_…` id. */
  id?: string;
}

interface StepTiming {
  /** Wait this long before answering (headers included), e.g. to keep a job running. */
  delayMs?: number;
}

/** What OpenRouter says served an answer, where the metering gateway reads it (the message's `model` and `provider`). */
interface StepServedBy {
  /** Default: the model the request asked for. */
  model?: string;
  /** Default: none named. */
  provider?: string;
  /** A `thinking` block (with a made-up signature) before the rest, as a reasoning model answers: Claude Code sends it back. */
  thinking?: string;
}

export interface TextStep extends StepTiming, StepServedBy {
  text: string;
  usage?: ScriptUsage;
}

export interface ToolUseStep extends StepTiming, StepServedBy {
  /** Said before the call, as its own content block. */
  text?: string;
  /** Several calls in one message are parallel tool calls. */
  toolUse: ToolCall | ToolCall[];
  usage?: ScriptUsage;
}

export interface ScriptedError {
  status: number;
  /** Default: `defaultErrorBody(status)`. An object is sent as JSON, a string as is. */
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Transient: fail this many requests, then let the next step answer in this one's place (it does not
   * count as a turn). Without `times` the error is permanent: every retry of this step fails again.
   */
  times?: number;
}

export interface ErrorStep extends StepTiming {
  error: ScriptedError;
}

/** A step decided when its request arrives, e.g. to use a job id an earlier tool result returned. */
export interface DynamicStep {
  dynamic: (request: ModelRequest) => TextStep | ToolUseStep;
}

export type ScriptStep = TextStep | ToolUseStep | ErrorStep | DynamicStep;

/** How a request was answered. */
export type AnswerKind = 'text' | 'tool_use' | 'error' | 'final' | 'side' | 'unauthorized' | 'bad_request';

export interface AnthropicBlock {
  type: string;
  [key: string]: unknown;
}
export interface AnthropicMessage {
  role: string;
  content: string | AnthropicBlock[];
}

export interface ModelRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: {
    authorization: string | null;
    xApiKey: string | null;
    anthropicVersion: string | null;
    anthropicBeta: string | null;
    httpReferer: string | null;
    xTitle: string | null;
    userAgent: string | null;
    /** `x-claude-code-session-id`: the session the CLI is running. */
    sessionId: string | null;
    /** `x-session-id`: OpenRouter's sticky-routing key. */
    xSessionId: string | null;
  };
  rawHeaders: http.IncomingHttpHeaders;
  /** The key sent as `Authorization: Bearer …` (null when absent). */
  bearer: string | null;
  model: string | null;
  stream: boolean;
  maxTokens: number | null;
  messages: AnthropicMessage[];
  /** Names of the tools offered to the model. */
  tools: string[];
  /** The system prompt's text blocks, joined by newlines. */
  system: string;
  /** The script this request belongs to (null for side requests). */
  script: string | null;
  /** The step index it asked for (assistant messages since the marker). */
  step: number | null;
  answer: AnswerKind;
  status: number;
  /** The `gen-…` id answered (null when an error was answered). */
  messageId: string | null;
  usage: Usage | null;
  /** With `options.promptCache`: the provider endpoint that answered (null otherwise, and for errors). */
  provider: number | null;
  body: Record<string, unknown>;
  /** The request body's size as sent, in bytes (what every turn pays). */
  bytes: number;
}

export interface ScriptedModelOptions {
  prices?: TokenPrices;
  /** When set, any other bearer gets OpenRouter's 401 "User not found." (and no script step is used). */
  apiKey?: string | (() => string);
  /** Passed to `addGeneration` (the generation record appears this late). */
  generationVisibleAfterMs?: number;
  /** Generations are recorded as made by this key (only it may look them up). Default: any key. */
  generationKey?: string;
  /**
   * `output_tokens` in `message_start` (the real API sends a small placeholder; the final count comes
   * in `message_delta`). Default 1.
   */
  startOutputTokens?: number;
  /** Measure each prompt and serve it through this model of OpenRouter's routing and the provider's cache. */
  promptCache?: PromptCacheSim;
}

export interface RecordedGeneration {
  id: string;
  script: string | null;
  model: string;
  usage: Usage;
  costUsd: number;
}

/** Where a request stands in the scripts, from its messages alone. */
export function locateScript(messages: readonly AnthropicMessage[]): { name: string; step: number } | null {
  let name: string | null = null;
  let at = -1;
  for (const [index, message] of messages.entries()) {
    if (message.role !== 'user') continue;
    for (const text of userTexts(message)) {
      for (const match of text.matchAll(MARKER)) {
        name = match[1] ?? null;
        at = index;
      }
    }
  }
  if (name === null) return null;
  const step = messages.slice(at + 1).filter((message) => message.role === 'assistant').length;
  return { name, step };
}

/** The text blocks a user typed (tool results left out). */
export function userTexts(message: AnthropicMessage): string[] {
  if (typeof message.content === 'string') return [message.content];
  return message.content.filter((block) => block.type === 'text' && typeof block.text === 'string').map((block) => block.text as string);
}

/** The delegate's working directory, as Claude Code tells its model (in the first user message's environment). */
export function delegateCwd(request: ModelRequest): string {
  const found = /Primary working directory: (\S+)/.exec(request.messages.map(messageText).join('\n'))?.[1];
  if (!found) throw new Error('Claude Code named no working directory to its model');
  return found;
}

/** All text of a message: text blocks, tool_use inputs and tool_result contents, for loose assertions. */
export function messageText(message: AnthropicMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map(blockText).join('\n');
}

function blockText(block: AnthropicBlock): string {
  if (block.type === 'text') return String(block.text ?? '');
  if (block.type === 'tool_use') return `${String(block.name)} ${JSON.stringify(block.input)}`;
  if (block.type === 'tool_result') {
    const content = block.content;
    if (typeof content === 'string') return content;
    if (Array.isArray(content)) return content.map((part: AnthropicBlock) => blockText(part)).join('\n');
  }
  return '';
}

export interface ToolResult {
  toolUseId: string;
  text: string;
  isError: boolean;
}

/** The tool results a request carries back to the model, in order. */
export function toolResults(request: ModelRequest): ToolResult[] {
  const results: ToolResult[] = [];
  for (const message of request.messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      results.push({ toolUseId: String(block.tool_use_id), text: blockText(block), isError: block.is_error === true });
    }
  }
  return results;
}

/** OpenRouter-like error bodies (the 401 and 402 texts are OpenRouter's own). */
export function defaultErrorBody(status: number, request?: { model: string | null; maxTokens: number | null }): unknown {
  const model = request?.model ?? 'the model';
  switch (status) {
    case 401:
      return { error: { message: 'User not found.', code: 401 } };
    case 402:
      return {
        error: {
          message: `This request requires more credits, or fewer max_tokens. You requested up to ${request?.maxTokens ?? 32000} tokens, but can only afford 1234. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account`,
          code: 402,
        },
      };
    case 429:
      return {
        error: {
          message: `${model} is temporarily rate-limited upstream. Please retry shortly, or add your own key to accumulate your rate limits: https://openrouter.ai/settings/integrations`,
          code: 429,
          metadata: { provider_name: 'DeepSeek', raw: 'Rate limit exceeded' },
        },
      };
    case 529:
      return { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    default:
      return { error: { message: `Scripted error ${status}`, code: status } };
  }
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomAlphanumeric(length: number): string {
  return [...randomBytes(length)].map((byte) => ALPHANUMERIC[byte % ALPHANUMERIC.length]).join('');
}

/** OpenRouter's generation id shape: `gen-<unix seconds>-<20 alphanumerics>`. */
export function generationId(nowMs = Date.now()): string {
  return `gen-${Math.floor(nowMs / 1000)}-${randomAlphanumeric(20)}`;
}

function isError(step: ScriptStep): step is ErrorStep {
  return 'error' in step;
}

function isToolUse(step: ScriptStep): step is ToolUseStep {
  return 'toolUse' in step;
}

function isDynamic(step: ScriptStep): step is DynamicStep {
  return 'dynamic' in step;
}

/** A script's answering turns; transient errors ride on the turn they delay. */
interface Turn {
  step: ScriptStep;
  transient: ErrorStep[];
}

function turnsOf(steps: readonly ScriptStep[]): Turn[] {
  const turns: Turn[] = [];
  let pending: ErrorStep[] = [];
  for (const step of steps) {
    if (isError(step) && step.error.times !== undefined) {
      pending.push(step);
      continue;
    }
    turns.push({ step, transient: pending });
    pending = [];
  }
  if (pending.length > 0) turns.push({ step: { text: FINAL_TEXT }, transient: pending });
  return turns;
}

function header(headers: http.IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) return '';
  return system.map((block) => String(asRecord(block).text ?? '')).join('\n');
}

export class ScriptedModel {
  /** Every `/v1/messages` request, in arrival order (count_tokens ones included). */
  readonly requests: ModelRequest[] = [];
  readonly generations: RecordedGeneration[] = [];
  private readonly scripts = new Map<string, Turn[]>();
  /** How many times each transient error has been served: key `script/turn/index`. */
  private readonly served = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly prices: TokenPrices;

  constructor(
    private readonly fake: FakeOpenRouter,
    private readonly options: ScriptedModelOptions = {},
  ) {
    this.prices = options.prices ?? DEFAULT_TOKEN_PRICES;
    fake.route('POST', MESSAGES_PATH, (request, response) => this.answer(request, response));
    fake.route('POST', COUNT_TOKENS_PATH, (request, response) => this.countTokens(request, response));
  }

  /** Adds or replaces a script; a request whose prompt carries `[[script:NAME]]` plays it. */
  script(name: string, steps: readonly ScriptStep[]): this {
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw new Error(`Script name "${name}" must match [A-Za-z0-9_.-]+ to be usable in a marker`);
    this.scripts.set(name, turnsOf(steps));
    for (const key of this.served.keys()) if (key.startsWith(`${name}/`)) this.served.delete(key);
    return this;
  }

  /** The marker to put in a prompt. */
  static marker(name: string): string {
    return `[[script:${name}]]`;
  }

  requestsFor(name: string): ModelRequest[] {
    return this.requests.filter((request) => request.script === name);
  }

  lastRequestFor(name: string): ModelRequest {
    const request = this.requestsFor(name).at(-1);
    if (!request) {
      const seen = [...new Set(this.requests.map((r) => r.script ?? '(side)'))].join(', ') || 'none';
      throw new Error(`No request played script "${name}" (requests seen: ${seen})`);
    }
    return request;
  }

  /** Requests without a marker: Claude Code's own title/quota/… calls. */
  get sideRequests(): ModelRequest[] {
    return this.requests.filter((request) => request.script === null);
  }

  costOf(usage: Usage): number {
    return costOf(usage, this.prices);
  }

  /** Clears pending delayed answers (the fake's stop() closes their sockets). */
  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private parse(request: RecordedRequest): ModelRequest {
    let body: Record<string, unknown> = {};
    try {
      body = asRecord(JSON.parse(request.body) as unknown);
    } catch {
      body = {};
    }
    const authorization = header(request.headers, 'authorization');
    const messages = Array.isArray(body.messages) ? (body.messages as AnthropicMessage[]) : [];
    const tools = Array.isArray(body.tools) ? body.tools.map((tool) => String(asRecord(tool).name ?? '')) : [];
    return {
      method: request.method,
      path: request.path,
      query: request.query,
      headers: {
        authorization,
        xApiKey: header(request.headers, 'x-api-key'),
        anthropicVersion: header(request.headers, 'anthropic-version'),
        anthropicBeta: header(request.headers, 'anthropic-beta'),
        httpReferer: header(request.headers, 'http-referer'),
        xTitle: header(request.headers, 'x-title'),
        userAgent: header(request.headers, 'user-agent'),
        sessionId: header(request.headers, 'x-claude-code-session-id'),
        xSessionId: header(request.headers, 'x-session-id'),
      },
      rawHeaders: request.headers,
      bearer: authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : null,
      model: typeof body.model === 'string' ? body.model : null,
      stream: body.stream === true,
      maxTokens: typeof body.max_tokens === 'number' ? body.max_tokens : null,
      messages,
      tools,
      system: systemText(body.system),
      script: null,
      step: null,
      answer: 'side',
      status: 200,
      messageId: null,
      usage: null,
      provider: null,
      body,
      bytes: Buffer.byteLength(request.body),
    };
  }

  private answer(recorded: RecordedRequest, response: http.ServerResponse): void {
    const request = this.parse(recorded);
    this.requests.push(request);
    if (!Array.isArray(request.body.messages) || request.model === null) {
      request.answer = 'bad_request';
      return this.sendError(request, response, {
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages and model are required' } },
      });
    }
    const apiKey = typeof this.options.apiKey === 'function' ? this.options.apiKey() : this.options.apiKey;
    if (apiKey !== undefined && request.bearer !== apiKey) {
      request.answer = 'unauthorized';
      return this.sendError(request, response, { status: 401, body: defaultErrorBody(401) });
    }
    const located = locateScript(request.messages);
    if (located === null) return this.sendMessage(request, response, { text: SIDE_TEXT }, 'side');
    request.script = located.name;
    request.step = located.step;
    const turns = this.scripts.get(located.name);
    if (!turns) {
      request.answer = 'bad_request';
      return this.sendError(request, response, {
        status: 400,
        body: { error: { message: `fake: no script named "${located.name}" is registered`, code: 400 } },
      });
    }
    const turn = turns[located.step];
    if (!turn) return this.sendMessage(request, response, { text: FINAL_TEXT }, 'final');
    const transient = this.nextTransient(located.name, located.step, turn);
    const step = transient ?? (isDynamic(turn.step) ? turn.step.dynamic(request) : turn.step);
    this.later(step.delayMs, response, () => {
      if (isError(step)) {
        request.answer = 'error';
        return this.sendError(request, response, step.error);
      }
      this.sendMessage(request, response, step, isToolUse(step) ? 'tool_use' : 'text');
    });
  }

  private nextTransient(name: string, turnIndex: number, turn: Turn): ErrorStep | null {
    for (const [index, step] of turn.transient.entries()) {
      const key = `${name}/${turnIndex}/${index}`;
      const count = this.served.get(key) ?? 0;
      if (count < (step.error.times ?? 0)) {
        this.served.set(key, count + 1);
        return step;
      }
    }
    return null;
  }

  private later(delayMs: number | undefined, response: http.ServerResponse, answer: () => void): void {
    if (!delayMs) return answer();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!response.destroyed) answer();
    }, delayMs);
    this.timers.add(timer);
    response.on('close', () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    });
  }

  private sendError(request: ModelRequest, response: http.ServerResponse, error: ScriptedError): void {
    request.status = error.status;
    const body = error.body === undefined ? defaultErrorBody(error.status, request) : error.body;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    if (response.destroyed || response.headersSent) return;
    response.writeHead(error.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...error.headers });
    response.end(text);
  }

  private sendMessage(request: ModelRequest, response: http.ServerResponse, step: TextStep | ToolUseStep, kind: AnswerKind): void {
    if (response.destroyed || response.headersSent) return;
    const id = generationId();
    const cached = this.options.promptCache?.serve(request);
    const usage: Usage = { ...DEFAULT_USAGE, ...cached?.usage, ...step.usage };
    request.provider = cached?.provider ?? null;
    const model = step.model ?? request.model ?? 'unknown';
    const provider = step.provider === undefined ? {} : { provider: step.provider };
    const content: AnthropicBlock[] = [];
    if (step.thinking !== undefined) content.push({ type: 'thinking', thinking: step.thinking, signature: randomBytes(24).toString('base64') });
    if (step.text !== undefined) content.push({ type: 'text', text: step.text });
    if (isToolUse(step)) {
      const calls = Array.isArray(step.toolUse) ? step.toolUse : [step.toolUse];
      for (const call of calls) content.push({ type: 'tool_use', id: call.id ?? `toolu_01${randomAlphanumeric(22)}`, name: call.name, input: call.input });
    }
    const stopReason = isToolUse(step) ? 'tool_use' : 'end_turn';
    request.answer = kind;
    request.messageId = id;
    request.usage = usage;
    const costUsd = this.costOf(usage);
    this.generations.push({ id, script: request.script, model, usage, costUsd });
    // What it cost is charged to the key it came with, so that key's own limit is enforced by the fake.
    this.fake.charge(request.bearer, costUsd);
    this.fake.addGeneration({
      id,
      madeBy: request.bearer,
      model,
      totalCost: costUsd,
      tokensPrompt: usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
      tokensCompletion: usage.output_tokens,
      ...(this.options.generationKey === undefined ? {} : { key: this.options.generationKey }),
      ...(this.options.generationVisibleAfterMs === undefined ? {} : { visibleAfterMs: this.options.generationVisibleAfterMs }),
    });
    if (!request.stream) {
      const text = JSON.stringify({ id, type: 'message', role: 'assistant', model, ...provider, content, stop_reason: stopReason, stop_sequence: null, usage });
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const event = (type: string, data: Record<string, unknown>) => response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        ...provider,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: this.options.startOutputTokens ?? 1 },
      },
    });
    event('ping', {});
    content.forEach((block, index) => {
      if (block.type === 'text') {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        // Two deltas, so the client really assembles the text.
        const text = String(block.text);
        const cut = Math.ceil(text.length / 2);
        for (const part of [text.slice(0, cut), text.slice(cut)]) {
          if (part) event('content_block_delta', { index, delta: { type: 'text_delta', text: part } });
        }
      } else if (block.type === 'thinking') {
        event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } });
        event('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
      } else {
        event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
        const json = JSON.stringify(block.input);
        const cut = Math.ceil(json.length / 2);
        for (const part of [json.slice(0, cut), json.slice(cut)]) {
          if (part) event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } });
        }
      }
      event('content_block_stop', { index });
    });
    event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage });
    event('message_stop', {});
    response.end();
  }

  /** Anthropic's token counter: a rough estimate (4 characters a token). Not used by 2.1.332 in `-p`. */
  private countTokens(recorded: RecordedRequest, response: http.ServerResponse): void {
    const request = this.parse(recorded);
    this.requests.push(request);
    const text = JSON.stringify({ input_tokens: Math.ceil(recorded.body.length / 4) });
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  }
}

export function installScriptedModel(fake: FakeOpenRouter, options: ScriptedModelOptions = {}): ScriptedModel {
  return new ScriptedModel(fake, options);
}
