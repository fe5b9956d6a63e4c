/**
 * The model catalog as a plain-text table, for the MCP bridge's openrouter_models answer. Prices and
 * context sizes go through src-main/common/format.ts, as in the policy's refusal reasons and on every surface.
 */
import { formatPricePerM, formatTokens } from '../../src-main/common/format.js';
import type { ModelRow } from '../../src-main/contract/methods.js';
import type { ScoreRow } from '../../src-main/contract/scoreboard.js';

/** The repository's scoreboard by model, for the `here` column: absent or empty, no column. */
export type HereScores = ReadonlyMap<string, ScoreRow>;

/** What the `here` column means, said once under the table. */
export const HERE_NOTE = "here: this repository's delegations on the model that passed their verify commands, of those verified.";

const hereCell = (scores: HereScores) => (row: ModelRow) => {
  const score = scores.get(row.id);
  return score && score.verified > 0 ? `${score.passed}/${score.verified}` : '';
};

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
  { title: 'input', alignRight: true, cell: (row) => formatPricePerM(row.priceInputPerM, row.variablePricing) + tierMark(row) },
  { title: 'output', alignRight: true, cell: (row) => formatPricePerM(row.priceOutputPerM, row.variablePricing) + tierMark(row) },
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

/** A markdown table whose columns also line up as plain text; with `scores`, a `here` column when one of its models has any. */
export function renderModelsTable(rows: readonly ModelRow[], scores: HereScores = new Map()): string {
  if (rows.length === 0) return 'No models match.';
  // A policy column that says "allowed" on every row says nothing: one line under the table says it once.
  const allAllowed = rows.every((row) => row.allowed);
  const here = rows.some((row) => (scores.get(row.id)?.verified ?? 0) > 0);
  const columns = [
    ...(allAllowed ? COLUMNS.filter((column) => column.title !== 'policy') : COLUMNS),
    ...(here ? [{ title: 'here', alignRight: true, cell: hereCell(scores) }] : []),
  ];
  const cells = rows.map((row) => columns.map((column) => column.cell(row)));
  const widths = columns.map((column, i) => Math.max(column.title.length, ...cells.map((rowCells) => rowCells[i]?.length ?? 0)));
  const lines = [
    tableLine(columns.map((column, i) => pad(column.title, widths[i] ?? 0, column.alignRight))),
    tableLine(
      columns.map((column, i) => {
        const dashes = '-'.repeat(widths[i] ?? 0);
        return column.alignRight ? `${dashes.slice(1)}:` : dashes;
      }),
    ),
    ...cells.map((rowCells) => tableLine(columns.map((column, i) => pad(rowCells[i] ?? '', widths[i] ?? 0, column.alignRight)))),
  ];
  if (allAllowed) lines.push('All of these are allowed by the policy.');
  if (here) lines.push(HERE_NOTE);
  const footnote = tierFootnote(rows);
  if (footnote) lines.push('', footnote);
  return lines.join('\n');
}
