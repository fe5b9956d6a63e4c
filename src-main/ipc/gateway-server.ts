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
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { Socket } from 'node:net';
import { LOOPBACK, listenLoopback } from './loopback.js';
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
  /** Open sockets at most (default 512: each delegate keeps one or two). */
  maxConnections?: number;
}

export class GatewayServer {
  private readonly deps: GatewayServerDeps;
  private server: http.Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  /** Not a client of the service's socket: the gateway adds nothing to `service.status` clients. */
  readonly clientCount = 0;

  constructor(deps: GatewayServerDeps) {
    this.deps = deps;
  }

  broadcast(): void {
    // Delegates get no service events.
  }

  async start(): Promise<void> {
    const log = this.deps.log ?? (() => undefined);
    const kept = await readKeptPort(this.deps.stateFile);
    const server = http.createServer((req, res) => this.route(req, res));
    server.maxConnections = this.deps.maxConnections ?? 512;
    // A request body must arrive within this (a Messages request is at most 32 MiB); the answer may stream for as long as it takes.
    server.requestTimeout = 120_000;
    server.keepAliveTimeout = 30_000;
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
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
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private route(req: http.IncomingMessage, res: http.ServerResponse): void {
    const host = req.headers.host;
    if (host !== `${LOOPBACK}:${this.port}` && host !== `localhost:${this.port}`) {
      const refuse = () => {
        res.writeHead(421, { 'content-type': 'application/json', connection: 'close' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'permission_error', message: 'Wrong Host for the OpenRouter Delegate gateway.' } }));
      };
      // Answered once the body is in (and thrown away): an answer sent mid-upload is lost to the reset.
      if (req.complete) refuse();
      else {
        req.resume();
        req.once('end', refuse);
      }
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
