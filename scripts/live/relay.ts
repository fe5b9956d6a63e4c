/**
 * A recording relay between the service and OpenRouter: the service's OPENROUTER_BASE_URL points here, every
 * request goes on to the real base URL unchanged (the key in its header, which is never kept), and every answer
 * comes back as it arrives (streams stay streams) while its bytes are kept. `npm run test:live` reads what went
 * over the wire from it (did the follow-up carry `provider: { zdr: true }`, what did OpenRouter answer) and, with
 * `--capture`, writes the answers out as fixtures (capture.ts).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Listens on a free port of 127.0.0.1; the port. */
export async function listenOnLoopback(server: http.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

export interface RelayedExchange {
  method: string;
  /** Path without the query, as OpenRouter saw it, e.g. `/api/v1/messages`. */
  path: string;
  query: string;
  /** The request's JSON body (null when it had none or it was not JSON). */
  requestBody: unknown;
  status: number;
  contentType: string;
  /** The answer as sent (a stream's whole text once it ended). */
  body: string;
  firstByteMs: number | null;
  durationMs: number;
}

/** Hop-by-hop headers, and what fetch handles itself (length, compression), are not passed on. */
const DROPPED_REQUEST_HEADERS = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'accept-encoding']);
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-encoding']);

export class RecordingRelay {
  readonly exchanges: RelayedExchange[] = [];
  private readonly upstream: URL;
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private port: number | null = null;

  constructor(upstreamBaseUrl: string) {
    this.upstream = new URL(upstreamBaseUrl.replace(/\/+$/, ''));
    this.server = http.createServer((req, res) => {
      this.relay(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `relay: ${String(error)}`, code: 502 } }));
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** What the service is given as OPENROUTER_BASE_URL: this relay, with the upstream's path (`…/api`). */
  get baseUrl(): string {
    if (this.port === null) throw new Error('RecordingRelay is not started');
    return `http://127.0.0.1:${this.port}${this.upstream.pathname.replace(/\/+$/, '')}`;
  }

  async start(): Promise<void> {
    this.port = await listenOnLoopback(this.server);
  }

  async stop(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** The exchanges whose path ends with `suffix` (e.g. `/v1/messages`). */
  to(suffix: string): RelayedExchange[] {
    return this.exchanges.filter((exchange) => exchange.path.endsWith(suffix));
  }

  private async relay(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = performance.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const requestText = Buffer.concat(chunks).toString('utf8');
    const local = new URL(req.url ?? '/', 'http://127.0.0.1');
    const target = new URL(`${local.pathname}${local.search}`, this.upstream.origin);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || DROPPED_REQUEST_HEADERS.has(name)) continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const aborter = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborter.abort();
    });
    const exchange: RelayedExchange = {
      method: req.method ?? 'GET',
      path: local.pathname,
      query: local.search,
      requestBody: parseJson(requestText),
      status: 0,
      contentType: '',
      body: '',
      firstByteMs: null,
      durationMs: 0,
    };
    this.exchanges.push(exchange);
    const answer = await fetch(target, {
      method: exchange.method,
      headers,
      body: requestText.length > 0 ? requestText : undefined,
      signal: aborter.signal,
    });
    exchange.status = answer.status;
    exchange.contentType = answer.headers.get('content-type') ?? '';
    const outgoing: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!DROPPED_RESPONSE_HEADERS.has(name)) outgoing[name] = value;
    });
    res.writeHead(answer.status, outgoing);
    const decoder = new TextDecoder();
    const reader = answer.body?.getReader();
    try {
      for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
        exchange.firstByteMs ??= performance.now() - started;
        exchange.body += decoder.decode(read.value, { stream: true });
        res.write(read.value);
      }
    } finally {
      exchange.durationMs = performance.now() - started;
      res.end();
    }
  }
}

function parseJson(text: string): unknown {
  if (text.length === 0) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
