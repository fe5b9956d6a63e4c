/**
 * How the Spend page shows the scoreboard (src-renderer/lib/scoreboard.ts): a seeded `jobs.scoreboard` answer, and the
 * words each cell prints held against the figures they stand for. The page itself, in a real browser against the real
 * service, is in spend.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ScoreRow, Scoreboard } from '../../src-main/contract/index.js';
import { ScoreboardSchema } from '../../src-main/contract/index.js';
import { formatDateTime } from '../../src-renderer/lib/format.js';
import { NO_SCORE, SCOREBOARD_EMPTY, scoreCells, scoreboardView } from '../../src-renderer/lib/scoreboard.js';

function row(model: string, fields: Partial<ScoreRow>): ScoreRow {
  return {
    model,
    jobs: 0,
    verified: 0,
    passed: 0,
    passRate: null,
    taken: 0,
    takenRate: null,
    medianPassCostUsd: null,
    medianMs: null,
    ...fields,
  };
}

/** Two repositories, as the service answers: one with a model that passed, one that was never verified, one never ended. */
const SEEDED: Scoreboard = ScoreboardSchema.parse({
  repos: [
    {
      repo: '/home/ada/work/api',
      models: [
        row('deepseek/deepseek-v4', {
          jobs: 6,
          verified: 5,
          passed: 4,
          passRate: 0.8,
          taken: 3,
          takenRate: 0.5,
          medianPassCostUsd: 0.0042,
          medianMs: 65_000,
        }),
        row('qwen/qwen3-coder', { jobs: 2, taken: 0, takenRate: 0, medianMs: 3_725_000 }),
      ],
    },
    { repo: '/srv/git/site', models: [row('z-ai/glm-4.6', { jobs: 1 })] },
  ],
  since: '2026-11-03T09:12:00.000Z',
});

describe('a scoreboard row, as the page prints it', () => {
  it('says the pass rate as a share, with how many of the verified passed under it', () => {
    const cells = scoreCells(row('a/x', { jobs: 6, verified: 5, passed: 4, passRate: 0.8 }));
    expect(cells.delegations).toBe('6');
    expect(cells.passRate).toBe('80%');
    expect(cells.passed).toBe('4 of 5 verified');
  });

  it('says the taken rate of the ended delegations, with how many were taken under it', () => {
    const cells = scoreCells(row('a/x', { jobs: 6, taken: 3, takenRate: 0.5 }));
    expect(cells.takenRate).toBe('50%');
    expect(cells.taken).toBe('3 taken');
    // None taken of those that ended is a rate of its own, not a missing figure.
    expect(scoreCells(row('a/x', { jobs: 2, taken: 0, takenRate: 0 }))).toMatchObject({ takenRate: '0%', taken: '0 taken' });
  });

  it('prints the median cost of a pass and the median time through the one formatting module', () => {
    const cells = scoreCells(row('a/x', { medianPassCostUsd: 0.25, medianMs: 65_000 }));
    expect(cells.passCost).toBe('$0.25');
    expect(cells.time).toBe('1 min 5 s');
    // A pass that cost less than a cent still reads as money spent; an hour-long delegation in hours.
    expect(scoreCells(row('a/x', { medianPassCostUsd: 0.0042, medianMs: 3_725_000 }))).toMatchObject({ passCost: '$0.0042', time: '1 h 2 min' });
    // A quick one to a tenth of a second, as the CLI's `stats` says it.
    expect(scoreCells(row('a/x', { medianMs: 4_200 })).time).toBe('4.2 s');
  });

  it('shows a dash, and nothing under it, for each figure that has nothing to count yet', () => {
    const cells = scoreCells(row('a/x', { jobs: 1 }));
    expect(cells).toEqual({
      model: 'a/x',
      delegations: '1',
      passRate: NO_SCORE,
      passed: null,
      takenRate: NO_SCORE,
      taken: null,
      passCost: NO_SCORE,
      time: NO_SCORE,
    });
    expect(NO_SCORE).toBe('—');
  });
});

describe('the scoreboard section', () => {
  it('has a table per repository in the answer’s order, headed by its full path, its models in the answer’s order', () => {
    const view = scoreboardView(SEEDED);
    expect(view.empty).toBeNull();
    expect(view.tables.map((t) => t.repo)).toEqual(['/home/ada/work/api', '/srv/git/site']);
    expect(view.tables.map((t) => t.rows.map((r) => r.model))).toEqual([['deepseek/deepseek-v4', 'qwen/qwen3-coder'], ['z-ai/glm-4.6']]);
    expect(new Set(view.tables.map((t) => t.headingId)).size).toBe(2);
  });

  it('prints each seeded figure as the cells say it', () => {
    const [api, site] = scoreboardView(SEEDED).tables;
    expect(api?.rows).toEqual([
      {
        model: 'deepseek/deepseek-v4',
        delegations: '6',
        passRate: '80%',
        passed: '4 of 5 verified',
        takenRate: '50%',
        taken: '3 taken',
        passCost: '$0.0042',
        time: '1 min 5 s',
      },
      {
        model: 'qwen/qwen3-coder',
        delegations: '2',
        passRate: '—',
        passed: null,
        takenRate: '0%',
        taken: '0 taken',
        passCost: '—',
        time: '1 h 2 min',
      },
    ]);
    expect(site?.rows.map((r) => [r.delegations, r.passRate, r.takenRate, r.passCost, r.time])).toEqual([['1', '—', '—', '—', '—']]);
  });

  it('says since when it counts, in the page’s local time', () => {
    expect(scoreboardView(SEEDED).since).toBe(`Every delegation since ${formatDateTime('2026-11-03T09:12:00.000Z')}, by the model its first turn ran on.`);
  });

  it('says what fills it in, and what counts in Taken, before any delegation worked in a repository', () => {
    const view = scoreboardView({ repos: [], since: null });
    expect(view).toEqual({ empty: SCOREBOARD_EMPTY, since: null, tables: [] });
    expect(SCOREBOARD_EMPTY).toMatch(/verify commands/);
    expect(SCOREBOARD_EMPTY).toMatch(/taken or discarded counts in Taken/);
  });
});
