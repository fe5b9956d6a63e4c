/**
 * The settings page's loopback host: who may reach it and what it answers. Real HTTP on 127.0.0.1,
 * the real dispatcher behind it (contract validation), a built page folder of its own.
 */
import { createHmac } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src-main/contract/protocol.js';
import { defaultSettings } from '../../src-main/contract/settings.js';
import { contentSecurityPolicy } from '../../src-main/common/page-security.js';
import { HttpUiServer, helloProof } from '../../src-main/ipc/http-ui.js';
import type { HttpUiDeps } from '../../src-main/ipc/http-ui.js';
import { createDispatcher } from '../../src-main/core/service/dispatcher.js';
import type { Handlers } from '../../src-main/core/service/dispatcher.js';
import { makeTempHome } from '../support/temp-home.js';

let home: { home: string; cleanup: () => Promise<void> };
let server: HttpUiServer;
let port: number;
let token: string;
let emit: (event: string, data: unknown) => void;
const calls: Array<{ method: string; params: unknown }> = [];
const logLines: string[] = [];
/** Raw sockets and streams a test opened, closed after it. */
const opened: Array<{ destroy: () => void }> = [];

/** Sends a raw request (fetch would fix up Host and Origin for us, which is what is under test). */
function request(options: {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: { host: `127.0.0.1:${port}`, ...options.headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

function callApi(method: string, params: unknown, headers: Record<string, string> = {}) {
  return request({
    method: 'POST',
    path: `/api/call/${method}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(params),
  });
}

async function startServer(overrides: Partial<HttpUiDeps> = {}): Promise<void> {
  const listeners = new Set<(event: string, data: unknown) => void>();
  emit = (event, data) => {
    for (const listener of listeners) listener(event, data);
  };
  const handlers = {
    'settings.get': async () => defaultSettings(),
    'jobs.cancel': async ({ jobId }: { jobId: string }) => {
      throw new ServiceError('not_found', `No job ${jobId}.`);
    },
  } as unknown as Handlers;
  const dispatch = createDispatcher(handlers);
  server = new HttpUiServer({
    dispatch: async (method, params) => {
      calls.push({ method, params });
      return dispatch(method, params, { client: 'test' });
    },
    onEvent: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    pageDir: path.join(home.home, 'page'),
    stateFile: path.join(home.home, 'run', 'settings-page.json'),
    keepAliveMs: 50,
    log: (line) => logLines.push(line),
    ...overrides,
  });
  const address = await server.start();
  port = address.port;
  token = /#token=([0-9a-f]{64})$/.exec(address.url)?.[1] ?? '';
}

beforeEach(async () => {
  calls.length = 0;
  logLines.length = 0;
  home = await makeTempHome('ord-http-ui-');
  await mkdir(path.join(home.home, 'page', 'assets'), { recursive: true });
  await mkdir(path.join(home.home, 'run'), { recursive: true, mode: 0o700 });
  await writeFile(path.join(home.home, 'page', 'index.html'), '<!doctype html><title>page</title>');
  await writeFile(path.join(home.home, 'page', 'assets', 'app.js'), 'console.log(1)');
  await writeFile(path.join(home.home, 'secret.txt'), 'not for the page');
  await startServer();
});

afterEach(async () => {
  for (const thing of opened.splice(0)) thing.destroy();
  await server.stop();
  await home.cleanup();
});

describe('the page', () => {
  it('is served to anyone on this machine who knows the port, with the CSP and no caching', async () => {
    const page = await request({ path: '/' });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>page</title>');
    expect(page.headers['content-security-policy']).toBe(contentSecurityPolicy());
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['cache-control']).toBe('no-store');
    const script = await request({ path: '/assets/app.js' });
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
  });

  it('serves nothing outside the page folder, whatever the path says', async () => {
    for (const attempt of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/../../secret.txt', '/assets/%2e%2e%2f%2e%2e%2fsecret.txt', '//secret.txt']) {
      const answer = await request({ path: attempt });
      expect(answer.status, attempt).toBe(404);
      expect(answer.body).not.toContain('not for the page');
    }
  });

  it('listens on the loopback address only', async () => {
    // The URL names 127.0.0.1; nothing else answers (the port is bound to that address alone).
    await expect(
      new Promise((resolve, reject) => {
        const req = http.request({ host: '::1', port, path: '/', family: 6 }, resolve);
        req.on('error', reject);
        req.end();
      }),
    ).rejects.toThrow();
  });
});

describe('who may call the service', () => {
  it('answers a call with the token, through the contract', async () => {
    const answer = await callApi('settings.get', {});
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ ok: true, result: defaultSettings() });
  });

  it('refuses a call without the token, or with a wrong one, before the service sees it', async () => {
    const missing = await request({ method: 'POST', path: '/api/call/settings.get', headers: { 'content-type': 'application/json' }, body: '{}' });
    const wrong = await callApi('settings.get', {}, { authorization: `Bearer ${'0'.repeat(64)}` });
    const short = await callApi('settings.get', {}, { authorization: 'Bearer x' });
    expect([missing.status, wrong.status, short.status]).toEqual([401, 401, 401]);
    expect(calls).toEqual([]);
  });

  it('refuses a request whose Host is not this loopback address (DNS rebinding)', async () => {
    const answer = await callApi('settings.get', {}, { host: `evil.example:${port}` });
    expect(answer.status).toBe(421);
    expect((await request({ path: '/', headers: { host: 'evil.example' } })).status).toBe(421);
    expect(calls).toEqual([]);
  });

  it('refuses a request from another origin, even with the token', async () => {
    const answer = await callApi('settings.get', {}, { origin: 'http://evil.example' });
    expect(answer.status).toBe(403);
    const otherPort = await callApi('settings.get', {}, { origin: `http://127.0.0.1:${port + 1}` });
    expect(otherPort.status).toBe(403);
    expect(calls).toEqual([]);
    // Its own origin is fine.
    expect((await callApi('settings.get', {}, { origin: `http://127.0.0.1:${port}` })).status).toBe(200);
  });

  it('accepts only JSON posts, so a cross-site form cannot call it', async () => {
    const form = await request({
      method: 'POST',
      path: '/api/call/settings.get',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    expect(form.status).toBe(415);
    const get = await request({ path: '/api/call/settings.get', headers: { authorization: `Bearer ${token}` } });
    expect(get.status).toBe(405);
    expect(calls).toEqual([]);
  });
});

describe('what a call answers', () => {
  it('validates parameters exactly as the socket does', async () => {
    const answer = JSON.parse((await callApi('jobs.cancel', { jobId: 7 })).body) as { ok: boolean; error: { code: string; message: string } };
    expect(answer.ok).toBe(false);
    expect(answer.error.code).toBe('invalid_params');
    expect(answer.error.message).toMatch(/jobId/);
  });

  it('passes service errors on with their code', async () => {
    const answer = JSON.parse((await callApi('jobs.cancel', { jobId: 'nope' })).body) as { ok: boolean; error: { code: string } };
    expect(answer).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('names unknown methods and refuses bodies that are not JSON or are too large', async () => {
    const unknown = JSON.parse((await callApi('no.such', {})).body) as { error: { code: string } };
    expect(unknown.error.code).toBe('unknown_method');
    const garbage = await request({
      method: 'POST',
      path: '/api/call/settings.get',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body)).toMatchObject({ ok: false, error: { code: 'bad_frame' } });
    const huge = await callApi('settings.get', { pad: 'x'.repeat(1024 * 1024 + 10) });
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.body)).toMatchObject({ ok: false, error: { code: 'frame_too_large' } });
    // And it still serves.
    expect((await callApi('settings.get', {})).status).toBe(200);
  });
});

describe('events', () => {
  it('streams service events as JSON lines, after a first line that says the stream is open', async () => {
    const lines: unknown[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, path: '/api/events', headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` } },
        (res) => {
          let buffered = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffered += chunk;
            for (let i = buffered.indexOf('\n'); i !== -1; i = buffered.indexOf('\n')) {
              const line = buffered.slice(0, i).trim();
              buffered = buffered.slice(i + 1);
              if (!line) continue;
              lines.push(JSON.parse(line));
              if (lines.length === 1) emit('settings.changed', { mode: 'auto' });
              if (lines.length === 2) {
                req.destroy();
                resolve();
              }
            }
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    await done;
    expect(lines).toEqual([
      { event: 'stream.open', data: {} },
      { event: 'settings.changed', data: { mode: 'auto' } },
    ]);
  });

  it('refuses the stream without the token', async () => {
    expect((await request({ path: '/api/events' })).status).toBe(401);
  });
});

/** Opens the event stream; resolves at its first line, with the response (paused) and what arrives after. */
function openStream(
  headers: Record<string, string> = { authorization: `Bearer ${token}` },
): Promise<{ status: number; body: string; req: http.ClientRequest; res: http.IncomingMessage; lines: unknown[] }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/api/events', agent: false, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      const lines: unknown[] = [];
      let buffered = '';
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        res.on('data', (chunk: string) => (buffered += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: buffered, req, res, lines }));
        return;
      }
      const onData = (chunk: string) => {
        buffered += chunk;
        for (let i = buffered.indexOf('\n'); i !== -1; i = buffered.indexOf('\n')) {
          const line = buffered.slice(0, i).trim();
          buffered = buffered.slice(i + 1);
          if (!line) continue;
          lines.push(JSON.parse(line));
          if (lines.length === 1) resolve({ status: 200, body: '', req, res, lines });
        }
      };
      res.on('data', onData);
    });
    opened.push(req);
    req.on('error', reject);
    req.end();
  });
}

/** A raw TCP connection that says nothing; resolves once connected, with a promise of its close. */
function idleSocket(): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    opened.push(socket);
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

/** Sends one GET / on an open raw socket and resolves with the status line. */
function getOn(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8').split('\r\n')[0] ?? ''));
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  });
}

describe('the hello', () => {
  it("proves the server holds the token: the HMAC of the page's challenge, with no token asked or given", async () => {
    const challenge = 'ab'.repeat(32);
    const answer = await request({ path: `/api/hello?challenge=${challenge}` });
    expect(answer.status).toBe(200);
    const { proof } = JSON.parse(answer.body) as { proof: string };
    expect(proof).toBe(createHmac('sha256', token).update(`openrouter-delegate settings page v1:${challenge}`).digest('hex'));
    expect(answer.body).not.toContain(token);
    expect(calls).toEqual([]);
  });

  it('gives another proof for another challenge, and a proof under another token does not match', async () => {
    const first = JSON.parse((await request({ path: `/api/hello?challenge=${'01'.repeat(32)}` })).body) as { proof: string };
    const second = JSON.parse((await request({ path: `/api/hello?challenge=${'02'.repeat(32)}` })).body) as { proof: string };
    expect(first.proof).not.toBe(second.proof);
    expect(first.proof).not.toBe(helloProof('0'.repeat(64), '01'.repeat(32)));
    expect(first.proof).toBe(helloProof(token, '01'.repeat(32)));
  });

  it('refuses a malformed challenge, and keeps the Host and Origin checks', async () => {
    expect((await request({ path: '/api/hello?challenge=xyz' })).status).toBe(400);
    expect((await request({ path: '/api/hello' })).status).toBe(400);
    expect((await request({ path: `/api/hello?challenge=${'ab'.repeat(32)}`, headers: { host: `evil.example:${port}` } })).status).toBe(421);
    expect((await request({ path: `/api/hello?challenge=${'ab'.repeat(32)}`, headers: { origin: 'http://evil.example' } })).status).toBe(403);
  });
});

describe('the URL', () => {
  it('has a new token and a new port at every start; the old token is refused', async () => {
    const file = path.join(home.home, 'run', 'settings-page.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // The file keeps ports only: the token lives in the process that printed it.
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ recentPorts: [port] });
    const before = { port, token };
    await server.stop();
    await startServer();
    expect(port).not.toBe(before.port);
    expect(token).not.toBe(before.token);
    // The old origin is gone, so nothing a squatter left for it in the browser meets the new URL.
    expect((await fetch(`http://127.0.0.1:${before.port}/`).catch(() => null))?.status).toBeUndefined();
    const hello = JSON.parse((await request({ path: `/api/hello?challenge=${'cd'.repeat(32)}` })).body) as { proof: string };
    expect(hello.proof).not.toBe(helloProof(before.token, 'cd'.repeat(32)));
    expect((await callApi('settings.get', {}, { authorization: `Bearer ${before.token}` })).status).toBe(401);
    expect((await openStream({ authorization: `Bearer ${before.token}` })).status).toBe(401);
    expect((await callApi('settings.get', {})).status).toBe(200);
    expect(calls).toHaveLength(1);
  });

  it('never serves again on a port one of its last runs served on', async () => {
    const seen = [port];
    for (let run = 0; run < 5; run++) {
      await server.stop();
      await startServer();
      expect(seen).not.toContain(port);
      seen.unshift(port);
    }
    const file = path.join(home.home, 'run', 'settings-page.json');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ recentPorts: seen });
  });

  it('serves on the port the user names, even one it served on before', async () => {
    const before = port;
    await server.stop();
    await startServer({ port: before });
    expect(port).toBe(before);
  });

  it('never takes up a token a former version kept in the file', async () => {
    const file = path.join(home.home, 'run', 'settings-page.json');
    const planted = 'f'.repeat(64);
    await server.stop();
    await writeFile(file, JSON.stringify({ port, token: planted }));
    await startServer();
    expect(token).not.toBe(planted);
    expect(await readFile(file, 'utf8')).not.toContain(planted);
  });

  it('takes another port when the last one is taken, with a new token', async () => {
    const before = { port, token };
    await server.stop();
    const squatter = http.createServer();
    await new Promise<void>((resolve) => squatter.listen(before.port, '127.0.0.1', resolve));
    try {
      await startServer();
      expect(port).not.toBe(before.port);
      expect(token).not.toBe(before.token);
      expect((await callApi('settings.get', {}, { authorization: `Bearer ${before.token}` })).status).toBe(401);
    } finally {
      squatter.close();
    }
  });

  it('fails clearly when the page is not built', async () => {
    await server.stop();
    await expect(startServer({ pageDir: path.join(home.home, 'missing') })).rejects.toThrow(/settings page is not built.*npm run build/);
    await startServer();
  });
});

describe('limits', () => {
  it('closes connections beyond maxConnections at once, and keeps serving the others', async () => {
    await server.stop();
    await startServer({ maxConnections: 3 });
    const kept = [await idleSocket(), await idleSocket(), await idleSocket()];
    const extra = await idleSocket();
    await extra.closed;
    expect(await getOn(kept[0]?.socket as net.Socket)).toBe('HTTP/1.1 200 OK');
  });

  it('closes a socket that sends nothing after the idle timeout, and one idle after its answer, but not an event stream', async () => {
    await server.stop();
    await startServer({ idleTimeoutMs: 100, keepAliveMs: 60_000 });
    const stream = await openStream();
    const silent = await idleSocket();
    await silent.closed;
    const answered = await idleSocket();
    expect(await getOn(answered.socket)).toBe('HTTP/1.1 200 OK');
    await answered.closed;
    // The stream has been quiet for longer than two idle timeouts by now, and still carries events.
    const next = new Promise<unknown>((resolve) => stream.res.on('data', () => resolve(stream.lines.at(-1))));
    emit('settings.changed', { mode: 'auto' });
    expect(await next).toEqual({ event: 'settings.changed', data: { mode: 'auto' } });
  });

  it('refuses an event stream beyond maxEventStreams with 503 and says why', async () => {
    await server.stop();
    await startServer({ maxEventStreams: 2 });
    const first = await openStream();
    await openStream();
    const third = await openStream();
    expect(third.status).toBe(503);
    expect(third.body).toMatch(/Too many open settings pages \(2\)/);
    // Once one closes, another may open.
    first.req.destroy();
    await expect
      .poll(async () => {
        const retry = await openStream();
        return retry.status;
      })
      .toBe(200);
  });

  it('ends an event stream whose client stops reading once its output passes the buffer cap', async () => {
    await server.stop();
    await startServer({ maxStreamBufferBytes: 64 * 1024, keepAliveMs: 60_000 });
    const stream = await openStream();
    stream.res.pause();
    const ended = new Promise<void>((resolve) => stream.res.once('close', () => resolve()));
    const big = 'x'.repeat(256 * 1024);
    // Kernel buffers take the first megabytes; past them the server's own buffer grows, up to the cap.
    for (let sent = 0; sent < 256 && !logLines.some((line) => line.includes('fell more than')); sent++) {
      emit('settings.changed', { pad: big });
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(logLines.join('\n')).toMatch(/an event stream fell more than 65536 bytes behind; ended it/);
    // What was written still arrives; then the stream ends instead of carrying on.
    stream.res.resume();
    await ended;
  });
});
