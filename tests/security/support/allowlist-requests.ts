/**
 * Requests generated from the gateway's allowlist itself (ALLOWLIST, src-main/core/gateway/request/request-fields.ts): every
 * top-level field, every block type where it may sit and every key of it, at sizes from nothing to megabytes. A key
 * the allowlist gains without a generator here throws (`valueFor`), so the fuzz cannot fall behind the list it tests.
 * Values are what a delegate may send (types the gateway accepts); their sizes and characters are the attack: dense
 * ASCII, whitespace, characters a template escapes (é, 中, emoji, <>&'), JSON nested a few levels.
 */
import { ALLOWLIST } from '../../../src-main/core/gateway/request/request-fields.js';
import type { Rng } from '../../fuzz/support/prng.js';
import { png } from '../../support/png.js';

type Json = Record<string, unknown>;
type Place = 'message' | 'tool_result' | 'document';

/** Which allowlisted keys the generated requests carried: the fuzz asserts it covered them all. */
export class Coverage {
  readonly seen = new Set<string>();
  note(where: string, key: string): void {
    this.seen.add(`${where}.${key}`);
  }
  /** Every key the allowlist names, as `note` writes it. */
  static expected(): string[] {
    const keys = [...ALLOWLIST.fields].map((f) => `body.${f}`);
    for (const [type, block] of Object.entries(ALLOWLIST.blocks)) for (const key of block.keys) keys.push(`${type}.${key}`);
    for (const key of ALLOWLIST.toolKeys) keys.push(`tool.${key}`);
    for (const key of ALLOWLIST.systemBlockKeys) keys.push(`system.${key}`);
    for (const key of ALLOWLIST.messageKeys) keys.push(`message.${key}`);
    for (const [type, keys2] of Object.entries(ALLOWLIST.sources)) for (const key of keys2) keys.push(`source:${type}.${key}`);
    return keys.sort();
  }
}

export interface Generator {
  rng: Rng;
  /** The largest string, in characters. */
  maxChars: number;
  coverage: Coverage;
}

/** Mostly small, sometimes large: a length in [0, max], uniform in its logarithm, zero now and then. */
function size(g: Generator): number {
  if (g.rng.chance(0.1)) return 0;
  return Math.round(Math.exp(g.rng.float() * Math.log(g.maxChars)));
}

const ALPHABETS = ['abcdefghij klmnop', '{}[]()<>;:,.!?@#$%^&*~|=+-_/`', ' \n\t', 'é中😀\u3000', '<>&\'"\\', 'toolu_01ABCxyz'];

/** A string of `length` characters (code points) from one alphabet. */
export function text(g: Generator, length = size(g)): string {
  const alphabet = [...g.rng.pick(ALPHABETS)];
  const unit = Array.from({ length: Math.min(length, 997) }, () => g.rng.pick(alphabet)).join('');
  return unit.repeat(Math.ceil(length / Math.max(1, unit.length))).slice(0, length);
}

/** A JSON value a few levels deep, its strings from `text`, its total size about `budget` characters. */
export function json(g: Generator, budget = size(g), depth = 0): unknown {
  const kind = depth > 3 ? 0 : g.rng.int(0, 3);
  if (kind === 0 || budget < 16) return g.rng.pick<unknown>([text(g, budget), 1e-7, 123456789, true, null]);
  const parts = g.rng.int(1, 6);
  const items = Array.from({ length: parts }, () => json(g, Math.floor(budget / parts), depth + 1));
  if (kind === 1) return items;
  return Object.fromEntries(items.map((item, i) => [`${text(g, 3)}${i}`, item]));
}

/** A real PNG of `width` × `height` (no pixel rows: a header reader sees the size), as base64. */
const pngData = (width: number, height: number): string => png(width, height, { rows: false }).toString('base64');

/** A source of `type` for an image or a document, each of its keys noted. */
function source(g: Generator, kind: 'image' | 'document', type: string): Json {
  const keys = ALLOWLIST.sources[type];
  if (!keys) throw new Error(`no source of type ${type} in the allowlist`);
  const out: Json = {};
  for (const key of keys) {
    g.coverage.note(`source:${type}`, key);
    if (key === 'type') out.type = type;
    else if (key === 'media_type')
      out.media_type =
        kind === 'image' ? g.rng.pick(['image/png', 'image/jpeg', 'image/gif', 'image/webp']) : type === 'text' ? 'text/plain' : 'application/pdf';
    else if (key === 'data')
      out.data =
        kind === 'image' ? imageData(g) : type === 'text' ? text(g) : Buffer.from(`%PDF-1.4\n${text(g, Math.min(size(g), 700_000))}`).toString('base64');
    else if (key === 'content') out.content = blocks(g, 'document', g.rng.int(0, 3));
    else throw new Error(`no generator for source key ${key}`);
  }
  return out;
}

/** An image's data: a real PNG (small or huge in pixels), or bytes that only claim to be one. */
function imageData(g: Generator): string {
  return g.rng.weighted([
    [2, () => pngData(g.rng.int(1, 2000), g.rng.int(1, 2000))],
    [1, () => pngData(g.rng.int(3000, 20_000), g.rng.int(3000, 20_000))],
    [2, () => Buffer.from(g.rng.bytes(Math.min(size(g), 3_000_000))).toString('base64')],
    [1, () => pngData(10, 10) + 'A'.repeat(4 * Math.floor(size(g) / 4))],
  ] as const)();
}

/** A value for `key` of a `type` block, or throws for a key no generator knows (the allowlist grew). */
function valueFor(g: Generator, type: string, key: string): unknown {
  switch (key) {
    case 'type':
      return type;
    case 'text':
    case 'thinking':
    case 'signature':
    case 'data':
    case 'title':
    case 'context':
    case 'name':
    case 'tool_name':
      return text(g);
    case 'id':
    case 'tool_use_id':
      // Mostly within the gateway's limit (512), now and then past it.
      return text(g, g.rng.chance(0.9) ? Math.min(size(g), 512) : g.rng.int(513, 5000));
    case 'input':
      return { [text(g, 4)]: json(g) };
    case 'cache_control':
      return g.rng.pick([{ type: 'ephemeral' }, { type: 'ephemeral', ttl: '5m' }]);
    case 'citations':
      return Array.from({ length: g.rng.int(0, 4) }, () => ({ type: 'char_location', cited_text: text(g, Math.min(size(g), 80_000)), document_index: 0 }));
    case 'is_error':
      return g.rng.chance(0.5);
    case 'content':
      return g.rng.chance(0.3) ? text(g) : blocks(g, 'tool_result', g.rng.int(0, 3));
    case 'source':
      return type === 'image' ? source(g, 'image', 'base64') : source(g, 'document', g.rng.pick(Object.keys(ALLOWLIST.sources)));
    default:
      throw new Error(`the allowlist has ${type}.${key}, which no generator in tests/security/support/allowlist-requests.ts makes`);
  }
}

/** Keys a block is refused without (an image's source): always sent, so the fuzz reaches the bound, not a 400. */
const REQUIRED = new Set(['type', 'source']);

/** One block of a type allowed at `place`, with each of its keys present or not. */
function block(g: Generator, place: Place): Json {
  const types = Object.entries(ALLOWLIST.blocks).filter(([, spec]) => spec.in.includes(place));
  const [type, spec] = g.rng.pick(types);
  const out: Json = {};
  for (const key of spec.keys) {
    if (!REQUIRED.has(key) && g.rng.chance(0.35)) continue;
    g.coverage.note(type, key);
    out[key] = valueFor(g, type, key);
  }
  return out;
}

function blocks(g: Generator, place: Place, count: number): Json[] {
  return Array.from({ length: count }, () => block(g, place));
}

/** A tool definition Claude Code could send, each key present or not. */
function tool(g: Generator): Json {
  const out: Json = {};
  for (const key of ALLOWLIST.toolKeys) {
    if (key !== 'name' && g.rng.chance(0.4)) continue;
    g.coverage.note('tool', key);
    if (key === 'type') out.type = 'custom';
    else if (key === 'name' || key === 'description') out[key] = text(g);
    else if (key === 'input_schema') out.input_schema = { type: 'object', properties: json(g) };
    else if (key === 'defer_loading') out.defer_loading = g.rng.chance(0.5);
    else if (key === 'cache_control') out.cache_control = { type: 'ephemeral' };
    else throw new Error(`no generator for tool key ${key}`);
  }
  return out;
}

/** A top-level field's value; messages, model and max_tokens are the caller's. */
function field(g: Generator, name: string): unknown {
  switch (name) {
    case 'system':
      return g.rng.chance(0.5) ? text(g) : Array.from({ length: g.rng.int(1, 3) }, () => systemBlock(g));
    case 'tools':
      return Array.from({ length: g.rng.int(1, 4) }, () => tool(g));
    case 'tool_choice':
      return g.rng.pick([{ type: 'auto' }, { type: 'any' }, { type: 'tool', name: text(g, 50) }]);
    case 'metadata':
      return { user_id: text(g) };
    case 'thinking':
      return g.rng.pick([{ type: 'adaptive' }, { type: 'enabled', budget_tokens: 1024 }, { type: 'disabled' }]);
    case 'context_management':
      return { edits: [...ALLOWLIST.contextEdits].map((type) => ({ type })) };
    case 'output_config':
      return { effort: g.rng.pick(['low', 'high']) };
    case 'stream':
      return g.rng.chance(0.5);
    case 'temperature':
    case 'top_p':
      return g.rng.float();
    case 'top_k':
      return g.rng.int(1, 100);
    case 'stop_sequences':
      return Array.from({ length: g.rng.int(0, 4) }, () => text(g));
    default:
      throw new Error(`the allowlist has the field ${name}, which no generator in tests/security/support/allowlist-requests.ts makes`);
  }
}

function systemBlock(g: Generator): Json {
  const out: Json = {};
  for (const key of ALLOWLIST.systemBlockKeys) {
    g.coverage.note('system', key);
    out[key] = key === 'type' ? 'text' : key === 'text' ? text(g) : { type: 'ephemeral' };
  }
  return out;
}

/** One request: the job's model, a max_tokens, a few messages of blocks, and each other field present or not. */
export function allowlistRequest(g: Generator, model: string): Json {
  const body: Json = { model, max_tokens: g.rng.pick([1, 16, 1024, 4096]) };
  g.coverage.note('body', 'model');
  g.coverage.note('body', 'max_tokens');
  g.coverage.note('body', 'messages');
  body.messages = Array.from({ length: g.rng.int(1, 3) }, (_, i) => {
    for (const key of ALLOWLIST.messageKeys) g.coverage.note('message', key);
    return { role: i % 2 === 0 ? 'user' : 'assistant', content: g.rng.chance(0.2) ? text(g) : blocks(g, 'message', g.rng.int(1, 4)) };
  });
  for (const name of ALLOWLIST.fields) {
    if (name in body || g.rng.chance(0.5)) continue;
    g.coverage.note('body', name);
    body[name] = field(g, name);
  }
  return body;
}
