/**
 * `openrouter-delegate serve [--ui [--ui-port N]]`: runs the service in the foreground until Ctrl-C (or `stop`); the
 * delegated jobs keep running when it stops. `--ui` also serves the settings page on 127.0.0.1 and prints its URL,
 * which holds a private token. When a service already runs, this one hands over to it and exits 0.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { APP_VERSION } from '../../contract/index.js';
import type { Locations } from '../../platform/locations.js';
import { AlreadyRunningError } from '../../ipc/server.js';
import { ServiceHost } from '../../host/service-host.js';
import { bridgeSetup } from '../support/bridge-setup.js';
import { err, out } from '../support/command-support.js';

export interface ServeOptions {
  /** Print "ready" (or "already-running") on stdout once the service answers, for whoever started it. */
  notifyReady: boolean;
  /** Serve the settings page on loopback (`--ui`), on this port (0: the last one if free, else any). */
  ui: { port: number } | null;
}

/** The built settings page beside this bundled CLI: dist/cli → dist/renderer. */
function pageDir(): string {
  return path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'renderer');
}

/** `cliFile` is this CLI's own file: the service's watchdog runs it again as `watchdog`. */
export async function serveCommand(locations: Locations, cliFile: string, options: ServeOptions): Promise<number> {
  const { notifyReady } = options;
  const service = new ServiceHost({
    locations,
    env: process.env,
    host: 'headless',
    setup: bridgeSetup(),
    watchdog: { command: process.execPath, args: [cliFile, 'watchdog'] },
    // Every headless service can serve the page when asked (`openrouter-delegate ui`); `--ui` asks at once.
    settingsPage: { pageDir: pageDir(), port: options.ui?.port ?? 0 },
  });
  try {
    await service.start();
  } catch (error) {
    if (error instanceof AlreadyRunningError) {
      // A second start hands over to the first: not an error.
      if (notifyReady) out('already-running');
      err(error.message);
      if (options.ui) err('For its settings page, run `openrouter-delegate ui` (it opens the page, or prints its URL without a display).');
      return 0;
    }
    throw error;
  }
  if (options.ui) {
    try {
      const { url } = await service.caller(`cli/${APP_VERSION}`)('settingsPage.open', {});
      // stdout only: the URL holds the token, and stderr is what ends up in log files.
      out(`Settings page: ${url}`);
    } catch (error) {
      await service.stop();
      throw error;
    }
  }
  const stopped = new Promise<void>((resolve) => service.onStopped(resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    err(`${signal}: stopping the service (delegated jobs keep running).`);
    void service.stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Only now: whoever waits for "ready" may signal us at once.
  if (notifyReady) out('ready');
  await stopped;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  err('Service stopped.');
  return 0;
}
