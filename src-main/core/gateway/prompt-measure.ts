/**
 * How much prompt a Messages request carries, measured on what the model reads rather than on the body's bytes
 * (docs/ARCHITECTURE.md §11). A delegate can pad its JSON with whitespace, which costs no token, and so talk a
 * bytes-based estimate down; it cannot pad the text the model reads without paying for it. So the gateway counts
 * the UTF-8 bytes of that text — the system prompt, every message's text, tool calls and tool results, thinking,
 * the tools' names, descriptions and schemas — and the blocks and images around it. Pure and one walk over the
 * parsed body's blocks.
 */
import { isRecord } from '../../common/errors.js';

export interface PromptMeasure {
  /** UTF-8 bytes of the text the model reads. */
  textBytes: number;
  /** Messages, content blocks and tools: each costs a few tokens of the template around it. */
  blocks: number;
  /** Image blocks, priced by their pixels, not their base64 bytes. */
  images: number;
}

/**
 * Tokens an image costs at most. Anthropic charges about (width × height) / 750 and scales images down to
 * about 1.15 megapixels (≈ 1,600 tokens); some other providers tile larger images into more. A bound, not a
 * figure: it keeps an image from being priced at its base64 size (a 1 MB screenshot is not 1M tokens).
 */
export const IMAGE_TOKENS_BOUND = 6_400;

const textBytes = (text: string): number => Buffer.byteLength(text, 'utf8');

export function measurePrompt(body: Record<string, unknown>): PromptMeasure {
  const measure: PromptMeasure = { textBytes: 0, blocks: 0, images: 0 };
  const system = body.system;
  if (typeof system === 'string') measure.textBytes += textBytes(system);
  else if (Array.isArray(system)) for (const block of system) addBlock(measure, block);
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      measure.blocks++;
      const content = isRecord(message) ? message.content : message;
      if (typeof content === 'string') measure.textBytes += textBytes(content);
      else if (Array.isArray(content)) for (const block of content) addBlock(measure, block);
      else addJson(measure, content);
    }
  }
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      measure.blocks++;
      addJson(measure, tool);
    }
  }
  return measure;
}

/** One content block; nested tool results are walked the same way. */
function addBlock(measure: PromptMeasure, block: unknown): void {
  measure.blocks++;
  if (!isRecord(block)) {
    addJson(measure, block);
    return;
  }
  switch (block.type) {
    case 'text':
      addText(measure, block.text);
      return;
    case 'thinking':
      // The signature is the provider's check on the thinking, not text the model reads again.
      addText(measure, block.thinking);
      return;
    case 'tool_use':
      addText(measure, block.name);
      addJson(measure, block.input);
      return;
    case 'tool_result':
      if (typeof block.content === 'string') measure.textBytes += textBytes(block.content);
      else if (Array.isArray(block.content)) for (const part of block.content) addBlock(measure, part);
      return;
    case 'image':
      measure.images++;
      return;
    default:
      // A document, redacted thinking, or anything else: every byte of it counted as text (a PDF's base64 is far
      // more bytes than the tokens its pages cost, so this errs high, as a bound must).
      addJson(measure, block);
  }
}

function addText(measure: PromptMeasure, text: unknown): void {
  if (typeof text === 'string') measure.textBytes += textBytes(text);
  else addJson(measure, text);
}

function addJson(measure: PromptMeasure, value: unknown): void {
  if (value === undefined) return;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    // Nested deeper than JSON.stringify walks: the gateway refuses such a body before it goes anywhere.
    json = undefined;
  }
  if (json !== undefined) measure.textBytes += textBytes(json);
}
