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
 * `claudePath` on disk) for what it changes, then saved.
 *
 * The checks can wait on OpenRouter, so they run before the store's queue, on the settings as just read: a slow
 * OpenRouter never holds up a reload of the file or another change. Inside the queue the patch is applied to the
 * settings in force then; only when those differ (a change made meanwhile) are the checks run again, on them, so
 * nothing is checked against the wrong values. A settings file broken by hand is reported before any check.
 */
export async function updateSettings(
  store: Pick<SettingsStore, 'load' | 'update' | 'problem'>,
  patch: SettingsPatch,
  checks: SettingsChecks,
): Promise<UpdatedSettings> {
  const seen = await store.load();
  let warnings = store.problem === undefined ? await checkChangedSettings(seen, patchedSettings(seen, patch), checks) : [];
  const settings = await store.update(async (current) => {
    const next = patchedSettings(current, patch);
    if (JSON.stringify(current) !== JSON.stringify(seen)) warnings = await checkChangedSettings(current, next, checks);
    return next;
  });
  return { settings, warnings };
}
