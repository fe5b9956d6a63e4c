/**
 * "Did you mean": the catalog's models closest to an id OpenRouter does not have. People drop the vendor
 * (`gpt-4o` for `openai/gpt-4o`) or a date or variant, so the id's last segment and its vendor are matched
 * first, and only then the spelling; a list sorted by price alone offers five `:free` models instead.
 */
import type { ModelRow } from '../../contract/index.js';

/** `openai/gpt-4o:batch` → { vendor: 'openai', name: 'gpt-4o', variant: 'batch' }, lower-cased. */
function partsOf(id: string): { vendor: string | null; name: string; variant: string | null } {
  const lower = id.trim().toLowerCase();
  const slash = lower.lastIndexOf('/');
  const vendor = slash >= 0 ? lower.slice(0, slash) : null;
  const [name = '', variant = null] = lower.slice(slash + 1).split(':', 2);
  return { vendor, name, variant };
}

/** Levenshtein distance, one row at a time. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/**
 * How close a catalog id is to the one asked for; lower is closer, null is not close at all. In order: the same
 * name (with the vendor asked for, if any, and no variant before a variant), a name that starts with it (a dated
 * or `-mini` sibling), a name it starts with, then a spelling a few edits away.
 */
function closeness(wanted: ReturnType<typeof partsOf>, id: string): number | null {
  const got = partsOf(id);
  const otherVendor = wanted.vendor !== null && got.vendor !== wanted.vendor ? 1 : 0;
  const otherVariant = got.variant !== wanted.variant ? 0.5 : 0;
  if (got.name === wanted.name) return otherVendor + otherVariant;
  const nameGap = Math.abs(got.name.length - wanted.name.length) / 100;
  if (got.name.startsWith(wanted.name)) return 10 + otherVendor + otherVariant + nameGap;
  if (wanted.name.startsWith(got.name)) return 15 + otherVendor + otherVariant + nameGap;
  const edits = distance(wanted.name, got.name);
  if (edits > Math.max(2, Math.floor(wanted.name.length / 4))) return null;
  return 20 + edits + otherVendor + otherVariant;
}

/** The rows closest to `id`, closest first, at most `limit`. */
export function closestModels(id: string, rows: readonly ModelRow[], limit = 5): ModelRow[] {
  const wanted = partsOf(id);
  if (!wanted.name) return [];
  return rows
    .map((row) => ({ row, score: closeness(wanted, row.id) }))
    .filter((entry): entry is { row: ModelRow; score: number } => entry.score !== null)
    .sort((a, b) => a.score - b.score || a.row.id.localeCompare(b.row.id))
    .slice(0, limit)
    .map((entry) => entry.row);
}

/**
 * What to offer instead of an id OpenRouter lacks: the closest rows, topped up with the same vendor's newest. A new
 * version (`deepseek/deepseek-v5`) is a few edits from no name at all, but its vendor still says what was meant.
 */
export function suggestedModels(id: string, rows: readonly ModelRow[], limit = 5): ModelRow[] {
  const close = closestModels(id, rows, limit);
  const { vendor } = partsOf(id);
  if (close.length >= limit || vendor === null) return close;
  const sameVendor = rows
    .filter((row) => partsOf(row.id).vendor === vendor && !close.includes(row))
    .sort((a, b) => (b.created ?? 0) - (a.created ?? 0) || a.id.localeCompare(b.id));
  return [...close, ...sameVendor].slice(0, limit);
}

/**
 * A vendor or a family named where a model was asked for ("delegate this to deepseek", "qwen3"): the models it
 * names, the default model first when it is one of them, then the cheapest (issue 38: the closest names were the
 * shortest, and the first offered cost five times the default). `rows` come cheapest first (queryModels, by price).
 * Empty when `id` names a model's path (has a `/`) or matches no vendor and no family.
 */
export function familyModels(id: string, rows: readonly ModelRow[], defaultModel: string, limit = 5): ModelRow[] {
  const wanted = id.trim().toLowerCase();
  if (wanted === '' || wanted.includes('/')) return [];
  const parts = rows.map((row) => ({ row, ...partsOf(row.id) }));
  // A model's own name (`gpt-4o`) is not a family: "did you mean" finds it (closestModels).
  if (parts.some((p) => p.name === wanted)) return [];
  const members = parts.filter((p) => p.vendor === wanted || p.name.startsWith(`${wanted}-`)).map((p) => p.row);
  const byDefault = members.filter((row) => row.id === defaultModel);
  return [...byDefault, ...members.filter((row) => row.id !== defaultModel)].slice(0, limit);
}
