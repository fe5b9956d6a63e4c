/**
 * How the Spend page shows `jobs.scoreboard` (src-main/contract/scoreboard.ts): each repository's models as the words
 * its table prints, and what the section says before there is anything to show. Pure functions of contract data,
 * tested in tests/renderer/scoreboard.test.ts. Types only from the contract: its runtime values would pull zod into
 * the page.
 */
import type { ScoreRow, Scoreboard } from '../../src-main/contract/index.js';
import { NO_FIGURE, formatCount, formatDateTime, formatMs, formatShare, formatUsd } from './format.js';

/** What a figure with nothing to count yet reads as (before any delegation was verified, or ended): every surface's dash. */
export const NO_SCORE = NO_FIGURE;

/** The section's sentence before any delegation in a repository: what fills it in, and what counts in Taken. */
export const SCOREBOARD_EMPTY =
  'Delegations in a git repository fill this in: those with verify commands fill in Passed, and a delegation’s work taken or discarded counts in Taken.';

/** One model's row in a repository's table, each cell as it prints. */
export interface ScoreCells {
  model: string;
  /** Delegations started on it there: "5". */
  delegations: string;
  /** Of those verified, the share that passed: "80%", or a dash before any was verified. */
  passRate: string;
  /** Under it: "4 of 5 verified"; null before any was verified. */
  passed: string | null;
  /** Of those ended, the share whose work was taken: "60%", or a dash before any ended. */
  takenRate: string;
  /** Under it: "3 taken"; null before any ended. */
  taken: string | null;
  /** The median cost of a delegation that passed: "$0.25", or a dash before one passed. */
  passCost: string;
  /** The median time of an ended delegation, as the CLI's `stats` says it: "1 min 5 s", or a dash before one ended. */
  time: string;
}

/** A repository's table: its path as the heading (in full: the page knows no home folder to shorten it by). */
export interface ScoreTable {
  repo: string;
  /** The heading's element id, unique on the page. */
  headingId: string;
  rows: ScoreCells[];
}

export interface ScoreboardView {
  /** The sentence shown instead of tables, or null when there are tables. */
  empty: string | null;
  /** Since when delegations are counted: "Every delegation since 3 Nov 2026, 09:12 …"; null when there is none. */
  since: string | null;
  tables: ScoreTable[];
}

/** One row's cells, in the scoreboard's words. */
export function scoreCells(row: ScoreRow): ScoreCells {
  return {
    model: row.model,
    delegations: formatCount(row.jobs),
    passRate: row.passRate === null ? NO_SCORE : formatShare(row.passRate),
    passed: row.passRate === null ? null : `${formatCount(row.passed)} of ${formatCount(row.verified)} verified`,
    takenRate: row.takenRate === null ? NO_SCORE : formatShare(row.takenRate),
    taken: row.takenRate === null ? null : `${formatCount(row.taken)} taken`,
    passCost: row.medianPassCostUsd === null ? NO_SCORE : formatUsd(row.medianPassCostUsd),
    time: row.medianMs === null ? NO_SCORE : formatMs(row.medianMs),
  };
}

/** The whole section: a table per repository in the scoreboard's order, its models in theirs; or the empty sentence. */
export function scoreboardView(board: Scoreboard): ScoreboardView {
  const tables = board.repos
    .filter((repo) => repo.models.length > 0)
    .map((repo, i) => ({ repo: repo.repo, headingId: `score-repo-${i + 1}`, rows: repo.models.map(scoreCells) }));
  if (tables.length === 0) return { empty: SCOREBOARD_EMPTY, since: null, tables };
  const since = board.since === null ? null : `Every delegation since ${formatDateTime(board.since)}, by the model its first turn ran on.`;
  return { empty: null, since, tables };
}
