/**
 * The tray as data (docs/ARCHITECTURE.md §6): icon, tooltip and menu are a pure function of service state;
 * src-main/electron only turns the TrayView into Tray and Menu calls and runs the chosen action.
 * Every label made from data is shortened and has '&' escaped (text.ts).
 */
import type { Balance } from '../../contract/methods.js';
import type { JobRecord, JobState } from '../../contract/jobs.js';
import type { DelegationMode } from '../../contract/settings.js';
import type { MenuItemModel, TrayIconState, TrayState, TrayView } from './desktop-types.js';
import { formatAge, formatDuration, formatUsd, shortenMiddle, truncateEnd } from '../../common/format.js';
import { escapeMenuLabel, oneLine } from './text.js';
import { keyCapWarning } from '../../common/key-cap.js';

export const APP_NAME = 'OpenRouter Delegate';
/** Jobs listed in the menu; the rest are one "… and N more" item that opens the jobs page. */
export const MAX_MENU_JOBS = 10;
/** A balance older than this gets an "as of … ago" line. */
export const STALE_BALANCE_MS = 15 * 60_000;
export const MAX_MODEL_LABEL_CHARS = 40;
/** Windows cuts tray tooltips at 127 characters; the others are kept as short. */
export const MAX_TOOLTIP_CHARS = 127;
const MAX_PROMPT_LABEL_CHARS = 50;
const MAX_PROBLEM_CHARS = 48;

export const MODE_LABELS: Record<DelegationMode, string> = {
  off: 'Delegation off',
  ondemand: 'On request only',
  auto: 'Automatic',
};
const MODE_ORDER: readonly DelegationMode[] = ['off', 'ondemand', 'auto'];

type ActiveJob = TrayState['activeJobs'][number];

/**
 * What the key may still spend, by the supervisor's rule: the key's remaining limit, else the
 * account credits left; null when neither is known (no limit and no management key).
 */
export function remainingBalanceUsd(balance: Balance | null): number | null {
  if (balance?.key?.remainingUsd !== null && balance?.key?.remainingUsd !== undefined) return balance.key.remainingUsd;
  return balance?.credits?.remainingUsd ?? null;
}

/** Below the user's reserve (no job can start there), or empty. */
export function isLowBalance(remainingUsd: number | null, lowBalanceUsd: number): boolean {
  return remainingUsd !== null && (remainingUsd < lowBalanceUsd || remainingUsd <= 0);
}

/**
 * OpenRouter answered that the key itself is the problem (refused, forbidden, out of credits):
 * only the user can fix that. Network trouble and rate limits pass on their own and do not count.
 */
const KEY_PROBLEMS_NEEDING_THE_USER = new Set<string>([
  'no_key',
  'openrouter_unauthorized',
  'openrouter_forbidden',
  'openrouter_payment_required',
  'keychain_unavailable',
]);

export function keyNeedsAttention(balance: Balance | null): boolean {
  return balance?.key === null && balance.keyProblemCode !== undefined && KEY_PROBLEMS_NEEDING_THE_USER.has(balance.keyProblemCode);
}

const SHORT_PROBLEMS: Record<string, string> = {
  no_key: 'no OpenRouter key',
  keychain_unavailable: 'keychain unavailable',
  openrouter_unauthorized: 'key refused by OpenRouter',
  openrouter_forbidden: 'key not allowed by OpenRouter',
  openrouter_payment_required: 'out of credits',
  openrouter_rate_limited: 'rate limited, try later',
  openrouter_server_error: 'OpenRouter error',
  openrouter_timeout: 'OpenRouter did not answer',
  openrouter_unreachable: 'OpenRouter unreachable',
  openrouter_bad_response: 'unexpected answer from OpenRouter',
};

function shortProblem(balance: Balance): string {
  const known = balance.keyProblemCode === undefined ? undefined : SHORT_PROBLEMS[balance.keyProblemCode];
  if (known) return known;
  if (!balance.keyProblem) return 'not read';
  const firstSentence = oneLine(balance.keyProblem).split(/(?<=[.!?])\s/)[0] ?? '';
  return truncateEnd(firstSentence.replace(/[.!?]$/, ''), MAX_PROBLEM_CHARS);
}

export const modelLabel = (model: string): string => shortenMiddle(oneLine(model), MAX_MODEL_LABEL_CHARS);

const msOf = (iso: string | null): number | null => {
  if (iso === null) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
};

/** Seconds a job has been running (or waiting, when queued). */
function elapsedSeconds(job: ActiveJob, now: number): number {
  const since = (job.state === 'queued' ? null : msOf(job.startedAt)) ?? msOf(job.createdAt) ?? now;
  return Math.max(0, (now - since) / 1000);
}

interface BalanceLines {
  items: MenuItemModel[];
  /** The tooltip's words for the same thing. */
  tooltip: string;
  /** A figure is shown, so its age matters. */
  showsFigure: boolean;
}

const disabled = (label: string): MenuItemModel => ({ label, enabled: false });
const separator: MenuItemModel = { type: 'separator' };

function balanceLines(state: TrayState): BalanceLines {
  const { balance } = state;
  if (state.keySource === 'none' || balance?.keyProblemCode === 'no_key') {
    return {
      items: [{ label: 'No OpenRouter key — open Settings', enabled: true, action: { kind: 'openSettings', page: 'account' } }],
      tooltip: 'no OpenRouter key',
      showsFigure: false,
    };
  }
  if (balance === null) return { items: [disabled('Balance: not read yet')], tooltip: 'balance not read yet', showsFigure: false };
  const key = balance.key;
  if (key === null) {
    const problem = escapeMenuLabel(shortProblem(balance));
    if (keyNeedsAttention(balance)) {
      return {
        items: [{ label: `Balance unknown: ${problem} — open Settings`, enabled: true, action: { kind: 'openSettings', page: 'account' } }],
        tooltip: shortProblem(balance),
        showsFigure: false,
      };
    }
    return { items: [disabled(`Balance unknown: ${problem}`)], tooltip: 'balance unknown', showsFigure: false };
  }
  const lines = keyBalanceLines(key, balance);
  if (keyCapWarning(key, state.dailyBudgetUsd) === null) return lines;
  return { ...lines, items: [...lines.items, { label: KEY_CAP_ITEM, enabled: true, action: { kind: 'openSettings', page: 'account' } }] };
}

/** The menu's note that the key's own limit is no backstop for the day budget (common/key-cap.ts); Settings says why. */
export const KEY_CAP_ITEM = 'Key has no limit near the day budget — open Settings';

function keyBalanceLines(key: NonNullable<Balance['key']>, balance: Balance): BalanceLines {
  if (key.limitUsd !== null && key.remainingUsd !== null) {
    const left = formatUsd(key.remainingUsd);
    const reset = key.limitReset ? ` (resets ${key.limitReset})` : '';
    return { items: [disabled(`Balance: ${left} of ${formatUsd(key.limitUsd)} left${reset}`)], tooltip: `${left} left`, showsFigure: true };
  }
  if (balance.credits !== null) {
    const left = formatUsd(balance.credits.remainingUsd);
    return { items: [disabled(`Credits: ${left} left`)], tooltip: `${left} credits left`, showsFigure: true };
  }
  const used = key.usageUsd === null ? '' : `, ${formatUsd(key.usageUsd)} used`;
  return { items: [disabled(`Key: no spending limit${used}`)], tooltip: 'key without limit', showsFigure: true };
}

function staleAge(state: TrayState): string | null {
  if (state.balanceAt === null) return null;
  const age = state.now - state.balanceAt;
  return age > STALE_BALANCE_MS ? formatAge(age / 1000) : null;
}

function jobItem(job: ActiveJob, now: number): MenuItemModel {
  const model = escapeMenuLabel(modelLabel(job.model));
  const elapsed = formatDuration(elapsedSeconds(job, now));
  const label = job.state === 'queued' ? `${model} — queued ${elapsed}` : `${model} — ${elapsed}, est. ${formatUsd(job.estimatedCostUsd)}`;
  const preview = escapeMenuLabel(truncateEnd(oneLine(job.promptPreview), MAX_PROMPT_LABEL_CHARS));
  const submenu: MenuItemModel[] = [];
  if (preview) submenu.push(disabled(`“${preview}”`));
  submenu.push(
    disabled(`Estimated cost: ${formatUsd(job.estimatedCostUsd)} of ${formatUsd(job.maxCostUsd)} cap`),
    separator,
    { label: 'Cancel', action: { kind: 'cancelJob', jobId: job.id } },
    { label: 'Show in Settings', action: { kind: 'openSettings', page: 'jobs', jobId: job.id } },
  );
  return { label, type: 'submenu', submenu };
}

/** Running jobs first, longest running at the top; then the queue in its order. */
function orderJobs(jobs: readonly ActiveJob[]): ActiveJob[] {
  const time = (job: ActiveJob): number => (job.state === 'queued' ? null : msOf(job.startedAt)) ?? msOf(job.createdAt) ?? 0;
  const rank = (job: ActiveJob): number => (job.state === 'queued' ? 1 : 0);
  return [...jobs].sort((a, b) => rank(a) - rank(b) || time(a) - time(b));
}

const FAILURE_WORDS: Partial<Record<JobState, string>> = {
  failed: 'Job failed',
  timed_out: 'Job timed out',
  budget_exceeded: 'Job stopped at its budget',
  lost: 'Job lost',
};

const FAILURE_TOOLTIPS: Partial<Record<JobState, string>> = {
  failed: 'a job failed',
  timed_out: 'a job timed out',
  budget_exceeded: 'a job hit its budget',
  lost: 'a job was lost',
};

function failureItem(failure: Pick<JobRecord, 'id' | 'model' | 'state'>): MenuItemModel {
  const words = FAILURE_WORDS[failure.state] ?? 'Job ended';
  return { label: `${words}: ${escapeMenuLabel(modelLabel(failure.model))} — show`, action: { kind: 'openSettings', page: 'jobs', jobId: failure.id } };
}

function jobsSection(state: TrayState): MenuItemModel[] {
  const jobs = orderJobs(state.activeJobs);
  const items: MenuItemModel[] = [];
  if (jobs.length === 0) items.push(disabled('No jobs running'));
  for (const job of jobs.slice(0, MAX_MENU_JOBS)) items.push(jobItem(job, state.now));
  if (jobs.length > MAX_MENU_JOBS) {
    items.push({ label: `… and ${jobs.length - MAX_MENU_JOBS} more`, action: { kind: 'openSettings', page: 'jobs' } });
  }
  items.push(
    jobs.length > 0
      ? { label: `Kill all jobs (${jobs.length})…`, enabled: true, action: { kind: 'killAll', count: jobs.length } }
      : { label: 'Kill all jobs', enabled: false },
  );
  if (state.unseenFailure) items.push(failureItem(state.unseenFailure));
  return items;
}

function lowBalanceLine(remainingUsd: number | null, lowBalanceUsd: number): string {
  if (remainingUsd !== null && remainingUsd <= 0) return 'Nothing left: new jobs cannot start';
  return `Below your reserve of ${formatUsd(lowBalanceUsd)}: new jobs cannot start`;
}

function iconOf(state: TrayState, low: boolean): TrayIconState {
  if (state.keySource === 'none' || keyNeedsAttention(state.balance) || low || state.unseenFailure !== null) return 'attention';
  return state.activeJobs.length > 0 ? 'running' : 'idle';
}

function tooltipOf(state: TrayState, balance: BalanceLines, age: string | null, low: boolean): string {
  const parts = [`${balance.tooltip}${age ? ` (${age})` : ''}`];
  const running = state.activeJobs.filter((j) => j.state !== 'queued').length;
  const queued = state.activeJobs.length - running;
  const jobs = [running > 0 ? `${running} running` : '', queued > 0 ? `${queued} queued` : ''].filter(Boolean).join(', ');
  if (jobs) parts.push(jobs);
  if (low) parts.push('low balance');
  if (state.unseenFailure) parts.push(FAILURE_TOOLTIPS[state.unseenFailure.state] ?? 'a job ended');
  if (state.mode === 'off') parts.push('delegation off');
  return truncateEnd(`${APP_NAME} — ${parts.join(' · ')}`, MAX_TOOLTIP_CHARS);
}

export function presentTray(state: TrayState): TrayView {
  const balance = balanceLines(state);
  const age = balance.showsFigure ? staleAge(state) : null;
  const low = state.keySource !== 'none' && isLowBalance(remainingBalanceUsd(state.balance), state.lowBalanceUsd);
  const budgetReached = state.spentTodayUsd >= state.dailyBudgetUsd;

  const menu: MenuItemModel[] = [
    ...balance.items,
    ...(age ? [disabled(`As of ${age}`)] : []),
    ...(low ? [disabled(lowBalanceLine(remainingBalanceUsd(state.balance), state.lowBalanceUsd))] : []),
    { label: 'Refresh balance', enabled: state.keySource !== 'none', action: { kind: 'refreshBalance' } },
    disabled(`Spent today: ${formatUsd(state.spentTodayUsd)} of ${formatUsd(state.dailyBudgetUsd)}${budgetReached ? ' — daily budget reached' : ''}`),
    separator,
    ...jobsSection(state),
    separator,
    disabled('Delegation mode'),
    ...MODE_ORDER.map((mode): MenuItemModel => ({ label: MODE_LABELS[mode], type: 'radio', checked: state.mode === mode, action: { kind: 'setMode', mode } })),
    separator,
    { label: 'Settings…', action: { kind: 'openSettings' } },
    { label: 'Open jobs folder', action: { kind: 'openJobsFolder' } },
    { label: 'Start at login', type: 'checkbox', checked: state.startAtLogin, action: { kind: 'toggleStartAtLogin' } },
    { label: 'Quit', action: { kind: 'quit' } },
  ];
  return { icon: iconOf(state, low), tooltip: tooltipOf(state, balance, age, low), menu };
}

/**
 * The file in resources/tray/ for an icon state: macOS gets the template image (it tints it for
 * the menu bar itself); elsewhere a light glyph on a dark taskbar or panel, a dark one on a light one.
 */
export function trayIconFile(icon: TrayIconState, platform: NodeJS.Platform, darkBar: boolean): string {
  if (platform === 'darwin') return `tray-${icon}Template.png`;
  return `tray-${icon}-${darkBar ? 'light' : 'dark'}.png`;
}
