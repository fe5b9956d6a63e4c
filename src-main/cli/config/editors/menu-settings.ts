/**
 * Which settings each entry of `openrouter-mcp-config`'s interactive menu edits.
 */
import type { ListField, SettingPath } from '../config-fields.js';

/**
 * The settings each menu entry edits, in the order it asks for them. Its changed-mark reads them, the editors of
 * Budgets, Providers, Limits and Other are built from them, and a test holds them to the flags' tables
 * (config-fields.ts), so a setting that gets a flag cannot be left out of the menu unnoticed. The saved verify commands
 * have no flag (`openrouter-delegate verify` sets them); the menu only forgets them, and patchBetween carries them too.
 */
export const MENU_SETTINGS = {
  mode: ['mode'],
  model: ['defaultModel'],
  fallbackModels: ['fallbackModels'],
  allowlist: ['allowlist'],
  blocklist: ['blocklist'],
  providers: ['provider.dataCollection', 'provider.zdr', 'provider.sort', 'provider.only', 'provider.ignore', 'provider.allowFallbacks'],
  budgets: ['budgets.perJobUsd', 'budgets.perDayUsd', 'budgets.reserveUsd', 'gateway.allowServerTools'],
  permissions: ['permissionCeiling', 'defaultPermissionMode', 'delegateProfile'],
  approvableTools: ['approvableTools'],
  isolation: ['isolation', 'fanOutLimit', 'verifyTimeoutMinutes', 'verifyConcurrency', 'fixRounds', 'verifyCommands'],
  sandbox: ['sandbox.programs', 'sandbox.use', 'sandbox.allowedDomains', 'sandbox.denyRead'],
  limits: ['maxPriceInputPerM', 'maxPriceOutputPerM', 'minContext', 'concurrency', 'jobTimeoutMinutes'],
  other: ['retentionDays', 'inlineAnswerChars', 'delegateMaxRetries', 'modelsCacheTtlMinutes', 'claudePath'],
} as const satisfies Record<string, readonly (SettingPath | ListField)[]>;

/** A menu entry that edits settings (every entry but the key, save and quit). */
export type SettingsEntry = keyof typeof MENU_SETTINGS;
