/**
 * The loopback host's connection: the page says at once when the service goes away, keeps what it shows, and
 * when a service answers again it checks that it still holds the page's token before sending it anything. A
 * restarted service has a new token, so the page says to open the new URL instead of reconnecting.
 * The first part drives the real page against the real service; the second the host's logic with a fake fetch.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { helloProof } from '../../src-main/ipc/http-ui.js';
import { httpHost } from '../../src-renderer/lib/http-host.js';
import type { ConnectionState } from '../../src-renderer/lib/http-host.js';
import { UiWorld, useBrowser, openPage, screenshot } from '../support/ui.js';

describe('the real page', () => {
  const chrome = useBrowser();
  let world: UiWorld;

  beforeEach(async () => {
    world = new UiWorld();
    await world.start();
    await world.startService();
  });
  afterEach(async () => {
    await world.stop();
  });

  describe('a service restart', () => {
    it('is announced while the service is away, with where to go next; the restarted service has a new URL, which works', async () => {
      const firstUrl = world.pageUrl();
      const firstPid = world.service?.child.pid;
      const { page, context, errors } = await openPage(chrome.browser, world.pageUrl('about'));
      const away = page.getByRole('alert').filter({ hasText: 'The service is not answering' });
      await expect.poll(() => page.getByText(`pid ${firstPid}`).count()).toBe(1);
      expect(await away.count()).toBe(0);

      await world.stopService('SIGTERM');
      await expect.poll(() => away.count(), { timeout: 10_000 }).toBe(1);
      expect(await away.textContent()).toContain('has a new URL: open that one');
      // What the page showed is still there while it waits.
      expect(await page.getByTestId('logs-path').count()).toBe(1);
      await screenshot(page, 'service-away', 'light');

      await world.startService();
      // Another port and another token: the old URL is dead for good.
      const secondUrl = world.pageUrl();
      expect(new URL(secondUrl).port).not.toBe(new URL(firstUrl).port);
      expect(secondUrl).not.toBe(firstUrl);

      // The new URL, in the same tab, works.
      await page.goto(world.pageUrl('about'));
      await expect.poll(() => page.getByText(`pid ${world.service?.child.pid}`).count(), { timeout: 10_000 }).toBe(1);
      expect(await away.count()).toBe(0);
      expect(errors).toEqual([]);
      await context.close();
    });
  });

  describe('a page without the token', () => {
    it('says how to get in instead of showing empty pages', async () => {
      const url = world.pageUrl().replace(/#token=.*$/, '#about');
      const { page, context } = await openPage(chrome.browser, url);
      await expect.poll(() => page.getByRole('alert').filter({ hasText: 'serve --ui' }).count()).toBeGreaterThan(0);
      await context.close();
    });
  });
});

/** What a fake server on the page's port saw. */
interface Seen {
  path: string;
  authorization: string | null;
  body: string | null;
}

/**
 * A fake `fetch` for the host: a server holding `serverToken` (null: nothing listens), whose event streams
 * the test can end, as a stopping service does.
 */
function fakeServer(serverToken: string | null) {
  const seen: Seen[] = [];
  const streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const state = { token: serverToken };
  const json = (value: unknown, status = 200) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const headers = new Headers(init?.headers);
    seen.push({ path: url, authorization: headers.get('authorization'), body: typeof init?.body === 'string' ? init.body : null });
    const current = state.token;
    if (current === null) throw new TypeError('fetch failed');
    const [pathname = '', query = ''] = url.split('?');
    if (pathname === '/api/hello') return json({ proof: helloProof(current, new URLSearchParams(query).get('challenge') ?? '') });
    if (headers.get('authorization') !== `Bearer ${current}`) return new Response('Missing or wrong token', { status: 401 });
    if (pathname === '/api/events') {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          streams.add(controller);
          controller.enqueue(new TextEncoder().encode(`${JSON.stringify({ event: 'stream.open', data: {} })}\n`));
        },
      });
      return new Response(body, { status: 200 });
    }
    return json({ ok: true, result: { method: pathname } });
  }) as typeof fetch;
  return {
    seen,
    fetchImpl,
    /** Ends every open stream and makes the port answer as `next` does from now on. */
    restart(next: string | null) {
      state.token = next;
      for (const controller of streams) controller.close();
      streams.clear();
    },
  };
}

const TOKEN = 'a1'.repeat(32);
const OTHER = 'b2'.repeat(32);

/** The connection states a host announces, and a way to wait for one. */
function follow(host: ReturnType<typeof httpHost>) {
  const states: ConnectionState[] = [];
  host.onConnection((state) => states.push(state));
  return { states, reached: (state: ConnectionState) => expect.poll(() => states.at(-1), { timeout: 10_000 }).toBe(state) };
}

describe('the HTTP host', () => {
  it('sends its token only after the server proved it holds it: a hello without the token, then the stream, then calls', async () => {
    const server = fakeServer(TOKEN);
    const host = httpHost(TOKEN, server.fetchImpl);
    const connection = follow(host);
    // A call made while it connects waits for the proof instead of going out.
    const answer = host['settings.get']();
    await connection.reached('connected');
    expect(await answer).toEqual({ method: '/api/call/settings.get' });
    const [hello, events, call] = server.seen;
    expect(hello?.path).toMatch(/^\/api\/hello\?challenge=[0-9a-f]{64}$/);
    expect(hello?.authorization).toBeNull();
    expect(events).toMatchObject({ path: '/api/events', authorization: `Bearer ${TOKEN}` });
    expect(call).toMatchObject({ path: '/api/call/settings.get', authorization: `Bearer ${TOKEN}` });
  });

  it('never sends the token or a call to a server whose proof is wrong, and says its link is dead', async () => {
    const server = fakeServer(OTHER);
    const host = httpHost(TOKEN, server.fetchImpl);
    const connection = follow(host);
    await expect(host['secrets.set']({ kind: 'apiKey', value: 'sk-or-v1-typed-by-the-user' } as never)).rejects.toThrow(/Open the new URL/);
    await connection.reached('stale');
    // Later calls, too, are refused at home.
    await expect(host['settings.get']()).rejects.toThrow(/Open the new URL/);
    expect(server.seen.length).toBeGreaterThan(0);
    for (const request of server.seen) {
      expect(request.path).toMatch(/^\/api\/hello\?/);
      expect(request.authorization).toBeNull();
      expect(request.body).toBeNull();
    }
  });

  it('after its stream drops, proves the server again before it reconnects or calls: a restarted service gets nothing', async () => {
    const server = fakeServer(TOKEN);
    const host = httpHost(TOKEN, server.fetchImpl);
    const connection = follow(host);
    await connection.reached('connected');
    const before = server.seen.length;

    server.restart(null);
    await connection.reached('away');
    // Away: a call fails at once and sends nothing.
    await expect(host['settings.get']()).rejects.toThrow(/not answering/);
    server.restart(OTHER);
    await connection.reached('stale');
    await expect(host['settings.get']()).rejects.toThrow(/Open the new URL/);
    const after = server.seen.slice(before);
    expect(after.some((request) => request.path.startsWith('/api/hello'))).toBe(true);
    expect(after.filter((request) => request.authorization !== null || !request.path.startsWith('/api/hello'))).toEqual([]);
    expect(connection.states).toEqual(['connected', 'away', 'stale']);
  });

  it('reconnects when the same service answers again with the proof (its stream was ended, say, for falling behind)', async () => {
    const server = fakeServer(TOKEN);
    const host = httpHost(TOKEN, server.fetchImpl);
    const connection = follow(host);
    await connection.reached('connected');
    server.restart(null);
    await connection.reached('away');
    server.restart(TOKEN);
    await connection.reached('connected');
    expect(await host['settings.get']()).toEqual({ method: '/api/call/settings.get' });
  });

  it('without a token, sends nothing at all and says how to get in', async () => {
    const server = fakeServer(TOKEN);
    const host = httpHost(null, server.fetchImpl);
    follow(host);
    await expect(host['settings.get']()).rejects.toThrow(/no valid token.*serve --ui/);
    expect(server.seen).toEqual([]);
  });
});
