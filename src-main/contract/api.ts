/**
 * The contract as a page sees it: one async function per contract method (named exactly like the
 * method) and `onEvent`. Both hosts of the settings page build this object — Electron's preload from
 * ipcRenderer, the loopback HTTP host from fetch — so the page's code never knows which it has. And as a caller
 * in the service's own process sees it: one typed call (`ServiceCall`, what `callerOf` in core/service makes).
 * Types, names and two tiny helpers only: the sandboxed preload bundles this file and must stay small.
 */
import type { ErrorCode, WireError } from './protocol.js';
import type { EventName, EventOf, MethodName, RequestOf, ResponseOf } from './methods.js';

/** The global the Electron preload defines in the page. */
export const API_GLOBAL = 'openrouterDelegate';

export type ContractEvent = { [E in EventName]: { event: E; data: EventOf<E> } }[EventName];

/** Methods whose request may be empty take their parameters optionally. */
export type ContractMethod<M extends MethodName> =
  Record<never, never> extends RequestOf<M> ? (params?: RequestOf<M>) => Promise<ResponseOf<M>> : (params: RequestOf<M>) => Promise<ResponseOf<M>>;

/**
 * One typed call through the service's dispatcher: what a caller in the service's own process uses (the tray, the
 * doctor). Here, not beside the dispatcher, so a part of the core can take one without importing core/service.
 */
export type ServiceCall = <M extends MethodName>(method: M, params: RequestOf<M>) => Promise<ResponseOf<M>>;

export type ContractApi = { readonly [M in MethodName]: ContractMethod<M> } & {
  /** Every service event, until the returned function is called. */
  readonly onEvent: (listener: (event: ContractEvent) => void) => () => void;
};

/**
 * A failed call rejects with an Error whose message starts with the error code in brackets,
 * e.g. "[no_key] No OpenRouter key …": across Electron's context bridge only an Error's message
 * survives, so the code travels inside it. `code` is also set, for callers in the same world.
 */
export interface ContractCallError extends Error {
  code: ErrorCode;
  retryAfterSeconds?: number;
}

const CODE_PREFIX = /^\[([a-z_]+)\] /;

/** The Error a host rejects with for a service error. */
export function contractCallError(wire: WireError): ContractCallError {
  const error = new Error(`[${wire.code}] ${wire.message}`) as ContractCallError;
  error.name = 'ContractCallError';
  error.code = wire.code;
  if (wire.retryAfterSeconds !== undefined) error.retryAfterSeconds = wire.retryAfterSeconds;
  return error;
}

/** The code and the plain message of a rejected call, as the page sees it. */
export function contractErrorParts(error: unknown): { code: string | null; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  const match = CODE_PREFIX.exec(message);
  return match ? { code: match[1] ?? null, message: message.slice(match[0].length) } : { code: null, message };
}

/** Whether a payload is a `{ event, data }` service event (what both hosts forward to the page). */
export function isContractEvent(value: unknown): value is ContractEvent {
  return typeof value === 'object' && value !== null && typeof (value as { event?: unknown }).event === 'string' && 'data' in value;
}
