/**
 * The scoreboard's facts and rows (core/jobs/score/score-facts.ts): one fact per delegation from its turns' records, and each
 * repository's models from the facts. The seeded month is checked against sums made straight from its plan, not
 * through the code under test.
 */
import { describe, expect, it } from 'vitest';
import type { JobRecord, JobState, JobVerify, ScoreFact } from '../../../../src-main/contract/index.js';
import { newJobRecord } from '../../../../src-main/core/jobs/record/job-record.js';
import { mergeFacts, scoreFacts, scoreboardOf, median } from '../../../../src-main/core/jobs/score/score-facts.js';
import { jobFields } from '../../../support/job-fields.js';

const DAY = 24 * 3600_000;
const START = Date.UTC(2026, 10, 1, 9);
let ids = 0;

interface TurnPlan {
  state?: JobState;
  billed?: number | null;
  estimated?: number;
  ms?: number;
  verify?: Partial<JobVerify> | null;
  fate?: 'taken' | 'discarded';
}

function verifyOf(partial: Partial<JobVerify>): JobVerify {
  return { commands: ['npm test'], fixRoundsLeft: 0, saved: false, round: 0, outcome: 'passed', note: null, runs: [], flags: [], fixJobId: null, ...partial };
}

/** A conversation's turns as records: turn 1 is created at `at`, each next one a minute later. */
function delegation(session: string, model: string, repo: string | null, at: number, turns: TurnPlan[]): JobRecord[] {
  return turns.map((plan, i) => {
    const created = at + i * 60_000;
    const fields = jobFields({ sessionId: session, turn: i + 1, model, previousJobId: null });
    const record = newJobRecord(`job_${++ids}`, fields, created);
    const state = plan.state ?? 'succeeded';
    const ended = state === 'running' || state === 'queued' || state === 'verifying' ? null : new Date(created + (plan.ms ?? 30_000)).toISOString();
    return {
      ...record,
      state,
      startedAt: record.createdAt,
      endedAt: ended,
      estimatedCostUsd: plan.estimated ?? 0.01,
      billedCostUsd: plan.billed === undefined ? null : plan.billed,
      ...(repo
        ? {
            isolation: {
              mode: 'worktree' as const,
              note: null,
              repo,
              worktree: `/data/worktrees/${session}`,
              gitDir: null,
              branch: `delegate/${session}`,
              baseCommit: 'a'.repeat(40),
              baseDirty: false,
              worktreeState: 'present' as const,
              savedCommit: null,
              headCommit: null,
              changes: null,
              problem: null,
            },
          }
        : {}),
      ...(plan.verify ? { verify: verifyOf(plan.verify) } : {}),
      ...(plan.fate ? { fate: { fate: plan.fate, at: new Date(created + DAY).toISOString() } } : {}),
    };
  });
}

describe("a delegation's scoreboard fact", () => {
  it('is one per conversation, with its first turn’s model, every turn’s cost and time, and its last verify outcome', () => {
    const turns = delegation('s1', 'vendor/a', '/repo', START, [
      {
        billed: 0.02,
        ms: 40_000,
        verify: {
          outcome: 'failed',
          runs: [{ command: 'npm test', ok: false, exitCode: 1, signal: null, timedOut: false, ms: 1500, tail: 'x', tests: null, testsBefore: null }],
        },
      },
      {
        billed: null,
        estimated: 0.005,
        ms: 20_000,
        verify: {
          outcome: 'passed',
          round: 1,
          runs: [{ command: 'npm test', ok: true, exitCode: 0, signal: null, timedOut: false, ms: 500, tail: '', tests: null, testsBefore: null }],
        },
      },
    ]);
    expect(scoreFacts(turns)).toEqual([
      {
        sessionId: 's1',
        repo: '/repo',
        model: 'vendor/a',
        createdAt: turns[0]?.createdAt,
        ended: true,
        verified: 'passed',
        fate: 'kept',
        costUsd: 0.025,
        ms: 62_000,
        picked: false,
      },
    ]);
  });

  it('keeps the last outcome that judged the work: a later turn that changed nothing (skipped) leaves a failure standing', () => {
    const turns = delegation('s2', 'vendor/a', '/repo', START, [{ verify: { outcome: 'failed' } }, { verify: { outcome: 'skipped', note: 'no changes' } }]);
    expect(scoreFacts(turns)[0]?.verified).toBe('failed');
  });

  it('counts a pass whose branch rewrote what judges it as flagged, never passed', () => {
    const turns = delegation('s3', 'vendor/a', '/repo', START, [{ verify: { outcome: 'passed', flags: ['package.json: the test script changed'] } }]);
    expect(scoreFacts(turns)[0]?.verified).toBe('flagged');
  });

  it('is unverified when the commands never ran to an outcome (none named, cancelled, interrupted)', () => {
    const none = delegation('s4', 'vendor/a', '/repo', START, [{}]);
    const cancelled = delegation('s5', 'vendor/a', '/repo', START, [{ state: 'cancelled', verify: { outcome: 'cancelled' } }]);
    expect(scoreFacts([...none, ...cancelled]).map((f) => f.verified)).toEqual([null, null]);
  });

  it('says taken or discarded as written on its records, kept otherwise, and not ended while a turn is active', () => {
    const taken = delegation('s6', 'vendor/a', '/repo', START, [{ fate: 'taken' }]);
    const verifying = delegation('s7', 'vendor/a', '/repo', START, [{ state: 'verifying', verify: { outcome: 'running' } }]);
    const facts = scoreFacts([...taken, ...verifying]);
    expect(facts.map((f) => [f.fate, f.ended])).toEqual([
      ['taken', true],
      ['kept', false],
    ]);
  });

  it('says whether best picked its model, from its first turn’s record', () => {
    const [picked] = delegation('s9', 'vendor/a', '/repo', START, [{}]);
    const named = delegation('s10', 'vendor/a', '/repo', START, [{}]);
    if (!picked) throw new Error('a turn was made');
    const facts = scoreFacts([{ ...picked, modelChoice: 'vendor/a, the cheapest pass here' }, ...named]);
    expect(facts.map((f) => [f.sessionId, f.picked])).toEqual([
      ['s9', true],
      ['s10', false],
    ]);
  });

  it('is not made for a delegation that worked in place (no repository)', () => {
    expect(scoreFacts(delegation('s8', 'vendor/a', null, START, [{ verify: { outcome: 'passed' } }]))).toEqual([]);
  });
});

/** The oracle's median: sort, then the middle one or the mean of the middle two. */
function middle(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = sorted.length / 2;
  return Number.isInteger(half) ? ((sorted[half - 1] ?? 0) + (sorted[half] ?? 0)) / 2 : (sorted[Math.floor(half)] ?? 0);
}

describe('the scoreboard of a seeded month', () => {
  // 90 delegations over 30 days, three models in two repositories, made from a small generator so the plan is known.
  const models = ['vendor/cheap', 'vendor/mid', 'vendor/dear'];
  const repos = ['/work/app', '/work/lib'];
  const plans = Array.from({ length: 90 }, (_, i) => {
    const model = models[i % 3] ?? '';
    const repo = repos[Math.floor(i / 3) % 2] ?? '';
    // Every repository and model gets every outcome: i mod 6 picks the pair, i / 6 walks the outcomes.
    const verdict = (['passed', 'failed', 'flagged', null] as const)[(i + Math.floor(i / 6)) % 4] ?? null;
    const fixRound = i % 5 === 0 && verdict !== null;
    const cost = [0.011, 0.017, 0.003][i % 3] ?? 0;
    return {
      session: `m${i}`,
      model,
      repo,
      at: START + (i % 30) * DAY,
      verdict,
      fixRound,
      cost,
      ms: 10_000 + i * 1000,
      fate: (['taken', 'discarded', undefined] as const)[i % 3],
    };
  });
  const records = plans.flatMap((p) => {
    const last: TurnPlan = {
      billed: p.cost,
      ms: p.ms,
      verify:
        p.verdict === null
          ? null
          : { outcome: p.verdict === 'failed' ? 'failed' : 'passed', flags: p.verdict === 'flagged' ? ['a skip marker was added'] : [] },
      ...(p.fate ? { fate: p.fate } : {}),
    };
    const turns: TurnPlan[] = p.fixRound ? [{ billed: p.cost, ms: p.ms, verify: { outcome: 'failed' }, ...(p.fate ? { fate: p.fate } : {}) }, last] : [last];
    return delegation(p.session, p.model, p.repo, p.at, turns);
  });

  it('gives each model its delegations, verified, passed, taken and rates as the plan sums them', () => {
    const board = scoreboardOf(scoreFacts(records));
    expect(board.repos.map((r) => r.repo)).toEqual(repos);
    for (const repo of repos) {
      for (const model of models) {
        const mine = plans.filter((p) => p.repo === repo && p.model === model);
        const verified = mine.filter((p) => p.verdict !== null).length;
        const passed = mine.filter((p) => p.verdict === 'passed').length;
        const taken = mine.filter((p) => p.fate === 'taken').length;
        const row = board.repos.find((r) => r.repo === repo)?.models.find((m) => m.model === model);
        expect(row, `${repo} ${model}`).toMatchObject({
          jobs: mine.length,
          verified,
          passed,
          taken,
          passRate: verified ? passed / verified : null,
          takenRate: taken / mine.length,
        });
      }
    }
    expect(board.since).toBe(new Date(START).toISOString());
  });

  it("gives the median cost of a passing delegation (every turn's cost) and the median time, as the plan has them", () => {
    const board = scoreboardOf(scoreFacts(records), '/work/app');
    expect(board.repos).toHaveLength(1);
    for (const row of board.repos[0]?.models ?? []) {
      const mine = plans.filter((p) => p.repo === '/work/app' && p.model === row.model);
      const turnsOf = (p: (typeof plans)[number]) => (p.fixRound ? 2 : 1);
      const passCosts = mine.filter((p) => p.verdict === 'passed').map((p) => p.cost * turnsOf(p));
      const times = mine.map((p) => p.ms * turnsOf(p));
      expect(passCosts.length).toBeGreaterThan(0);
      expect(row.medianPassCostUsd).toBeCloseTo(middle(passCosts), 9);
      expect(row.medianMs).toBe(middle(times));
    }
  });

  it('lists models by passes, then pass rate', () => {
    const rows = scoreboardOf(scoreFacts(records), '/work/lib').repos[0]?.models ?? [];
    const passes = rows.map((r) => r.passed);
    expect(passes).toEqual([...passes].sort((a, b) => b - a));
  });
});

describe('facts kept past retention', () => {
  const fact = (sessionId: string, verified: ScoreFact['verified']): ScoreFact => ({
    sessionId,
    repo: '/r',
    model: 'vendor/a',
    createdAt: '2026-11-01T00:00:00.000Z',
    ended: true,
    verified,
    fate: 'kept',
    costUsd: 0.01,
    ms: 1000,
    picked: false,
  });

  it('count a delegation once, as its records on hand say it is now', () => {
    const merged = mergeFacts([fact('a', 'failed'), fact('b', 'passed')], [fact('a', 'passed')]);
    expect(merged.map((f) => [f.sessionId, f.verified])).toEqual([
      ['a', 'passed'],
      ['b', 'passed'],
    ]);
  });
});

describe('median', () => {
  it('is the middle value, or the mean of the two middle ones, and null for none', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
  });
});
