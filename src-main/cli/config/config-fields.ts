/**
 * Every setting as `openrouter-mcp-config` shows and changes it: its path in the settings, the flag that
 * sets it, how its value is read from a flag and how it is shown. One table, so `--show`, `--help`, the
 * list of changes and the error messages always name the same flag for the same setting.
 * Pure: the interactive flow and the flags both use it.
 */
import { formatDuration, formatMinutes, formatPriceCapPerM, formatTokens, formatUsd } from '../../common/format.js';
import { settingHelpLine } from '../../common/setting-help.js';
import {
  DATA_COLLECTION,
  DELEGATE_PROFILES,
  DELEGATION_MODES,
  ISOLATION_MODES,
  PERMISSION_MODES,
  PROGRAM_POLICIES,
  PROVIDER_SORTS,
  SANDBOX_USES,
  SETTING_META,
  settingValue,
  splitSettingPath,
  withSettingPatch,
} from '../../contract/index.js';
import type { SettingPath, SettingUnit, Settings, SettingsPatch } from '../../contract/index.js';

export type ListField =
  'fallbackModels' | 'allowlist' | 'blocklist' | 'approvableTools' | 'provider.only' | 'provider.ignore' | 'sandbox.allowedDomains' | 'sandbox.denyRead';
export type { SettingPath } from '../../contract/index.js';

/** How a flag's text becomes a value; the schema then checks ranges. */
export type ValueKind = 'usd' | 'usdOrNone' | 'whole' | 'wholeOrNone' | 'choice' | 'onOff' | 'modelId' | 'pathOrNone';

export interface ScalarSetting {
  path: SettingPath;
  flag: string;
  /** The placeholder in --help, e.g. USD. */
  valueName: string;
  kind: ValueKind;
  /** From the contract's SETTING_META, like `help`. */
  label: string;
  help: string;
  choices?: readonly string[];
}

export interface ListSetting {
  path: ListField;
  /**
   * What an entry is: a model id or `vendor/*` pattern, a model id alone, a tool rule (`Read`, `Bash(npm test:*)`, `*`), an
   * OpenRouter provider, a domain sandboxed programs may reach, or a path they may not read.
   */
  entry: 'model' | 'modelId' | 'tool' | 'provider' | 'domain' | 'path';
  /** Adds an entry. */
  flag: string;
  /** Removes an entry. */
  removeFlag: string;
  /** Empties the list. */
  clearFlag: string;
  label: string;
  /** The label inside a sentence: "the tools Claude Code may pre-approve". */
  noun: string;
  /** The setting `--show` and `--help` list it just before. */
  shownBefore: SettingPath;
}

import { MODE_EXPLANATIONS } from '../../contract/index.js';

export { MODE_EXPLANATIONS, PERMISSION_EXPLANATIONS } from '../../contract/index.js';

const VALUE_NAMES: Record<SettingUnit, string> = {
  usd: 'USD',
  usdPerMTokens: 'USD',
  tokens: 'TOKENS',
  jobs: 'N',
  retries: 'N',
  models: 'N',
  minutes: 'MINUTES',
  days: 'DAYS',
  commands: 'N',
  rounds: 'N',
  characters: 'N',
};

/** A flag for a number setting: how it is read and its placeholder follow from the unit and whether it may be none. */
function numberFlag(path: SettingPath, flag: string): ScalarSetting {
  const meta = SETTING_META[path];
  if (!meta.unit) throw new Error(`${path} has no unit`);
  const orNone = meta.none !== undefined;
  const money = meta.unit === 'usd' || meta.unit === 'usdPerMTokens';
  const kind: ValueKind = `${money ? 'usd' : 'whole'}${orNone ? 'OrNone' : ''}`;
  return { path, flag, valueName: `${VALUE_NAMES[meta.unit]}${orNone ? '|none' : ''}`, kind, label: meta.label, help: settingHelpLine(path) };
}

/** A flag for any other setting; "|none" is added when the setting may be none. */
function otherFlag(path: SettingPath, flag: string, valueName: string, kind: ValueKind, choices?: readonly string[]): ScalarSetting {
  const meta = SETTING_META[path];
  return {
    path,
    flag,
    valueName: `${valueName}${meta.none !== undefined ? '|none' : ''}`,
    kind,
    label: meta.label,
    help: settingHelpLine(path),
    ...(choices ? { choices } : {}),
  };
}

export const SCALAR_SETTINGS: readonly ScalarSetting[] = [
  otherFlag('mode', '--mode', DELEGATION_MODES.join('|'), 'choice', DELEGATION_MODES),
  otherFlag('defaultModel', '--default-model', 'ID', 'modelId'),
  numberFlag('maxPriceInputPerM', '--max-price-in'),
  numberFlag('maxPriceOutputPerM', '--max-price-out'),
  numberFlag('minContext', '--min-context'),
  numberFlag('budgets.perJobUsd', '--budget-job'),
  numberFlag('budgets.perDayUsd', '--budget-day'),
  numberFlag('budgets.reserveUsd', '--reserve'),
  otherFlag('gateway.allowServerTools', '--allow-server-tools', 'on|off', 'onOff'),
  otherFlag('permissionCeiling', '--max-permission', 'MODE', 'choice', PERMISSION_MODES),
  otherFlag('defaultPermissionMode', '--permission-mode', 'MODE', 'choice', PERMISSION_MODES),
  otherFlag('delegateProfile', '--profile', DELEGATE_PROFILES.join('|'), 'choice', DELEGATE_PROFILES),
  otherFlag('isolation', '--isolation', ISOLATION_MODES.join('|'), 'choice', ISOLATION_MODES),
  otherFlag('sandbox.programs', '--programs', PROGRAM_POLICIES.join('|'), 'choice', PROGRAM_POLICIES),
  otherFlag('sandbox.use', '--sandbox', SANDBOX_USES.join('|'), 'choice', SANDBOX_USES),
  numberFlag('concurrency', '--concurrency'),
  numberFlag('jobTimeoutMinutes', '--timeout'),
  numberFlag('retentionDays', '--retention-days'),
  numberFlag('fanOutLimit', '--fan-out-limit'),
  numberFlag('verifyTimeoutMinutes', '--verify-timeout'),
  numberFlag('verifyConcurrency', '--verify-concurrency'),
  numberFlag('fixRounds', '--fix-rounds'),
  numberFlag('delegateMaxRetries', '--max-retries'),
  numberFlag('inlineAnswerChars', '--inline-answer'),
  numberFlag('modelsCacheTtlMinutes', '--models-cache-ttl'),
  otherFlag('claudePath', '--claude-path', 'PATH', 'pathOrNone'),
  otherFlag('provider.dataCollection', '--data-collection', DATA_COLLECTION.join('|'), 'choice', DATA_COLLECTION),
  otherFlag('provider.zdr', '--zdr', 'on|off', 'onOff'),
  otherFlag('provider.sort', '--provider-sort', PROVIDER_SORTS.join('|'), 'choice', PROVIDER_SORTS),
  otherFlag('provider.allowFallbacks', '--allow-fallbacks', 'on|off', 'onOff'),
];

/** A label inside a sentence: only its first letter lowered, so "Claude Code" keeps its capitals. */
function inSentence(label: string): string {
  return `${label.charAt(0).toLowerCase()}${label.slice(1)}`;
}

export const LIST_SETTINGS: readonly ListSetting[] = (
  [
    // First of the lists before the price caps: shown just after the default model it stands in for.
    {
      path: 'fallbackModels',
      entry: 'modelId',
      flag: '--fallback-model',
      removeFlag: '--unfallback-model',
      clearFlag: '--clear-fallback-models',
      shownBefore: 'maxPriceInputPerM',
    },
    { path: 'allowlist', entry: 'model', flag: '--allow', removeFlag: '--unallow', clearFlag: '--clear-allowlist', shownBefore: 'maxPriceInputPerM' },
    { path: 'blocklist', entry: 'model', flag: '--block', removeFlag: '--unblock', clearFlag: '--clear-blocklist', shownBefore: 'maxPriceInputPerM' },
    {
      path: 'approvableTools',
      entry: 'tool',
      flag: '--approve-tool',
      removeFlag: '--unapprove-tool',
      clearFlag: '--clear-approved-tools',
      shownBefore: 'maxPriceInputPerM',
    },
    {
      path: 'provider.only',
      entry: 'provider',
      flag: '--provider-only',
      removeFlag: '--unprovider-only',
      clearFlag: '--clear-provider-only',
      shownBefore: 'provider.allowFallbacks',
    },
    {
      path: 'provider.ignore',
      entry: 'provider',
      flag: '--provider-ignore',
      removeFlag: '--unprovider-ignore',
      clearFlag: '--clear-provider-ignore',
      shownBefore: 'provider.allowFallbacks',
    },
    // After the two sandbox choices, whose sandbox they shape.
    {
      path: 'sandbox.allowedDomains',
      entry: 'domain',
      flag: '--allow-domain',
      removeFlag: '--unallow-domain',
      clearFlag: '--clear-allowed-domains',
      shownBefore: 'concurrency',
    },
    {
      path: 'sandbox.denyRead',
      entry: 'path',
      flag: '--deny-read',
      removeFlag: '--undeny-read',
      clearFlag: '--clear-deny-read',
      shownBefore: 'concurrency',
      // Its label's "More …" reads wrong inside "not in the …".
      noun: 'paths programs may not read',
    },
  ] satisfies Array<Omit<ListSetting, 'noun' | 'label'> & { noun?: string }>
).map((list) => ({ ...list, label: SETTING_META[list.path].label, noun: list.noun ?? inSentence(SETTING_META[list.path].label) }));

/** Every setting in the order `--show` and `--help` list them: each list just before the setting it names. */
export const SHOWN_SETTINGS: ReadonlyArray<ScalarSetting | ListSetting> = SCALAR_SETTINGS.flatMap((setting) => [
  ...LIST_SETTINGS.filter((list) => list.shownBefore === setting.path),
  setting,
]);

export function isListSetting(setting: ScalarSetting | ListSetting): setting is ListSetting {
  return 'removeFlag' in setting;
}

export const getSetting = settingValue;

/** A list setting's entries. */
export function getList(settings: Settings, path: ListField): string[] {
  return settingValue(settings, path) as string[];
}

/** The patch with one more value; a group's fields (budgets, provider, gateway) are merged one by one. */
export const withSetting = withSettingPatch;

/** What an empty list means, where it means more than nothing. */
export const EMPTY_LISTS: Partial<Record<ListField, string>> = {
  fallbackModels: "(empty: the job's own model only)",
  allowlist: '(empty: every tool-capable model)',
  approvableTools: '(empty: callers may pre-approve nothing)',
  'provider.only': '(empty: any provider)',
  'sandbox.allowedDomains': '(empty: sandboxed programs reach no network)',
  'sandbox.denyRead': "(empty: only the service's folders and the usual secret stores)",
};

/** A setting's value as the user reads it. */
export function formatSetting(path: SettingPath | ListField, value: unknown): string {
  if (Array.isArray(value)) {
    if (value.length > 0) return value.join(', ');
    return EMPTY_LISTS[path as ListField] ?? '(empty)';
  }
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (value === null) {
    const none = SETTING_META[path].none;
    return none === undefined ? 'none' : `none (${none})`;
  }
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
      return formatMinutes(value as number);
    case 'retentionDays':
      return formatDuration((value as number) * 86_400);
    case 'mode':
      return `${String(value)} (${MODE_EXPLANATIONS[value as Settings['mode']].replace(/\.$/, '')})`;
    default:
      return String(value);
  }
}

/** The lines of `--show` for the settings, each with the flag that changes it (unless `flags` is false). */
export function describeSettings(settings: Settings, flags = true): string[] {
  const rows = SHOWN_SETTINGS.map((setting): [string, string, string] => [
    setting.label,
    formatSetting(setting.path, getSetting(settings, setting.path)),
    isListSetting(setting) ? `${setting.flag}/${setting.removeFlag}` : setting.flag,
  ]);
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const valueWidth = Math.min(60, Math.max(...rows.map(([, value]) => value.length)));
  return rows.map(([label, value, flag]) => `${`${label}:`.padEnd(labelWidth + 2)}${flags ? `${value.padEnd(valueWidth)}  ${flag}` : value}`.trimEnd());
}

/**
 * The saved verify commands' change in one line, by repository: "Saved verify commands: forgotten for /home/me/app".
 * No flag sets them (`openrouter-delegate verify` does); the menu's Isolation entry forgets them.
 */
function savedVerifyChange(before: Settings, after: Settings): string | null {
  if (JSON.stringify(before.verifyCommands) === JSON.stringify(after.verifyCommands)) return null;
  const was = new Map(before.verifyCommands.map((saved) => [saved.repo, JSON.stringify(saved.commands)]));
  const now = new Map(after.verifyCommands.map((saved) => [saved.repo, JSON.stringify(saved.commands)]));
  const forgotten = [...was.keys()].filter((repo) => !now.has(repo));
  const changed = [...now].filter(([repo, commands]) => was.get(repo) !== commands).map(([repo]) => repo);
  const parts = [
    ...(forgotten.length > 0 ? [`forgotten for ${forgotten.join(', ')}`] : []),
    ...(changed.length > 0 ? [`saved for ${changed.join(', ')}`] : []),
  ];
  return `${SETTING_META.verifyCommands.label}: ${parts.length > 0 ? parts.join('; ') : 'reordered'}`;
}

/** What differs between two settings, one line per setting: "Mode: ondemand → auto (--mode)". */
export function describeChanges(before: Settings, after: Settings): string[] {
  const lines: string[] = [];
  for (const list of LIST_SETTINGS) {
    const was = getList(before, list.path);
    const now = getList(after, list.path);
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
  const savedVerify = savedVerifyChange(before, after);
  return savedVerify === null ? lines : [...lines, savedVerify];
}

function settingForIssuePath(issuePath: readonly PropertyKey[]): ScalarSetting | ListSetting | undefined {
  const [first, second] = issuePath.map(String);
  const grouped = splitSettingPath(`${first}.${second}`);
  const path = grouped.group === null ? first : `${grouped.group}.${grouped.key}`;
  return SHOWN_SETTINGS.find((s) => s.path === path);
}

/** The flag for a settings path as zod reports it (["budgets", "perDayUsd"], ["allowlist", 2], ["provider", "only", 0]). */
export function flagForIssuePath(issuePath: readonly PropertyKey[]): string | undefined {
  return settingForIssuePath(issuePath)?.flag;
}

export function labelForIssuePath(issuePath: readonly PropertyKey[]): string | undefined {
  return settingForIssuePath(issuePath)?.label;
}

/** A copy of the settings with one value replaced (not validated: the draft of the interactive flow). */
export function withSettingValue(settings: Settings, path: SettingPath, value: unknown): Settings {
  const { group, key } = splitSettingPath(path);
  return (group === null ? { ...settings, [key]: value } : { ...settings, [group]: { ...settings[group], [key]: value } }) as Settings;
}

/** The patch that turns `before` into `after`: only the settings that differ. */
export function patchBetween(before: Settings, after: Settings): SettingsPatch {
  let patch: SettingsPatch = {};
  for (const list of LIST_SETTINGS) {
    if (JSON.stringify(getList(before, list.path)) !== JSON.stringify(getList(after, list.path)))
      patch = withSetting(patch, list.path, getList(after, list.path));
  }
  for (const setting of SCALAR_SETTINGS) {
    const now = getSetting(after, setting.path);
    if (getSetting(before, setting.path) !== now) patch = withSetting(patch, setting.path, now);
  }
  // The whole array: a patch's array replaces the one saved (contract: SettingsPatch).
  if (savedVerifyChange(before, after) !== null) patch = { ...patch, verifyCommands: after.verifyCommands };
  return patch;
}
