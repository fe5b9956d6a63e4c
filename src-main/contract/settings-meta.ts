/**
 * What a person reads about each setting (docs/ARCHITECTURE.md §5): its label, help, unit, bounds and default, the
 * same on every surface; and settings named by one path (`budgets.perJobUsd`), as the CLI and the settings page use them.
 */
import { MAX_FALLBACK_MODELS, defaultSettings } from './settings-schema.js';
import type { Settings, SettingsPatch } from './settings-schema.js';
import { SETTING_BOUNDS } from './settings-policy.js';
import type { SettingBounds } from './settings-policy.js';

/** The settings that are objects of their own; each field inside one is a setting. */
export const SETTING_GROUPS = ['budgets', 'provider', 'gateway', 'sandbox'] as const;
type SettingGroup = (typeof SETTING_GROUPS)[number];
/** A setting as one name: a top-level field, or `budgets.perJobUsd` / `provider.zdr` for a field inside a group. */
export type SettingPath =
  | Exclude<keyof Settings, SettingGroup>
  | `budgets.${keyof Settings['budgets']}`
  | `provider.${keyof Settings['provider']}`
  | `gateway.${keyof Settings['gateway']}`
  | `sandbox.${keyof Settings['sandbox']}`;

/** `provider.zdr` → group `provider`, key `zdr`; a top-level setting has no group. */
export function splitSettingPath(path: string): { group: SettingGroup; key: string } | { group: null; key: string } {
  const dot = path.indexOf('.');
  const group = path.slice(0, dot);
  return dot > 0 && (SETTING_GROUPS as readonly string[]).includes(group)
    ? { group: group as SettingGroup, key: path.slice(dot + 1) }
    : { group: null, key: path };
}

/** A setting's value by its path. */
export function settingValue(settings: Settings, path: SettingPath): unknown {
  const { group, key } = splitSettingPath(path);
  return group === null ? settings[key as keyof Settings] : (settings[group] as Record<string, unknown>)[key];
}

/** The patch with one more value; a group's fields are merged one by one. */
export function withSettingPatch(patch: SettingsPatch, path: SettingPath, value: unknown): SettingsPatch {
  const { group, key } = splitSettingPath(path);
  return group === null ? { ...patch, [key]: value } : { ...patch, [group]: { ...patch[group], [key]: value } };
}

/** What a number counts; each surface words it its own way (a "$" prefix, MINUTES, "in minutes"). */
export type SettingUnit = 'usd' | 'usdPerMTokens' | 'tokens' | 'jobs' | 'minutes' | 'days' | 'retries' | 'models' | 'commands' | 'rounds' | 'characters';

/**
 * What a person reads about one setting, the same on every surface (CLI and settings page).
 * `help` starts lower-case and has no final stop: a surface capitalises and punctuates it, and adds the
 * bounds and what "none" means in its own way.
 */
export interface SettingMeta {
  label: string;
  help: string;
  unit?: SettingUnit;
  /** The schema's bounds (SETTING_BOUNDS), for numbers. */
  bounds?: SettingBounds;
  /** What null means, for a setting that may be null ("no cap"). */
  none?: string;
  /** The schema's default. */
  default: unknown;
}

const SETTING_TEXTS: Record<SettingPath, Omit<SettingMeta, 'default'>> = {
  mode: { label: 'Mode', help: 'whether Claude Code may delegate: off, only when you ask, or on its own' },
  defaultModel: {
    label: 'Default model',
    help: 'model used when a delegation names none (must pass the allow- and blocklist); "best": picked per repository by its verify record',
  },
  fallbackModels: {
    label: 'Fallback models',
    help: `models OpenRouter tries in order when a job's own model fails (rate limits, downtime, refusals); each must pass the same policy, or it is skipped; at most ${MAX_FALLBACK_MODELS}`,
  },
  allowlist: { label: 'Allowlist', help: "only these models (ids, or vendor/* for all of a vendor's)" },
  blocklist: { label: 'Blocklist', help: 'never these models, even when the allowlist matches' },
  maxPriceInputPerM: {
    label: 'Max input price',
    help: 'refuse models whose input costs more than this',
    unit: 'usdPerMTokens',
    bounds: SETTING_BOUNDS.usd,
    none: 'no cap',
  },
  maxPriceOutputPerM: { label: 'Max output price', help: 'the same for output tokens', unit: 'usdPerMTokens', bounds: SETTING_BOUNDS.usd, none: 'no cap' },
  minContext: { label: 'Minimum context', help: 'refuse models with a smaller context window', unit: 'tokens', bounds: SETTING_BOUNDS.minContext, none: 'any' },
  permissionCeiling: { label: 'Permission ceiling', help: 'the most a delegated session may be given' },
  approvableTools: {
    label: 'Tools Claude Code may pre-approve',
    help:
      'a delegation may name tools its delegate then uses without asking (allowed_tools); only these are accepted. ' +
      'A bare name also covers its narrower rules: Bash covers Bash(npm test:*). Anything that runs programs (Bash) can do whatever you can',
  },
  defaultPermissionMode: { label: 'Default permission mode', help: 'what a delegated session gets when the call names none (at most the ceiling)' },
  delegateProfile: {
    label: 'Delegate profile',
    help: 'the tools a delegate gets when the call names no profile, and the most a call may ask for (minimal < lean < full)',
  },
  isolation: {
    label: 'Isolation',
    help: 'worktree: a delegation in a git repository works in a worktree of its own, on a branch you review and merge; none: delegates edit your folder in place',
  },
  'budgets.perJobUsd': {
    label: 'Budget per job',
    help: "one job's spending cap (its default and its ceiling), at least $0.01",
    unit: 'usd',
    bounds: SETTING_BOUNDS.jobUsd,
  },
  'budgets.perDayUsd': { label: 'Budget per day', help: 'spending across all jobs in one day', unit: 'usd', bounds: SETTING_BOUNDS.usd },
  'budgets.reserveUsd': { label: 'Reserve', help: "no job starts when the key's remaining balance is below this", unit: 'usd', bounds: SETTING_BOUNDS.usd },
  'gateway.allowServerTools': {
    label: 'Server tools and URL sources',
    help:
      'let delegates use tools that OpenRouter or the provider runs and bills per use (web search: $4 per 1,000 results on OpenRouter, ' +
      '$0.02 a search at its default of 5; $10 per 1,000 searches at Anthropic) and documents or images given by URL, fetched and parsed ' +
      'upstream. No cap sees these fees; off: such requests are refused',
  },
  'sandbox.programs': {
    label: 'Programs',
    help: 'how a delegate may run programs (Bash): sandboxed, without asking, inside the sandbox; ask-approval, only when the delegation pre-approves Bash; off, never',
  },
  'sandbox.use': {
    label: 'Sandbox',
    help: 'required: a delegate that could run programs runs them in the sandbox, and without one the delegation is refused; preferred: unsandboxed when there is none, and the job says so; off: never sandboxed',
  },
  'sandbox.allowedDomains': {
    label: 'Domains programs may reach',
    help: 'sandboxed programs reach no network but these (e.g. registry.npmjs.org for an install); never loopback, so never the gateway or the service',
  },
  'sandbox.denyRead': {
    label: 'More paths programs may not read',
    help: "beside the service's folders and the usual secret stores (~/.ssh, ~/.aws, browser profiles, the keyring …): absolute paths or ~/…",
  },
  concurrency: { label: 'Concurrency', help: 'jobs at once; more wait in a queue', unit: 'jobs', bounds: SETTING_BOUNDS.concurrency },
  jobTimeoutMinutes: { label: 'Job timeout', help: 'the longest a job may run', unit: 'minutes', bounds: SETTING_BOUNDS.jobTimeoutMinutes },
  retentionDays: {
    label: 'Job history kept',
    help: 'how long finished jobs are kept (a conversation goes whole, after its last turn)',
    unit: 'days',
    bounds: SETTING_BOUNDS.retentionDays,
  },
  inlineAnswerChars: {
    label: 'Answers shown at once',
    help: 'the longest answer a status or a wait shows itself, with no delegate_result call (0: always by delegate_result)',
    unit: 'characters',
    bounds: SETTING_BOUNDS.inlineAnswerChars,
  },
  fanOutLimit: {
    label: 'Fan-out limit',
    help: 'the most models one delegation may run side by side, one job and branch each',
    unit: 'models',
    bounds: SETTING_BOUNDS.fanOutLimit,
  },
  verifyTimeoutMinutes: {
    label: 'Verify command timeout',
    help: "the longest one verify command may run on a delegate's branch",
    unit: 'minutes',
    bounds: SETTING_BOUNDS.verifyTimeoutMinutes,
  },
  verifyConcurrency: {
    label: 'Verify commands at once',
    help: 'jobs whose verify commands run at once in one repository, each in a box of its own',
    unit: 'commands',
    bounds: SETTING_BOUNDS.verifyConcurrency,
    none: "half the machine's cores",
  },
  fixRounds: {
    label: 'Fix rounds',
    help: 'how often a delegate whose verify commands fail is continued with the failure',
    unit: 'rounds',
    bounds: SETTING_BOUNDS.fixRounds,
  },
  verifyCommands: {
    label: 'Saved verify commands',
    help: 'per repository, the commands run on a delegation there that names none; saved exactly as confirmed',
    none: 'none saved',
  },
  claudePath: { label: 'claude executable', help: 'the claude CLI delegates run', none: 'OPENROUTER_DELEGATE_CLAUDE, then PATH' },
  modelsCacheTtlMinutes: {
    label: 'Model list cache',
    help: 'how long the model list is served from cache',
    unit: 'minutes',
    bounds: SETTING_BOUNDS.modelsCacheTtlMinutes,
  },
  delegateMaxRetries: {
    label: 'Delegate retries',
    help: 'how often a delegate retries a failed OpenRouter request',
    unit: 'retries',
    bounds: SETTING_BOUNDS.delegateMaxRetries,
  },
  'provider.dataCollection': {
    label: 'Data collection',
    help: 'deny: only providers that neither store your prompts nor train on them; allow: any provider',
  },
  'provider.zdr': { label: 'Zero data retention only', help: 'only provider endpoints that keep no prompts at all (ZDR)' },
  'provider.sort': {
    label: 'Sort providers by',
    help: "try the cheapest, the fastest or the quickest to answer first; none leaves OpenRouter's own balance of price and uptime",
  },
  'provider.only': { label: 'Providers to use', help: 'only these providers serve delegates (OpenRouter provider slugs, e.g. anthropic, deepinfra)' },
  'provider.ignore': { label: 'Providers to skip', help: 'never these providers' },
  'provider.allowFallbacks': {
    label: 'Provider fallbacks',
    help: 'whether OpenRouter may use other providers when the ones chosen are down; off: the request fails instead',
  },
};

const DEFAULTS = defaultSettings();

/** Every setting's label, help, unit, bounds and default (docs/ARCHITECTURE.md §5): written once, read by the CLI and the settings page. */
export const SETTING_META: Readonly<Record<SettingPath, Readonly<SettingMeta>>> = Object.fromEntries(
  (Object.keys(SETTING_TEXTS) as SettingPath[]).map((path) => [path, { ...SETTING_TEXTS[path], default: settingValue(DEFAULTS, path) }]),
) as Record<SettingPath, SettingMeta>;
