/**
 * Plain-text presentation of the model catalog: pure functions, used by the MCP bridge's text
 * output and the policy's refusal reasons, so the same model reads the same everywhere.
 */
import type { ModelRow } from '../methods.js';

/** Drops trailing zeros after the first `keep` decimals: "0.07980" → "0.0798", "3.00" stays. */
function trimDecimals(fixed: string, keep: number): string {
  const dot = fixed.indexOf('.');
  if (dot < 0) return fixed;
  let end = fixed.length;
  while (end > dot + 1 + keep && fixed[end - 1] === '0') end--;
  return fixed.slice(0, end === dot + 1 ? dot : end);
}

/** "$0.14", "$3.00", "$0.0798" (four significant digits below $1), "free", "variable", "unknown". */
export function formatPricePerM(perM: number | null, variable = false): string {
  if (variable) return 'variable';
  if (perM === null || !Number.isFinite(perM)) return 'unknown';
  if (perM === 0) return 'free';
  const rounded = Number(perM.toPrecision(4));
  const decimals = Math.max(2, 3 - Math.floor(Math.log10(Math.abs(rounded))));
  return `$${trimDecimals(rounded.toFixed(Math.min(decimals, 12)), 2)}`;
}

/** Context sizes as people say them: 512, "128K", "1M", "1.05M". */
export function formatTokens(tokens: number): string {
  const abs = Math.abs(tokens);
  if (abs < 1000) return String(Math.round(tokens));
  if (Math.round(abs / 1000) < 1000) return `${Math.round(tokens / 1000)}K`;
  return `${trimDecimals((tokens / 1e6).toFixed(2), 0)}M`;
}

/** Money: "$1.20", "$0.42", and two significant digits for small sums ("$0.0042"). */
export function formatUsd(usd: number): string {
  const sign = usd < 0 ? '-' : '';
  const abs = Math.abs(usd);
  if (abs === 0 || abs >= 0.01) return `${sign}$${abs.toFixed(2)}`;
  const decimals = Math.min(12, 1 - Math.floor(Math.log10(abs)));
  return `${sign}$${trimDecimals(abs.toFixed(decimals), 2)}`;
}

interface Column {
  title: string;
  alignRight: boolean;
  cell: (row: ModelRow) => string;
}

function tierMark(row: ModelRow): string {
  return row.tieredFromPromptTokens === null ? '' : '*';
}

const COLUMNS: readonly Column[] = [
  { title: 'model', alignRight: false, cell: (row) => row.id },
  { title: '$/M in', alignRight: true, cell: (row) => formatPricePerM(row.priceInputPerM, row.variablePricing) + tierMark(row) },
  { title: '$/M out', alignRight: true, cell: (row) => formatPricePerM(row.priceOutputPerM, row.variablePricing) + tierMark(row) },
  { title: 'context', alignRight: true, cell: (row) => (row.contextLength === null ? 'unknown' : formatTokens(row.contextLength)) },
  { title: 'policy', alignRight: false, cell: (row) => (row.allowed ? 'allowed' : `not allowed: ${row.notAllowedReason ?? 'refused by policy'}`) },
];

function pad(text: string, width: number, alignRight: boolean): string {
  return alignRight ? text.padStart(width) : text.padEnd(width);
}

function tableLine(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function tierFootnote(rows: readonly ModelRow[]): string | null {
  const thresholds = rows.map((row) => row.tieredFromPromptTokens).filter((t): t is number => t !== null);
  if (thresholds.length === 0) return null;
  const low = formatTokens(Math.min(...thresholds));
  const high = formatTokens(Math.max(...thresholds));
  const from = low === high ? `${low} tokens` : `${low}–${high} tokens, depending on the model`;
  return `* base price; long prompts cost more (from ${from}).`;
}

/** A markdown table whose columns also line up as plain text. */
export function renderModelsTable(rows: readonly ModelRow[]): string {
  if (rows.length === 0) return 'No models match.';
  const cells = rows.map((row) => COLUMNS.map((column) => column.cell(row)));
  const widths = COLUMNS.map((column, i) => Math.max(column.title.length, ...cells.map((rowCells) => rowCells[i]?.length ?? 0)));
  const lines = [
    tableLine(COLUMNS.map((column, i) => pad(column.title, widths[i] ?? 0, column.alignRight))),
    tableLine(COLUMNS.map((column, i) => {
      const dashes = '-'.repeat(widths[i] ?? 0);
      return column.alignRight ? `${dashes.slice(1)}:` : dashes;
    })),
    ...cells.map((rowCells) => tableLine(COLUMNS.map((column, i) => pad(rowCells[i] ?? '', widths[i] ?? 0, column.alignRight)))),
  ];
  const footnote = tierFootnote(rows);
  if (footnote) lines.push('', footnote);
  return lines.join('\n');
}
