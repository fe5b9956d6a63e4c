/**
 * `openrouter-delegate stats [--json] [--all]`: the scoreboard by model (`jobs.scoreboard`, contract/scoreboard.ts) of
 * the repository holding the current folder, or of every repository: per model, its delegations, how many passed
 * their verify commands, how many were taken, the median cost of a pass and the median time.
 */
import type { ScoreRow, Scoreboard } from '../../contract/index.js';
import type { IpcClient } from '../../ipc/client.js';
import { NO_FIGURE, formatMs, formatShare, formatUsd } from '../../common/format.js';

const HEADINGS = ['model', 'delegations', 'passed', 'taken', 'median pass cost', 'median time'] as const;
/** Which columns are figures, aligned right; the model and the two counted shares read left to right. */
const RIGHT = [false, true, false, false, true, true] as const;

/** "4/5 80%": passed of verified, and the share the service computed; "—" before any was verified. */
function passedCell(row: ScoreRow): string {
  return row.verified > 0 && row.passRate !== null ? `${row.passed}/${row.verified} ${formatShare(row.passRate)}` : NO_FIGURE;
}

/** "3 60%": taken, and the share of the ended ones; "—" before any ended. */
function takenCell(row: ScoreRow): string {
  return row.takenRate === null ? NO_FIGURE : `${row.taken} ${formatShare(row.takenRate)}`;
}

function cells(row: ScoreRow): string[] {
  return [row.model, String(row.jobs), passedCell(row), takenCell(row), formatUsd(row.medianPassCostUsd), formatMs(row.medianMs)];
}

/** The rows as lines, each column as wide as its widest cell; no trailing spaces. */
function aligned(rows: readonly string[][]): string[] {
  const widths = HEADINGS.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) =>
    `  ${row.map((cell, column) => (RIGHT[column] ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0))).join('  ')}`.trimEnd(),
  );
}

/** What the empty scoreboard says: that nothing is counted yet, and what makes a delegation count. */
function nothingCounted(all: boolean): string {
  return (
    `No delegation ${all ? 'in any repository' : 'here'} has been counted yet. A delegation counts when it works in a worktree of ${all ? 'a' : 'this'} repository; ` +
    'started with verify commands (delegate_start with `verify`, e.g. `verify: ["npm test"]`), it counts in "passed" when they pass, ' +
    'and in "taken" once you take its work (`openrouter-delegate take <job-id>`).'
  );
}

/**
 * The scoreboard as text: per repository its path, then one aligned line per model; the day counting began and what
 * the two shares are of. `all`: the board is every repository's (only the empty line differs).
 */
export function renderScoreboard(board: Scoreboard, options: { all: boolean } = { all: false }): string[] {
  const repos = board.repos.filter((repo) => repo.models.length > 0);
  if (repos.length === 0) return [nothingCounted(options.all)];
  const blocks = repos.map((repo) => [repo.repo, ...aligned([[...HEADINGS], ...repo.models.map(cells)])]);
  const since = board.since ? `Since ${board.since.slice(0, 10)}. ` : '';
  return [...blocks.flatMap((block, i) => (i === 0 ? block : ['', ...block])), '', `${since}Passed: of those verified. Taken: of those that ended.`];
}

/** `folder`: the current folder, whose repository's scoreboard is shown unless `all`. */
export async function statsCommand(client: IpcClient, options: { all: boolean; json: boolean; folder: string }, out: (line: string) => void): Promise<number> {
  const board = await client.call('jobs.scoreboard', options.all ? {} : { repo: options.folder });
  out(options.json ? JSON.stringify(board, null, 2) : renderScoreboard(board, { all: options.all }).join('\n'));
  return 0;
}
