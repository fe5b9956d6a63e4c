/**
 * Budgets (docs/ARCHITECTURE.md §4): a daily cap and a reserve, checked before a job is spawned. Each
 * active job reserves what it may still spend (its cap minus its estimate so far), so concurrent
 * starts cannot overshoot together: the check and the reservation happen in one synchronous step.
 */
import { ServiceError } from '../../../contract/index.js';
import type { Balance, BudgetStop, GatewayRequest, JobRecord, Settings } from '../../../contract/index.js';
import { formatUsd } from '../../../common/format.js';
import { localDayKey } from '../../../common/local-day.js';

export { localDayKey };

/** What a job cost: billed when OpenRouter has said, else the estimate. */
export function jobCostUsd(record: Pick<JobRecord, 'billedCostUsd' | 'estimatedCostUsd'>): number {
  return record.billedCostUsd ?? record.estimatedCostUsd;
}

/**
 * What a job counts for against the day's budget: the larger of its bill and the gateway's figure. A bill asked
 * for before the job's last request settled (a hang-up whose cost came later, from OpenRouter's record) can miss it.
 */
export function jobSpendUsd(record: Pick<JobRecord, 'billedCostUsd' | 'estimatedCostUsd'>): number {
  return Math.max(record.billedCostUsd ?? 0, record.estimatedCostUsd);
}

export function spentOnDay(records: Iterable<JobRecord>, dayKey: string): number {
  let total = 0;
  for (const r of records) if (localDayKey(Date.parse(r.createdAt)) === dayKey) total += jobSpendUsd(r);
  return total;
}

/**
 * What would have been enough for a job its budget stopped: its last request the gateway refused (its note says
 * whether the job's cap or the day's refused it) could cost up to `ceilingUsd` beside what the job had spent, so a
 * cap of their sum, rounded up to the cent, lets it through. `count_tokens` refusals say nothing of a cap's size.
 */
export function budgetStopOf(record: Pick<JobRecord, 'estimatedCostUsd' | 'endReason'>, requests: readonly GatewayRequest[], perJobUsd: number): BudgetStop {
  const refused = requests.findLast((r) => r.outcome === 'refused' && r.status === 402 && !(r.note ?? '').startsWith('count_tokens'));
  const daily = refused ? (refused.note ?? '').startsWith('daily budget') : /daily budget/.test(record.endReason ?? '');
  const enoughUsd = refused && refused.ceilingUsd > 0 ? Math.ceil((record.estimatedCostUsd + refused.ceilingUsd) * 100 - 1e-9) / 100 : null;
  return { enoughUsd, perJobUsd, daily };
}

/** How long a read of the key's balance is served as it is (service/balance.ts); admission reads an older copy again before it refuses on it. */
export const BALANCE_MAX_AGE_MS = 60_000;

/**
 * How old a copy of the balance admission takes without waiting for a new one: two of the service's polls (every five
 * minutes, and at every delegate's end), and only a copy read after this service last spent (admission.ts
 * lastSpentAt). What such a copy cannot know is spending outside this service in those minutes (another app on the
 * same key); OpenRouter refuses a request past the credit itself (402: the job ends failed and says so). The caps a job
 * is held to never depend on it: the gateway meters each job against its own and the day's.
 */
export const BALANCE_STALE_MS = 10 * 60_000;

/** When a balance was read (the monitor's clock, the registry's); never, when it does not say. */
export function balanceReadAt(balance: Balance): number {
  const at = balance.fetchedAt === null ? Number.NaN : Date.parse(balance.fetchedAt);
  return Number.isNaN(at) ? Number.NEGATIVE_INFINITY : at;
}

/** Whether OpenRouter refused the key when the balance was read (401, or 402: no credit). */
export const keyRefused = (balance: Balance): boolean =>
  balance.keyProblemCode === 'openrouter_unauthorized' || balance.keyProblemCode === 'openrouter_payment_required';

/** The balance a new job may draw on; refuses at once when OpenRouter has rejected the key. */
export function remainingBalance(balance: Balance): number | null {
  if (keyRefused(balance) && balance.keyProblemCode) {
    // Claude Code would retry a dead key for minutes before giving up: say it now instead.
    throw new ServiceError(balance.keyProblemCode, `Nothing was started: ${balance.keyProblem ?? 'OpenRouter refused the key.'}`);
  }
  if (balance.key?.remainingUsd !== null && balance.key?.remainingUsd !== undefined) return balance.key.remainingUsd;
  if (balance.credits) return balance.credits.remainingUsd;
  return null;
}

/** What an active job may still spend. */
export function reservationOf(record: Pick<JobRecord, 'maxCostUsd' | 'estimatedCostUsd'>): number {
  return Math.max(0, record.maxCostUsd - record.estimatedCostUsd);
}

export interface BudgetCheck {
  settings: Settings;
  spentTodayUsd: number;
  reservedUsd: number;
  maxCostUsd: number;
  /** The key's remaining limit, or account credits left; null when OpenRouter sets no limit. */
  remainingUsd: number | null;
  /** Jobs admitted together, each capped at maxCostUsd (a fan-out): the per-job cap holds for each, the day and the reserve for their sum. */
  count?: number;
}

export function checkBudget({ settings, spentTodayUsd, reservedUsd, maxCostUsd, remainingUsd, count = 1 }: BudgetCheck): void {
  const { perJobUsd, perDayUsd } = settings.budgets;
  const setUsd = maxCostUsd * count;
  const these = count === 1 ? "this job's cap" : `these ${count} jobs' caps`;
  if (maxCostUsd > perJobUsd) {
    throw new ServiceError(
      'budget_refused',
      `max_cost_usd ${formatUsd(maxCostUsd)} is above the user's per-job budget of ${formatUsd(perJobUsd)}. Ask for ${formatUsd(perJobUsd)} or less; only the user can raise the budget.`,
    );
  }
  const committed = spentTodayUsd + reservedUsd;
  if (committed + setUsd > perDayUsd + 1e-9) {
    const left = Math.max(0, perDayUsd - committed);
    // A fan-out's advice is per job: max_cost_usd caps each of them.
    const each = count === 1 ? left : Math.floor((left / count) * 100) / 100;
    const total = count === 1 ? formatUsd(maxCostUsd) : `${formatUsd(setUsd)} (${formatUsd(maxCostUsd)} each)`;
    throw new ServiceError(
      'budget_refused',
      `The daily budget of ${formatUsd(perDayUsd)} would be exceeded: ${formatUsd(spentTodayUsd)} spent today and ${formatUsd(reservedUsd)} reserved by running jobs leave ${formatUsd(left)}, less than ${these} of ${total}.${each > 0 ? ` Start ${count === 1 ? 'it' : 'them'} with max_cost_usd ≤ ${formatUsd(each)}${count === 1 ? '' : ', or name fewer models'}, or wait.` : ' Wait until tomorrow, or ask the user to raise the daily budget.'}`,
    );
  }
  checkReserve({ settings, reservedUsd, maxCostUsd, remainingUsd, count });
}

/** The reserve alone: what the key has left, less what running jobs may still spend and these caps, keeps the user's reserve. */
export function checkReserve({ settings, reservedUsd, maxCostUsd, remainingUsd, count = 1 }: Omit<BudgetCheck, 'spentTodayUsd'>): void {
  const { reserveUsd } = settings.budgets;
  const setUsd = maxCostUsd * count;
  if (remainingUsd !== null && remainingUsd - reservedUsd - setUsd < reserveUsd) {
    const what = count === 1 ? `a job that may cost ${formatUsd(maxCostUsd)}` : `${count} jobs that may cost ${formatUsd(setUsd)} together`;
    throw new ServiceError(
      'budget_refused',
      `The OpenRouter balance is too low: ${formatUsd(remainingUsd)} left, ${formatUsd(reservedUsd)} reserved by running jobs, and the user keeps ${formatUsd(reserveUsd)} in reserve, so ${what} cannot start. Top up at https://openrouter.ai/settings/credits.`,
    );
  }
}
