/**
 * The text a tail entry shows (stream-parser.ts): one display line cut to a few hundred characters, a tool call's
 * input in a few words, a tool result's text. Each looks at a bounded head of what it is given, so a tool input or
 * result of megabytes costs no more than a short one.
 */
import { isRecord } from '../../../common/errors.js';
import { truncateEnd } from '../../../common/format.js';
import { nonEmptyString, stringOrNull } from './stream-fields.js';

type Json = Record<string, unknown>;

function isWhitespace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 160;
}

export function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!isWhitespace(text.charCodeAt(i))) return false;
  return true;
}

/** A string with storage of its own (join builds a new flat string; lone surrogates are kept as they are). */
function copyString(text: string): string {
  return text.split('').join('');
}

/**
 * One display line of at most about `max` characters: whitespace runs (newlines included) become
 * one space. Only a bounded head of the text is looked at, so a 5 MB tool result costs no more
 * than a short one.
 */
export function shorten(text: string, max: number): string {
  // A copy, not a slice: V8 slices share the memory of the string they were cut from, so a tail entry
  // cut from a 5 MB tool result would keep all 5 MB alive for as long as it stays in the ring.
  const head = text.length > max * 2 ? copyString(text.slice(0, max * 2)) : text;
  const flat = head.replace(/\s+/g, ' ').trim();
  // A head cut from a longer text says so, even when its words fit once their whitespace is folded.
  return truncateEnd(head.length < text.length ? `${flat}…` : flat, max);
}

/**
 * Compact JSON of at most about `budget` characters, without serialising the whole value first
 * (a tool input can hold a whole file).
 */
export function compactJson(value: unknown, budget: number): string {
  const parts: string[] = [];
  let length = 0;
  const emit = (s: string): boolean => {
    parts.push(s);
    length += s.length;
    return length < budget;
  };
  const walk = (v: unknown, depth: number): boolean => {
    if (typeof v === 'string') return emit(JSON.stringify(v.length > budget ? v.slice(0, budget) : v));
    if (typeof v === 'number' || typeof v === 'boolean') return emit(String(v));
    if (v === null || v === undefined) return emit('null');
    if (typeof v !== 'object' || depth > 8) return emit('…');
    if (Array.isArray(v)) {
      if (!emit('[')) return false;
      for (let i = 0; i < v.length; i++) {
        if (i > 0 && !emit(',')) return false;
        if (!walk(v[i], depth + 1)) return false;
      }
      return emit(']');
    }
    if (!emit('{')) return false;
    let first = true;
    for (const key in v) {
      if (!Object.hasOwn(v, key)) continue;
      if (!first && !emit(',')) return false;
      first = false;
      if (!emit(`${JSON.stringify(key)}:`)) return false;
      if (!walk((v as Json)[key], depth + 1)) return false;
    }
    return emit('}');
  };
  walk(value, 0);
  return parts.join('');
}

/**
 * What a tool call is about, in a few words: the command, the file, the pattern …; an input it has no words for reads
 * as compact JSON of about `budget` characters.
 */
export function summarizeToolInput(name: string, input: unknown, budget: number): string {
  if (!isRecord(input)) return '';
  switch (name) {
    case 'Bash':
      return stringOrNull(input.command) ?? compactJson(input, budget);
    case 'Read':
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
      return stringOrNull(input.file_path) ?? compactJson(input, budget);
    case 'NotebookEdit':
    case 'NotebookRead':
      // Claude Code's notebook tools take `notebook_path`; older captures use `file_path`.
      return stringOrNull(input.notebook_path) ?? stringOrNull(input.file_path) ?? compactJson(input, budget);
    case 'Grep':
    case 'Glob': {
      const pattern = stringOrNull(input.pattern);
      if (pattern === null) break;
      const where = nonEmptyString(input.path);
      return where === null ? pattern : `${pattern} in ${where}`;
    }
    case 'WebFetch':
      return stringOrNull(input.url) ?? compactJson(input, budget);
    case 'WebSearch':
      return stringOrNull(input.query) ?? compactJson(input, budget);
    case 'Task':
    case 'Agent': {
      const description = nonEmptyString(input.description);
      const kind = nonEmptyString(input.subagent_type);
      if (description === null && kind === null) break;
      if (description === null) return kind ?? '';
      return kind === null ? description : `${description} (${kind})`;
    }
    case 'TodoWrite':
      if (!Array.isArray(input.todos)) break;
      return input.todos.length === 1 ? '1 todo' : `${input.todos.length} todos`;
  }
  return compactJson(input, budget);
}

/** The text of a tool_result's content (a string, or an array of text and image blocks), bounded. */
export function toolResultText(content: unknown, max: number): string {
  if (typeof content === 'string') return shorten(content, max);
  if (!Array.isArray(content)) return '';
  let joined = '';
  for (const block of content) {
    if (joined.length > max * 2) break;
    if (!isRecord(block)) continue;
    const piece = block.type === 'text' ? stringOrNull(block.text) : block.type === 'image' ? '[image]' : null;
    if (piece === null) continue;
    joined = joined === '' ? piece : `${joined}\n${piece}`;
  }
  return shorten(joined, max);
}
