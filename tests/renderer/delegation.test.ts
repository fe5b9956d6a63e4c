/**
 * The Delegation page over the loopback host, against the real service and the fake OpenRouter's
 * catalog: every change goes through settings.update and shows up in `openrouter-mcp-config --show
 * --json`; invalid input is explained next to its field and saves nothing; changes made with the CLI
 * appear in the open page.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_APPROVABLE_TOOLS, defaultSettings } from '../../src-main/contract/settings.js';
import type { Settings } from '../../src-main/contract/settings.js';
import {
  fallbackModelProblem,
  formatDraft,
  parseNumber,
  patchProblem,
  patternProblem,
  domainProblem,
  providerNameProblem,
  refusalText,
  sandboxNotice,
  sandboxPathProblem,
} from '../../src-renderer/lib/delegation.js';
import { probeSandbox } from '../../src-main/platform/sandbox-probe.js';
import { CONFIG_CLI, runProcess } from '../support/built.js';
import type { RunResult } from '../support/built.js';
import { UiWorld, useBrowser, openPage, screenshot, expectAccessible } from '../support/ui.js';

const DEFAULT_MODEL = 'deepseek/deepseek-v4-flash-0731';

const chrome = useBrowser();
let world: UiWorld;

beforeEach(async () => {
  world = new UiWorld();
});
afterEach(async () => {
  await world.stop();
});

/** A home with these settings, the service serving the page. */
async function startWith(settings: Record<string, unknown> = {}): Promise<void> {
  await world.start(settings);
  await world.startService();
}

function configCli(args: string[]): Promise<RunResult> {
  return runProcess(process.execPath, [CONFIG_CLI, ...args], { env: world.env });
}

/** The settings as `openrouter-mcp-config --show --json` reports them. */
async function shownSettings(): Promise<Settings> {
  const run = await configCli(['--show', '--json']);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { settings: Settings }).settings;
}

/** The page at Delegation (openPage makes any CSP violation a console error, so `errors` holds it). */
async function openDelegation(options: { theme?: 'light' | 'dark'; width?: number; height?: number } = {}) {
  const opened = await openPage(chrome.browser, world.pageUrl('delegation'), options);
  await expect.poll(() => opened.page.getByRole('radio', { name: 'On demand' }).count()).toBe(1);
  return opened;
}

/** The page as it is now, in the light and the dark theme. */
async function screenshotBothThemes(page: Page, name: string): Promise<void> {
  for (const theme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await screenshot(page, name, theme);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Waits for the catalog search to have answered (the summary line says how many models it shows). */
async function catalogLoaded(page: Page): Promise<void> {
  await expect.poll(() => page.getByTestId('model-summary').textContent(), { timeout: 10_000 }).toMatch(/tool-capable models in the catalog/);
}

describe("the Delegation page's helpers", () => {
  it('read a number as people type it, and say what is wrong with one that is not', () => {
    expect(parseNumber('$1,250.50', 'usd')).toEqual({ ok: true, value: 1250.5 });
    expect(parseNumber(' .5 ', 'usdOrNone')).toEqual({ ok: true, value: 0.5 });
    expect(parseNumber('', 'usdOrNone')).toEqual({ ok: true, value: null });
    expect(parseNumber('none', 'wholeOrNone')).toEqual({ ok: true, value: null });
    expect(parseNumber('', 'usd')).toEqual({ ok: false, error: 'Enter a value; this setting cannot be empty.' });
    expect(parseNumber('five', 'usd')).toEqual({ ok: false, error: 'Enter an amount in dollars, like 0.50.' });
    expect(parseNumber('3 jobs', 'whole')).toEqual({ ok: false, error: 'Enter a whole number, like 3.' });
    // Ranges are the schema's to judge: a negative number reads as a number.
    expect(parseNumber('-1', 'usd')).toEqual({ ok: true, value: -1 });
  });

  it('show dollars with cents, and keep the digits of small amounts', () => {
    expect(formatDraft(0.5, 'usd')).toBe('0.50');
    expect(formatDraft(0.075, 'usdOrNone')).toBe('0.075');
    expect(formatDraft(null, 'usdOrNone')).toBe('');
    expect(formatDraft(128000, 'wholeOrNone')).toBe('128000');
  });

  it("explain a change the contract's schema refuses, cross-field rules included", () => {
    const settings = defaultSettings();
    expect(patchProblem(settings, { budgets: { perDayUsd: -2 } })).toBe('Must be 0 or more.');
    expect(patchProblem(settings, { concurrency: 2.5 })).toBe('Must be a whole number.');
    expect(patchProblem(settings, { minContext: 0 })).toBe('Must be at least 1.');
    expect(patchProblem(settings, { defaultPermissionMode: 'auto' })).toBe('"auto" is above the permission ceiling "acceptEdits".');
    expect(patchProblem(settings, { blocklist: ['deepseek/*'] })).toBe(`"${DEFAULT_MODEL}" is blocked by "deepseek/*" in the blocklist.`);
    expect(patchProblem(settings, { budgets: { perJobUsd: 2 }, allowlist: ['deepseek/*'] })).toBeNull();
    expect(patchProblem(settings, { provider: { only: ['anthropic'], ignore: ['anthropic'] } })).toBe(
      '"anthropic" is both among the providers to use and the providers to skip.',
    );
  });

  it('check a list entry, and word the policy refusals as phrases of their own', () => {
    expect(patternProblem('deepseek')).toBe('Expected a model id like "vendor/model" or a pattern like "vendor/*".');
    expect(patternProblem('  ')).toMatch(/^Type a model id/);
    expect(patternProblem('deepseek/*')).toBeNull();
    expect(patternProblem('~anthropic/claude-sonnet-latest')).toBeNull();
    expect(fallbackModelProblem('z-ai/glm-4.7')).toBeNull();
    expect(fallbackModelProblem('z-ai/*')).toBe('A fallback model must be a model id, not a pattern.');
    expect(fallbackModelProblem(' ')).toMatch(/^Type a model id/);
    expect(providerNameProblem(' ')).toMatch(/^Type a provider as OpenRouter names it/);
    expect(providerNameProblem('deepinfra/turbo')).toBeNull();
    expect(providerNameProblem('x'.repeat(101))).toMatch(/^Expected a provider name .*at most 100 characters/);
    expect(domainProblem('registry.npmjs.org')).toBeNull();
    expect(domainProblem('127.0.0.1')).toBe('Expected a domain name, not an address.');
    expect(domainProblem(' ')).toMatch(/^Type a domain/);
    expect(sandboxPathProblem('~/work/secrets')).toBeNull();
    expect(sandboxPathProblem('secrets')).toBe('Expected an absolute path, or one starting with ~/.');
    expect(refusalText('is on your blocklist (anthropic/*)')).toBe('On your blocklist (anthropic/*)');
    expect(refusalText('input $3.00/M is above your cap of $1.00/M')).toBe('Input $3.00/M is above your cap of $1.00/M');
  });
});

describe("the Programs and sandbox card's notice", () => {
  const missing = { available: false as const, reason: 'socat is not installed', fix: 'install bubblewrap and socat' };

  it('says the sandbox works, naming what runs it, unless the settings turn it off', () => {
    const here = { available: true as const, via: 'bubblewrap and socat (/usr/bin/bwrap)' };
    expect(sandboxNotice(here, { programs: 'sandboxed', use: 'required' })).toEqual({
      tone: 'ok',
      title: 'The sandbox works on this machine:',
      text: 'bubblewrap and socat (/usr/bin/bwrap).',
    });
    expect(sandboxNotice(here, { programs: 'ask-approval', use: 'off' }).tone).toBe('warn');
  });

  it('judges a missing sandbox as the doctor does: a failure only where the settings require one for programs', () => {
    expect(sandboxNotice(missing, { programs: 'sandboxed', use: 'required' })).toEqual({
      tone: 'fail',
      title: 'The sandbox is not available on this machine:',
      text: 'socat is not installed. A delegation whose delegate could run programs is refused. To get it: install bubblewrap and socat.',
    });
    expect(sandboxNotice(missing, { programs: 'sandboxed', use: 'preferred' }).tone).toBe('warn');
    expect(sandboxNotice(missing, { programs: 'ask-approval', use: 'off' }).tone).toBe('warn');
    expect(sandboxNotice(missing, { programs: 'off', use: 'required' }).tone).toBe('info');
  });
});

describe('the Delegation page', () => {
  for (const theme of ['light', 'dark'] as const) {
    it(`shows the saved policy, with what Claude Code sees in each mode (${theme})`, { timeout: 60_000 }, async () => {
      await startWith({ blocklist: ['anthropic/*'], maxPriceOutputPerM: 5, budgets: { perJobUsd: 0.25, perDayUsd: 4, reserveUsd: 1 } });
      const { page, context, errors } = await openDelegation({ theme });
      expect(await page.getByRole('radio', { name: 'On demand' }).isChecked()).toBe(true);
      expect(await page.getByText('Claude Code sees only the model list').count()).toBe(1);
      expect(await page.getByText('uses them only when you ask it to delegate').count()).toBe(1);
      expect(await page.getByText('to a cheaper model on its own').count()).toBe(1);
      expect(await page.getByTestId('current-model').textContent()).toContain(DEFAULT_MODEL);
      expect(await page.getByLabel('Per job').inputValue()).toBe('0.25');
      expect(await page.getByLabel('Per day').inputValue()).toBe('4.00');
      expect(await page.getByLabel('Max output price').inputValue()).toBe('5.00');
      expect(await page.getByLabel('Max input price').inputValue()).toBe('');
      expect(await page.getByTestId('allowlist-empty').textContent()).toContain('every tool-capable model is allowed');
      expect(await page.getByTestId('blocklist-items').getByRole('listitem').allTextContents()).toEqual([expect.stringContaining('anthropic/*')]);
      expect(await page.getByLabel('Permission ceiling').inputValue()).toBe('acceptEdits');
      await catalogLoaded(page);
      expect(await page.getByTestId('catalog-age').textContent()).toMatch(/Catalog fetched just now/);
      await screenshot(page, 'delegation', theme);
      await expectAccessible(page);
      if (theme === 'light') {
        await page.setViewportSize({ width: 560, height: 700 });
        await screenshot(page, 'delegation-narrow', theme);
      }
      expect(errors).toEqual([]);
      await context.close();
    });
  }

  it.each([1280, 1000, 800])('shows every select whole at %i px: no chosen option is cut (issue 38)', async (width) => {
    await startWith();
    const { page, context, errors } = await openDelegation({ width, height: 800 });
    // Each select's chosen text, measured in its own font, against the room the select gives it (padding and arrow out).
    const cut = await page.evaluate(() => {
      const canvas = document.createElement('canvas').getContext('2d');
      if (!canvas) return ['no canvas'];
      return [...document.querySelectorAll('select')].flatMap((select) => {
        const style = getComputedStyle(select);
        canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        const text = select.selectedOptions[0]?.textContent ?? '';
        const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
        return canvas.measureText(text).width > room ? [`${select.id}: “${text}” in ${Math.round(room)} px`] : [];
      });
    });
    expect(cut).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('saves a new mode, and openrouter-mcp-config --show --json reports it', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    await page.getByRole('radio', { name: 'Automatic' }).check();
    await expect.poll(() => page.getByTestId('mode-status').textContent()).toContain('Saved');
    expect((await shownSettings()).mode).toBe('auto');

    await page.getByRole('radio', { name: 'Off' }).focus();
    await page.keyboard.press('Space');
    await expect.poll(async () => (await shownSettings()).mode).toBe('off');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('searches the live catalog and makes the model picked with the keyboard the default', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    await catalogLoaded(page);
    const search = page.getByLabel('Search the catalog');
    await search.fill('v4 pro 0813');
    const row = page.locator('tr[data-model="deepseek/deepseek-v4-pro-0813"]');
    await expect.poll(() => page.locator('#model-results tbody tr').count()).toBe(1);
    // Price per million in and out, the context window, tool support, the policy's verdict.
    expect((await row.locator('td').allTextContents()).map((text) => text.trim())).toEqual([
      expect.stringContaining('deepseek/deepseek-v4-pro-0813'),
      '$0.66/M',
      '$1.98/M',
      '1M',
      expect.stringContaining('yes'),
      'Allowed',
      'Use',
    ]);
    expect(await page.getByTestId('model-summary').textContent()).toMatch(/^Showing 1 matching model \(of \d+ tool-capable models in the catalog\)\.$/);
    await screenshotBothThemes(page, 'delegation-model-search');

    // ↓ from the search field moves into the results; Enter picks the focused row.
    await search.focus();
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toMatch(
      /^Use .* \(deepseek\/deepseek-v4-pro-0813\) as the default model$/,
    );
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('model-choose-status').textContent()).toContain('is now the default model');
    expect((await shownSettings()).defaultModel).toBe('deepseek/deepseek-v4-pro-0813');
    await expect.poll(() => page.getByTestId('current-model').textContent()).toContain('deepseek/deepseek-v4-pro-0813');
    expect(await row.getByText('Default', { exact: true }).count()).toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows why the policy refuses a model, and does not let it be chosen', async () => {
    await startWith({ blocklist: ['anthropic/*'], maxPriceInputPerM: 1 });
    const { page, context, errors } = await openDelegation();
    await catalogLoaded(page);
    await page.getByLabel('Search the catalog').fill('sonnet');
    const row = page.locator('tr[data-model="anthropic/claude-sonnet-5"]');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('.policy').textContent()).toMatch(/Not allowed\s*On your blocklist \(anthropic\/\*\)/);
    expect(await row.getByRole('button').isDisabled()).toBe(true);

    await page.getByLabel('Search the catalog').fill('kimi k3');
    const expensive = page.locator('tr[data-model="moonshotai/kimi-k3"]');
    await expect.poll(() => expensive.count()).toBe(1);
    expect(await expensive.locator('.policy').textContent()).toMatch(/Not allowed\s*Input \$3\.00\/M is above your cap of \$1\.00\/M/);
    expect(await expensive.getByRole('button').isDisabled()).toBe(true);
    expect((await shownSettings()).defaultModel).toBe(DEFAULT_MODEL);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('explains a negative budget next to the field and saves nothing', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    const perJob = page.getByLabel('Per job');
    await perJob.fill('-1');
    await perJob.press('Enter');
    // A per-job budget is at least $0.01 (the contract's bound, so the CLI and the menu refuse it alike).
    await expect.poll(() => page.getByTestId('budget-job-error').textContent()).toBe('Not saved: Must be at least 0.01.');
    expect(await perJob.getAttribute('aria-invalid')).toBe('true');
    expect(await perJob.getAttribute('aria-describedby')).toContain('budget-job-error');

    const timeout = page.getByLabel('Job timeout');
    await timeout.fill('ten');
    await timeout.blur();
    await expect.poll(() => page.getByTestId('job-timeout-error').textContent()).toBe('Not saved: Enter a whole number, like 3.');
    const concurrency = page.getByLabel('Concurrency');
    await concurrency.fill('40');
    await concurrency.press('Enter');
    await expect.poll(() => page.getByTestId('concurrency-error').textContent()).toBe('Not saved: Must be at most 32.');
    await screenshotBothThemes(page, 'delegation-invalid');

    const shown = await shownSettings();
    expect(shown.budgets.perJobUsd).toBe(0.5);
    expect(shown.jobTimeoutMinutes).toBe(30);
    expect(shown.concurrency).toBe(3);
    // The page still says what is saved once the entry is fixed.
    await perJob.fill('0.75');
    await perJob.press('Enter');
    await expect.poll(() => page.getByTestId('budget-job-status').textContent()).toContain('Saved');
    expect(await page.getByTestId('budget-job-error').count()).toBe(0);
    expect((await shownSettings()).budgets.perJobUsd).toBe(0.75);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('refuses a malformed pattern, and an allowlist without the default model, with the reason', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    const add = page.getByLabel('Add to the allowlist');
    await add.fill('deepseek');
    await add.press('Enter');
    await expect
      .poll(() => page.getByTestId('allowlist-error').textContent())
      .toBe('Not saved: Expected a model id like "vendor/model" or a pattern like "vendor/*".');
    // Allowing only qwen would refuse every delegation that names no model.
    await add.fill('qwen/*');
    await add.press('Enter');
    await expect.poll(() => page.getByTestId('allowlist-error').textContent()).toContain(`"${DEFAULT_MODEL}" is not in the allowlist`);
    expect(await add.inputValue()).toBe('qwen/*');
    expect((await shownSettings()).allowlist).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('refuses a default permission mode above the ceiling, with the reason', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    await page.getByLabel('Default permission mode').selectOption('bypassPermissions');
    await expect
      .poll(() => page.getByTestId('default-permission-error').textContent())
      .toBe('Not saved: "bypassPermissions" is above the permission ceiling "acceptEdits".');
    // The control goes back to what is saved.
    expect(await page.getByLabel('Default permission mode').inputValue()).toBe('acceptEdits');
    const shown = await shownSettings();
    expect(shown.defaultPermissionMode).toBe('acceptEdits');
    // Lowering the ceiling under the default is refused the same way.
    await page.getByLabel('Permission ceiling').selectOption('plan');
    await expect.poll(() => page.getByTestId('permission-ceiling-error').textContent()).toContain('above the permission ceiling "plan"');
    expect((await shownSettings()).permissionCeiling).toBe('acceptEdits');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('sets the delegate profile, explaining what each gives a delegate', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    const select = page.getByLabel('Delegate profile');
    expect(await select.inputValue()).toBe('lean');
    expect(await page.locator('#delegate-profile-hint').textContent()).toContain('Coding tasks: Bash, Read, Edit, Write, Glob, Grep');
    await select.selectOption('minimal');
    await expect.poll(async () => (await shownSettings()).delegateProfile).toBe('minimal');
    expect(await page.locator('#delegate-profile-hint').textContent()).toContain('Text tasks: only Read');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('sets where delegates work, explaining each choice', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    const select = page.getByLabel('Isolation');
    expect(await select.inputValue()).toBe('worktree');
    expect(await page.locator('#isolation-hint').textContent()).toContain('Each delegate works in a git worktree of its own');
    await select.selectOption('none');
    await expect.poll(async () => (await shownSettings()).isolation).toBe('none');
    expect(await page.locator('#isolation-hint').textContent()).toContain('Delegates edit your folder in place');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows whether this machine has the sandbox; a program policy picked there is saved, and the CLI sees it', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    const sandbox = await probeSandbox({ env: world.env });
    const notice = page.getByTestId('sandbox-availability');
    await expect.poll(() => notice.textContent()).toContain(sandbox.available ? sandbox.via : sandbox.reason);
    const programs = page.getByLabel('Programs', { exact: true });
    expect(await programs.inputValue()).toBe('sandboxed');
    await programs.selectOption('ask-approval');
    await expect.poll(async () => (await shownSettings()).sandbox.programs).toBe('ask-approval');
    expect(await page.locator('#sandbox-programs-hint').textContent()).toContain('A delegate runs programs only when the delegation pre-approves Bash');
    await screenshotBothThemes(page, 'delegation-sandbox');
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows the service's refusal when the settings file is broken", async () => {
    await world.start();
    await writeFile(path.join(world.home, 'config', 'settings.json'), '{ "mode": "auto", ');
    await world.startService();
    const { page, context, errors } = await openDelegation();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'The settings file cannot be used' }).count()).toBe(1);
    // click(), not check(): the refusal can put the radio back before check() sees it change (a CI run failed so).
    await page.getByRole('radio', { name: 'Automatic' }).click();
    await expect.poll(() => page.getByTestId('mode-error').textContent()).toMatch(/^Not saved: .*Fix or delete .*settings\.json first\./);
    expect(await page.getByRole('radio', { name: 'On demand' }).isChecked()).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('says at once when the settings file is broken by hand while it is open, and stops saying it once fixed', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    const banner = page.getByRole('alert').filter({ hasText: 'The settings file cannot be used' });
    expect(await banner.count()).toBe(0);
    const file = path.join(world.home, 'config', 'settings.json');
    const good = await readFile(file, 'utf8');

    await writeFile(file, '{ "mode": "auto", ');
    // The service's file watcher, then its event, then the page: seconds on a loaded machine, not one.
    await expect.poll(() => banner.count(), { timeout: 15_000 }).toBe(1);
    expect(await banner.textContent()).toContain('settings.json');

    await writeFile(file, good);
    await expect.poll(() => banner.count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a change made with openrouter-mcp-config while it is open', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    await catalogLoaded(page);
    const run = await configCli(['--mode', 'off', '--budget-job', '2', '--block', 'openai/*', '--default-model', 'qwen/qwen3.7-flash']);
    expect(run.code, run.stderr).toBe(0);
    await expect.poll(() => page.getByRole('radio', { name: 'Off' }).isChecked()).toBe(true);
    await expect.poll(() => page.getByLabel('Per job').inputValue()).toBe('2.00');
    await expect.poll(() => page.getByTestId('blocklist-items').textContent()).toContain('openai/*');
    await expect.poll(() => page.getByTestId('current-model').textContent()).toContain('qwen/qwen3.7-flash');
    // The search follows the policy: OpenAI's models are refused now.
    await page.getByLabel('Search the catalog').fill('gpt-5.6-luna');
    await expect.poll(() => page.locator('tr[data-model="openai/gpt-5.6-luna"] .policy').textContent()).toContain('Not allowed');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('adds and removes allowlist entries, and the CLI sees each change', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    const add = page.getByLabel('Add to the allowlist');
    await add.fill('deepseek/*');
    await add.press('Enter');
    await expect.poll(() => page.getByTestId('allowlist-status').textContent()).toContain('Saved: added deepseek/*');
    expect(await add.inputValue()).toBe('');
    expect((await shownSettings()).allowlist).toEqual(['deepseek/*']);

    await add.fill('qwen/qwen3.7-flash');
    await page.getByRole('button', { name: 'Add to the allowlist' }).click();
    await expect.poll(async () => (await shownSettings()).allowlist).toEqual(['deepseek/*', 'qwen/qwen3.7-flash']);
    expect(await page.getByTestId('allowlist-items').getByRole('listitem').count()).toBe(2);

    await page.getByRole('button', { name: 'Remove deepseek/* from the allowlist' }).click();
    // deepseek/* covers the default model: removing it alone is refused, and said so.
    await expect.poll(() => page.getByTestId('allowlist-error').textContent()).toContain('is not in the allowlist');
    expect((await shownSettings()).allowlist).toEqual(['deepseek/*', 'qwen/qwen3.7-flash']);

    await page.getByRole('button', { name: 'Remove qwen/qwen3.7-flash from the allowlist' }).click();
    await expect.poll(async () => (await shownSettings()).allowlist).toEqual(['deepseek/*']);
    await expect.poll(() => page.getByTestId('allowlist-items').getByRole('listitem').count()).toBe(1);
    expect(await page.getByTestId('allowlist-error').count()).toBe(0);
    // The keyboard stays in the editor after its chip went away.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('allowlist-add');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('edits the fallback models: in order, a pattern and a fourth are refused inline, the CLI and a reload see each change', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    expect(await page.getByTestId('fallback-models-empty').textContent()).toContain('a job runs on its own model only');
    const add = page.getByLabel('Add to the fallback models');
    await add.fill('z-ai/glm-4.7');
    await add.press('Enter');
    await expect.poll(() => page.getByTestId('fallback-models-status').textContent()).toContain('Saved: added z-ai/glm-4.7');
    await add.fill('qwen/qwen3-coder');
    await page.getByRole('button', { name: 'Add to the fallback models' }).click();
    await expect.poll(async () => (await shownSettings()).fallbackModels).toEqual(['z-ai/glm-4.7', 'qwen/qwen3-coder']);

    // A pattern is no model a request can fall back to: refused before it is sent.
    await add.fill('moonshotai/*');
    await add.press('Enter');
    await expect.poll(() => page.getByTestId('fallback-models-error').textContent()).toBe('Not saved: A fallback model must be a model id, not a pattern.');
    await add.fill('moonshotai/kimi-k2');
    await add.press('Enter');
    await expect.poll(() => page.getByTestId('fallback-models-items').getByRole('listitem').count()).toBe(3);
    await add.fill('z-ai/glm-4.6');
    await add.press('Enter');
    await expect.poll(() => page.getByTestId('fallback-models-error').textContent()).toBe('Not saved: Must be at most 3.');
    expect((await shownSettings()).fallbackModels).toEqual(['z-ai/glm-4.7', 'qwen/qwen3-coder', 'moonshotai/kimi-k2']);
    const onDisk = JSON.parse(await readFile(path.join(world.home, 'config', 'settings.json'), 'utf8')) as Settings;
    expect(onDisk.fallbackModels).toEqual(['z-ai/glm-4.7', 'qwen/qwen3-coder', 'moonshotai/kimi-k2']);
    await screenshotBothThemes(page, 'delegation-fallbacks');

    await page.reload();
    await expect.poll(() => page.getByRole('radio', { name: 'On demand' }).count()).toBe(1);
    expect(await page.getByTestId('fallback-models-items').getByRole('listitem').allTextContents()).toEqual([
      expect.stringContaining('z-ai/glm-4.7'),
      expect.stringContaining('qwen/qwen3-coder'),
      expect.stringContaining('moonshotai/kimi-k2'),
    ]);
    await page.getByRole('button', { name: 'Remove qwen/qwen3-coder from the fallback models' }).click();
    await expect.poll(async () => (await shownSettings()).fallbackModels).toEqual(['z-ai/glm-4.7', 'moonshotai/kimi-k2']);

    // And from the CLI while the page is open.
    const run = await configCli(['--clear-fallback-models', '--fallback-model', 'deepseek/deepseek-v3.2']);
    expect(run.code, run.stderr).toBe(0);
    await expect
      .poll(() => page.getByTestId('fallback-models-items').getByRole('listitem').allTextContents())
      .toEqual([expect.stringContaining('deepseek/deepseek-v3.2')]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('sets the provider policy: every control saves, the settings file and the CLI have it, a reload shows it', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    const dataCollection = page.getByLabel('Data collection');
    const sort = page.getByLabel('Sort providers by');
    const zdr = page.getByLabel('Zero data retention only');
    const fallbacks = page.getByLabel('Provider fallbacks');
    // OpenRouter's own defaults.
    expect(await dataCollection.inputValue()).toBe('allow');
    expect(await sort.inputValue()).toBe('none');
    expect(await zdr.isChecked()).toBe(false);
    expect(await fallbacks.isChecked()).toBe(true);
    expect(await page.getByTestId('provider-only-empty').textContent()).toContain('any provider may serve a delegate');
    expect(await page.getByTestId('provider-ignore-empty').count()).toBe(1);

    await dataCollection.selectOption('deny');
    await expect.poll(() => page.getByTestId('provider-data-collection-status').textContent()).toContain('Saved');
    await sort.selectOption('price');
    await expect.poll(() => page.getByTestId('provider-sort-status').textContent()).toContain('Saved');
    await zdr.check();
    await expect.poll(() => page.getByTestId('provider-zdr-status').textContent()).toContain('Saved');
    // The keyboard works the checkbox as well as the mouse.
    await fallbacks.focus();
    await page.keyboard.press('Space');
    await expect.poll(() => page.getByTestId('provider-fallbacks-status').textContent()).toContain('Saved');

    const only = page.getByLabel('Add to the providers to use');
    await only.fill('anthropic');
    await only.press('Enter');
    await expect.poll(() => page.getByTestId('provider-only-status').textContent()).toContain('Saved: added anthropic');
    await only.fill('google-vertex');
    await page.getByRole('button', { name: 'Add to the providers to use' }).click();
    await expect.poll(() => page.getByTestId('provider-only-items').getByRole('listitem').count()).toBe(2);

    const ignore = page.getByLabel('Add to the providers to skip');
    // A control character is refused inline; a provider both to use and to skip is refused with the reason.
    await ignore.fill('deep\u0007infra');
    await ignore.press('Enter');
    await expect.poll(() => page.getByTestId('provider-ignore-error').textContent()).toMatch(/^Not saved: Expected a provider name/);
    await ignore.fill('Anthropic');
    await ignore.press('Enter');
    await expect.poll(() => page.getByTestId('provider-ignore-error').textContent()).toContain('is both among the providers to use and the providers to skip');
    await ignore.fill('together');
    await ignore.press('Enter');
    await expect.poll(() => page.getByTestId('provider-ignore-status').textContent()).toContain('Saved: added together');
    expect(await page.getByTestId('provider-ignore-error').count()).toBe(0);

    const expected = { dataCollection: 'deny', zdr: true, sort: 'price', only: ['anthropic', 'google-vertex'], ignore: ['together'], allowFallbacks: false };
    await expect.poll(async () => (await shownSettings()).provider).toEqual(expected);
    const onDisk = JSON.parse(await readFile(path.join(world.home, 'config', 'settings.json'), 'utf8')) as Settings;
    expect(onDisk.provider).toEqual(expected);
    await screenshotBothThemes(page, 'delegation-providers');

    await page.reload();
    await expect.poll(() => page.getByRole('radio', { name: 'On demand' }).count()).toBe(1);
    expect(await page.getByLabel('Data collection').inputValue()).toBe('deny');
    expect(await page.getByLabel('Sort providers by').inputValue()).toBe('price');
    expect(await page.getByLabel('Zero data retention only').isChecked()).toBe(true);
    expect(await page.getByLabel('Provider fallbacks').isChecked()).toBe(false);
    expect(await page.getByTestId('provider-only-items').getByRole('listitem').allTextContents()).toEqual([
      expect.stringContaining('anthropic'),
      expect.stringContaining('google-vertex'),
    ]);
    expect(await page.getByTestId('provider-ignore-items').getByRole('listitem').allTextContents()).toEqual([expect.stringContaining('together')]);

    // And back, from the page: the CLI sees the defaults again.
    await page.getByRole('button', { name: 'Remove together from the providers to skip' }).click();
    await page.getByLabel('Zero data retention only').uncheck();
    await expect.poll(async () => (await shownSettings()).provider).toMatchObject({ zdr: false, ignore: [] });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('turns server tools and URL sources on from the Budgets card, off by default: saved, and the CLI sees it', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    const serverTools = page.getByLabel('Server tools and URL sources');
    expect(await serverTools.isChecked()).toBe(false);
    expect(await page.locator('#gateway-server-tools-hint').textContent()).toContain('No cap sees these fees');
    await serverTools.check();
    await expect.poll(() => page.getByTestId('gateway-server-tools-status').textContent()).toContain('Saved');
    await expect.poll(async () => (await shownSettings()).gateway).toEqual({ allowServerTools: true });

    const run = await configCli(['--allow-server-tools', 'off']);
    expect(run.code, run.stderr).toBe(0);
    await expect.poll(() => page.getByLabel('Server tools and URL sources').isChecked()).toBe(false);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a provider policy set with openrouter-mcp-config while it is open', async () => {
    await startWith();
    const { page, context, errors } = await openDelegation();
    const run = await configCli(['--zdr', 'on', '--provider-sort', 'latency', '--provider-ignore', 'deepinfra/turbo']);
    expect(run.code, run.stderr).toBe(0);
    await expect.poll(() => page.getByLabel('Zero data retention only').isChecked()).toBe(true);
    await expect.poll(() => page.getByLabel('Sort providers by').inputValue()).toBe('latency');
    await expect.poll(() => page.getByTestId('provider-ignore-items').textContent()).toContain('deepinfra/turbo');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('edits the tools Claude Code may pre-approve: a narrowed Bash rule is saved, a command line is refused inline', async () => {
    await startWith({ approvableTools: [...DEFAULT_APPROVABLE_TOOLS] });
    const { page, context, errors } = await openDelegation();
    const add = page.getByLabel('Add to the tools Claude Code may pre-approve');
    await add.fill('rm -rf /');
    await add.press('Enter');
    await expect.poll(() => page.getByTestId('approvableTools-error').textContent()).toMatch(/[Ee]xpected a tool like "Read"/);
    expect((await shownSettings()).approvableTools).toEqual(DEFAULT_APPROVABLE_TOOLS);

    await add.fill('Bash(npm test:*)');
    await add.press('Enter');
    await expect.poll(async () => (await shownSettings()).approvableTools).toEqual([...DEFAULT_APPROVABLE_TOOLS, 'Bash(npm test:*)']);
    await page.getByRole('button', { name: 'Remove Grep from the tools Claude Code may pre-approve' }).click();
    await expect.poll(async () => (await shownSettings()).approvableTools).not.toContain('Grep');
    expect(errors).toEqual([]);
    await context.close();
  });
});
