/**
 * The settings window shell (docs/ARCHITECTURE.md §6, Electron hardening): one BrowserWindow at a time, built
 * from the pure settingsWindowOptions (sandbox, context isolation, no Node), with the CSP on every
 * response, every navigation away and every new window denied, permissions refused, and https links
 * handed to the user's browser only when isAllowedExternalUrl says so. It also decides which IPC
 * senders are trusted: this window's own page, in its top frame.
 */
import type { TrayAction } from './present/desktop-types.js';
import { contentSecurityPolicy } from '../common/page-security.js';
import { isAllowedExternalUrl, settingsWindowOptions } from './present/window-options.js';
import type { ElectronSurface, InvokeEventSurface, WebContentsSurface, WindowSurface } from './electron-surface.js';
import { errorMessage } from '../common/errors.js';

export type SettingsPage = NonNullable<Extract<TrayAction, { kind: 'openSettings' }>['page']>;

export interface SettingsTarget {
  page?: SettingsPage | undefined;
  jobId?: string | undefined;
}

export interface SettingsWindowDeps {
  electron: Pick<ElectronSurface, 'BrowserWindow' | 'shell' | 'nativeTheme'>;
  preloadPath: string;
  /** The page to load, without a fragment: app://settings/index.html (page-protocol.ts). */
  pageUrl: string;
  platform: NodeJS.Platform;
  log?: (line: string) => void;
}

const withoutFragment = (url: string): string => {
  const hash = url.indexOf('#');
  return hash === -1 ? url : url.slice(0, hash);
};

/** Where the page should show: "#jobs/<id>", "#account" … (the renderer reads location.hash). */
export function settingsUrl(pageUrl: string, target: SettingsTarget): string {
  const base = withoutFragment(pageUrl);
  if (target.jobId) return `${base}#jobs/${encodeURIComponent(target.jobId)}`;
  return target.page ? `${base}#${target.page}` : base;
}

export class SettingsWindow {
  private readonly deps: SettingsWindowDeps;
  private readonly log: (line: string) => void;
  private window: WindowSurface | null = null;
  private currentUrl: string | null = null;

  constructor(deps: SettingsWindowDeps) {
    this.deps = deps;
    this.log = deps.log ?? (() => undefined);
  }

  /** The open window's page, for events; null while no window is open. */
  get webContents(): WebContentsSurface | null {
    const window = this.window;
    return window && !window.isDestroyed() ? window.webContents : null;
  }

  get isOpen(): boolean {
    return this.webContents !== null;
  }

  /** Opens the window (or brings it forward) at `target`. */
  open(target: SettingsTarget = {}): void {
    const url = settingsUrl(this.deps.pageUrl, target);
    let window = this.window;
    if (!window || window.isDestroyed()) {
      window = this.create();
    } else {
      if (window.isMinimized()) window.restore();
      window.show();
      window.focus();
    }
    if (url !== this.currentUrl) this.load(window, url);
  }

  /** Closes the window for good (the app is quitting). */
  destroy(): void {
    const window = this.window;
    this.window = null;
    this.currentUrl = null;
    if (window && !window.isDestroyed()) window.destroy();
  }

  /**
   * The sender check for every IPC call: the message must come from this window's webContents, from
   * its top frame, showing our page (a fragment aside). Anything else — another window, an iframe, a
   * page the window was somehow taken to — is refused before the service sees the call.
   */
  trusts(event: InvokeEventSurface): boolean {
    const contents = this.webContents;
    if (contents === null || event.sender !== contents) return false;
    const frame = event.senderFrame;
    return frame !== null && frame.parent === null && withoutFragment(frame.url) === withoutFragment(this.deps.pageUrl);
  }

  private create(): WindowSurface {
    const { BrowserWindow, nativeTheme } = this.deps.electron;
    const window = new BrowserWindow(
      settingsWindowOptions({ preloadPath: this.deps.preloadPath, platform: this.deps.platform, darkMode: nativeTheme.shouldUseDarkColors }),
    );
    this.harden(window.webContents);
    window.once('ready-to-show', () => {
      window.show();
      window.focus();
    });
    window.on('closed', () => {
      if (this.window === window) {
        this.window = null;
        this.currentUrl = null;
      }
    });
    this.window = window;
    return window;
  }

  private load(window: WindowSurface, url: string): void {
    this.currentUrl = url;
    window.loadURL(url).catch((error: unknown) => this.log(`settings window: the page did not load: ${errorMessage(error)}`));
  }

  private openExternal(url: string): void {
    if (!isAllowedExternalUrl(url)) {
      this.log(`settings window: refused to open ${url.slice(0, 200)} (only https links open in the browser)`);
      return;
    }
    this.deps.electron.shell.openExternal(url).catch((error: unknown) => this.log(`settings window: could not open a link: ${String(error)}`));
  }

  private harden(contents: WebContentsSurface): void {
    const csp = contentSecurityPolicy();
    // The page's own protocol handler sends the CSP too; this covers anything else the window might receive.
    contents.session.webRequest.onHeadersReceived((details, callback) => {
      callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] } });
    });
    // Camera, notifications, clipboard, geolocation …: a settings page needs none of them.
    contents.session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
    contents.on('will-navigate', (event, url) => {
      if (withoutFragment(url) === withoutFragment(this.deps.pageUrl)) return;
      event.preventDefault();
      this.openExternal(url);
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      this.openExternal(url);
      return { action: 'deny' };
    });
  }
}
