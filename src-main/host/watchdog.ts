/**
 * The watchdog (docs/ARCHITECTURE.md §11): brings a killed service back while its delegates still need it. Since
 * the metering gateway, a delegate reaches OpenRouter only through the service; its Claude Code retries a
 * refused connection for a while (delegateMaxRetries), and the watchdog makes sure a service is back on the
 * gateway's port within that while, with or without a bridge connected.
 *
 * One per home (a pid file in the runtime folder), started detached by the service's host when a job runs
 * (`openrouter-delegate watchdog`). It holds a connection to the service and learns at once when it drops:
 *  - the socket file is gone: the service stopped on purpose (`stop`, Ctrl-C, the tray app's Quit). It stays
 *    stopped; the watchdog leaves, and the delegates wait for whoever starts a service next (a bridge does on
 *    its next call);
 *  - the socket file is still there: the service died (SIGKILL, a crash, the OOM killer). If any job is still
 *    queued or running, the watchdog starts the headless service, which re-adopts them.
 * It leaves once no job has been active for two checks in a row, and gives up after five restarts in ten
 * minutes (a service that dies at every start needs a person, not a loop).
 */
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { APP_VERSION, ServiceError, isActive } from '../contract/index.js';
import { IpcClient } from '../ipc/client.js';
import { JobStore } from '../core/jobs/record/job-store.js';
import { isAlive } from '../core/jobs/process/process-table.js';
import { startHeadlessService } from '../platform/headless-service.js';
import type { Locations } from '../platform/locations.js';
import { errorCode, errorMessage } from '../common/errors.js';
import { formatMs } from '../common/format.js';

export interface WatchdogOptions {
  locations: Locations;
  env: NodeJS.ProcessEnv;
  /** How to start the headless service: `node <cli> serve --notify-ready`. */
  serve: { command: string; args: string[] };
  log: (line: string) => void;
  /** How often, while connected, it asks whether any job is still active (ms). */
  checkMs?: number;
}

const RESTART_WINDOW_MS = 10 * 60_000;
const MAX_RESTARTS = 5;

export async function runWatchdog(options: WatchdogOptions): Promise<number> {
  const { locations, log } = options;
  if (!(await takePidFile(locations.watchdogFile))) return 0;
  const restarts: number[] = [];
  try {
    for (;;) {
      const client = await connect(locations);
      if (client) {
        const how = await watch(client, options.checkMs ?? 2000);
        client.close();
        if (how === 'idle') {
          log('watchdog: no job is active any more; leaving');
          return 0;
        }
        // The connection dropped. A service stopping on purpose removes its socket first.
        await pause(100);
        if (!existsSync(locations.socketPath)) {
          log('watchdog: the service stopped (its socket is gone); leaving it stopped');
          return 0;
        }
      }
      if (!(await anyJobActive(locations))) {
        log('watchdog: no service, and no job that needs one; leaving');
        return 0;
      }
      const now = Date.now();
      while (restarts.length > 0 && now - (restarts[0] ?? 0) > RESTART_WINDOW_MS) restarts.shift();
      if (restarts.length >= MAX_RESTARTS) {
        log(`watchdog: the service died ${MAX_RESTARTS} times in ${formatMs(RESTART_WINDOW_MS)}; not starting it again (see the service log)`);
        return 1;
      }
      restarts.push(now);
      log('watchdog: the service is gone while jobs are active; starting it');
      try {
        const said = await startHeadlessService({ ...options.serve, env: options.env, locations });
        log(`watchdog: service ${said === 'ready' ? 'started' : 'already started by someone else'}`);
      } catch (error) {
        log(`watchdog: ${errorMessage(error)}`);
        await pause(1000);
      }
    }
  } finally {
    await rm(locations.watchdogFile, { force: true }).catch(() => undefined);
  }
}

async function connect(locations: Locations): Promise<IpcClient | null> {
  try {
    return await IpcClient.connect({ locations, clientName: `watchdog/${APP_VERSION}` });
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'unavailable') return null;
    throw error;
  }
}

/** Resolves when the connection drops, or once no job has been active for two checks in a row. */
function watch(client: IpcClient, checkMs: number): Promise<'closed' | 'idle'> {
  return new Promise((resolve) => {
    let idleChecks = 0;
    const finish = (how: 'closed' | 'idle') => {
      clearInterval(timer);
      stopListening();
      resolve(how);
    };
    const timer = setInterval(() => {
      client.call('jobs.list', { limit: 1 }).then(
        (list) => {
          idleChecks = list.running + list.queued === 0 ? idleChecks + 1 : 0;
          if (idleChecks >= 2) finish('idle');
        },
        () => undefined,
      );
    }, checkMs);
    const stopListening = client.onClose(() => finish('closed'));
  });
}

async function anyJobActive(locations: Locations): Promise<boolean> {
  const { records } = await new JobStore({ dir: locations.jobsDir }).loadAll();
  return records.some((record) => isActive(record.state));
}

/**
 * Whether a live watchdog watches this home: its pid file names a running process. One started before an update
 * wrote its pid as keeper.pid, the watchdog's former name, and watches all the same.
 */
export function watchdogWatches(locations: Locations): boolean {
  return watchdogRunning(locations.watchdogFile) || watchdogRunning(path.join(locations.runtime, 'keeper.pid'));
}

/** Whether the live watchdog's pid is in `file`. */
function watchdogRunning(file: string): boolean {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  const pid = Number.parseInt(text, 10);
  return Number.isInteger(pid) && pid > 0 && isAlive(pid);
}

/** One watchdog per home: the pid file holds the live watchdog's pid; a dead watchdog's file is taken over. */
async function takePidFile(file: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return true;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
      if (watchdogRunning(file)) return false;
      await rm(file, { force: true });
    }
  }
  return false;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
