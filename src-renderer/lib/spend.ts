/**
 * How the Spend page shows `spend.report`: the chart's series and scale, the labels, the CSV. Pure functions of
 * contract data, tested directly in tests/renderer/spend.test.ts. Types only from the contract: its runtime values
 * would pull zod into the page.
 */
import type { SpendDay, SpendModel, SpendReport } from '../../src-main/contract/index.js';
import { formatShare, formatUsd } from './format.js';
import { plural } from './jobs.js';

/** Colours the theme defines for chart series (app.css, `--series-1` …); a report with more models folds the rest into one. */
export const SERIES_COLOURS = 8;

/** One stack of the chart: a model, or the cheapest models together once there are more than SERIES_COLOURS. */
export interface Series {
  /** 1-based: its colour (`--series-N`) and its place from the bottom of each bar and in the legend. */
  index: number;
  label: string;
  models: string[];
  costUsd: number;
}

/** The chart's series, dearest first: the report's model order, with what passes the colours left as "Other models". */
export function chartSeries(models: readonly Pick<SpendModel, 'model' | 'costUsd'>[], colours = SERIES_COLOURS): Series[] {
  const own = models.length > colours ? models.slice(0, colours - 1) : models;
  const series: Series[] = own.map((m, i) => ({ index: i + 1, label: m.model, models: [m.model], costUsd: m.costUsd }));
  const rest = models.slice(own.length);
  if (rest.length > 0) {
    series.push({
      index: own.length + 1,
      label: `${rest.length} other models`,
      models: rest.map((m) => m.model),
      costUsd: rest.reduce((sum, m) => sum + m.costUsd, 0),
    });
  }
  return series;
}

/** What one series spent on one day (0 when nothing). */
export function seriesCost(day: Pick<SpendDay, 'models'>, series: Pick<Series, 'models'>): number {
  return day.models.reduce((sum, cell) => (series.models.includes(cell.model) ? sum + cell.costUsd : sum), 0);
}

/** One bar's pieces, bottom up, in series order, each with where it starts and ends in dollars; empty pieces left out. */
export function dayStack(day: Pick<SpendDay, 'models'>, series: readonly Series[]): Array<{ series: Series; costUsd: number; from: number; to: number }> {
  const pieces: Array<{ series: Series; costUsd: number; from: number; to: number }> = [];
  let base = 0;
  for (const s of series) {
    const costUsd = seriesCost(day, s);
    if (costUsd <= 0) continue;
    pieces.push({ series: s, costUsd, from: base, to: base + costUsd });
    base += costUsd;
  }
  return pieces;
}

/**
 * A y axis from zero that reaches `max` in about `count` round steps (1, 2, 2.5 or 5 × a power of ten): the steps and
 * the top. Nothing spent still gets an axis, to $1.
 */
export function moneyScale(max: number, count = 4): { top: number; ticks: number[] } {
  if (!(max > 0) || !Number.isFinite(max)) return { top: 1, ticks: [0, 0.25, 0.5, 0.75, 1] };
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough - 1e-12) ?? 10 * power;
  const steps = Math.max(1, Math.ceil(max / step - 1e-9));
  const ticks = Array.from({ length: steps + 1 }, (_, i) => Number((i * step).toPrecision(12)));
  return { top: ticks[ticks.length - 1] ?? step, ticks };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A report's day ("2026-11-03") as the chart names it: "3 Nov". Read from the text, so no time zone can move it. */
export function dayLabel(date: string): string {
  const [, month, day] = date.split('-').map(Number);
  return month && day ? `${day} ${MONTHS[month - 1] ?? ''}`.trim() : date;
}

/** succeeded of finished, as a share: "75%", or a dash before any job has ended. */
export function successText(row: Pick<SpendModel, 'successRate'>): string {
  return row.successRate === null ? '—' : formatShare(row.successRate);
}

/** The chart in one sentence, for screen readers (the table below has every number). */
export function chartSummary(report: Pick<SpendReport, 'days' | 'totalUsd'>): string {
  const dearest = report.days.reduce<SpendDay | null>((top, day) => (day.costUsd > (top?.costUsd ?? 0) ? day : top), null);
  const span = `Spend per day over the last ${plural(report.days.length, 'day')}, stacked by model`;
  if (!dearest) return `${span}: nothing spent.`;
  return `${span}: ${formatUsd(report.totalUsd)} in all; the most on ${dayLabel(dearest.date)}, ${formatUsd(dearest.costUsd)}.`;
}

/** The CSV's columns, in order. */
export const CSV_COLUMNS = ['date', 'model', 'cost_usd', 'jobs', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens'] as const;

/** Dollars in a CSV cell: plain decimals, at most six places (a millionth of a dollar), never an exponent. */
export function csvUsd(usd: number): string {
  return String(Number(usd.toFixed(6)));
}

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. A text that a spreadsheet would run
 * as a formula (=, +, -, @ first) gets a leading apostrophe: a model id is not a formula.
 */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The report as CSV: one line per day and model that had jobs, oldest day first, models in the report's order; CRLF line ends. */
export function spendCsv(report: Pick<SpendReport, 'days'>): string {
  const lines: string[] = [CSV_COLUMNS.join(',')];
  for (const day of report.days) {
    for (const cell of day.models) {
      const { usage } = cell;
      lines.push(
        [
          day.date,
          csvField(cell.model),
          csvUsd(cell.costUsd),
          cell.jobs,
          usage.inputTokens,
          usage.outputTokens,
          usage.cacheReadTokens,
          usage.cacheWriteTokens,
        ].join(','),
      );
    }
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** The file the export saves to: "openrouter-delegate-spend-2026-11-01-to-2026-11-30.csv". */
export function csvFileName(report: Pick<SpendReport, 'from' | 'to'>): string {
  return `openrouter-delegate-spend-${report.from}-to-${report.to}.csv`;
}
