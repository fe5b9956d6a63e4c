/**
 * The tray app (docs/ARCHITECTURE.md §6): hosts the same service core as `openrouter-delegate serve` and adds a
 * tray, notifications and the settings window around it. What the tray and the notifications say is
 * decided by the pure presenters in src-main/electron/present; this class gathers their input from
 * the service's answers and events, turns their output into Electron calls, and runs the menu's actions
 * as contract calls. One route to the service, the same as every client's: its dispatcher (typed calls)
 * and its events, never its internals. Electron and the service come in through the constructor
 * (ElectronSurface, HostedService), so tests run all of this against a fake Electron and the real service.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { isActive } from '../contract/index.js';
import type { Balance, EventName, EventOf, JobRecord, KeySource, Settings } from '../contract/index.js';
import type { AlertMemory, NotificationModel, TrayAction, TrayState } from './present/desktop-types.js';
import { NO_ALERTS_SHOWN, balanceAlerts, presentJobEnded } from './present/notifications.js';
import { presentTray, remainingBalanceUsd, trayIconFile } from './present/tray.js';
import { localDayKey } from '../common/local-day.js';
import type { HostedService, ServiceCall } from '../host/service-host.js';
import { AlreadyRunningError } from '../ipc/server.js';
import type { ElectronSurface, MessageBoxOptions, NotificationSurface, TraySurface } from './electron-surface.js';
import { registerContractIpc } from './ipc-main.js';
import { menuTemplate } from './menu-template.js';
import { SettingsWindow } from './settings-window.js';
import type { SettingsTarget } from './settings-window.js';
import { errorMessage } from '../common/errors.js';

export interface DesktopAppPaths {
  /** The folder of tray icons (resources/tray): tray-<state>-<dark|light>.png, tray-<state>Template.png. */
  icons: string;
  /** The built preload (dist/electron/preload.cjs), absolute. */
  preload: string;
  /** The settings page's URL: app://settings/index.html (page-protocol.ts), the built renderer. */
  page: string;
}

export interface DesktopAppDeps {
  electron: ElectronSurface;
  service: HostedService;
  paths: DesktopAppPaths;
  platform?: NodeJS.Platform;
  now?: () => number;
  log?: (line: string) => void;
  /** While jobs run, how often the menu's elapsed times are redrawn (ms). */
  elapsedRefreshMs?: number;
}

export type LaunchOutcome =
  /** The tray is up and the service serving. */
  | 'started'
  /** Another tray app has this home: it was asked to show its settings window; this one quits. */
  | 'second-instance'
  /** A headless service has this home; this app must not start a second one. */
  | 'already-running';

/** The client name of calls the tray itself makes through the contract. */
export const TRAY_CLIENT = 'tray';
/** Notifications kept referenced (a collected notification loses its click handler). */
const MAX_LIVE_NOTIFICATIONS = 50;
const BAD_ENDINGS = new Set<JobRecord['state']>(['failed', 'timed_out', 'budget_exceeded', 'lost']);

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export class DesktopApp {
  private readonly electron: ElectronSurface;
  private readonly service: HostedService;
  /** Every call the tray makes, typed by the contract, through the service's dispatcher. */
  private readonly call: ServiceCall;
  private readonly paths: DesktopAppPaths;
  private readonly platform: NodeJS.Platform;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private readonly elapsedRefreshMs: number;
  readonly settingsWindow: SettingsWindow;

  private tray: TraySurface | null = null;
  private shown: { icon: string; tooltip: string; menu: string } | null = null;
  private renderQueued = false;
  private elapsedTimer: NodeJS.Timeout | null = null;
  private balance: Balance | null = null;
  private balanceAt: number | null = null;
  private keySource: KeySource = 'none';
  /** What the tray draws from, kept current by the service's events (render is synchronous). */
  private settings: Settings | null = null;
  private readonly activeJobs = new Map<string, JobRecord>();
  private spentTodayUsd = 0;
  /** Jobs some event has told of: newer than any answer read before it. */
  private readonly heardJobs = new Set<string>();
  private spendingRead: { running: boolean; again: boolean } = { running: false, again: false };
  /** Asked of the OS once and after each toggle, not on every redraw (macOS asks a system service). */
  private startAtLogin = false;
  private unseenFailure: TrayState['unseenFailure'] = null;
  private alertMemory: AlertMemory = { ...NO_ALERTS_SHOWN };
  /** Jobs already announced: a job changes many times after it ends (billing), and is told once. */
  private readonly notifiedJobs = new Set<string>();
  private readonly liveNotifications = new Set<NotificationSurface>();
  private startedAt = 0;
  private unsubscribeEvents: (() => void) | null = null;
  private unregisterIpc: (() => void) | null = null;
  private started = false;
  /** A settings window asked for before the service was up: opened once it is (its calls need the service). */
  private pendingOpen: SettingsTarget | null = null;
  private quitting = false;
  private quitPrompt: Promise<void> | null = null;

  constructor(deps: DesktopAppDeps) {
    this.electron = deps.electron;
    this.service = deps.service;
    this.call = deps.service.caller(TRAY_CLIENT);
    this.paths = deps.paths;
    this.platform = deps.platform ?? process.platform;
    this.now = deps.now ?? Date.now;
    this.log = deps.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.elapsedRefreshMs = deps.elapsedRefreshMs ?? 1000;
    this.settingsWindow = new SettingsWindow({
      electron: this.electron,
      preloadPath: this.paths.preload,
      pageUrl: this.paths.page,
      platform: this.platform,
      log: this.log,
    });
  }

  /**
   * The whole start, from the entry point: one app per home (Electron's lock, keyed by a userData
   * folder inside the home), then the service, then the tray. Call before `app` is ready.
   */
  async launch(): Promise<LaunchOutcome> {
    const { app } = this.electron;
    // Electron's single-instance lock is per userData folder: one per home, so homes stay isolated.
    app.setPath('userData', path.join(this.service.locations.data, 'electron'));
    if (!app.requestSingleInstanceLock()) {
      app.quit();
      return 'second-instance';
    }
    app.on('second-instance', () => this.openSettings({}));
    // A tray app lives on when its window closes.
    app.on('window-all-closed', () => undefined);
    app.on('before-quit', (event) => {
      if (this.quitting) return;
      // Cmd-Q, the dock, an OS request: the same question as the menu's Quit.
      event.preventDefault();
      void this.quit();
    });
    await app.whenReady();
    if (this.platform === 'darwin') app.dock?.hide();
    return this.start();
  }

  /** Starts the service and shows the tray (the app must be ready). */
  async start(): Promise<'started' | 'already-running'> {
    this.startedAt = this.now();
    // Before the service starts: jobs found dead at start-up end then, and are worth a notice.
    this.unsubscribeEvents = this.service.onEvent((event, data) => this.onServiceEvent(event, data));
    try {
      await this.service.start();
    } catch (error) {
      this.unsubscribeEvents();
      this.unsubscribeEvents = null;
      if (error instanceof AlreadyRunningError) {
        this.log(
          `${error.message} The tray app hosts that same service, so it does not start a second one: stop the running one with \`openrouter-delegate stop\`, then start the app again.`,
        );
        return 'already-running';
      }
      throw error;
    }
    this.service.onStopped(() => {
      // Stopped from outside (`openrouter-delegate stop`): nothing left to host.
      if (this.quitting) return;
      this.closeUi();
      this.electron.app.quit();
    });
    await this.readState();
    this.startAtLogin = this.electron.app.getLoginItemSettings().openAtLogin;
    this.unregisterIpc = registerContractIpc({
      ipcMain: this.electron.ipcMain,
      dispatch: this.service.dispatch,
      onEvent: (listener) => this.service.onEvent(listener),
      trusts: (event) => this.settingsWindow.trusts(event),
      target: () => this.settingsWindow.webContents,
      log: this.log,
    });
    this.tray = new this.electron.Tray(this.iconPath('idle'));
    this.electron.nativeTheme.on('updated', () => this.render());
    this.render();
    this.checkAlerts();
    this.call('balance.get', { refresh: true }).catch((error: unknown) => this.log(`balance: ${errorMessage(error)}`));
    this.started = true;
    if (this.pendingOpen) this.openSettings(this.pendingOpen);
    this.pendingOpen = null;
    return 'started';
  }

  /** The menu's Quit: asks what to do with running jobs, stops the service, quits. */
  quit(): Promise<void> {
    this.quitPrompt ??= this.askAndQuit().finally(() => {
      this.quitPrompt = null;
    });
    return this.quitPrompt;
  }

  /** Stops everything without asking (signals, tests); jobs keep running unless killJobs. */
  async shutdown(options: { killJobs?: boolean } = {}): Promise<void> {
    this.quitting = true;
    this.closeUi();
    await this.service.stop({ killJobs: options.killJobs === true });
  }

  /** Runs one menu action. Failures are logged and, where the user asked for something, told. */
  async handleAction(action: TrayAction): Promise<void> {
    try {
      await this.runAction(action);
    } catch (error) {
      this.log(`tray: ${action.kind} failed: ${errorMessage(error)}`);
      await this.tell({ type: 'error', message: 'That did not work.', detail: errorMessage(error), buttons: ['OK'] });
    } finally {
      this.render();
    }
  }

  openSettings(target: SettingsTarget): void {
    if (this.quitting) return;
    if (!this.started) {
      this.pendingOpen = target;
      return;
    }
    // Opening the window is looking: the failure the tray was pointing at has been seen.
    this.unseenFailure = null;
    this.settingsWindow.open(target);
    this.scheduleRender();
  }

  // ── service → tray and notifications ──────────────────────────────────────────────────────

  /**
   * The tray's starting picture, from the calls any client makes; the events keep it current from then on.
   * A job some event has told of is as new as this answer or newer, and stays as the event said.
   */
  private async readState(): Promise<void> {
    const [settings, secrets, running, queued] = await Promise.all([
      this.call('settings.get', {}),
      this.call('secrets.status', {}).catch(() => null),
      this.call('jobs.list', { state: 'running', limit: 500 }),
      this.call('jobs.list', { state: 'queued', limit: 500 }),
    ]);
    this.settings ??= settings;
    this.keySource = secrets?.apiKey.source ?? 'none';
    for (const job of [running, queued].flatMap((list) => list.conversations.flatMap((c) => c.jobs))) {
      if (!this.heardJobs.has(job.id)) this.activeJobs.set(job.id, job);
    }
    this.spentTodayUsd = running.spentTodayUsd;
  }

  /** Today's spending, read again after jobs change: one read at a time, and one more if they changed meanwhile. */
  private readSpending(): void {
    if (this.quitting) return;
    if (this.spendingRead.running) {
      this.spendingRead.again = true;
      return;
    }
    this.spendingRead.running = true;
    this.call('jobs.list', { limit: 1 })
      .then((list) => {
        this.spentTodayUsd = list.spentTodayUsd;
        this.checkAlerts();
        this.scheduleRender();
      })
      .catch((error: unknown) => this.log(`tray: today's spending: ${errorMessage(error)}`))
      .finally(() => {
        this.spendingRead.running = false;
        if (this.spendingRead.again) {
          this.spendingRead.again = false;
          this.readSpending();
        }
      });
  }

  /** Jobs queued or running now, as the service counts them (not as the menu was drawn). */
  private async activeCount(): Promise<number> {
    const list = await this.call('jobs.list', { limit: 1 });
    return list.running + list.queued;
  }

  private onServiceEvent(event: EventName, data: unknown): void {
    if (event === 'settings.changed') {
      this.settings = data as EventOf<'settings.changed'>;
    } else if (event === 'secrets.changed') {
      this.keySource = (data as EventOf<'secrets.changed'>).apiKey.source;
    } else if (event === 'balance.changed') {
      const balance = data as EventOf<'balance.changed'>;
      this.balance = balance;
      this.keySource = balance.keySource;
      if (balance.key !== null) this.balanceAt = balance.fetchedAt ? Date.parse(balance.fetchedAt) : this.now();
    } else if (event === 'job.changed') {
      this.onJobChanged((data as EventOf<'job.changed'>).job);
    }
    this.checkAlerts();
    this.scheduleRender();
  }

  private onJobChanged(job: JobRecord): void {
    this.heardJobs.add(job.id);
    if (isActive(job.state)) this.activeJobs.set(job.id, job);
    else this.activeJobs.delete(job.id);
    this.readSpending();
    if (isActive(job.state) || job.endedAt === null) return;
    // Ended before this app started: history (its late billing, say), not news.
    if (Date.parse(job.endedAt) < this.startedAt || this.notifiedJobs.has(job.id)) return;
    this.notifiedJobs.add(job.id);
    if (BAD_ENDINGS.has(job.state)) this.unseenFailure = { id: job.id, model: job.model, state: job.state, endReason: job.endReason };
    void this.notifyJobEnded(job);
  }

  private async notifyJobEnded(job: JobRecord): Promise<void> {
    const model = presentJobEnded(job, await this.resultFirstLine(job.id), this.now());
    if (model) this.notify(model);
  }

  private async resultFirstLine(jobId: string): Promise<string | null> {
    try {
      const result = await this.call('jobs.result', { jobId, waitSeconds: 0, maxChars: 1000 });
      return result.resultText?.split('\n').find((line) => line.trim() !== '') ?? null;
    } catch {
      return null;
    }
  }

  private checkAlerts(): void {
    const { settings } = this;
    if (this.quitting || !settings) return;
    const { memory, notifications } = balanceAlerts(this.alertMemory, {
      remainingUsd: remainingBalanceUsd(this.balance),
      lowBalanceUsd: settings.budgets.reserveUsd,
      spentTodayUsd: this.spentTodayUsd,
      dailyBudgetUsd: settings.budgets.perDayUsd,
      dayKey: localDayKey(this.now()),
    });
    this.alertMemory = memory;
    for (const model of notifications) this.notify(model);
  }

  private notify(model: NotificationModel): void {
    const { Notification } = this.electron;
    if (this.quitting || !Notification.isSupported()) return;
    const notification = new Notification({ title: model.title, body: model.body, urgency: model.urgency });
    notification.on('click', () => this.openSettings({ page: model.open.page, jobId: model.open.jobId }));
    notification.on('close', () => this.liveNotifications.delete(notification));
    this.liveNotifications.add(notification);
    if (this.liveNotifications.size > MAX_LIVE_NOTIFICATIONS) {
      const oldest = this.liveNotifications.values().next().value;
      if (oldest) this.liveNotifications.delete(oldest);
    }
    notification.show();
  }

  // ── the tray ──────────────────────────────────────────────────────────────────────────────

  private trayState(settings: Settings): TrayState {
    return {
      now: this.now(),
      keySource: this.keySource,
      balance: this.balance,
      balanceAt: this.balanceAt,
      activeJobs: [...this.activeJobs.values()].map((job) => ({
        id: job.id,
        model: job.model,
        state: job.state,
        createdAt: job.createdAt,
        startedAt: job.startedAt,
        estimatedCostUsd: job.estimatedCostUsd,
        maxCostUsd: job.maxCostUsd,
        promptPreview: job.promptPreview,
      })),
      unseenFailure: this.unseenFailure,
      mode: settings.mode,
      startAtLogin: this.startAtLogin,
      spentTodayUsd: this.spentTodayUsd,
      dailyBudgetUsd: settings.budgets.perDayUsd,
      lowBalanceUsd: settings.budgets.reserveUsd,
      platform: this.platform,
    };
  }

  private iconPath(icon: Parameters<typeof trayIconFile>[0]): string {
    return path.join(this.paths.icons, trayIconFile(icon, this.platform, this.darkBar()));
  }

  /** Whether the tray sits on a dark bar: Linux panels are dark in nearly every desktop; elsewhere the theme says. */
  private darkBar(): boolean {
    return this.platform === 'linux' || this.electron.nativeTheme.shouldUseDarkColors;
  }

  /** Many events arrive together (a job ends: state, costs, balance): one render for the lot. */
  private scheduleRender(): void {
    if (this.renderQueued) return;
    this.renderQueued = true;
    setImmediate(() => {
      this.renderQueued = false;
      this.render();
    });
  }

  /** Draws the tray from the presenter; touches Electron only for what changed. */
  render(): void {
    const { tray, settings } = this;
    if (!tray || !settings || this.quitting) return;
    const state = this.trayState(settings);
    const view = presentTray(state);
    const icon = this.iconPath(view.icon);
    const menu = JSON.stringify(view.menu);
    if (this.shown?.icon !== icon) tray.setImage(icon);
    if (this.shown?.tooltip !== view.tooltip) tray.setToolTip(view.tooltip);
    if (this.shown?.menu !== menu)
      tray.setContextMenu(this.electron.Menu.buildFromTemplate(menuTemplate(view.menu, (action) => void this.handleAction(action))));
    this.shown = { icon, tooltip: view.tooltip, menu };
    this.keepElapsedFresh(state.activeJobs.length > 0);
  }

  /**
   * Running jobs show their elapsed time in the menu, in seconds; no event says "a second passed".
   * So while (and only while) a job runs, the tray is redrawn once a second; the redraw is a pure
   * function call and touches Electron only when a label changed.
   */
  private keepElapsedFresh(jobsRunning: boolean): void {
    if (jobsRunning && !this.elapsedTimer) {
      this.elapsedTimer = setInterval(() => this.render(), this.elapsedRefreshMs);
      this.elapsedTimer.unref();
    } else if (!jobsRunning && this.elapsedTimer) {
      clearInterval(this.elapsedTimer);
      this.elapsedTimer = null;
    }
  }

  // ── actions ───────────────────────────────────────────────────────────────────────────────

  private async runAction(action: TrayAction): Promise<void> {
    const { service } = this;
    switch (action.kind) {
      case 'refreshBalance':
        await this.call('balance.get', { refresh: true });
        return;
      case 'cancelJob':
        await this.call('jobs.cancel', { jobId: action.jobId });
        return;
      case 'killAll':
        await this.killAll();
        return;
      case 'setMode':
        // The same patch and validation as the CLI and the socket: the settings file, then every bridge hears of it.
        await this.call('settings.update', { patch: { mode: action.mode } });
        return;
      case 'openSettings':
        this.openSettings({ page: action.page, jobId: action.jobId });
        return;
      case 'openJobsFolder': {
        await mkdir(service.locations.jobsDir, { recursive: true });
        const problem = await this.electron.shell.openPath(service.locations.jobsDir);
        if (problem) throw new Error(`${service.locations.jobsDir} could not be opened: ${problem}`);
        return;
      }
      case 'toggleStartAtLogin': {
        const { app } = this.electron;
        app.setLoginItemSettings({ openAtLogin: !app.getLoginItemSettings().openAtLogin });
        this.startAtLogin = app.getLoginItemSettings().openAtLogin;
        return;
      }
      case 'quit':
        await this.quit();
        return;
    }
  }

  private async killAll(): Promise<void> {
    // The count at the moment of asking, not when the menu was drawn.
    const count = await this.activeCount();
    if (count === 0) return;
    const answer = await this.ask({
      type: 'warning',
      message: `Kill ${plural(count, 'delegated job')}?`,
      detail: 'Each job ends now, with every process it started. What the jobs did so far stays in their folders.',
      buttons: [`Kill ${plural(count, 'job')}`, 'Cancel'],
      defaultId: 1,
      cancelId: 1,
    });
    if (answer === 0) await this.call('jobs.killAll', {});
  }

  private async askAndQuit(): Promise<void> {
    if (this.quitting) return;
    const count = await this.activeCount();
    let killJobs = false;
    if (count > 0) {
      const answer = await this.ask({
        type: 'question',
        message: `${plural(count, 'delegated job')} ${count === 1 ? 'is' : 'are'} still running.`,
        detail:
          'Kept jobs carry on without the app and are picked up again the next time it starts (their costs still count). Killed jobs end now, with everything they started.',
        buttons: ['Keep them running', 'Kill them', 'Cancel'],
        defaultId: 0,
        cancelId: 2,
      });
      if (answer !== 0 && answer !== 1) return;
      killJobs = answer === 1;
    }
    await this.shutdown({ killJobs });
    this.electron.app.quit();
  }

  private async ask(options: Omit<MessageBoxOptions, 'noLink'>): Promise<number> {
    return (await this.electron.dialog.showMessageBox({ ...options, noLink: true })).response;
  }

  private async tell(options: Omit<MessageBoxOptions, 'noLink'>): Promise<void> {
    await this.ask(options).catch(() => undefined);
  }

  private closeUi(): void {
    this.quitting = true;
    if (this.elapsedTimer) clearInterval(this.elapsedTimer);
    this.elapsedTimer = null;
    this.unsubscribeEvents?.();
    this.unsubscribeEvents = null;
    this.unregisterIpc?.();
    this.unregisterIpc = null;
    this.settingsWindow.destroy();
    this.tray?.destroy();
    this.tray = null;
    // Shown notifications stay in the notification centre; only our references go.
    this.liveNotifications.clear();
  }
}
