/**
 * The Electron side of `window.openrouterDelegate`: the IPC channel names. The API's shape itself is
 * the contract's (src-main/contract/api.ts), shared with the loopback HTTP host.
 */
import type { MethodName, WireError } from '../contract/index.js';

export { API_GLOBAL, contractCallError, contractErrorParts, isContractEvent } from '../contract/api.js';
export type { ContractApi, ContractCallError, ContractEvent, ContractMethod } from '../contract/api.js';

/** `ipcMain.handle` channel of a method: the contract's name behind one fixed prefix, nothing else. */
export const METHOD_CHANNEL_PREFIX = 'contract:';
/** Service events travel main → window on this channel as `{ event, data }`. */
export const EVENT_CHANNEL = 'contract:event';

export function methodChannel(method: MethodName): string {
  return `${METHOD_CHANNEL_PREFIX}${method}`;
}

/** What a method channel answers: errors come back as data, because Electron keeps only the message of a thrown error. */
export type IpcReply<T = unknown> = { ok: true; result: T } | { ok: false; error: WireError };
