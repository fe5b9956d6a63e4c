/**
 * The Jobs page's kept worktrees (JobWorktrees.svelte, docs/ISOLATION.md "Kept until you decide"), over the loopback
 * host against the real service, the real `claude` CLI and real git: two worktree jobs' folders with their disk, one
 * taken by a merge of the user's, and one button that, after asking, removes that one and keeps the untaken one, saying
 * why; then the rows, the total and the job list's numbers follow. And the page's words for each state, directly.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobList, JobView, KeptWorktree, StartJobRequest } from '../../src-main/contract/index.js';
import { busyWorktrees, cleanupSummary, isRemovable, removeLabel, worktreeSize, worktreeState } from '../../src-renderer/lib/worktrees.js';
import { ScriptedModel, delegateCwd } from '../support/fake-anthropic.js';
import { MODEL } from '../support/delegation.js';
import { UiWorlds, useBrowser, openPage, screenshotOf, expectAccessible } from '../support/ui.js';
import { branches, gitIn, makeRepo } from '../support/git-repo.js';

const m = ScriptedModel.marker;
const JOB_WAIT = { timeout: 45_000, interval: 200 };

const chrome = useBrowser();
const ui = new UiWorlds('ui-test/worktrees');

/** A worktree job whose delegate writes one file in its own worktree with the file tool, then ends. */
async function writingJob(script: string, file: string, content: string, extra: Partial<StartJobRequest> = {}): Promise<JobView> {
  ui.world.model.script(script, [
    { dynamic: (request) => ({ toolUse: { name: 'Write', input: { file_path: path.join(delegateCwd(request), file), content } } }) },
    { text: `Wrote ${file}.` },
  ]);
  const view = await (
    await ui.contract()
  ).call('jobs.start', {
    prompt: `${m(script)} Write ${file}.`,
    cwd: ui.world.project,
    model: MODEL,
    caller: { cwd: ui.world.project },
    waitSeconds: 90,
    ...extra,
  });
  expect(view.job.state).toBe('succeeded');
  return view;
}

describe('the kept worktrees on the Jobs page', () => {
  ui.each();

  it('shows their disk, and removes the taken one and keeps the untaken one in one action, after asking', { timeout: 150_000 }, async () => {
    // Each worktree is a checkout of the repository: 150 kB of it, plus what its delegate wrote.
    await makeRepo(ui.world.project, { 'README.md': '# demo\n', 'data.txt': 'x'.repeat(150_000) });
    await ui.world.startService();
    const kept = (await writingJob('kept', 'kept.txt', 'kept\n')).job;
    const taken = (await writingJob('taken', 'taken.txt', 'y'.repeat(50_000))).job;
    const takenBranch = taken.isolation?.branch ?? '';
    const keptBranch = kept.isolation?.branch ?? '';
    // The user takes one job's work with git, not through the service.
    await gitIn(ui.world.project, ['merge', '--quiet', '--no-edit', takenBranch]);

    const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('jobs'));
    const card = page.getByRole('region', { name: 'Kept worktrees' });
    const rows = card.getByTestId('worktree-row');
    await expect.poll(() => rows.count(), JOB_WAIT).toBe(2);
    expect(await card.getByTestId('worktrees-total').textContent()).toMatch(/^\s*2 worktrees, 350 kB in /);
    const takenRow = card.locator(`[data-testid="worktree-row"][data-worktree="${taken.isolation?.worktree ?? ''}"]`);
    const keptRow = card.locator(`[data-testid="worktree-row"][data-worktree="${kept.isolation?.worktree ?? ''}"]`);
    expect(await takenRow.getByTestId('worktree-state').textContent()).toBe('Taken');
    expect(await takenRow.getByTestId('worktree-meaning').textContent()).toBe('its work is in main (merged): it can go.');
    expect(await takenRow.getByTestId('worktree-size').textContent()).toBe('200 kB');
    expect(await takenRow.getByTestId('worktree-branch').textContent()).toBe(takenBranch);
    expect(await takenRow.getByRole('link').getAttribute('href')).toBe(`#jobs/${taken.id}`);
    expect(await keptRow.getByTestId('worktree-state').textContent()).toBe('Untaken');
    expect(await keptRow.getByTestId('worktree-meaning').textContent()).toContain('some of its work is in no other branch: kept');
    expect(await keptRow.getByTestId('worktree-size').textContent()).toBe('150 kB');
    expect(await keptRow.getByRole('link').getAttribute('href')).toBe(`#jobs/${kept.id}`);
    await expectAccessible(page);
    await screenshotOf(card, 'jobs-worktrees', 'light');

    // The one button asks first; nothing is removed until the answer.
    await card.getByRole('button', { name: 'Remove 1 that can go (200 kB)…' }).click();
    const question = card.getByRole('group', { name: /Remove this worktree and its branch \(200 kB\)\?/ });
    expect(await question.count()).toBe(1);
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Keep them');
    await expectAccessible(page);
    expect(existsSync(taken.isolation?.worktree ?? '')).toBe(true);
    await card.getByRole('button', { name: 'Remove 1 worktree', exact: true }).click();

    const outcome = card.getByTestId('worktrees-outcome');
    await expect.poll(() => outcome.locator('p').textContent(), JOB_WAIT).toBe('Removed 1 worktree, 200 kB freed. Kept 1:');
    expect(await outcome.getByTestId('worktree-kept').textContent()).toBe(
      `${keptBranch}: commits on ${keptBranch} are in no other branch: take them (e.g. \`git merge ${keptBranch}\` in ${ui.world.project}), or throw them away with \`openrouter-delegate discard ${kept.id}\``,
    );
    // The rows and the total follow: the untaken one alone, and nothing left to remove.
    await expect.poll(() => rows.count(), JOB_WAIT).toBe(1);
    expect(await rows.first().getAttribute('data-worktree')).toBe(kept.isolation?.worktree);
    expect(await card.getByTestId('worktrees-total').textContent()).toMatch(/^\s*1 worktree, 150 kB in /);
    expect(await card.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    expect(await card.getByTestId('worktrees-none-removable').isVisible()).toBe(true);
    await expectAccessible(page);

    // On disk and in git: the taken worktree and its branch gone, the untaken ones there.
    expect(existsSync(taken.isolation?.worktree ?? '')).toBe(false);
    expect(existsSync(kept.isolation?.worktree ?? '')).toBe(true);
    expect((await branches(ui.world.project)).sort()).toEqual([keptBranch, 'main'].sort());
    // And the job list's numbers (delegate_list's footer) from the service's survey after the removal.
    await expect
      .poll(async () => ((await (await ui.contract()).call('jobs.list', {})) as JobList).worktrees, JOB_WAIT)
      .toMatchObject({ count: 1, taken: 0, takenBytes: 0, complete: true });
    expect(errors).toEqual([]);
    await context.close();

    // The dark theme, with the untaken one kept.
    const dark = await openPage(chrome.browser, ui.world.pageUrl('jobs'), { theme: 'dark' });
    const darkCard = dark.page.getByRole('region', { name: 'Kept worktrees' });
    await expect.poll(() => darkCard.getByTestId('worktree-row').count(), JOB_WAIT).toBe(1);
    await expectAccessible(dark.page);
    await screenshotOf(darkCard, 'jobs-worktrees', 'dark');
    expect(dark.errors).toEqual([]);
    await dark.context.close();
  });

  it('is accessible in the dark theme with a taken and an untaken worktree, and the question open', { timeout: 150_000 }, async () => {
    await makeRepo(ui.world.project, { 'README.md': '# demo\n' });
    await ui.world.startService();
    const taken = (await writingJob('taken', 'taken.txt', 'taken\n')).job;
    await writingJob('kept', 'kept.txt', 'kept\n');
    await gitIn(ui.world.project, ['merge', '--quiet', '--no-edit', taken.isolation?.branch ?? '']);
    const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('jobs'), { theme: 'dark' });
    const card = page.getByRole('region', { name: 'Kept worktrees' });
    await expect.poll(() => card.getByTestId('worktree-row').count(), JOB_WAIT).toBe(2);
    await expectAccessible(page);
    await card.getByRole('button', { name: /^Remove 1 that can go/ }).click();
    await expectAccessible(page);
    // Escape keeps them.
    await page.keyboard.press('Escape');
    await expect.poll(() => card.getByRole('button', { name: /^Remove 1 that can go/ }).count()).toBe(1);
    expect(existsSync(taken.isolation?.worktree ?? '')).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("the page's words for a kept worktree", () => {
  const base: KeptWorktree = {
    worktree: '/data/worktrees/job_1',
    jobId: 'job_1',
    repo: '/home/user/repo',
    branch: 'delegate/abc',
    state: 'untaken',
    takenBy: null,
    into: null,
    bytes: 1_500_000,
    sizeComplete: true,
  };

  it('says what each state means and whether the button removes it', () => {
    expect(worktreeState({ ...base, state: 'taken', takenBy: 'squashed', into: 'main' })).toEqual({
      label: 'Taken',
      tone: 'ok',
      meaning: 'its work is in main (squashed): it can go.',
    });
    expect(worktreeState({ ...base, state: 'taken', takenBy: 'picked', into: 'dev' }).meaning).toBe(
      'its work is in dev (cherry-picked or rebased): it can go.',
    );
    expect(worktreeState({ ...base, state: 'discarded' })).toMatchObject({ label: 'Discarded', meaning: 'its job was discarded: it can go.' });
    expect(worktreeState(base)).toMatchObject({ label: 'Untaken', tone: 'warn' });
    expect(worktreeState({ ...base, state: 'orphan', jobId: null, takenBy: 'merged', into: 'main' }).meaning).toBe(
      'no job names it any more, and its work is in main (merged): it can go.',
    );
    expect(worktreeState({ ...base, state: 'orphan', jobId: null }).meaning).toBe(
      'no job names it any more, and its branch has work in no other branch: kept.',
    );
    expect(worktreeState({ ...base, state: 'orphan', jobId: null, branch: null, repo: null }).meaning).toMatch(/git does not know it as a worktree: kept/);
  });

  it('offers to remove the taken, discarded and orphans whose work is elsewhere, never the untaken or one a running job uses', () => {
    const taken = { ...base, worktree: '/w/t', state: 'taken' as const, takenBy: 'merged' as const, into: 'main', bytes: 1_200_000_000 };
    const discarded = { ...base, worktree: '/w/d', state: 'discarded' as const, bytes: 34_000_000 };
    const running = { ...taken, worktree: '/w/r' };
    const busy = busyWorktrees({
      conversations: [
        {
          jobs: [
            { state: 'running', isolation: { worktree: '/w/r' } },
            { state: 'succeeded', isolation: { worktree: '/w/t' } },
          ],
        },
      ],
    } as unknown as JobList);
    const removable = [taken, discarded, base, running].filter((w) => isRemovable(w, busy));
    expect(removable).toEqual([taken, discarded]);
    expect(removeLabel(removable)).toBe('Remove 2 that can go (1.2 GB)');
    expect(worktreeSize({ bytes: 1_500_000, sizeComplete: false })).toBe('≥ 1.5 MB');
  });

  it('says what the removal did', () => {
    expect(cleanupSummary({ removed: [], kept: [], freedBytes: 0 })).toBe('Removed nothing.');
    expect(cleanupSummary({ removed: [base, base], kept: [{ ...base, why: 'x' }], freedBytes: 3_000_000 })).toBe('Removed 2 worktrees, 3 MB freed. Kept 1:');
  });
});
