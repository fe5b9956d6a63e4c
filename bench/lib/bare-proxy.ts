/**
 * The gateway bench's control (bench/gateway.ts): a proxy that does nothing but copy. It reads the request,
 * sends it on to the fake OpenRouter with the same upstream client the gateway uses
 * (src-main/core/gateway/http/upstream.ts) and pipes the answer back; no token, no price, no log, no meter. What it
 * costs is what any proxy in Node costs on this machine, so the gateway's rows can say how much of their
 * distance from direct is the gateway's own work and how much is being a proxy at all.
 *
 * Prints `{"url": …}` once it listens; exits when its stdin closes.
 * Run by bench/gateway.ts: `node --import tsx bench/lib/bare-proxy.ts <upstream origin>`.
 */
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { postUpstream } from '../../src-main/core/gateway/http/upstream.js';

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: bare-proxy.ts <upstream origin>');

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && name !== 'host' && name !== 'content-length' && name !== 'connection') headers[name] = String(value);
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    postUpstream(`${upstream}${req.url ?? '/'}`, headers, Buffer.concat(chunks), abort.signal).then(
      async (answer) => {
        res.writeHead(answer.status, { 'content-type': answer.headers['content-type'] ?? 'application/octet-stream' });
        await pipeline(answer.body, res).catch(() => undefined);
      },
      () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      },
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => server.close(() => process.exit(0)));
