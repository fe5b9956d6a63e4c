/**
 * The model picker's pure helpers (components/delegation/ModelPicker.svelte, ModelResults.svelte): the orders the catalog can
 * be listed in, the line that says what the list shows, a model's facts in one line, and where the arrow keys move.
 */
import type { ModelRow, ModelSort, ModelsReport } from '../../src-main/contract/methods.js';
import { formatPricePerM, formatTokens } from './format.js';

export const MODEL_SORTS: ReadonlyArray<{ value: ModelSort; label: string }> = [
  { value: 'price', label: 'Cheapest first' },
  { value: 'context', label: 'Largest context first' },
  { value: 'newest', label: 'Newest first' },
  { value: 'name', label: 'By name' },
];

/** "cheapest first", as the results table's caption says it. */
export function sortLabel(sort: ModelSort): string | undefined {
  return MODEL_SORTS.find((s) => s.value === sort)?.label.toLowerCase();
}

/** Model ids name the same model whatever their case ("Vendor/Model" is "vendor/model"). */
export function isSameModel(id: string, other: string): boolean {
  return id.toLowerCase() === other.toLowerCase();
}

/** "Qwen3 Coder · $0.20 in · $0.80 out · 262K context": the saved default's facts beside its id. */
export function modelFacts(row: ModelRow): string {
  const input = formatPricePerM(row.priceInputPerM, row.variablePricing);
  const output = formatPricePerM(row.priceOutputPerM, row.variablePricing);
  return `${row.name} · ${input} in · ${output} out · ${formatTokens(row.contextLength)} context`;
}

/**
 * What the list under the search shows: how many of how many matched `query`, or why there is nothing; while the
 * first answer is awaited, that it is loading.
 */
export function modelSummary(report: ModelsReport | null, query: string, loading: boolean): string {
  if (!report) return loading ? 'Loading the model list…' : '';
  const filter = query.trim();
  const shownCount = report.models.length;
  if (report.matched === 0) return filter ? `No tool-capable model matches “${filter}”.` : 'The catalog has no tool-capable model.';
  const shown = shownCount < report.matched ? `the first ${shownCount} of ${report.matched}` : `${report.matched}`;
  if (!filter) return `Showing ${shown} tool-capable models in the catalog.`;
  return `Showing ${shown} matching model${report.matched === 1 ? '' : 's'} (of ${report.totalToolModels} tool-capable models in the catalog).`;
}

/**
 * Where a key pressed on the `at`-th of `count` choice buttons moves the focus: another button's index, 'search' (up
 * from the first goes back to the search field), or null for a key the results leave alone.
 */
export function choiceFocusTarget(key: string, at: number, count: number): number | 'search' | null {
  if (key === 'Home') return 0;
  if (key === 'End') return count - 1;
  if (key === 'ArrowDown') return Math.min(at + 1, count - 1);
  if (key === 'ArrowUp') return at === 0 ? 'search' : at - 1;
  return null;
}
