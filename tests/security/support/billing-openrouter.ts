/**
 * A fake OpenRouter Messages API that BILLS THE TOKENS IT COUNTS (SECURITY.md §2, the caps): what a hostile
 * delegate costs is what this counts, never what the gateway believes. Installed on a FakeOpenRouter for
 * `POST /api/v1/messages` and `POST /api/v1/messages/count_tokens`, like ScriptedModel. Installed after a
 * ScriptedModel, it keeps that model's handlers: a request carrying a `[[script:NAME]]` marker (locateScript)
 * goes to the scripted model (a real delegate's own turns), everything else is counted and billed here.
 *
 * Three ways to count (BillingMode: `mode` in the options, or set on the fake between requests), because the first,
 * the token counter below, was written from the same list of fields as the gateway's bound: a delegate that puts
 * 2 MB in a field neither reads (tool_use.id, tool_result.tool_use_id, text.citations, thinking.signature, metadata
 * …) would pass under both. A bound covers everything by construction (STYLE.md §20), so the gateway must hold
 * under all three, and the other two share none of its code nor its list of fields:
 *  - 'parsed' (the default): the token counter below, over the fields it names.
 *  - 'every-byte': a token per byte of the body as received, whatever field the byte sits in (a byte-level BPE
 *    never spends more than a token on a byte of what it is shown, and a provider may be shown all of it). One
 *    named exception, everyByteTokens: an image block (in a message's content, a tool_result's content or a
 *    document's content source) whose data is canonical base64 of an image of its media_type (image-dimensions.ts
 *    reads the header) is billed by its pixels instead of its data's bytes: imageTokens(w, h) = max(IMAGE_TOKENS,
 *    ceil(w·h / 784)), a token per 28×28 patch (Qwen2-VL's, the finest known). Bytes that are not what their
 *    media_type says are billed as bytes.
 *  - 'json-dumps': as every-byte, but each tool_use block's input and each entry of `tools` costs the bytes Python's
 *    json.dumps prints for it (python-json.ts) instead of its compact JSON: a provider's chat template re-renders
 *    them so, a space after each ',' and ':', and every non-ASCII character as \uXXXX (é 6 bytes, an emoji 12).
 *
 * The token counter: this fake's model of a byte-level BPE tokenizer, at its worst.
 *  - Overhead: 4 tokens per message, 2 per content block (a string `content` or `system` is one block; each
 *    tool is a block; blocks nested in a tool_result count as blocks too).
 *  - Text counted: system, text blocks, tool_use name + input (as compact JSON), tool_result content, thinking
 *    text (and redacted_thinking data), a document's text source, each tool's name + description + input_schema
 *    (as compact JSON). An image block, or a document that is not plain text, costs IMAGE_TOKENS. Any other block
 *    is counted as its compact JSON. No other field is counted (model, metadata, max_tokens …), and JSON
 *    whitespace between the body's tokens costs nothing: the body is parsed first.
 *  - Text is split by the pre-tokenizer / ?[A-Za-z]+| ?[0-9]+|[\t\n\v\f\r ]+|./u (a single space before a run of
 *    letters or digits belongs to it, as GPT-2's ` ?\p{L}+`): a run of ASCII whitespace costs ceil(len/16); of
 *    ASCII letters ceil(letters/4); of digits ceil(digits/3); every other character (punctuation, symbols,
 *    anything non-ASCII, Unicode spaces included) one token per byte of its UTF-8. So prose and code run about a
 *    token per 3–4 bytes, whitespace is almost free, and dense punctuation or rare Unicode costs a token per
 *    byte — never more than one token per byte of text, plus the overheads above.
 *
 * The answer: `min(max_tokens, outputTokens(body))` output tokens (default: all of max_tokens), as the Messages
 * API's SSE (message_start with the counted prompt as input_tokens, deltas of `tokensPerDelta` tokens every
 * `deltaIntervalMs`, message_delta with the output) or as one JSON message when `stream` is not true. A
 * max_tokens that is not a positive integer, or above `maxOutputTokens`, gets the API's 400, unbilled.
 *
 * Billing: each answered request is billed (prompt × input price + output × output price + SURCHARGES) and
 * registered as a generation (`fake.addGeneration`) under its message id. A request whose client hangs up
 * mid-stream is billed for its WHOLE completion (a provider without stream cancellation); one hung up before
 * the headers (during `firstByteDelayMs`) for its prompt. The ledger keeps, per request, the session
 * (`x-session-id`, the job's session the gateway sends), the counted tokens, the cost and the body's top-level
 * field names, and the mode it was counted in, so tests assert on what reached OpenRouter and what it cost.
 *
 * `echoKeyNext(status, times)`: the next request(s) (scripted or not) are answered 400/401 with
 * `{"error":{"message":"Invalid key: <the bearer it received>"}}` and `x-echo-authorization: <its Authorization>`.
 */
import type http from 'node:http';
import type { FakeOpenRouter, RecordedRequest, RouteHandler } from '../../support/fake-openrouter.js';
import { COUNT_TOKENS_PATH, MESSAGES_PATH, generationId, locateScript } from '../../support/fake-anthropic.js';
import type { AnthropicMessage } from '../../support/fake-anthropic.js';
import { imageDimensions } from './image-dimensions.js';
import { pythonJsonDumps } from './python-json.js';

/** What an image block costs (Anthropic's figure for an image at its largest size). */
export const IMAGE_TOKENS = 1600;
/** The fewest pixels any known vision encoder spends a token on: Qwen2-VL's 28×28 patch. */
const PIXELS_PER_IMAGE_TOKEN = 28 * 28;
const MESSAGE_OVERHEAD = 4;
const BLOCK_OVERHEAD = 2;
/**
 * What a smuggled server-side feature costs on top of the tokens: OpenRouter's web plugin ($4 per 1,000 results,
 * 5 results a request) and Anthropic's web_search server tool ($10 per 1,000 searches, `max_uses` of them at most).
 */
export const SURCHARGES = { webPluginUsd: 0.02, webSearchUsdEach: 0.01 };

export interface BillingPrices {
  /** USD per million tokens. */
  inputPerM: number;
  outputPerM: number;
}

/** How a request's prompt is counted: the file's comment says each and why there are three. */
export type BillingMode = 'parsed' | 'every-byte' | 'json-dumps';
export const BILLING_MODES: readonly BillingMode[] = ['parsed', 'every-byte', 'json-dumps'];

export interface BillingOpenRouterOptions {
  /** Default 'parsed'. */
  mode?: BillingMode;
  /** Default $1/M in, $2/M out. */
  prices?: BillingPrices;
  /** When set, any other bearer gets OpenRouter's 401 "User not found." (unbilled). */
  apiKey?: string;
  /** Output tokens per content_block_delta (default 50). */
  tokensPerDelta?: number;
  /** Pause between deltas (default 0: as fast as the client takes them). */
  deltaIntervalMs?: number;
  /** Pause before the status and headers (default 0), so a hang-up can land before them. */
  firstByteDelayMs?: number;
  /** The model's largest max_tokens (default 131,072): a request above it gets the API's 400. */
  maxOutputTokens?: number;
  /** Passed to addGeneration: the record appears this late. */
  generationVisibleAfterMs?: number;
}

export type BilledOutcome = 'answered' | 'hung_up_mid_stream' | 'hung_up_before_headers' | 'refused' | 'key_echoed' | 'counted';

export interface BilledRequest {
  kind: 'messages' | 'count_tokens';
  /** The generation (and message) id; null when nothing was generated. */
  id: string | null;
  /** `x-session-id` as received: the job's session. */
  sessionId: string | null;
  status: number;
  outcome: BilledOutcome;
  /** The count promptTokens was made by. */
  mode: BillingMode;
  promptTokens: number;
  outputTokens: number;
  costUsd: number;
  /** The body's top-level field names, as parsed (so `__proto__` shows). */
  fields: string[];
  /** The `type` of each tool that has one other than `custom` (server tools such as `web_search_20250305`). */
  serverTools: string[];
  /** Image and document blocks whose source is a URL (OpenRouter would fetch it). */
  urlSources: number;
  bodyBytes: number;
  stream: boolean;
  maxTokens: unknown;
}

// ---- the counter -------------------------------------------------------------------------------------------

function isWhitespace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13);
}
function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}
function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Tokens of one text, by the pre-tokenizer in this file's comment (a loop, not a regex: prompts run to 32 MiB). */
export function countTextTokens(text: string): number {
  let tokens = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const code = text.charCodeAt(i);
    const next = i + 1 < n ? text.charCodeAt(i + 1) : -1;
    // A single space before letters or digits belongs to them.
    const start = code === 32 && (isLetter(next) || isDigit(next)) ? i + 1 : i;
    const first = text.charCodeAt(start);
    if (start < n && isLetter(first)) {
      let j = start;
      while (j < n && isLetter(text.charCodeAt(j))) j++;
      tokens += Math.ceil((j - start) / 4);
      i = j;
    } else if (start < n && isDigit(first)) {
      let j = start;
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      tokens += Math.ceil((j - start) / 3);
      i = j;
    } else if (isWhitespace(code)) {
      let j = i;
      while (j < n && isWhitespace(text.charCodeAt(j))) j++;
      tokens += Math.ceil((j - i) / 16);
      i = j;
    } else if (code < 0x80) {
      tokens += 1;
      i += 1;
    } else if (code < 0x800) {
      tokens += 2;
      i += 1;
    } else if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      tokens += 4;
      i += 2;
    } else {
      // The rest of the BMP, and a lone surrogate (sent as U+FFFD): three bytes.
      tokens += 3;
      i += 1;
    }
  }
  return tokens;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function jsonTokens(value: unknown): number {
  const text = value === undefined ? '' : JSON.stringify(value);
  return text === undefined ? 0 : countTextTokens(text);
}

function stringTokens(value: unknown): number {
  return typeof value === 'string' ? countTextTokens(value) : 0;
}

/** One content block, its overhead included. */
function blockTokens(block: unknown): number {
  const b = record(block);
  let tokens = BLOCK_OVERHEAD;
  switch (b.type) {
    case 'text':
      tokens += stringTokens(b.text);
      break;
    case 'tool_use':
    case 'server_tool_use':
      tokens += stringTokens(b.name) + jsonTokens(b.input ?? {});
      break;
    case 'tool_result':
      tokens += contentTokens(b.content);
      break;
    case 'thinking':
      tokens += stringTokens(b.thinking);
      break;
    case 'redacted_thinking':
      tokens += stringTokens(b.data);
      break;
    case 'image':
      tokens += IMAGE_TOKENS;
      break;
    case 'document': {
      const source = record(b.source);
      tokens += source.type === 'text' ? stringTokens(source.data) : IMAGE_TOKENS;
      break;
    }
    default:
      tokens += jsonTokens(block);
  }
  return tokens;
}

/** A `content` (or `system`): a string is one text block; an array is its blocks. */
function contentTokens(content: unknown): number {
  if (typeof content === 'string') return BLOCK_OVERHEAD + countTextTokens(content);
  if (!Array.isArray(content)) return 0;
  let tokens = 0;
  for (const block of content) tokens += blockTokens(block);
  return tokens;
}

/** The prompt tokens of a parsed Messages request body, by the counter in this file's comment. */
export function countPromptTokens(body: Record<string, unknown>): number {
  let tokens = body.system === undefined ? 0 : contentTokens(body.system);
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) tokens += MESSAGE_OVERHEAD + contentTokens(record(message).content);
  }
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      const t = record(tool);
      tokens += BLOCK_OVERHEAD + stringTokens(t.name) + stringTokens(t.description) + (t.input_schema === undefined ? 0 : jsonTokens(t.input_schema));
    }
  }
  return tokens;
}

// ---- every byte, and json.dumps ------------------------------------------------------------------------------

/** What an image of width × height pixels costs when billed by its pixels (the file's comment). */
export function imageTokens(width: number, height: number): number {
  return Math.max(IMAGE_TOKENS, Math.ceil((width * height) / PIXELS_PER_IMAGE_TOKEN));
}

/** The blocks a provider renders as blocks: each message's content, and within it tool_result and document content. */
function renderedBlocks(body: Record<string, unknown>): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = [];
  const visit = (content: unknown): void => {
    if (!Array.isArray(content)) return;
    for (const block of content) {
      const b = record(block);
      blocks.push(b);
      if (b.type === 'tool_result') visit(b.content);
      const source = record(b.source);
      if (b.type === 'document' && source.type === 'content') visit(source.content);
    }
  };
  if (Array.isArray(body.messages)) for (const message of body.messages) visit(record(message).content);
  return blocks;
}

/**
 * An image block billed by its pixels: its data's bytes (which every-byte takes back) and its tokens. Null (billed
 * by its bytes) unless the data is canonical base64 (Buffer would skip stray characters: 2 MB of them after a small
 * image's header would pass for the image) that decodes to an image of its media_type.
 */
function pixelBilledImage(block: Record<string, unknown>): { dataBytes: number; tokens: number } | null {
  const source = record(block.source);
  const { media_type: mediaType, data } = source;
  if (block.type !== 'image' || source.type !== 'base64' || typeof mediaType !== 'string' || typeof data !== 'string') return null;
  if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(data)) return null;
  const size = imageDimensions(mediaType, Buffer.from(data, 'base64'));
  return size ? { dataBytes: data.length, tokens: imageTokens(size.width, size.height) } : null;
}

/** The 'every-byte' count: a token per byte of `rawBody`, but pixels for an image (the file's comment). `parsed` is its JSON.parse. */
export function everyByteTokens(rawBody: string, parsed: Record<string, unknown> | null): number {
  let tokens = Buffer.byteLength(rawBody);
  if (parsed === null) return tokens;
  for (const block of renderedBlocks(parsed)) {
    const image = pixelBilledImage(block);
    if (image) tokens += image.tokens - image.dataBytes;
  }
  return tokens;
}

/** The 'json-dumps' count: every-byte, with each tool_use input and each tool at its json.dumps length, not its compact JSON's. */
export function jsonDumpsTokens(rawBody: string, parsed: Record<string, unknown> | null): number {
  let tokens = everyByteTokens(rawBody, parsed);
  if (parsed === null) return tokens;
  const inputs = renderedBlocks(parsed).filter((block) => block.type === 'tool_use' && block.input !== undefined);
  const parts = [...inputs.map((block) => block.input), ...(Array.isArray(parsed.tools) ? parsed.tools : [])];
  // json.dumps prints ASCII only: its length is its bytes.
  for (const part of parts) tokens += pythonJsonDumps(part).length - Buffer.byteLength(JSON.stringify(part));
  return tokens;
}

/** A request's prompt tokens as `mode` counts them. */
export function billedPromptTokens(mode: BillingMode, rawBody: string, parsed: Record<string, unknown>): number {
  if (mode === 'every-byte') return everyByteTokens(rawBody, parsed);
  if (mode === 'json-dumps') return jsonDumpsTokens(rawBody, parsed);
  return countPromptTokens(parsed);
}

/** What smuggled server-side features add to a request's bill (SURCHARGES). */
export function surchargeUsd(body: Record<string, unknown>): number {
  let usd = 0;
  if (Array.isArray(body.plugins) && body.plugins.some((p) => record(p).id === 'web')) usd += SURCHARGES.webPluginUsd;
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      const t = record(tool);
      if (typeof t.type === 'string' && t.type.startsWith('web_search')) {
        const uses = typeof t.max_uses === 'number' && Number.isFinite(t.max_uses) ? Math.max(0, Math.floor(t.max_uses)) : 5;
        usd += uses * SURCHARGES.webSearchUsdEach;
      }
    }
  }
  return usd;
}

/** The server tools a body asks for (a tool with a `type` of its own). */
function serverTools(body: Record<string, unknown>): string[] {
  if (!Array.isArray(body.tools)) return [];
  return body.tools.map((tool) => record(tool).type).filter((type): type is string => typeof type === 'string' && type !== 'custom');
}

/** Blocks anywhere in the system prompt and the messages (tool results included) whose source is a URL. */
function urlSources(body: Record<string, unknown>): number {
  let count = 0;
  const visit = (content: unknown): void => {
    if (!Array.isArray(content)) return;
    for (const block of content) {
      const b = record(block);
      if (record(b.source).type === 'url') count++;
      visit(b.content);
    }
  };
  visit(body.system);
  if (Array.isArray(body.messages)) for (const message of body.messages) visit(record(message).content);
  return count;
}

// ---- the fake ----------------------------------------------------------------------------------------------

const DELTA_WORD = ' word';

function header(headers: http.IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

function sendJson(res: http.ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.headersSent) return;
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function apiError(message: string): unknown {
  return { type: 'error', error: { type: 'invalid_request_error', message } };
}

export class BillingOpenRouter {
  readonly ledger: BilledRequest[] = [];
  /** How the next request's prompt is counted. */
  mode: BillingMode;
  prices: BillingPrices;
  tokensPerDelta: number;
  deltaIntervalMs: number;
  firstByteDelayMs: number;
  maxOutputTokens: number;
  /** The output the test asks for (capped at max_tokens); null: all of max_tokens. */
  outputTokens: ((body: Record<string, unknown>) => number) | null = null;
  private readonly scripted: { messages: RouteHandler | null; countTokens: RouteHandler | null };
  private readonly echoes: Array<400 | 401> = [];
  private readonly pauses = new Set<() => void>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly fake: FakeOpenRouter,
    private readonly options: BillingOpenRouterOptions = {},
  ) {
    this.mode = options.mode ?? 'parsed';
    this.prices = options.prices ?? { inputPerM: 1, outputPerM: 2 };
    this.tokensPerDelta = options.tokensPerDelta ?? 50;
    this.deltaIntervalMs = options.deltaIntervalMs ?? 0;
    this.firstByteDelayMs = options.firstByteDelayMs ?? 0;
    this.maxOutputTokens = options.maxOutputTokens ?? 131_072;
    // A scripted model installed before this one plays the requests that carry its marker.
    this.scripted = { messages: fake.routeHandler('POST', MESSAGES_PATH), countTokens: fake.routeHandler('POST', COUNT_TOKENS_PATH) };
    fake.route('POST', MESSAGES_PATH, (request, res) => this.track(this.answer(request, res, 'messages')));
    fake.route('POST', COUNT_TOKENS_PATH, (request, res) => this.track(this.answer(request, res, 'count_tokens')));
  }

  /** The next request (the next `times`) is answered with an error that echoes the key it came with (body and header). */
  echoKeyNext(status: 400 | 401 = 401, times = 1): void {
    for (let i = 0; i < times; i++) this.echoes.push(status);
  }

  /** Forgets the echoes no request has met yet. */
  clearEchoes(): void {
    this.echoes.length = 0;
  }

  /** What was billed to one session (a job), in USD. */
  billedFor(sessionId: string): number {
    return this.ledger.filter((r) => r.sessionId === sessionId).reduce((sum, r) => sum + r.costUsd, 0);
  }

  get billedTotal(): number {
    return this.ledger.reduce((sum, r) => sum + r.costUsd, 0);
  }

  /** The dearest single request billed to `sessionId` (to all, without one). */
  largestFor(sessionId?: string): number {
    return this.ledger.filter((r) => sessionId === undefined || r.sessionId === sessionId).reduce((max, r) => Math.max(max, r.costUsd), 0);
  }

  requestsFor(sessionId: string): BilledRequest[] {
    return this.ledger.filter((r) => r.sessionId === sessionId);
  }

  costOf(promptTokens: number, outputTokens: number): number {
    return (promptTokens * this.prices.inputPerM + outputTokens * this.prices.outputPerM) / 1e6;
  }

  /** Resolves once every answer under way has been billed (streams end when their clients hang up or the fake stops). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Ends every pause under way (the fake's stop() closes the sockets). */
  stop(): void {
    for (const wake of this.pauses) wake();
    this.pauses.clear();
  }

  private track(work: Promise<void>): Promise<void> {
    this.inFlight.add(work);
    return work.finally(() => this.inFlight.delete(work));
  }

  private async answer(request: RecordedRequest, res: http.ServerResponse, kind: BilledRequest['kind']): Promise<void> {
    let body: Record<string, unknown> | null = null;
    try {
      const parsed: unknown = JSON.parse(request.body);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      body = null;
    }
    const authorization = header(request.headers, 'authorization');
    const bearer = authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : null;
    const entry: BilledRequest = {
      kind,
      id: null,
      sessionId: header(request.headers, 'x-session-id'),
      status: 0,
      outcome: 'refused',
      mode: this.mode,
      promptTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      fields: body ? Object.keys(body) : [],
      serverTools: body ? serverTools(body) : [],
      urlSources: body ? urlSources(body) : 0,
      bodyBytes: Buffer.byteLength(request.body),
      stream: body?.stream === true,
      maxTokens: body?.max_tokens,
    };
    const echo = this.echoes.shift();
    if (echo !== undefined) {
      this.ledger.push({ ...entry, status: echo, outcome: 'key_echoed' });
      return sendJson(res, echo, { error: { message: `Invalid key: ${bearer ?? ''}`, code: echo } }, { 'x-echo-authorization': authorization ?? '' });
    }
    const messages = body && Array.isArray(body.messages) ? (body.messages as AnthropicMessage[]) : null;
    const scripted = kind === 'messages' ? this.scripted.messages : this.scripted.countTokens;
    if (scripted && messages && locateScript(messages) !== null) return scripted(request, res);

    const refuse = (status: number, value: unknown) => {
      this.ledger.push({ ...entry, status, outcome: 'refused' });
      sendJson(res, status, value);
    };
    if (this.options.apiKey !== undefined && bearer !== this.options.apiKey) return refuse(401, { error: { message: 'User not found.', code: 401 } });
    if (!body || !messages || typeof body.model !== 'string') return refuse(400, apiError('model: Field required; messages: Field required'));
    const model = body.model;
    entry.promptTokens = billedPromptTokens(entry.mode, request.body, body);
    if (kind === 'count_tokens') {
      this.ledger.push({ ...entry, status: 200, outcome: 'counted' });
      return sendJson(res, 200, { input_tokens: entry.promptTokens });
    }
    const maxTokens = body.max_tokens;
    if (typeof maxTokens !== 'number' || !Number.isSafeInteger(maxTokens) || maxTokens < 1)
      return refuse(400, apiError('max_tokens: must be a positive integer'));
    if (maxTokens > this.maxOutputTokens) return refuse(400, apiError(`max_tokens: ${maxTokens} > ${this.maxOutputTokens}, the maximum for ${body.model}`));

    const asked = this.outputTokens ? this.outputTokens(body) : maxTokens;
    const output = Math.max(0, Math.min(maxTokens, Math.floor(asked)));
    const id = generationId();
    const surcharge = surchargeUsd(body);
    const bill = (outputTokens: number, outcome: BilledOutcome, status: number) => {
      const costUsd = this.costOf(entry.promptTokens, outputTokens) + surcharge;
      this.ledger.push({ ...entry, id, status, outcome, outputTokens, costUsd });
      this.fake.addGeneration({
        id,
        model,
        totalCost: costUsd,
        tokensPrompt: entry.promptTokens,
        tokensCompletion: outputTokens,
        ...(this.options.generationVisibleAfterMs === undefined ? {} : { visibleAfterMs: this.options.generationVisibleAfterMs }),
      });
    };

    const gone = hangUp(res);
    if (this.firstByteDelayMs > 0) await this.pause(this.firstByteDelayMs, gone);
    // Gone before the headers: the provider has read the prompt.
    if (gone.done) return bill(0, 'hung_up_before_headers', 0);
    if (body.stream !== true) {
      bill(output, 'answered', 200);
      return sendJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: DELTA_WORD.repeat(Math.min(output, 1000)).trim() }],
        stop_reason: output < maxTokens ? 'end_turn' : 'max_tokens',
        stop_sequence: null,
        usage: { input_tokens: entry.promptTokens, output_tokens: output, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      });
    }
    const finished = await this.stream(res, gone, { id, model, promptTokens: entry.promptTokens, output, maxTokens });
    // Hung up mid-stream: the provider generates (and bills) the whole completion all the same.
    bill(output, finished ? 'answered' : 'hung_up_mid_stream', finished ? 200 : 0);
  }

  /** Streams the answer; false when the client hung up before its end. */
  private async stream(
    res: http.ServerResponse,
    gone: { done: boolean; wait: Promise<void> },
    answer: { id: string; model: string; promptTokens: number; output: number; maxTokens: number },
  ): Promise<boolean> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const write = async (type: string, data: Record<string, unknown>): Promise<boolean> => {
      if (gone.done || res.destroyed) return false;
      if (!res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)) {
        await Promise.race([new Promise((resolve) => res.once('drain', resolve)), gone.wait]);
      }
      return !gone.done;
    };
    const usage = { input_tokens: answer.promptTokens, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    const start = { id: answer.id, type: 'message', role: 'assistant', model: answer.model, content: [], stop_reason: null, stop_sequence: null, usage };
    if (!(await write('message_start', { message: start }))) return false;
    await write('ping', {});
    await write('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    for (let sent = 0; sent < answer.output; sent += this.tokensPerDelta) {
      const tokens = Math.min(this.tokensPerDelta, answer.output - sent);
      if (!(await write('content_block_delta', { index: 0, delta: { type: 'text_delta', text: DELTA_WORD.repeat(tokens) } }))) return false;
      if (this.deltaIntervalMs > 0) await this.pause(this.deltaIntervalMs, gone);
    }
    await write('content_block_stop', { index: 0 });
    const stopReason = answer.output < answer.maxTokens ? 'end_turn' : 'max_tokens';
    await write('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: answer.output } });
    if (!(await write('message_stop', {}))) return false;
    res.end();
    return true;
  }

  private pause(ms: number, gone: { wait: Promise<void> }): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.pauses.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.pauses.add(wake);
      void gone.wait.then(wake);
    });
  }
}

/** Whether the client has gone before the answer ended, and a promise for when it does. */
function hangUp(res: http.ServerResponse): { readonly done: boolean; wait: Promise<void> } {
  let done = false;
  const wait = new Promise<void>((resolve) => {
    res.once('close', () => {
      if (!res.writableFinished) done = true;
      resolve();
    });
  });
  return {
    get done() {
      return done;
    },
    wait,
  };
}

/** A token-dense text of about `bytes` bytes: punctuation a byte-level BPE pays one token a byte for. */
export function denseText(bytes: number, seed = 0): string {
  // No quote or backslash: each character is one byte of the JSON body too.
  const alphabet = "{}[]()<>;:,.!?@#$%^&*~|=+-_/`'";
  let text = '';
  const unit = Array.from({ length: 997 }, (_, i) => alphabet[(i * 7 + seed) % alphabet.length]).join('');
  while (text.length < bytes) text += unit;
  return text.slice(0, bytes);
}
