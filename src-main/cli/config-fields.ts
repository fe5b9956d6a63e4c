/**
 * Every setting as `openrouter-mcp-config` shows and changes it: its path in the settings, the flag that
 * sets it, how its value is read from a flag and how it is shown. One table, so `--show`, `--help`, the
 * list of changes and the error messages always name the same flag for the same setting.
 * Pure: the interactive flow and the flags both use it.
 */
import { formatPriceCapPerM, formatTokens, formatUsd } from '../common/format.js';
import { DELEGATION_MODES, PERMISSION_MODES } from '../contract/index.js';
import type { Settings, SettingsPatch } from '../contract/index.js';

type BudgetKey = keyof Settings['budgets'];
export type ListField = 'allowlist' | 'blocklist' | 'approvableTools';
export type SettingPath = Exclude<keyof Settings, 'budgets'> | `budgets.${BudgetKey}`;

/** How a flag's text becomes a value; the schema then checks ranges. */
export type ValueKind = 'usd' | 'usdOrNone' | 'whole' | 'wholeOrNone' | 'choice' | 'modelId' | 'pathOrNone';

export interface ScalarSetting {
  path: SettingPath;
  flag: string;
  /** The placeholder in --help, e.g. USD. */
  valueName: string;
  kind: ValueKind;
  label: string;
  help: string;
  choices?: readonly string[];
}

export interface ListSetting {
  path: ListField;
  /** What an entry is: a model id or `vendor/*` pattern, or a tool rule (`Read`, `Bash(npm test:*)`, `*`). */
  entry: 'model' | 'tool';
  /** Adds an entry. */
  flag: string;
  /** Removes an entry. */
  removeFlag: string;
  /** Empties the list. */
  clearFlag: string;
  label: string;
}

export const MODE_EXPLANATIONS: Record<Settings['mode'], string> = {
  off: 'no delegation: only the model list is offered to Claude Code',
  ondemand: 'Claude Code delegates only when you ask it to',
  auto: 'Claude Code may delegate on its own when a cheap model can do the work',
};

export { PERMISSION_EXPLANATIONS } from '../contract/index.js';

export const SCALAR_SETTINGS: readonly ScalarSetting[] = [
  { path: 'mode', flag: '--mode', valueName: DELEGATION_MODES.join('|'), kind: 'choice', choices: DELEGATION_MODES, label: 'Mode', help: 'whether Claude Code may delegate: off, only when you ask, or on its own' },
  { path: 'defaultModel', flag: '--default-model', valueName: 'ID', kind: 'modelId', label: 'Default model', help: 'model used when a delegation names none (must pass the allow- and blocklist)' },
  { path: 'maxPriceInputPerM', flag: '--max-price-in', valueName: 'USD|none', kind: 'usdOrNone', label: 'Max input price', help: 'refuse models whose input costs more than this, in $ per million tokens' },
  { path: 'maxPriceOutputPerM', flag: '--max-price-out', valueName: 'USD|none', kind: 'usdOrNone', label: 'Max output price', help: 'the same for output tokens' },
  { path: 'minContext', flag: '--min-context', valueName: 'TOKENS|none', kind: 'wholeOrNone', label: 'Min context', help: 'refuse models with a smaller context window' },
  { path: 'budgets.perJobUsd', flag: '--budget-job', valueName: 'USD', kind: 'usd', label: 'Budget per job', help: "one job's spending cap (its max_cost_usd default and ceiling)" },
  { path: 'budgets.perDayUsd', flag: '--budget-day', valueName: 'USD', kind: 'usd', label: 'Budget per day', help: 'spending across all jobs in one day' },
  { path: 'budgets.reserveUsd', flag: '--reserve', valueName: 'USD', kind: 'usd', label: 'Reserve', help: "no job starts when the key's remaining balance is below this" },
  { path: 'permissionCeiling', flag: '--max-permission', valueName: 'MODE', kind: 'choice', choices: PERMISSION_MODES, label: 'Permission ceiling', help: 'the most a delegated session may be given' },
  { path: 'defaultPermissionMode', flag: '--permission-mode', valueName: 'MODE', kind: 'choice', choices: PERMISSION_MODES, label: 'Default permission mode', help: 'what a delegated session gets when the call names none (at most the ceiling)' },
  { path: 'concurrency', flag: '--concurrency', valueName: 'N', kind: 'whole', label: 'Concurrency', help: 'jobs at once (1-32); more wait in a queue' },
  { path: 'jobTimeoutMinutes', flag: '--timeout', valueName: 'MINUTES', kind: 'whole', label: 'Job timeout', help: 'the longest a job may run, in minutes' },
  { path: 'retentionDays', flag: '--retention-days', valueName: 'DAYS', kind: 'whole', label: 'Job history kept', help: 'how long finished jobs are kept' },
  { path: 'delegateMaxRetries', flag: '--max-retries', valueName: 'N', kind: 'whole', label: 'Delegate retries', help: 'how often a delegate retries a failed OpenRouter request (0-10)' },
  { path: 'modelsCacheTtlMinutes', flag: '--models-cache-ttl', valueName: 'MINUTES', kind: 'whole', label: 'Model list cache', help: 'how long the model list is served from cache' },
  { path: 'claudePath', flag: '--claude-path', valueName: 'PATH|none', kind: 'pathOrNone', label: 'claude executable', help: 'the claude CLI delegates run (none: OPENROUTER_DELEGATE_CLAUDE, then PATH)' },
];

export const LIST_SETTINGS: readonly ListSetting[] = [
  { path: 'allowlist', entry: 'model', flag: '--allow', removeFlag: '--unallow', clearFlag: '--clear-allowlist', label: 'Allowlist' },
  { path: 'blocklist', entry: 'model', flag: '--block', removeFlag: '--unblock', clearFlag: '--clear-blocklist', label: 'Blocklist' },
  {
    path: 'approvableTools',
    entry: 'tool',
    flag: '--approve-tool',
    removeFlag: '--unapprove-tool',
    clearFlag: '--clear-approved-tools',
    label: 'Tools callers may pre-approve',
  },
];

export function getSetting(settings: Settings, path: SettingPath): unknown {
  if (path.startsWith('budgets.')) return settings.budgets[path.slice('budgets.'.length) as BudgetKey];
  return settings[path as Exclude<keyof Settings, 'budgets'>];
}

/** The patch with one more value; budgets are merged figure by figure. */
export function withSetting(patch: SettingsPatch, path: SettingPath, value: unknown): SettingsPatch {
  if (path.startsWith('budgets.')) return { ...patch, budgets: { ...patch.budgets, [path.slice('budgets.'.length)]: value } };
  return { ...patch, [path]: value };
}

/** A setting's value as the user reads it. */
export function formatSetting(path: SettingPath | ListField, value: unknown): string {
  if (Array.isArray(value)) {
    if (value.length > 0) return value.join(', ');
    return path === 'allowlist' ? '(empty: every tool-capable model)' : path === 'approvableTools' ? '(empty: callers may pre-approve nothing)' : '(empty)';
  }
  if (value === null) return path === 'claudePath' ? 'none (OPENROUTER_DELEGATE_CLAUDE, then PATH)' : 'none';
  switch (path) {
    case 'maxPriceInputPerM':
    case 'maxPriceOutputPerM':
      return formatPriceCapPerM(value as number);
    case 'budgets.perJobUsd':
    case 'budgets.perDayUsd':
    case 'budgets.reserveUsd':
      return formatUsd(value as number);
    case 'minContext':
      return `${formatTokens(value as number)} tokens`;
    case 'jobTimeoutMinutes':
    case 'modelsCacheTtlMinutes':
      return `${String(value)} min`;
    case 'retentionDays':
      return `${String(value)} days`;
    case 'mode':
      return `${String(value)} (${MODE_EXPLANATIONS[value as Settings['mode']]})`;
    default:
      return String(value);
  }
}

/** The lines of `--show` for the settings, each with the flag that changes it (unless `flags` is false). */
export function describeSettings(settings: Settings, flags = true): string[] {
  const rows: Array<[string, string, string]> = [];
  for (const setting of SCALAR_SETTINGS) {
    if (setting.path === 'maxPriceInputPerM') {
      for (const list of LIST_SETTINGS) rows.push([list.label, formatSetting(list.path, settings[list.path]), `${list.flag}/${list.removeFlag}`]);
    }
    rows.push([setting.label, formatSetting(setting.path, getSetting(settings, setting.path)), setting.flag]);
  }
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const valueWidth = Math.min(60, Math.max(...rows.map(([, value]) => value.length)));
  return rows.map(([label, value, flag]) => `${`${label}:`.padEnd(labelWidth + 2)}${flags ? `${value.padEnd(valueWidth)}  ${flag}` : value}`.trimEnd());
}

/** What differs between two settings, one line per setting: "Mode: ondemand → auto (--mode)". */
export function describeChanges(before: Settings, after: Settings): string[] {
  const lines: string[] = [];
  for (const list of LIST_SETTINGS) {
    const was = before[list.path];
    const now = after[list.path];
    if (JSON.stringify(was) === JSON.stringify(now)) continue;
    lines.push(`${list.label}: ${formatSetting(list.path, was)} → ${formatSetting(list.path, now)}`);
  }
  for (const setting of SCALAR_SETTINGS) {
    const was = getSetting(before, setting.path);
    const now = getSetting(after, setting.path);
    if (was === now) continue;
    const plain = (value: unknown) => (setting.path === 'mode' ? String(value) : formatSetting(setting.path, value));
    lines.push(`${setting.label}: ${plain(was)} → ${plain(now)}`);
  }
  return lines;
}

function settingForIssuePath(issuePath: readonly PropertyKey[]): ScalarSetting | ListSetting | undefined {
  const [first, second] = issuePath;
  const list = LIST_SETTINGS.find((l) => l.path === first);
  if (list) return list;
  const joined = first === 'budgets' && typeof second === 'string' ? `budgets.${second}` : String(first);
  return SCALAR_SETTINGS.find((s) => s.path === joined);
}

/** The flag for a settings path as zod reports it (["budgets", "perDayUsd"], ["allowlist", 2]). */
export function flagForIssuePath(issuePath: readonly PropertyKey[]): string | undefined {
  return settingForIssuePath(issuePath)?.flag;
}

export function labelForIssuePath(issuePath: readonly PropertyKey[]): string | undefined {
  return settingForIssuePath(issuePath)?.label;
}

/** A copy of the settings with one value replaced (not validated: the draft of the interactive flow). */
export function withSettingValue(settings: Settings, path: SettingPath | ListField, value: unknown): Settings {
  if (path.startsWith('budgets.')) return { ...settings, budgets: { ...settings.budgets, [path.slice('budgets.'.length)]: value } };
  return { ...settings, [path]: value } as Settings;
}

/** The patch that turns `before` into `after`: only the settings that differ. */
export function patchBetween(before: Settings, after: Settings): SettingsPatch {
  let patch: SettingsPatch = {};
  for (const list of LIST_SETTINGS) {
    if (JSON.stringify(before[list.path]) !== JSON.stringify(after[list.path])) patch = { ...patch, [list.path]: after[list.path] };
  }
  for (const setting of SCALAR_SETTINGS) {
    const now = getSetting(after, setting.path);
    if (getSetting(before, setting.path) !== now) patch = withSetting(patch, setting.path, now);
  }
  return patch;
}
