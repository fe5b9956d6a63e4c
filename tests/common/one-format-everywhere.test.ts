/**
 * House style rule 5: one formatting module, so a number reads the same on every surface. The same
 * price, token count, duration, time limit, age and sum go through each surface's own presenter (the bridge's
 * tool text, the CLI, the tray and notifications, the settings page's helpers, core's messages), and each
 * prints the same words: one duration style ("1 h 4 min") and one age style ("20 min ago") everywhere.
 */
import { describe, expect, it } from 'vitest';
import { formatSetting } from '../../src-main/cli/config/config-fields.js';
import type { JobRecord, JobView } from '../../src-main/contract/jobs.js';
import type { ModelRow } from '../../src-main/contract/methods.js';
import { SettingsSchema } from '../../src-main/contract/settings.js';
import type { CatalogModel } from '../../src-main/core/catalog/parse.js';
import { evaluateModel } from '../../src-main/core/catalog/policy.js';
import { checkBudget } from '../../src-main/core/jobs/money/budget.js';
import { resolveTimeout } from '../../src-main/core/jobs/record/job-request.js';
import { policySummary } from '../../src-main/core/service/service-handlers.js';
import { checkChangedSettings } from '../../src-main/core/settings/checks.js';
import { newJobRecord } from '../../src-main/core/jobs/record/job-record.js';
import { presentJobEnded } from '../../src-main/electron/present/notifications.js';
import { presentTray } from '../../src-main/electron/present/tray.js';
import { formatAgo, formatDuration, formatMinutes, formatPricePerM, formatTokens, formatUsage, formatUsd } from '../../src-renderer/lib/format.js';
import { catalogAge } from '../../src-renderer/lib/delegation.js';
import { renderJobView } from '../../src-bridge/render/jobs.js';
import { renderModelsTable } from '../../src-bridge/render/models-table.js';
import { renderModelsReport } from '../../src-bridge/render/models-report.js';
import { jobFields } from '../support/job-fields.js';

const PRICE_PER_M = 0.27;
const TOKENS = 12_345;
const SECONDS = 3840;
const SMALL_SUM = 0.0042;
const NOW = Date.parse('2026-11-30T12:00:00Z');
const STARTED = new Date(NOW - SECONDS * 1000).toISOString();
/** A time limit, as the settings and a job's record keep it. */
const LIMIT_MINUTES = 90;
/** How old a figure is: past the tray's 15 minutes, so the tray says it too. */
const AGE_SECONDS = 20 * 60 + 30;
const AGE_AT = NOW - AGE_SECONDS * 1000;

/** What every surface must print. */
const READS = { price: '$0.27/M', tokens: '12.3k', duration: '1 h 4 min', limit: '1 h 30 min', age: '20 min ago', sum: '$0.0042' } as const;

const usage = { inputTokens: TOKENS, outputTokens: 950, cacheReadTokens: 0, cacheWriteTokens: 0 };

const record: JobRecord = {
  ...newJobRecord(
    'j-1',
    jobFields({
      sessionId: 's-1',
      model: 'deepseek/deepseek-v4-flash',
      permissionMode: 'manual',
      cwd: '/tmp/project',
      timeoutMinutes: 120,
      promptPreview: 'Write the tests',
    }),
    Date.parse(STARTED),
  ),
  state: 'running',
  startedAt: STARTED,
  toolCalls: 3,
  usage,
  estimatedCostUsd: SMALL_SUM,
};

const view: JobView = {
  job: record,
  elapsedSeconds: SECONDS,
  unverified: false,
  tail: [],
  queuePosition: null,
  files: { dir: '/jobs/j-1', prompt: 'p', stream: 's', stderr: 'e', result: 'r' },
  waitTimedOut: false,
};

const row: ModelRow = {
  id: 'acme/model',
  name: 'Acme: Model',
  contextLength: TOKENS,
  priceInputPerM: PRICE_PER_M,
  priceOutputPerM: 1,
  priceCacheReadPerM: null,
  priceCacheWritePerM: null,
  variablePricing: false,
  tieredFromPromptTokens: null,
  created: null,
  tools: true,
  allowed: true,
};

const catalogModel: CatalogModel = {
  id: 'acme/model',
  name: 'Acme: Model',
  created: null,
  contextLength: 8000,
  pricing: { inputPerM: PRICE_PER_M, outputPerM: 0.1, cacheReadPerM: null, cacheWritePerM: null, variable: false, tieredFromPromptTokens: null },
  tools: true,
  aliasTarget: null,
  searchText: 'acme/model acme: model',
};

function thrownMessage(run: () => void): string {
  try {
    run();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('expected a refusal');
}

/** Every label of the tray menu and its tooltip, with one running job, what was spent today and a balance read AGE_SECONDS ago. */
function trayMenuText(spentTodayUsd: number): string {
  const tray = presentTray({
    now: NOW,
    keySource: 'keychain',
    balance: {
      keySource: 'keychain',
      key: { label: 'k', limitUsd: 10, remainingUsd: 7.5, usageUsd: 2.5, usageDailyUsd: 0, usageWeeklyUsd: 0, usageMonthlyUsd: 0, isFreeTier: false },
      credits: null,
      fetchedAt: new Date(AGE_AT).toISOString(),
    },
    balanceAt: AGE_AT,
    activeJobs: [record],
    unseenFailure: null,
    mode: 'ondemand',
    startAtLogin: false,
    spentTodayUsd,
    dailyBudgetUsd: 5,
    lowBalanceUsd: 0.5,
    platform: 'linux',
  });
  return `${JSON.stringify(tray.menu)}\n${tray.tooltip}`;
}

const settings = SettingsSchema.parse({ jobTimeoutMinutes: LIMIT_MINUTES });

/** The warning core gives beside "saved" for a model id it could check only against a copy of the list AGE_SECONDS old. */
const staleListWarning = (
  await checkChangedSettings(
    settings,
    { ...settings, defaultModel: 'acme/unlisted' },
    {
      catalog: { get: () => Promise.resolve({ models: [], fetchedAt: new Date(AGE_AT).toISOString(), ageSeconds: AGE_SECONDS, stale: true }) },
      executableProblem: () => Promise.resolve(null),
    },
  )
).join(' ');

const modelsReport = renderModelsReport(
  {
    policy: policySummary(settings),
    balance: { keySource: 'keychain', key: null, keyProblem: 'no key', credits: null, fetchedAt: null },
    environment: [],
    catalog: { fetchedAt: null, ageSeconds: null, stale: false },
    totalToolModels: 0,
    matched: 0,
    models: [],
  },
  {},
);

const endedBody = presentJobEnded({ ...record, state: 'succeeded', endedAt: new Date(NOW).toISOString() }, null, NOW)?.body ?? '';

/** Each surface's text, by what it shows. */
const surfaces: Record<string, Partial<Record<keyof typeof READS, string>>> = {
  'bridge tool text': {
    price: renderModelsTable([row]),
    tokens: `${renderModelsTable([row])}\n${renderJobView(view)}`,
    duration: renderJobView(view),
    limit: modelsReport,
    sum: renderJobView(view),
  },
  CLI: {
    price: formatSetting('maxPriceInputPerM', PRICE_PER_M),
    tokens: formatSetting('minContext', TOKENS),
    limit: formatSetting('jobTimeoutMinutes', LIMIT_MINUTES),
    sum: formatSetting('budgets.perJobUsd', SMALL_SUM),
  },
  tray: {
    duration: trayMenuText(0),
    age: trayMenuText(0),
    sum: trayMenuText(SMALL_SUM),
  },
  notification: {
    duration: endedBody,
    sum: endedBody,
  },
  'settings page': {
    price: formatPricePerM(PRICE_PER_M),
    tokens: formatUsage(usage),
    duration: formatDuration(SECONDS),
    limit: formatMinutes(LIMIT_MINUTES),
    age: `${formatAgo(new Date(AGE_AT).toISOString(), NOW)}; catalog ${catalogAge(AGE_SECONDS)}`,
    sum: formatUsd(SMALL_SUM),
  },
  "core's refusals": {
    price: evaluateModel(catalogModel, SettingsSchema.parse({ maxPriceInputPerM: 0.1 })).reason ?? '',
    tokens: evaluateModel({ ...catalogModel, contextLength: TOKENS }, SettingsSchema.parse({ minContext: 20_000 })).reason ?? '',
    limit: thrownMessage(() => resolveTimeout(LIMIT_MINUTES + 1, settings)),
    age: staleListWarning,
    sum: thrownMessage(() =>
      checkBudget({
        // A per-job budget is at least $0.01: the small sum is the day's.
        settings: SettingsSchema.parse({ budgets: { perJobUsd: 5, perDayUsd: SMALL_SUM, reserveUsd: 0 } }),
        spentTodayUsd: 0,
        reservedUsd: 0,
        maxCostUsd: 1,
        remainingUsd: null,
      }),
    ),
  },
};

describe('one formatting family on every surface', () => {
  const cases = Object.entries(surfaces).flatMap(([surface, texts]) =>
    Object.entries(texts).map(([what, text]) => [surface, what as keyof typeof READS, text] as const),
  );

  it.each(cases)('%s prints the %s as the others do', (_surface, what, text) => {
    expect(text).toContain(READS[what]);
  });

  it('covers every figure on at least three surfaces', () => {
    for (const what of Object.keys(READS) as Array<keyof typeof READS>) {
      expect(cases.filter(([, w]) => w === what).length).toBeGreaterThanOrEqual(3);
    }
  });

  it('uses the same words as the renderer helper', () => {
    expect([
      formatPricePerM(PRICE_PER_M),
      formatTokens(TOKENS),
      formatDuration(SECONDS),
      formatMinutes(LIMIT_MINUTES),
      formatAgo(new Date(AGE_AT).toISOString(), NOW),
      formatUsd(SMALL_SUM),
    ]).toEqual(Object.values(READS));
  });
});
