/**
 * What the preload exposes to the settings window as `window.openrouterDelegate`, typed from the
 * contract: one function per contract method (named exactly like the method) and `onEvent`.
 * Types and channel names only, so the preload bundle and a later renderer can share them.
 */
import type { ErrorCode, EventName, EventOf, MethodName, RequestOf, ResponseOf, WireError } from '../contract/index.js';

/** `ipcMain.handle` channel of a method: the contract's name behind one fixed prefix, nothing else. */
export const METHOD_CHANNEL_PREFIX = 'contract:';
/** Service events travel main → window on this channel as `{ event, data }`. */
export const EVENT_CHANNEL = 'contract:event';
/** The global the preload defines in the page. */
export const API_GLOBAL = 'openrouterDelegate';

export function methodChannel(method: MethodName): string {
  return `${METHOD_CHANNEL_PREFIX}${method}`;
}

/** What a method channel answers: errors come back as data, because Electron keeps only the message of a thrown error. */
export type IpcReply<T = unknown> = { ok: true; result: T } | { ok: false; error: WireError };

export type ContractEvent = { [E in EventName]: { event: E; data: EventOf<E> } }[EventName];

/** Methods whose request may be empty take their parameters optionally. */
export type ContractMethod<M extends MethodName> = Record<never, never> extends RequestOf<M>
  ? (params?: RequestOf<M>) => Promise<ResponseOf<M>>
  : (params: RequestOf<M>) => Promise<ResponseOf<M>>;

export type ContractApi = { readonly [M in MethodName]: ContractMethod<M> } & {
  /** Every service event, until the returned function is called. */
  readonly onEvent: (listener: (event: ContractEvent) => void) => () => void;
};

/**
 * A failed call rejects with an Error whose message starts with the error code in brackets,
 * e.g. "[no_key] No OpenRouter key …": across the context bridge only an Error's message survives,
 * so the code travels inside it. `code` is also set, for callers in the preload's own world.
 */
export interface ContractCallError extends Error {
  code: ErrorCode;
}

const CODE_PREFIX = /^\[([a-z_]+)\] /;

/** The code and the plain message of a rejected call, as the page sees it. */
export function contractErrorParts(error: unknown): { code: string | null; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  const match = CODE_PREFIX.exec(message);
  return match ? { code: match[1] ?? null, message: message.slice(match[0].length) } : { code: null, message };
}
