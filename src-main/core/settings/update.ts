/**
 * Changing settings: one function for every path (the service's `settings.update`, and the config CLI
 * when no service runs), so both validate identically. Invalid values change nothing.
 */
import { z } from 'zod';
import { ServiceError, SettingsPatchSchema, applySettingsPatch } from '../../contract/index.js';
import type { Settings, SettingsPatch } from '../../contract/index.js';
import { checkChangedSettings } from './checks.js';
import type { SettingsChecks } from './checks.js';
import type { SettingsStore } from './store.js';

function describe(error: z.ZodError): string {
  return error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message)).join('; ');
}

/** The patch applied to `current`, or a ServiceError('settings_invalid') that says exactly what is wrong. */
export function patchedSettings(current: Settings, patch: unknown): Settings {
  const parsed = SettingsPatchSchema.safeParse(patch);
  if (!parsed.success) throw new ServiceError('settings_invalid', `Settings not changed: ${describe(parsed.error)}.`);
  try {
    return applySettingsPatch(current, parsed.data);
  } catch (error) {
    if (error instanceof z.ZodError) throw new ServiceError('settings_invalid', `Settings not changed: ${describe(error)}.`);
    throw error;
  }
}

export interface UpdatedSettings {
  /** The settings in force now. */
  settings: Settings;
  /** What could not be checked (OpenRouter's model list out of reach …), one sentence each; empty when everything was. */
  warnings: string[];
}

/**
 * The patch, checked by the schema and then by `checks` (checks.ts: the models it names against OpenRouter's list,
 * `claudePath` on disk) for what it changes, then saved. Both run inside the store's queue, on the settings the
 * patch is applied to, so a change made meanwhile is neither lost nor checked against the wrong values.
 */
export async function updateSettings(store: Pick<SettingsStore, 'update'>, patch: SettingsPatch, checks: SettingsChecks): Promise<UpdatedSettings> {
  let warnings: string[] = [];
  const settings = await store.update(async (current) => {
    const next = patchedSettings(current, patch);
    warnings = await checkChangedSettings(current, next, checks);
    return next;
  });
  return { settings, warnings };
}
