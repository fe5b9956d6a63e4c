/**
 * The loopback host when the service goes away: the page says so at once, keeps what it shows, and
 * picks up where it was when the service is back on the same URL (port and token are kept).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UiWorld, useBrowser, openPage, screenshot } from '../support/ui.js';

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
  it('is announced on the page while the service is away, and the page recovers when it is back', async () => {
    const firstUrl = world.pageUrl();
    const firstPid = world.service?.child.pid;
    const { page, context, errors } = await openPage(chrome.browser, world.pageUrl('about'));
    const alert = page.getByRole('alert').filter({ hasText: 'The service is not answering' });
    await expect.poll(() => page.getByText(`pid ${firstPid}`).count()).toBe(1);
    expect(await alert.count()).toBe(0);

    await world.stopService('SIGTERM');
    await expect.poll(() => alert.count(), { timeout: 10_000 }).toBe(1);
    // What the page showed is still there while it waits.
    expect(await page.getByTestId('logs-path').count()).toBe(1);
    await screenshot(page, 'service-away', 'light');

    await world.startService();
    expect(world.pageUrl()).toBe(firstUrl);
    const secondPid = world.service?.child.pid;
    await expect.poll(() => alert.count(), { timeout: 15_000 }).toBe(0);
    // It reloaded: the About page shows the new service.
    await expect.poll(() => page.getByText(`pid ${secondPid}`).count(), { timeout: 10_000 }).toBe(1);
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
