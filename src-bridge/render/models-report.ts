/**
 * The text a model reads from `openrouter_models`: policy, balance, catalog freshness, the
 * model table and how many more exist, then the delegate environment. Pure.
 */
import type { Balance, EnvEntry, ModelsReport, PolicySummary } from '../../src-main/contract/index.js';
import { formatPriceCapPerM, formatTokens, formatUsd } from '../../src-main/common/format.js';
import { renderModelsTable } from './models-table.js';

function list(items: string[]): string {
  return items.length === 0 ? 'none' : items.join(', ');
}

function renderPolicy(p: PolicySummary): string[] {
  const caps = [
    p.maxPriceInputPerM === null ? null : `input ≤ ${formatPriceCapPerM(p.maxPriceInputPerM)}`,
    p.maxPriceOutputPerM === null ? null : `output ≤ ${formatPriceCapPerM(p.maxPriceOutputPerM)}`,
    p.minContext === null ? null : `context ≥ ${formatTokens(p.minContext)}`,
  ].filter((x): x is string => x !== null);
  return [
    `Policy: mode ${p.mode}; default model ${p.defaultModel}`,
    `  allowlist: ${p.allowlist.length === 0 ? 'all tool-capable models' : list(p.allowlist)}; blocklist: ${list(p.blocklist)}`,
    `  price caps: ${caps.length === 0 ? 'none' : caps.join(', ')}`,
    `  permissions: default ${p.defaultPermissionMode}, ceiling ${p.permissionCeiling}`,
    `  delegate profile: ${p.delegateProfile}, the default and the most a delegation may ask for (minimal < lean < full)`,
    `  allowed_tools a caller may pass: ${p.approvableTools.length === 0 ? 'none' : p.approvableTools.join(', ')}`,
    `  budgets: ${formatUsd(p.budgets.perJobUsd)} per job, ${formatUsd(p.budgets.perDayUsd)} per day, keep ${formatUsd(p.budgets.reserveUsd)} in reserve; ${p.concurrency} at a time, ${p.jobTimeoutMinutes} min timeout`,
  ];
}

function renderBalance(b: Balance): string[] {
  const lines: string[] = [];
  if (b.key) {
    const k = b.key;
    const remaining = k.remainingUsd === null ? 'no limit set' : `${formatUsd(k.remainingUsd)} remaining of ${formatUsd(k.limitUsd ?? 0)}`;
    const usage = [
      k.usageDailyUsd === null ? null : `today ${formatUsd(k.usageDailyUsd)}`,
      k.usageWeeklyUsd === null ? null : `this week ${formatUsd(k.usageWeeklyUsd)}`,
      k.usageMonthlyUsd === null ? null : `this month ${formatUsd(k.usageMonthlyUsd)}`,
    ].filter((x): x is string => x !== null);
    const source = b.keySource === 'environment' ? 'OPENROUTER_API_KEY' : 'OS keychain';
    lines.push(`Balance (key from ${source}): ${remaining}${usage.length ? `; used ${usage.join(', ')}` : ''}`);
  } else {
    lines.push(`Balance: unknown: ${b.keyProblem ?? 'no key'}`);
  }
  if (b.credits)
    lines.push(`Account credits: ${formatUsd(b.credits.remainingUsd)} left (${formatUsd(b.credits.usedUsd)} used of ${formatUsd(b.credits.totalUsd)})`);
  else if (b.creditsNote) lines.push(`Account credits: ${b.creditsNote}`);
  return lines;
}

function renderEnvironment(env: EnvEntry[]): string[] {
  return [
    'Environment of a delegated session (inherited variables are only these; secrets hidden):',
    ...env.map((e) => `  ${e.name}=${e.value.replaceAll('\n', '\\n')}`),
  ];
}

export function renderModelsReport(report: ModelsReport, query: { filter?: string | undefined }): string {
  const shown = report.models.length;
  const scope = query.filter
    ? `${report.matched} of ${report.totalToolModels} tool-capable models match "${query.filter}"`
    : `${report.totalToolModels} tool-capable models`;
  const more = report.matched - shown;
  const lines = [
    ...renderPolicy(report.policy),
    ...renderBalance(report.balance),
    '',
    `${scope}; showing ${shown}${more > 0 ? ` (${more} more: narrow with \`filter\` or raise \`limit\`)` : ''}.`,
  ];
  if (report.catalog.warning) lines.push(`Note: ${report.catalog.warning}`);
  lines.push('', renderModelsTable(report.models), '', ...renderEnvironment(report.environment));
  return lines.join('\n');
}
