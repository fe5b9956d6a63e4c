/** Small statistics for benches: these machines are noisy, so we report medians and tails, and ratios. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export const median = (samples: number[]): number => percentile(samples, 50);

export interface BudgetRow {
  budget: string;
  measured: string;
  baseline: string;
  ratio: number;
  /** The number compared with `limit`: a ratio or an absolute value, as the budget says. */
  value: number;
  limit: number;
}

export function verdict(row: BudgetRow): 'pass' | 'short' {
  return row.value <= row.limit ? 'pass' : 'short';
}

export function printTable(rows: BudgetRow[]): void {
  const header = ['budget', 'measured', 'baseline (same run)', 'ratio', 'result'];
  const lines = rows.map((r) => [r.budget, r.measured, r.baseline, `${r.ratio.toFixed(2)}×`, verdict(r)]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]?.length ?? 0)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  console.log(fmt(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const l of lines) console.log(fmt(l));
}

export const ms = (n: number): string => `${n.toFixed(n < 10 ? 2 : 0)} ms`;
