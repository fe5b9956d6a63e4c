/**
 * The settings window's options and the links it may open, as plain data (docs/ARCHITECTURE.md §6,
 * Electron hardening): src-main/electron passes them to BrowserWindow and the will-navigate /
 * setWindowOpenHandler checks unchanged, so they are tested without Electron. The page's CSP and file
 * types, which the loopback HTTP host serves too, are in src-main/common/page-security.ts.
 */

export interface SettingsWindowInput {
  /** Absolute path of the built preload script. */
  preloadPath: string;
  platform: NodeJS.Platform;
  /** nativeTheme.shouldUseDarkColors: the background painted before the page has loaded. */
  darkMode: boolean;
  /** Developer tools; off unless a development flag asks for them. */
  devTools?: boolean;
}

/** The subset of Electron's BrowserWindowConstructorOptions this window sets. */
export interface SettingsWindowOptions {
  width: number;
  height: number;
  minWidth: number;
  minHeight: number;
  show: false;
  title: string;
  backgroundColor: string;
  autoHideMenuBar: boolean;
  fullscreenable: boolean;
  webPreferences: {
    preload: string;
    sandbox: true;
    contextIsolation: true;
    nodeIntegration: false;
    nodeIntegrationInWorker: false;
    nodeIntegrationInSubFrames: false;
    webSecurity: true;
    allowRunningInsecureContent: false;
    experimentalFeatures: false;
    webviewTag: false;
    navigateOnDragDrop: false;
    spellcheck: false;
    safeDialogs: true;
    devTools: boolean;
  };
}

export const SETTINGS_WINDOW_TITLE = 'OpenRouter Delegate — Settings';
/** Painted before the first frame, so opening the window never flashes the wrong colour. */
export const WINDOW_BACKGROUND = { dark: '#1f1f23', light: '#ffffff' } as const;

/** POSIX "/…", Windows "C:\…" or "C:/…", or a UNC path "\\server\share\…". */
function isAbsolutePath(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
}

export function settingsWindowOptions(input: SettingsWindowInput): SettingsWindowOptions {
  // Electron resolves a relative preload against nothing useful and loads no preload at all.
  if (!isAbsolutePath(input.preloadPath)) throw new Error(`The preload path must be absolute, got "${input.preloadPath}".`);
  const mac = input.platform === 'darwin';
  return {
    width: 1000,
    height: 720,
    minWidth: 760,
    minHeight: 520,
    show: false,
    title: SETTINGS_WINDOW_TITLE,
    backgroundColor: input.darkMode ? WINDOW_BACKGROUND.dark : WINDOW_BACKGROUND.light,
    // The window has no menu of its own; on macOS the app menu lives in the menu bar anyway.
    autoHideMenuBar: !mac,
    // A settings window is not a full-screen app on macOS (the green button zooms instead).
    fullscreenable: !mac,
    webPreferences: {
      preload: input.preloadPath,
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
      devTools: input.devTools === true,
    },
  };
}

const MAX_EXTERNAL_URL_CHARS = 2048;

/**
 * Links the window may open in the user's browser (shell.openExternal): well-formed https URLs
 * with a host and no user name or password. Anything else (http, file:, javascript:, custom
 * schemes that launch other apps, text with spaces or control characters) is refused.
 */
export function isAllowedExternalUrl(url: string): boolean {
  if (url.length === 0 || url.length > MAX_EXTERNAL_URL_CHARS) return false;
  // The URL parser quietly drops tabs, newlines and edge spaces; what is opened must be what was checked.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f-\u009f\\]/.test(url)) return false;
  // The parser also repairs "https:///host" and "https:host"; a link must be written out in full.
  const authority = /^https:\/\/([^/?#]+)/i.exec(url)?.[1];
  if (authority === undefined || authority.includes('@')) return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === 'https:' && parsed.hostname !== '' && parsed.username === '' && parsed.password === '';
}
