/**
 * The service end of the local IPC (docs/ARCHITECTURE.md §2): the connection protocol on the socket that
 * endpoint.ts claims. A token in the first frame (compared in constant time, nothing said before it), then
 * newline-delimited request frames dispatched into the contract, replies by id, and events to the
 * authenticated clients. Bounded: connections, the time to say hello, and what a client leaves unread.
 *
 * Connections that arrive between claiming the socket and writing the token wait for the token; they
 * are not refused.
 *
 * Over 400 lines, kept whole: it is one state machine per connection (hello → checking → open →
 * closing → closed), and the handshake, the request loop and the closing rules all read and move
 * that same state; split apart, each piece would have to reach into the others' connection fields.
 */
import { Buffer } from 'node:buffer';
import net from 'node:net';
import { ClientHelloSchema, PROTOCOL_VERSION, RequestFrameSchema, ServiceError } from '../contract/protocol.js';
import type { ClientHello, EventFrame, ResponseFrame, ServerHello, WireError } from '../contract/protocol.js';
import { SocketEndpoint } from './endpoint.js';
import { encodeFrame, FrameDecoder } from './framing.js';
import type { DecodedFrame } from './framing.js';
import type { Locations } from '../platform/locations.js';
import { generateToken, tokensEqual } from './runtime-dir.js';
import { describeIssues, isRecord } from '../common/errors.js';

// What start() throws belongs to the facade's API: importers keep taking it from here.
export { AlreadyRunningError } from './endpoint.js';

/** A client that stops reading while we keep writing is dropped rather than buffered without bound. */
const MAX_BUFFERED_WRITE_BYTES = 16 * 1024 * 1024;
/** After a last error frame, how long the peer has to read it before the connection is cut. */
const CLOSE_GRACE_MS = 2_000;

export interface ClientInfo {
  /** Unique per server run. */
  readonly id: number;
  /** What the client called itself in its hello, e.g. "bridge/0.1.0". */
  readonly name: string;
  readonly connectedAt: Date;
}

export interface IpcServerOptions {
  locations: Pick<Locations, 'runtime' | 'socketPath' | 'tokenFile' | 'lockFile'>;
  /** Sent in the server hello, e.g. "openrouter-delegate/0.1.0". */
  serverName: string;
  /** Runs one request. Throw a ServiceError to answer with its code; anything else answers 'internal'. */
  dispatch: (method: string, params: unknown, client: ClientInfo) => Promise<unknown>;
  log?: (msg: string) => void;
  /** How long a connection may take to send its hello. Default 5000. */
  handshakeTimeoutMs?: number;
  /** Connections beyond this are closed at once. Default 256. */
  maxConnections?: number;
  /** Called whenever an authenticated client arrives or leaves. */
  onClientsChanged?: (clients: readonly ClientInfo[]) => void;
}

type ConnectionState = 'hello' | 'checking' | 'open' | 'closing' | 'closed';

interface Connection {
  readonly socket: net.Socket;
  readonly decoder: FrameDecoder;
  state: ConnectionState;
  client: ClientInfo | null;
  /** Frames that arrive while the hello is being checked wait here, in order. */
  backlog: DecodedFrame[];
  /** The handshake deadline, then (once closing) the grace period for the last frame to flush. */
  timer: NodeJS.Timeout | null;
}

type ServerState = 'new' | 'starting' | 'listening' | 'stopped';

function errorReply(id: number | null, error: WireError): ResponseFrame {
  return { type: 'response', id, ok: false, error };
}

export class IpcServer {
  private readonly endpoint: SocketEndpoint;
  private readonly serverName: string;
  private readonly dispatch: IpcServerOptions['dispatch'];
  private readonly log: (msg: string) => void;
  private readonly handshakeTimeoutMs: number;
  private readonly maxConnections: number;
  private readonly onClientsChanged: IpcServerOptions['onClientsChanged'];

  private state: ServerState = 'new';
  private server: net.Server | null = null;
  private readonly connections = new Set<Connection>();
  private readonly authenticated = new Set<Connection>();
  private nextClientId = 1;
  private tokenBytes: Buffer = Buffer.alloc(0);
  /** Resolves true once the token is written (hellos can be checked), false if start() failed. */
  private readonly ready: Promise<boolean>;
  private settleReady: (ready: boolean) => void = () => {};
  private starting: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;

  constructor(options: IpcServerOptions) {
    this.endpoint = new SocketEndpoint({ locations: options.locations, log: options.log });
    this.serverName = options.serverName;
    this.dispatch = options.dispatch;
    this.log = options.log ?? (() => {});
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? 5_000;
    this.maxConnections = options.maxConnections ?? 256;
    this.onClientsChanged = options.onClientsChanged;
    this.ready = new Promise<boolean>((resolve) => {
      this.settleReady = resolve;
    });
  }

  /** Authenticated connections. */
  get clientCount(): number {
    return this.authenticated.size;
  }

  get clients(): ClientInfo[] {
    const clients: ClientInfo[] = [];
    for (const conn of this.authenticated) if (conn.client) clients.push(conn.client);
    return clients;
  }

  get listening(): boolean {
    return this.state === 'listening';
  }

  /**
   * Creates the private runtime dir, takes the socket (or throws AlreadyRunningError when a live service
   * has it), writes a fresh token and starts answering. May be called once.
   */
  start(): Promise<void> {
    if (this.state !== 'new') return Promise.reject(new Error('IpcServer.start() can be called only once; create a new IpcServer.'));
    this.state = 'starting';
    this.starting = (async () => {
      try {
        await this.startUp();
        this.state = 'listening';
      } catch (error) {
        await this.teardown();
        this.state = 'stopped';
        throw error;
      }
    })();
    return this.starting;
  }

  /** Stops listening, ends every connection, removes the socket and token if still ours. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.starting) await this.starting.catch(() => {});
      await this.teardown();
      this.state = 'stopped';
    })();
    return this.stopping;
  }

  /** Sends an event to every authenticated client; returns how many it was sent to. */
  broadcast(event: string, data: unknown): number {
    if (this.authenticated.size === 0) return 0;
    const frame: EventFrame = { type: 'event', event, data };
    let text: string;
    try {
      text = encodeFrame(frame);
    } catch (error) {
      this.log(`ipc: event ${event} not sent: ${(error as Error).message}`);
      return 0;
    }
    let sent = 0;
    for (const conn of this.authenticated) {
      if (conn.state === 'open' && this.write(conn, text)) sent += 1;
    }
    return sent;
  }

  // ---- start / stop ------------------------------------------------------------------------------

  private async startUp(): Promise<void> {
    await this.endpoint.ensureRuntimeDir();
    const token = generateToken();
    this.tokenBytes = Buffer.from(token, 'utf8');

    const server = net.createServer((socket) => this.onConnection(socket));
    server.maxConnections = this.maxConnections;
    this.server = server;
    await this.endpoint.listenPrivately(server);
    server.on('error', (error) => this.log(`ipc: server error: ${error.message}`));
    server.on('drop', () => this.log(`ipc: refused a connection: already ${this.maxConnections} connections`));

    await this.endpoint.claim();
    // Ours now: only the owner of the socket writes the token.
    await this.endpoint.publishToken(token);
    this.settleReady(true);
  }

  private async teardown(): Promise<void> {
    this.settleReady(false);
    await this.endpoint.release();
    const server = this.server;
    this.server = null;
    if (server) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const conn of this.connections) this.dropConnection(conn);
      await closed;
    }
  }

  // ---- connections -------------------------------------------------------------------------------

  private onConnection(socket: net.Socket): void {
    // Attach the error listener first: an unhandled socket error would become an uncaught exception.
    socket.on('error', (error) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EPIPE' && code !== 'ECONNRESET') this.log(`ipc: connection error: ${error.message}`);
    });
    if (this.state === 'stopped' || this.stopping || !this.server) {
      socket.destroy();
      return;
    }
    const conn: Connection = {
      socket,
      decoder: new FrameDecoder(),
      state: 'hello',
      client: null,
      backlog: [],
      timer: null,
    };
    this.connections.add(conn);
    conn.timer = setTimeout(() => {
      conn.timer = null;
      if (conn.state === 'hello' || conn.state === 'checking') {
        this.log(`ipc: closed a connection that sent no valid hello within ${this.handshakeTimeoutMs} ms`);
        this.dropConnection(conn);
      }
    }, this.handshakeTimeoutMs);
    socket.on('data', (chunk: Buffer) => this.onData(conn, chunk));
    socket.on('close', () => this.onClose(conn));
  }

  private onData(conn: Connection, chunk: Buffer): void {
    if (conn.state === 'closing' || conn.state === 'closed') return;
    for (const frame of conn.decoder.push(chunk)) {
      switch (conn.state) {
        case 'hello':
          conn.state = 'checking';
          this.handshake(conn, frame).catch((error: unknown) => {
            this.log(`ipc: handshake failed: ${(error as Error).message}`);
            this.dropConnection(conn);
          });
          break;
        case 'checking':
          conn.backlog.push(frame);
          break;
        case 'open':
          this.onRequestFrame(conn, frame);
          break;
        default:
          return;
      }
    }
  }

  private onClose(conn: Connection): void {
    const wasAuthenticated = this.authenticated.delete(conn);
    this.connections.delete(conn);
    this.clearTimer(conn);
    conn.state = 'closed';
    conn.backlog = [];
    conn.decoder.reset();
    if (wasAuthenticated) {
      this.log(`ipc: client ${conn.client?.id} (${conn.client?.name}) disconnected`);
      this.clientsChanged();
    }
  }

  private async handshake(conn: Connection, frame: DecodedFrame): Promise<void> {
    // Connections accepted between claiming the socket and writing the token wait for the token.
    if (!(await this.ready) || conn.state !== 'checking') return;
    const verdict = this.checkHello(frame);
    if (!verdict.ok) {
      this.log(`ipc: refused a connection: ${verdict.error.code}`);
      this.closeWith(conn, errorReply(null, verdict.error));
      return;
    }
    const hello = verdict.hello;
    this.clearTimer(conn);
    // The name is the client's own words: keep control characters out of logs and status lines.
    const name = [...hello.client].map((ch) => (ch < ' ' || ch === '\u007f' ? '?' : ch)).join('');
    conn.client = Object.freeze({ id: this.nextClientId++, name, connectedAt: new Date() });
    conn.state = 'open';
    this.authenticated.add(conn);
    const reply: ServerHello = { type: 'hello', protocol: PROTOCOL_VERSION, server: this.serverName, pid: process.pid };
    this.write(conn, encodeFrame(reply));
    this.log(`ipc: client ${conn.client.id} (${conn.client.name}) connected`);
    this.clientsChanged();
    const backlog = conn.backlog;
    conn.backlog = [];
    for (const early of backlog) {
      if (conn.state !== 'open') break;
      this.onRequestFrame(conn, early);
    }
  }

  /** The hello in this first frame, or why it does not open a session. */
  private checkHello(frame: DecodedFrame): { ok: true; hello: ClientHello } | { ok: false; error: WireError } {
    const refuse = (error: WireError) => ({ ok: false as const, error });
    const unauthorized = (why: string) => refuse({ code: 'unauthorized', message: `Unauthorized: ${why}` });
    if (!frame.ok || !isRecord(frame.value) || frame.value.type !== 'hello' || typeof frame.value.token !== 'string') {
      return unauthorized('the first frame must be {"type":"hello","token":…,"protocol":…,"client":…} with the token from the file beside the socket.');
    }
    const value = frame.value;
    if (!tokensEqual(this.tokenBytes, value.token as string)) {
      return unauthorized('wrong token. Read it again from the token file beside the socket (the service may have restarted).');
    }
    if (value.protocol !== PROTOCOL_VERSION) {
      const clientName = typeof value.client === 'string' ? value.client.slice(0, 200) : 'the client';
      const theirs = typeof value.protocol === 'number' ? value.protocol : NaN;
      const advice =
        theirs < PROTOCOL_VERSION
          ? 'Update the client (the MCP bridge or the CLI) to the version of the app, then restart it (for the bridge: restart Claude Code).'
          : theirs > PROTOCOL_VERSION
            ? 'Update the OpenRouter Delegate app (or the headless service) to the version of the bridge/CLI, then restart it.'
            : 'Update the bridge/app so both are the same version.';
      return refuse({
        code: 'protocol_mismatch',
        message: `Protocol mismatch: this service (${this.serverName}) speaks protocol ${PROTOCOL_VERSION}, ${clientName} speaks protocol ${String(value.protocol ?? 'none')}. ${advice}`,
      });
    }
    const parsed = ClientHelloSchema.safeParse(value);
    if (!parsed.success) return refuse({ code: 'bad_frame', message: `Malformed hello: ${describeIssues(parsed.error.issues)}.` });
    return { ok: true, hello: parsed.data };
  }

  // ---- requests ----------------------------------------------------------------------------------

  private onRequestFrame(conn: Connection, frame: DecodedFrame): void {
    if (!frame.ok) {
      if (frame.code === 'frame_too_large') this.closeWith(conn, errorReply(null, { code: frame.code, message: `${frame.message} Closing the connection.` }));
      else this.write(conn, encodeFrame(errorReply(null, { code: frame.code, message: frame.message })));
      return;
    }
    const parsed = RequestFrameSchema.safeParse(frame.value);
    if (!parsed.success) {
      const id = recoverableId(frame.value);
      const message = `Not a request frame (${describeIssues(parsed.error.issues)}); expected {"type":"request","id":<integer>,"method":"…","params":{…}}.`;
      this.write(conn, encodeFrame(errorReply(id, { code: 'bad_frame', message })));
      return;
    }
    const { id, method, params } = parsed.data;
    // Requests on one connection run concurrently; replies carry the id.
    void this.runRequest(conn, id, method, params);
  }

  private async runRequest(conn: Connection, id: number, method: string, params: unknown): Promise<void> {
    let reply: ResponseFrame;
    try {
      const result = await this.dispatch(method, params, conn.client as ClientInfo);
      reply = { type: 'response', id, ok: true, result: result === undefined ? null : result };
    } catch (error) {
      reply = errorReply(id, this.toWireError(error, method));
    }
    if (conn.state !== 'open') return; // the client left while we worked
    let text: string;
    try {
      text = encodeFrame(reply);
    } catch (error) {
      const tooLarge = error instanceof ServiceError && error.code === 'frame_too_large';
      this.log(`ipc: the answer to ${method} could not be sent: ${(error as Error).message}`);
      text = encodeFrame(
        errorReply(
          id,
          tooLarge
            ? { code: 'frame_too_large', message: `The answer to ${method} is too large to send. ${error.message}` }
            : { code: 'internal', message: `The service could not encode its answer to ${method}. See the service log.` },
        ),
      );
    }
    this.write(conn, text);
  }

  private toWireError(error: unknown, method: string): WireError {
    if (error instanceof ServiceError) return error.toWire();
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    this.log(`ipc: ${method} failed: ${detail}`);
    return { code: 'internal', message: `The service failed while handling ${method}. See the service log for details.` };
  }

  // ---- writing and closing -----------------------------------------------------------------------

  /** Writes a frame; a closed or vanished client is ignored. Returns whether it was written. */
  private write(conn: Connection, text: string): boolean {
    const socket = conn.socket;
    if (socket.destroyed || !socket.writable) return false;
    if (socket.writableLength > MAX_BUFFERED_WRITE_BYTES) {
      this.log(`ipc: dropping client ${conn.client?.id ?? '?'}: it has not read ${socket.writableLength} bytes of replies`);
      this.dropConnection(conn);
      return false;
    }
    socket.write(text);
    return true;
  }

  /** Sends one last frame, then closes. */
  private closeWith(conn: Connection, frame: ResponseFrame): void {
    if (conn.state === 'closing' || conn.state === 'closed') return;
    conn.state = 'closing';
    conn.backlog = [];
    this.clearTimer(conn);
    const socket = conn.socket;
    if (socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(encodeFrame(frame), () => socket.destroy());
    // A peer that does not read would keep the connection half-closed forever.
    conn.timer = setTimeout(() => {
      conn.timer = null;
      socket.destroy();
    }, CLOSE_GRACE_MS);
  }

  private dropConnection(conn: Connection): void {
    this.clearTimer(conn);
    if (conn.state !== 'closed') conn.state = 'closing';
    conn.socket.destroy();
  }

  private clearTimer(conn: Connection): void {
    if (conn.timer) {
      clearTimeout(conn.timer);
      conn.timer = null;
    }
  }

  private clientsChanged(): void {
    if (!this.onClientsChanged) return;
    try {
      this.onClientsChanged(this.clients);
    } catch (error) {
      this.log(`ipc: onClientsChanged failed: ${(error as Error).message}`);
    }
  }
}

function recoverableId(value: unknown): number | null {
  if (!isRecord(value)) return null;
  const id = value.id;
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? id : null;
}
