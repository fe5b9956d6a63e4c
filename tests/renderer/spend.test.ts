/**
 * The Spend page over the loopback host, against the real service: a month of job records seeded in its jobs folder
 * (several models, billed and estimated, succeeded and failed, each with its request log), and the page's figures held
 * against what the contract says of the same jobs — `jobs.list` (what `delegate_list` renders) for the money,
 * `jobs.requests` for the tokens — on the page, in its table and in the CSV it downloads. The page's pure helpers are
 * tested first.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { GatewayRequest, JobRecord, JobState, ScoreFact, SpendReport, Usage } from '../../src-main/contract/index.js';
import { JobIsolationSchema, JobVerifySchema, ZERO_USAGE, addUsage, isActive } from '../../src-main/contract/index.js';
import { localDayKey } from '../../src-main/common/local-day.js';
import { newJobRecord } from '../../src-main/core/jobs/record/job-record.js';
import { JobStore } from '../../src-main/core/jobs/record/job-store.js';
import { ScoreArchive } from '../../src-main/core/jobs/score/score-archive.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import { formatDateTime, formatShare, formatTokens, formatUsd, promptTokens } from '../../src-renderer/lib/format.js';
import { SCOREBOARD_EMPTY } from '../../src-renderer/lib/scoreboard.js';
import {
  CSV_COLUMNS,
  chartSeries,
  chartSummary,
  csvField,
  csvFileName,
  csvUsd,
  dayLabel,
  dayStack,
  moneyScale,
  spendCsv,
  successText,
} from '../../src-renderer/lib/spend.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { MODEL } from '../support/delegation.js';
import { jobFields } from '../support/job-fields.js';
import { UiWorlds, useBrowser, openPage, screenshot, expectAccessible } from '../support/ui.js';
import { usage } from '../support/usage.js';

function day(date: string, models: Array<[string, number, number?]>): SpendReport['days'][number] {
  const cells = models.map(([model, costUsd, jobs = 1]) => ({ model, costUsd, jobs, usage: usage(100, 10, 50, 5) }));
  return { date, costUsd: cells.reduce((sum, c) => sum + c.costUsd, 0), jobs: cells.reduce((sum, c) => sum + c.jobs, 0), models: cells };
}

describe('the Spend page helpers', () => {
  it('stack a bar bottom up in series order, leaving out models with nothing that day', () => {
    const series = chartSeries([
      { model: 'a/dear', costUsd: 3 },
      { model: 'b/mid', costUsd: 2 },
      { model: 'c/cheap', costUsd: 1 },
    ]);
    expect(series.map((s) => [s.index, s.label])).toEqual([
      [1, 'a/dear'],
      [2, 'b/mid'],
      [3, 'c/cheap'],
    ]);
    const stack = dayStack(
      day('2026-11-30', [
        ['c/cheap', 0.25],
        ['a/dear', 0.5],
      ]),
      series,
    );
    expect(stack.map((p) => [p.series.label, p.from, p.to])).toEqual([
      ['a/dear', 0, 0.5],
      ['c/cheap', 0.5, 0.75],
    ]);
  });

  it('fold the models past the theme colours into one series, so no two series share a colour', () => {
    const models = Array.from({ length: 10 }, (_, i) => ({ model: `m/${i}`, costUsd: 10 - i }));
    const series = chartSeries(models, 8);
    expect(series).toHaveLength(8);
    expect(series[7]).toEqual({ index: 8, label: '3 other models', models: ['m/7', 'm/8', 'm/9'], costUsd: 3 + 2 + 1 });
    expect(dayStack(day('2026-11-30', [['m/8', 0.1]]), series).map((p) => p.series.index)).toEqual([8]);
  });

  it('scale the money axis to round steps that reach the dearest day', () => {
    expect(moneyScale(0.87)).toEqual({ top: 1, ticks: [0, 0.25, 0.5, 0.75, 1] });
    expect(moneyScale(3.2)).toEqual({ top: 4, ticks: [0, 1, 2, 3, 4] });
    expect(moneyScale(0.042)).toEqual({ top: 0.06, ticks: [0, 0.02, 0.04, 0.06] });
    expect(moneyScale(12)).toEqual({ top: 15, ticks: [0, 5, 10, 15] });
    expect(moneyScale(1)).toEqual({ top: 1, ticks: [0, 0.25, 0.5, 0.75, 1] });
    // Nothing spent: an axis all the same.
    expect(moneyScale(0)).toEqual({ top: 1, ticks: [0, 0.25, 0.5, 0.75, 1] });
  });

  it('name days without a time zone, and say the chart in a sentence', () => {
    expect(dayLabel('2026-11-03')).toBe('3 Nov');
    expect(dayLabel('2027-01-31')).toBe('31 Jan');
    const report = { totalUsd: 1.5, days: [day('2026-11-29', [['a/x', 0.5]]), day('2026-11-30', [['a/x', 1]])] };
    expect(chartSummary(report)).toBe('Spend per day over the last 2 days, stacked by model: $1.50 in all; the most on 30 Nov, $1.00.');
    expect(chartSummary({ totalUsd: 0, days: [day('2026-11-30', [])] })).toBe('Spend per day over the last 1 day, stacked by model: nothing spent.');
  });

  it('say a success rate as a share, or a dash before any job ended', () => {
    expect(successText({ successRate: 0.75 })).toBe('75%');
    expect(successText({ successRate: null })).toBe('—');
  });

  it('write a CSV with a line per day and model that had jobs, oldest first, in plain decimals', () => {
    const report = {
      days: [
        day('2026-11-29', [['deepseek/deepseek-v4', 0.1234567, 2]]),
        day('2026-11-30', []),
        { ...day('2026-11-30', [['qwen/qwen3-coder', 0.0000042]]), date: '2026-11-30' },
      ],
    };
    expect(spendCsv(report)).toBe(
      [CSV_COLUMNS.join(','), '2026-11-29,deepseek/deepseek-v4,0.123457,2,100,10,50,5', '2026-11-30,qwen/qwen3-coder,0.000004,1,100,10,50,5', ''].join('\r\n'),
    );
    expect(CSV_COLUMNS.join(',')).toBe('date,model,cost_usd,jobs,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens');
    expect(csvUsd(0)).toBe('0');
    expect(csvUsd(1e-7)).toBe('0');
    expect(csvUsd(1234.5)).toBe('1234.5');
    expect(csvFileName({ from: '2026-11-01', to: '2026-11-30' })).toBe('openrouter-delegate-spend-2026-11-01-to-2026-11-30.csv');
  });

  it('quote a CSV field that needs it, and never let one read as a formula', () => {
    expect(csvField('vendor/model')).toBe('vendor/model');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('@sum')).toBe("'@sum");
  });
});

// ——— The page, against the real service ———

const chrome = useBrowser();
const ui = new UiWorlds('ui-test/spend');

const MODELS = ['deepseek/deepseek-v4-flash-0731', 'qwen/qwen3-coder', 'z-ai/glm-4.6', 'moonshotai/kimi-k2'];

/** A local time `daysBack` days before today (today's jobs: a few minutes ago, never in the future). */
function localTime(daysBack: number, hour: number, minute: number): number {
  if (daysBack === 0) return Date.now() - (hour * 60 + minute) * 1000;
  const at = new Date();
  at.setHours(12, 0, 0, 0);
  at.setDate(at.getDate() - daysBack);
  at.setHours(hour, minute, 0, 0);
  return at.getTime();
}

const cents = (usd: number): number => Math.round(usd * 10_000) / 10_000;
/**
 * A sum of dollars to a billionth, as the report keeps its sums: the same figures added in another order can differ in
 * the last bits of a double, enough to round a sum that ends in exactly half a cent the other way.
 */
const billionths = (usd: number): number => Math.round(usd * 1e9) / 1e9;

/**
 * A month of finished jobs written straight into the jobs folder before the service starts: 1–3 a day over the last
 * 29 days across four models; two in three billed by OpenRouter (a little under their estimate), the rest estimated
 * only; some failed, cancelled or timed out; one started at 23:50 and ended after midnight. Each has a request log of
 * two requests whose tokens and cost add up to its record's, as the gateway writes them.
 */
async function seedMonth(): Promise<{ ids: string[]; overnight: JobRecord }> {
  const dir = resolveLocations(ui.world.env).jobsDir;
  const ids: string[] = [];
  let overnight: JobRecord | null = null;
  let n = 0;
  for (let back = 28; back >= 0; back--) {
    for (let j = 0; j < (back % 3) + 1; j++) {
      n++;
      const spansMidnight = back === 3 && j === 0;
      const createdAt = spansMidnight ? localTime(back, 23, 50) : localTime(back, 9 + j * 3, (n * 7) % 60);
      const model = MODELS[(back + j) % MODELS.length] ?? MODEL;
      const state: JobState = n % 5 === 0 ? 'failed' : n % 11 === 0 ? 'cancelled' : n % 13 === 0 ? 'timed_out' : 'succeeded';
      const estimated = cents(0.01 * (1 + ((n * 37) % 50)));
      const billed = n % 3 === 0 ? null : cents(estimated * 0.9);
      const tokens = usage(1000 + n * 13, 200 + n * 7, n % 2 ? 5000 + n * 11 : 0, n % 4 === 0 ? 1200 : 0);
      const store = new JobStore({ dir, now: () => createdAt });
      const id = store.newJobId();
      const record = newJobRecord(id, jobFields({ model, cwd: ui.world.project, sessionId: `session-${n}`, promptPreview: `Seeded job ${n}` }), createdAt);
      await store.create(record, `Seeded job ${n}`);
      const endedAt = spansMidnight ? localTime(back - 1, 0, 25) : createdAt + 90_000;
      const half = usage(Math.floor(tokens.inputTokens / 2), Math.floor(tokens.outputTokens / 2), Math.floor(tokens.cacheReadTokens / 2), 0);
      const rest = usage(
        tokens.inputTokens - half.inputTokens,
        tokens.outputTokens - half.outputTokens,
        tokens.cacheReadTokens - half.cacheReadTokens,
        tokens.cacheWriteTokens,
      );
      const requests = [half, rest].map((part, i): GatewayRequest => ({
        id: `r${i}`,
        at: new Date(createdAt + 1000 + i * 30_000).toISOString(),
        model,
        provider: 'Seeded',
        generationId: `gen-${n}-${i}`,
        status: 200,
        outcome: 'ok',
        usage: part,
        costUsd: i === 0 ? cents(estimated / 2) : cents(estimated - cents(estimated / 2)),
        ceilingUsd: estimated,
        maxTokens: 32_000,
        maxTokensAsked: null,
        firstByteMs: 400,
        durationMs: 2000,
        note: null,
      }));
      for (const entry of requests) await store.appendRequest(id, entry);
      await store.closeRequestLogs();
      const final: JobRecord = {
        ...record,
        state,
        startedAt: new Date(createdAt + 500).toISOString(),
        endedAt: new Date(endedAt).toISOString(),
        exitCode: state === 'succeeded' ? 0 : 1,
        endReason: state === 'succeeded' ? null : 'Seeded for the spend test.',
        isError: state !== 'succeeded',
        toolCalls: 3,
        usage: tokens,
        estimatedCostUsd: estimated,
        billedCostUsd: billed,
        billing: billed === null ? 'unavailable' : 'complete',
        generationIds: requests.map((r) => r.generationId ?? ''),
        requests: { total: 2, failed: 0, refused: 0, clamped: 0 },
      };
      await store.write(final);
      ids.push(id);
      if (spansMidnight) overnight = final;
    }
  }
  if (!overnight) throw new Error('no job was seeded across midnight');
  return { ids, overnight };
}

interface Expected {
  model: string;
  jobs: number;
  finished: number;
  succeeded: number;
  costUsd: number;
  finishedCostUsd: number;
  usage: Usage;
}

/** What the contract says of the seeded jobs, per model: money from jobs.list (billed else estimated), tokens from jobs.requests. */
async function expectedFromContract(): Promise<{ total: number; listed: number; records: JobRecord[]; models: Map<string, Expected> }> {
  const client = await ui.contract();
  const list = await client.call('jobs.list', { limit: 500 });
  const records = list.conversations.flatMap((c) => c.jobs);
  const total = list.conversations.reduce((sum, c) => sum + c.costUsd, 0);
  const models = new Map<string, Expected>();
  for (const conversation of list.conversations) {
    for (const record of conversation.jobs) {
      const cost = record.billedCostUsd ?? record.estimatedCostUsd;
      const row = models.get(record.model) ?? { model: record.model, jobs: 0, finished: 0, succeeded: 0, costUsd: 0, finishedCostUsd: 0, usage: ZERO_USAGE };
      const { requests } = await client.call('jobs.requests', { jobId: record.id });
      row.jobs++;
      row.costUsd += cost;
      if (!isActive(record.state)) {
        row.finished++;
        row.finishedCostUsd += cost;
        if (record.state === 'succeeded') row.succeeded++;
      }
      row.usage = requests.reduce((sum, r) => addUsage(sum, r.usage), row.usage);
      models.set(record.model, row);
    }
  }
  return { total: billionths(total), listed: list.totalCostUsd, records, models };
}

/** The CSV the page downloads on "Export CSV", with its file name. */
async function downloadCsv(page: Page): Promise<{ name: string; rows: Array<Record<string, string>>; header: string }> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  const text = await readFile(await download.path(), 'utf8');
  const [header = '', ...lines] = text.split('\r\n').filter((line) => line !== '');
  const columns = header.split(',');
  const rows = lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [columns[i] ?? `${i}`, value])));
  return { name: download.suggestedFilename(), rows, header };
}

const modelRow = (page: Page, model: string) => page.locator(`[data-testid="spend-model-row"][data-model="${model}"]`);
const text = async (page: Page, testId: string) => (await page.getByTestId(testId).textContent())?.trim() ?? '';

const DAY_MS = 24 * 3600_000;

/** A seeded model's row as the page must print it, worked out by hand from the plan in seedScoreboard: Delegations, Passed (and under it), Taken (and under it), Median cost of a pass, Median time. */
interface ScoreExpected {
  model: string;
  cells: [string, string, string | null, string, string | null, string, string];
}

/** The seeded scoreboard's tables, by repository in path order, each model by passes, then pass rate. */
const SCORE_EXPECTED: Array<[string, ScoreExpected[]]> = [
  [
    '/srv/git/api',
    [
      // 4 of 5 passed; 3 of 5 ended taken; passes cost 0.10–0.40 (median 0.25); times 60–90 s (median 70 s).
      { model: 'deepseek/deepseek-v4-flash-0731', cells: ['5', '80%', '4 of 5 verified', '60%', '3 taken', '$0.25', '1 min 10 s'] },
      // Never verified; one discarded, one left alone: none taken of 2 ended; times 30 and 50 s.
      { model: 'qwen/qwen3-coder', cells: ['2', '—', null, '0%', '0 taken', '—', '40 s'] },
    ],
  ],
  [
    '/srv/git/site',
    [
      // The job on record: passed, taken, billed $0.12 (estimated $0.15), a 2 min turn and 5 s of verify commands.
      { model: 'z-ai/glm-4.6', cells: ['1', '100%', '1 of 1 verified', '100%', '1 taken', '$0.12', '2 min 5 s'] },
      // Passed with its checks rewritten: no pass.
      { model: 'moonshotai/kimi-k2', cells: ['1', '0%', '0 of 1 verified', '0%', '0 taken', '—', '20 s'] },
    ],
  ],
];

/**
 * The scoreboard with history: the facts of pruned delegations in the data folder's scoreboard.jsonl (written by the
 * service's own archive), and one delegation still on record, a worktree job whose verify commands passed and whose
 * work was taken. Returns when the oldest delegation started.
 */
async function seedScoreboard(): Promise<string> {
  const now = Date.now();
  const at = (daysBack: number) => new Date(now - daysBack * DAY_MS).toISOString();
  const fact = (
    n: number,
    repo: string,
    model: string,
    daysBack: number,
    verified: ScoreFact['verified'],
    fate: ScoreFact['fate'],
    costUsd: number,
    ms: number,
  ): ScoreFact => ({
    sessionId: `pruned-${n}`,
    repo,
    model,
    createdAt: at(daysBack),
    ended: true,
    picked: false,
    verified,
    fate,
    costUsd,
    ms,
  });
  const api = '/srv/git/api';
  const site = '/srv/git/site';
  const deepseek = 'deepseek/deepseek-v4-flash-0731';
  const locations = resolveLocations(ui.world.env);
  await new ScoreArchive(path.join(locations.data, 'scoreboard.jsonl')).keep([
    fact(1, api, deepseek, 40, 'passed', 'taken', 0.1, 60_000),
    fact(2, api, deepseek, 30, 'passed', 'taken', 0.2, 65_000),
    fact(3, api, deepseek, 20, 'passed', 'discarded', 0.3, 70_000),
    fact(4, api, deepseek, 10, 'passed', 'kept', 0.4, 80_000),
    fact(5, api, deepseek, 5, 'failed', 'taken', 0.5, 90_000),
    fact(6, api, 'qwen/qwen3-coder', 12, null, 'discarded', 0.05, 30_000),
    fact(7, api, 'qwen/qwen3-coder', 2, null, 'kept', 0.06, 50_000),
    fact(8, site, 'moonshotai/kimi-k2', 8, 'flagged', 'kept', 0.07, 20_000),
  ]);

  const createdAt = now - DAY_MS;
  const store = new JobStore({ dir: locations.jobsDir, now: () => createdAt });
  const id = store.newJobId();
  const record = newJobRecord(id, jobFields({ model: 'z-ai/glm-4.6', cwd: site, sessionId: 'on-record', promptPreview: 'Seeded delegation' }), createdAt);
  await store.create(record, 'Seeded delegation');
  const started = createdAt + 500;
  await store.write({
    ...record,
    state: 'succeeded',
    startedAt: new Date(started).toISOString(),
    endedAt: new Date(started + 120_000).toISOString(),
    exitCode: 0,
    estimatedCostUsd: 0.15,
    billedCostUsd: 0.12,
    billing: 'complete',
    // Its work taken, so its worktree is gone (merged): the service has nothing to look for on disk.
    isolation: JobIsolationSchema.parse({
      mode: 'worktree',
      note: null,
      repo: site,
      worktree: path.join(locations.data, 'worktrees', id),
      branch: `delegate/${id}`,
      baseCommit: 'a'.repeat(40),
      baseDirty: false,
      worktreeState: 'merged',
      headCommit: 'b'.repeat(40),
    }),
    verify: JobVerifySchema.parse({
      commands: ['npm test'],
      fixRoundsLeft: 0,
      outcome: 'passed',
      runs: [{ command: 'npm test', ok: true, exitCode: 0, signal: null, timedOut: false, ms: 5_000, tail: 'ok' }],
    }),
    fate: { fate: 'taken', at: new Date(started + 200_000).toISOString() },
  });
  return at(40);
}

/** A scoreboard row's cells as the page shows them, in SCORE_EXPECTED's order; null for a line under a figure that is not there. */
async function scoreCellsOf(row: Locator): Promise<Array<string | null>> {
  const ids = ['score-delegations', 'score-pass-rate', 'score-passed', 'score-taken-rate', 'score-taken', 'score-pass-cost', 'score-time'];
  return Promise.all(
    ids.map(async (testId) => {
      const cell = row.getByTestId(testId);
      return (await cell.count()) === 0 ? null : ((await cell.textContent())?.trim() ?? '');
    }),
  );
}

describe('the Spend page', () => {
  ui.each();

  it('shows a seeded month with the same totals as jobs.list and the request logs, and exports them as CSV, in both themes', { timeout: 60_000 }, async () => {
    const theme = 'light';
    const { ids, overnight } = await seedMonth();
    await ui.world.startService();
    const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('spend'), { theme, height: 900 });
    await expect.poll(() => page.getByTestId('spend-total').isVisible()).toBe(true);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Spend');

    // The 30-day total is what jobs.list (delegate_list) counts for the same jobs.
    const expected = await expectedFromContract();
    expect(expected.records.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(await text(page, 'spend-total')).toBe(formatUsd(expected.total));
    expect(await text(page, 'spend-jobs')).toBe(String(ids.length));
    const report = await (await ui.contract()).call('spend.report', {});
    expect(report.totalUsd).toBeCloseTo(expected.total, 9);
    // delegate_list's own line ("Shown cost …") reads the list's total.
    expect(formatUsd(billionths(expected.listed))).toBe(formatUsd(expected.total));
    const unbilled = expected.records.filter((r) => r.billedCostUsd === null).reduce((sum, r) => sum + r.estimatedCostUsd, 0);
    expect(await text(page, 'spend-estimated')).toBe(`${formatUsd(unbilled)} of it estimated, not billed yet`);

    // One row per model, dearest first, each matching the contract's jobs and request logs.
    const rows = page.getByTestId('spend-model-row');
    const dearestFirst = [...expected.models.values()].sort((a, b) => b.costUsd - a.costUsd).map((m) => m.model);
    expect(await rows.evaluateAll((els) => els.map((el) => el.getAttribute('data-model')))).toEqual(dearestFirst);
    let allUsage = ZERO_USAGE;
    for (const m of expected.models.values()) {
      const row = modelRow(page, m.model);
      expect(await row.getByTestId('spend-model-jobs').textContent()).toBe(String(m.jobs));
      expect(await row.getByTestId('spend-model-success').textContent()).toBe(formatShare(m.succeeded / m.finished));
      expect(await row.getByTestId('spend-model-cost').textContent()).toBe(formatUsd(billionths(m.costUsd)));
      expect(await row.getByTestId('spend-model-per-job').textContent()).toBe(formatUsd(billionths(m.finishedCostUsd / m.finished)));
      expect(await row.getByTestId('spend-model-tokens').textContent()).toBe(`${formatTokens(promptTokens(m.usage))} / ${formatTokens(m.usage.outputTokens)}`);
      expect(await row.getByTestId('spend-model-cache').textContent()).toBe(formatShare(m.usage.cacheReadTokens / promptTokens(m.usage)));
      allUsage = addUsage(allUsage, m.usage);
    }
    expect(await text(page, 'spend-cache-share')).toBe(formatShare(allUsage.cacheReadTokens / promptTokens(allUsage)));

    // The chart: a legend in stacking order, and the same numbers as a table, a row per day, each day's jobs on the day they started.
    expect(await page.getByTestId('spend-legend-item').count()).toBe(MODELS.length);
    expect(await page.getByTestId('spend-chart').locator('rect').count()).toBeGreaterThan(ids.length / 2);
    await page.getByText('The same numbers as a table').click();
    const dayRows = page.getByTestId('spend-day-row');
    expect(await dayRows.count()).toBe(30);
    const byDay = new Map<string, number>();
    for (const r of expected.records) {
      const key = localDayKey(Date.parse(r.createdAt));
      byDay.set(key, (byDay.get(key) ?? 0) + (r.billedCostUsd ?? r.estimatedCostUsd));
    }
    for (const [date, cost] of byDay) {
      expect(await page.locator(`[data-testid="spend-day-row"][data-date="${date}"]`).getByTestId('spend-day-total').textContent(), date).toBe(
        formatUsd(billionths(cost)),
      );
    }
    expect(await text(page, 'spend-days-total')).toBe(formatUsd(expected.total));
    // The job that ran past midnight counts on the day it started.
    const startDay = localDayKey(Date.parse(overnight.createdAt));
    expect(localDayKey(Date.parse(overnight.endedAt ?? ''))).not.toBe(startDay);
    expect(report.days.find((d) => d.date === startDay)?.models.some((c) => c.model === overnight.model)).toBe(true);

    // The CSV sums to the same total, and its tokens are the request logs'.
    const csv = await downloadCsv(page);
    expect(csv.name).toBe(`openrouter-delegate-spend-${report.from}-to-${report.to}.csv`);
    expect(csv.header).toBe('date,model,cost_usd,jobs,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens');
    const csvTotal = csv.rows.reduce((sum, row) => sum + Number(row.cost_usd), 0);
    expect(csvTotal).toBeCloseTo(expected.total, 5);
    expect(formatUsd(csvTotal)).toBe(formatUsd(expected.total));
    expect(csv.rows.reduce((sum, row) => sum + Number(row.jobs), 0)).toBe(ids.length);
    for (const m of expected.models.values()) {
      const ofModel = csv.rows.filter((row) => row.model === m.model);
      const sum = (column: string) => ofModel.reduce((total, row) => total + Number(row[column]), 0);
      expect(usage(sum('input_tokens'), sum('output_tokens'), sum('cache_read_tokens'), sum('cache_write_tokens')), m.model).toEqual(m.usage);
    }
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved as' }).count()).toBe(1);

    await screenshot(page, 'spend', theme);
    await expectAccessible(page);
    // In a narrow window the tables scroll inside their cards, reachable by keyboard.
    await page.setViewportSize({ width: 560, height: 900 });
    await expect.poll(() => page.getByRole('region', { name: 'Spend by model' }).evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    await screenshot(page, 'spend-narrow', theme);
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await context.close();

    // The dark theme draws the same numbers: shown, and checked for accessibility, wide and narrow.
    const dark = await openPage(chrome.browser, ui.world.pageUrl('spend'), { theme: 'dark', height: 900 });
    await expect.poll(() => dark.page.getByTestId('spend-total').textContent()).toBe(formatUsd(expected.total));
    await screenshot(dark.page, 'spend', 'dark');
    await expectAccessible(dark.page);
    await dark.page.setViewportSize({ width: 560, height: 900 });
    await expect.poll(() => dark.page.getByRole('region', { name: 'Spend by model' }).evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    await screenshot(dark.page, 'spend-narrow', 'dark');
    await expectAccessible(dark.page);
    expect(dark.errors).toEqual([]);
    await dark.context.close();
  });

  it('says when nothing was spent, with the export off, and what fills the scoreboard in', async () => {
    await ui.world.startService();
    const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('spend'));
    const none = page.getByRole('region', { name: 'Nothing spent in the last 30 days' });
    await expect.poll(() => none.isVisible()).toBe(true);
    expect(await text(page, 'spend-total')).toBe('$0.00');
    expect(await page.getByRole('button', { name: 'Export CSV' }).isDisabled()).toBe(true);
    // No delegation worked in a repository yet: the scoreboard says what fills it in, and has no table.
    await expect.poll(() => text(page, 'scoreboard-empty')).toBe(SCOREBOARD_EMPTY);
    expect(await page.getByTestId('scoreboard-table').count()).toBe(0);
    await screenshot(page, 'spend-empty', 'light');
    await expectAccessible(page);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows how each model fared per repository, from the kept facts and the jobs on record, in both themes', { timeout: 60_000 }, async () => {
    const oldest = await seedScoreboard();
    await ui.world.startService();
    // The service counts the seeded history from both places: the oldest kept fact, and the delegation on record.
    const board = await (await ui.contract()).call('jobs.scoreboard', {});
    expect(board.since).toBe(oldest);
    expect(board.repos.map((r) => [r.repo, r.models.map((m) => m.model)])).toEqual(SCORE_EXPECTED.map(([repo, rows]) => [repo, rows.map((r) => r.model)]));

    for (const theme of ['light', 'dark'] as const) {
      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('spend'), { theme, height: 900 });
      const section = page.getByRole('region', { name: 'How models fared, per repository', exact: true });
      await expect.poll(() => section.getByTestId('scoreboard-table').count()).toBe(SCORE_EXPECTED.length);
      expect(await section.getByTestId('scoreboard-repo').allTextContents()).toEqual(SCORE_EXPECTED.map(([repo]) => repo));
      expect(await text(page, 'scoreboard-since')).toBe(`Every delegation since ${formatDateTime(oldest)}, by the model its first turn ran on.`);
      expect(await page.getByTestId('scoreboard-empty').count()).toBe(0);
      for (const [repo, rows] of SCORE_EXPECTED) {
        // Each table is a region named by its repository's heading.
        const table = section.getByRole('region', { name: repo, exact: true });
        const models = await table.getByTestId('score-row').evaluateAll((els) => els.map((el) => el.getAttribute('data-model')));
        expect(models, repo).toEqual(rows.map((r) => r.model));
        for (const { model, cells } of rows) {
          expect(await scoreCellsOf(table.locator(`[data-testid="score-row"][data-model="${model}"]`)), `${repo} ${model}`).toEqual(cells);
        }
      }
      await screenshot(page, 'spend-scoreboard', theme);
      await expectAccessible(page);
      // In a narrow window each table scrolls inside its card, reachable by keyboard.
      await page.setViewportSize({ width: 560, height: 900 });
      const first = section.getByRole('region', { name: SCORE_EXPECTED[0]?.[0] ?? '', exact: true });
      await expect.poll(() => first.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
      expect(await first.getAttribute('tabindex')).toBe('0');
      await screenshot(page, 'spend-scoreboard-narrow', theme);
      await expectAccessible(page);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it('follows jobs as they change, like the job list', { timeout: 90_000 }, async () => {
    await seedMonth();
    await ui.world.startService();
    const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('spend'));
    await expect.poll(() => page.getByTestId('spend-jobs').isVisible()).toBe(true);
    const before = Number(await text(page, 'spend-jobs'));
    ui.world.model.script('spend-live', [{ text: 'Done.' }]);
    const done = await (
      await ui.contract()
    ).call('jobs.start', {
      prompt: `${ScriptedModel.marker('spend-live')} Say done.`,
      cwd: ui.world.project,
      model: MODEL,
      caller: { cwd: ui.world.project },
      waitSeconds: 60,
    });
    expect(done.job.state).toBe('succeeded');
    // No reload: the page read the report again on job.changed.
    await expect.poll(() => text(page, 'spend-jobs'), { timeout: 15_000 }).toBe(String(before + 1));
    // Its bill may come in a little later; the page follows that too.
    const listed = async () => formatUsd((await (await ui.contract()).call('jobs.list', { limit: 500 })).conversations.reduce((sum, c) => sum + c.costUsd, 0));
    await expect.poll(async () => (await text(page, 'spend-total')) === (await listed()), { timeout: 15_000 }).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });
});
