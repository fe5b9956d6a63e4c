/**
 * `openrouter-delegate start`: what `npm start` runs. The tray app where it is installed and a display exists (it
 * takes over and the command returns), else the headless service in the foreground, saying why. When a service
 * already runs it says so and exits 0.
 */
import { APP_VERSION } from '../../contract/index.js';
import type { Locations } from '../../platform/locations.js';
import { connect, err, out } from '../support/command-support.js';
import { chooseStartHost, launchTrayApp } from '../desktop-launch.js';
import { serveCommand } from './serve-command.js';

/** `cliFile` is this CLI's own file, for the headless service's watchdog. */
export async function startCommand(locations: Locations, cliFile: string): Promise<number> {
  const running = await connect(locations);
  if (running) {
    try {
      const { host, pid } = await running.call('service.status', {});
      out(`The service is already running (${host}, pid ${pid}). \`openrouter-delegate stop\` stops it.`);
      return 0;
    } finally {
      running.close();
    }
  }
  const choice = chooseStartHost(process.env);
  if (choice.host === 'electron') {
    const result = await launchTrayApp({ choice, locations, env: process.env, clientName: `cli/${APP_VERSION}`, say: err });
    if (result.started) {
      out(`The tray app is running (service pid ${result.pid}) and takes over from here; quit it from its tray menu.`);
      return 0;
    }
    err(`${result.why}.`);
  } else {
    err(`Not starting the tray app: ${choice.reason}.`);
  }
  err('Starting the headless service instead. Ctrl-C stops it.');
  err('For the settings page in a browser, run `openrouter-delegate ui` in another terminal.');
  return serveCommand(locations, cliFile, { notifyReady: false, ui: null });
}
