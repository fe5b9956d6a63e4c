/**
 * The spend report (core/jobs/money/spend.ts): job records summed per local day and model and per model, on an injected
 * clock. Times are built from local fields (`new Date(y, m, d, h)`), so the tests hold in any time zone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { JobRecord, JobState, Usage } from '../../../../src-main/contract/index.js';
import { jobCostUsd } from '../../../../src-main/core/jobs/money/budget.js';
import { newJobRecord } from '../../../../src-main/core/jobs/record/job-record.js';
import { lastLocalDays, spendReport } from '../../../../src-main/core/jobs/money/spend.js';
import { jobFields } from '../../../support/job-fields.js';
import { usage } from '../../../support/usage.js';

/** 30 Nov 2026, 15:00 local time: "today" in these tests. */
const NOW = new Date(2026, 10, 30, 15, 0).getTime();
const local = (month: number, day: number, hour = 12, minute = 0) => new Date(2026, month, day, hour, minute).getTime();
let ids = 0;
function job(
  createdAt: number,
  fields: { model?: string; state?: JobState; estimated?: number; billed?: number | null; usage?: Usage; endedAt?: number | null } = {},
): JobRecord {
  const record = newJobRecord(`j${++ids}`, jobFields({ model: fields.model ?? 'deepseek/deepseek-v4' }), createdAt);
  const state = fields.state ?? 'succeeded';
  return {
    ...record,
    state,
    startedAt: record.createdAt,
    endedAt: state === 'running' || state === 'queued' ? null : new Date(fields.endedAt ?? createdAt + 60_000).toISOString(),
    estimatedCostUsd: fields.estimated ?? 0.1,
    billedCostUsd: fields.billed ?? null,
    billing: fields.billed === undefined || fields.billed === null ? 'unavailable' : 'complete',
    usage: fields.usage ?? usage(1000, 100),
  };
}

describe('the days of a spend report', () => {
  const tz = process.env.TZ;
  afterEach(() => {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  });

  it('are the last 30 local days, oldest first, ending today, each listed even with nothing spent', () => {
    const report = spendReport([], NOW);
    expect(report.days).toHaveLength(30);
    expect(report.days[0]?.date).toBe('2026-11-01');
    expect(report.days[29]?.date).toBe('2026-11-30');
    expect(report).toMatchObject({ from: '2026-11-01', to: '2026-11-30', totalUsd: 0, jobs: 0, models: [], cacheShare: null });
    expect(report.days.every((day) => day.costUsd === 0 && day.jobs === 0 && day.models.length === 0)).toBe(true);
  });

  it('cross a month end and a daylight-saving change without skipping or repeating a day', () => {
    process.env.TZ = 'Europe/Berlin';
    // Clocks went back on 25 Oct 2026 there: that day had 25 hours.
    const days = lastLocalDays(new Date(2026, 10, 5, 0, 30).getTime(), 30);
    expect(days[0]).toBe('2026-10-07');
    expect(days[29]).toBe('2026-11-05');
    expect(new Set(days).size).toBe(30);
    expect(days).toContain('2026-10-25');
    expect(days).toContain('2026-10-31');
  });

  it('count a job on the local day it was created: 23:59 is that day, midnight the next', () => {
    const late = job(local(10, 28, 23, 59), { estimated: 0.25 });
    const midnight = job(local(10, 29, 0, 0), { estimated: 0.5 });
    const report = spendReport([late, midnight], NOW);
    expect(report.days.find((d) => d.date === '2026-11-28')).toMatchObject({ costUsd: 0.25, jobs: 1 });
    expect(report.days.find((d) => d.date === '2026-11-29')).toMatchObject({ costUsd: 0.5, jobs: 1 });
  });

  it('count a job that ran past midnight on the day it started, not the day it ended', () => {
    const overnight = job(local(10, 20, 23, 50), { estimated: 0.4, endedAt: local(10, 21, 0, 40) });
    const report = spendReport([overnight], NOW);
    expect(report.days.find((d) => d.date === '2026-11-20')?.costUsd).toBe(0.4);
    expect(report.days.find((d) => d.date === '2026-11-21')?.costUsd).toBe(0);
  });

  it('leave out jobs created before the first day or after today', () => {
    const tooOld = job(local(9, 31, 23, 59), { estimated: 3 });
    const first = job(local(10, 1, 0, 0), { estimated: 0.1 });
    const tomorrow = job(local(11, 1, 0, 0), { estimated: 7 });
    const report = spendReport([tooOld, first, tomorrow], NOW);
    expect(report.totalUsd).toBe(0.1);
    expect(report.jobs).toBe(1);
    expect(report.days[0]?.costUsd).toBe(0.1);
  });
});

describe('the money of a spend report', () => {
  it("counts each job as the job list does: OpenRouter's bill where there is one, else the estimate", () => {
    const billed = job(local(10, 30, 9), { estimated: 0.3, billed: 0.27 });
    const estimated = job(local(10, 30, 10), { estimated: 0.12 });
    const report = spendReport([billed, estimated], NOW);
    expect(report.totalUsd).toBe(0.39);
    expect(report.totalUsd).toBeCloseTo(jobCostUsd(billed) + jobCostUsd(estimated), 12);
    // What is not billed yet is said apart.
    expect(report.estimatedUsd).toBe(0.12);
    expect(report.days[29]).toMatchObject({ date: '2026-11-30', costUsd: 0.39, jobs: 2 });
  });

  it('counts running jobs in the spend, but not in the success rate or the cost per finished job', () => {
    const model = 'qwen/qwen3-coder';
    const jobs = [
      job(local(10, 30, 8), { model, estimated: 0.2, billed: 0.2 }),
      job(local(10, 30, 9), { model, state: 'failed', estimated: 0.1 }),
      job(local(10, 30, 14), { model, state: 'running', estimated: 0.9 }),
      job(local(10, 30, 14, 30), { model, state: 'queued', estimated: 0 }),
    ];
    const [row] = spendReport(jobs, NOW).models;
    expect(row).toMatchObject({ model, jobs: 4, finished: 2, succeeded: 1, successRate: 0.5, costUsd: 1.2, estimatedUsd: 1, costPerFinishedJobUsd: 0.15 });
  });

  it('says nothing of a success rate or a cost per finished job before any job has ended', () => {
    const [row] = spendReport([job(local(10, 30, 14), { state: 'running', estimated: 0.05 })], NOW).models;
    expect(row).toMatchObject({ jobs: 1, finished: 0, successRate: null, costPerFinishedJobUsd: null, costUsd: 0.05 });
  });

  it('counts cancelled, timed-out, budget-stopped and lost jobs as finished without success', () => {
    const states: JobState[] = ['succeeded', 'cancelled', 'timed_out', 'budget_exceeded', 'lost'];
    const [row] = spendReport(
      states.map((state, i) => job(local(10, 29, i), { state, estimated: 0.1 })),
      NOW,
    ).models;
    expect(row).toMatchObject({ finished: 5, succeeded: 1, successRate: 0.2 });
  });
});

describe('the models of a spend report', () => {
  it('are listed dearest first, and each day stacks them in that order', () => {
    const jobs = [
      job(local(10, 29), { model: 'z-ai/glm-4.6', estimated: 0.05 }),
      job(local(10, 29), { model: 'qwen/qwen3-coder', estimated: 0.5 }),
      job(local(10, 30), { model: 'qwen/qwen3-coder', estimated: 0.1 }),
      job(local(10, 30), { model: 'deepseek/deepseek-v4', estimated: 0.3 }),
    ];
    const report = spendReport(jobs, NOW);
    expect(report.models.map((m) => m.model)).toEqual(['qwen/qwen3-coder', 'deepseek/deepseek-v4', 'z-ai/glm-4.6']);
    expect(report.days[28]?.models.map((m) => m.model)).toEqual(['qwen/qwen3-coder', 'z-ai/glm-4.6']);
    expect(report.days[29]?.models).toEqual([
      { model: 'qwen/qwen3-coder', costUsd: 0.1, jobs: 1, usage: usage(1000, 100) },
      { model: 'deepseek/deepseek-v4', costUsd: 0.3, jobs: 1, usage: usage(1000, 100) },
    ]);
    // The days add up to the models, and both to the total.
    const byDays = report.days.reduce((sum, day) => sum + day.costUsd, 0);
    expect(byDays).toBeCloseTo(report.totalUsd, 9);
    expect(report.totalUsd).toBe(0.95);
  });

  it("sum each model's tokens, and say what share of its prompt the cache served", () => {
    const model = 'deepseek/deepseek-v4';
    const jobs = [
      job(local(10, 30, 9), { model, usage: usage(1000, 200, 7000, 2000) }),
      job(local(10, 30, 10), { model, usage: usage(1000, 300, 9000, 0) }),
      job(local(10, 30, 11), { model: 'other/model', usage: usage(5000, 10) }),
    ];
    const report = spendReport(jobs, NOW);
    const row = report.models.find((m) => m.model === model);
    expect(row?.usage).toEqual(usage(2000, 500, 16000, 2000));
    expect(row?.cacheShare).toBeCloseTo(16000 / 20000, 12);
    expect(report.usage).toEqual(usage(7000, 510, 16000, 2000));
    expect(report.cacheShare).toBeCloseTo(16000 / 25000, 12);
    expect(report.models.find((m) => m.model === 'other/model')?.cacheShare).toBe(0);
  });
});
