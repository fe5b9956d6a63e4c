/**
 * The settings window's one registration point (docs/ARCHITECTURE.md §9): one `ipcMain.handle` per contract
 * method, each checking the sender before anything else, then handing the call to the service's
 * dispatcher — which validates the parameters against the contract exactly as for the socket.
 * Service events go the other way, to the window only.
 */
import { ServiceError } from '../contract/index.js';
import type { EventName, WireError } from '../contract/index.js';
import type { Dispatch } from '../host/service-host.js';
import type { IpcReply } from './contract-api.js';
import { EVENT_CHANNEL, methodChannel } from './contract-api.js';
import { CONTRACT_METHODS } from '../contract/method-names.js';
import type { InvokeEventSurface, IpcMainSurface, WebContentsSurface } from './electron-surface.js';

/** The calling client's name in the service (jobs started from the window say so). */
export const SETTINGS_WINDOW_CLIENT = 'settings-window';

export interface ContractIpcDeps {
  ipcMain: IpcMainSurface;
  dispatch: Dispatch;
  onEvent: (listener: (event: EventName, data: unknown) => void) => () => void;
  /** True only for our settings page, in our settings window (see SettingsWindow.trusts). */
  trusts: (event: InvokeEventSurface) => boolean;
  /** Where events go: the settings window's page, while it is open. */
  target: () => WebContentsSurface | null;
  log?: (line: string) => void;
}

const REFUSED: WireError = { code: 'unauthorized', message: 'Only the OpenRouter Delegate settings window may call the service here.' };

/** Registers every contract method and the event forwarding; returns the function that undoes both. */
export function registerContractIpc(deps: ContractIpcDeps): () => void {
  const log = deps.log ?? (() => undefined);
  for (const method of CONTRACT_METHODS) {
    deps.ipcMain.handle(methodChannel(method), async (event, params): Promise<IpcReply> => {
      if (!deps.trusts(event)) {
        log(`settings window IPC: refused ${method} from an unexpected sender (${event.senderFrame?.url.slice(0, 100) ?? 'no frame'})`);
        return { ok: false, error: REFUSED };
      }
      try {
        return { ok: true, result: await deps.dispatch(method, params, { client: SETTINGS_WINDOW_CLIENT }) };
      } catch (error) {
        if (error instanceof ServiceError) return { ok: false, error: error.toWire() };
        log(`settings window IPC: ${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        return { ok: false, error: { code: 'internal', message: `The service failed while handling ${method}. See the app's log for details.` } };
      }
    });
  }
  const unsubscribe = deps.onEvent((event, data) => {
    const target = deps.target();
    if (target && !target.isDestroyed()) target.send(EVENT_CHANNEL, { event, data });
  });
  return () => {
    unsubscribe();
    for (const method of CONTRACT_METHODS) deps.ipcMain.removeHandler(methodChannel(method));
  };
}
