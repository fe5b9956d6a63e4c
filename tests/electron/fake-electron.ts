/**
 * A fake Electron at the edge (docs/ARCHITECTURE.md §8): plain classes that record what the shell asks of them
 * and let a test play the user (click a menu item, a notification, a dialog button) or the page
 * (send an IPC call from some frame). Typed against ElectronSurface, so it cannot drift from what
 * the shell uses. The real `electron` package is never loaded: without its binary it would try to
 * download one.
 */
import type {
  AppSurface,
  CancellableEvent,
  DialogSurface,
  ElectronSurface,
  FrameSurface,
  HeadersReceived,
  InvokeEventSurface,
  IpcMainSurface,
  MenuSurface,
  MenuTemplateItem,
  MessageBoxOptions,
  NativeThemeSurface,
  NotificationOptions,
  NotificationSurface,
  SessionSurface,
  ShellSurface,
  TraySurface,
  WebContentsSurface,
  WindowOptions,
  WindowSurface,
} from '../../src-main/electron/electron-surface.js';

type Listener = (...args: never[]) => unknown;

class Emitter {
  private readonly listeners = new Map<string, Listener[]>();

  on(event: string, listener: Listener): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }

  once(event: string, listener: Listener): this {
    const wrapper = ((...args: never[]) => {
      this.off(event, wrapper);
      return listener(...args);
    }) as Listener;
    return this.on(event, wrapper);
  }

  off(event: string, listener: Listener): this {
    this.listeners.set(
      event,
      (this.listeners.get(event) ?? []).filter((l) => l !== listener),
    );
    return this;
  }

  emit(event: string, ...args: unknown[]): void {
    for (const listener of this.listeners.get(event) ?? []) (listener as (...a: unknown[]) => unknown)(...args);
  }

  listenerCount(event: string): number {
    return this.listeners.get(event)?.length ?? 0;
  }
}

export function cancellable(): CancellableEvent & { defaultPrevented: boolean } {
  const event = {
    defaultPrevented: false,
    preventDefault() {
      event.defaultPrevented = true;
    },
  };
  return event;
}

export class FakeApp extends Emitter implements AppSurface {
  lockAvailable = true;
  readonly paths = new Map<string, string>();
  loginItem = { openAtLogin: false };
  /** app.quit() calls that were not cancelled by a before-quit listener. */
  quits = 0;
  exitCode: number | null = null;
  dockHidden = false;
  readonly dock = { hide: () => void (this.dockHidden = true) };

  requestSingleInstanceLock(): boolean {
    return this.lockAvailable;
  }
  whenReady(): Promise<void> {
    return Promise.resolve();
  }
  /** Like Electron: 'before-quit' first, and a listener may cancel. */
  quit(): void {
    const event = cancellable();
    this.emit('before-quit', event);
    if (!event.defaultPrevented) this.quits++;
  }
  exit(exitCode = 0): void {
    this.exitCode = exitCode;
  }
  setPath(name: 'userData', value: string): void {
    this.paths.set(name, value);
  }
  getLoginItemSettings(): { openAtLogin: boolean } {
    return { ...this.loginItem };
  }
  setLoginItemSettings(settings: { openAtLogin: boolean }): void {
    this.loginItem = { openAtLogin: settings.openAtLogin };
  }
}

/** What Menu.buildFromTemplate returns here: the template itself, to be looked at and clicked. */
export interface FakeMenu {
  template: MenuTemplateItem[];
}

export const FakeMenuStatics = {
  buildFromTemplate(template: MenuTemplateItem[]): MenuSurface {
    return { template } satisfies FakeMenu;
  },
};

export class FakeTray implements TraySurface {
  static instances: FakeTray[] = [];
  image: string;
  readonly images: string[] = [];
  toolTip = '';
  menu: FakeMenu | null = null;
  menusSet = 0;
  destroyed = false;

  constructor(image: string) {
    this.image = image;
    this.images.push(image);
    FakeTray.instances.push(this);
  }
  setImage(image: string): void {
    this.image = image;
    this.images.push(image);
  }
  setToolTip(toolTip: string): void {
    this.toolTip = toolTip;
  }
  setContextMenu(menu: MenuSurface | null): void {
    this.menu = menu as FakeMenu | null;
    this.menusSet++;
  }
  destroy(): void {
    this.destroyed = true;
  }

  /** The menu item with this id (MenuTemplateItem.id), searched through submenus. */
  item(id: string): MenuTemplateItem | undefined {
    const find = (items: readonly MenuTemplateItem[]): MenuTemplateItem | undefined => {
      for (const item of items) {
        if (item.id === id) return item;
        const inner = item.submenu ? find(item.submenu) : undefined;
        if (inner) return inner;
      }
      return undefined;
    };
    return find(this.menu?.template ?? []);
  }

  /** Clicks the item with this id, as the user would; fails the test when there is none. */
  click(id: string): void {
    const item = this.item(id);
    if (!item?.click) throw new Error(`No clickable menu item "${id}" in ${JSON.stringify(this.menu?.template.map((i) => i.id ?? i.label))}`);
    item.click();
  }
}

export class FakeNotification extends Emitter implements NotificationSurface {
  static instances: FakeNotification[] = [];
  static supported = true;
  readonly options: NotificationOptions;
  shown = false;

  static isSupported(): boolean {
    return FakeNotification.supported;
  }
  constructor(options: NotificationOptions) {
    super();
    this.options = options;
    FakeNotification.instances.push(this);
  }
  show(): void {
    this.shown = true;
  }
  click(): void {
    this.emit('click');
  }
}

export class FakeDialog implements DialogSurface {
  readonly asked: MessageBoxOptions[] = [];
  /** How the user answers: the index of a button (default: the cancel button). */
  answer: (options: MessageBoxOptions) => number = (options) => options.cancelId ?? 0;

  async showMessageBox(options: MessageBoxOptions): Promise<{ response: number }> {
    this.asked.push(options);
    return { response: this.answer(options) };
  }

  /** Answers every question with the button whose label matches. */
  choose(label: RegExp): void {
    this.answer = (options) => {
      const index = options.buttons.findIndex((b) => label.test(b));
      if (index === -1) throw new Error(`No button matching ${label} in ${JSON.stringify(options.buttons)}`);
      return index;
    };
  }
}

export class FakeShell implements ShellSurface {
  readonly openedPaths: string[] = [];
  readonly openedExternal: string[] = [];
  async openPath(p: string): Promise<string> {
    this.openedPaths.push(p);
    return '';
  }
  async openExternal(url: string): Promise<void> {
    this.openedExternal.push(url);
  }
}

export class FakeNativeTheme extends Emitter implements NativeThemeSurface {
  shouldUseDarkColors = false;
}

type HeadersListener = (details: HeadersReceived, callback: (response: { responseHeaders?: Record<string, string | string[]> }) => void) => void;
type PermissionHandler = (webContents: unknown, permission: string, callback: (granted: boolean) => void) => void;

export class FakeSession implements SessionSurface {
  headersListener: HeadersListener | null = null;
  permissionHandler: PermissionHandler | null = null;
  readonly webRequest = {
    onHeadersReceived: (listener: HeadersListener) => {
      this.headersListener = listener;
    },
  };
  setPermissionRequestHandler(handler: PermissionHandler): void {
    this.permissionHandler = handler;
  }
}

export class FakeWebContents extends Emitter implements WebContentsSurface {
  readonly session = new FakeSession();
  readonly sent: Array<{ channel: string; args: unknown[] }> = [];
  destroyed = false;
  windowOpenHandler: ((details: { url: string }) => { action: 'deny' }) | null = null;

  send(channel: string, ...args: unknown[]): void {
    this.sent.push({ channel, args });
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void {
    this.windowOpenHandler = handler;
  }

  /** The page navigates itself to `url`; true when the shell let it. */
  navigate(url: string): boolean {
    const event = cancellable();
    this.emit('will-navigate', event, url);
    return !event.defaultPrevented;
  }
}

export class FakeBrowserWindow extends Emitter implements WindowSurface {
  static instances: FakeBrowserWindow[] = [];
  readonly options: WindowOptions;
  readonly webContents = new FakeWebContents();
  readonly loaded: string[] = [];
  visible = false;
  focused = 0;
  minimized = false;
  destroyed = false;

  constructor(options: WindowOptions) {
    super();
    this.options = options;
    FakeBrowserWindow.instances.push(this);
  }
  get url(): string | undefined {
    return this.loaded.at(-1);
  }
  async loadURL(url: string): Promise<void> {
    this.loaded.push(url);
  }
  show(): void {
    this.visible = true;
  }
  focus(): void {
    this.focused++;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  restore(): void {
    this.minimized = false;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  destroy(): void {
    this.close();
  }
  /** The user closes the window. */
  close(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.webContents.destroyed = true;
    this.emit('closed');
  }

  /** A frame of this window's page, at `url` (the top frame unless `parent` is given). */
  frame(url = this.url ?? '', parent: unknown = null): FrameSurface {
    return { url, parent };
  }
}

type Handler = (event: InvokeEventSurface, ...args: unknown[]) => unknown;

export class FakeIpcMain implements IpcMainSurface {
  readonly handlers = new Map<string, Handler>();

  handle(channel: string, listener: Handler): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, listener);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }

  /** What ipcRenderer.invoke(channel, ...args) would get back, sent from `event`'s frame. */
  async invoke(channel: string, event: InvokeEventSurface, ...args: unknown[]): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`Error invoking remote method '${channel}': No handler registered for '${channel}'`);
    return handler(event, ...args);
  }
}

export interface FakeElectron extends ElectronSurface {
  app: FakeApp;
  dialog: FakeDialog;
  shell: FakeShell;
  nativeTheme: FakeNativeTheme;
  ipcMain: FakeIpcMain;
}

/** A fresh fake; the class-level instance lists are emptied too. */
export function fakeElectron(): FakeElectron {
  FakeTray.instances = [];
  FakeNotification.instances = [];
  FakeNotification.supported = true;
  FakeBrowserWindow.instances = [];
  return {
    app: new FakeApp(),
    Tray: FakeTray,
    Menu: FakeMenuStatics,
    Notification: FakeNotification,
    nativeTheme: new FakeNativeTheme(),
    shell: new FakeShell(),
    dialog: new FakeDialog(),
    BrowserWindow: FakeBrowserWindow,
    ipcMain: new FakeIpcMain(),
  };
}
