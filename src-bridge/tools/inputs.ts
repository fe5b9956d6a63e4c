/**
 * The tools' input schemas, derived from the contract's request schemas: a tool lists the fields of
 * its method it offers and says what each means to the model; bounds, lengths, enums and defaults
 * are the contract's, so the tool and the service cannot disagree on them. A field the contract
 * gives a default is optional here and left out when the model leaves it out, so the service
 * applies its default; the words that name a default read it from the contract.
 */
import { z } from 'zod';
import { MAX_INLINE_PROMPT_CHARS } from '../../src-main/contract/index.js';
import { formatCount } from '../../src-main/common/format.js';
import { mcpFieldName } from '../mcp-names.js';
import type { McpFieldName } from '../mcp-names.js';

/**
 * What a field means to the model: fixed words, words built from the contract's field (its default), or `null` where
 * the name and the schema say it all. The words leave out what the schema already says (type, enum, bounds): every
 * request carries them when the client does not defer tools, and a refused call names the rule it broke.
 */
export type FieldWords<S> = string | null | ((field: S) => string);

/** A field with a contract default is optional to the model: leaving it out lets the service apply the default. */
type AsInput<S> = S extends z.ZodDefault<infer Inner> ? z.ZodOptional<Inner> : S;

export type DerivedInput<Shape, Fields> = { [K in keyof Fields & keyof Shape & string as McpFieldName<K>]: AsInput<Shape[K]> };

/** A tool's input schema: the chosen fields of its method's request, named for MCP, with the bridge's words. */
export function deriveInput<Shape extends Record<string, z.ZodType>, const Fields extends { [K in keyof Shape]?: FieldWords<Shape[K]> }>(
  request: { shape: Shape },
  fields: Fields,
): DerivedInput<Shape, Fields> {
  const input: Record<string, z.ZodType> = {};
  for (const [name, words] of Object.entries(fields) as Array<[keyof Shape & string, FieldWords<z.ZodType>]>) {
    const field = request.shape[name];
    if (field === undefined) throw new Error(`The contract request has no field ${name}.`);
    const asInput = field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType).optional() : field;
    input[mcpFieldName(name)] = words === null ? asInput : asInput.describe(typeof words === 'string' ? words : words(field));
  }
  return input as DerivedInput<Shape, Fields>;
}

/** The default the contract gives a field (the service applies it). */
export function contractDefault<T>(field: z.ZodDefault<z.ZodType<T>>): T {
  return field.def.defaultValue as T;
}

/** The bounds of a numeric contract field (of the number inside its default). */
export function numberBounds(field: z.ZodDefault<z.ZodNumber> | z.ZodNumber): { min: number | null; max: number | null } {
  const number = field instanceof z.ZodDefault ? (field.unwrap() as z.ZodNumber) : field;
  return { min: number.minValue, max: number.maxValue };
}

/** "(1–100, default 15)" for a bounded contract field with a default. */
export function rangeAndDefault(field: z.ZodDefault<z.ZodNumber>): string {
  const { min, max } = numberBounds(field);
  return `${min}–${max}, default ${contractDefault(field)}`;
}

// What the tools share: the same contract field means the same to the model in every tool that offers it.

export const PROMPT_WORDS = {
  prompt: `The whole task: the delegate sees nothing of this chat. Or prompt_file (for more than ${formatCount(MAX_INLINE_PROMPT_CHARS)} characters).`,
  promptFile: 'A file holding the task, inside cwd or add_dirs.',
} as const;

export const WAIT_WORDS = (field: z.ZodDefault<z.ZodNumber>): string => `Seconds to wait for the end (default ${contractDefault(field)}).`;

export const PERMISSION_WORDS = "Default and ceiling: the user's.";

/**
 * `detail`, which every tool offers: the bridge's own field, not the contract's. The pinned Claude Code hands
 * its model a tool's structuredContent instead of its text whenever there is one, so the tools return the
 * record as structuredContent only when asked; by default the model reads a short text (docs/ARCHITECTURE.md §3).
 */
export const DETAIL_FIELD = 'detail';
const detail = z.boolean().optional().describe('The full record, as JSON.');

export function withDetail<Input extends Record<string, z.ZodType>>(input: Input): Input & { detail: typeof detail } {
  return { ...input, [DETAIL_FIELD]: detail } as Input & { detail: typeof detail };
}
