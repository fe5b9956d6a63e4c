/**
 * A recording door between a delegate's Claude Code and the metering gateway, for captures of what Claude Code
 * itself sends. OpenRouter (or the fake) sees only what the gateway forwards — with the header allowlist, not what
 * was sent — so the capture stands at the gateway's door instead: the service is given a `claude` launcher
 * (`writeLauncher`, through OPENROUTER_DELEGATE_CLAUDE) that runs the real CLI with its ANTHROPIC_BASE_URL pointed
 * here, and this door keeps each request whole (headers and body) and passes it on to the gateway unchanged but for
 * its Host. Nothing of the product changes; the bytes kept stay in memory (request-record.ts reduces them).
 *
 * The gateway's address rides in the door's path (`/gateway/<port>/v1/messages`), so one door serves every service.
 */
import { chmod, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { listenOnLoopback } from './relay.js';

export interface DoorRequest {
  method: string;
  /** The path as the gateway sees it, without the query: `/v1/messages`. */
  path: string;
  query: string;
  /** As Claude Code sent them (names lower-cased by Node). */
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Hop-by-hop headers: each connection's own (the door frames both sides anew). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer']);
const THROUGH = /^\/gateway\/(\d+)(\/[^?]*)?(\?.*)?$/;

function withoutHopByHop(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

export class ClaudeDoor {
  readonly requests: DoorRequest[] = [];
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private port: number | null = null;

  constructor() {
    this.server = http.createServer((req, res) => {
      this.pass(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: `capture door: ${String(error)}` } }));
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<void> {
    this.port = await listenOnLoopback(this.server);
  }

  /** Where it listens: `http://127.0.0.1:<port>`; a gateway's requests come to `<url>/gateway/<its port>/…`. */
  get url(): string {
    if (this.port === null) throw new Error('ClaudeDoor is not started');
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /**
   * Writes `claude` into `dir`: a launcher that runs `claude` (the real CLI) with a loopback ANTHROPIC_BASE_URL
   * (the gateway's) turned into this door's. Returns its path, for OPENROUTER_DELEGATE_CLAUDE.
   */
  async writeLauncher(dir: string, claude: string): Promise<string> {
    if (claude.includes("'")) throw new Error(`The claude path ${claude} has a quote in it; the launcher cannot name it.`);
    const file = path.join(dir, 'claude');
    const script = [
      '#!/bin/sh',
      '# Written by scripts/live/claude-door.ts: the real Claude Code, its requests to the gateway through a recording door.',
      'case "$ANTHROPIC_BASE_URL" in',
      `  http://127.0.0.1:*) ANTHROPIC_BASE_URL="${this.url}/gateway/\${ANTHROPIC_BASE_URL#http://127.0.0.1:}"; export ANTHROPIC_BASE_URL ;;`,
      'esac',
      `exec '${claude}' "$@"`,
      '',
    ].join('\n');
    await writeFile(file, script);
    await chmod(file, 0o755);
    return file;
  }

  /** The requests to `suffix` (e.g. `/v1/messages`) made with `method`. */
  to(method: string, suffix: string): DoorRequest[] {
    return this.requests.filter((r) => r.method === method && r.path.endsWith(suffix));
  }

  private async pass(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const through = THROUGH.exec(req.url ?? '');
    if (!through) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('The capture door passes /gateway/<port>/… only.\n');
      return;
    }
    const [, port, where = '/', query = ''] = through;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const method = req.method ?? 'GET';
    this.requests.push({ method, path: where, query, headers: { ...req.headers }, body: body.toString('utf8') });
    const headers = { ...withoutHopByHop(req.headers), host: `127.0.0.1:${port}`, 'content-length': String(body.length) };
    await new Promise<void>((resolve, reject) => {
      const upstream = http.request({ host: '127.0.0.1', port: Number(port), method, path: `${where}${query}`, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, withoutHopByHop(answer.headers));
        answer.pipe(res);
        answer.on('end', resolve);
        answer.on('error', reject);
      });
      upstream.on('error', reject);
      // The delegate hung up: so does the door, and the gateway sees it as it would have.
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
        resolve();
      });
      upstream.end(body);
    });
  }
}
