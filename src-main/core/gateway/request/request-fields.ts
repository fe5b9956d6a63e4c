/**
 * What a delegate's request may carry upstream (docs/ARCHITECTURE.md §11, SECURITY.md §2): exactly what the pinned
 * Claude Code sends, and nothing OpenRouter or a provider would bill outside token prices unless the user allows it.
 * The ceiling prices a request by its bytes and `max_tokens`; a field that buys a web search, an OCR pass or a fetched
 * page, or routes to dearer models or tiers, costs money no cap sees. So a body is held to an allowlist, top-level
 * fields and every place a block can sit: each message's content, tool_result content, a document's content source,
 * system blocks, tool definitions, cache_control, context_management's edits. One walk over the blocks, never over
 * the strings, so it stays cheap on a 32 MiB body; the first thing refused is named, by its path.
 *
 * The allowlist is what tests/fixtures/claude/request-shapes-<version>.json shows: OUR capture of the pinned CLI
 * (scripts/capture-claude-requests.ts), in every scenario a delegate goes through. Nothing in CI re-captures it: when
 * the Claude Code pin moves, run the script by hand, read the diff, and widen these sets only for what the new CLI
 * really sends (tests/core/gateway/request/request-fields.test.ts holds every captured shape to this module). Beyond the
 * capture this accepts only what has no cost effect: the sampling fields (`temperature`, `top_p`, `top_k`,
 * `stop_sequences`: the answer stays bounded by `max_tokens`), `redacted_thinking` blocks (Claude Code hands back
 * whatever thinking the model returned), and the Messages API's descriptive block fields (`citations`, a document's
 * `title` and `context`). The values of `thinking`, `output_config`, `tool_choice` and `metadata` are not looked into:
 * they are the Messages API's own and cost nothing beyond what `max_tokens` already bounds.
 *
 * What the caller (the gateway) must do besides:
 *  - `/v1/messages`: `provider`, `fallbacks` and `models` are accepted here ONLY because the gateway drops them and
 *    sends the user's provider policy and the job's fallbacks instead (REWRITTEN_FIELDS). Forward none of them as sent.
 *  - `/v1/messages/count_tokens` (`counting: true`): they are refused here, since nothing is rewritten there.
 *  - `allow` comes from the user's `settings.gateway.allowServerTools` (one switch for both today).
 *  - A refusal is a 400 `invalid_request_error` with `message`; Claude Code does not retry a 400.
 *  - The model (`:online` suffixes included) is checked by the gateway itself against the job's, not here.
 *
 * Known gap, not closable here: a base64 PDF `document` (what Claude Code's Read sends for a .pdf) may be parsed by
 * OpenRouter with a paid engine when the model reads no files natively (its docs have named mistral-ocr, $2 per 1,000
 * pages, as the default); the gateway would have to pin a free engine to close it.
 */
import { isRecord } from '../../../common/errors.js';
import { formatCount, truncateEnd } from '../../../common/format.js';
import { SETTING_META } from '../../../contract/index.js';

export interface RequestFieldOptions {
  /** `/v1/messages/count_tokens` rather than `/v1/messages`. */
  counting: boolean;
  allow: {
    /** Tools with a `type` (web_search_*, web_fetch_*, code_execution_*, openrouter:web_search …) and their result blocks. */
    serverTools: boolean;
    /** Images and documents whose source is a URL: fetched (and parsed) upstream. */
    urlSources: boolean;
  };
}

export interface FieldRefusal {
  /** Where, as a path into the body: `plugins`, `tools[2]`, `messages[3].content[1].source`. */
  field: string;
  /** What the delegate is told (a 400), naming the field and, for what the user may allow, how. */
  message: string;
}

/** Top-level fields of a Messages request: what the capture shows, and the sampling fields (no cost effect). */
const FIELDS = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'metadata',
  'max_tokens',
  'thinking',
  'context_management',
  'output_config',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
]);
/** Accepted on /v1/messages only because the gateway replaces or drops them; refused on count_tokens. */
export const REWRITTEN_FIELDS: readonly string[] = ['provider', 'fallbacks', 'models'];
const REWRITTEN = new Set(REWRITTEN_FIELDS);

/** Why a field Claude Code never sends matters, for the ones that cost money or skip a policy. */
const WHY: Readonly<Record<string, string>> = {
  plugins: 'OpenRouter plugins (web search, PDF parsing with OCR) are billed outside token prices',
  preset: 'an OpenRouter preset can add models, providers and plugins that no policy checked',
  models: 'it names models that no policy or cap checked',
  fallbacks: 'it names models that no policy or cap checked',
  route: 'it routes to models that no policy or cap checked',
  provider: 'it routes to providers dearer than the list prices the cap was reckoned at',
  transforms: 'OpenRouter transforms rewrite the prompt the cap was reckoned on',
  service_tier: 'a priority tier costs more than list prices',
  speed: 'fast mode costs several times list prices',
  mcp_servers: "remote MCP servers are called upstream, outside the delegate's tools and permissions",
  container: 'code execution containers are billed by the hour, outside token prices',
};

type Place = 'message' | 'tool_result' | 'document';

/** Each block type Claude Code sends, with its fields; and where it may sit. */
const BLOCKS: Readonly<Record<string, { keys: ReadonlySet<string>; in: readonly Place[] }>> = {
  text: { keys: new Set(['type', 'text', 'cache_control', 'citations']), in: ['message', 'tool_result', 'document'] },
  image: { keys: new Set(['type', 'source', 'cache_control']), in: ['message', 'tool_result', 'document'] },
  document: { keys: new Set(['type', 'source', 'cache_control', 'title', 'context', 'citations']), in: ['message', 'tool_result'] },
  tool_use: { keys: new Set(['type', 'id', 'name', 'input', 'cache_control']), in: ['message'] },
  tool_result: { keys: new Set(['type', 'tool_use_id', 'content', 'is_error', 'cache_control']), in: ['message'] },
  thinking: { keys: new Set(['type', 'thinking', 'signature']), in: ['message'] },
  redacted_thinking: { keys: new Set(['type', 'data']), in: ['message'] },
  // ToolSearch's result: the deferred tools it loaded, by name.
  tool_reference: { keys: new Set(['type', 'tool_name', 'cache_control']), in: ['tool_result'] },
};
const MESSAGE_KEYS = new Set(['role', 'content']);
const SYSTEM_BLOCK_KEYS = new Set(['type', 'text', 'cache_control']);
/** A tool Claude Code defines itself (no `type`, or `custom`): its schema, and whether it is loaded only on demand. */
const TOOL_KEYS = new Set(['type', 'name', 'description', 'input_schema', 'defer_loading', 'cache_control']);
/** Edits that only clear what a conversation holds: nothing is run or billed for them. */
const CONTEXT_EDITS = new Set(['clear_thinking_20251015', 'clear_tool_uses_20250919']);
/** Sources whose content is in the body, where the cap reckons it, with the keys each has. */
const INLINE_SOURCES: Readonly<Record<string, ReadonlySet<string>>> = {
  base64: new Set(['type', 'media_type', 'data']),
  text: new Set(['type', 'media_type', 'data']),
  content: new Set(['type', 'content']),
};

/**
 * What no honest conversation carries, refused with a 400 however much money is left (SECURITY.md §3). The bound
 * already counts every one of these bytes (prompt-measure.ts), so the limits are loose, set well above what
 * providers make and the capture shows (tests/fixtures/claude/request-shapes-<version>.json, `stringLengths`): a
 * tool id is a few dozen characters (toolu_… is 30, call_… 29, functions.Read:0 16); a thinking signature a few
 * kilobytes at most; citations quote a document's passages.
 */
export const FIELD_LIMITS = {
  /** tool_use.id and tool_result.tool_use_id, in characters. */
  toolId: 512,
  /** thinking.signature and redacted_thinking.data, in characters. */
  signature: 256 * 1024,
  /** A block's citations, as compact JSON, in characters. */
  citations: 256 * 1024,
  /** A base64 PDF (a document block's data), in characters: every byte of it counts in the bound. */
  pdfBase64: 1024 * 1024,
} as const;

/** Per block type, its fields held to a limit: the field, the limit, and what it is called in the refusal. */
const LIMITED: Readonly<Record<string, ReadonlyArray<readonly [string, number, string]>>> = {
  tool_use: [['id', FIELD_LIMITS.toolId, 'a tool call id']],
  tool_result: [['tool_use_id', FIELD_LIMITS.toolId, 'a tool call id']],
  thinking: [['signature', FIELD_LIMITS.signature, 'a thinking signature']],
  redacted_thinking: [['data', FIELD_LIMITS.signature, 'redacted thinking']],
};

/**
 * The allowlist as data, for the tests that generate requests from it (tests/security/every-byte.test.ts): every
 * field and block it lets through is sent at every size, so a bound that misses one fails there.
 */
export const ALLOWLIST = {
  fields: FIELDS as ReadonlySet<string>,
  blocks: BLOCKS,
  messageKeys: MESSAGE_KEYS as ReadonlySet<string>,
  systemBlockKeys: SYSTEM_BLOCK_KEYS as ReadonlySet<string>,
  toolKeys: TOOL_KEYS as ReadonlySet<string>,
  sources: INLINE_SOURCES,
  contextEdits: CONTEXT_EDITS as ReadonlySet<string>,
} as const;

const REFUSED_BY = "is refused by OpenRouter Delegate's gateway";
const ALLOW_HINT =
  `Allow it with \`openrouter-mcp-config --allow-server-tools on\` or Settings → Delegation → Budgets → ` +
  `"${SETTING_META['gateway.allowServerTools'].label}".`;

/** The first thing in `body` a delegate may not send upstream, or null when it may go. */
export function checkRequest(body: Record<string, unknown>, options: RequestFieldOptions): FieldRefusal | null {
  return (
    fieldsRefusal(body, options) ??
    toolsRefusal(own(body, 'tools'), options) ??
    systemRefusal(own(body, 'system')) ??
    messagesRefusal(own(body, 'messages'), options) ??
    contextRefusal(own(body, 'context_management'))
  );
}

function fieldsRefusal(body: Record<string, unknown>, options: RequestFieldOptions): FieldRefusal | null {
  for (const key of Object.keys(body)) {
    if (FIELDS.has(key) || (!options.counting && REWRITTEN.has(key))) continue;
    // Own entries only: WHY.constructor is Object's.
    const why = Object.hasOwn(WHY, key) ? WHY[key] : undefined;
    return refusal(key, `Field ${quoted(key)} is not sent by Claude Code and ${REFUSED_BY}${why ? `: ${why}` : ''}.`);
  }
  return null;
}

function toolsRefusal(tools: unknown, options: RequestFieldOptions): FieldRefusal | null {
  if (tools === undefined) return null;
  if (!Array.isArray(tools)) return refusal('tools', `tools: not a list; ${REFUSED_BY}.`);
  for (const [index, tool] of tools.entries()) {
    const at = `tools[${index}]`;
    if (!isRecord(tool)) return refusal(at, `${at}: not a tool definition; ${REFUSED_BY}.`);
    const type = own(tool, 'type');
    if (type !== undefined && type !== 'custom') {
      if (options.allow.serverTools) continue;
      return refusal(
        at,
        `${at}: the server tool ${quoted(String(type))} ${REFUSED_BY}: OpenRouter or the provider runs it and bills each use outside token prices ` +
          `(web search: $4 per 1,000 results on OpenRouter, $10 per 1,000 searches at Anthropic), which no cap sees. ${ALLOW_HINT}`,
      );
    }
    const extra = unknownKey(tool, TOOL_KEYS);
    if (extra !== null) return refusal(`${at}.${extra}`, `${at}: field ${quoted(extra)} of a tool definition is not sent by Claude Code and ${REFUSED_BY}.`);
    const cache = cacheRefusal(tool, at);
    if (cache) return cache;
  }
  return null;
}

function systemRefusal(system: unknown): FieldRefusal | null {
  if (system === undefined || typeof system === 'string') return null;
  if (!Array.isArray(system)) return refusal('system', `system: neither text nor a list of text blocks; ${REFUSED_BY}.`);
  for (const [index, block] of system.entries()) {
    const at = `system[${index}]`;
    if (!isRecord(block) || own(block, 'type') !== 'text')
      return refusal(at, `${at}: only text blocks are sent by Claude Code in the system prompt; anything else ${REFUSED_BY}.`);
    const extra = unknownKey(block, SYSTEM_BLOCK_KEYS);
    if (extra !== null) return refusal(`${at}.${extra}`, `${at}: field ${quoted(extra)} of a system block is not sent by Claude Code and ${REFUSED_BY}.`);
    const cache = cacheRefusal(block, at);
    if (cache) return cache;
  }
  return null;
}

function messagesRefusal(messages: unknown, options: RequestFieldOptions): FieldRefusal | null {
  if (messages === undefined) return null;
  if (!Array.isArray(messages)) return refusal('messages', `messages: not a list; ${REFUSED_BY}.`);
  for (const [index, message] of messages.entries()) {
    const at = `messages[${index}]`;
    if (!isRecord(message)) return refusal(at, `${at}: not a message; ${REFUSED_BY}.`);
    const extra = unknownKey(message, MESSAGE_KEYS);
    if (extra !== null) return refusal(`${at}.${extra}`, `${at}: field ${quoted(extra)} of a message is not sent by Claude Code and ${REFUSED_BY}.`);
    const found = contentRefusal(own(message, 'content'), `${at}.content`, 'message', options);
    if (found) return found;
  }
  return null;
}

/** A content field: text, or a list of blocks each allowed where it sits (`place`), with what they hold checked in turn. */
function contentRefusal(content: unknown, at: string, place: Place, options: RequestFieldOptions): FieldRefusal | null {
  if (content === undefined || typeof content === 'string') return null;
  if (!Array.isArray(content)) return refusal(at, `${at}: neither text nor a list of blocks; ${REFUSED_BY}.`);
  for (const [index, block] of content.entries()) {
    const found = blockRefusal(block, `${at}[${index}]`, place, options);
    if (found) return found;
  }
  return null;
}

function blockRefusal(block: unknown, at: string, place: Place, options: RequestFieldOptions): FieldRefusal | null {
  if (!isRecord(block)) return refusal(at, `${at}: not a content block; ${REFUSED_BY}.`);
  const given = own(block, 'type');
  if (typeof given !== 'string') return refusal(`${at}.type`, `${at}: a content block without a type (a string) ${REFUSED_BY}.`);
  const type = given;
  const known = Object.hasOwn(BLOCKS, type) ? BLOCKS[type] : undefined;
  if (!known || !known.in.includes(place)) {
    if (place === 'message' && isServerToolBlock(type)) {
      if (options.allow.serverTools) return null;
      return refusal(at, `${at}: a ${quoted(type)} block belongs to a server tool, billed outside token prices; it ${REFUSED_BY}. ${ALLOW_HINT}`);
    }
    return refusal(at, `${at}: a ${quoted(type)} block${known ? ' here' : ''} is not sent by Claude Code and ${REFUSED_BY}.`);
  }
  const extra = unknownKey(block, known.keys);
  if (extra !== null) return refusal(`${at}.${extra}`, `${at}: field ${quoted(extra)} of a ${type} block is not sent by Claude Code and ${REFUSED_BY}.`);
  return (
    sizeRefusal(block, type, at) ??
    cacheRefusal(block, at) ??
    (type === 'image' || type === 'document' ? sourceRefusal(own(block, 'source'), type, at, options) : null) ??
    (type === 'tool_result' ? contentRefusal(own(block, 'content'), `${at}.content`, 'tool_result', options) : null)
  );
}

/** A field of a block past its limit (FIELD_LIMITS), or not a string where one is always sent. */
function sizeRefusal(block: Record<string, unknown>, type: string, at: string): FieldRefusal | null {
  const limited = Object.hasOwn(LIMITED, type) ? LIMITED[type] : undefined;
  for (const [field, limit, what] of limited ?? []) {
    const value = own(block, field);
    if (value === undefined) continue;
    if (typeof value !== 'string') return refusal(`${at}.${field}`, `${at}.${field}: ${what} that is not a string ${REFUSED_BY}.`);
    if (value.length > limit) return tooLong(`${at}.${field}`, what, value.length, limit);
  }
  const citations = own(block, 'citations');
  if (citations !== undefined && citations !== null) {
    const length = JSON.stringify(citations).length;
    if (length > FIELD_LIMITS.citations) return tooLong(`${at}.citations`, 'citations', length, FIELD_LIMITS.citations);
  }
  return null;
}

function tooLong(where: string, what: string, length: number, limit: number): FieldRefusal {
  return refusal(where, `${where}: ${what} of ${formatCount(length)} characters ${REFUSED_BY}: no conversation carries one longer than ${formatCount(limit)}.`);
}

/** Web search, web fetch and code execution results: what a server tool's run leaves in the conversation. */
function isServerToolBlock(type: string): boolean {
  return type === 'server_tool_use' || (type !== 'tool_result' && /^[a-z_]+_tool_result$/.test(type));
}

function sourceRefusal(source: unknown, kind: 'image' | 'document', at: string, options: RequestFieldOptions): FieldRefusal | null {
  const where = `${at}.source`;
  if (!isRecord(source)) return refusal(where, `${where}: ${kind === 'image' ? 'an image' : 'a document'} without a source ${REFUSED_BY}.`);
  const type = String(own(source, 'type'));
  const a = kind === 'image' ? 'an image' : 'a document';
  if (type === 'url') {
    if (options.allow.urlSources) return null;
    return refusal(
      where,
      `${where}: ${a} with a URL source ${REFUSED_BY}: it is fetched upstream and billed outside token prices, which no cap sees. ${ALLOW_HINT}`,
    );
  }
  if (type === 'file')
    return refusal(where, `${where}: ${a} with a file source (an upload to the provider) ${REFUSED_BY}: its content is not in the request, so no cap sees it.`);
  const keys = Object.hasOwn(INLINE_SOURCES, type) ? INLINE_SOURCES[type] : undefined;
  if (!keys || (kind === 'image' && type !== 'base64'))
    return refusal(where, `${where}: ${a} with a ${quoted(type)} source is not sent by Claude Code and ${REFUSED_BY}.`);
  const extra = unknownKey(source, keys);
  if (extra !== null) return refusal(`${where}.${extra}`, `${where}: field ${quoted(extra)} of a ${type} source is not sent by Claude Code and ${REFUSED_BY}.`);
  if (kind === 'document' && type === 'base64') return pdfRefusal(own(source, 'data'), where);
  return type === 'content' ? contentRefusal(own(source, 'content'), `${where}.content`, 'document', options) : null;
}

/**
 * A base64 document (a PDF, as Claude Code's Read sends it): every byte of it counts in the request's bound, and
 * OpenRouter may parse it with a paid engine, so one past FIELD_LIMITS.pdfBase64 is refused with what to do instead.
 */
function pdfRefusal(data: unknown, where: string): FieldRefusal | null {
  if (typeof data !== 'string' || data.length <= FIELD_LIMITS.pdfBase64) return null;
  const kib = (chars: number) => `${formatCount(Math.round((chars * 3) / 4 / 1024))} KiB`;
  return refusal(
    `${where}.data`,
    `${where}.data: a PDF of ${kib(data.length)} ${REFUSED_BY}: every byte of a document counts at a token in what a request is held at, ` +
      `and past ${kib(FIELD_LIMITS.pdfBase64)} that is more than a delegate's request should hold. Read its text instead (\`pdftotext FILE -\`), or fewer pages at a time.`,
  );
}

/** A prompt-cache mark: the 5-minute cache only. A 1-hour write costs twice the input price, above what a cap reckons with. */
function cacheRefusal(holder: Record<string, unknown>, at: string): FieldRefusal | null {
  const cache = own(holder, 'cache_control');
  if (cache === undefined) return null;
  const where = `${at}.cache_control`;
  if (!isRecord(cache) || own(cache, 'type') !== 'ephemeral' || unknownKey(cache, CACHE_KEYS) !== null) {
    return refusal(where, `${where}: only { type: "ephemeral" } is sent by Claude Code; anything else ${REFUSED_BY}.`);
  }
  const ttl = own(cache, 'ttl');
  if (ttl !== undefined && ttl !== '5m') {
    return refusal(
      `${where}.ttl`,
      `${where}.ttl: a cache kept for ${quoted(String(ttl))} ${REFUSED_BY}: a 1-hour cache write costs twice the input price, more than a cap reckons with.`,
    );
  }
  return null;
}
const CACHE_KEYS = new Set(['type', 'ttl']);

function contextRefusal(context: unknown): FieldRefusal | null {
  if (context === undefined) return null;
  if (!isRecord(context)) return refusal('context_management', `context_management: not an object; ${REFUSED_BY}.`);
  const extra = unknownKey(context, CONTEXT_KEYS);
  if (extra !== null) return refusal(`context_management.${extra}`, `context_management: field ${quoted(extra)} is not sent by Claude Code and ${REFUSED_BY}.`);
  const edits = own(context, 'edits');
  if (edits === undefined) return null;
  if (!Array.isArray(edits)) return refusal('context_management.edits', `context_management.edits: not a list; ${REFUSED_BY}.`);
  for (const [index, edit] of edits.entries()) {
    const at = `context_management.edits[${index}]`;
    const type = isRecord(edit) ? own(edit, 'type') : undefined;
    if (typeof type !== 'string' || !CONTEXT_EDITS.has(type)) {
      return refusal(
        at,
        `${at}: an edit of type ${quoted(String(type))} is not sent by Claude Code and ${REFUSED_BY} (only edits that clear thinking or tool results pass).`,
      );
    }
  }
  return null;
}
const CONTEXT_KEYS = new Set(['edits']);

function refusal(field: string, message: string): FieldRefusal {
  return { field: field.slice(0, 200), message };
}

/** The first key of `value` not in `allowed`. Own keys only: JSON.parse makes `__proto__` one, and it is refused like any other. */
function unknownKey(value: Record<string, unknown>, allowed: ReadonlySet<string>): string | null {
  for (const key of Object.keys(value)) if (!allowed.has(key)) return key;
  return null;
}

function own(value: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(value, key) ? value[key] : undefined;
}

/** A name from the body as a message shows it: quoted, cut short, control characters escaped. */
function quoted(name: string): string {
  return JSON.stringify(truncateEnd(name, 101));
}
