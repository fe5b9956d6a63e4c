/**
 * Tolerant readers of the fields of Claude Code's stream-json events (stream-parser.ts): a field of the wrong type
 * reads as null or zero instead of throwing, because a stream may come from any Claude Code version, or be damaged.
 */
import { ZERO_USAGE } from '../../../contract/jobs.js';
import type { Usage } from '../../../contract/jobs.js';
import { isRecord } from '../../../common/errors.js';

export function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

export function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * A token count: real ones are integers far below 2^53. A larger one is damage; it is capped so that
 * sums and costs stay finite (Infinity would turn into null in job.json and break its schema) while
 * still counting high, the safe side for a budget.
 */
function tokens(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.min(value, Number.MAX_SAFE_INTEGER) : 0;
}

/** Anthropic's usage object → ours; null when there is no usage object at all. */
export function usageOf(raw: unknown): Usage | null {
  if (!isRecord(raw)) return null;
  return {
    inputTokens: tokens(raw.input_tokens),
    outputTokens: tokens(raw.output_tokens),
    cacheReadTokens: tokens(raw.cache_read_input_tokens),
    cacheWriteTokens: tokens(raw.cache_creation_input_tokens),
  };
}

/** Sum of the token counts in a result's `modelUsage` (camelCase, one entry per model). */
export function modelUsageOf(raw: unknown): Usage | null {
  if (!isRecord(raw)) return null;
  const sum = { ...ZERO_USAGE };
  for (const entry of Object.values(raw)) {
    if (!isRecord(entry)) continue;
    sum.inputTokens += tokens(entry.inputTokens);
    sum.outputTokens += tokens(entry.outputTokens);
    sum.cacheReadTokens += tokens(entry.cacheReadInputTokens);
    sum.cacheWriteTokens += tokens(entry.cacheCreationInputTokens);
  }
  return sum;
}
