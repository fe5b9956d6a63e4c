/**
 * How much prompt a Messages request carries (docs/ARCHITECTURE.md §11), in two figures from one walk over the body
 * the gateway forwards (the object it is about to write, its own fields included):
 *
 * - **The bound** covers every byte it forwards, by construction: the written body's length, one token a byte (a
 *   byte-level tokenizer never makes more), plus what the JSON-valued parts a template prints again can grow by
 *   (json-rendering.ts: each tool call's `input`, each tool's definition), plus a few tokens per block for the
 *   template. The one exception, named where it is made: an image whose base64 data parses as the image it claims
 *   to be is held at its pixels instead of its bytes (image-pixels.ts). Nothing else is left out, so no field can be
 *   forgotten by a list: a 2 MB tool id, a signature, citations, metadata all count at a token a byte.
 * - **The estimate** a request is let through on reads the text the model reads (system, messages' text, tool
 *   calls and results, thinking, tools) at the job's measured ratio; every other value of a block or of the body
 *   (ids, signatures, citations, titles, metadata, tool_choice …) counts at a token a byte there too, unless its key
 *   is named below as carrying no cost of its own (a block's `type`, `cache_control`; the body's `model`,
 *   `max_tokens`, `stream`). So what a list forgets is counted in full, never skipped.
 */
import { isRecord } from '../../../common/errors.js';
import { IMAGE_TOKENS_BOUND, imageTokensBound } from './image-pixels.js';
import { renderingGrowth } from './json-rendering.js';

export interface PromptMeasure {
  /** UTF-8 bytes of the text the model reads (the estimate's part at the job's ratio). */
  textBytes: number;
  /** Bytes of every other value of the blocks and the body, a token each in the estimate. */
  otherBytes: number;
  /** Messages, content blocks and tools: each costs a few tokens of the template around it. */
  blocks: number;
  /** Image blocks held at their pixels (their data parsed as the image they claim to be). */
  images: number;
  /** The bound's bytes: the written body, less the data of the images above, plus what templates print in addition. */
  boundBytes: number;
  /** What the images above are held at, in tokens, and the floor of every other image or document (MEDIA_FLOOR_TOKENS). */
  mediaTokensBound: number;
}

/**
 * An image or a document that is not held at its pixels counts every byte, and at least what a page costs besides: a
 * provider (or a lenient decoder) may still read it as an image, and a PDF's pages cost their images whatever its
 * bytes. A PDF is compressed, so what its text costs once extracted is not bounded by its bytes: SECURITY.md §7.
 */
const MEDIA_FLOOR_TOKENS = IMAGE_TOKENS_BOUND;

/** Top-level fields that carry no tokens: the model's name, the answer's bound, the transport. */
const FREE_FIELDS = new Set(['model', 'max_tokens', 'stream', 'messages', 'system', 'tools']);
/** Block fields that carry no tokens of their own: what kind of block it is, and the cache mark. */
const FREE_BLOCK_FIELDS = new Set(['type', 'cache_control']);
/** The field of each block type that the model reads as text (or JSON, for a tool call's input). */
const TEXT_FIELD: Readonly<Record<string, string>> = { text: 'text', thinking: 'thinking', tool_use: 'input', tool_reference: 'tool_name' };

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * `body` is the object the gateway forwards and `writtenBytes` the length of its JSON as written (the bound
 * starts from it, not from a walk that could miss a field). `toolsBytes`, when known, is the length of its `tools` as
 * written (flight.ts's writeBody): what the tools count in the estimate is read there rather than written again.
 */
export function measurePrompt(body: Record<string, unknown>, writtenBytes: number, toolsBytes: number | null = null): PromptMeasure {
  const measure: PromptMeasure = { textBytes: 0, otherBytes: 0, blocks: 0, images: 0, boundBytes: writtenBytes, mediaTokensBound: 0 };
  for (const key of Object.keys(body)) if (!FREE_FIELDS.has(key)) measure.otherBytes += jsonBytes(body[key]);
  addContent(measure, body.system);
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      measure.blocks++;
      if (!isRecord(message)) measure.otherBytes += jsonBytes(message);
      else addContent(measure, message.content);
    }
  }
  if (Array.isArray(body.tools)) addTools(measure, body.tools, toolsBytes);
  return measure;
}

/**
 * Each tool's definition counts as text at its JSON's length. `writtenBytes` is the list's own as written, when known:
 * its tools' lengths together are that less its brackets and the commas between them.
 */
function addTools(measure: PromptMeasure, tools: unknown[], writtenBytes: number | null): void {
  measure.blocks += tools.length;
  if (writtenBytes !== null) measure.textBytes += writtenBytes - 2 - Math.max(0, tools.length - 1);
  else for (const tool of tools) measure.textBytes += jsonBytes(tool);
  for (const tool of tools) measure.boundBytes += renderingGrowth(tool);
}

/** A `content` (or `system`): text, or a list of blocks. */
function addContent(measure: PromptMeasure, content: unknown): void {
  if (typeof content === 'string') measure.textBytes += utf8(content);
  else if (Array.isArray(content)) for (const block of content) addBlock(measure, block);
  else if (content !== undefined) measure.otherBytes += jsonBytes(content);
}

/** One content block; nested tool results and a document's content walked the same way. */
function addBlock(measure: PromptMeasure, block: unknown): void {
  measure.blocks++;
  if (!isRecord(block)) {
    measure.otherBytes += jsonBytes(block);
    return;
  }
  const type = typeof block.type === 'string' ? block.type : '';
  const textField = Object.hasOwn(TEXT_FIELD, type) ? TEXT_FIELD[type] : undefined;
  for (const key of Object.keys(block)) {
    if (FREE_BLOCK_FIELDS.has(key)) continue;
    const value = block[key];
    if (key === textField) addText(measure, value);
    else if (type === 'tool_result' && key === 'content') addContent(measure, value);
    else if (type === 'image' && key === 'source') addImageSource(measure, value);
    else if (type === 'document' && key === 'source' && isRecord(value) && value.type === 'content') addContent(measure, value.content);
    else measure.otherBytes += jsonBytes(value);
  }
  if (type === 'document') measure.mediaTokensBound += MEDIA_FLOOR_TOKENS;
  // A tool call's arguments are printed again by the template: they count at their worst.
  if (type === 'tool_use') measure.boundBytes += renderingGrowth(block.input);
}

/** An image held at its pixels when its data is the image it claims to be; otherwise every byte of its source counts. */
function addImageSource(measure: PromptMeasure, source: unknown): void {
  const pixels = isRecord(source) && source.type === 'base64' ? imageTokensBound(source.media_type, source.data) : null;
  if (pixels === null) {
    measure.otherBytes += jsonBytes(source);
    measure.mediaTokensBound += MEDIA_FLOOR_TOKENS;
    return;
  }
  measure.images++;
  measure.mediaTokensBound += pixels;
  // The data is base64: one byte in the body per character.
  measure.boundBytes -= (source as { data: string }).data.length;
}

function addText(measure: PromptMeasure, text: unknown): void {
  if (typeof text === 'string') measure.textBytes += utf8(text);
  else measure.textBytes += jsonBytes(text);
}

/** A value's bytes as compact JSON; 0 for undefined, and for what JSON.stringify cannot walk (refused before it goes). */
function jsonBytes(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value === 'string') return utf8(value) + 2;
  try {
    const json = JSON.stringify(value);
    return json === undefined ? 0 : utf8(json);
  } catch {
    return 0;
  }
}
