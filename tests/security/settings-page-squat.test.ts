/**
 * Port squatting on the loopback settings page (SECURITY.md §1): once the service stops, any local user may
 * bind its port, and a page left open keeps knocking there. The real page in Chromium, the real service
 * (`serve --ui`); the squatter is a plain HTTP server run as another user (`nobody`, when the tests run as
 * root) that records every request and answers like the service would, stream and all, without the token.
 * The page must send it neither the token nor any call (a call's body may hold a key the user typed), and
 * must not pick up the restarted service either: its link is dead, and it says to open the new URL.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEY } from '../support/delegation.js';
import { NO_ENV_KEY, UiWorld, useBrowser, openPage } from '../support/ui.js';

const chrome = useBrowser();
const UI = 15_000;
/** The classic unprivileged account; any uid other than ours would do. */
const OTHER_UID = 65534;
const AS_OTHER_USER = process.getuid?.() === 0;

interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * The squatter: binds 127.0.0.1:<port>, prints "listening", then one JSON line per request it received.
 * It answers the hello with a made-up proof, opens an event stream for anyone, and answers every call "ok".
 */
const SQUATTER = `
  const http = require('node:http');
  const port = Number(process.argv[1]);
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      console.log(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
      const path = req.url.split('?')[0];
      if (path === '/api/hello') return res.end(JSON.stringify({ proof: '00'.repeat(32) }));
      if (path === '/api/events') return res.write(JSON.stringify({ event: 'stream.open', data: {} }) + '\\n');
      if (path.startsWith('/api/call/')) return res.end(JSON.stringify({ ok: true, result: {} }));
      res.statusCode = 404;
      res.end();
    });
  });
  server.listen({ host: '127.0.0.1', port, exclusive: true }, () => console.log('listening'));
  process.on('SIGTERM', () => process.exit(0));
`;

interface Squatter {
  child: ChildProcessByStdio<null, Readable, Readable>;
  requests: () => Recorded[];
  stop: () => Promise<void>;
}

function squat(port: number): Promise<Squatter> {
  const child = spawn(process.execPath, ['-e', SQUATTER, String(port)], {
    ...(AS_OTHER_USER ? { uid: OTHER_UID, gid: OTHER_UID } : {}),
    cwd: '/',
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const requests = () =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Recorded);
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (/^listening$/m.test(out)) resolve({ child, requests, stop });
    });
    child.once('exit', (code) => reject(new Error(`the squatter exited (${code}) before it listened:\n${err}`)));
  });
}

let world: UiWorld;
let squatter: Squatter | null = null;

beforeEach(async () => {
  world = new UiWorld();
  await world.start({}, NO_ENV_KEY);
  await world.startService();
});
afterEach(async () => {
  await squatter?.stop();
  squatter = null;
  await world.stop();
});

describe('another local user on the port of a stopped service', () => {
  it('gets neither the token nor a call from an open page, which then stays dead; the restarted service is on another port', async () => {
    const url = world.pageUrl();
    const port = Number(new URL(url).port);
    const token = /#token=([0-9a-f]{64})/.exec(url)?.[1] ?? '';
    const { page, context, errors } = await openPage(chrome.browser, world.pageUrl('account'));
    const card = page.getByTestId('api-key-card');
    // The page's banner; a page whose own call failed says the same in an alert of its own.
    const dead = page.getByRole('alert').filter({ hasText: 'This page’s link no longer works.' });
    // The page works: it shows what the service says about the key.
    await expect.poll(() => card.getByTestId('api-key-source').textContent(), { timeout: UI }).toContain('No OpenRouter key yet.');

    await world.stopService('SIGTERM');
    squatter = await squat(port);
    // The open page knocks on its port again, finds no proof there, and gives the link up.
    await expect.poll(() => squatter?.requests().some((r) => r.url.startsWith('/api/hello?challenge=')), { timeout: UI }).toBe(true);
    await expect.poll(() => dead.count(), { timeout: UI }).toBe(1);

    // The user, not reading the banner, types a key and saves it: the call goes nowhere.
    await page.getByLabel('OpenRouter API key').fill(KEY);
    await card.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => card.textContent(), { timeout: UI }).toContain('was not saved');

    const seen = squatter.requests();
    for (const request of seen) {
      const everything = JSON.stringify(request);
      expect(everything).not.toContain(token);
      expect(everything).not.toContain(KEY);
      expect(request.headers.authorization).toBeUndefined();
      expect(request.url).toMatch(/^\/api\/hello\?challenge=[0-9a-f]{64}$/);
      expect(request.body).toBe('');
    }

    // The service comes back, on another port with a new token: the page stays dead and says so.
    await squatter.stop();
    squatter = null;
    await world.startService();
    expect(Number(new URL(world.pageUrl()).port)).not.toBe(port);
    await page.getByRole('link', { name: 'About' }).click();
    expect(await dead.count()).toBeGreaterThanOrEqual(1);
    expect(await page.getByText(`pid ${world.service?.child.pid}`).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});
