import { describe, expect, it } from 'vitest';
import { ServiceError, defaultSettings } from '../../../../src-main/contract/index.js';
import { budgetStopOf, checkBudget, jobCostUsd, localDayKey, reservationOf, spentOnDay } from '../../../../src-main/core/jobs/money/budget.js';
import type { GatewayRequest } from '../../../../src-main/contract/index.js';
import { newJobRecord } from '../../../../src-main/core/jobs/record/job-record.js';
import { jobFields } from '../../../support/job-fields.js';

const settings = { ...defaultSettings(), budgets: { perJobUsd: 0.5, perDayUsd: 2, reserveUsd: 1 } };

function refusal(input: Parameters<typeof checkBudget>[0]): string {
  try {
    checkBudget(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('budget_refused');
    return (error as ServiceError).message;
  }
  throw new Error('expected a refusal');
}

const record = (createdAtMs: number, estimated: number, billed: number | null) => ({
  ...newJobRecord('job_20261130T000000Z_aaaaaa', jobFields({ sessionId: 's', model: 'm/m', cwd: '/', promptPreview: '', client: 't' }), createdAtMs),
  estimatedCostUsd: estimated,
  billedCostUsd: billed,
});

describe('budgets', () => {
  it('lets a job start within every budget', () => {
    expect(() => checkBudget({ settings, spentTodayUsd: 0.5, reservedUsd: 0.5, maxCostUsd: 0.5, remainingUsd: 10 })).not.toThrow();
  });

  it('refuses a job cap above the per-job budget', () => {
    expect(refusal({ settings, spentTodayUsd: 0, reservedUsd: 0, maxCostUsd: 0.75, remainingUsd: 10 })).toMatch(/above the user's per-job budget of \$0\.50/);
  });

  it('counts what running jobs may still spend against the daily cap, and says how much is left', () => {
    const message = refusal({ settings, spentTodayUsd: 1, reservedUsd: 0.75, maxCostUsd: 0.5, remainingUsd: 10 });
    expect(message).toMatch(/daily budget of \$2\.00/);
    expect(message).toMatch(/max_cost_usd ≤ \$0\.25/);
  });

  it('keeps the reserve: a job that could eat into it does not start', () => {
    expect(refusal({ settings, spentTodayUsd: 0, reservedUsd: 0.25, maxCostUsd: 0.5, remainingUsd: 1.5 })).toMatch(/keeps \$1\.00 in reserve/);
  });

  it("holds a fan-out's jobs to the per-job cap each, and the day and the reserve to their sum", () => {
    expect(() => checkBudget({ settings, spentTodayUsd: 0, reservedUsd: 0, maxCostUsd: 0.5, remainingUsd: 10, count: 3 })).not.toThrow();
    expect(refusal({ settings, spentTodayUsd: 0, reservedUsd: 0, maxCostUsd: 0.75, remainingUsd: 10, count: 2 })).toMatch(/per-job budget/);
    const day = refusal({ settings, spentTodayUsd: 0.75, reservedUsd: 0, maxCostUsd: 0.5, remainingUsd: 10, count: 3 });
    expect(day).toMatch(/leave \$1\.25, less than these 3 jobs' caps of \$1\.50 \(\$0\.50 each\)/);
    expect(day).toMatch(/max_cost_usd ≤ \$0\.41, or name fewer models/);
    expect(refusal({ settings, spentTodayUsd: 0, reservedUsd: 0, maxCostUsd: 0.5, remainingUsd: 2.25, count: 3 })).toMatch(
      /3 jobs that may cost \$1\.50 together/,
    );
  });

  it('has no reserve check when OpenRouter sets no limit', () => {
    expect(() => checkBudget({ settings, spentTodayUsd: 0, reservedUsd: 0, maxCostUsd: 0.5, remainingUsd: null })).not.toThrow();
  });

  it('a job reserves its cap minus what it has spent, never less than nothing', () => {
    expect(reservationOf({ maxCostUsd: 0.5, estimatedCostUsd: 0.2 })).toBeCloseTo(0.3, 9);
    expect(reservationOf({ maxCostUsd: 0.5, estimatedCostUsd: 0.7 })).toBe(0);
  });

  it('a job costs its billed amount once known, else its estimate', () => {
    expect(jobCostUsd({ estimatedCostUsd: 0.1, billedCostUsd: 0.12 })).toBe(0.12);
    expect(jobCostUsd({ estimatedCostUsd: 0.1, billedCostUsd: null })).toBe(0.1);
  });

  it("sums today's jobs by local day", () => {
    const now = new Date(2026, 10, 30, 12, 0).getTime();
    const yesterday = new Date(2026, 10, 29, 23, 59).getTime();
    const records = [record(now, 0.1, 0.2), record(now - 3600_000, 0.3, null), record(yesterday, 5, 5)];
    expect(spentOnDay(records, localDayKey(now))).toBeCloseTo(0.5, 9);
    expect(localDayKey(now)).toBe('2026-11-30');
  });
});

describe('what would have been enough for a job its budget stopped (issue 23)', () => {
  const refused = (note: string, ceilingUsd: number): GatewayRequest => ({
    id: 'r',
    at: '2026-12-01T12:00:00Z',
    model: 'm',
    provider: null,
    generationId: null,
    status: 402,
    outcome: 'refused',
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd: 0,
    ceilingUsd,
    maxTokens: 32000,
    maxTokensAsked: null,
    firstByteMs: null,
    durationMs: 1,
    note,
  });
  const stopped = { estimatedCostUsd: 0.4812, endReason: 'Stopped before a request: budget reached.' };

  it("is what it had spent and the most its refused request could cost, rounded up to the cent, beside the user's per-job budget", () => {
    const requests = [
      refused('count_tokens: budget reached: $0.48 of the job’s $0.50 spent or committed.', 0.9),
      refused("budget reached: $0.4812 of the job's $0.50 spent or committed; …", 0.1337),
    ];
    expect(budgetStopOf(stopped, requests, 2)).toEqual({ enoughUsd: 0.62, perJobUsd: 2, daily: false });
  });

  it("says when the day's budget refused it, and knows no figure when no request was refused", () => {
    expect(budgetStopOf(stopped, [refused('daily budget reached: $4.90 of $5.00 spent or committed today; …', 0.2)], 2).daily).toBe(true);
    expect(budgetStopOf({ ...stopped, endReason: "Stopped: the estimated cost passed the job's cap of $0.50." }, [], 2)).toEqual({
      enoughUsd: null,
      perJobUsd: 2,
      daily: false,
    });
  });
});
