/**
 * The settings page's second host (docs/ARCHITECTURE.md §2), for machines without a desktop: the built page and
 * the contract over HTTP on 127.0.0.1 only, opt-in (`openrouter-delegate serve --ui`).
 *
 *   GET  /, /assets/…            the built page (public code, no secrets): no token needed
 *   GET  /api/hello?challenge=…  proof that this server holds the page's token (no token needed, none given)
 *   POST /api/call/<method>      one contract call: JSON body in, `{ ok, result | error }` out
 *   GET  /api/events             service events as newline-delimited JSON, kept open
 *
 * What stops other local users and web pages, in order: the listener is on loopback only; the Host
 * header must name this loopback address and port (a DNS-rebinding page sends its own host name); an
 * Origin, when the browser sends one, must be this very origin; every /api request but the hello must carry
 * the random token as `Authorization: Bearer …`, compared in constant time. The token travels in the URL's
 * fragment, which browsers never send to a server, and is new at every start: it lives in this process
 * only, so a URL dies with the service that printed it. So is the port (none of the last 16 runs' ports,
 * unless the user names one), so nothing another user left in the browser for an old origin meets a new URL.
 * A JSON body is required, so a cross-site form cannot post here without a (refused) preflight.
 * Calls go into the same dispatcher as the socket: the same contract and the same validation.
 *
 * Port squatting: once the service stops, any local user may bind its port, and an open page keeps knocking
 * there. So the page first sends a random challenge and sends its token (or any call) only to a server
 * whose answer is the HMAC of that challenge under the token (src-renderer/lib/http-host.ts). Connections,
 * idle sockets, event streams and what a stream may buffer are all bounded, so an idle or slow client cannot
 * hold the service's descriptors or memory.
 */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import type { Socket } from 'node:net';
import path from 'node:path';
import { PAGE_FILE_TYPES, contentSecurityPolicy } from '../common/page-security.js';
import { MAX_FRAME_BYTES, ServiceError } from '../contract/protocol.js';
import type { WireError } from '../contract/protocol.js';
import { LOOPBACK, listenLoopback } from './loopback.js';
import { generateToken, tokensEqual, writePrivateFile } from './runtime-dir.js';
import { errorMessage } from '../common/errors.js';

export interface HttpUiDeps {
  /** The contract's dispatcher (validates `params`); service errors are ServiceError. */
  dispatch: (method: string, params: unknown) => Promise<unknown>;
  /** Every service event until the returned function is called. */
  onEvent: (listener: (event: string, data: unknown) => void) => () => void;
  /** The built page: dist/renderer (index.html and assets/). */
  pageDir: string;
  /** Where the ports of the last runs are kept (0600, never a token), so a new run never takes one of them again. */
  stateFile: string;
  /** 0 (default): a free port none of the last runs used. Another number: that port, as the user asked. */
  port?: number;
  log?: (line: string) => void;
  /** How often an idle event stream gets a keep-alive line (ms). */
  keepAliveMs?: number;
  /** Open sockets at most; more are closed at once. Leaves descriptors for the service's own socket and CLI. */
  maxConnections?: number;
  /** A socket with no request under way (not an event stream) is closed after this long (ms). */
  idleTimeoutMs?: number;
  /** Open event streams at most (one per open page); another is refused with 503. */
  maxEventStreams?: number;
  /** An event stream whose client stops reading is ended once this much output waits for it (bytes). */
  maxStreamBufferBytes?: number;
}

/** The message the page's HMAC covers: a fixed label (this purpose, this version) and the page's challenge. */
export const HELLO_LABEL = 'openrouter-delegate settings page v1:';
/** The page's challenge: 16 to 64 random bytes, hex. */
const CHALLENGE_PATTERN = /^[0-9a-f]{32,128}$/;

/** hex(HMAC-SHA256(token, HELLO_LABEL + challenge)): only a holder of the token can compute it. */
export function helloProof(token: string | Buffer, challenge: string): string {
  return createHmac('sha256', token).update(`${HELLO_LABEL}${challenge}`, 'utf8').digest('hex');
}

const DEFAULTS = {
  keepAliveMs: 15_000,
  maxConnections: 64,
  idleTimeoutMs: 10_000,
  maxEventStreams: 8,
  maxStreamBufferBytes: 1024 * 1024,
};

export interface HttpUiAddress {
  port: number;
  /** The URL to open, token included (in the fragment). Print it to the user, never to a log. */
  url: string;
}

/** The same policy as the Electron window's: no inline script, no eval, nothing remote. */
const PAGE_CSP = contentSecurityPolicy();
const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

/** How many of the last runs' ports a new run avoids. */
const RECENT_PORTS = 16;

/** The ports the last runs served on, newest first; anything else in the file (an old version's token) is ignored. */
function parseRecentPorts(text: string): number[] {
  try {
    const value = JSON.parse(text) as { recentPorts?: unknown; port?: unknown };
    const listed = Array.isArray(value.recentPorts) ? value.recentPorts : [value.port];
    return listed.filter((port): port is number => typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65536).slice(0, RECENT_PORTS);
  } catch {
    return [];
  }
}

export class HttpUiServer {
  private readonly deps: HttpUiDeps;
  private readonly log: (line: string) => void;
  private server: http.Server | null = null;
  private token: Buffer = Buffer.alloc(0);
  private port = 0;
  /** The page's files by URL path, read once at start: nothing outside pageDir can ever be served. */
  private readonly files = new Map<string, { body: Buffer; type: string }>();
  private readonly streams = new Set<http.ServerResponse>();
  private readonly sockets = new Set<Socket>();

  constructor(deps: HttpUiDeps) {
    this.deps = deps;
    this.log = deps.log ?? (() => undefined);
  }

  async start(): Promise<HttpUiAddress> {
    await this.loadPage();
    const recentPorts = parseRecentPorts(await readFile(this.deps.stateFile, 'utf8').catch(() => ''));
    // New at every start, never read back: a page (or anyone) holding an older URL holds nothing.
    const token = generateToken();
    const idleTimeoutMs = this.deps.idleTimeoutMs ?? DEFAULTS.idleTimeoutMs;
    const server = http.createServer((request, response) => void this.handle(request, response));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      // Until its first request arrives; after a response Node applies keepAliveTimeout (the same value).
      socket.setTimeout(idleTimeoutMs);
    });
    server.maxConnections = this.deps.maxConnections ?? DEFAULTS.maxConnections;
    server.keepAliveTimeout = idleTimeoutMs;
    // Headers and bodies are small here: refuse slow or huge requests early.
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    server.maxHeadersCount = 50;
    // A new port at every start (unless the user named one): whoever held an old port while the service
    // was away may have left something in the browser for that origin (a service worker that would serve
    // its own page and read the next token from the URL); a URL on a port never used before cannot meet it.
    const wanted = this.deps.port ?? 0;
    let port = await listenLoopback(server, wanted);
    // The system handed out a recent port again: hold it (so it cannot come back) and ask for another.
    const held: net.Server[] = [];
    try {
      while (wanted === 0 && recentPorts.includes(port) && held.length < RECENT_PORTS) {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        const holder = net.createServer();
        await listenLoopback(holder, port);
        held.push(holder);
        port = await listenLoopback(server, 0);
      }
    } finally {
      for (const holder of held) holder.close();
    }
    this.server = server;
    this.port = port;
    this.token = Buffer.from(token, 'utf8');
    await writePrivateFile(
      this.deps.stateFile,
      `${JSON.stringify({ recentPorts: [port, ...recentPorts.filter((p) => p !== port)].slice(0, RECENT_PORTS) })}\n`,
    );
    return { port, url: `http://${LOOPBACK}:${port}/#token=${token}` };
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const stream of this.streams) stream.end();
    this.streams.clear();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
  }

  private async loadPage(): Promise<void> {
    const root = path.resolve(this.deps.pageDir);
    const visit = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) await visit(file);
        else if (entry.isFile() && PAGE_FILE_TYPES[path.extname(entry.name)]) {
          const urlPath = `/${path.relative(root, file).split(path.sep).join('/')}`;
          this.files.set(urlPath, { body: await readFile(file), type: PAGE_FILE_TYPES[path.extname(entry.name)] as string });
        }
      }
    };
    try {
      await visit(root);
    } catch (error) {
      throw new Error(`The settings page is not built (${root}: ${(error as Error).message}). Run \`npm run build\`.`, { cause: error });
    }
    if (!this.files.has('/index.html')) throw new Error(`The settings page is not built (${root}/index.html is missing). Run \`npm run build\`.`);
  }

  /** The Host a browser sends for this server: 127.0.0.1:port or localhost:port, nothing else. */
  private hostIsOurs(host: string | undefined): boolean {
    return host === `${LOOPBACK}:${this.port}` || host === `localhost:${this.port}`;
  }

  private originIsOurs(origin: string | undefined): boolean {
    return origin === undefined || origin === `http://${LOOPBACK}:${this.port}` || origin === `http://localhost:${this.port}`;
  }

  private authorized(request: http.IncomingMessage): boolean {
    const header = request.headers.authorization ?? '';
    return header.startsWith('Bearer ') && tokensEqual(this.token, header.slice('Bearer '.length));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    try {
      if (!this.hostIsOurs(request.headers.host))
        return this.refuse(response, 421, 'Wrong Host header: open the URL `openrouter-delegate serve --ui` printed.');
      if (!this.originIsOurs(request.headers.origin)) return this.refuse(response, 403, 'Requests from other sites are refused.');
      // The raw path, looked up as it is: never resolved against anything (no "..", no "//host" tricks).
      const [pathname = '/', query = ''] = (request.url ?? '/').split('?');
      if (pathname.startsWith('/api/')) {
        // A call's body or a long-running dispatch is not idleness; the stream turns it off for good.
        request.socket.setTimeout(0);
        return await this.api(pathname, query, request, response);
      }
      if (request.method !== 'GET' && request.method !== 'HEAD') return this.refuse(response, 405, 'Only GET is served here.');
      const file = this.files.get(pathname === '/' ? '/index.html' : pathname);
      if (!file) return this.refuse(response, 404, 'Not found.');
      response.writeHead(200, {
        ...COMMON_HEADERS,
        'content-type': file.type,
        'content-length': file.body.length,
        ...(file.type.startsWith('text/html') ? { 'content-security-policy': PAGE_CSP, 'x-frame-options': 'DENY' } : {}),
      });
      response.end(request.method === 'HEAD' ? undefined : file.body);
    } catch (error) {
      this.log(`settings page over HTTP: ${errorMessage(error)}`);
      if (!response.headersSent) this.refuse(response, 500, 'The service failed while answering. See its log.');
      else response.destroy();
    }
  }

  private async api(pathname: string, query: string, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    if (pathname === '/api/hello') return this.hello(query, request, response);
    if (!this.authorized(request)) return this.refuse(response, 401, 'Missing or wrong token: open the URL `openrouter-delegate serve --ui` printed.');
    if (pathname === '/api/events') {
      if (request.method !== 'GET') return this.refuse(response, 405, 'GET only.');
      return this.events(request, response);
    }
    const method = /^\/api\/call\/([A-Za-z.]{1,64})$/.exec(pathname)?.[1];
    if (!method) return this.refuse(response, 404, 'Not found.');
    if (request.method !== 'POST') return this.refuse(response, 405, 'POST only.');
    if (!(request.headers['content-type'] ?? '').startsWith('application/json'))
      return this.refuse(response, 415, 'Send JSON (content-type: application/json).');
    let params: unknown;
    try {
      params = JSON.parse(await readBody(request, MAX_FRAME_BYTES));
    } catch (error) {
      const tooLarge = error instanceof BodyTooLargeError;
      return this.reply(response, tooLarge ? 413 : 400, {
        ok: false,
        error: { code: tooLarge ? 'frame_too_large' : 'bad_frame', message: tooLarge ? 'The request is larger than 1 MiB.' : 'The request body is not JSON.' },
      });
    }
    try {
      const result = await this.deps.dispatch(method, params);
      this.reply(response, 200, { ok: true, result });
    } catch (error) {
      if (error instanceof ServiceError) return this.reply(response, 200, { ok: false, error: error.toWire() });
      this.log(`settings page over HTTP: ${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      this.reply(response, 200, { ok: false, error: { code: 'internal', message: `The service failed while handling ${method}. See its log for details.` } });
    }
  }

  /**
   * Proves, without sending it, that this server holds the page's token: the page sends a fresh random
   * challenge and checks the HMAC before it sends the token anywhere. Needs no token; answers nothing else.
   */
  private hello(query: string, request: http.IncomingMessage, response: http.ServerResponse): void {
    if (request.method !== 'GET') return this.refuse(response, 405, 'GET only.');
    const challenge = new URLSearchParams(query).get('challenge') ?? '';
    if (!CHALLENGE_PATTERN.test(challenge)) return this.refuse(response, 400, 'The challenge is 32 to 128 lowercase hex characters.');
    const text = JSON.stringify({ proof: helloProof(this.token, challenge) });
    response.writeHead(200, { ...COMMON_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  }

  private events(request: http.IncomingMessage, response: http.ServerResponse): void {
    const maxStreams = this.deps.maxEventStreams ?? DEFAULTS.maxEventStreams;
    if (this.streams.size >= maxStreams) {
      return this.refuse(response, 503, `Too many open settings pages (${maxStreams}): close one, and this one connects by itself.`);
    }
    const maxBuffered = this.deps.maxStreamBufferBytes ?? DEFAULTS.maxStreamBufferBytes;
    response.writeHead(200, { ...COMMON_HEADERS, 'content-type': 'application/x-ndjson; charset=utf-8' });
    this.streams.add(response);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(keepAlive);
      unsubscribe();
      this.streams.delete(response);
    };
    // A page that stopped reading (frozen tab, a client that never reads) must not make us buffer without bound.
    const send = (text: string) => {
      if (ended) return;
      response.write(text);
      if (response.writableLength > maxBuffered) {
        this.log(`settings page over HTTP: an event stream fell more than ${maxBuffered} bytes behind; ended it (the page reconnects).`);
        end();
        response.destroy();
      }
    };
    const unsubscribe = this.deps.onEvent((event, data) => send(`${JSON.stringify({ event, data })}\n`));
    const keepAlive = setInterval(() => send('\n'), this.deps.keepAliveMs ?? DEFAULTS.keepAliveMs);
    keepAlive.unref();
    request.once('close', end);
    response.once('close', end);
    // The first line tells the page the stream is open (and so that the service is back after a restart).
    send(`${JSON.stringify({ event: 'stream.open', data: {} })}\n`);
  }

  private reply(response: http.ServerResponse, status: number, body: { ok: true; result: unknown } | { ok: false; error: WireError }): void {
    const text = JSON.stringify(body);
    response.writeHead(status, { ...COMMON_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  }

  private refuse(response: http.ServerResponse, status: number, message: string): void {
    response.writeHead(status, { ...COMMON_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(message) });
    response.end(message);
  }
}

class BodyTooLargeError extends Error {}

/** The body as text; past maxBytes the rest is read and dropped, then BodyTooLargeError (so a 413 can still be sent). */
function readBody(request: http.IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    request.once('end', () => (size > maxBytes ? reject(new BodyTooLargeError()) : resolve(Buffer.concat(chunks).toString('utf8'))));
    request.once('error', reject);
  });
}
