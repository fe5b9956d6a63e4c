/**
 * The tray app's notifications (desktop-app.ts): a job that ended while the app ran, told once, and the balance and
 * daily-budget alerts. What each says is decided by the pure presenters (present/notifications.ts); this part
 * remembers what was already told and keeps the shown notifications referenced so that their clicks still arrive.
 */
import { isActive } from '../contract/index.js';
import type { JobRecord } from '../contract/index.js';
import type { AlertMemory, NotificationModel } from './present/desktop-types.js';
import { NO_ALERTS_SHOWN, balanceAlerts, presentJobEnded } from './present/notifications.js';
import type { BalanceAlertInput } from './present/notifications.js';
import type { ServiceCall } from '../host/service-host.js';
import type { ElectronSurface, NotificationSurface } from './electron-surface.js';
import type { SettingsTarget } from './settings-window.js';

/** Notifications kept referenced (a collected notification loses its click handler). */
const MAX_LIVE_NOTIFICATIONS = 50;

export interface DesktopNotifierDeps {
  electron: Pick<ElectronSurface, 'Notification'>;
  /** The tray's calls to the service, typed by the contract (an ended job's answer). */
  call: ServiceCall;
  now: () => number;
  /** Whether the app is quitting: then nothing more is shown. */
  quitting: () => boolean;
  /** A notification was clicked: open the settings window where it points. */
  open: (target: SettingsTarget) => void;
}

export class DesktopNotifier {
  private readonly electron: Pick<ElectronSurface, 'Notification'>;
  private readonly call: ServiceCall;
  private readonly now: () => number;
  private readonly quitting: () => boolean;
  private readonly open: (target: SettingsTarget) => void;
  private alertMemory: AlertMemory = { ...NO_ALERTS_SHOWN };
  /** Jobs already announced: a job changes many times after it ends (billing), and is told once. */
  private readonly notifiedJobs = new Set<string>();
  private readonly liveNotifications = new Set<NotificationSurface>();
  private startedAt = 0;

  constructor(deps: DesktopNotifierDeps) {
    this.electron = deps.electron;
    this.call = deps.call;
    this.now = deps.now;
    this.quitting = deps.quitting;
    this.open = deps.open;
  }

  /** The app starts now: a job that ends from here on is news; one that ended before is history. */
  markStart(): void {
    this.startedAt = this.now();
  }

  /** Whether a job's change is an ending worth telling (the first time it is asked about that job). */
  takeNewEnding(job: JobRecord): boolean {
    if (isActive(job.state) || job.endedAt === null) return false;
    // Ended before this app started: history (its late billing, say), not news.
    if (Date.parse(job.endedAt) < this.startedAt || this.notifiedJobs.has(job.id)) return false;
    this.notifiedJobs.add(job.id);
    return true;
  }

  /** Tells that a job ended, with the first line of its answer. */
  async notifyJobEnded(job: JobRecord): Promise<void> {
    const model = presentJobEnded(job, await this.resultFirstLine(job.id), this.now());
    if (model) this.notify(model);
  }

  /** Shows the balance and daily-budget alerts that are due, each once until it clears (or the day changes). */
  checkAlerts(input: BalanceAlertInput): void {
    const { memory, notifications } = balanceAlerts(this.alertMemory, input);
    this.alertMemory = memory;
    for (const model of notifications) this.notify(model);
  }

  /** Lets go of the shown notifications: they stay in the notification centre; only our references go. */
  forget(): void {
    this.liveNotifications.clear();
  }

  private async resultFirstLine(jobId: string): Promise<string | null> {
    try {
      const result = await this.call('jobs.result', { jobId, waitSeconds: 0, maxChars: 1000 });
      return result.resultText?.split('\n').find((line) => line.trim() !== '') ?? null;
    } catch {
      return null;
    }
  }

  private notify(model: NotificationModel): void {
    const { Notification } = this.electron;
    if (this.quitting() || !Notification.isSupported()) return;
    const notification = new Notification({ title: model.title, body: model.body, urgency: model.urgency });
    notification.on('click', () => this.open({ page: model.open.page, jobId: model.open.jobId }));
    notification.on('close', () => this.liveNotifications.delete(notification));
    this.liveNotifications.add(notification);
    if (this.liveNotifications.size > MAX_LIVE_NOTIFICATIONS) {
      const oldest = this.liveNotifications.values().next().value;
      if (oldest) this.liveNotifications.delete(oldest);
    }
    notification.show();
  }
}
