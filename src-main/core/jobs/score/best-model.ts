/**
 * `model: "best"` (docs/VERIFY.md, "The scoreboard"): which model a delegation in a repository runs on, by its
 * scoreboard there. Among the models the policy allows now, the one with the lowest median cost of a passing
 * delegation, among those that passed at least BEST_MIN_PASS_RATE of at least BEST_MIN_VERIFIED verified ones. One
 * pick in BEST_TRY_EVERY (counted by the repository's earlier `best` picks) tries instead the contender with the fewest
 * verified delegations here, so the first winner does not lock the others out. With no winner, the default model.
 * Pure: the caller gives the facts and says which models are allowed.
 */
import { BEST_MIN_PASS_RATE, BEST_MIN_VERIFIED, BEST_TRY_EVERY } from '../../../contract/index.js';
import type { ScoreFact, ScoreRow } from '../../../contract/index.js';
import { formatShare, formatUsd } from '../../../common/format.js';
import { scoreboardOf } from './score-facts.js';

export interface BestPick {
  model: string;
  /** Why, in one sentence the caller reads. */
  why: string;
}

export interface BestInput {
  facts: readonly ScoreFact[];
  /** The repository of the facts that holds the delegation's folder, or null: none (the default model). */
  repo: string | null;
  /** The default model, used when no model qualifies. */
  fallback: string;
  /** The models `best` may try besides the winner: the default, the user's fallbacks, those seen in the repository. */
  contenders: readonly string[];
  /** Whether the policy allows a model now (with a fixed price). */
  allowed: (model: string) => boolean;
}

const record = (row: ScoreRow): string =>
  `${row.passed}/${row.verified} passed${row.medianPassCostUsd === null ? '' : `, ${formatUsd(row.medianPassCostUsd)} a pass (median)`}`;

/** The pick, and why. */
export function pickBest({ facts, repo, fallback, contenders, allowed }: BestInput): BestPick {
  if (repo === null) return { model: fallback, why: `the default model; no delegation here has a scoreboard yet.` };
  const rows = (scoreboardOf(facts, repo).repos[0]?.models ?? []).filter((row) => allowed(row.model));
  const qualified = rows
    .filter((row) => row.verified >= BEST_MIN_VERIFIED && (row.passRate ?? 0) >= BEST_MIN_PASS_RATE && row.medianPassCostUsd !== null)
    .sort((a, b) => (a.medianPassCostUsd ?? 0) - (b.medianPassCostUsd ?? 0) || (b.passRate ?? 0) - (a.passRate ?? 0) || a.model.localeCompare(b.model));
  const winner = qualified[0];
  const rule = `${BEST_MIN_VERIFIED}+ verified delegations here, ${formatShare(BEST_MIN_PASS_RATE)}+ passed`;
  if (!winner) {
    const closest = rows.filter((row) => row.verified > 0).sort((a, b) => b.verified - a.verified)[0];
    return {
      model: fallback,
      why: `the default model; none has ${rule} yet${closest ? ` (${closest.model}: ${record(closest)})` : ''}.`,
    };
  }
  // Counted by the picks `best` made here, not by every delegation: a fan-out beside it must not steer the tries.
  const picks = facts.filter((fact) => fact.repo === repo && fact.picked).length;
  if (picks % BEST_TRY_EVERY === BEST_TRY_EVERY - 1) {
    const verifiedHere = new Map(rows.map((row) => [row.model, row.verified]));
    const contender = [...new Set([...contenders, ...rows.map((row) => row.model)])]
      .filter((model) => model !== winner.model && allowed(model))
      .sort((a, b) => (verifiedHere.get(a) ?? 0) - (verifiedHere.get(b) ?? 0) || a.localeCompare(b))[0];
    if (contender) {
      return {
        model: contender,
        why: `trying ${contender} (${verifiedHere.get(contender) ?? 0} verified here), as one pick in ${BEST_TRY_EVERY} does; the leader is ${winner.model} (${record(winner)}).`,
      };
    }
  }
  return { model: winner.model, why: `${winner.model}, the cheapest pass here (${record(winner)}) of those with ${rule}.` };
}
