/**
 * The Delegation page's Verify commands card (DelegationVerify.svelte, docs/VERIFY.md) over the loopback host, against
 * the real service and real git: the three settings that govern the runs are saved to the settings file; a folder in a
 * real repository is looked up with verify.commands, its suggestion is saved for the repository's top folder exactly as
 * listed, replaces what was saved there, and is removed again; a folder outside git gets the service's own words.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Settings } from '../../src-main/contract/settings.js';
import { gitIn, makeRepo } from '../support/git-repo.js';
import { UiWorld, useBrowser, openPage, screenshotOf, expectAccessible } from '../support/ui.js';

const chrome = useBrowser();
let world: UiWorld;

beforeEach(async () => {
  world = new UiWorld();
});
afterEach(async () => {
  await world.stop();
});

/** The settings file as the service wrote it. */
async function settingsFile(): Promise<Settings> {
  return JSON.parse(await readFile(path.join(world.home, 'config', 'settings.json'), 'utf8')) as Settings;
}

/** A real repository in the world's project folder whose package.json has a `test` script; returns git's top folder. */
async function repoWithTestScript(): Promise<string> {
  await makeRepo(world.project, {
    'package.json': `${JSON.stringify({ name: 'demo', private: true, scripts: { test: 'node --test' } }, null, 2)}\n`,
    'src/index.js': 'export const answer = 42;\n',
  });
  return (await gitIn(world.project, ['rev-parse', '--show-toplevel'])).trim();
}

/** The page at Delegation, once its settings are loaded. */
async function openDelegation() {
  const opened = await openPage(chrome.browser, world.pageUrl('delegation'));
  await expect.poll(() => opened.page.getByRole('radio', { name: 'On demand' }).count()).toBe(1);
  return opened;
}

function card(page: Page) {
  return page.getByRole('region', { name: 'Verify commands' });
}

/** Types a folder into "Add for a repository" and presses Find. */
async function find(page: Page, folder: string): Promise<void> {
  await card(page).getByLabel('Folder in the repository').fill(folder);
  await card(page).getByRole('button', { name: 'Find' }).click();
}

describe("the Delegation page's Verify commands card", () => {
  it('saves the verify timeout, how many run at once and the fix rounds to the settings file, and refuses a fourth round', async () => {
    await world.start();
    await world.startService();
    const { page, context, errors } = await openDelegation();
    const fixRounds = card(page).getByLabel('Fix rounds');
    // The defaults, with the contract's words: null at once is half the cores.
    expect(await card(page).getByLabel('Verify command timeout').inputValue()).toBe('10');
    expect(await card(page).getByLabel('Verify commands at once').inputValue()).toBe('');
    expect(await page.locator('#verify-concurrency-hint').textContent()).toContain("Empty: half the machine's cores.");
    expect(await fixRounds.inputValue()).toBe('1');

    await fixRounds.fill('2');
    await fixRounds.press('Enter');
    await expect.poll(() => page.getByTestId('fix-rounds-status').textContent()).toContain('Saved');
    expect((await settingsFile()).fixRounds).toBe(2);

    await fixRounds.fill('4');
    await fixRounds.press('Enter');
    await expect.poll(() => page.getByTestId('fix-rounds-error').textContent()).toBe('Not saved: Must be at most 3.');
    expect((await settingsFile()).fixRounds).toBe(2);

    const atOnce = card(page).getByLabel('Verify commands at once');
    await atOnce.fill('2');
    await atOnce.press('Enter');
    await expect.poll(async () => (await settingsFile()).verifyConcurrency).toBe(2);
    // Emptied: back to none, half the cores.
    await atOnce.fill('');
    await atOnce.press('Enter');
    await expect.poll(async () => (await settingsFile()).verifyConcurrency).toBeNull();

    const timeout = card(page).getByLabel('Verify command timeout');
    await timeout.fill('90');
    await timeout.press('Enter');
    await expect.poll(async () => (await settingsFile()).verifyTimeoutMinutes).toBe(90);
    expect(await page.locator('#verify-timeout-hint').textContent()).toContain('That is 1 h 30 min.');
    expect(errors).toEqual([]);
    await context.close();
  });

  it("finds a repository's suggestion, saves exactly it for the top folder, and removes it", { timeout: 60_000 }, async () => {
    await world.start();
    const top = await repoWithTestScript();
    await world.startService();
    const { page, context, errors } = await openDelegation();
    expect(await page.getByTestId('verify-saved-empty').textContent()).toContain('None saved');

    // A folder inside the repository: the page shows git's top folder, the key the commands are saved under.
    await find(page, path.join(world.project, 'src'));
    await expect.poll(() => page.getByTestId('verify-repo').textContent()).toBe(top);
    await expect.poll(() => page.getByTestId('verify-saved-now').textContent()).toContain('nothing');
    const suggestion = card(page).getByRole('checkbox', { name: 'npm test' });
    expect(await suggestion.isChecked()).toBe(true);
    expect(await page.locator(`#${(await suggestion.getAttribute('aria-describedby')) ?? ''}`).textContent()).toBe('from package.json script test');
    await expect.poll(() => page.getByTestId('verify-listed').getByRole('listitem').allTextContents()).toEqual([expect.stringContaining('npm test')]);
    for (const theme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: theme });
      await expectAccessible(page);
      await screenshotOf(card(page), 'delegation-verify-found', theme);
    }
    await page.emulateMedia({ colorScheme: 'light' });

    await card(page)
      .getByRole('button', { name: `Save these verify commands for ${top}` })
      .click();
    await expect.poll(() => page.getByTestId('verify-add-status').textContent()).toContain('Saved: 1 command');
    expect((await settingsFile()).verifyCommands).toEqual([{ repo: top, commands: ['npm test'] }]);
    // The saved list shows it, each command as code.
    const row = page.getByTestId('verify-saved-items').locator(`li[data-repo="${top}"]`);
    await expect.poll(() => row.locator('ol code').allTextContents()).toEqual(['npm test']);
    await expect.poll(() => page.getByTestId('verify-saved-now').textContent()).toContain('npm test');
    await expectAccessible(page);

    await card(page)
      .getByRole('button', { name: `Remove the verify commands saved for ${top}` })
      .click();
    await expect.poll(async () => (await settingsFile()).verifyCommands).toEqual([]);
    await expect.poll(() => page.getByTestId('verify-saved-empty').count()).toBe(1);
    await expect.poll(() => page.getByTestId('verify-saved-status').textContent()).toContain(`Saved: removed ${top}`);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("starts from what is saved, and saves the edited list in place of the repository's, keeping the others", { timeout: 60_000 }, async () => {
    const other = { repo: '/srv/other', commands: ['make check'] };
    await world.start();
    const top = await repoWithTestScript();
    await writeFile(
      path.join(world.home, 'config', 'settings.json'),
      JSON.stringify({ delegateMaxRetries: 0, approvableTools: ['*'], verifyCommands: [{ repo: top, commands: ['make lint'] }, other] }),
    );
    await world.startService();
    const { page, context, errors } = await openDelegation();

    await find(page, world.project);
    await expect.poll(() => page.getByTestId('verify-repo').textContent()).toBe(top);
    expect(await page.getByTestId('verify-saved-now').textContent()).toContain('make lint');
    // What is saved is listed; a suggestion not saved is offered unchecked.
    const listed = page.getByTestId('verify-listed').getByRole('listitem');
    expect(await listed.allTextContents()).toEqual([expect.stringContaining('make lint')]);
    const suggestion = card(page).getByRole('checkbox', { name: 'npm test' });
    expect(await suggestion.isChecked()).toBe(false);

    await suggestion.check();
    const line = card(page).getByLabel('Add a command line');
    await line.fill('  npm run build  ');
    await line.press('Enter');
    // A blank line and one already listed are refused, in words.
    await line.fill('npm test');
    await line.press('Enter');
    await expect.poll(() => page.getByTestId('verify-line-error').textContent()).toBe('npm test is already in the list.');
    await line.fill('');
    await card(page).getByRole('button', { name: 'Add a command line' }).click();
    await expect.poll(() => page.getByTestId('verify-line-error').textContent()).toMatch(/^A blank command would run nothing/);
    await card(page).getByRole('button', { name: 'Remove make lint from the list' }).click();
    await expect.poll(() => listed.allTextContents()).toEqual([expect.stringContaining('npm test'), expect.stringContaining('npm run build')]);
    expect(await page.getByTestId('verify-add-status').textContent()).toContain('Not saved yet — press Save');
    // Unchecking takes the suggestion out of the list; checking puts it back, last.
    await suggestion.uncheck();
    await expect.poll(() => listed.allTextContents()).toEqual([expect.stringContaining('npm run build')]);
    await suggestion.check();

    await card(page)
      .getByRole('button', { name: /^Save these verify commands/ })
      .click();
    await expect.poll(async () => (await settingsFile()).verifyCommands).toEqual([{ repo: top, commands: ['npm run build', 'npm test'] }, other]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows the service's words for a folder outside git, and the page's own for a relative one, saving nothing", async () => {
    await world.start();
    await world.startService();
    const outside = path.join(world.home, 'not-a-repo');
    await mkdir(outside);
    const before = await readFile(path.join(world.home, 'config', 'settings.json'), 'utf8');
    const { page, context, errors } = await openDelegation();
    await find(page, outside);
    await expect
      .poll(() => page.getByTestId('verify-find-error').textContent())
      .toBe(`${outside} is not in a git repository: verify commands judge a branch, so they need one: use your project's folder.`);
    expect(await card(page).getByLabel('Folder in the repository').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByTestId('verify-found').count()).toBe(0);

    await find(page, 'project/src');
    await expect.poll(() => page.getByTestId('verify-find-error').textContent()).toMatch(/^Type the whole path/);
    await expectAccessible(page);
    expect(await readFile(path.join(world.home, 'config', 'settings.json'), 'utf8')).toBe(before);
    expect(errors).toEqual([]);
    await context.close();
  });
});
