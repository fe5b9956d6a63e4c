/**
 * The gateway's request to OpenRouter (src-main/core/gateway/http/upstream.ts) on a kept-alive socket the other end has
 * closed: the soak met it as a job ended on a 502 its delegate did not cause. A raw server stands in: it answers a
 * request, keeps the socket, and resets it when the next request comes on it.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postUpstream } from '../../../../src-main/core/gateway/http/upstream.js';

let server: net.Server | null = null;
const sockets = new Set<net.Socket>();
afterEach(async () => {
  // The gateway's pool keeps its sockets: they are ended here, or the server would wait for them.
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

const ANSWER = 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok';

/** Answers the first request of each connection; `onSecond` is what it does to a second one on the same socket. */
async function serve(onSecond: 'reset' | 'answer'): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    let requests = 0;
    socket.on('data', (chunk) => {
      if (!chunk.toString('latin1').includes('\r\n\r\n')) return;
      requests++;
      if (requests === 1 || onSecond === 'answer') socket.write(ANSWER);
      else socket.resetAndDestroy();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/v1/messages`, connections: () => connections };
}

async function post(url: string): Promise<string> {
  const answer = await postUpstream(url, { 'content-type': 'application/json' }, '{}', new AbortController().signal);
  let text = '';
  for await (const chunk of answer.body) text += String(chunk);
  return `${answer.status} ${text}`;
}

describe('a request to OpenRouter on a kept-alive socket', () => {
  it('goes again, once, on a new connection when the socket it went on is reset before any answer', async () => {
    const upstream = await serve('reset');
    expect(await post(upstream.url)).toBe('200 ok');
    expect(await post(upstream.url)).toBe('200 ok');
    expect(upstream.connections()).toBe(2);
  });

  it('reuses the socket while it lives', async () => {
    const upstream = await serve('answer');
    expect(await post(upstream.url)).toBe('200 ok');
    expect(await post(upstream.url)).toBe('200 ok');
    expect(upstream.connections()).toBe(1);
  });

  it('is not sent again when a new connection is refused: that is OpenRouter out of reach', async () => {
    const upstream = await serve('answer');
    await new Promise((resolve) => server?.close(resolve));
    server = null;
    await expect(post(upstream.url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
