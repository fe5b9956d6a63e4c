/**
 * The Account page against the real service, the fake OpenRouter and the real keychain (the Secret
 * Service of scripts/with-keyring.sh): set, test and remove the key, see the balance, and what the page
 * says when the key is refused, OpenRouter is down, the key comes from the environment or there is no
 * keychain at all. Also the page's wording helpers (src-renderer/lib/account.ts), tested directly.
 */
import net from 'node:net';
import type { Locator, Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Balance, SecretsStatus } from '../../src-main/contract/index.js';
import { balanceProblem, keyCapProblem, remainingText, saveProblem, testOutcome, textParts } from '../../src-renderer/lib/account.js';
import { runCli } from '../support/built.js';
import { KEY } from '../support/delegation.js';
import { NO_ENV_KEY, UiWorld, useBrowser, openPage, screenshot, expectAccessible } from '../support/ui.js';

/** Well-formed, but unknown to the fake OpenRouter: it answers 401 "User not found." like the real one. */
const UNKNOWN_KEY = `sk-or-v1-${'ab'.repeat(32)}`;
const MANAGEMENT_KEY = `sk-or-v1-${'c0de'.repeat(16)}`;
const BACKEND = 'Secret Service (D-Bus)';
const UI = 10_000;

/**
 * A TCP pass-through between the service and the fake OpenRouter that can be cut and restored on the same
 * port: "OpenRouter is down" as the service meets it (connection refused), then back.
 */
class Outage {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly targetPort: number) {}

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  async restore(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Refuses new connections and drops open ones (the service's pooled keep-alive connections too). */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

const chrome = useBrowser();
let world: UiWorld;
let outage: Outage | null = null;

beforeEach(() => {
  world = new UiWorld();
});
afterEach(async () => {
  await world.stop();
  await outage?.cut();
  outage = null;
});

async function keyStatus(): Promise<SecretsStatus> {
  const result = await runCli(['key', 'status', '--json'], world.env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as SecretsStatus;
}

/** Stores the key the way a user of the CLI does (the service is not running yet: straight to the keychain). */
async function storeKeyWithCli(key: string): Promise<void> {
  const result = await runCli(['key', 'set'], world.env, key);
  expect(result.code, result.stderr).toBe(0);
}

async function openAccount(options: { width?: number } = {}): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const { page, context, errors } = await openPage(chrome.browser, world.pageUrl('account'), options);
  // The page must never fall back on the browser's own dialogs.
  page.on('dialog', (dialog) => {
    errors.push(`dialog: ${dialog.type()} ${dialog.message()}`);
    void dialog.dismiss();
  });
  await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor({ timeout: UI });
  return { page, errors, close: () => context.close() };
}

/** What a reader sees: the text with the source's line breaks and indentation folded into single spaces. */
async function textOf(locator: Locator): Promise<string> {
  return ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

function apiCard(page: Page) {
  return page.getByTestId('api-key-card');
}

describe('the Account page', () => {
  it('starts with no key and says how to add one; a saved key shows as present from the keychain with its balance, and is never shown again', async () => {
    await world.start({}, NO_ENV_KEY);
    await world.startService();
    const { page, errors, close } = await openAccount();
    const card = apiCard(page);

    await expect.poll(() => card.getByTestId('api-key-source').textContent(), { timeout: UI }).toContain('No OpenRouter key yet.');
    expect(await card.getByTestId('api-key-source').textContent()).toContain('https://openrouter.ai/settings/keys');
    expect(await card.locator('.badge').textContent()).toBe('Not set');
    // The balance is a read of its own, which may answer after the key's status.
    await expect.poll(() => page.getByTestId('balance-empty').isVisible(), { timeout: UI }).toBe(true);
    expect(await page.getByTestId('balance-problem').count()).toBe(0);
    await screenshot(page, 'account-nokey', 'light');
    await expectAccessible(page);
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'account-nokey', 'dark');
    await expectAccessible(page);
    await page.emulateMedia({ colorScheme: 'light' });

    const input = page.getByLabel('OpenRouter API key');
    expect(await input.getAttribute('type')).toBe('password');
    // The same field, whatever its label says once a key is saved.
    const field = card.locator('input[type="password"]');
    await input.fill(KEY);
    await card.getByRole('button', { name: 'Save' }).click();

    await expect
      .poll(() => card.getByTestId('api-key-notice').textContent(), { timeout: UI })
      .toContain(`OpenRouter accepted the key; it is saved in the ${BACKEND}.`);
    expect(await card.getByTestId('api-key-source').textContent()).toContain(`Saved in the ${BACKEND}.`);
    expect(await card.locator('.badge').textContent()).toBe('Saved · keychain');
    await expect.poll(() => page.getByTestId('balance-remaining').textContent(), { timeout: UI }).toBe('$87.50');
    expect(await page.getByTestId('balance-limit').textContent()).toBe('$100.00');
    expect(await page.getByTestId('balance-daily').textContent()).toBe('$0.42');
    expect(await page.getByTestId('balance-weekly').textContent()).toBe('$3.10');
    expect(await page.getByTestId('balance-monthly').textContent()).toBe('$12.50');
    expect(await textOf(page.getByTestId('balance-fetched'))).toBe('Updated just now');
    expect(await page.getByTestId('balance-usage').textContent()).toBe('$12.50');
    expect(await page.getByTestId('balance-credits-note').textContent()).toContain('management key');

    // The key left the field, and is nowhere in the page.
    expect(await card.getByLabel('Replace the OpenRouter key').count()).toBe(1);
    expect(await field.inputValue()).toBe('');
    expect(await page.content()).not.toContain(KEY);
    expect(await page.content()).not.toContain(KEY.slice(-20));
    // In the real keychain, for every client of the service.
    expect(await keyStatus()).toMatchObject({ keychain: { available: true }, apiKey: { present: true, source: 'keychain' } });
    // Checked with OpenRouter before it was stored.
    expect(world.fake.requestsTo('/api/v1/key').some((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);

    await screenshot(page, 'account', 'light');
    await expectAccessible(page);
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'account', 'dark');
    await expectAccessible(page);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 560, height: 700 });
    await screenshot(page, 'account-narrow', 'light');
    expect(errors).toEqual([]);
    await close();
  }, 60_000);

  it('refuses a key OpenRouter does not accept, says why next to the field, and stores nothing', async () => {
    await world.start({}, NO_ENV_KEY);
    await world.startService();
    const { page, errors, close } = await openAccount();
    const card = apiCard(page);
    const input = page.getByLabel('OpenRouter API key');

    await input.fill(UNKNOWN_KEY);
    await input.press('Enter');

    const error = card.getByRole('alert');
    await expect.poll(() => error.textContent(), { timeout: UI }).toContain('OpenRouter refused this key; nothing was stored.');
    expect(await error.textContent()).toContain('User not found.');
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    expect((await input.getAttribute('aria-describedby'))?.split(' ')).toContain(await error.getAttribute('id'));
    expect(await input.inputValue()).toBe('');
    expect(await page.content()).not.toContain(UNKNOWN_KEY);
    // OpenRouter was asked, and said no.
    expect(world.fake.requestsTo('/api/v1/key').some((r) => r.headers.authorization === `Bearer ${UNKNOWN_KEY}`)).toBe(true);

    // Nothing stored: not on the page, not in the keychain.
    expect(await card.locator('.badge').textContent()).toBe('Not set');
    expect(await card.getByTestId('api-key-source').textContent()).toContain('No OpenRouter key yet.');
    expect(await keyStatus()).toMatchObject({ apiKey: { present: false, source: 'none' } });
    await screenshot(page, 'account-refused', 'light');
    expect(errors).toEqual([]);
    await close();
  });

  it('says OpenRouter cannot be reached when Refresh fails, keeps the last numbers marked as old, and recovers when it is back', async () => {
    await world.start({}, NO_ENV_KEY);
    const cable = new Outage(Number(new URL(world.fake.baseUrl).port));
    outage = cable;
    await cable.restore();
    world.env.OPENROUTER_BASE_URL = cable.baseUrl;
    await storeKeyWithCli(KEY);
    await world.startService();
    const { page, errors, close } = await openAccount();
    await expect.poll(() => page.getByTestId('balance-remaining').textContent(), { timeout: UI }).toBe('$87.50');

    await cable.cut();
    const refresh = page.getByTestId('balance-card').getByRole('button', { name: 'Refresh' });
    await refresh.click();
    const problem = page.getByTestId('balance-problem');
    await expect.poll(() => problem.textContent(), { timeout: UI }).toContain('OpenRouter cannot be reached.');
    expect(await problem.textContent()).toContain('connection refused');
    expect(await problem.textContent()).toContain('Press Refresh once the connection is back');
    expect(await problem.getAttribute('role')).toBe('alert');
    expect(await page.getByTestId('balance-stale').isVisible()).toBe(true);
    expect(await textOf(page.getByTestId('balance-fetched'))).toBe('Last tried just now');
    expect(await page.getByTestId('balance-remaining').textContent()).toBe('$87.50');
    // The key is still there: OpenRouter being down says nothing against it.
    expect(await apiCard(page).locator('.badge').textContent()).toBe('Saved · keychain');
    await screenshot(page, 'account-error', 'light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'account-error', 'dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // Back, with a little spent meanwhile.
    world.fake.addKey(KEY, { limit: 100, limitRemaining: 80, usage: 20, usageDaily: 7.92, usageWeekly: 10.6, usageMonthly: 20 });
    await cable.restore();
    await refresh.click();
    await expect.poll(() => page.getByTestId('balance-remaining').textContent(), { timeout: UI }).toBe('$80.00');
    expect(await page.getByTestId('balance-daily').textContent()).toBe('$7.92');
    expect(await problem.count()).toBe(0);
    expect(await page.getByTestId('balance-stale').count()).toBe(0);
    expect(errors).toEqual([]);
    await close();
  });

  it('removes the key only after a confirmation in the page, which Escape cancels', async () => {
    await world.start({}, NO_ENV_KEY);
    await storeKeyWithCli(KEY);
    await world.startService();
    const { page, errors, close } = await openAccount();
    const card = apiCard(page);
    await expect.poll(() => card.locator('.badge').textContent(), { timeout: UI }).toBe('Saved · keychain');

    const removeButton = card.getByRole('button', { name: 'Remove…' });
    await removeButton.click();
    const confirm = card.getByRole('group', { name: /Remove the OpenRouter key from the Secret Service/ });
    expect(await confirm.textContent()).toContain('Delegated jobs cannot start until a key is added again.');
    await screenshot(page, 'account-confirm', 'light');
    // The safe answer has the focus; Escape keeps the key and gives the focus back.
    expect(await card.getByRole('button', { name: 'Keep it' }).evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => confirm.count(), { timeout: UI }).toBe(0);
    expect(await removeButton.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await keyStatus()).toMatchObject({ apiKey: { present: true, source: 'keychain' } });

    await removeButton.click();
    await confirm.getByRole('button', { name: 'Remove key' }).click();
    await expect.poll(() => card.getByTestId('api-key-notice').textContent(), { timeout: UI }).toContain(`The OpenRouter key was removed from the ${BACKEND}.`);
    expect(await card.locator('.badge').textContent()).toBe('Not set');
    expect(await card.getByTestId('api-key-source').textContent()).toContain('No OpenRouter key yet.');
    await expect.poll(() => page.getByTestId('balance-empty').count(), { timeout: UI }).toBe(1);
    expect(await page.getByTestId('balance-remaining').count()).toBe(0);
    expect(await keyStatus()).toMatchObject({ apiKey: { present: false, source: 'none' } });
    expect(errors).toEqual([]);
    await close();
  });

  it('says when the key comes from OPENROUTER_API_KEY, and that the environment wins over the keychain', async () => {
    await world.start();
    await world.startService();
    const { page, errors, close } = await openAccount();
    const card = apiCard(page);

    await expect.poll(() => card.locator('.badge').textContent(), { timeout: UI }).toBe('In use · environment');
    const source = await textOf(card.getByTestId('api-key-source'));
    expect(source).toContain('The key comes from the environment: OPENROUTER_API_KEY is set for the service, and the environment wins over the keychain.');
    expect(await card.getByLabel('Save a key in the keychain').count()).toBe(1);
    expect(await card.getByRole('button', { name: 'Remove from keychain…' }).count()).toBe(1);
    await expect.poll(() => page.getByTestId('balance-remaining').textContent(), { timeout: UI }).toBe('$87.50');
    expect(await page.getByTestId('balance-card').textContent()).toContain('from OPENROUTER_API_KEY');
    await screenshot(page, 'account-env', 'light');

    // "Test key" asks OpenRouter now, and says what it found.
    const requestsBefore = world.fake.requestsTo('/api/v1/key').length;
    await card.getByRole('button', { name: 'Test key' }).click();
    await expect.poll(() => card.getByTestId('api-key-notice').textContent(), { timeout: UI }).toContain('OpenRouter accepted the key');
    expect(await card.getByTestId('api-key-notice').textContent()).toContain('$87.50 left of a $100.00 limit.');
    expect(world.fake.requestsTo('/api/v1/key').length).toBeGreaterThan(requestsBefore);
    expect(await page.content()).not.toContain(KEY);
    expect(errors).toEqual([]);
    await close();
  });

  it('follows the balance live: a refresh from another window shows here without a reload', async () => {
    await world.start();
    await world.startService();
    const watching = await openAccount();
    await expect.poll(() => watching.page.getByTestId('balance-remaining').textContent(), { timeout: UI }).toBe('$87.50');

    world.fake.addKey(KEY, { limit: 100, limitRemaining: 61.25, usage: 38.75, usageDaily: 26.67, usageWeekly: 29.35, usageMonthly: 38.75 });
    const other = await openAccount();
    await other.page.getByTestId('balance-card').getByRole('button', { name: 'Refresh' }).click();

    await expect.poll(() => watching.page.getByTestId('balance-remaining').textContent(), { timeout: UI }).toBe('$61.25');
    expect(await watching.page.getByTestId('balance-daily').textContent()).toBe('$26.67');
    expect([...watching.errors, ...other.errors]).toEqual([]);
    await other.close();
    await watching.close();
  });

  it('adds the optional management key, and then shows the account credits', async () => {
    await world.start();
    world.fake.addKey(MANAGEMENT_KEY, { management: true, totalCredits: 610, totalUsage: 321.725553332 });
    await world.startService();
    const { page, errors, close } = await openAccount();
    const card = page.getByTestId('management-key-card');

    expect(await card.textContent()).toContain('only lets this page show your whole account’s credits');
    await card.getByLabel('Management key').fill(MANAGEMENT_KEY);
    await card.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => card.locator('.badge').textContent(), { timeout: UI }).toBe('Saved · keychain');
    await expect.poll(() => page.getByTestId('balance-credits').textContent(), { timeout: UI }).toContain('$288.27');
    expect(await page.getByTestId('balance-credits').textContent()).toContain('$610.00');
    expect(await keyStatus()).toMatchObject({ managementKey: { present: true, source: 'keychain' } });
    expect(await page.content()).not.toContain(MANAGEMENT_KEY);

    // A normal key is not a management key: refused with OpenRouter's reason, nothing replaced.
    await card.getByLabel('Replace the management key').fill(KEY);
    await card.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => card.getByRole('alert').textContent(), { timeout: UI }).toContain('That key is not a management key');
    expect(await page.getByTestId('balance-credits').textContent()).toContain('$288.27');
    expect(errors).toEqual([]);
    await close();
  });

  it('explains a missing keychain, and what to do instead, without offering to save there', async () => {
    await world.start({}, NO_ENV_KEY);
    world.env.DBUS_SESSION_BUS_ADDRESS = 'unix:path=/nonexistent/openrouter-delegate-test-bus';
    await world.startService();
    const { page, errors, close } = await openAccount();

    const problem = page.getByTestId('keychain-problem');
    await expect.poll(() => problem.textContent(), { timeout: UI }).toContain('Keys cannot be saved or read: the OS keychain is not available.');
    expect(await problem.textContent()).toContain('No Secret Service on this Linux session');
    expect(await problem.textContent()).toContain('set OPENROUTER_API_KEY in the service’s environment and restart the service');
    expect(await page.getByLabel('OpenRouter API key').isDisabled()).toBe(true);
    expect(await apiCard(page).getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    // Said once, at the top, rather than again by every card.
    expect(await page.getByTestId('balance-problem').count()).toBe(0);
    expect(await textOf(page.getByTestId('balance-empty'))).toContain('without the keychain there is no key');
    await screenshot(page, 'account-nokeychain', 'light');
    expect(errors).toEqual([]);
    await close();
  });
});

describe('the Account page’s wording', () => {
  const secrets: SecretsStatus = {
    keychain: { available: true, backend: BACKEND },
    apiKey: { present: true, source: 'keychain' },
    managementKey: { present: false, source: 'none' },
  };
  const key = {
    label: 'sk-or-v1-5ee...eed',
    limitUsd: 100,
    remainingUsd: 87.5,
    usageUsd: 12.5,
    usageDailyUsd: 0.42,
    usageWeeklyUsd: 3.1,
    usageMonthlyUsd: 12.5,
    isFreeTier: false,
  };
  const balance = (patch: Partial<Balance>): Balance => ({ keySource: 'keychain', key: null, credits: null, fetchedAt: '2026-08-01T10:00:00.000Z', ...patch });

  it('shows the commands a message quotes as code', () => {
    expect(textParts('Run `openrouter-delegate key set` (or open Settings).')).toEqual([
      { text: 'Run ', code: false },
      { text: 'openrouter-delegate key set', code: true },
      { text: ' (or open Settings).', code: false },
    ]);
    expect(textParts('an odd ` backtick')).toEqual([{ text: 'an odd ` backtick', code: false }]);
  });

  it('calls an unreachable OpenRouter a passing problem, and a rejected key a failure with the fix on this page', () => {
    expect(balanceProblem(balance({ keyProblem: 'Cannot reach OpenRouter …', keyProblemCode: 'openrouter_unreachable' }), secrets)).toMatchObject({
      tone: 'warn',
      title: 'OpenRouter cannot be reached.',
    });
    expect(balanceProblem(balance({ keyProblem: 'OpenRouter rejected the key (401) …', keyProblemCode: 'openrouter_unauthorized' }), secrets)).toMatchObject({
      tone: 'fail',
      fix: expect.stringContaining('Paste a working key') as unknown,
    });
  });

  it('does not call "no key yet" (or no keychain, which has its own banner) an error of the balance', () => {
    const noKey = balance({ keySource: 'none', keyProblem: 'No OpenRouter key.' });
    expect(balanceProblem(noKey, { ...secrets, apiKey: { present: false, source: 'none' } })).toBeNull();
    expect(
      balanceProblem(noKey, {
        ...secrets,
        keychain: { available: false, backend: BACKEND, problem: 'No Secret Service' },
        apiKey: { present: false, source: 'none' },
      }),
    ).toBeNull();
    expect(balanceProblem(balance({ key }), secrets)).toBeNull();
    // Whereas a key the page believes in, but the balance could not find, is worth saying.
    expect(balanceProblem(noKey, secrets)).toMatchObject({ tone: 'fail', title: 'The balance could not be read.' });
  });

  it("warns, with both ways out, when the key's own limit is no backstop for the day budget", () => {
    expect(keyCapProblem({ ...key, limitUsd: null, remainingUsd: null }, 5)).toMatchObject({
      tone: 'warn',
      detail: expect.stringContaining('no spending limit of its own') as unknown,
      fix: expect.stringContaining('`openrouter-delegate key delegate-on`') as unknown,
    });
    expect(keyCapProblem({ ...key, limitUsd: 100 }, 5)?.detail).toContain('more than 2× your day budget of $5.00');
    expect(keyCapProblem({ ...key, limitUsd: 10, limitReset: 'daily' }, 5)).toBeNull();
  });

  it('says nothing was stored when a key is refused or cannot be checked', () => {
    expect(saveProblem('api', 'openrouter_unauthorized', 'x').title).toBe('OpenRouter refused this key; nothing was stored.');
    expect(saveProblem('management', 'openrouter_unreachable', 'x').title).toBe('The management key could not be checked with OpenRouter; nothing was stored.');
  });

  it('sums up a tested key, with or without a limit', () => {
    expect(testOutcome('api', balance({ key }))).toMatchObject({
      tone: 'ok',
      title: 'OpenRouter accepted the key (sk-or-v1-5ee...eed).',
      detail: '$87.50 left of a $100.00 limit.',
    });
    expect(remainingText({ ...key, limitUsd: null, remainingUsd: null }).value).toBe('No limit');
    expect(remainingText({ ...key, limitReset: 'daily' }).note).toBe('of a $100.00 limit; resets daily at midnight UTC');
    expect(testOutcome('management', balance({ key, creditsNote: 'That key is not a management key.' }))).toMatchObject({
      tone: 'fail',
      detail: 'That key is not a management key.',
    });
  });
});
