/**
 * The user's provider policy as OpenRouter's `provider` request object
 * (https://openrouter.ai/docs/features/provider-routing), for the gateway to add to every delegate request.
 * Only what departs from OpenRouter's own defaults is written, so the default policy sends nothing and a
 * request says exactly what the user chose. Pure.
 */
import type { Settings } from '../../../contract/index.js';

/** OpenRouter's `provider` object for this policy, or null when every field is at OpenRouter's default. */
export function providerPreferences(p: Settings['provider']): Record<string, unknown> | null {
  // In the order of OpenRouter's table; lists are copied so the caller's body never shares the settings' arrays.
  const preferences: Record<string, unknown> = {
    ...(p.allowFallbacks ? {} : { allow_fallbacks: false }),
    ...(p.dataCollection === 'deny' ? { data_collection: 'deny' } : {}),
    ...(p.zdr ? { zdr: true } : {}),
    ...(p.only.length > 0 ? { only: [...p.only] } : {}),
    ...(p.ignore.length > 0 ? { ignore: [...p.ignore] } : {}),
    ...(p.sort === 'none' ? {} : { sort: p.sort }),
  };
  return Object.keys(preferences).length > 0 ? preferences : null;
}
