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

/** A model id (`vendor/name`, optionally `~` alias or `:variant`) or a `vendor/*` pattern. */
export const ModelPatternSchema = z
  .string()
  .trim()
  .regex(/^~?[a-z0-9][\w.-]*\/(\*|[\w.:~-]+)$/i, 'expected a model id like "vendor/model" or a pattern like "vendor/*"');

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

const usd = z.number().finite().nonnegative();
const perMillionUsd = z.number().finite().nonnegative().nullable();

const budgetsShape = {
  /** Ceiling for one job's `max_cost_usd`, and its default. */
  perJobUsd: usd.default(0.5),
  /** Spend across all jobs in one local day. */
  perDayUsd: usd.default(5),
  /** No job starts when the key's remaining balance is below this. */
  reserveUsd: usd.default(0.5),
};
export const BudgetsSchema = z.object(budgetsShape).strict();

const settingsShape = {
    mode: DelegationModeSchema.default('ondemand'),
    defaultModel: ModelPatternSchema.refine((s) => !s.endsWith('/*'), 'the default model must be a model id, not a pattern').default(DEFAULT_MODEL),
    /** Empty = every tool-capable model. */
    allowlist: z.array(ModelPatternSchema).default([]),
    blocklist: z.array(ModelPatternSchema).default([]),
    maxPriceInputPerM: perMillionUsd.default(null),
    maxPriceOutputPerM: perMillionUsd.default(null),
    minContext: z.number().int().positive().nullable().default(null),
    permissionCeiling: PermissionModeSchema.default('acceptEdits'),
    /**
     * What a caller may pre-approve with allowed_tools (tools the delegate then uses without asking).
     * A bare name also allows its narrowed rules (`Bash` allows `Bash(npm test:*)`); `*` allows anything.
     */
    approvableTools: z.array(ToolRuleSchema).max(100).default([...DEFAULT_APPROVABLE_TOOLS]),
    defaultPermissionMode: PermissionModeSchema.default('acceptEdits'),
    budgets: BudgetsSchema.default({ perJobUsd: 0.5, perDayUsd: 5, reserveUsd: 0.5 }),
    concurrency: z.number().int().min(1).max(32).default(3),
    jobTimeoutMinutes: z.number().int().min(1).max(24 * 60).default(30),
    retentionDays: z.number().int().min(1).max(3650).default(30),
    /** Path of the `claude` executable; null = OPENROUTER_DELEGATE_CLAUDE, then PATH. */
    claudePath: z.string().min(1).nullable().default(null),
    modelsCacheTtlMinutes: z.number().int().min(1).max(7 * 24 * 60).default(60),
    /**
     * How often a delegate retries a failed OpenRouter request (Claude Code's CLAUDE_CODE_MAX_RETRIES).
     * Claude Code's own default, 10, can keep a job waiting three minutes on a dead key or a rate limit.
     */
    delegateMaxRetries: z.number().int().min(0).max(10).default(3),
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

const BudgetsPatchSchema = z.object(withoutDefaults(budgetsShape)).strict();

/**
 * A change to some settings, as a user (CLI, window) sends it: the same field rules without the
 * defaults, so a missing field means "leave it" (budgets may change one figure at a time).
 * The merged result is checked by SettingsSchema, cross-field rules included.
 */
export const SettingsPatchSchema = z.object({ ...withoutDefaults(settingsShape), budgets: BudgetsPatchSchema.optional() }).strict();
export type SettingsPatch = z.infer<typeof SettingsPatchSchema>;

/** The settings with a patch applied; throws zod's error when the result breaks a rule. */
export function applySettingsPatch(current: Settings, patch: SettingsPatch): Settings {
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  return SettingsSchema.parse({ ...current, ...defined, budgets: { ...current.budgets, ...(patch.budgets ?? {}) } });
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
