/**
 * Changing settings: one function for every path (the service's `settings.update`, and the config CLI
 * when no service runs), so both validate identically. Invalid values change nothing.
 */
import { z } from 'zod';
import { ServiceError, SettingsPatchSchema, applySettingsPatch } from '../../contract/index.js';
import type { Settings, SettingsPatch } from '../../contract/index.js';
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

export function updateSettings(store: Pick<SettingsStore, 'update'>, patch: SettingsPatch): Promise<Settings> {
  return store.update((current) => patchedSettings(current, patch));
}
