import { describe, expect, it } from 'vitest';
import type { JobIsolation, JobRecord, JobState } from '../../../src-main/contract/jobs.js';
import { newJobRecord } from '../../../src-main/core/jobs/record/job-record.js';
import type { AlertMemory } from '../../../src-main/electron/present/desktop-types.js';
import type { BalanceAlertInput } from '../../../src-main/electron/present/notifications.js';
import { MAX_NOTIFICATION_BODY_CHARS, NO_ALERTS_SHOWN, balanceAlerts, presentJobEnded } from '../../../src-main/electron/present/notifications.js';
import { jobFields } from '../../support/job-fields.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();

function ended(state: JobState, overrides: Partial<JobRecord> = {}): JobRecord {
  const fields = jobFields({
    sessionId: '6f1c2a8e-4b1d-4c8e-9a51-0d2f3e4a5b6c',
    model: 'deepseek/deepseek-v4-flash',
    promptPreview: 'Write the unit tests for src/parser.ts',
    client: 'bridge/0.1.0',
  });
  return {
    ...newJobRecord('job_20261130T115500Z_abc123', fields, NOW - 300_000),
    state,
    startedAt: iso(NOW - 252_000),
    endedAt: iso(NOW - 60_000),
    claudePath: '/usr/local/bin/claude',
    pid: 4242,
    pidStartTime: '12345',
    exitCode: 0,
    resultSubtype: 'success',
    isError: false,
    toolCalls: 12,
    numTurns: 8,
    usage: { inputTokens: 120_000, outputTokens: 4_000, cacheReadTokens: 0, cacheWriteTokens: 0 },
    estimatedCostUsd: 0.0412,
    ...overrides,
  };
}

const firstLine = (body: string | undefined): string => body?.split('\n')[0] ?? '';
const secondLine = (body: string | undefined): string | undefined => body?.split('\n')[1];

describe('presentJobEnded', () => {
  it('says how its verify commands judged it, and a failure in its title', () => {
    const verify = {
      commands: ['npm test', 'npm run lint'],
      fixRoundsLeft: 0,
      saved: false,
      round: 0,
      note: null,
      flags: [],
      fixJobId: 'job_20261130T115900Z_abc124',
      runs: [
        { command: 'npm test', ok: true, exitCode: 0, signal: null, timedOut: false, ms: 1000, tail: '', tests: null, testsBefore: null },
        { command: 'npm run lint', ok: false, exitCode: 1, signal: null, timedOut: false, ms: 1000, tail: 'error', tests: null, testsBefore: null },
      ],
    };
    const failed = presentJobEnded(ended('succeeded', { verify: { ...verify, outcome: 'failed' } }), null, NOW);
    expect(failed?.title).toBe('Delegated job failed its verify commands');
    expect(firstLine(failed?.body)).toMatch(/ · verify ✗ 1\/2, fix round running$/);
    const passed = presentJobEnded(ended('succeeded', { verify: { ...verify, outcome: 'passed', fixJobId: null, flags: ['x'] } }), null, NOW);
    expect(passed?.title).toBe('Delegated job succeeded');
    expect(firstLine(passed?.body)).toMatch(/ · verify ✓ 1\/2 ⚠$/);
  });

  it.each(['queued', 'running', 'verifying'] as const)('says nothing while a job is %s', (state) => {
    expect(presentJobEnded(ended(state, { endedAt: null }), null, NOW)).toBeNull();
  });

  it.each([
    ['succeeded', 'Delegated job succeeded'],
    ['failed', 'Delegated job failed'],
    ['cancelled', 'Delegated job cancelled'],
    ['budget_exceeded', 'Delegated job stopped: budget exceeded'],
    ['timed_out', 'Delegated job timed out'],
    ['lost', 'Delegated job lost'],
  ] as const)('titles a %s job "%s"', (state, title) => {
    expect(presentJobEnded(ended(state), null, NOW)?.title).toBe(title);
  });

  it.each([
    ['succeeded', 'normal'],
    ['cancelled', 'normal'],
    ['failed', 'critical'],
    ['budget_exceeded', 'critical'],
    ['timed_out', 'critical'],
    ['lost', 'critical'],
  ] as const)('makes a %s job %s', (state, urgency) => {
    expect(presentJobEnded(ended(state), null, NOW)?.urgency).toBe(urgency);
  });

  it('opens the job in the settings window', () => {
    expect(presentJobEnded(ended('succeeded'), null, NOW)?.open).toEqual({ kind: 'openSettings', page: 'jobs', jobId: 'job_20261130T115500Z_abc123' });
  });

  it('names the model, the duration and the estimated cost while the bill is pending', () => {
    expect(firstLine(presentJobEnded(ended('succeeded'), null, NOW)?.body)).toBe('deepseek/deepseek-v4-flash · 3 min 12 s · est. $0.04');
  });

  it("says how many files a worktree job's branch changed, and nothing of files for a job that ran in place", () => {
    const isolation: JobIsolation = {
      mode: 'worktree',
      note: null,
      repo: '/home/me/project',
      worktree: '/home/me/.local/share/openrouter-delegate/worktrees/job_20261130T115500Z_abc123',
      gitDir: '/home/me/project/.git/worktrees/job_20261130T115500Z_abc123',
      branch: 'delegate/abc123',
      baseCommit: '1a2b3c4',
      baseDirty: false,
      worktreeState: 'present',
      savedCommit: null,
      headCommit: '5d6e7f8',
      changes: { files: 3, added: 40, removed: 2 },
      problem: null,
    };
    const changed = (files: number) => ended('cancelled', { isolation: { ...isolation, changes: { files, added: files, removed: 0 } } });
    expect(firstLine(presentJobEnded(changed(3), null, NOW)?.body)).toBe('deepseek/deepseek-v4-flash · 3 min 12 s · est. $0.04 · 3 files changed');
    expect(firstLine(presentJobEnded(changed(1), null, NOW)?.body)).toContain('· 1 file changed');
    expect(firstLine(presentJobEnded(changed(0), null, NOW)?.body)).toContain('· no files changed');
    const inPlace = ended('succeeded', { isolation: { ...isolation, mode: 'none', note: 'not inside a git repository' } });
    expect(firstLine(presentJobEnded(inPlace, null, NOW)?.body)).toBe('deepseek/deepseek-v4-flash · 3 min 12 s · est. $0.04');
  });

  it('shows the billed cost once OpenRouter has said', () => {
    const job = ended('succeeded', { billedCostUsd: 0.0391, billing: 'complete' });
    expect(firstLine(presentJobEnded(job, null, NOW)?.body)).toBe('deepseek/deepseek-v4-flash · 3 min 12 s · billed $0.04');
  });

  it('shows the cap beside the cost of a job stopped at its budget', () => {
    const job = ended('budget_exceeded', { estimatedCostUsd: 0.52, endReason: 'Stopped: the estimated cost $0.52 passed the job budget of $0.50.' });
    expect(presentJobEnded(job, null, NOW)?.body).toBe(
      'deepseek/deepseek-v4-flash · 3 min 12 s · est. $0.52 of $0.50 cap\nStopped: the estimated cost $0.52 passed the job budget of $0.50.',
    );
  });

  it('counts a job still missing its end time up to now', () => {
    expect(firstLine(presentJobEnded(ended('lost', { endedAt: null }), null, NOW)?.body)).toContain(' · 4 min 12 s · ');
  });

  it('says a job cancelled in the queue never started', () => {
    expect(firstLine(presentJobEnded(ended('cancelled', { startedAt: null }), null, NOW)?.body)).toContain(' · never started · ');
  });

  it('quotes the first line of the answer of a job that succeeded', () => {
    expect(secondLine(presentJobEnded(ended('succeeded'), 'Added 14 tests; all pass.', NOW)?.body)).toBe('Added 14 tests; all pass.');
  });

  it('gives why a job failed rather than its answer', () => {
    const job = ended('failed', { endReason: 'claude exited with code 1: API error 401' });
    expect(secondLine(presentJobEnded(job, 'I could not finish.', NOW)?.body)).toBe('claude exited with code 1: API error 401');
  });

  it('falls back to the answer when a failed job has no reason', () => {
    expect(secondLine(presentJobEnded(ended('failed'), 'I could not finish.', NOW)?.body)).toBe('I could not finish.');
  });

  it('has one line when there is neither answer nor reason', () => {
    expect(presentJobEnded(ended('succeeded'), null, NOW)?.body).not.toContain('\n');
  });

  it('flattens an answer line with tabs and escape characters', () => {
    expect(secondLine(presentJobEnded(ended('succeeded'), 'Done:\tall\u001b green ', NOW)?.body)).toBe('Done: all green');
  });

  it(`keeps the body within ${MAX_NOTIFICATION_BODY_CHARS} characters`, () => {
    const body = presentJobEnded(ended('succeeded'), 'word '.repeat(200), NOW)?.body ?? '';
    expect([body.length <= MAX_NOTIFICATION_BODY_CHARS, body.endsWith('…')]).toEqual([true, true]);
  });

  it('shortens a long model name in the middle', () => {
    const job = ended('succeeded', { model: 'nousresearch/hermes-4-405b-experimental-preview-fp8-instruct-2507' });
    expect(firstLine(presentJobEnded(job, null, NOW)?.body)).toMatch(/^nousresearch\/hermes-…w-fp8-instruct-2507 · /);
  });
});

const DAY = '2026-11-30';

function input(overrides: Partial<BalanceAlertInput> = {}): BalanceAlertInput {
  return { remainingUsd: 7.5, lowBalanceUsd: 0.5, spentTodayUsd: 0.42, dailyBudgetUsd: 5, dayKey: DAY, ...overrides };
}

/** Feeds polls one after the other, as the shell does, and collects every title shown. */
function poll(polls: Array<Partial<BalanceAlertInput>>, memory: AlertMemory = NO_ALERTS_SHOWN): string[] {
  const titles: string[] = [];
  for (const p of polls) {
    const out = balanceAlerts(memory, input(p));
    memory = out.memory;
    titles.push(...out.notifications.map((n) => n.title));
  }
  return titles;
}

describe('balanceAlerts: low balance', () => {
  it('stays quiet while the balance is above the reserve', () => {
    expect(poll([{}, { remainingUsd: 3 }])).toEqual([]);
  });

  it('alerts when the balance drops below the reserve', () => {
    expect(balanceAlerts(NO_ALERTS_SHOWN, input({ remainingUsd: 0.42 })).notifications).toEqual([
      {
        title: 'OpenRouter balance is low',
        body: '$0.42 left, below your reserve of $0.50: new delegated jobs cannot start. Top up at https://openrouter.ai/settings/credits.',
        open: { kind: 'openSettings', page: 'account' },
        urgency: 'critical',
      },
    ]);
  });

  it('alerts once, not on every poll while the balance stays low', () => {
    expect(poll([{ remainingUsd: 0.42 }, { remainingUsd: 0.4 }, { remainingUsd: 0.3 }])).toEqual(['OpenRouter balance is low']);
  });

  it('alerts again after a top-up and a new drop', () => {
    expect(poll([{ remainingUsd: 0.42 }, { remainingUsd: 20 }, { remainingUsd: 0.2 }])).toEqual(['OpenRouter balance is low', 'OpenRouter balance is low']);
  });

  it('does not alert at exactly the reserve', () => {
    expect(poll([{ remainingUsd: 0.5 }])).toEqual([]);
  });

  it('neither alerts nor re-arms while the balance is unknown', () => {
    expect(poll([{ remainingUsd: 0.42 }, { remainingUsd: null }, { remainingUsd: 0.4 }])).toEqual(['OpenRouter balance is low']);
  });

  it('says the balance is empty at zero, even without a reserve', () => {
    expect(poll([{ remainingUsd: 0, lowBalanceUsd: 0 }])).toEqual(['OpenRouter balance is empty']);
  });
});

describe('balanceAlerts: daily budget', () => {
  it('stays quiet below 80 % of the daily budget', () => {
    expect(poll([{ spentTodayUsd: 3.99 }])).toEqual([]);
  });

  it('warns at 80 % of the daily budget, saying what is left', () => {
    expect(balanceAlerts(NO_ALERTS_SHOWN, input({ spentTodayUsd: 4.1 })).notifications).toEqual([
      {
        title: 'Daily budget 82% used',
        body: 'Spent today: $4.10 of $5.00; $0.90 left for delegated jobs today.',
        open: { kind: 'openSettings', page: 'delegation' },
        urgency: 'normal',
      },
    ]);
  });

  it('says the budget is reached when the spend jumps past it in one poll', () => {
    expect(balanceAlerts(NO_ALERTS_SHOWN, input({ spentTodayUsd: 5.2 })).notifications[0]).toMatchObject({
      title: 'Daily budget reached',
      urgency: 'critical',
    });
  });

  it('alerts once a day, not on every poll', () => {
    expect(poll([{ spentTodayUsd: 4.1 }, { spentTodayUsd: 4.5 }, { spentTodayUsd: 5.3 }])).toEqual(['Daily budget 82% used']);
  });

  it('alerts again on a new day', () => {
    expect(poll([{ spentTodayUsd: 4.1 }, { spentTodayUsd: 4.2, dayKey: '2026-12-01' }])).toEqual(['Daily budget 82% used', 'Daily budget 84% used']);
  });

  it('alerts again the same day after the spend fell back under 80 % (a raised budget)', () => {
    expect(poll([{ spentTodayUsd: 4.1 }, { spentTodayUsd: 4.1, dailyBudgetUsd: 10 }, { spentTodayUsd: 9, dailyBudgetUsd: 10 }])).toEqual([
      'Daily budget 82% used',
      'Daily budget 90% used',
    ]);
  });

  it('never alerts with a daily budget of zero', () => {
    expect(
      poll([
        { spentTodayUsd: 0, dailyBudgetUsd: 0 },
        { spentTodayUsd: 0.01, dailyBudgetUsd: 0 },
      ]),
    ).toEqual([]);
  });
});

describe('balanceAlerts: memory', () => {
  it('starts with nothing shown: the first poll alerts on every threshold already crossed, whatever the day', () => {
    for (const dayKey of [DAY, '2027-01-01']) {
      const first = balanceAlerts(NO_ALERTS_SHOWN, input({ remainingUsd: 0.1, spentTodayUsd: 4.5, dayKey }));
      expect(first.notifications.map((n) => n.title)).toEqual(['OpenRouter balance is low', 'Daily budget 90% used']);
    }
  });

  it('remembers both alerts and the day', () => {
    expect(balanceAlerts(NO_ALERTS_SHOWN, input({ remainingUsd: 0.1, spentTodayUsd: 4.5 })).memory).toEqual({
      lowBalance: true,
      dailyBudget: true,
      dayKey: DAY,
    });
  });

  it('shows both alerts when both thresholds are crossed in one poll', () => {
    expect(poll([{ remainingUsd: 0.1, spentTodayUsd: 5 }])).toEqual(['OpenRouter balance is low', 'Daily budget reached']);
  });

  it('leaves the memory it was given unchanged', () => {
    const memory: AlertMemory = { lowBalance: false, dailyBudget: false, dayKey: '2026-11-29' };
    balanceAlerts(memory, input({ remainingUsd: 0.1, spentTodayUsd: 4.5 }));
    expect(memory).toEqual({ lowBalance: false, dailyBudget: false, dayKey: '2026-11-29' });
  });
});
