/**
 * How the bridge starts the service when none answers (docs/ARCHITECTURE.md §1): the tray app when it is
 * installed and a display exists, otherwise the headless service. The bridge ships beside the CLI
 * (dist/bridge ↔ dist/cli, in a checkout and in the packaged app alike), so the headless service is
 * that CLI's `serve`, run by the Node that runs the bridge.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseHost, locateTrayApp } from '../src-main/platform/tray-app.js';
import type { TrayAppLocation } from '../src-main/platform/tray-app.js';

/** Says "ready" (or "already-running") on stdout once its socket answers. */
export interface HeadlessLaunch {
  kind: 'headless';
  command: string;
  args: string[];
  /** Why not the tray app: shown to the user. */
  reason: string;
}

/** Detached, and silent but for the socket; `fallback` runs if it exits before that answers. */
export interface TrayAppLaunch {
  kind: 'tray-app';
  command: string;
  args: string[];
  fallback: HeadlessLaunch;
}

export type ServiceLaunch = TrayAppLaunch | HeadlessLaunch;

export function headlessLaunch(input: { nodePath: string; cliScript: string; reason: string }): HeadlessLaunch {
  return { kind: 'headless', command: input.nodePath, args: [input.cliScript, 'serve', '--notify-ready'], reason: input.reason };
}

/** Pure: what to start, from the platform, the environment and where (whether) the tray app is. */
export function chooseServiceLaunch(input: {
  platform: string;
  env: Readonly<Record<string, string | undefined>>;
  trayApp: TrayAppLocation;
  nodePath: string;
  cliScript: string;
}): ServiceLaunch {
  const host = chooseHost(input);
  const { nodePath, cliScript } = input;
  if (host.host === 'headless') return headlessLaunch({ nodePath, cliScript, reason: host.reason });
  return { kind: 'tray-app', command: host.binary, args: host.args, fallback: headlessLaunch({ nodePath, cliScript, reason: 'the tray app did not start' }) };
}

/** The bundle's own folder: dist/bridge. */
export function bridgeDir(): string {
  return path.dirname(fileURLToPath(import.meta.url));
}

/** What to start on this machine, for this installed bridge. */
export function detectServiceLaunch(env: NodeJS.ProcessEnv): ServiceLaunch {
  const here = bridgeDir();
  return chooseServiceLaunch({
    platform: process.platform,
    env,
    trayApp: locateTrayApp({ bundleDir: here, platform: process.platform }),
    nodePath: process.execPath,
    cliScript: cliScriptBeside(here),
  });
}

export function cliScriptBeside(bridgeFolder: string): string {
  return path.join(bridgeFolder, '..', 'cli', 'openrouter-delegate.js');
}
