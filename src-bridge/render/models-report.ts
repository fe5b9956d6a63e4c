/**
 * The text a model reads from `openrouter_models`: policy, balance, catalog freshness, the
 * model table and how many more exist, then the delegate environment. Pure.
 */
import type { Balance, EnvEntry, ModelsReport, PolicySummary } from '../../src-main/contract/index.js';
import { formatMinutes, formatPriceCapPerM, formatTokens, formatUsd } from '../../src-main/common/format.js';
import { MAX_ANSWER_CHARS, largestFitting } from './answer-size.js';
import { renderModelsTable } from './models-table.js';
import type { HereScores } from './models-table.js';

function list(items: string[]): string {
  return items.length === 0 ? 'none' : items.join(', ');
}

/** OpenRouter's provider routing in one line, only what departs from its defaults; null when nothing does. */
function renderProviderPolicy(p: PolicySummary['provider']): string | null {
  const parts = [
    p.dataCollection === 'deny' ? 'no data collection' : null,
    p.zdr ? 'ZDR only' : null,
    p.only.length > 0 ? `only: ${list(p.only)}` : null,
    p.ignore.length > 0 ? `skipping: ${list(p.ignore)}` : null,
    p.sort === 'none' ? null : `sorted by ${p.sort}`,
    p.allowFallbacks ? null : 'no fallbacks',
  ].filter((x): x is string => x !== null);
  return parts.length > 0 ? `  providers: ${parts.join(' · ')}` : null;
}

/** The models OpenRouter may fall back to, in order, under the default model; null when there are none. */
function renderFallbacks(p: PolicySummary): string | null {
  return p.fallbackModels.length > 0 ? `  fallbacks: ${p.fallbackModels.join(', ')}` : null;
}

/** The policy in two lines (one more each for fallback models and a provider policy): only what restricts the caller (no empty lists, no caps that are not set). */
function renderPolicyBrief(p: PolicySummary): string[] {
  const limits = [
    p.allowlist.length > 0 ? `allowlist ${list(p.allowlist)}` : null,
    p.blocklist.length > 0 ? `blocklist ${list(p.blocklist)}` : null,
    p.maxPriceInputPerM === null ? null : `input ≤ ${formatPriceCapPerM(p.maxPriceInputPerM)}`,
    p.maxPriceOutputPerM === null ? null : `output ≤ ${formatPriceCapPerM(p.maxPriceOutputPerM)}`,
    p.minContext === null ? null : `context ≥ ${formatTokens(p.minContext)}`,
  ].filter((x): x is string => x !== null);
  return [
    `Policy: mode ${p.mode}; default model ${p.defaultModel}${limits.length ? `; ${limits.join('; ')}` : ''}`,
    ...optional(renderFallbacks(p)),
    `  permissions ${p.defaultPermissionMode} (ceiling ${p.permissionCeiling}); profile ${p.delegateProfile} (at most); allowed_tools a caller may pass: ${p.approvableTools.length === 0 ? 'none' : p.approvableTools.join(', ')}; budgets ${formatUsd(p.budgets.perJobUsd)}/job, ${formatUsd(p.budgets.perDayUsd)}/day`,
    // The default (a worktree per delegation) goes unsaid; in place is worth knowing before delegating.
    ...optional(p.isolation === 'none' ? '  isolation none: delegates edit cwd in place unless a delegation asks for isolation "worktree"' : null),
    ...optional(renderProviderPolicy(p.provider)),
  ];
}

function optional(line: string | null): string[] {
  return line === null ? [] : [line];
}

function renderPolicy(p: PolicySummary): string[] {
  const caps = [
    p.maxPriceInputPerM === null ? null : `input ≤ ${formatPriceCapPerM(p.maxPriceInputPerM)}`,
    p.maxPriceOutputPerM === null ? null : `output ≤ ${formatPriceCapPerM(p.maxPriceOutputPerM)}`,
    p.minContext === null ? null : `context ≥ ${formatTokens(p.minContext)}`,
  ].filter((x): x is string => x !== null);
  return [
    `Policy: mode ${p.mode}; default model ${p.defaultModel}`,
    ...optional(renderFallbacks(p)),
    `  allowlist: ${p.allowlist.length === 0 ? 'all tool-capable models' : list(p.allowlist)}; blocklist: ${list(p.blocklist)}`,
    `  price caps: ${caps.length === 0 ? 'none' : caps.join(', ')}`,
    `  permissions: default ${p.defaultPermissionMode}, ceiling ${p.permissionCeiling}`,
    `  delegate profile: ${p.delegateProfile}, the default and the most a delegation may ask for (minimal < lean < full)`,
    `  isolation: ${p.isolation === 'worktree' ? 'worktree (in a git repository each delegation works on a branch in a worktree of its own; elsewhere in place)' : 'none (delegates edit cwd in place unless a delegation asks for "worktree")'}`,
    `  allowed_tools a caller may pass: ${p.approvableTools.length === 0 ? 'none' : p.approvableTools.join(', ')}`,
    `  budgets: ${formatUsd(p.budgets.perJobUsd)} per job, ${formatUsd(p.budgets.perDayUsd)} per day, keep ${formatUsd(p.budgets.reserveUsd)} in reserve; ${p.concurrency} at a time, ${formatMinutes(p.jobTimeoutMinutes)} timeout`,
    ...optional(renderProviderPolicy(p.provider)),
  ];
}

function renderBalance(b: Balance, detail: boolean): string[] {
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
  // Without a management key the note only says why there is no figure: worth a line when asked for detail.
  else if (b.creditsNote && detail) lines.push(`Account credits: ${b.creditsNote}`);
  return lines;
}

function renderEnvironment(env: EnvEntry[]): string[] {
  return [
    'Environment of a delegated session (inherited variables are only these; secrets hidden):',
    ...env.map((e) => `  ${e.name}=${e.value.replaceAll('\n', '\\n')}`),
  ];
}

/**
 * `detail` adds the full policy, the account-credits note and the environment of a delegated session. A big `limit`
 * shows the models that fit the cap (answer-size.ts), cheapest (or first in the asked order) first, and says so.
 */
export function renderModelsReport(report: ModelsReport, query: { filter?: string | undefined }, detail = true, scores: HereScores = new Map()): string {
  const whole = renderReport(report, query, detail, 0, scores);
  if (whole.length <= MAX_ANSWER_CHARS) return whole;
  const rows = largestFitting(
    report.models.length,
    (n) => renderReport({ ...report, models: report.models.slice(0, n) }, query, detail, 1, scores).length <= MAX_ANSWER_CHARS,
  );
  return renderReport({ ...report, models: report.models.slice(0, rows) }, query, detail, report.models.length - rows, scores);
}

function renderReport(report: ModelsReport, query: { filter?: string | undefined }, detail: boolean, leftOut: number, scores: HereScores): string {
  const shown = report.models.length;
  const scope = query.filter
    ? `${report.matched} of ${report.totalToolModels} tool-capable models match "${query.filter}"`
    : `${report.totalToolModels} tool-capable models`;
  const more = report.matched - shown;
  const lines = [
    ...(detail ? renderPolicy(report.policy) : renderPolicyBrief(report.policy)),
    ...renderBalance(report.balance, detail),
    '',
    `${scope}; showing ${shown}${more > 0 ? ` (${more} more: narrow with \`filter\`${leftOut > 0 ? '' : ' or raise `limit`'})` : ''}.`,
  ];
  if (report.catalog.warning) lines.push(`Note: ${report.catalog.warning}`);
  lines.push('', renderModelsTable(report.models, scores));
  if (leftOut > 0) lines.push(`(The ${leftOut} after these left out to stay short.)`);
  if (detail) lines.push('', ...renderEnvironment(report.environment));
  else lines.push('', 'detail: true adds the environment a delegated session receives.');
  return lines.join('\n');
}
