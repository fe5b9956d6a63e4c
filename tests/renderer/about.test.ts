/**
 * The About page over the loopback host: versions and paths from the real service. Also the shell
 * every page shares: sections in the sidebar, reachable by keyboard, the URL fragment choosing one; and the
 * accessibility check every page test makes, shown to find what it should.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ROOT } from '../support/built.js';
import { UiWorld, useBrowser, openPage, screenshot, expectAccessible, accessibilityViolations } from '../support/ui.js';

const VERSION = (JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { version: string }).version;

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

describe('the page as it loads', () => {
  it('asks the host for nothing it does not have: no 404, and an icon of its own so a browser never asks for /favicon.ico', async () => {
    const context = await chrome.browser.newContext();
    const page = await context.newPage();
    const failed: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
    await page.goto(world.pageUrl('about'));
    await expect.poll(() => page.getByTestId('app-version').textContent()).toBe(VERSION);
    // Headless Chromium asks for no icon at all; a desktop browser asks /favicon.ico unless the page names one, and
    // one named by a data: URL costs no request.
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:/);
    expect(failed).toEqual([]);
    await context.close();
  });
});

describe('the About page', () => {
  for (const theme of ['light', 'dark'] as const) {
    it(`shows the versions and the folders the service uses (${theme})`, async () => {
      const { page, context, errors } = await openPage(chrome.browser, world.pageUrl('about'), { theme });
      await expect.poll(() => page.getByTestId('app-version').textContent()).toBe(VERSION);
      expect(await page.getByTestId('logs-path').textContent()).toBe(`${world.home}/logs`);
      // The token left the address bar as soon as the page took it.
      expect(page.url()).not.toContain('token=');
      expect(page.url()).toMatch(/#about$/);
      await screenshot(page, 'about', theme);
      await expectAccessible(page);
      expect(errors).toEqual([]);
      await context.close();
    });
  }
});

describe('the page shell', () => {
  it('lists every section, marks the current one, and moves between them by keyboard', async () => {
    const { page, context, errors } = await openPage(chrome.browser, world.pageUrl('about'));
    const nav = page.getByRole('navigation', { name: 'Settings sections' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Account', 'Delegation', 'Jobs', 'Spend', 'Claude Code', 'About']);
    expect(await nav.getByRole('link', { name: 'About' }).getAttribute('aria-current')).toBe('page');
    await nav.getByRole('link', { name: 'Claude Code' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Claude Code');
    expect(page.url()).toMatch(/#claude$/);
    // Focus moved to the new page's heading, so Tab continues from there and a screen reader announces it.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('page-title');
    expect(await page.title()).toBe('Claude Code — OpenRouter Delegate');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the accessibility check every page test makes', () => {
  it('finds what breaks a rule, naming each rule and element: low contrast, an image without words, a button without a name, targets too small', async () => {
    const { page, context } = await openPage(chrome.browser, world.pageUrl('about'));
    await expect.poll(() => page.getByTestId('app-version').textContent()).toBe(VERSION);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.evaluate(() => {
      document
        .querySelector('h1')
        ?.insertAdjacentHTML(
          'afterend',
          '<p id="faint">Hard to read</p><img id="wordless" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><button id="nameless"></button>' +
            '<p><button id="tiny-a" aria-label="A">a</button><button id="tiny-b" aria-label="B">b</button></p>',
        );
      // Through the style object: the page's CSP ignores style attributes.
      const faint = document.getElementById('faint');
      if (faint) Object.assign(faint.style, { color: '#bbbbbb', background: '#ffffff' });
      for (const id of ['tiny-a', 'tiny-b']) {
        const tiny = document.getElementById(id);
        if (tiny)
          Object.assign(tiny.style, { width: '10px', height: '10px', padding: '0', margin: '0', border: '0', fontSize: '6px', minWidth: '0', minHeight: '0' });
      }
    });
    const found = await accessibilityViolations(page);
    expect(found.map((line) => line.split(':')[0])).toEqual([
      'button-name (critical) #nameless',
      'color-contrast (serious) #faint',
      'image-alt (critical) #wordless',
      // WCAG 2.2's rule, which axe leaves off unless the tags ask for it.
      'target-size (serious) #nameless',
      'target-size (serious) #tiny-a',
      'target-size (serious) #tiny-b',
    ]);
    expect(found[1]).toMatch(/insufficient color contrast of 1\.\d+ \(foreground color: #bbbbbb, background color: #ffffff/);
    await context.close();
  });
});
