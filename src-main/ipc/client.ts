/**
 * The client end of the local IPC (docs/ARCHITECTURE.md §2), used by the MCP bridge and the CLI: reads the token,
 * connects, says hello, then makes typed calls against the contract and receives events.
 */
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { CONTRACT, EVENTS } from '../contract/methods.js';
import type { EventName, EventOf, MethodName, RequestOf, ResponseOf } from '../contract/methods.js';
import { EventFrameSchema, PROTOCOL_VERSION, ResponseFrameSchema, ServerHelloSchema, ServiceError } from '../contract/protocol.js';
import type { ClientHello, ServerHello } from '../contract/protocol.js';
import { formatMs } from '../common/format.js';
import { encodeFrame, FrameDecoder } from './framing.js';
import type { DecodedFrame } from './framing.js';
import type { Locations } from '../platform/locations.js';
import { readToken } from './runtime-dir.js';
import { describeIssues, errorCode } from '../common/errors.js';

const PIPE_PREFIX = '\\\\.\\pipe\\';
const START_HINT = 'Start the OpenRouter Delegate app, or run `openrouter-delegate serve`.';

/**
 * A connect refused with EPERM: the OS let this process make no Unix socket, which a sandbox does (Claude Code's Bash
 * sandbox on Linux and macOS); the service may well be running. What lets the command through (docs/ISOLATION.md,
 * "Taking the work").
 */
function socketBlockedMessage(endpoint: string): string {
  return (
    `This command may not open a Unix socket here (operation not permitted), and the OpenRouter Delegate service answers on one (${endpoint}): ` +
    "it runs inside a sandbox, as Claude Code's Bash sandbox does. Run it in your own terminal, or let Claude Code run it outside its sandbox: " +
    '"excludedCommands": ["openrouter-delegate:*"] in the "sandbox" of ~/.claude/settings.json, and an allow rule for it, such as "Bash(openrouter-delegate take:*)".'
  );
}

export interface IpcClientOptions {
  locations: Pick<Locations, 'socketPath' | 'tokenFile'>;
  /** Who is calling, e.g. "bridge/0.1.0"; the service shows it in its status. */
  clientName: string;
  /** Bound on connecting plus the hello exchange. Default 2000. */
  timeoutMs?: number;
}

/** Method syntax makes the parameter bivariant, so a listener typed for a wider event set still fits. */
type Listener<T> = { bivarianceHack(data: T): void }['bivarianceHack'];

interface PendingCall {
  resolve: (result: unknown) => void;
  reject: (error: ServiceError) => void;
}

type ClientState = 'handshake' | 'open' | 'closed';

/** Rethrown outside our socket handler: a listener's bug is the listener's, and must not stop the frame loop. */
function reportListenerError(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

export class IpcClient {
  private readonly socket: net.Socket;
  private readonly decoder = new FrameDecoder();
  private state: ClientState = 'handshake';
  private readonly pending = new Map<number, PendingCall>();
  private nextId = 1;
  private readonly listeners = new Map<string, Set<Listener<unknown>>>();
  private readonly closeListeners = new Set<() => void>();
  private closeReason: ServiceError | null = null;
  /** An error the server sent without an id (e.g. frame_too_large): the likely reason for a close that follows. */
  private serverError: ServiceError | null = null;
  private serverHello: ServerHello | null = null;
  private handshakeDone: ((result: ServerHello | ServiceError) => void) | null = null;

  private constructor(socket: net.Socket) {
    this.socket = socket;
  }

  /**
   * Connects to the service of these locations. Rejects with ServiceError: 'unavailable' when no service
   * answers (not running, no token yet, timeout), 'unauthorized' or 'protocol_mismatch' with the
   * service's own message.
   */
  static async connect(options: IpcClientOptions): Promise<IpcClient> {
    const { socketPath, tokenFile } = options.locations;
    const timeoutMs = options.timeoutMs ?? 2_000;
    const clientName = options.clientName.slice(0, 200);
    const endpoint = await resolveEndpoint(socketPath);
    const token = await readServiceToken(tokenFile);
    try {
      return await IpcClient.open(endpoint, token, clientName, timeoutMs);
    } catch (error) {
      // The service may have restarted between our reading the token and connecting: it answers a
      // hello only once its new token is on disk, so a re-read now sees it. One retry, only if it changed.
      if (error instanceof ServiceError && error.code === 'unauthorized') {
        const fresh = await readToken(tokenFile).catch(() => null);
        if (fresh !== null && fresh !== token) return IpcClient.open(endpoint, fresh, clientName, timeoutMs);
      }
      throw error;
    }
  }

  private static open(endpoint: string, token: string, clientName: string, timeoutMs: number): Promise<IpcClient> {
    return new Promise<IpcClient>((resolve, reject) => {
      const socket = net.connect(endpoint);
      const client = new IpcClient(socket);
      const timer = setTimeout(() => {
        client.handshakeDone?.(
          new ServiceError('unavailable', `The OpenRouter Delegate service at ${endpoint} did not answer within ${formatMs(timeoutMs)}. ${START_HINT}`),
        );
      }, timeoutMs);
      client.handshakeDone = (result) => {
        client.handshakeDone = null;
        clearTimeout(timer);
        if (result instanceof ServiceError) {
          client.finish(result);
          reject(result);
        } else {
          client.serverHello = result;
          client.state = 'open';
          resolve(client);
        }
      };
      socket.on('error', (error) => {
        const code = errorCode(error);
        const reason =
          code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ENOTSOCK'
            ? new ServiceError('unavailable', `The OpenRouter Delegate service is not running (nothing answers at ${endpoint}). ${START_HINT}`)
            : code === 'EPERM'
              ? new ServiceError('socket_blocked', socketBlockedMessage(endpoint))
              : new ServiceError('unavailable', `Lost the connection to the OpenRouter Delegate service: ${error.message}`);
        if (client.handshakeDone) client.handshakeDone(reason);
        else client.closeReason ??= reason;
      });
      socket.on('close', () => {
        client.handshakeDone?.(
          client.serverError ?? new ServiceError('unavailable', `The OpenRouter Delegate service at ${endpoint} closed the connection during the handshake.`),
        );
        client.finish(
          client.serverError ?? new ServiceError('unavailable', 'The connection to the OpenRouter Delegate service closed (it stopped or restarted).'),
        );
      });
      socket.on('data', (chunk: Buffer) => client.onData(chunk));
      const hello: ClientHello = { type: 'hello', token, protocol: PROTOCOL_VERSION, client: clientName };
      socket.write(encodeFrame(hello));
    });
  }

  /** The service's hello: its name, protocol and pid. */
  get server(): ServerHello {
    return this.serverHello as ServerHello;
  }

  get closed(): boolean {
    return this.state === 'closed';
  }

  /** Calls a contract method; the answer is checked against the contract's response schema. */
  async call<M extends MethodName>(method: M, params: RequestOf<M>): Promise<ResponseOf<M>> {
    const result = await this.callRaw(method, params);
    const parsed = CONTRACT[method].response.safeParse(result);
    if (!parsed.success) {
      throw new ServiceError(
        'internal',
        `The service sent a malformed answer to ${method} (${describeIssues(parsed.error.issues)}). Are the app and the bridge the same version?`,
      );
    }
    return parsed.data as ResponseOf<M>;
  }

  /** Calls any method name with any params, unchecked (tests, and methods outside the contract). */
  callRaw(method: string, params: unknown): Promise<unknown> {
    if (this.state !== 'open') return Promise.reject(this.closeReason ?? new ServiceError('unavailable', 'connection closed'));
    const id = this.nextId++;
    let text: string;
    try {
      text = encodeFrame({ type: 'request', id, method, params });
    } catch (error) {
      return Promise.reject(error instanceof ServiceError ? error : new ServiceError('internal', (error as Error).message));
    }
    return new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.write(text);
    });
  }

  /** Listens for a server event; known events are checked against their schema (malformed ones are dropped). */
  on<E extends EventName>(event: E, listener: Listener<EventOf<E>>): this;
  on(event: string, listener: Listener<unknown>): this;
  on(event: string, listener: Listener<unknown>): this {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return this;
  }

  off<E extends EventName>(event: E, listener: Listener<EventOf<E>>): this;
  off(event: string, listener: Listener<unknown>): this;
  off(event: string, listener: Listener<unknown>): this {
    this.listeners.get(event)?.delete(listener);
    return this;
  }

  /** Called once when the connection ends, however it ends (at once if it already has). Returns an unsubscribe. */
  onClose(listener: () => void): () => void {
    if (this.state === 'closed') {
      queueMicrotask(listener);
      return () => {};
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** Closes the connection; pending calls reject with ServiceError('unavailable', 'connection closed'). */
  close(): void {
    this.finish(new ServiceError('unavailable', 'connection closed'));
  }

  // ---- internals ---------------------------------------------------------------------------------

  private onData(chunk: Buffer): void {
    for (const frame of this.decoder.push(chunk)) {
      if (this.state === 'closed') return;
      if (this.state === 'handshake') this.onHandshakeFrame(frame);
      else this.onFrame(frame);
    }
  }

  private onHandshakeFrame(frame: DecodedFrame): void {
    if (frame.ok) {
      const hello = ServerHelloSchema.safeParse(frame.value);
      if (hello.success) {
        this.handshakeDone?.(hello.data);
        return;
      }
      const refusal = ResponseFrameSchema.safeParse(frame.value);
      if (refusal.success && !refusal.data.ok) {
        this.handshakeDone?.(new ServiceError(refusal.data.error.code, refusal.data.error.message));
        return;
      }
    }
    this.handshakeDone?.(
      new ServiceError('internal', 'The service answered the hello with something that is not a hello. Are the app and the bridge the same version?'),
    );
  }

  private onFrame(frame: DecodedFrame): void {
    if (!frame.ok) {
      this.finish(new ServiceError('internal', `The service sent a bad frame: ${frame.message}`));
      return;
    }
    const value = frame.value as { type?: unknown };
    if (value?.type === 'event') {
      const event = EventFrameSchema.safeParse(value);
      if (event.success) this.emit(event.data.event, event.data.data);
      return;
    }
    const response = ResponseFrameSchema.safeParse(value);
    if (!response.success) return; // unknown frame types are ignored: a newer service may send more
    const reply = response.data;
    if (reply.id === null) {
      if (!reply.ok) this.serverError = new ServiceError(reply.error.code, reply.error.message);
      return;
    }
    const call = this.pending.get(reply.id);
    if (!call) return;
    this.pending.delete(reply.id);
    if (reply.ok) call.resolve(reply.result);
    else call.reject(ServiceError.fromWire(reply.error));
  }

  private emit(event: string, data: unknown): void {
    const set = this.listeners.get(event);
    if (!set || set.size === 0) return;
    let payload = data;
    if (Object.prototype.hasOwnProperty.call(EVENTS, event)) {
      const parsed = EVENTS[event as EventName].safeParse(data);
      if (!parsed.success) return;
      payload = parsed.data;
    }
    for (const listener of [...set]) {
      try {
        listener(payload);
      } catch (error) {
        reportListenerError(error);
      }
    }
  }

  /** Ends the connection once: rejects pending calls with `reason`, tells the close listeners. */
  private finish(reason: ServiceError): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.closeReason ??= reason;
    this.socket.destroy();
    this.decoder.reset();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const call of pending) call.reject(this.closeReason);
    const listeners = [...this.closeListeners];
    this.closeListeners.clear();
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        reportListenerError(error);
      }
    }
  }
}

/** The socket path, or on Windows the pipe named in that file. */
async function resolveEndpoint(socketPath: string): Promise<string> {
  if (process.platform !== 'win32') return socketPath;
  let name: string;
  try {
    name = (await readFile(socketPath, 'utf8')).trim();
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      throw new ServiceError('unavailable', `The OpenRouter Delegate service is not running (no ${socketPath}). ${START_HINT}`);
    }
    throw new ServiceError('unavailable', `Cannot read ${socketPath}: ${(error as Error).message}`);
  }
  if (!name.startsWith(PIPE_PREFIX)) throw new ServiceError('unavailable', `${socketPath} does not name a pipe. ${START_HINT}`);
  return name;
}

async function readServiceToken(tokenFile: string): Promise<string> {
  try {
    return await readToken(tokenFile);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      throw new ServiceError('unavailable', `The OpenRouter Delegate service is not running (no token at ${tokenFile}). ${START_HINT}`);
    }
    throw new ServiceError('unauthorized', `Cannot read the service token at ${tokenFile}: ${(error as Error).message}`);
  }
}
