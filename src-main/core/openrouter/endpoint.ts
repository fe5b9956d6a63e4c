/**
 * Where OpenRouter is and how this app names itself to it: one place that the service (its client and every
 * delegate's environment), setup (the doctor's OpenRouter check) and the CLI all read, importing nothing
 * of theirs (docs/ARCHITECTURE.md §9: no import cycles).
 */
export const DEFAULT_BASE_URL = 'https://openrouter.ai/api';

/** Sent as HTTP-Referer and X-Title, so OpenRouter attributes the traffic to this app. */
export const ATTRIBUTION = { url: 'https://github.com/openrouter-delegate/openrouter-delegate', title: 'OpenRouter Delegate' };

/** OPENROUTER_BASE_URL (tests point it at a fake), else OpenRouter's API root; no trailing slash. */
export function baseUrlFrom(env: NodeJS.ProcessEnv): string {
  return (env.OPENROUTER_BASE_URL?.trim() || DEFAULT_BASE_URL).replace(/\/+$/, '');
}
