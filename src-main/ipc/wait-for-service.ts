/**
 * Waits for a service someone just started (the tray app, detached) to answer on the local socket.
 */
import { ServiceError } from '../contract/protocol.js';
import { formatMs } from '../common/format.js';
import type { Locations } from '../platform/locations.js';
import { IpcClient } from './client.js';

/** The started app ended before its service answered. */
export class TrayAppExitedError extends Error {
  constructor(what: string) {
    super(`The tray app ${what} before its service answered`);
    this.name = 'TrayAppExitedError';
  }
}

/**
 * Waits for a service we started to answer on the socket, bounded: tries to connect with a growing
 * pause (50 ms doubling to 500 ms). Polling, because the tray app is detached and prints no "ready"
 * line to anyone; an answered hello is what "ready" means anyway. When the app exits first, one last
 * attempt (it may have handed over to an instance already running), then TrayAppExitedError.
 */
export async function waitForService(input: {
  locations: Pick<Locations, 'socketPath' | 'tokenFile'>;
  clientName: string;
  timeoutMs: number;
  exited: Promise<string>;
  logFile: string;
}): Promise<IpcClient> {
  const deadline = Date.now() + input.timeoutMs;
  const state: { exit: string | null } = { exit: null };
  void input.exited.then((what) => (state.exit = what));
  for (let attempt = 0; ; attempt++) {
    const exitedBefore = state.exit;
    try {
      return await IpcClient.connect({ locations: input.locations, clientName: input.clientName });
    } catch (error) {
      if (!(error instanceof ServiceError && error.code === 'unavailable')) throw error;
    }
    if (exitedBefore !== null) throw new TrayAppExitedError(exitedBefore);
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new ServiceError('unavailable', `The tray app did not answer within ${formatMs(input.timeoutMs)}. See ${input.logFile}.`);
    }
    await pause(Math.min(50 * 2 ** Math.min(attempt, 4), 500, remaining), input.exited);
  }
}

/** Waits `ms`, or less if `until` settles first; leaves no timer behind. */
function pause(ms: number, until: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    void until.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
