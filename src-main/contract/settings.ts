/**
 * The user's settings (DESIGN.md §5). The schema is the single source of truth for
 * defaults and validation: the service, the CLI and the settings window all parse with it.
 */
import { z } from 'zod';

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

const usd = z.number().finite().nonnegative();
const perMillionUsd = z.number().finite().nonnegative().nullable();

export const BudgetsSchema = z
  .object({
    /** Ceiling for one job's `max_cost_usd`, and its default. */
    perJobUsd: usd.default(0.5),
    /** Spend across all jobs in one local day. */
    perDayUsd: usd.default(5),
    /** No job starts when the key's remaining balance is below this. */
    reserveUsd: usd.default(0.5),
  })
  .strict();

export const SettingsSchema = z
  .object({
    mode: DelegationModeSchema.default('ondemand'),
    defaultModel: ModelPatternSchema.refine((s) => !s.endsWith('/*'), 'the default model must be a model id, not a pattern').default(DEFAULT_MODEL),
    /** Empty = every tool-capable model. */
    allowlist: z.array(ModelPatternSchema).default([]),
    blocklist: z.array(ModelPatternSchema).default([]),
    maxPriceInputPerM: perMillionUsd.default(null),
    maxPriceOutputPerM: perMillionUsd.default(null),
    minContext: z.number().int().positive().nullable().default(null),
    permissionCeiling: PermissionModeSchema.default('acceptEdits'),
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
  })
  .strict()
  .superRefine((s, ctx) => {
    if (PERMISSION_MODES.indexOf(s.defaultPermissionMode) > PERMISSION_MODES.indexOf(s.permissionCeiling)) {
      ctx.addIssue({
        code: 'custom',
        path: ['defaultPermissionMode'],
        message: `"${s.defaultPermissionMode}" is above the permission ceiling "${s.permissionCeiling}"`,
      });
    }
  });

export type Settings = z.infer<typeof SettingsSchema>;

export function defaultSettings(): Settings {
  return SettingsSchema.parse({});
}
