/**
 * The tray app (docs/ARCHITECTURE.md §6): hosts the same service core as `openrouter-delegate serve` and adds a
 * tray, notifications and the settings window around it. What the tray and the notifications say is
 * decided by the pure presenters in src-main/electron/present; this class gathers their input from
 * the service's answers and events, turns their output into Electron calls, and runs the menu's actions
 * as contract calls. One route to the service, the same as every client's: its dispatcher (typed calls)
 * and its events, never its internals. Electron and the service come in through the constructor
 * (ElectronSurface, HostedService), so tests run all of this against a fake Electron and the real service.
 *
 * This class is the composition and the app's life (launch, start, quit); its parts own their state: the
 * ServiceMirror what the service said, the TrayRenderer the tray, the DesktopNotifier the notifications, and
 * desktop-dialogs.ts the questions asked before killing or quitting.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { JobRecord } from '../contract/index.js';
import type { EventName } from '../contract/index.js';
import type { TrayAction } from './present/desktop-types.js';
import { remainingBalanceUsd } from './present/tray.js';
import { localDayKey } from '../common/local-day.js';
import type { HostedService, ServiceCall } from '../host/service-host.js';
import { AlreadyRunningError } from '../ipc/server.js';
import type { ElectronSurface } from './electron-surface.js';
import { registerContractIpc } from './ipc-main.js';
import { SettingsWindow } from './settings-window.js';
import type { SettingsTarget } from './settings-window.js';
import { DesktopNotifier } from './desktop-notifications.js';
import { askAboutRunningJobs, confirmKillAll, tellActionFailed } from './desktop-dialogs.js';
import { ServiceMirror } from './service-mirror.js';
import { TrayRenderer } from './tray-renderer.js';
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
const BAD_ENDINGS = new Set<JobRecord['state']>(['failed', 'timed_out', 'budget_exceeded', 'lost']);

export class DesktopApp {
  private readonly electron: ElectronSurface;
  private readonly service: HostedService;
  /** Every call the tray makes, typed by the contract, through the service's dispatcher. */
  private readonly call: ServiceCall;
  private readonly platform: NodeJS.Platform;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  readonly settingsWindow: SettingsWindow;
  /** What the tray draws from, kept current by the service's events (render is synchronous). */
  private readonly mirror: ServiceMirror;
  private readonly trayRenderer: TrayRenderer;
  private readonly notifier: DesktopNotifier;

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
    this.platform = deps.platform ?? process.platform;
    this.now = deps.now ?? Date.now;
    this.log = deps.log ?? ((line) => process.stderr.write(`${line}\n`));
    const quitting = (): boolean => this.quitting;
    this.settingsWindow = new SettingsWindow({
      electron: this.electron,
      preloadPath: deps.paths.preload,
      pageUrl: deps.paths.page,
      platform: this.platform,
      log: this.log,
    });
    this.mirror = new ServiceMirror({
      call: this.call,
      now: this.now,
      log: this.log,
      quitting,
      onSpendingRead: () => {
        this.checkAlerts();
        this.trayRenderer.scheduleRender();
      },
    });
    this.trayRenderer = new TrayRenderer({
      electron: this.electron,
      mirror: this.mirror,
      icons: deps.paths.icons,
      platform: this.platform,
      now: this.now,
      elapsedRefreshMs: deps.elapsedRefreshMs ?? 1000,
      quitting,
      onAction: (action) => void this.handleAction(action),
    });
    this.notifier = new DesktopNotifier({ electron: this.electron, call: this.call, now: this.now, quitting, open: (target) => this.openSettings(target) });
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
    this.notifier.markStart();
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
    await this.mirror.readState();
    this.trayRenderer.readStartAtLogin();
    this.unregisterIpc = registerContractIpc({
      ipcMain: this.electron.ipcMain,
      dispatch: this.service.dispatch,
      onEvent: (listener) => this.service.onEvent(listener),
      trusts: (event) => this.settingsWindow.trusts(event),
      target: () => this.settingsWindow.webContents,
      log: this.log,
    });
    this.trayRenderer.show();
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
      await tellActionFailed(this.electron.dialog, errorMessage(error));
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
    this.trayRenderer.failureSeen();
    this.settingsWindow.open(target);
    this.trayRenderer.scheduleRender();
  }

  /** Draws the tray from the presenter; touches Electron only for what changed. */
  render(): void {
    this.trayRenderer.render();
  }

  // ── service → tray and notifications ──────────────────────────────────────────────────────

  /** Jobs queued or running now, as the service counts them (not as the menu was drawn). */
  private async activeCount(): Promise<number> {
    const list = await this.call('jobs.list', { limit: 1 });
    return list.running + list.queued;
  }

  private onServiceEvent(event: EventName, data: unknown): void {
    const job = this.mirror.apply(event, data);
    if (job) this.onJobChanged(job);
    this.checkAlerts();
    this.trayRenderer.scheduleRender();
  }

  /** A job's ending this app lived through is told once; a bad one also marks the tray until it is looked at. */
  private onJobChanged(job: JobRecord): void {
    if (!this.notifier.takeNewEnding(job)) return;
    if (BAD_ENDINGS.has(job.state)) this.trayRenderer.pointAtFailure(job);
    void this.notifier.notifyJobEnded(job);
  }

  private checkAlerts(): void {
    const { settings } = this.mirror;
    if (this.quitting || !settings) return;
    this.notifier.checkAlerts({
      remainingUsd: remainingBalanceUsd(this.mirror.balance),
      lowBalanceUsd: settings.budgets.reserveUsd,
      spentTodayUsd: this.mirror.spentTodayUsd,
      dailyBudgetUsd: settings.budgets.perDayUsd,
      dayKey: localDayKey(this.now()),
    });
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
        this.trayRenderer.readStartAtLogin();
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
    if (await confirmKillAll(this.electron.dialog, count)) await this.call('jobs.killAll', {});
  }

  private async askAndQuit(): Promise<void> {
    if (this.quitting) return;
    const count = await this.activeCount();
    let killJobs = false;
    if (count > 0) {
      const answer = await askAboutRunningJobs(this.electron.dialog, count);
      if (answer === 'cancel') return;
      killJobs = answer === 'kill';
    }
    await this.shutdown({ killJobs });
    this.electron.app.quit();
  }

  private closeUi(): void {
    this.quitting = true;
    this.unsubscribeEvents?.();
    this.unsubscribeEvents = null;
    this.unregisterIpc?.();
    this.unregisterIpc = null;
    this.settingsWindow.destroy();
    this.trayRenderer.close();
    this.notifier.forget();
  }
}
