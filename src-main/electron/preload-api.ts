/**
 * The settings window's whole API, built from the contract's method names (docs/ARCHITECTURE.md §6): each
 * method invokes its own channel and unwraps the reply; `onEvent` hands the page service events.
 * Nothing else — in particular never ipcRenderer itself, nor the IPC event (its `sender` is
 * ipcRenderer). A factory, so tests build it with a fake ipcRenderer; preload.ts only exposes it.
 */
import { CONTRACT_METHODS } from '../contract/method-names.js';
import type { ContractApi, ContractEvent, IpcReply } from './contract-api.js';
import { EVENT_CHANNEL, contractCallError, isContractEvent, methodChannel } from './contract-api.js';

/** The two ipcRenderer calls the API makes (and the one that undoes a subscription). */
export interface PreloadIpc {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

function isReply(value: unknown): value is IpcReply {
  return typeof value === 'object' && value !== null && typeof (value as { ok?: unknown }).ok === 'boolean';
}

function unwrap(reply: unknown): unknown {
  if (!isReply(reply)) throw new Error('[internal] The app answered in a form this window does not understand. Restart OpenRouter Delegate.');
  if (reply.ok) return reply.result;
  throw contractCallError(reply.error);
}

export function buildApi(ipc: PreloadIpc): ContractApi {
  const api: Record<string, unknown> = {};
  for (const method of CONTRACT_METHODS) {
    const channel = methodChannel(method);
    api[method] = async (params?: unknown) => unwrap(await ipc.invoke(channel, params));
  }
  api.onEvent = (listener: (event: ContractEvent) => void) => {
    const forward = (_event: unknown, payload: unknown) => {
      if (isContractEvent(payload)) listener({ event: payload.event, data: payload.data } as ContractEvent);
    };
    ipc.on(EVENT_CHANNEL, forward);
    return () => {
      ipc.removeListener(EVENT_CHANNEL, forward);
    };
  };
  return Object.freeze(api) as ContractApi;
}
