/**
 * The tray app's entry point (package.json "main" → dist/electron/main.js): the real Electron, the
 * same hosted service as `openrouter-delegate serve` (src-main/host), and the DesktopApp that joins them. Kept thin:
 * everything that decides anything is in desktop-app.ts and the parts it composes (service-mirror.ts,
 * tray-renderer.ts, desktop-notifications.ts, desktop-dialogs.ts), tested there with a fake Electron.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as electron from 'electron';
import { ENV } from '../contract/index.js';
import { ServiceHost } from '../host/service-host.js';
import type { WatchdogLaunch } from '../host/service-host.js';
import { resolveLocations } from '../platform/locations.js';
import { bridgeSetupFor, packagedLauncher } from '../platform/tray-app.js';
import { DesktopApp } from './desktop-app.js';
import { PAGE_SCHEME, PAGE_SCHEME_PRIVILEGES, PAGE_URL, createPageHandler } from './page-protocol.js';
import type { ElectronSurface } from './electron-surface.js';

const here = path.dirname(fileURLToPath(import.meta.url));

// Typed as the surface: the compiler checks Electron's own definitions against every shape the shell uses.
const surface: ElectronSurface = {
  app: electron.app,
  Tray: electron.Tray,
  Menu: electron.Menu,
  Notification: electron.Notification,
  nativeTheme: electron.nativeTheme,
  shell: electron.shell,
  dialog: electron.dialog,
  BrowserWindow: electron.BrowserWindow,
  ipcMain: electron.ipcMain,
};

// Windows shows notifications only for an app with an AppUserModelID; it must match electron-builder.yml's appId.
if (process.platform === 'win32') electron.app.setAppUserModelId('io.github.openrouter-delegate.app');

/**
 * How a killed service is brought back while jobs need it (the watchdog, docs/ARCHITECTURE.md §11): the packaged CLI
 * launcher, or in a checkout the Node that `npm start` ran. It brings back the headless service, not this app.
 */
function watchdogLaunch(): WatchdogLaunch | undefined {
  const cliScript = path.join(here, '..', 'cli', 'openrouter-delegate.js');
  if (electron.app.isPackaged) return { command: packagedLauncher(process.resourcesPath, 'openrouter-delegate', process.platform), args: ['watchdog'] };
  const node = process.env[ENV.node];
  return node ? { command: node, args: [cliScript, 'watchdog'] } : undefined;
}

// What the settings window's Connect registers (bridgeSetupFor): the packaged app's launcher; in a checkout, the
// Node that `npm start` ran (OPENROUTER_DELEGATE_NODE; Electron's own binary is no Node) with the built bridge script.
const setup = bridgeSetupFor({ bundleDir: here, platform: process.platform, nodePath: process.env[ENV.node] });
const watchdog = watchdogLaunch();
const service = new ServiceHost({
  locations: resolveLocations(process.env),
  env: process.env,
  host: 'electron',
  ...(setup ? { setup } : {}),
  ...(watchdog ? { watchdog } : {}),
});
// resources/ sits beside dist/ in a checkout, and inside app.asar when packaged (electron-builder.yml `files`).
const paths = {
  icons: path.join(here, '..', '..', 'resources', 'tray'),
  preload: path.join(here, 'preload.cjs'),
  page: PAGE_URL,
};

// The settings page comes from app://settings/ (page-protocol.ts): privileged before ready, served once ready.
electron.protocol.registerSchemesAsPrivileged([{ scheme: PAGE_SCHEME, privileges: PAGE_SCHEME_PRIVILEGES }]);
void electron.app.whenReady().then(() => electron.protocol.handle(PAGE_SCHEME, createPageHandler(path.join(here, '..', 'renderer'))));
const desktop = new DesktopApp({ electron: surface, service, paths });

// Like `serve`: a signal stops the service and leaves delegated jobs running (the next start re-adopts them).
const onSignal = (signal: NodeJS.Signals) => {
  console.error(`${signal}: stopping the service (delegated jobs keep running).`);
  void desktop.shutdown().finally(() => electron.app.exit(0));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

try {
  // 'second-instance' quits by itself (the first app shows its window); a headless service keeps its home.
  if ((await desktop.launch()) === 'already-running') electron.app.exit(0);
} catch (error) {
  console.error(`OpenRouter Delegate could not start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  electron.app.exit(1);
}
