/**
 * The loopback settings page's token (SECURITY.md §1): `serve --ui` prints the URL on stdout only, never in
 * its log; in a real browser the token never travels in a request's URL (it is in the fragment), goes only in
 * the Authorization header, and leaves the address bar as soon as the page has read it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UiWorld, useBrowser, openPage } from '../support/ui.js';

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

describe('the settings page token', () => {
  it('is printed on stdout only, never in the service log', () => {
    const token = /#token=([0-9a-f]{64})/.exec(world.pageUrl())?.[1] ?? '';
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(world.service?.stdout()).toContain(token);
    expect(world.service?.stderr()).not.toContain(token);
  });

  it('never travels in a URL, goes only in the Authorization header, and leaves the address bar', async () => {
    const token = /#token=([0-9a-f]{64})/.exec(world.pageUrl())?.[1] ?? '';
    const context = await chrome.browser.newContext();
    const page = await context.newPage();
    const requests: Array<{ url: string; authorization: string | undefined }> = [];
    page.on('request', (request) => requests.push({ url: request.url(), authorization: request.headers().authorization }));

    await page.goto(world.pageUrl('about'));
    // The page works with the token it took from the fragment: the About page shows the service's pid.
    await expect.poll(() => page.getByText(`pid ${world.service?.child.pid}`).count(), { timeout: 15_000 }).toBe(1);

    expect(page.url()).not.toContain(token);
    expect(page.url()).toMatch(/#about$/);
    const api = requests.filter((r) => new URL(r.url).pathname.startsWith('/api/'));
    const hellos = api.filter((r) => new URL(r.url).pathname === '/api/hello');
    const withToken = api.filter((r) => new URL(r.url).pathname !== '/api/hello');
    expect(hellos.length).toBeGreaterThan(0);
    expect(withToken.length).toBeGreaterThan(0);
    for (const request of requests) expect(request.url, request.url).not.toContain(token);
    // The hello asks the server to prove it holds the token, and so carries none itself.
    for (const request of hellos) expect(request.authorization).toBeUndefined();
    for (const request of withToken) expect(request.authorization).toBe(`Bearer ${token}`);
    await context.close();
  });

  it('is needed by a page opened without it, which gets no answer from the service', async () => {
    const { page, context } = await openPage(chrome.browser, world.pageUrl().replace(/#token=.*$/, '#about'));
    const api: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/api/')) api.push(request.url());
    });
    // The first load may have run before the listener was there: load again under it.
    await page.reload();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'serve --ui' }).count(), { timeout: 15_000 }).toBeGreaterThan(0);
    // Without a token the page asks nothing; asked anyway, the service answers 401.
    expect(api).toEqual([]);
    const status = await page.evaluate(
      async () => (await fetch('/api/call/service.status', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status,
    );
    expect(status).toBe(401);
    await context.close();
  });
});
