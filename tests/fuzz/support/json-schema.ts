/**
 * Values from a JSON Schema, as the bridge advertises its tools' inputs (and as zod writes the
 * contract's request schemas): values the schema accepts, values it refuses, and a judge that says
 * which is which. Only the keywords these schemas use are understood; anything else is ignored by
 * the generator and makes the judge say "ambiguous" rather than guess.
 *
 * String lengths are where JSON Schema and zod differ: JSON Schema counts code points, zod counts
 * UTF-16 units. A string is "valid" only when both agree it fits, "invalid" only when both agree it
 * does not; in between it is "ambiguous", and the tests assert nothing about validation for it.
 */
import type { Rng } from './prng.js';
import { INTERESTING_NUMBERS, longString, randomJson, randomString } from './mutate.js';
import { isRecord } from '../../../src-main/common/errors.js';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  default?: unknown;
  [keyword: string]: unknown;
}

export type Verdict = 'valid' | 'invalid' | 'ambiguous';

/** Strings worth trying in a field, by the field's name (e.g. files for prompt_file, ids for job_id). */
export type StringHints = Record<string, readonly string[]>;

const UNDERSTOOD = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'enum',
  'const',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'anyOf',
  'oneOf',
  'default',
  'description',
  '$schema',
  'title',
]);

function codePoints(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(expected: string, value: unknown): boolean {
  const actual = typeOf(value);
  if (expected === 'number') return actual === 'number' || actual === 'integer';
  if (expected === 'integer') return actual === 'integer' && Number.isSafeInteger(value);
  return expected === actual;
}

function worst(a: Verdict, b: Verdict): Verdict {
  if (a === 'invalid' || b === 'invalid') return 'invalid';
  if (a === 'ambiguous' || b === 'ambiguous') return 'ambiguous';
  return 'valid';
}

/** Whether `value` satisfies `schema`: both JSON Schema's and zod's reading agree, or they may not. */
export function judge(schema: JsonSchema, value: unknown): Verdict {
  for (const keyword of Object.keys(schema)) if (!UNDERSTOOD.has(keyword)) return 'ambiguous';
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const verdicts = branches.map((branch) => judge(branch, value));
    if (verdicts.includes('valid')) return 'valid';
    return verdicts.includes('ambiguous') ? 'ambiguous' : 'invalid';
  }
  if (schema.const !== undefined && value !== schema.const) return 'invalid';
  if (schema.enum && !schema.enum.some((option) => option === value)) return 'invalid';
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, value))) return 'invalid';
  }
  let verdict: Verdict = 'valid';
  if (typeof value === 'string') {
    const units = value.length;
    const points = codePoints(value);
    const min = schema.minLength ?? 0;
    const max = schema.maxLength ?? Infinity;
    if (units < min || points > max) return 'invalid';
    if (points < min || units > max) verdict = 'ambiguous';
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) return 'invalid';
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return 'invalid';
    if (schema.maximum !== undefined && value > schema.maximum) return 'invalid';
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) return 'invalid';
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) return 'invalid';
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) return 'invalid';
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return 'invalid';
    if (schema.items) for (const item of value) verdict = worst(verdict, judge(schema.items, item));
  }
  if (isRecord(value)) {
    const properties = schema.properties ?? {};
    for (const name of schema.required ?? []) if (!(name in value)) return 'invalid';
    for (const [name, child] of Object.entries(value)) {
      const sub = properties[name];
      if (sub) verdict = worst(verdict, judge(sub, child));
      else if (schema.additionalProperties === false) return 'invalid';
      else if (isRecord(schema.additionalProperties)) verdict = worst(verdict, judge(schema.additionalProperties, child));
    }
  }
  return verdict;
}

function primaryType(schema: JsonSchema): string | undefined {
  if (Array.isArray(schema.type)) return schema.type[0];
  if (schema.type) return schema.type;
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  return undefined;
}

/** A string both readings accept: at least minLength code points, at most maxLength UTF-16 units. */
function validString(rng: Rng, schema: JsonSchema, hints: readonly string[] | undefined): string {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 10_000;
  const fits = (s: string) => codePoints(s) >= min && s.length <= max;
  if (hints && rng.chance(0.5)) {
    const hint = rng.pick(hints);
    if (fits(hint)) return hint;
  }
  let text: string;
  const r = rng.float();
  if (r < 0.04) text = longString(rng, max);
  else if (r < 0.08) text = longString(rng, rng.int(min, max));
  else text = randomString(rng, Math.min(max, 300));
  if (text.length > max) text = text.slice(0, max);
  while (codePoints(text) < min) text += 'a';
  if (text.length > max) text = 'a'.repeat(min);
  return fits(text) ? text : 'a'.repeat(Math.max(min, 1));
}

function validNumber(rng: Rng, schema: JsonSchema, integer: boolean): number {
  const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum : -1e6);
  const high = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum : 1e6);
  const ok = (n: number) => judge({ ...schema, type: integer ? 'integer' : 'number' }, n) === 'valid';
  const candidates: number[] = [low, high, low + 1, high - 1, (low + high) / 2, ...INTERESTING_NUMBERS];
  if (schema.exclusiveMinimum !== undefined) candidates.push(schema.exclusiveMinimum + Number.EPSILON, 5e-324, schema.exclusiveMinimum + 0.01);
  for (let attempt = 0; attempt < 6; attempt++) {
    let n = rng.chance(0.5) ? rng.pick(candidates) : low + rng.float() * (high - low);
    if (integer) n = Math.round(n);
    if (ok(n)) return n;
  }
  const fallback = integer ? Math.ceil(low + (schema.exclusiveMinimum !== undefined ? 1 : 0)) : (low + high) / 2;
  return fallback;
}

/** A value `schema` accepts (judge() says "valid" for all but the rare string fallbacks). */
export function generateValid(rng: Rng, schema: JsonSchema, hints: StringHints = {}, field = ''): unknown {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches && branches.length > 0) return generateValid(rng, rng.pick(branches), hints, field);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return rng.pick(schema.enum);
  switch (primaryType(schema)) {
    case 'string':
      return validString(rng, schema, hints[field]);
    case 'integer':
      return validNumber(rng, schema, true);
    case 'number':
      return validNumber(rng, schema, false);
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    case 'array': {
      const min = schema.minItems ?? 0;
      const max = Math.min(schema.maxItems ?? 20, 200);
      const length = rng.chance(0.05) ? max : Math.max(min, Math.min(max, rng.size(8)));
      return Array.from({ length }, () => (schema.items ? generateValid(rng, schema.items, hints, field) : randomJson(rng, 1)));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [name, sub] of Object.entries(schema.properties ?? {})) {
        if (required.has(name) || rng.chance(0.45)) out[name] = generateValid(rng, sub, hints, name);
      }
      if (schema.additionalProperties !== false && rng.chance(0.05)) out[`extra_${rng.below(100)}`] = randomJson(rng, 1);
      return out;
    }
    default:
      return randomJson(rng, 2);
  }
}

/** A value `sub` refuses, of the kinds a caller gets wrong: wrong type, out of range, too long, not in the list. */
function invalidFor(rng: Rng, sub: JsonSchema): unknown {
  const type = primaryType(sub);
  const options: Array<() => unknown> = [
    () => (type === 'string' ? rng.pick([0, 1.5, true, null, [], {}]) : randomString(rng, 10)),
    () => (type === 'object' ? [] : { nested: randomJson(rng, 2) }),
    () => null,
  ];
  if (sub.enum)
    options.push(
      () => `${String(rng.pick(sub.enum ?? ['x']))}${rng.pick(['_', ' ', 'X'])}`,
      () => String(rng.pick(sub.enum ?? ['x'])).toUpperCase(),
    );
  if (type === 'string' && sub.maxLength !== undefined) options.push(() => 'z'.repeat((sub.maxLength as number) + rng.int(1, 3)));
  if (type === 'string' && (sub.minLength ?? 0) > 0) options.push(() => '');
  if (type === 'integer')
    options.push(
      () => rng.int(1, 999) + 0.5,
      () => rng.pick([2 ** 53, 1e21, 1e300]),
    );
  if (type === 'integer' || type === 'number') {
    if (sub.maximum !== undefined) options.push(() => (sub.maximum as number) + rng.pick([1, 0.5, 1e6, 1e300]));
    if (sub.minimum !== undefined) options.push(() => (sub.minimum as number) - rng.pick([1, 0.5, 1e6]));
    if (sub.exclusiveMinimum !== undefined)
      options.push(
        () => sub.exclusiveMinimum,
        () => -1,
      );
    options.push(
      () => String(rng.int(0, 100)),
      () => rng.pick([true, false]),
    );
  }
  if (type === 'array') {
    if (sub.maxItems !== undefined) options.push(() => Array.from({ length: (sub.maxItems as number) + 1 }, (_, i) => `item${i}`));
    if (sub.items) options.push(() => [invalidFor(rng, sub.items as JsonSchema)]);
    options.push(() => 'not-a-list');
  }
  return rng.pick(options)();
}

/**
 * A value `schema` (an object schema) refuses: one field made invalid, a required field left out,
 * an extra field where none is allowed, or not an object at all. Null when no such value was found.
 */
export function generateInvalid(rng: Rng, schema: JsonSchema, hints: StringHints = {}): unknown {
  for (let attempt = 0; attempt < 12; attempt++) {
    const base = generateValid(rng, schema, hints);
    const candidate: unknown = (() => {
      if (!isRecord(base)) return invalidFor(rng, schema);
      const properties = Object.entries(schema.properties ?? {});
      const r = rng.float();
      if (r < 0.7 && properties.length > 0) {
        const [name, sub] = rng.pick(properties);
        return { ...base, [name]: invalidFor(rng, sub) };
      }
      if (r < 0.8 && (schema.required ?? []).length > 0) {
        const copy = { ...base };
        delete copy[rng.pick(schema.required ?? [])];
        return copy;
      }
      if (r < 0.9 && schema.additionalProperties === false) return { ...base, [`unexpected_${rng.below(10)}`]: randomJson(rng, 1) };
      return rng.pick<unknown>([[], 'params', 42, true, [base]]);
    })();
    if (judge(schema, candidate) === 'invalid') return candidate;
  }
  return null;
}
