/**
 * The settings object (docs/ARCHITECTURE.md §5): its top-level fields, the rules across fields, and the patch a user
 * sends to change some of them. The groups inside it (budgets, provider, gateway, sandbox) are in settings-policy.ts.
 */
import { z } from 'zod';
import { matchesPattern } from './model-patterns.js';
import { BEST_MODEL } from './scoreboard.js';
import { DelegateProfileSchema, DelegationModeSchema, IsolationModeSchema, PERMISSION_MODES, PermissionModeSchema } from './settings-modes.js';
import {
  BudgetsSchema,
  GatewayPolicySchema,
  MAX_SAVED_VERIFY,
  ProviderPolicySchema,
  SETTING_BOUNDS,
  SandboxPolicySchema,
  SavedVerifySchema,
} from './settings-policy.js';
import type { SettingBounds } from './settings-policy.js';

export const DEFAULT_MODEL = 'deepseek/deepseek-v4-flash-0731';

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

function wholeIn(bounds: SettingBounds) {
  const atLeast = z.number().int().min(bounds.min);
  return bounds.max === undefined ? atLeast : atLeast.max(bounds.max);
}

const perMillionUsd = z.number().finite().min(SETTING_BOUNDS.usd.min).nullable();

const settingsShape = {
  mode: DelegationModeSchema.default('ondemand'),
  /** A model id, or "best": the repository's scoreboard picks (docs/VERIFY.md), falling back to DEFAULT_MODEL. */
  defaultModel: z.union([z.literal(BEST_MODEL), modelIdSchema('the default model')]).default(DEFAULT_MODEL),
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
  // An absent `budgets` gets the budgets' own defaults (written once, in settings-policy.ts).
  budgets: BudgetsSchema.default(() => BudgetsSchema.parse({})),
  // The same for `provider`: the provider policy's defaults.
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
  /** The longest one verify command may run (docs/VERIFY.md). */
  verifyTimeoutMinutes: wholeIn(SETTING_BOUNDS.verifyTimeoutMinutes).default(10),
  /** Verify commands run at once per repository; null = half the machine's cores, at least 1. */
  verifyConcurrency: wholeIn(SETTING_BOUNDS.verifyConcurrency).nullable().default(null),
  /** How many times a delegation whose verify commands fail is continued with the failure, unless it names its own. */
  fixRounds: wholeIn(SETTING_BOUNDS.fixRounds).default(1),
  /** Verify commands the user saved per repository: run for a delegation there that names none (docs/VERIFY.md). */
  verifyCommands: z.array(SavedVerifySchema).max(MAX_SAVED_VERIFY).default([]),
  /** Path of the `claude` executable; null = OPENROUTER_DELEGATE_CLAUDE, then PATH. */
  claudePath: z.string().min(1).nullable().default(null),
  modelsCacheTtlMinutes: wholeIn(SETTING_BOUNDS.modelsCacheTtlMinutes).default(60),
  /**
   * How often a delegate retries a failed OpenRouter request (Claude Code's CLAUDE_CODE_MAX_RETRIES).
   * Claude Code's own default, 10, can keep a job waiting three minutes on a dead key or a rate limit.
   */
  delegateMaxRetries: wholeIn(SETTING_BOUNDS.delegateMaxRetries).default(3),
  /**
   * The longest answer a call that finds its job ended (delegate_status, delegate_start and delegate_followup with a wait)
   * shows itself, so that no delegate_result call is needed for it; a longer one shows its start. 0: never.
   */
  inlineAnswerChars: wholeIn(SETTING_BOUNDS.inlineAnswerChars).default(4_000),
};

export const SettingsSchema = z
  .object(settingsShape)
  .strict()
  .superRefine((s, ctx) => {
    // The default model must itself be allowed, or every delegation without a model would be refused.
    // "best" picks among the models the policy allows at each delegation; its fallback is held to the policy then.
    if (s.defaultModel !== BEST_MODEL && s.allowlist.length > 0 && !s.allowlist.some((p) => matchesPattern(s.defaultModel, p))) {
      ctx.addIssue({
        code: 'custom',
        path: ['defaultModel'],
        message: `"${s.defaultModel}" is not in the allowlist (${s.allowlist.join(', ')}); allow it or pick a default model from the allowlist`,
      });
    }
    const repos = s.verifyCommands.map((saved) => saved.repo);
    const twice = repos.find((repo, i) => repos.indexOf(repo) !== i);
    if (twice !== undefined) ctx.addIssue({ code: 'custom', path: ['verifyCommands'], message: `${twice} has verify commands saved twice; keep one list` });
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
    budgets: z.object(withoutDefaults(BudgetsSchema.shape)).strict().optional(),
    provider: z.object(withoutDefaults(ProviderPolicySchema.shape)).strict().optional(),
    gateway: z.object(withoutDefaults(GatewayPolicySchema.shape)).strict().optional(),
    sandbox: z.object(withoutDefaults(SandboxPolicySchema.shape)).strict().optional(),
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
