/**
 * The OpenRouter key's own cap, for every surface that shows the key (doctor, the Account page, the tray): when its
 * limit resets, and whether it is a cap at all beside the day budget. OpenRouter holds a key to its limit whatever
 * the service does, so a limit near the day budget is the backstop if the service's own metering ever fails; no
 * limit, or one far above the day budget, leaves only the service between a runaway delegate and the account.
 * Pure; imports the contract's types only.
 */
import type { KeyBalance } from '../contract/methods.js';
import { formatUsd } from './format.js';

/** Above this many day budgets, a key's limit is no backstop for the day. */
export const KEY_LIMIT_DAY_BUDGETS = 2;

export const KEYS_PAGE = 'https://openrouter.ai/settings/keys';

/** What to do, in one sentence: set a limit by hand, or let the service make a limited key. */
export const KEY_CAP_FIX =
  `Set a limit near your day budget on the key at ${KEYS_PAGE}, or add a management key ` +
  '(`openrouter-delegate key set --management`) and run `openrouter-delegate key delegate-on`: the service then makes a key of its own ' +
  'for the delegates, limited to the day budget and reset daily by OpenRouter.';

/** "resets daily (midnight UTC)", "never resets"; OpenRouter resets at midnight UTC, weeks from Monday. */
export function limitResetText(reset: KeyBalance['limitReset']): string {
  if (reset === 'daily') return 'resets daily at midnight UTC';
  if (reset === 'weekly') return 'resets every Monday at midnight UTC';
  if (reset === 'monthly') return 'resets on the 1st at midnight UTC';
  return 'never resets';
}

/** Why the key's own limit is no backstop for the day budget, or null when it is one. */
export function keyCapWarning(key: Pick<KeyBalance, 'limitUsd' | 'limitReset'>, dayBudgetUsd: number): string | null {
  if (key.limitUsd === null) {
    return `The key has no spending limit of its own: if the service's metering failed, nothing at OpenRouter would stop delegates before your credits run out.`;
  }
  if (key.limitUsd > KEY_LIMIT_DAY_BUDGETS * dayBudgetUsd) {
    return (
      `The key's own limit, ${formatUsd(key.limitUsd)} (${limitResetText(key.limitReset ?? null)}), is more than ` +
      `${KEY_LIMIT_DAY_BUDGETS}× your day budget of ${formatUsd(dayBudgetUsd)}: it is no backstop for the day.`
    );
  }
  return null;
}
