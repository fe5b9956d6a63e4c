/**
 * The tray itself (desktop-app.ts): its icon, tooltip and menu, drawn by the pure presenter (present/tray.ts) from
 * what the ServiceMirror knows and the little the tray keeps of its own (the failure not yet looked at, whether the
 * app starts at login). Touches Electron only for what changed since the last drawing.
 */
import path from 'node:path';
import type { JobRecord, Settings } from '../contract/index.js';
import type { TrayAction, TrayState } from './present/desktop-types.js';
import { presentTray, trayIconFile } from './present/tray.js';
import type { ElectronSurface, TraySurface } from './electron-surface.js';
import { menuTemplate } from './menu-template.js';
import type { ServiceMirror } from './service-mirror.js';

export interface TrayRendererDeps {
  electron: Pick<ElectronSurface, 'app' | 'Tray' | 'Menu' | 'nativeTheme'>;
  mirror: ServiceMirror;
  /** The folder of tray icons (DesktopAppPaths.icons). */
  icons: string;
  platform: NodeJS.Platform;
  now: () => number;
  /** While jobs run, how often the menu's elapsed times are redrawn (ms). */
  elapsedRefreshMs: number;
  /** Whether the app is quitting: then nothing is drawn. */
  quitting: () => boolean;
  /** A menu item was clicked. */
  onAction: (action: TrayAction) => void;
}

export class TrayRenderer {
  private readonly electron: TrayRendererDeps['electron'];
  private readonly mirror: ServiceMirror;
  private readonly icons: string;
  private readonly platform: NodeJS.Platform;
  private readonly now: () => number;
  private readonly elapsedRefreshMs: number;
  private readonly quitting: () => boolean;
  private readonly onAction: (action: TrayAction) => void;
  private tray: TraySurface | null = null;
  private shown: { icon: string; tooltip: string; menu: string } | null = null;
  private renderQueued = false;
  private elapsedTimer: NodeJS.Timeout | null = null;
  /** Asked of the OS once and after each toggle, not on every redraw (macOS asks a system service). */
  private startAtLogin = false;
  private unseenFailure: TrayState['unseenFailure'] = null;

  constructor(deps: TrayRendererDeps) {
    this.electron = deps.electron;
    this.mirror = deps.mirror;
    this.icons = deps.icons;
    this.platform = deps.platform;
    this.now = deps.now;
    this.elapsedRefreshMs = deps.elapsedRefreshMs;
    this.quitting = deps.quitting;
    this.onAction = deps.onAction;
  }

  /** Asks the OS whether the app starts at login, for the menu's checkbox. */
  readStartAtLogin(): void {
    this.startAtLogin = this.electron.app.getLoginItemSettings().openAtLogin;
  }

  /** Puts the tray up and draws it; redrawn when the OS theme changes. */
  show(): void {
    this.tray = new this.electron.Tray(this.iconPath('idle'));
    this.electron.nativeTheme.on('updated', () => this.render());
    this.render();
  }

  /** A job ended badly: the tray points at it until the user looks. */
  pointAtFailure(job: JobRecord): void {
    this.unseenFailure = { id: job.id, model: job.model, state: job.state, endReason: job.endReason };
  }

  /** The user looked (the settings window opened): the failure the tray was pointing at has been seen. */
  failureSeen(): void {
    this.unseenFailure = null;
  }

  /** Many events arrive together (a job ends: state, costs, balance): one render for the lot. */
  scheduleRender(): void {
    if (this.renderQueued) return;
    this.renderQueued = true;
    setImmediate(() => {
      this.renderQueued = false;
      this.render();
    });
  }

  /** Draws the tray from the presenter; touches Electron only for what changed. */
  render(): void {
    const { tray } = this;
    const { settings } = this.mirror;
    if (!tray || !settings || this.quitting()) return;
    const state = this.trayState(settings);
    const view = presentTray(state);
    const icon = this.iconPath(view.icon);
    const menu = JSON.stringify(view.menu);
    if (this.shown?.icon !== icon) tray.setImage(icon);
    if (this.shown?.tooltip !== view.tooltip) tray.setToolTip(view.tooltip);
    if (this.shown?.menu !== menu) tray.setContextMenu(this.electron.Menu.buildFromTemplate(menuTemplate(view.menu, (action) => this.onAction(action))));
    this.shown = { icon, tooltip: view.tooltip, menu };
    this.keepElapsedFresh(state.activeJobs.length > 0);
  }

  /** Stops the redraws and takes the tray down. */
  close(): void {
    if (this.elapsedTimer) clearInterval(this.elapsedTimer);
    this.elapsedTimer = null;
    this.tray?.destroy();
    this.tray = null;
  }

  private trayState(settings: Settings): TrayState {
    const { mirror } = this;
    return {
      now: this.now(),
      keySource: mirror.keySource,
      balance: mirror.balance,
      balanceAt: mirror.balanceAt,
      activeJobs: [...mirror.activeJobs].map((job) => ({
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
      spentTodayUsd: mirror.spentTodayUsd,
      dailyBudgetUsd: settings.budgets.perDayUsd,
      lowBalanceUsd: settings.budgets.reserveUsd,
      platform: this.platform,
    };
  }

  private iconPath(icon: Parameters<typeof trayIconFile>[0]): string {
    return path.join(this.icons, trayIconFile(icon, this.platform, this.darkBar()));
  }

  /** Whether the tray sits on a dark bar: Linux panels are dark in nearly every desktop; elsewhere the theme says. */
  private darkBar(): boolean {
    return this.platform === 'linux' || this.electron.nativeTheme.shouldUseDarkColors;
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
}
