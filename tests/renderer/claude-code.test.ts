/**
 * The Claude Code page against the real service (`serve --ui`) and the real `claude` CLI, with
 * HOME=<home>/user (UiWorld's env): Claude Code's config is <home>/user/.claude.json, never the real
 * user's. What the page says is checked against what `claude mcp get / list` say afterwards.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BRIDGE, CLI, runCli, runProcess } from '../support/built.js';
import { linkClis } from '../../src-main/platform/cli-links.js';
import { CLAUDE_CLI } from '../support/fake-anthropic.js';
import { UiWorld, useBrowser, openPage, screenshot, expectAccessible } from '../support/ui.js';
import { CHECK_IDS } from '../../src-main/core/setup/doctor.js';

const chrome = useBrowser();
let world: UiWorld;

beforeEach(async () => {
  // A key whose own limit is a backstop for the $5 day budget (a daily $8), so the key check is as content as the rest.
  world = new UiWorld({ limit: 8, limitRemaining: 7.5, limitReset: 'daily', usage: 0.5, usageDaily: 0.5, usageWeekly: 0.5, usageMonthly: 0.5 });
  await world.start();
  // The commands on the service's PATH are this installation's, as `install --link` leaves them.
  const bin = path.join(world.home, 'user', '.local', 'bin');
  await linkClis(bin, process.execPath, { 'openrouter-delegate': CLI, 'openrouter-mcp-config': path.join(path.dirname(CLI), 'openrouter-mcp-config.js') });
  world.env.PATH = `${bin}${path.delimiter}${world.env.PATH ?? ''}`;
});
afterEach(async () => {
  await world.stop();
});

/** What this installation registers: the Node running the tests and the built bridge. */
const COMMAND = `${process.execPath} ${BRIDGE}`;
const addCommand = () => `claude mcp add --scope user openrouter -e OPENROUTER_DELEGATE_HOME=${world.home} -- ${COMMAND}`;
/** Connect / Disconnect run `claude`; the doctor runs it and asks OpenRouter: bounded, but not instant. */
const SLOW = { timeout: 30_000 };
/** For tests that also run `claude mcp get / list` (each starts the bridge to check its health) or take screenshots (each checked by axe-core). */
const LONG_TEST = 90_000;

function claude(args: string[]) {
  return runProcess(CLAUDE_CLI, args, { env: world.env });
}

async function openClaudePage(options: { width?: number; height?: number } = {}) {
  await world.startService();
  return openPage(chrome.browser, world.pageUrl('claude'), options);
}

const badgeText = (page: Page) => page.getByTestId('registration-badge').textContent();
const checkStatus = (page: Page, id: string) => page.locator(`[data-check="${id}"]`).getByTestId('check-status').textContent();
const verdictText = (page: Page) => page.getByTestId('doctor-verdict').textContent();
/** The text of the element that has the keyboard focus (page code as a string: tests compile without the DOM types). */
const focusedText = (page: Page) => page.evaluate<string | null>('document.activeElement?.textContent ?? null');

/** The page in both themes, once the doctor has answered (the media query switches in place), each checked by axe-core. */
async function screenshots(page: Page, name: string): Promise<void> {
  await expect.poll(() => verdictText(page), SLOW).toContain('Checked at');
  for (const theme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await screenshot(page, name, theme);
    await expectAccessible(page);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

describe('the Claude Code page: registration', () => {
  it(
    'says "not connected" at first with the exact command, and Connect registers this installation’s bridge',
    async () => {
      const { page, context, errors } = await openClaudePage();
      await expect.poll(() => badgeText(page)).toBe('✗ Not connected');
      expect(await page.getByTestId('registration-text').textContent()).toContain(path.join(world.home, 'user', '.claude.json'));
      expect(await page.getByTestId('bridge-command').textContent()).toBe(COMMAND);
      const env = page.getByTestId('bridge-env');
      expect([await env.locator('dt').allTextContents(), await env.locator('dd').allTextContents()]).toEqual([['OPENROUTER_DELEGATE_HOME'], [world.home]]);
      expect(await page.getByTestId('add-command').textContent()).toBe(addCommand());
      expect(await page.getByTestId('claude-path').textContent()).toBe(CLAUDE_CLI);
      await expect.poll(() => page.getByRole('button', { name: 'Disconnect' }).isDisabled()).toBe(true);
      await screenshots(page, 'claude-code-not-connected');

      await page.getByRole('button', { name: 'Connect', exact: true }).click();
      await expect.poll(() => badgeText(page), SLOW).toBe('✓ Connected');
      const said = await page.getByTestId('action-result').textContent();
      expect(said).toContain('Registered the bridge as "openrouter"');
      expect(said).toContain(COMMAND);
      expect(said).toContain('run /mcp');
      expect(await page.getByTestId('action-error').textContent()).toBe('');
      expect(await page.getByRole('button', { name: 'Connect', exact: true }).isDisabled()).toBe(true);

      // Claude Code itself now starts this installation's bridge, and its health check connects.
      const get = await claude(['mcp', 'get', 'openrouter']);
      expect(get.code, get.stderr).toBe(0);
      expect(get.stdout).toMatch(/Scope: User config/);
      expect(get.stdout).toContain(`Command: ${process.execPath}`);
      expect(get.stdout).toContain(`Args: ${BRIDGE}`);
      expect(get.stdout).toContain(`OPENROUTER_DELEGATE_HOME=${world.home}`);
      expect(get.stdout).toMatch(/Status: .*Connected/);
      const list = await claude(['mcp', 'list']);
      const line = list.stdout.split('\n').find((l) => l.startsWith('openrouter: ')) ?? '';
      expect(line).toContain(`openrouter: ${COMMAND} - `);
      expect(line).toMatch(/ - \S+ Connected$/);

      await screenshots(page, 'claude-code');
      await page.setViewportSize({ width: 560, height: 700 });
      await screenshot(page, 'claude-code-narrow', 'light');
      expect(errors).toEqual([]);
      await context.close();
    },
    LONG_TEST,
  );

  it('Disconnect removes the registration, from the keyboard, and focus stays on the button', async () => {
    expect((await runCli(['install'], world.env)).code).toBe(0);
    const { page, context, errors } = await openClaudePage();
    await expect.poll(() => badgeText(page)).toBe('✓ Connected');

    const disconnect = page.getByRole('button', { name: 'Disconnect' });
    await disconnect.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => badgeText(page), SLOW).toBe('✗ Not connected');
    expect(await page.getByTestId('action-result').textContent()).toContain('Removed the "openrouter" MCP server');
    expect(await focusedText(page)).toBe('Disconnect');
    expect(await disconnect.isDisabled()).toBe(true);

    const get = await claude(['mcp', 'get', 'openrouter']);
    expect(get.code).not.toBe(0);
    expect(get.stderr).toContain('No MCP server named "openrouter"');
    expect(errors).toEqual([]);
    await context.close();
  });

  it(
    'shows a registration of another command as different, with its differences, and Connect replaces it',
    async () => {
      const manual = await claude(['mcp', 'add', '--scope', 'user', 'openrouter', '--', '/bin/echo', 'x']);
      expect(manual.code, manual.stderr).toBe(0);
      const { page, context, errors } = await openClaudePage();
      await expect.poll(() => badgeText(page)).toBe('! Registered with a different command');
      expect(await page.getByRole('list', { name: 'Differences' }).getByRole('listitem').allTextContents()).toEqual([
        `command /bin/echo x instead of ${COMMAND}`,
        `OPENROUTER_DELEGATE_HOME not set (this installation uses ${world.home})`,
      ]);
      expect(await page.getByTestId('registered-command').textContent()).toBe('/bin/echo x');
      await screenshots(page, 'claude-code-different');

      await page.getByRole('button', { name: 'Connect', exact: true }).click();
      await expect.poll(() => badgeText(page), SLOW).toBe('✓ Connected');
      const said = await page.getByTestId('action-result').textContent();
      expect(said).toContain('Replaced the "openrouter" registration');
      expect(said).toContain('was: /bin/echo x');
      const get = await claude(['mcp', 'get', 'openrouter']);
      expect(get.stdout).toContain(`Command: ${process.execPath}`);
      expect(get.stdout).toContain(`Args: ${BRIDGE}`);
      expect(errors).toEqual([]);
      await context.close();
    },
    LONG_TEST,
  );

  it('notices a registration made in a terminal when asked to check again', async () => {
    const { page, context, errors } = await openClaudePage();
    await expect.poll(() => badgeText(page)).toBe('✗ Not connected');
    expect((await runCli(['install'], world.env)).code).toBe(0);
    await page.getByRole('button', { name: 'Check again' }).click();
    await expect.poll(() => badgeText(page), SLOW).toBe('✓ Connected');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the Claude Code page when Claude Code’s config is damaged', () => {
  it('says it cannot tell, names the file and the problem, and recovers with Try again', { timeout: LONG_TEST }, async () => {
    const configFile = path.join(world.home, 'user', '.claude.json');
    await writeFile(configFile, '{ not json');
    const { page, context, errors } = await openClaudePage();
    const alert = page.getByRole('alert').filter({ hasText: 'Cannot tell whether Claude Code is connected.' });
    await expect.poll(() => alert.textContent()).toContain(`Claude Code's config ${configFile} is not valid JSON`);
    expect(await page.getByTestId('registration-badge').count()).toBe(0);
    await screenshots(page, 'claude-code-error');

    await writeFile(configFile, '{}');
    await page.getByRole('button', { name: 'Try again' }).click();
    await expect.poll(() => badgeText(page)).toBe('✗ Not connected');
    expect(await alert.count()).toBe(0);
    expect(await focusedText(page)).toBe('Check again');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the Claude Code page: doctor', () => {
  it('runs the checks when the page opens, lists each with its status, and runs them again after Connect', async () => {
    const { page, context, errors } = await openClaudePage();
    await expect.poll(() => checkStatus(page, 'registration'), SLOW).toBe('✗ Problem');
    const registration = page.locator('[data-check="registration"]');
    expect(await registration.textContent()).toContain('Bridge registered with Claude Code');
    expect(await registration.textContent()).toContain('Fix: Run openrouter-delegate install. Or choose Connect above.');
    expect(await checkStatus(page, 'claude')).toBe('✓ OK');
    expect(await checkStatus(page, 'service')).toBe('✓ OK');
    expect(await checkStatus(page, 'key')).toBe('✓ OK');
    expect(await checkStatus(page, 'openrouter')).toBe('✓ OK');
    expect(await page.locator('[data-check]').count()).toBe(CHECK_IDS.length);
    expect(await verdictText(page)).toContain('✗ 1 problem to fix.');

    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await expect.poll(() => checkStatus(page, 'registration'), SLOW).toBe('✓ OK');
    await expect.poll(() => verdictText(page), SLOW).toContain('✓ Everything is in order.');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('Run checks asks again: a registration changed behind the page’s back shows up as a warning', async () => {
    expect((await runCli(['install'], world.env)).code).toBe(0);
    const { page, context, errors } = await openClaudePage();
    await expect.poll(() => checkStatus(page, 'registration'), SLOW).toBe('✓ OK');
    expect((await claude(['mcp', 'remove', '--scope', 'user', 'openrouter'])).code).toBe(0);
    expect((await claude(['mcp', 'add', '--scope', 'user', 'openrouter', '--', '/bin/echo', 'x'])).code).toBe(0);

    await page.getByRole('button', { name: 'Run checks' }).click();
    await expect.poll(() => checkStatus(page, 'registration'), SLOW).toBe('! Warning');
    expect(await page.locator('[data-check="registration"]').textContent()).toContain('not with this installation');
    await expect.poll(() => verdictText(page)).toContain('! No problems; 1 warning worth a look.');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the Claude Code page without Claude Code', () => {
  it('says Claude Code was not found and how to install it, and Connect fails with that message', { timeout: LONG_TEST }, async () => {
    const missing = path.join(world.home, 'no-such-claude');
    world.env.OPENROUTER_DELEGATE_CLAUDE = missing;
    const { page, context, errors } = await openClaudePage();
    await expect.poll(() => page.getByTestId('claude-problem').textContent()).toContain('Claude Code was not found.');
    const problem = (await page.getByTestId('claude-problem').textContent()) ?? '';
    expect(problem).toContain(missing);
    expect(problem).toContain('npm install -g @anthropic-ai/claude-code');
    expect(await page.getByTestId('install-command').textContent()).toBe('npm install -g @anthropic-ai/claude-code');

    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await expect.poll(() => page.getByTestId('action-error').textContent(), SLOW).toContain('Connect failed.');
    const error = (await page.getByTestId('action-error').textContent()) ?? '';
    expect(error).toContain(`OPENROUTER_DELEGATE_CLAUDE points at ${missing}`);
    expect(error).toContain('npm install -g @anthropic-ai/claude-code');
    expect(await badgeText(page)).toBe('✗ Not connected');
    await expect.poll(() => checkStatus(page, 'claude'), SLOW).toBe('✗ Problem');
    await screenshots(page, 'claude-code-no-claude');
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe('the Claude Code page: copying commands', () => {
  it('Copy puts the exact `claude mcp add` line on the clipboard', async () => {
    const { page, context, errors } = await openClaudePage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await expect.poll(() => page.getByTestId('add-command').textContent()).toBe(addCommand());
    await page.getByRole('button', { name: 'Copy claude mcp add command' }).click();
    await expect.poll(() => page.getByTestId('add-command-copy-status').textContent()).toBe('Copied.');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(addCommand());
    expect(errors).toEqual([]);
    await context.close();
  });

  it('without a clipboard, Copy selects the command and says how to copy it', async () => {
    const { page, context, errors } = await openClaudePage();
    await page.addInitScript({ content: "Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined });" });
    await page.reload();
    await expect.poll(() => page.getByTestId('bridge-command').textContent()).toBe(COMMAND);
    expect(await page.evaluate<string>('typeof navigator.clipboard')).toBe('undefined');
    await page.getByRole('button', { name: 'Copy command', exact: true }).click();
    await expect.poll(() => page.getByTestId('bridge-command-copy-status').textContent()).toContain('Copying is not available here');
    expect(await page.evaluate<string>('String(window.getSelection())')).toBe(COMMAND);
    expect(errors).toEqual([]);
    await context.close();
  });
});
