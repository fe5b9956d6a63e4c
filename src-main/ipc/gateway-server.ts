/**
 * Where delegates reach the metering gateway (docs/ARCHITECTURE.md §11): HTTP on 127.0.0.1, on the same port
 * across restarts of the service, so a delegate that outlived a dead service finds the next one where it
 * left the last (its Claude Code retries meanwhile). The port is kept in the runtime folder (0600, the port
 * alone); a run that finds it taken by another program takes a new one and says so in the log, since the
 * delegates still running then cannot follow.
 *
 * The Host header must name this loopback address and port, so a web page that rebinds a name to 127.0.0.1
 * cannot use a delegate's token from a browser. Everything else — which job a token belongs to, what may be
 * forwarded — is the gateway's (core/gateway/gateway.ts); this only listens and bounds the sockets.
 *
 * Any local user can connect to the port (SECURITY.md §2), so the sockets are bounded in two budgets: a socket
 * is trusted once it carried a request with a live job's token (the gateway says so through `trust`), and the
 * untrusted ones — strangers', and delegates' before their first request is looked up — have a budget of their
 * own, where a new connection closes the oldest. A stranger can churn its own sockets but never fill the ones
 * delegates hold, nor keep a delegate's new connection out. Headers must arrive within two seconds, so a socket
 * that sends nothing, or half a request, is cheap to hold for no longer than that.
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { Socket } from 'node:net';
import { LOOPBACK, listenLoopback } from './loopback.js';
import { REFUSED_BODY_MS, answerAfterBody } from '../platform/refused-body.js';
import { writePrivateFile } from './runtime-dir.js';
import { errorMessage } from '../common/errors.js';

export interface GatewayServerDeps {
  /** Answers a request that passed the Host check. */
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  /** `{ "port": N }`, kept between runs. */
  stateFile: string;
  /** Told the gateway's URL once it listens (delegates get it as ANTHROPIC_BASE_URL). */
  onListening: (url: string) => void;
  log?: (line: string) => void;
  /** Sockets not (yet) trusted, at most (default 256); past it, a new connection closes the oldest of them. */
  untrustedSockets?: number;
  /** Trusted sockets, at most (default 512: each delegate keeps one or two); past it, a socket stays untrusted. */
  trustedSockets?: number;
  /** A request's headers must be in within this of its first byte, or of the connection for its first request (default 2 s). */
  headersTimeoutMs?: number;
  /** A request refused here (wrong Host) is answered once its body is in, or closed if the body is still coming after this (default 1 s). */
  refusedBodyMs?: number;
}

/** The limits a listener holds sockets to, as it runs with them. */
export type GatewayServerLimits = Required<Pick<GatewayServerDeps, 'untrustedSockets' | 'trustedSockets' | 'headersTimeoutMs' | 'refusedBodyMs'>>;

const DEFAULTS: GatewayServerLimits = { untrustedSockets: 256, trustedSockets: 512, headersTimeoutMs: 2_000, refusedBodyMs: REFUSED_BODY_MS };

export class GatewayServer {
  private readonly deps: GatewayServerDeps;
  /** The deadlines and budgets in force: the defaults (SECURITY.md §2), or what the deps gave (tests wait out shorter ones). */
  readonly limits: GatewayServerLimits;
  private server: http.Server | null = null;
  /** Oldest first (a Set keeps insertion order): the first is the one a new connection closes. */
  private readonly untrusted = new Set<Socket>();
  private readonly trusted = new Set<Socket>();
  private trustedFullLogged = false;
  port = 0;

  /** Not a client of the service's socket: the gateway adds nothing to `service.status` clients. */
  readonly clientCount = 0;

  constructor(deps: GatewayServerDeps) {
    this.deps = deps;
    this.limits = {
      untrustedSockets: deps.untrustedSockets ?? DEFAULTS.untrustedSockets,
      trustedSockets: deps.trustedSockets ?? DEFAULTS.trustedSockets,
      headersTimeoutMs: deps.headersTimeoutMs ?? DEFAULTS.headersTimeoutMs,
      refusedBodyMs: deps.refusedBodyMs ?? DEFAULTS.refusedBodyMs,
    };
  }

  broadcast(): void {
    // Delegates get no service events.
  }

  /** Open sockets in each budget (tests and benches). */
  get sockets(): { trusted: number; untrusted: number } {
    return { trusted: this.trusted.size, untrusted: this.untrusted.size };
  }

  /**
   * A socket that carried a request with a live job's token (MeteringGateway.onAuthenticated): a stranger's
   * connection no longer closes it, between its requests too, until it closes.
   */
  trust(socket: Socket): void {
    if (!this.untrusted.has(socket)) return;
    if (this.trusted.size >= this.limits.trustedSockets) {
      if (!this.trustedFullLogged) this.deps.log?.(`gateway: ${this.trusted.size} delegates' connections open, the most kept apart; more count as strangers'`);
      this.trustedFullLogged = true;
      return;
    }
    this.trustedFullLogged = false;
    this.untrusted.delete(socket);
    this.trusted.add(socket);
  }

  async start(): Promise<void> {
    const log = this.deps.log ?? (() => undefined);
    const kept = await readKeptPort(this.deps.stateFile);
    const headersTimeout = this.limits.headersTimeoutMs;
    const server = http.createServer(
      {
        headersTimeout,
        // A request body must arrive within this (a Messages request is at most 32 MiB); the answer may stream for as long as it takes.
        requestTimeout: 120_000,
        // Node checks both deadlines this often, so a late check adds at most a quarter of the headers' deadline
        // (a socket that never sends a byte is counted from its connection).
        connectionsCheckingInterval: Math.min(1_000, Math.max(100, headersTimeout / 4)),
      },
      (req, res) => this.route(req, res),
    );
    server.keepAliveTimeout = 30_000;
    server.on('connection', (socket: Socket) => this.admit(socket));
    let port: number;
    try {
      port = await listenLoopback(server, kept ?? 0);
    } catch (error) {
      if (kept === null) throw error;
      log(`gateway: port ${kept} (kept from the last run) is taken (${errorMessage(error)}); delegates still running from then cannot reach this service`);
      port = await listenLoopback(server, 0);
    }
    this.server = server;
    this.port = port;
    if (port !== kept) await writePrivateFile(this.deps.stateFile, `${JSON.stringify({ port })}\n`);
    this.deps.onListening(`http://${LOOPBACK}:${port}`);
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of [...this.untrusted, ...this.trusted]) socket.destroy();
    await closed;
  }

  /** A new connection is untrusted; when their budget is full it takes the place of the oldest. */
  private admit(socket: Socket): void {
    if (this.untrusted.size >= this.limits.untrustedSockets) {
      const oldest = this.untrusted.values().next().value;
      if (oldest) {
        this.untrusted.delete(oldest);
        oldest.destroy();
      }
    }
    this.untrusted.add(socket);
    socket.on('close', () => {
      this.untrusted.delete(socket);
      this.trusted.delete(socket);
    });
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse): void {
    const host = req.headers.host;
    if (host !== `${LOOPBACK}:${this.port}` && host !== `localhost:${this.port}`) {
      answerAfterBody(
        req,
        () => {
          res.writeHead(421, { 'content-type': 'application/json', connection: 'close' });
          res.end(JSON.stringify({ type: 'error', error: { type: 'permission_error', message: 'Wrong Host for the OpenRouter Delegate gateway.' } }));
        },
        this.limits.refusedBodyMs,
      );
      return;
    }
    this.deps.handle(req, res);
  }
}

async function readKeptPort(file: string): Promise<number | null> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as { port?: unknown };
    return typeof value.port === 'number' && Number.isInteger(value.port) && value.port > 0 && value.port < 65536 ? value.port : null;
  } catch {
    return null;
  }
}
