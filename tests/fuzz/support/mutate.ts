/**
 * Random values and mutations shared by the fuzz tests: strings that have broken parsers before
 * (surrogates, control characters, huge lengths), numbers at the edges of what JSON and zod accept,
 * JSON values of any shape, and byte-level damage (bit flips, truncation, invalid UTF-8 …).
 */
import type { Rng } from './prng.js';
import { isRecord } from '../../../src-main/common/errors.js';

/** Pieces strings are built from: plain text, whitespace and control characters, and the Unicode corner cases. */
const STRING_PIECES: readonly string[] = [
  'a',
  'job',
  'x',
  'Read',
  'Bash',
  'deepseek',
  '/',
  '.',
  '..',
  '../',
  '*',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\r',
  '\u0000',
  '\u0001',
  '\u001b[31m',
  '\u007f',
  '"',
  '\\',
  "'",
  '`',
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '%s',
  '%n',
  '${HOME}',
  '$(id)',
  'é',
  'ß',
  '中文',
  'Ω',
  '\u00a0',
  '\u200b',
  '\u202e',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '😀',
  '👩‍👩‍👧',
  '𝕏',
  '\ud800',
  '\udfff',
  '\udbff\udfff',
  'null',
  'true',
  '0',
  '-1',
  '1e999',
  'NaN',
  '__proto__',
  'constructor',
];

/** Whole strings worth trying as-is in any string field. */
export const INTERESTING_STRINGS: readonly string[] = [
  '',
  ' ',
  '\n',
  '.',
  '..',
  '/',
  '~',
  '-',
  '--help',
  '0',
  'null',
  'undefined',
  'true',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '../../../../etc/passwd',
  '/dev/zero',
  '/dev/stdin',
  '/proc/self/environ',
  '/nonexistent/dir',
  'C:\\Windows',
  '\\\\.\\pipe\\x',
  'file:///etc/hosts',
  'http://127.0.0.1:1/',
  '%00',
  'a\u0000b',
  '\ud800',
  '😀'.repeat(3),
  'ǅ',
  'İ',
];

/** Numbers at the edges: of JSON, of doubles, of safe integers, of the contract's own ranges. */
export const INTERESTING_NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  2,
  0.5,
  -0.5,
  0.1,
  1e-7,
  5e-324,
  -5e-324,
  99,
  100,
  101,
  200,
  499,
  500,
  501,
  599,
  600,
  601,
  999,
  1000,
  1001,
  1440,
  1441,
  9999,
  10_000,
  10_001,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e21,
  1e300,
  -1e300,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.EPSILON,
  123.456,
];

/** Number literals that JSON.stringify never writes but JSON.parse accepts (or rejects) in interesting ways. */
export const NUMBER_TEXTS: readonly string[] = [
  '1e999',
  '-1e999',
  '-0',
  '0.0',
  '1.0',
  '1E+2',
  '1e-400',
  '123456789012345678901234567890',
  '00',
  '01',
  '-',
  '1.',
  '.5',
  '+1',
  '0x10',
  '1_000',
  'Infinity',
  'NaN',
  '9007199254740993',
  '4.9e-324',
];

export function randomString(rng: Rng, maxUnits = 64): string {
  if (rng.chance(0.15)) {
    const fixed = rng.pick(INTERESTING_STRINGS);
    if (fixed.length <= maxUnits) return fixed;
  }
  const target = rng.size(maxUnits);
  let out = '';
  while (out.length < target) {
    const r = rng.float();
    if (r < 0.45) out += String.fromCharCode(rng.int(0x20, 0x7e));
    else if (r < 0.8) out += rng.pick(STRING_PIECES);
    else if (r < 0.9) out += String.fromCharCode(rng.int(0, 0xffff));
    else out += String.fromCodePoint(rng.int(0x10000, 0x10ffff));
  }
  return out.length > maxUnits ? out.slice(0, maxUnits) : out;
}

/** A long string, built by repetition so that megabytes cost little to make. */
export function longString(rng: Rng, length: number): string {
  const unit = rng.chance(0.5) ? 'x' : randomString(rng, 16) || 'y';
  const text = unit.repeat(Math.ceil(length / unit.length));
  return text.slice(0, length);
}

const KEYS: readonly string[] = [
  'type',
  'id',
  'method',
  'params',
  'token',
  'protocol',
  'client',
  'result',
  'error',
  'code',
  'message',
  'event',
  'data',
  'jobId',
  'prompt',
  'filter',
  'limit',
  'state',
  'caller',
  'cwd',
  '__proto__',
  'constructor',
  '',
  ' ',
  'a',
  '😀',
];

export function randomNumber(rng: Rng): number {
  const r = rng.float();
  if (r < 0.4) return rng.pick(INTERESTING_NUMBERS);
  if (r < 0.7) return rng.int(-1000, 1_000_000);
  if (r < 0.9) return (rng.float() - 0.5) * 10 ** rng.int(0, 12);
  return rng.float() * Number.MAX_VALUE * (rng.chance(0.5) ? 1 : -1);
}

/** Any JSON value, nested up to `depth`. */
export function randomJson(rng: Rng, depth = 3): unknown {
  const r = rng.float();
  if (depth <= 0 || r < 0.55) {
    const leaf = rng.float();
    if (leaf < 0.1) return null;
    if (leaf < 0.2) return rng.chance(0.5);
    if (leaf < 0.5) return randomNumber(rng);
    return randomString(rng, rng.chance(0.05) ? 5000 : 40);
  }
  if (r < 0.78) return Array.from({ length: rng.size(12) }, () => randomJson(rng, depth - 1));
  const out: Record<string, unknown> = {};
  const count = rng.size(10);
  for (let i = 0; i < count; i++) out[rng.chance(0.7) ? rng.pick(KEYS) : randomString(rng, 20)] = randomJson(rng, depth - 1);
  return out;
}

/** JSON text nested `depth` levels deep (sometimes left unbalanced). */
export function deepNestingText(rng: Rng, depth: number): string {
  const kind = rng.below(4);
  let text: string;
  if (kind === 0) text = `${'['.repeat(depth)}${']'.repeat(depth)}`;
  else if (kind === 1) text = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  else if (kind === 2) text = `${'[{"x":'.repeat(depth)}null${'}]'.repeat(depth)}`;
  else text = '['.repeat(depth);
  return text;
}

/** How deep mutateJson looks for a node to change. */
const WALK_DEPTH = 200;

/** A copy of `value` with one random node replaced, removed, wrapped or added to. */
export function mutateJson(rng: Rng, value: unknown): unknown {
  // Count nodes, then pick one to change on the way down a fresh copy. Neither goes deeper than WALK_DEPTH: a value
  // nested by earlier mutations (op 5 nests up to 1,000 deep, and mutations stack) would overflow the stack here; what
  // lies deeper is kept as it is.
  let nodes = 0;
  const count = (v: unknown, depth: number): void => {
    nodes++;
    if (depth >= WALK_DEPTH) return;
    if (Array.isArray(v)) v.forEach((child) => count(child, depth + 1));
    else if (isRecord(v)) Object.values(v).forEach((child) => count(child, depth + 1));
  };
  count(value, 0);
  let target = rng.below(nodes);
  const change = (v: unknown): unknown => {
    const op = rng.below(9);
    if (op === 0) return randomJson(rng, 2);
    if (op === 1) return null;
    if (op === 2) return [v];
    if (op === 3) return typeof v === 'string' ? v + longString(rng, rng.pick([1, 1, 250, 250, 5000, 100_000])) : randomString(rng, 40);
    if (op === 4) return typeof v === 'number' ? rng.pick(INTERESTING_NUMBERS) : randomNumber(rng);
    if (op === 5) return JSON.parse(deepNestingText(rng, rng.pick([50, 300, 1000])).replace(/\[+$/, '[]')) as unknown;
    if (op === 6 && isRecord(v)) {
      const keys = Object.keys(v);
      if (keys.length > 0) {
        const copy = { ...v };
        delete copy[rng.pick(keys)];
        return copy;
      }
    }
    if (op === 7 && isRecord(v)) return { ...v, [rng.chance(0.5) ? rng.pick(KEYS) : randomString(rng, 10)]: randomJson(rng, 2) };
    if (op === 8 && Array.isArray(v)) return rng.chance(0.5) ? v.slice(1) : [...v, ...v];
    // Not String(v): an object from the input may carry a "toString" key that is not a function.
    return typeof v === 'string' ? { value: v } : (JSON.stringify(v) ?? 'null');
  };
  const walk = (v: unknown, depth: number): unknown => {
    if (target-- === 0) return change(v);
    if (depth >= WALK_DEPTH) return v;
    if (Array.isArray(v)) return v.map((child) => walk(child, depth + 1));
    if (isRecord(v)) {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(v)) out[key] = walk(child, depth + 1);
      return out;
    }
    return v;
  };
  return walk(value, 0);
}

/** Byte sequences that are not valid UTF-8 (or are valid but unwelcome: a BOM, a NUL). */
export const BAD_UTF8: readonly number[][] = [
  [0xff],
  [0xfe],
  [0x80],
  [0xbf],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf5, 0x80, 0x80, 0x80],
  [0xc3],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0xef, 0xbb, 0xbf],
  [0x00],
];

const STRUCTURAL: readonly number[] = [0x0a, 0x0d, 0x00, 0x20, 0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x2d, 0x30, 0x39, 0x65];

/** 1–4 random byte-level edits of `input` (a new buffer; `other` is spliced in sometimes). */
export function mutateBytes(rng: Rng, input: Buffer, other?: Buffer): Buffer {
  let bytes = Buffer.from(input);
  const edits = rng.int(1, 4);
  for (let e = 0; e < edits; e++) {
    const n = bytes.length;
    const at = rng.below(n + 1);
    switch (rng.below(10)) {
      case 0: {
        if (n === 0) break;
        const flips = rng.int(1, 8);
        for (let i = 0; i < flips; i++) {
          const pos = rng.below(n);
          bytes[pos] = (bytes[pos] as number) ^ (1 << rng.below(8));
        }
        break;
      }
      case 1:
        if (n > 0) bytes[rng.below(n)] = rng.below(256);
        break;
      case 2:
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(rng.pick(BAD_UTF8)), bytes.subarray(at)]);
        break;
      case 3:
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([rng.pick(STRUCTURAL)]), bytes.subarray(at)]);
        break;
      case 4: {
        const end = Math.min(n, at + rng.size(64));
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(end)]);
        break;
      }
      case 5:
        bytes = bytes.subarray(0, at);
        break;
      case 6: {
        const end = Math.min(n, at + rng.size(64));
        bytes = Buffer.concat([bytes.subarray(0, end), bytes.subarray(at, end), bytes.subarray(end)]);
        break;
      }
      case 7:
        if (other && other.length > 0) {
          const from = rng.below(other.length);
          bytes = Buffer.concat([bytes.subarray(0, at), other.subarray(from, from + rng.size(200))]);
        }
        break;
      case 8: {
        // A number token swapped for a literal JSON.stringify never writes.
        const text = bytes.toString('latin1');
        const numbers = [...text.matchAll(/-?\d+(\.\d+)?([eE][+-]?\d+)?/g)];
        if (numbers.length === 0) break;
        const hit = rng.pick(numbers);
        const start = hit.index;
        bytes = Buffer.concat([bytes.subarray(0, start), Buffer.from(rng.pick(NUMBER_TEXTS)), bytes.subarray(start + hit[0].length)]);
        break;
      }
      default:
        bytes = Buffer.concat([bytes.subarray(0, at), rng.bytes(rng.size(32)), bytes.subarray(at)]);
    }
  }
  return bytes;
}

/** `data` cut at random boundaries, as a socket or a file might deliver it. */
export function randomChunks(rng: Rng, data: Buffer, maxChunk: number): Buffer[] {
  const chunks: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const size = rng.chance(0.3) ? rng.int(1, 8) : rng.int(1, maxChunk);
    chunks.push(data.subarray(at, at + size));
    at += size;
  }
  return chunks;
}
