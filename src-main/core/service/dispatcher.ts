/**
 * The one registration point (docs/ARCHITECTURE.md §9): every transport hands raw (method, params) here;
 * the method is looked up in the contract and the params validated before any service code runs.
 */
import { CONTRACT, ServiceError, isMethodName } from '../../contract/index.js';
import type { MethodName, ParsedRequestOf, RequestOf, ResponseOf } from '../../contract/index.js';
import type { ServiceCall } from '../../contract/api.js';
import { describeIssues } from '../../common/errors.js';

export interface CallContext {
  /** Who is calling, from the transport's handshake (e.g. "bridge/0.1.0"). */
  client: string;
}

export type Handlers = {
  [M in MethodName]: (params: ParsedRequestOf<M>, ctx: CallContext) => Promise<ResponseOf<M>>;
};

export type Dispatch = (method: string, params: unknown, ctx: CallContext) => Promise<unknown>;

/**
 * The dispatcher as a typed call for one client. The one cast of the answer is here: every handler is typed by
 * `Handlers` to answer `ResponseOf<M>`, and the dispatcher has checked the method and its parameters.
 */
export function callerOf(dispatch: Dispatch, ctx: CallContext): ServiceCall {
  return <M extends MethodName>(method: M, params: RequestOf<M>) => dispatch(method, params, ctx) as Promise<ResponseOf<M>>;
}

export function createDispatcher(handlers: Handlers): Dispatch {
  return async (method, params, ctx) => {
    if (!isMethodName(method)) {
      throw new ServiceError('unknown_method', `Unknown method "${method.slice(0, 100)}". This service knows: ${Object.keys(CONTRACT).join(', ')}.`);
    }
    const parsed = CONTRACT[method].request.safeParse(params ?? {});
    if (!parsed.success) {
      throw new ServiceError('invalid_params', `Invalid parameters for ${method}: ${describeIssues(parsed.error.issues)}.`);
    }
    const handler = handlers[method] as (p: unknown, c: CallContext) => Promise<unknown>;
    return handler(parsed.data, ctx);
  };
}
