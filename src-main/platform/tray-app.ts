/**
 * Which host runs the service (docs/ARCHITECTURE.md §1): the tray app where it is installed and a display
 * exists, else the headless service. `openrouter-delegate start` and the MCP bridge both decide this, so
 * the decision, the install layouts it relies on and the start of the app live here, once, in plain Node
 * (docs/ARCHITECTURE.md §9: `platform` imports no transport and no core). The wait for a started app's
 * socket is a transport matter: ipc/wait-for-service.ts.
 *
 * Two layouts carry the tray app:
 * - a source checkout: the bundles are in `<root>/dist/{cli,bridge}`, Electron is the devDependency in
 *   `<root>/node_modules/electron` (its binary is downloaded by `npm start`'s prestart, scripts/electron-runtime.mjs,
 *   which can fail or be skipped), and the app is `<root>` itself (package.json `main` → dist/electron/main.js);
 * - the packaged app (electron-builder.yml): the bundles are unpacked from the asar into
 *   `<resources>/app.asar.unpacked/dist/{cli,bridge}` so a plain Node can run them, and the Electron
 *   executable is the app's own, named APP_EXECUTABLE_NAME, which loads `<resources>/app.asar` by itself.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnDetached } from './detached.js';
import type { Locations } from './locations.js';

/** The packaged app's executable (electron-builder.yml `executableName`; tests/packaging checks they agree). */
export const APP_EXECUTABLE_NAME = 'openrouter-delegate-app';

type Env = Readonly<Record<string, string | undefined>>;

/** Where the tray app is and how to run it, or why there is none. */
export type TrayAppLocation = { found: true; binary: string; args: string[] } | { found: false; problem: string };

export type HostChoice = { host: 'electron'; binary: string; args: string[] } | { host: 'headless'; reason: string };

/**
 * Why the tray app could not show anything here, or null. macOS and Windows always have a display for a
 * logged-in user; elsewhere (Linux, the BSDs) a GUI needs an X11 or a Wayland display.
 */
export function displayProblem(platform: string, env: Env): string | null {
  if (platform === 'darwin' || platform === 'win32') return null;
  if (env.DISPLAY?.trim() || env.WAYLAND_DISPLAY?.trim()) return null;
  return 'no display (DISPLAY and WAYLAND_DISPLAY are unset)';
}

/** The tray app when it is installed and a display exists; else headless, saying every reason why. */
export function chooseHost(input: { platform: string; env: Env; trayApp: TrayAppLocation }): HostChoice {
  const { trayApp } = input;
  const noDisplay = displayProblem(input.platform, input.env);
  if (trayApp.found && noDisplay === null) return { host: 'electron', binary: trayApp.binary, args: trayApp.args };
  const reasons = [trayApp.found ? null : trayApp.problem, noDisplay].filter((r): r is string => r !== null);
  return { host: 'headless', reason: reasons.join('; ') };
}

/** The file system, as locateTrayApp sees it (tests pass a fake). */
export interface InstallProbe {
  exists(file: string): boolean;
  /** The file's text, or null when it cannot be read. */
  readText(file: string): string | null;
}

const nodeProbe: InstallProbe = {
  exists: (file) => existsSync(file),
  readText: (file) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return null;
    }
  },
};

/** The packaged app's executable, relative to its resources folder. */
export function packagedExecutable(resources: string, platform: string): string {
  if (platform === 'darwin') return path.join(resources, '..', 'MacOS', APP_EXECUTABLE_NAME);
  return path.join(resources, '..', platform === 'win32' ? `${APP_EXECUTABLE_NAME}.exe` : APP_EXECUTABLE_NAME);
}

/**
 * The packaged app's resources folder, from the folder of a running bundle: `<resources>/app.asar/dist/electron`
 * (the tray app's own code, read by Electron from the asar) or `<resources>/app.asar.unpacked/dist/{cli,bridge}`
 * (run by the system Node through a launcher). Null anywhere else: a source checkout, an npm install.
 */
export function packagedResources(bundleDir: string): string | null {
  const root = path.resolve(bundleDir, '..', '..');
  const name = path.basename(root);
  return name === 'app.asar' || name === 'app.asar.unpacked' ? path.dirname(root) : null;
}

/** The launchers electron-builder.yml puts in `<resources>/bin`: POSIX `sh` scripts, `.cmd` on Windows. */
export type LauncherName = 'openrouter-delegate-mcp' | 'openrouter-delegate' | 'openrouter-mcp-config';

export function packagedLauncher(resources: string, name: LauncherName, platform: string): string {
  return path.join(resources, 'bin', platform === 'win32' ? `${name}.cmd` : name);
}

/** How Claude Code is to start this installation's bridge (core/setup/context.ts turns it into the command). */
export interface BridgeSetup {
  nodePath: string;
  /** dist/bridge/openrouter-delegate-mcp.js of this installation. */
  bridgeScript: string;
  /** When set, the whole command: the packaged app's launcher. */
  bridgeLauncher?: string;
}

/**
 * What `install` registers, for the installation a running bundle belongs to: the CLI's `install`, the
 * service's `setup.connect` (the settings window's Connect) in the tray app and in `serve`. One answer per
 * installation, so that `doctor` from the CLI and Connect in the tray app agree on what "registered" means.
 * - The packaged app: its launcher in resources/bin, which runs the unpacked bundle on the system Node found
 *   when Claude Code starts it (the app's Electron may not run as Node: docs/PACKAGING.md, "Launchers and the RunAsNode
 *   fuse"), so a Node upgrade does not break the registration.
 * - Elsewhere: `nodePath` running the built script beside the bundle; undefined without a Node to name (the
 *   tray app in a checkout, started without OPENROUTER_DELEGATE_NODE).
 */
export function bridgeSetupFor(input: { bundleDir: string; platform: string; nodePath: string }): BridgeSetup;
export function bridgeSetupFor(input: { bundleDir: string; platform: string; nodePath: string | undefined }): BridgeSetup | undefined;
export function bridgeSetupFor(input: { bundleDir: string; platform: string; nodePath: string | undefined }): BridgeSetup | undefined {
  const { bundleDir, platform, nodePath } = input;
  const resources = packagedResources(bundleDir);
  if (resources !== null) {
    return {
      // Not used: the launcher is the whole command.
      nodePath: nodePath ?? process.execPath,
      bridgeScript: path.join(resources, 'app.asar.unpacked', 'dist', 'bridge', 'openrouter-delegate-mcp.js'),
      bridgeLauncher: packagedLauncher(resources, 'openrouter-delegate-mcp', platform),
    };
  }
  if (nodePath === undefined) return undefined;
  return { nodePath, bridgeScript: path.resolve(bundleDir, '..', 'bridge', 'openrouter-delegate-mcp.js') };
}

/**
 * Finds the tray app from the folder of the running bundle (dist/cli or dist/bridge). Never loads the
 * `electron` package to ask: from Node, a missing binary makes it try to download one.
 */
export function locateTrayApp(input: { bundleDir: string; platform: string; probe?: InstallProbe }): TrayAppLocation {
  const { bundleDir, platform } = input;
  const probe = input.probe ?? nodeProbe;
  const root = path.resolve(bundleDir, '..', '..');
  const resources = packagedResources(bundleDir);
  if (resources !== null) {
    const binary = packagedExecutable(resources, platform);
    return probe.exists(binary)
      ? { found: true, binary, args: [] }
      : { found: false, problem: `the app's executable ${binary} is missing (reinstall OpenRouter Delegate)` };
  }
  const electronDir = path.join(root, 'node_modules', 'electron');
  if (!probe.exists(electronDir)) {
    return { found: false, problem: 'Electron runtime not installed (no node_modules/electron: this is neither a source checkout nor the packaged app)' };
  }
  // Written by electron's install script once the binary is downloaded: the executable's path in dist/.
  const executable = probe.readText(path.join(electronDir, 'path.txt'))?.trim();
  const download = '`node node_modules/electron/install.js` downloads it where the network allows';
  if (!executable) return { found: false, problem: `Electron runtime not installed (node_modules/electron has no binary; ${download})` };
  const binary = path.join(electronDir, 'dist', executable);
  if (!probe.exists(binary)) return { found: false, problem: `Electron runtime not installed (${binary} is missing; ${download})` };
  if (!probe.exists(path.join(root, 'dist', 'electron', 'main.js'))) {
    return { found: false, problem: 'tray app not built (dist/electron/main.js is missing; run `npm run build`)' };
  }
  return { found: true, binary, args: [root] };
}

export interface TrayAppProcess {
  pid: number | undefined;
  /** The service log, where the app's output goes. */
  logFile: string;
  /** Resolves, with what happened, if the app ends (or cannot start) while we still watch it. */
  exited: Promise<string>;
  /** Stops watching: the app runs on by itself. */
  release(): void;
}

/**
 * Starts the tray app detached, its output appended to the service log. The app outlives its starter
 * (the bridge, the CLI): it is the user's, quit from its tray menu.
 */
export function spawnTrayApp(input: { binary: string; args: string[]; env: NodeJS.ProcessEnv; locations: Pick<Locations, 'logs'> }): TrayAppProcess {
  const env = { ...input.env };
  // Inherited from an Electron-hosted parent (an editor's extension host sets it), it would make a
  // development Electron run as plain Node instead of as the app.
  delete env.ELECTRON_RUN_AS_NODE;
  const { child, logFile } = spawnDetached({ command: input.binary, args: input.args, env, locations: input.locations, windowsHide: false });
  let settle: (what: string) => void = () => undefined;
  const exited = new Promise<string>((resolve) => (settle = resolve));
  const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
    settle(code !== null ? `exited with code ${code}` : `was killed (${signal ?? 'signal'})`);
  const onError = (error: Error) => settle(`could not be started (${error.message})`);
  child.once('exit', onExit);
  child.once('error', onError);
  return {
    pid: child.pid,
    logFile,
    exited,
    release: () => {
      child.off('exit', onExit);
      child.off('error', onError);
      child.unref();
    },
  };
}
