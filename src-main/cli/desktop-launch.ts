/**
 * `openrouter-delegate start`, what `npm start` runs: the tray app where it is installed and a display
 * exists (it takes over and the command returns), else the headless service in the foreground, saying
 * why. The decision and the install layouts are in platform/tray-app.ts, shared with the MCP bridge.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV } from '../contract/index.js';
import type { Locations } from '../platform/locations.js';
import { TrayAppExitedError, waitForService } from '../ipc/wait-for-service.js';
import { serviceLogFile } from '../platform/detached.js';
import { chooseHost, locateTrayApp, spawnTrayApp } from '../platform/tray-app.js';
import type { HostChoice, InstallProbe } from '../platform/tray-app.js';

/** This bundle's folder: dist/cli, in a checkout or unpacked from the packaged app's asar. */
function bundleDir(): string {
  return path.dirname(fileURLToPath(import.meta.url));
}

/** Where `start` should run the service on this machine (`probe`: what is installed, read from disk unless a test says). */
export function chooseStartHost(env: NodeJS.ProcessEnv, platform: string = process.platform, probe?: InstallProbe): HostChoice {
  return chooseHost({ platform, env, trayApp: locateTrayApp({ bundleDir: bundleDir(), platform, probe }) });
}

export type TrayAppStart = { started: true; pid: number } | { started: false; why: string };

/**
 * Starts the tray app detached and waits (bounded) until its service answers, so the command can say
 * it worked. An app that exits first (it cannot run here) comes back as `started: false`; one that
 * neither answers nor exits in time is an error.
 */
export async function launchTrayApp(input: {
  choice: Extract<HostChoice, { host: 'electron' }>;
  locations: Locations;
  env: NodeJS.ProcessEnv;
  clientName: string;
  timeoutMs?: number;
  say: (line: string) => void;
}): Promise<TrayAppStart> {
  const logFile = serviceLogFile(input.locations);
  input.say(`Starting the tray app (${input.choice.binary}; log: ${logFile}) …`);
  // A checkout's tray app has no bridge launcher of its own: it registers this Node with the bridge script.
  const env = { [ENV.node]: process.execPath, ...input.env };
  const app = spawnTrayApp({ binary: input.choice.binary, args: input.choice.args, env, locations: input.locations });
  try {
    const client = await waitForService({
      locations: input.locations,
      clientName: input.clientName,
      timeoutMs: input.timeoutMs ?? 30_000,
      exited: app.exited,
      logFile,
    });
    const pid = client.server.pid;
    client.close();
    return { started: true, pid };
  } catch (error) {
    if (error instanceof TrayAppExitedError) return { started: false, why: `${error.message} (see ${logFile})` };
    throw error;
  } finally {
    app.release();
  }
}
