/**
 * The settings page in a real browser: Debian's Chromium driven by Playwright, against the real
 * service (`openrouter-delegate serve --ui`), the fake OpenRouter and, for jobs, the real `claude`.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessByStdio } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { CLI, ROOT } from './built.js';
import type { FakeKey } from './fake-openrouter.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import { DelegationWorld } from './delegation.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where the test run leaves its screenshots (not committed: test-results/ is ignored). */
export const SCREENSHOTS = path.join(ROOT, 'test-results', 'screenshots');

/** The flags these machines need: no sandbox as root, and no background traffic to a closed network. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Playwright gives every launch a fresh, empty profile of its own. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/** One Chromium for a test file (or a describe block): launched before its tests, closed after them. */
export function useBrowser(): { readonly browser: Browser } {
  let launched: Browser | null = null;
  beforeAll(async () => {
    launched = await launchBrowser();
  });
  afterAll(async () => {
    await launched?.close();
  });
  return {
    get browser(): Browser {
      if (!launched) throw new Error('The browser is not running: useBrowser() gives it to tests, not to code outside them.');
      return launched;
    },
  };
}

export type Theme = 'light' | 'dark';

export interface ServiceProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  url: string;
  /** Everything the service wrote to stderr (its log). */
  stderr: () => string;
  /** Everything it wrote to stdout. */
  stdout: () => string;
}

/** Starts `serve --ui` with `env` and waits for its "ready" line; the page's URL (token included) comes before it. */
export async function serveSettingsPage(env: NodeJS.ProcessEnv, extraArgs: string[] = []): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--ui', '--notify-ready', ...extraArgs], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /Settings page: (\S+)/.exec(out);
      if (found?.[1] && /^ready$/m.test(out)) resolve(found[1]);
    });
    child.once('exit', (code) => reject(new Error(`serve --ui exited (${code}) before it was ready:\n${err}`)));
  });
  return { child, url, stderr: () => err, stdout: () => out };
}

/** Give to start() as `extraEnv`: no OPENROUTER_API_KEY, so the key must be set through the page, into the real keychain. */
export const NO_ENV_KEY: NodeJS.ProcessEnv = { OPENROUTER_API_KEY: undefined };

/** A delegation world whose service also serves the settings page. */
export class UiWorld extends DelegationWorld {
  service: ServiceProcess | null = null;

  /** `balance`: the key's own limit and usage as OpenRouter reports them (default: $87.50 of a $100 limit left). */
  constructor(balance: Partial<FakeKey> = { limit: 100, limitRemaining: 87.5, usage: 12.5, usageDaily: 0.42, usageWeekly: 3.1, usageMonthly: 12.5 }) {
    super({ prefix: 'ord-ui-', balance });
  }

  /** Starts `serve --ui` for this home. */
  async startService(extraArgs: string[] = []): Promise<ServiceProcess> {
    this.service = await serveSettingsPage(this.env, extraArgs);
    return this.service;
  }

  /** Stops the service with a signal and waits for it to exit. */
  async stopService(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const service = this.service;
    this.service = null;
    if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      service.child.once('exit', () => resolve());
      service.child.kill(signal);
    });
  }

  protected override async endService(): Promise<void> {
    await super.endService();
    await this.stopService('SIGKILL');
  }

  /** The page's URL at a section: "#token=…&jobs". */
  pageUrl(section?: string): string {
    if (!this.service) throw new Error('The service is not running.');
    return section ? `${this.service.url}&${section}` : this.service.url;
  }
}

/**
 * A page test's world, one per test: `each()` (called in a describe) starts a fresh UiWorld before each of its tests
 * and stops it after, closing the contract's connection first. `contract()` is the service's socket as the bridge
 * and the CLI reach it, connected on first use.
 */
export class UiWorlds {
  private current: UiWorld | null = null;
  private ipc: IpcClient | null = null;

  constructor(private readonly clientName: string) {}

  get world(): UiWorld {
    if (!this.current) throw new Error('There is no page-test world outside a test of a describe that called each().');
    return this.current;
  }

  async contract(): Promise<IpcClient> {
    this.ipc ??= await IpcClient.connect({ locations: resolveLocations(this.world.env), clientName: this.clientName });
    return this.ipc;
  }

  each(): void {
    beforeEach(async () => {
      this.current = new UiWorld();
      await this.current.start();
    });
    afterEach(async () => {
      this.ipc?.close();
      this.ipc = null;
      await this.current?.stop();
      this.current = null;
    });
  }
}

/** A new browser context (own storage) and page, in a theme and size, opened at a section. */
export async function openPage(
  browser: Browser,
  url: string,
  options: { theme?: Theme; width?: number; height?: number } = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    colorScheme: options.theme ?? 'light',
    viewport: { width: options.width ?? 1000, height: options.height ?? 720 },
  });
  // A CSP violation that the page's code catches (zod's eval probe, say) logs nothing by itself: make it an error.
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI || 'inline code'}`);
    });
  });
  const page = await context.newPage();
  const errors: string[] = [];
  // A CSP violation or an uncaught exception is a defect of the page: tests check this stays empty.
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource|ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE/.test(message.text()))
      errors.push(`console: ${message.text()}`);
  });
  await page.goto(url);
  return { context, page, errors };
}

/** Saves a screenshot of one part of the page (a section, say) as test-results/screenshots/<name>-<theme>.png. */
export async function screenshotOf(locator: Locator, name: string, theme: Theme): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}-${theme}.png`);
  await locator.screenshot({ path: file });
  return file;
}

/** Saves a full-page screenshot as test-results/screenshots/<name>-<theme>.png. */
export async function screenshot(page: Page, name: string, theme: Theme): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}-${theme}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** What axe-core checks: WCAG 2.0, 2.1 and 2.2 at levels A and AA, and its best practices; no rule is switched off. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

/**
 * What axe-core finds on the whole page as it is now, one line per element that breaks a rule: the rule, its impact,
 * the element's selector and what axe says of it (for contrast, the ratio and both colours). Every rule runs; axe
 * details only the violations (`resultTypes`), and runs in the page itself (legacy mode: the page has no frames), not
 * in a blank page opened for each check: 0.5 s instead of 2.3 on the Delegation page.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // One options object: AxeBuilder's options() replaces what withTags() set, which left target-size (WCAG 2.2) out.
  const { violations } = await new AxeBuilder({ page })
    .options({ runOnly: { type: 'tag', values: AXE_TAGS }, resultTypes: ['violations'] })
    .setLegacyMode()
    .analyze();
  return violations.flatMap((violation) =>
    violation.nodes.map((node) => {
      const said = [...node.any, ...node.all, ...node.none].map((check) => check.message).join('; ');
      return `${violation.id} (${violation.impact ?? 'no impact'}) ${node.target.join(' ')}: ${said || violation.help}`;
    }),
  );
}

/** Fails with those lines when axe-core finds anything on the page as it is now. */
export async function expectAccessible(page: Page): Promise<void> {
  const found = await accessibilityViolations(page);
  expect(found, `axe-core found ${found.length} violation(s) at ${page.url().replace(/token=[^&]*/, 'token=…')}`).toEqual([]);
}
