/**
 * What the desktop shell shows, as data: the tray (icon, tooltip, menu) and notifications are pure
 * functions of service state into these shapes (present/tray.ts, present/notifications.ts); the
 * Electron code only turns them into Tray, Menu and Notification calls.
 */
import type { Balance, KeySource } from '../../contract/methods.js';
import type { JobRecord } from '../../contract/jobs.js';
import type { DelegationMode } from '../../contract/settings.js';

export type TrayIconState = 'idle' | 'running' | 'attention';

/** Everything the tray needs to know. */
export interface TrayState {
  now: number;
  keySource: KeySource;
  /** Last balance read; null before the first. */
  balance: Balance | null;
  /** When the balance was last read successfully (ms); null if never. */
  balanceAt: number | null;
  /** Queued and running jobs. */
  activeJobs: Array<Pick<JobRecord, 'id' | 'model' | 'state' | 'createdAt' | 'startedAt' | 'estimatedCostUsd' | 'maxCostUsd' | 'promptPreview'>>;
  /** The most recent job that ended badly (failed, timed_out, budget_exceeded, lost) and that the user has not looked at. */
  unseenFailure: Pick<JobRecord, 'id' | 'model' | 'state' | 'endReason'> | null;
  mode: DelegationMode;
  startAtLogin: boolean;
  spentTodayUsd: number;
  dailyBudgetUsd: number;
  /** Below this remaining balance the tray asks for attention (the reserve). */
  lowBalanceUsd: number;
  platform: NodeJS.Platform;
}

export type TrayAction =
  | { kind: 'refreshBalance' }
  | { kind: 'cancelJob'; jobId: string }
  /** `count`: how many jobs the confirmation must name. */
  | { kind: 'killAll'; count: number }
  | { kind: 'setMode'; mode: DelegationMode }
  | { kind: 'openSettings'; page?: 'account' | 'delegation' | 'jobs' | 'claude' | 'about'; jobId?: string }
  | { kind: 'openJobsFolder' }
  | { kind: 'toggleStartAtLogin' }
  | { kind: 'quit' };

export interface MenuItemModel {
  label?: string;
  type?: 'normal' | 'separator' | 'radio' | 'checkbox' | 'submenu';
  checked?: boolean;
  enabled?: boolean;
  action?: TrayAction;
  submenu?: MenuItemModel[];
  /** Tooltip-like detail some platforms show (macOS sublabel). */
  sublabel?: string;
}

export interface TrayView {
  icon: TrayIconState;
  tooltip: string;
  menu: MenuItemModel[];
}

export interface NotificationModel {
  title: string;
  body: string;
  /** Clicking opens the settings window here. */
  open: Extract<TrayAction, { kind: 'openSettings' }>;
  /** Failed, budget and balance notices are urgent; a success is not. */
  urgency: 'normal' | 'critical';
}

/** Which balance/budget alerts were already shown, so each shows once per threshold crossing. */
export interface AlertMemory {
  lowBalance: boolean;
  dailyBudget: boolean;
  /** The local day the daily-budget alert belongs to. */
  dayKey: string | null;
}
