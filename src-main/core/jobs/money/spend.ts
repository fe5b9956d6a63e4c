/**
 * What jobs cost over the last local days (docs/ARCHITECTURE.md §4, `spend.ts`): sums of job records, nothing else read.
 * A job's money is `jobCostUsd`, the job list's own rule (billed where OpenRouter reported it, else the estimate), so
 * the report and `jobs.list` add up to the same totals; its tokens are its record's, the sums of its request log
 * (turn-meter.ts). A job counts on the local day it was created — the day the service admitted it and the daily
 * budget counts it against — so one that runs past midnight stays on the day it began. Running and queued jobs count
 * in the money and the tokens, never in a success rate or a cost per finished job.
 */
import { SPEND_DAYS, ZERO_USAGE, addUsage, isActive } from '../../../contract/index.js';
import type { JobRecord, SpendDayModel, SpendModel, SpendReport, Usage } from '../../../contract/index.js';
import { cacheShare } from '../../../common/format.js';
import { localDayKey } from '../../../common/local-day.js';
import { jobCostUsd } from './budget.js';

/** `count` local days ending with today's, oldest first. Stepped from noon, so a daylight-saving change neither skips nor repeats one. */
export function lastLocalDays(now: number, count: number): string[] {
  const noon = new Date(now);
  noon.setHours(12, 0, 0, 0);
  const days: string[] = [];
  for (let back = count - 1; back >= 0; back--) {
    const day = new Date(noon);
    day.setDate(noon.getDate() - back);
    days.push(localDayKey(day.getTime()));
  }
  return days;
}

interface ModelSums {
  model: string;
  jobs: number;
  finished: number;
  succeeded: number;
  costUsd: number;
  estimatedUsd: number;
  finishedCostUsd: number;
  usage: Usage;
}

/** Sums of many small floats, kept to a billionth of a dollar (as the turn meter keeps a turn's cost). */
const money = (usd: number): number => Math.round(usd * 1e9) / 1e9;

/** What a job adds to a bucket: its cost, the part of it that is still the estimate, its tokens. */
function addJob(sums: { costUsd: number; estimatedUsd: number; usage: Usage; jobs: number }, record: JobRecord): void {
  sums.jobs++;
  sums.costUsd += jobCostUsd(record);
  if (record.billedCostUsd === null) sums.estimatedUsd += record.estimatedCostUsd;
  sums.usage = addUsage(sums.usage, record.usage);
}

function modelRow(sums: ModelSums): SpendModel {
  return {
    model: sums.model,
    jobs: sums.jobs,
    finished: sums.finished,
    succeeded: sums.succeeded,
    successRate: sums.finished > 0 ? sums.succeeded / sums.finished : null,
    costUsd: money(sums.costUsd),
    estimatedUsd: money(sums.estimatedUsd),
    costPerFinishedJobUsd: sums.finished > 0 ? money(sums.finishedCostUsd / sums.finished) : null,
    usage: sums.usage,
    cacheShare: cacheShare(sums.usage),
  };
}

/** The last `dayCount` local days' spend (today included, by the clock `now`), per day and model and per model. */
export function spendReport(records: Iterable<JobRecord>, now: number, dayCount: number = SPEND_DAYS): SpendReport {
  const dates = lastLocalDays(now, dayCount);
  const dayIndex = new Map(dates.map((date, i) => [date, i]));
  const models = new Map<string, ModelSums>();
  const days = dates.map(() => new Map<string, SpendDayModel & { estimatedUsd: number }>());
  for (const record of records) {
    const day = dayIndex.get(localDayKey(Date.parse(record.createdAt)));
    if (day === undefined) continue;
    let sums = models.get(record.model);
    if (!sums) {
      sums = { model: record.model, jobs: 0, finished: 0, succeeded: 0, costUsd: 0, estimatedUsd: 0, finishedCostUsd: 0, usage: { ...ZERO_USAGE } };
      models.set(record.model, sums);
    }
    addJob(sums, record);
    if (!isActive(record.state)) {
      sums.finished++;
      sums.finishedCostUsd += jobCostUsd(record);
      if (record.state === 'succeeded') sums.succeeded++;
    }
    const ofDay = days[day] as Map<string, SpendDayModel & { estimatedUsd: number }>;
    let cell = ofDay.get(record.model);
    if (!cell) {
      cell = { model: record.model, costUsd: 0, estimatedUsd: 0, jobs: 0, usage: { ...ZERO_USAGE } };
      ofDay.set(record.model, cell);
    }
    addJob(cell, record);
  }
  const rows = [...models.values()].map(modelRow).sort((a, b) => b.costUsd - a.costUsd || a.model.localeCompare(b.model));
  const order = rows.map((row) => row.model);
  const usage = rows.reduce((sum, row) => addUsage(sum, row.usage), ZERO_USAGE);
  return {
    from: dates[0] ?? localDayKey(now),
    to: dates[dates.length - 1] ?? localDayKey(now),
    days: dates.map((date, i) => {
      const cells = order.flatMap((model) => {
        const cell = days[i]?.get(model);
        return cell ? [{ model, costUsd: money(cell.costUsd), jobs: cell.jobs, usage: cell.usage }] : [];
      });
      return { date, costUsd: money(cells.reduce((sum, c) => sum + c.costUsd, 0)), jobs: cells.reduce((sum, c) => sum + c.jobs, 0), models: cells };
    }),
    models: rows,
    totalUsd: money(rows.reduce((sum, row) => sum + row.costUsd, 0)),
    estimatedUsd: money(rows.reduce((sum, row) => sum + row.estimatedUsd, 0)),
    jobs: rows.reduce((sum, row) => sum + row.jobs, 0),
    usage,
    cacheShare: cacheShare(usage),
  };
}
