/**
 * `model: "best"` (core/jobs/score/best-model.ts): the cheapest median pass among models with BEST_MIN_VERIFIED or more
 * verified delegations in the repository and BEST_MIN_PASS_RATE or more passed, allowed now; one pick in
 * BEST_TRY_EVERY tries the contender with the fewest verified; else the default model.
 */
import { describe, expect, it } from 'vitest';
import { BEST_MIN_VERIFIED, BEST_TRY_EVERY } from '../../../../src-main/contract/index.js';
import type { ScoreFact } from '../../../../src-main/contract/index.js';
import { pickBest } from '../../../../src-main/core/jobs/score/best-model.js';

let n = 0;
const fact = (model: string, verified: ScoreFact['verified'], costUsd: number, repo = '/repo'): ScoreFact => ({
  sessionId: `s${++n}`,
  repo,
  model,
  createdAt: new Date(Date.UTC(2026, 10, 1) + n * 1000).toISOString(),
  ended: true,
  verified,
  fate: 'kept',
  costUsd,
  ms: 1000,
  picked: false,
});
/** `passes` passing and `fails` failing delegations of `model`, each pass costing `cost`. */
const record = (model: string, passes: number, fails: number, cost: number, repo = '/repo') => [
  ...Array.from({ length: passes }, () => fact(model, 'passed', cost, repo)),
  ...Array.from({ length: fails }, () => fact(model, 'failed', cost, repo)),
];
const everyModel = () => true;
const base = { repo: '/repo', fallback: 'vendor/default', contenders: ['vendor/default'], allowed: everyModel };

/** Pads the repository's count of `best` picks so the next pick is not the one that tries another model. */
function notATry(facts: ScoreFact[]): ScoreFact[] {
  const padded = [...facts];
  while (padded.filter((f) => f.repo === '/repo' && f.picked).length % BEST_TRY_EVERY === BEST_TRY_EVERY - 1)
    padded.push({ ...fact('vendor/other', null, 0), picked: true });
  return padded;
}

describe('model "best"', () => {
  it('picks the qualifying model with the lowest median cost of a pass, and says why', () => {
    const facts = notATry([...record('vendor/dear', 5, 0, 0.05), ...record('vendor/cheap', 4, 1, 0.01)]);
    const pick = pickBest({ ...base, facts });
    expect(pick.model).toBe('vendor/cheap');
    expect(pick.why).toContain('4/5 passed');
    expect(pick.why).toContain('$0.01');
  });

  it('passes over a cheaper model below the pass rate, or with fewer verified delegations than the rule asks', () => {
    const facts = notATry([
      ...record('vendor/dear', 5, 0, 0.05),
      ...record('vendor/flaky', 3, 2, 0.001),
      ...record('vendor/new', BEST_MIN_VERIFIED - 1, 0, 0.001),
    ]);
    expect(pickBest({ ...base, facts }).model).toBe('vendor/dear');
  });

  it('uses the default model when fewer than 5 delegations were verified, naming the closest', () => {
    const facts = record('vendor/cheap', BEST_MIN_VERIFIED - 1, 0, 0.01);
    const pick = pickBest({ ...base, facts });
    expect(pick.model).toBe('vendor/default');
    expect(pick.why).toContain('vendor/cheap: 4/4 passed');
  });

  it('counts only the repository asked about', () => {
    const facts = notATry(record('vendor/cheap', 5, 0, 0.01, '/elsewhere'));
    expect(pickBest({ ...base, facts }).model).toBe('vendor/default');
  });

  it('never picks a model the policy does not allow now', () => {
    const facts = notATry([...record('vendor/dear', 5, 0, 0.05), ...record('vendor/cheap', 5, 0, 0.01)]);
    expect(pickBest({ ...base, facts, allowed: (m) => m !== 'vendor/cheap' }).model).toBe('vendor/dear');
  });

  it('uses the default model outside any repository with a scoreboard', () => {
    expect(pickBest({ ...base, repo: null, facts: record('vendor/cheap', 5, 0, 0.01) }).model).toBe('vendor/default');
  });

  it(`tries the contender with the fewest verified delegations on one pick in ${BEST_TRY_EVERY}, and says so`, () => {
    const winners = [...record('vendor/cheap', 5, 0, 0.01), ...record('vendor/mid', 1, 1, 0.02)];
    const picks: string[] = [];
    const facts = [...winners];
    // Ten picks in a row, each then recorded as a pick: the 5th and the 10th are tries.
    for (let i = 0; i < 10; i++) {
      const model = pickBest({ ...base, facts }).model;
      picks.push(model);
      facts.push({ ...fact(model, 'passed', 0.01), picked: true });
    }
    expect(picks.map((m, i) => [i, m]).filter(([, m]) => m !== 'vendor/cheap')).toEqual([
      [4, 'vendor/default'],
      [9, 'vendor/default'],
    ]);
    const atTry = [...winners, ...Array.from({ length: 4 }, () => ({ ...fact('vendor/cheap', null, 0), picked: true }))];
    expect(pickBest({ ...base, facts: atTry }).why).toMatch(/^trying vendor\/default \(0 verified here\).*leader is vendor\/cheap/);
  });

  it('counts the tries by its own picks only: delegations that named their model (a fan-out beside) never steer them', () => {
    const named = [...record('vendor/cheap', 5, 0, 0.01), ...record('vendor/mid', 4, 0, 0.02)];
    // Nine named delegations: counted by every delegation, this would be a try.
    expect(named.filter((f) => f.repo === '/repo').length % BEST_TRY_EVERY).toBe(BEST_TRY_EVERY - 1);
    expect(pickBest({ ...base, facts: named }).model).toBe('vendor/cheap');
  });
});
