/**
 * The settings page's loopback host: who may reach it and what it answers. Real HTTP on 127.0.0.1,
 * the real dispatcher behind it (contract validation), a built page folder of its own.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src-main/contract/protocol.js';
import { defaultSettings } from '../../src-main/contract/settings.js';
import { contentSecurityPolicy } from '../../src-main/contract/present/window-options.js';
import { HttpUiServer } from '../../src-main/ipc/http-ui.js';
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

/** Sends a raw request (fetch would fix up Host and Origin for us, which is what is under test). */
function request(
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
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
    ...overrides,
  });
  const address = await server.start();
  port = address.port;
  token = /#token=([0-9a-f]{64})$/.exec(address.url)?.[1] ?? '';
}

beforeEach(async () => {
  calls.length = 0;
  home = await makeTempHome('ord-http-ui-');
  await mkdir(path.join(home.home, 'page', 'assets'), { recursive: true });
  await mkdir(path.join(home.home, 'run'), { recursive: true, mode: 0o700 });
  await writeFile(path.join(home.home, 'page', 'index.html'), '<!doctype html><title>page</title>');
  await writeFile(path.join(home.home, 'page', 'assets', 'app.js'), 'console.log(1)');
  await writeFile(path.join(home.home, 'secret.txt'), 'not for the page');
  await startServer();
});

afterEach(async () => {
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
      const req = http.request({ host: '127.0.0.1', port, path: '/api/events', headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` } }, (res) => {
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
      });
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

describe('the URL', () => {
  it('keeps its token in a private file and serves the same URL after a restart', async () => {
    const file = path.join(home.home, 'run', 'settings-page.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const before = { port, token };
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(before);
    await server.stop();
    await startServer();
    expect({ port, token }).toEqual(before);
  });

  it('takes another port when the last one is taken, keeping the token', async () => {
    const before = { port, token };
    await server.stop();
    const squatter = http.createServer();
    await new Promise<void>((resolve) => squatter.listen(before.port, '127.0.0.1', resolve));
    try {
      await startServer();
      expect(port).not.toBe(before.port);
      expect(token).toBe(before.token);
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
