/**
 * The user's settings (docs/ARCHITECTURE.md §5). The schema is the single source of truth for
 * defaults and validation: the service, the CLI and the settings window all parse with it.
 */
import { z } from 'zod';
import { matchesPattern } from './model-patterns.js';

export const DELEGATION_MODES = ['off', 'ondemand', 'auto'] as const;
export const DelegationModeSchema = z.enum(DELEGATION_MODES);
export type DelegationMode = z.infer<typeof DelegationModeSchema>;

/**
 * Claude Code's permission modes (as `claude --help` lists them), ordered from least to most
 * powerful: the order is the ceiling order. In a headless session `dontAsk` and `manual` both deny
 * what is not pre-approved (`allowed_tools`); `auto` lets Claude Code's classifier approve actions.
 */
export const PERMISSION_MODES = ['plan', 'dontAsk', 'manual', 'acceptEdits', 'auto', 'bypassPermissions'] as const;
export const PermissionModeSchema = z.enum(PERMISSION_MODES);
export type PermissionMode = z.infer<typeof PermissionModeSchema>;

export const DEFAULT_MODEL = 'deepseek/deepseek-v4-flash-0731';

/**
 * What a delegate's Claude Code is given (docs/GUIDE.md "Delegate profiles"), ordered from least to most: the
 * order is the ceiling order. Every turn sends every tool's schema again, so fewer tools cost less.
 */
export const DELEGATE_PROFILES = ['minimal', 'lean', 'full'] as const;
export const DelegateProfileSchema = z.enum(DELEGATE_PROFILES);
export type DelegateProfile = z.infer<typeof DelegateProfileSchema>;

/**
 * The built-in tools each profile gives a delegate, as the pinned Claude Code names them; null for Claude
 * Code's own default set. `lean` is what a coding task needs, nothing to start sub-agents, workflows,
 * schedules or skills; `minimal` is for text tasks (and runs Claude Code with --bare).
 */
export const PROFILE_TOOLS: Readonly<Record<DelegateProfile, readonly string[] | null>> = {
  minimal: ['Read'],
  lean: ['Bash', 'Read', 'Edit', 'Write', 'Glob', 'Grep'],
  full: null,
};

/**
 * Where a delegate works (docs/ISOLATION.md): `worktree`, a git worktree of its own on a new branch,
 * outside the user's tree; `none`, the user's folder in place.
 */
export const ISOLATION_MODES = ['worktree', 'none'] as const;
export const IsolationModeSchema = z.enum(ISOLATION_MODES);
export type IsolationMode = z.infer<typeof IsolationModeSchema>;

/** What each isolation mode does, in the words the CLI and the settings page both use. */
export const ISOLATION_EXPLANATIONS: Record<IsolationMode, string> = {
  worktree: 'each delegate works in a git worktree of its own, on a branch you review and merge; your tree and index stay untouched',
  none: 'delegates edit your folder in place, beside you and each other',
};

/** What Claude Code sees in each delegation mode, in the words the CLI and the settings page both use. */
export const MODE_EXPLANATIONS: Record<DelegationMode, string> = {
  off: 'Claude Code sees only the model list: the delegate tools are hidden and no job starts.',
  ondemand: 'Claude Code sees the delegate tools but uses them only when you ask it to delegate.',
  auto: 'Claude Code may hand bulk work (summaries, searches, boilerplate) to a cheaper model on its own.',
};

/** What each profile gives a delegate, in the words the CLI and the settings page both use. */
export const PROFILE_EXPLANATIONS: Record<DelegateProfile, string> = {
  minimal: 'text tasks: only Read, no CLAUDE.md, hooks or project context (Claude Code --bare)',
  lean: 'coding tasks: Bash, Read, Edit, Write, Glob, Grep; no sub-agents, workflows, schedules or skills',
  full: "Claude Code's whole default tool set: more than twice the bytes on every request",
};

/** A model id (`vendor/name`, optionally `~` alias or `:variant`) or a `vendor/*` pattern. */
export const ModelPatternSchema = z
  .string()
  .trim()
  .regex(/^~?[a-z0-9][\w.-]*\/(\*|[\w.:~-]+)$/i, 'expected a model id like "vendor/model" or a pattern like "vendor/*"');

/** A model id, never a `vendor/*` pattern: what a job runs on (`what` names it in the refusal). */
function modelIdSchema(what: string) {
  return ModelPatternSchema.refine((s) => !s.endsWith('/*'), `${what} must be a model id, not a pattern`);
}

/** A fallback model: OpenRouter tries it when the job's own model fails (docs/GATEWAY.md "Model fallbacks"). */
export const FallbackModelSchema = modelIdSchema('a fallback model');
/** Each fallback can be the dearest model a request is capped at, and each is one more policy check per job. */
export const MAX_FALLBACK_MODELS = 3;

/**
 * A Claude Code permission rule a caller may pass in allowed_tools: a tool name (`Read`,
 * `mcp__server__tool`), optionally narrowed (`Bash(npm test:*)`), or `*` for any.
 */
export const ToolRuleSchema = z
  .string()
  .trim()
  .max(200)
  .regex(/^(\*|[A-Za-z_][\w-]*(\(.+\))?)$/, 'expected a tool like "Read", a rule like "Bash(npm test:*)", or "*" for any');

/** Tools that only read: what a caller may pre-approve unless the user allows more. */
export const DEFAULT_APPROVABLE_TOOLS = ['Read', 'Glob', 'Grep', 'LS', 'NotebookRead', 'TodoWrite', 'Task', 'Agent'];

/** Whether `rule` (from a caller's allowed_tools) is one the user lets callers pre-approve. */
export function isApprovableTool(rule: string, approvable: readonly string[]): boolean {
  return approvable.some((entry) => entry === '*' || entry === rule || (!entry.includes('(') && rule.startsWith(`${entry}(`)));
}

/**
 * Inclusive bounds of the numeric settings. The schema below is built from them and SETTING_META
 * hands them to every surface, so "1–32" is written here and nowhere else.
 */
export const SETTING_BOUNDS = {
  usd: { min: 0 },
  /** A job's cap: $0 would start a delegate that cannot make a single request (mode `off` is how to stop delegating). */
  jobUsd: { min: 0.01 },
  minContext: { min: 1 },
  concurrency: { min: 1, max: 32 },
  jobTimeoutMinutes: { min: 1, max: 24 * 60 },
  retentionDays: { min: 1, max: 3650 },
  modelsCacheTtlMinutes: { min: 1, max: 7 * 24 * 60 },
  delegateMaxRetries: { min: 0, max: 10 },
  fanOutLimit: { min: 2, max: 5 },
} as const satisfies Record<string, SettingBounds>;

/** Inclusive; no `max` means no upper bound. */
export interface SettingBounds {
  min: number;
  max?: number;
}

function wholeIn(bounds: SettingBounds) {
  const atLeast = z.number().int().min(bounds.min);
  return bounds.max === undefined ? atLeast : atLeast.max(bounds.max);
}

const usd = z.number().finite().min(SETTING_BOUNDS.usd.min);
const perMillionUsd = z.number().finite().min(SETTING_BOUNDS.usd.min).nullable();

const budgetsShape = {
  /** Ceiling for one job's `max_cost_usd`, and its default. */
  perJobUsd: z
    .number()
    .finite()
    .min(
      SETTING_BOUNDS.jobUsd.min,
      `must be at least $${SETTING_BOUNDS.jobUsd.min}: a job with no budget cannot make a single request (to stop delegating, set the mode to off)`,
    )
    .default(0.5),
  /** Spend across all jobs in one local day. */
  perDayUsd: usd.default(5),
  /** No job starts when the key's remaining balance is below this. */
  reserveUsd: usd.default(0.5),
};
export const BudgetsSchema = z.object(budgetsShape).strict();

/**
 * OpenRouter's provider routing (https://openrouter.ai/docs/features/provider-routing): which provider may serve
 * a delegate's requests. Every default is OpenRouter's own, so a setting left at its default sends nothing.
 */
export const DATA_COLLECTION = ['allow', 'deny'] as const;
export const PROVIDER_SORTS = ['none', 'price', 'throughput', 'latency'] as const;
export type ProviderSort = (typeof PROVIDER_SORTS)[number];

/** A provider as OpenRouter names it in `only`/`ignore` (a slug such as "anthropic" or "deepinfra/turbo"). */
export const ProviderNameSchema = z
  .string()
  .trim()
  // Control characters would only hide a name in every list that shows it; OpenRouter's slugs have none.
  .regex(/^[^\p{Cc}]{1,100}$/u, 'expected a provider name like "anthropic" or "deepinfra/turbo" (at most 100 characters, no control characters)');

/** Fifty is more providers than any model has; the cap keeps a pasted list from growing every request. */
const providerList = z.array(ProviderNameSchema).max(50);

const providerShape = {
  /** 'deny': only providers that neither store prompts nor train on them. */
  dataCollection: z.enum(DATA_COLLECTION).default('allow'),
  /** Only zero-data-retention endpoints. */
  zdr: z.boolean().default(false),
  /** 'none' leaves OpenRouter's own balance of price and uptime. */
  sort: z.enum(PROVIDER_SORTS).default('none'),
  /** Empty = any provider. */
  only: providerList.default([]),
  ignore: providerList.default([]),
  /** false: when the providers allowed are down, the request fails instead of going elsewhere. */
  allowFallbacks: z.boolean().default(true),
};
export const ProviderPolicySchema = z.object(providerShape).strict();
export type ProviderPolicy = z.infer<typeof ProviderPolicySchema>;

/**
 * What the metering gateway lets a delegate's request carry beyond what Claude Code sends for its own tools
 * (src-main/core/gateway/request-fields.ts). Off: only what the job's cap can price.
 */
const gatewayShape = {
  /**
   * Server tools (web search, web fetch, code execution: run by OpenRouter or the provider, billed per use) and
   * documents or images given by URL (fetched and parsed upstream): fees outside token prices, which no cap sees.
   */
  allowServerTools: z.boolean().default(false),
};
export const GatewayPolicySchema = z.object(gatewayShape).strict();
export type GatewayPolicy = z.infer<typeof GatewayPolicySchema>;

/**
 * How a delegate may run programs (its Bash tool, and everything that starts), and the sandbox they run in: Claude
 * Code's own (bubblewrap and socat on Linux, Seatbelt on macOS; docs/ISOLATION.md "The sandbox"). Inside it a
 * program writes only the job's folders and a private temp folder, reads none of the service's folders or the
 * usual secret stores, reaches no session-bus service and no network but `allowedDomains`.
 */
export const PROGRAM_POLICIES = ['sandboxed', 'ask-approval', 'off'] as const;
export type ProgramPolicy = (typeof PROGRAM_POLICIES)[number];
export const SANDBOX_USES = ['required', 'preferred', 'off'] as const;
export type SandboxUse = (typeof SANDBOX_USES)[number];

/** What each program policy lets a delegate do, in the words the CLI and the settings page both use. */
export const PROGRAM_EXPLANATIONS: Record<ProgramPolicy, string> = {
  sandboxed: 'delegates run programs (npm test, builds) without asking, inside the sandbox',
  'ask-approval': 'a delegate runs programs only when the delegation pre-approves Bash (allowed_tools), sandboxed where the sandbox is used',
  off: 'delegates run no programs at all (no Bash tool)',
};

/** What each sandbox use means when no sandbox can be had on this machine. */
export const SANDBOX_USE_EXPLANATIONS: Record<SandboxUse, string> = {
  required: 'without a sandbox, a delegation whose delegate could run programs is refused, with how to get one',
  preferred: 'without a sandbox, programs run unsandboxed (only when pre-approved) and the job says so',
  off: 'never sandboxed: pre-approved programs run as you, with your files and network',
};

/**
 * A domain a sandboxed program may reach: `example.org`, `*.example.org`, optionally `:port`. Never a bare name
 * (`localhost`) or an address: the gateway, the service and the settings page live on loopback.
 */
export const SandboxDomainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)+(:\d{1,5})?$/, 'expected a domain like "registry.npmjs.org" or "*.example.org", optionally with ":port"')
  .refine((d) => !/^[\d.]+(:\d+)?$/.test(d), 'expected a domain name, not an address')
  .refine((d) => !/(^|\.)localhost(:\d+)?$/.test(d), 'loopback names are never reachable from the sandbox');

/** A path no sandboxed program may read: absolute, or `~/` for one under the home folder. */
export const SandboxPathSchema = z
  .string()
  .trim()
  .regex(/^(\/|~\/)[^\p{Cc}]*$/u, 'expected an absolute path, or one starting with ~/')
  .max(1000);

const sandboxShape = {
  programs: z.enum(PROGRAM_POLICIES).default('sandboxed'),
  use: z.enum(SANDBOX_USES).default('required'),
  /** Domains sandboxed programs may reach (package registries for a test run …); empty = no network at all. */
  allowedDomains: z.array(SandboxDomainSchema).max(100).default([]),
  /** Paths no sandboxed program may read, beside the service's folders and the usual secret stores. */
  denyRead: z.array(SandboxPathSchema).max(100).default([]),
};
export const SandboxPolicySchema = z.object(sandboxShape).strict();
export type SandboxPolicy = z.infer<typeof SandboxPolicySchema>;

const settingsShape = {
  mode: DelegationModeSchema.default('ondemand'),
  defaultModel: modelIdSchema('the default model').default(DEFAULT_MODEL),
  /** Tried in order when a job's model fails; each is held to the same policy when a job is admitted. */
  fallbackModels: z.array(FallbackModelSchema).max(MAX_FALLBACK_MODELS).default([]),
  /** Empty = every tool-capable model. */
  allowlist: z.array(ModelPatternSchema).default([]),
  blocklist: z.array(ModelPatternSchema).default([]),
  maxPriceInputPerM: perMillionUsd.default(null),
  maxPriceOutputPerM: perMillionUsd.default(null),
  minContext: wholeIn(SETTING_BOUNDS.minContext).nullable().default(null),
  permissionCeiling: PermissionModeSchema.default('acceptEdits'),
  /**
   * What a caller may pre-approve with allowed_tools (tools the delegate then uses without asking).
   * A bare name also allows its narrowed rules (`Bash` allows `Bash(npm test:*)`); `*` allows anything.
   */
  approvableTools: z
    .array(ToolRuleSchema)
    .max(100)
    .default([...DEFAULT_APPROVABLE_TOOLS]),
  defaultPermissionMode: PermissionModeSchema.default('acceptEdits'),
  /** The tools a delegate gets when a delegation names no profile, and the most it may ask for. */
  delegateProfile: DelegateProfileSchema.default('lean'),
  /** Where a delegation that names no isolation works; outside a git repository it runs in place. */
  isolation: IsolationModeSchema.default('worktree'),
  // An absent `budgets` gets budgetsShape's own defaults (written once, there).
  budgets: BudgetsSchema.default(() => BudgetsSchema.parse({})),
  // The same for `provider`: providerShape's defaults.
  provider: ProviderPolicySchema.default(() => ProviderPolicySchema.parse({})),
  // And for `gateway`.
  gateway: GatewayPolicySchema.default(() => GatewayPolicySchema.parse({})),
  // And for `sandbox`.
  sandbox: SandboxPolicySchema.default(() => SandboxPolicySchema.parse({})),
  concurrency: wholeIn(SETTING_BOUNDS.concurrency).default(3),
  jobTimeoutMinutes: wholeIn(SETTING_BOUNDS.jobTimeoutMinutes).default(30),
  retentionDays: wholeIn(SETTING_BOUNDS.retentionDays).default(30),
  /** The most models one delegate_start may name at once (a fan-out: one job, worktree and branch per model). */
  fanOutLimit: wholeIn(SETTING_BOUNDS.fanOutLimit).default(3),
  /** Path of the `claude` executable; null = OPENROUTER_DELEGATE_CLAUDE, then PATH. */
  claudePath: z.string().min(1).nullable().default(null),
  modelsCacheTtlMinutes: wholeIn(SETTING_BOUNDS.modelsCacheTtlMinutes).default(60),
  /**
   * How often a delegate retries a failed OpenRouter request (Claude Code's CLAUDE_CODE_MAX_RETRIES).
   * Claude Code's own default, 10, can keep a job waiting three minutes on a dead key or a rate limit.
   */
  delegateMaxRetries: wholeIn(SETTING_BOUNDS.delegateMaxRetries).default(3),
};

export const SettingsSchema = z
  .object(settingsShape)
  .strict()
  .superRefine((s, ctx) => {
    // The default model must itself be allowed, or every delegation without a model would be refused.
    if (s.allowlist.length > 0 && !s.allowlist.some((p) => matchesPattern(s.defaultModel, p))) {
      ctx.addIssue({
        code: 'custom',
        path: ['defaultModel'],
        message: `"${s.defaultModel}" is not in the allowlist (${s.allowlist.join(', ')}); allow it or pick a default model from the allowlist`,
      });
    }
    const blockedBy = s.blocklist.find((p) => matchesPattern(s.defaultModel, p));
    if (blockedBy) {
      ctx.addIssue({ code: 'custom', path: ['defaultModel'], message: `"${s.defaultModel}" is blocked by "${blockedBy}" in the blocklist` });
    }
    // A provider both to use and to skip is a contradiction OpenRouter would settle without saying how.
    const both = s.provider.ignore.find((name) => s.provider.only.some((only) => only.toLowerCase() === name.toLowerCase()));
    if (both !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['provider', 'ignore'], message: `"${both}" is both among the providers to use and the providers to skip` });
    }
    if (s.sandbox.programs === 'sandboxed' && s.sandbox.use === 'off') {
      ctx.addIssue({
        code: 'custom',
        path: ['sandbox', 'programs'],
        message: 'programs "sandboxed" needs the sandbox: set the sandbox to required or preferred, or programs to ask-approval',
      });
    }
    if (PERMISSION_MODES.indexOf(s.defaultPermissionMode) > PERMISSION_MODES.indexOf(s.permissionCeiling)) {
      ctx.addIssue({
        code: 'custom',
        path: ['defaultPermissionMode'],
        message: `"${s.defaultPermissionMode}" is above the permission ceiling "${s.permissionCeiling}"`,
      });
    }
  });

export type Settings = z.infer<typeof SettingsSchema>;

type Fields<S> = { [K in keyof S]: S[K] extends z.ZodDefault<infer T> ? z.ZodOptional<T> : never };

/** The same fields without their defaults, all optional. */
function withoutDefaults<S extends Record<string, z.ZodDefault<z.ZodType>>>(shape: S): Fields<S> {
  return Object.fromEntries(Object.entries(shape).map(([key, field]) => [key, field.unwrap().optional()])) as unknown as Fields<S>;
}

/**
 * A change to some settings, as a user (CLI, window) sends it: the same field rules without the
 * defaults, so a missing field means "leave it" (budgets and provider may change one field at a time).
 * The merged result is checked by SettingsSchema, cross-field rules included.
 */
export const SettingsPatchSchema = z
  .object({
    ...withoutDefaults(settingsShape),
    budgets: z.object(withoutDefaults(budgetsShape)).strict().optional(),
    provider: z.object(withoutDefaults(providerShape)).strict().optional(),
    gateway: z.object(withoutDefaults(gatewayShape)).strict().optional(),
    sandbox: z.object(withoutDefaults(sandboxShape)).strict().optional(),
  })
  .strict();
export type SettingsPatch = z.infer<typeof SettingsPatchSchema>;

function definedOnly<T extends object>(values: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(values ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The settings with a patch applied; throws zod's error when the result breaks a rule. */
export function applySettingsPatch(current: Settings, patch: SettingsPatch): Settings {
  return SettingsSchema.parse({
    ...current,
    ...definedOnly(patch),
    budgets: { ...current.budgets, ...definedOnly(patch.budgets) },
    provider: { ...current.provider, ...definedOnly(patch.provider) },
    gateway: { ...current.gateway, ...definedOnly(patch.gateway) },
    sandbox: { ...current.sandbox, ...definedOnly(patch.sandbox) },
  });
}

export function defaultSettings(): Settings {
  return SettingsSchema.parse({});
}

/** What each permission mode lets a delegated session do, in the words the CLI and the settings page both use. */
export const PERMISSION_EXPLANATIONS: Record<PermissionMode, string> = {
  plan: 'read-only: the delegate may look, not change anything',
  dontAsk: 'only the tools you pre-approve (allowed_tools); everything else is denied',
  manual: 'like dontAsk in a headless session: only pre-approved tools',
  acceptEdits: 'may edit files; commands only when pre-approved',
  auto: "Claude Code's classifier approves actions it deems safe",
  bypassPermissions: 'anything, without asking: use only in a sandbox',
};

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
export type SettingUnit = 'usd' | 'usdPerMTokens' | 'tokens' | 'jobs' | 'minutes' | 'days' | 'retries' | 'models';

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
  defaultModel: { label: 'Default model', help: 'model used when a delegation names none (must pass the allow- and blocklist)' },
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
  retentionDays: { label: 'Job history kept', help: 'how long finished jobs are kept', unit: 'days', bounds: SETTING_BOUNDS.retentionDays },
  fanOutLimit: {
    label: 'Fan-out limit',
    help: 'the most models one delegation may run side by side, one job and branch each',
    unit: 'models',
    bounds: SETTING_BOUNDS.fanOutLimit,
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
