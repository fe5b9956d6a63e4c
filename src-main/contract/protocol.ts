/**
 * Wire protocol of the local IPC (docs/ARCHITECTURE.md §2): newline-delimited JSON frames.
 * The first client frame must be `hello` with the token; the server says nothing before it.
 */
import { z } from 'zod';

export const PROTOCOL_VERSION = 1;
/** Largest frame either side accepts, newline excluded. */
export const MAX_FRAME_BYTES = 1024 * 1024;

export const ERROR_CODES = [
  // transport / protocol
  'unauthorized',
  'bad_frame',
  'frame_too_large',
  'protocol_mismatch',
  'unknown_method',
  'invalid_params',
  'internal',
  'unavailable',
  /** This process may not open a Unix socket (a sandbox around it, such as Claude Code's Bash sandbox): the service is there, out of reach. */
  'socket_blocked',
  // domain
  'no_key',
  'keychain_unavailable',
  'openrouter_unauthorized',
  'openrouter_payment_required',
  'openrouter_forbidden',
  'openrouter_rate_limited',
  'openrouter_server_error',
  'openrouter_timeout',
  'openrouter_unreachable',
  'openrouter_bad_response',
  'settings_invalid',
  // delegation
  'delegation_off',
  'policy_refused',
  'budget_refused',
  'not_found',
  'invalid_request',
  'conflict',
  'claude_missing',
  'setup_failed',
  'io_error',
] as const;
export const ErrorCodeSchema = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

/**
 * The call that gets the caller on, when the service knows one: a contract method and its params,
 * never a surface's name for it (each surface renders it its own way: the bridge as a tool call).
 * Build one with `nextCall` (methods.ts), which checks the params against the method's request.
 */
export const NextCallSchema = z.object({ method: z.string().max(200), params: z.record(z.string(), z.unknown()) });
export type NextCall = z.infer<typeof NextCallSchema>;

export const WireErrorSchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
  /** Seconds to wait before retrying, when the cause says so (HTTP Retry-After). */
  retryAfterSeconds: z.number().optional(),
  /** What to call next; the message reads whole without it. */
  next: NextCallSchema.optional(),
});
export type WireError = z.infer<typeof WireErrorSchema>;

export const ClientHelloSchema = z.object({
  type: z.literal('hello'),
  token: z.string(),
  protocol: z.number().int(),
  /** Who is calling, e.g. "bridge/0.1.0"; shown in status. */
  client: z.string().max(200),
});
export type ClientHello = z.infer<typeof ClientHelloSchema>;

export const ServerHelloSchema = z.object({
  type: z.literal('hello'),
  protocol: z.number().int(),
  server: z.string(),
  pid: z.number().int(),
});
export type ServerHello = z.infer<typeof ServerHelloSchema>;

export const RequestFrameSchema = z.object({
  type: z.literal('request'),
  id: z.number().int().nonnegative(),
  method: z.string().max(200),
  params: z.unknown().optional(),
});
export type RequestFrame = z.infer<typeof RequestFrameSchema>;

export const ResponseFrameSchema = z.union([
  z.object({ type: z.literal('response'), id: z.number().int(), ok: z.literal(true), result: z.unknown() }),
  z.object({ type: z.literal('response'), id: z.number().int().nullable(), ok: z.literal(false), error: WireErrorSchema }),
]);
export type ResponseFrame = z.infer<typeof ResponseFrameSchema>;

export const EventFrameSchema = z.object({
  type: z.literal('event'),
  event: z.string(),
  data: z.unknown(),
});
export type EventFrame = z.infer<typeof EventFrameSchema>;

export interface ServiceErrorOptions {
  retryAfterSeconds?: number;
  next?: NextCall;
  cause?: unknown;
}

/** A failure that crosses the wire: code + a message that says what to do, and the call to make when there is one. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly retryAfterSeconds: number | undefined;
  readonly next: NextCall | undefined;
  constructor(code: ErrorCode, message: string, options?: ServiceErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.retryAfterSeconds = options?.retryAfterSeconds;
    this.next = options?.next;
  }
  /** The error a wire error describes (toWire's inverse). */
  static fromWire(wire: WireError): ServiceError {
    const { code, message, retryAfterSeconds, next } = wire;
    return new ServiceError(code, message, { ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }), ...(next === undefined ? {} : { next }) });
  }
  toWire(): WireError {
    return {
      code: this.code,
      message: this.message,
      ...(this.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: this.retryAfterSeconds }),
      ...(this.next === undefined ? {} : { next: this.next }),
    };
  }
}
