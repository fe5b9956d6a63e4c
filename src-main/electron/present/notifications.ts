/**
 * Desktop notifications as data (docs/ARCHITECTURE.md §6): what to say when a job ends, and when the balance
 * or the day's spend crosses a threshold. Alerts remember what they showed (AlertMemory), so each
 * shows once per crossing, never on every poll; src-main/electron keeps the memory and shows them.
 */
import type { JobRecord, JobState } from '../../contract/jobs.js';
import type { AlertMemory, NotificationModel } from './desktop-types.js';
import { formatDuration, formatUsd, truncateEnd } from '../../common/format.js';
import { isLowBalance, modelLabel } from './tray.js';
import { oneLine } from './text.js';

/** Notification bodies stay short: platforms cut long ones, and a notification is not a log. */
export const MAX_NOTIFICATION_BODY_CHARS = 200;
/** Share of the daily budget at which the day's one budget alert shows. */
export const DAILY_BUDGET_ALERT_FRACTION = 0.8;
export const TOP_UP_URL = 'https://openrouter.ai/settings/credits';

type FinalState = Exclude<JobState, 'queued' | 'running' | 'verifying'>;

const TITLES: Record<FinalState, string> = {
  succeeded: 'Delegated job succeeded',
  failed: 'Delegated job failed',
  cancelled: 'Delegated job cancelled',
  budget_exceeded: 'Delegated job stopped: budget exceeded',
  timed_out: 'Delegated job timed out',
  lost: 'Delegated job lost',
};

const CRITICAL: ReadonlySet<JobState> = new Set<JobState>(['failed', 'budget_exceeded', 'timed_out', 'lost']);

export const NO_ALERTS_SHOWN: Readonly<AlertMemory> = Object.freeze({ lowBalance: false, dailyBudget: false, dayKey: null });

const isFinal = (state: JobState): state is FinalState => state !== 'queued' && state !== 'running' && state !== 'verifying';

function msOf(iso: string | null): number | null {
  if (iso === null) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

type EndedJob = Pick<
  JobRecord,
  'id' | 'model' | 'state' | 'startedAt' | 'endedAt' | 'estimatedCostUsd' | 'billedCostUsd' | 'maxCostUsd' | 'endReason' | 'isolation' | 'verify'
>;

function durationOf(job: EndedJob, now: number): string {
  const started = msOf(job.startedAt);
  if (started === null) return 'never started';
  return formatDuration(((msOf(job.endedAt) ?? now) - started) / 1000);
}

/** Billed when OpenRouter has said, else the estimate; both labelled, as everywhere. */
function costOf(job: EndedJob): string {
  const cost = job.billedCostUsd !== null ? `billed ${formatUsd(job.billedCostUsd)}` : `est. ${formatUsd(job.estimatedCostUsd)}`;
  return job.state === 'budget_exceeded' ? `${cost} of ${formatUsd(job.maxCostUsd)} cap` : cost;
}

/** A worktree job's branch in a few words: how many files it changed (docs/ISOLATION.md). */
function changesOf(job: EndedJob): string | null {
  const counts = job.isolation?.mode === 'worktree' ? job.isolation.changes : null;
  if (!counts) return null;
  return counts.files === 0 ? 'no files changed' : `${counts.files} file${counts.files === 1 ? '' : 's'} changed`;
}

/** Its verify commands in a few words (docs/VERIFY.md): "verify ✓ 2/2", "verify ✗ 1/2, fix round running"; null without. */
function verifyOf(job: EndedJob): string | null {
  const verify = job.verify;
  if (!verify || (verify.outcome !== 'passed' && verify.outcome !== 'failed')) return null;
  const passed = verify.runs.filter((run) => run.ok).length;
  const mark = `verify ${verify.outcome === 'passed' ? '✓' : '✗'} ${passed}/${verify.commands.length}`;
  return `${mark}${verify.flags.length > 0 ? ' ⚠' : ''}${verify.fixJobId ? ', fix round running' : ''}`;
}

/**
 * The notice for a job that just ended; null while it is still queued or running.
 * `resultFirstLine`: the first line of the delegate's answer, when it left one.
 */
export function presentJobEnded(job: EndedJob, resultFirstLine: string | null, now: number): NotificationModel | null {
  if (!isFinal(job.state)) return null;
  const extra = [changesOf(job), verifyOf(job)].filter((part) => part !== null).map((part) => ` · ${part}`);
  const summary = `${modelLabel(job.model)} · ${durationOf(job, now)} · ${costOf(job)}${extra.join('')}`;
  const answer = resultFirstLine === null ? '' : oneLine(resultFirstLine);
  const reason = job.endReason === null ? '' : oneLine(job.endReason);
  // A success is told by its answer; anything else by why it ended (the answer, if any, after it).
  const detail = job.state === 'succeeded' ? answer : reason || answer;
  const room = MAX_NOTIFICATION_BODY_CHARS - summary.length - 1;
  const body = detail && room > 0 ? `${summary}\n${truncateEnd(detail, room)}` : truncateEnd(summary, MAX_NOTIFICATION_BODY_CHARS);
  // A turn that did its work but failed its verify commands is not what "succeeded" promises.
  const failedVerify = job.state === 'succeeded' && job.verify?.outcome === 'failed';
  return {
    title: failedVerify ? 'Delegated job failed its verify commands' : TITLES[job.state],
    body,
    open: { kind: 'openSettings', page: 'jobs', jobId: job.id },
    urgency: CRITICAL.has(job.state) ? 'critical' : 'normal',
  };
}

export interface BalanceAlertInput {
  /** remainingBalanceUsd(balance): null when unknown (then the low-balance alert neither shows nor re-arms). */
  remainingUsd: number | null;
  lowBalanceUsd: number;
  spentTodayUsd: number;
  dailyBudgetUsd: number;
  /** The local day, e.g. "2026-11-30" (a new day re-arms the daily-budget alert). */
  dayKey: string;
}

function lowBalanceNotice(remainingUsd: number, lowBalanceUsd: number): NotificationModel {
  const empty = remainingUsd <= 0;
  return {
    title: empty ? 'OpenRouter balance is empty' : 'OpenRouter balance is low',
    body: `${formatUsd(remainingUsd)} left${empty ? '' : `, below your reserve of ${formatUsd(lowBalanceUsd)}`}: new delegated jobs cannot start. Top up at ${TOP_UP_URL}.`,
    open: { kind: 'openSettings', page: 'account' },
    urgency: 'critical',
  };
}

function dailyBudgetNotice(spentUsd: number, budgetUsd: number): NotificationModel {
  const spent = `Spent today: ${formatUsd(spentUsd)} of ${formatUsd(budgetUsd)}`;
  if (spentUsd >= budgetUsd) {
    return {
      title: 'Daily budget reached',
      body: `${spent}. New delegated jobs are refused until tomorrow, unless you raise the daily budget in Settings.`,
      open: { kind: 'openSettings', page: 'delegation' },
      urgency: 'critical',
    };
  }
  return {
    title: `Daily budget ${Math.floor((spentUsd / budgetUsd) * 100 + 1e-9)}% used`,
    body: `${spent}; ${formatUsd(budgetUsd - spentUsd)} left for delegated jobs today.`,
    open: { kind: 'openSettings', page: 'delegation' },
    urgency: 'normal',
  };
}

/**
 * Which alerts a fresh balance or spend figure calls for, and the memory to keep for the next poll.
 *
 * - Low balance: once when the remaining balance drops below `lowBalanceUsd` (the reserve, under
 *   which no job starts) or to zero; re-armed when it is back at or above it (a top-up).
 * - Daily budget: once a day, when the day's spend reaches 80 % of the daily budget (or more: a
 *   spend that jumps past 100 % says "reached"); re-armed by a new day, or when the spend falls
 *   back under 80 % (billed costs correct estimates, the user raises the budget). A budget of 0
 *   means "no delegation" and never alerts.
 */
export function balanceAlerts(memory: AlertMemory, input: BalanceAlertInput): { memory: AlertMemory; notifications: NotificationModel[] } {
  const notifications: NotificationModel[] = [];

  let lowBalance = memory.lowBalance;
  if (input.remainingUsd !== null) {
    const low = isLowBalance(input.remainingUsd, input.lowBalanceUsd);
    if (low && !lowBalance) notifications.push(lowBalanceNotice(input.remainingUsd, input.lowBalanceUsd));
    lowBalance = low;
  }

  let dailyBudget = memory.dayKey === input.dayKey ? memory.dailyBudget : false;
  const over = input.dailyBudgetUsd > 0 && input.spentTodayUsd >= input.dailyBudgetUsd * DAILY_BUDGET_ALERT_FRACTION;
  if (over && !dailyBudget) notifications.push(dailyBudgetNotice(input.spentTodayUsd, input.dailyBudgetUsd));
  dailyBudget = over;

  return { memory: { lowBalance, dailyBudget, dayKey: input.dayKey }, notifications };
}
