/**
 * Why the metering gateway refuses a request's body before metering it (docs/ARCHITECTURE.md §11): a model other
 * than the job's, a `max_tokens` that bounds nothing, or a field or block Claude Code never sends (request-fields.ts).
 * Each is answered 400 `invalid_request_error`, which Claude Code does not retry.
 */
import { checkRequest } from './request-fields.js';

/**
 * The message a request's body is refused with, or null when it may be metered. `allowServerTools` is the user's
 * setting, read only once the body has passed the checks before it.
 */
export function refusalOf(parsed: Record<string, unknown>, jobModel: string, pathname: string, allowServerTools: () => boolean): string | null {
  if (parsed.model !== jobModel) {
    const asked = typeof parsed.model === 'string' ? `"${parsed.model.slice(0, 100)}"` : 'no model';
    return `This job runs on "${jobModel}"; a request for ${asked} is refused.`;
  }
  // The ceiling prices the answer at max_tokens: without a whole positive one it is no bound (a negative one would even free
  // budget for the job's other requests in flight). count_tokens has none.
  if (pathname === '/v1/messages' && !(Number.isSafeInteger(parsed.max_tokens) && (parsed.max_tokens as number) >= 1)) {
    return 'max_tokens must be a positive integer.';
  }
  // A lowered max_tokens lowers an extended-thinking budget with it (ceiling.ts, withMaxTokens), written as a whole number:
  // the body that goes must be no longer than the one measured, so a budget that is not one (1e400 reads as Infinity and
  // is written `null`) is refused.
  const thinking = parsed.thinking;
  if (pathname === '/v1/messages' && thinking !== null && typeof thinking === 'object' && Object.hasOwn(thinking, 'budget_tokens')) {
    const budget = (thinking as { budget_tokens: unknown }).budget_tokens;
    if (!(Number.isSafeInteger(budget) && (budget as number) >= 1)) return 'thinking.budget_tokens must be a positive integer.';
  }
  // Only what Claude Code sends: a field or block that buys something outside token prices never goes.
  const allowed = allowServerTools();
  const refusal = checkRequest(parsed, { counting: pathname !== '/v1/messages', allow: { serverTools: allowed, urlSources: allowed } });
  return refusal ? refusal.message : null;
}
