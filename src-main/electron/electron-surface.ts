/**
 * The part of Electron the desktop shell uses, as a narrow interface (docs/ARCHITECTURE.md §9: the Electron app is
 * injected, not imported). main.ts hands in the real module — and the compiler checks there that the
 * real module fits these shapes, against Electron's own type definitions; tests hand in plain fakes.
 *
 * Every member here is something the shell really calls. Adding one means the fake in
 * tests/electron/fake-electron.ts grows the same member.
 */

/** What Electron passes to listeners that may cancel the default behaviour. */
export interface CancellableEvent {
  preventDefault(): void;
}

export interface AppSurface {
  requestSingleInstanceLock(): boolean;
  /** A second launch for the same home (same userData folder). */
  on(event: 'second-instance', listener: () => void): unknown;
  on(event: 'before-quit', listener: (event: CancellableEvent) => void): unknown;
  /** Must be listened to, or closing the settings window would quit the tray app. */
  on(event: 'window-all-closed', listener: () => void): unknown;
  whenReady(): Promise<void>;
  quit(): void;
  exit(exitCode?: number): void;
  setPath(name: 'userData', path: string): void;
  getLoginItemSettings(): { openAtLogin: boolean };
  setLoginItemSettings(settings: { openAtLogin: boolean }): void;
  /** macOS only (undefined elsewhere at run time). */
  readonly dock?: { hide(): void } | undefined;
}

/** A built menu: opaque, only handed back to the tray. */
export type MenuSurface = object;

/** One entry of a menu template (a subset of Electron's MenuItemConstructorOptions). */
export interface MenuTemplateItem {
  id?: string;
  label?: string;
  sublabel?: string;
  type?: 'normal' | 'separator' | 'submenu' | 'checkbox' | 'radio';
  checked?: boolean;
  enabled?: boolean;
  click?: () => void;
  submenu?: MenuTemplateItem[];
}

export interface MenuStatics {
  buildFromTemplate(template: MenuTemplateItem[]): MenuSurface;
}

/** Images are PNG paths: Electron picks the @2x file and, for names ending in "Template", the macOS template mode. */
export interface TraySurface {
  setImage(image: string): void;
  setToolTip(toolTip: string): void;
  setContextMenu(menu: MenuSurface | null): void;
  destroy(): void;
}

export type TrayConstructor = new (image: string) => TraySurface;

export interface NotificationOptions {
  title: string;
  body: string;
  urgency?: 'normal' | 'critical' | 'low';
}

export interface NotificationSurface {
  on(event: 'click', listener: () => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  show(): void;
}

export interface NotificationConstructor {
  new (options: NotificationOptions): NotificationSurface;
  isSupported(): boolean;
}

export interface MessageBoxOptions {
  type?: 'none' | 'info' | 'error' | 'question' | 'warning';
  title?: string;
  message: string;
  detail?: string;
  buttons: string[];
  defaultId?: number;
  cancelId?: number;
  noLink?: boolean;
}

export interface DialogSurface {
  showMessageBox(options: MessageBoxOptions): Promise<{ response: number }>;
}

export interface ShellSurface {
  /** Resolves to an error message, or "" on success. */
  openPath(path: string): Promise<string>;
  openExternal(url: string): Promise<void>;
}

export interface NativeThemeSurface {
  readonly shouldUseDarkColors: boolean;
  on(event: 'updated', listener: () => void): unknown;
}

/** The frame an IPC message came from. */
export interface FrameSurface {
  readonly url: string;
  /** null for the top frame of a page. */
  readonly parent: unknown;
}

export interface HeadersReceived {
  responseHeaders?: Record<string, string[]>;
}

export interface SessionSurface {
  webRequest: {
    onHeadersReceived(
      listener: (details: HeadersReceived, callback: (response: { responseHeaders?: Record<string, string | string[]> }) => void) => void,
    ): void;
  };
  setPermissionRequestHandler(handler: (webContents: unknown, permission: string, callback: (granted: boolean) => void) => void): void;
}

export interface WebContentsSurface {
  readonly session: SessionSurface;
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
  /** Navigation the page itself starts (a link, a form, location.href …). */
  on(event: 'will-navigate', listener: (event: CancellableEvent, url: string) => void): unknown;
  on(event: 'will-attach-webview', listener: (event: CancellableEvent) => void): unknown;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
}

/** The options settingsWindowOptions() builds, as far as the shell needs to know them. */
export type WindowOptions = object;

export interface WindowSurface {
  readonly webContents: WebContentsSurface;
  loadURL(url: string): Promise<void>;
  show(): void;
  focus(): void;
  isMinimized(): boolean;
  restore(): void;
  isDestroyed(): boolean;
  destroy(): void;
  on(event: 'closed', listener: () => void): unknown;
  once(event: 'ready-to-show', listener: () => void): unknown;
}

export type WindowConstructor = new (options: WindowOptions) => WindowSurface;

/** What an `ipcMain.handle` listener receives about the sender. */
export interface InvokeEventSurface {
  readonly sender: unknown;
  readonly senderFrame: FrameSurface | null;
}

export interface IpcMainSurface {
  handle(channel: string, listener: (event: InvokeEventSurface, ...args: unknown[]) => unknown): void;
  removeHandler(channel: string): void;
}

export interface ElectronSurface {
  app: AppSurface;
  Tray: TrayConstructor;
  Menu: MenuStatics;
  Notification: NotificationConstructor;
  nativeTheme: NativeThemeSurface;
  shell: ShellSurface;
  dialog: DialogSurface;
  BrowserWindow: WindowConstructor;
  ipcMain: IpcMainSurface;
}
