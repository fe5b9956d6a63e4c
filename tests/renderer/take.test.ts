/**
 * Taking a worktree job's work from the Jobs page (JobTake.svelte, docs/ISOLATION.md "Taking the work"), over the
 * loopback host against the real service, the real `claude` CLI and real git: the three ways, each with what it would
 * do; nothing until the confirming button; then the user's branch holds the work as one squash commit of theirs. A
 * branch with files that run code once taken names them, and is taken only once the user says they reviewed them.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobView, StartJobRequest } from '../../src-main/contract/index.js';
import { taskLine } from '../../src-main/core/jobs/supervisor/take.js';
import { ScriptedModel, delegateCwd } from '../support/fake-anthropic.js';
import { MODEL } from '../support/delegation.js';
import { UiWorlds, useBrowser, openPage, screenshotOf } from '../support/ui.js';
import { branches, gitIn, makeRepo, treeOf } from '../support/git-repo.js';

const m = ScriptedModel.marker;
const JOB_WAIT = { timeout: 45_000, interval: 200 };

const chrome = useBrowser();
const ui = new UiWorlds('ui-test/take');

async function startJob(script: string, prompt: string, extra: Partial<StartJobRequest> = {}): Promise<JobView> {
  return (await ui.contract()).call('jobs.start', {
    prompt: `${m(script)} ${prompt}`,
    cwd: ui.world.project,
    model: MODEL,
    allowedTools: ['Bash'],
    caller: { cwd: ui.world.project },
    ...extra,
  });
}

describe('taking a job from the Jobs page', () => {
  ui.each();

  it('shows what each way would do, takes by squash only after the confirming button, and says what it did', async () => {
    const base = await makeRepo(ui.world.project, { 'a.txt': 'one\ntwo\nthree\n' });
    await gitIn(ui.world.project, ['config', 'user.name', 'Page User']);
    await gitIn(ui.world.project, ['config', 'user.email', 'page@example.invalid']);
    await ui.world.startService();
    ui.world.model.script('take', [
      { toolUse: { name: 'Bash', input: { command: "printf 'created\\n' > new.txt && sed -i s/two/TWO/ a.txt", description: 'Edit' } } },
      { text: 'Edited.' },
    ]);
    const started = await startJob('take', 'Edit the files.', { waitSeconds: 90 });
    expect(started.job.state).toBe('succeeded');
    const branch = started.job.isolation?.branch ?? '';
    const subject = taskLine(started.job.promptPreview, started.job.id);

    const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${started.job.id}`));
    await page.getByRole('button', { name: 'Take…', exact: true }).click();
    await expect.poll(() => page.getByTestId('take-squash').textContent(), JOB_WAIT).toBe(`one commit on main, "${subject}"; 2 files, +2 −1`);
    expect(await page.getByTestId('take-merge').textContent()).toBe("fast-forward: main moves to the delegate's 1 commit; 2 files, +2 −1");
    expect(await page.getByTestId('take-rebase').textContent()).toBe("nothing to replay: main fast-forwards to the delegate's 1 commit; 2 files, +2 −1");
    // Choosing a way takes nothing.
    await page.getByLabel('Squash').check();
    expect((await gitIn(ui.world.project, ['rev-parse', 'main'])).trim()).toBe(base);
    await screenshotOf(page.locator('section[aria-labelledby="job-changes"]'), 'jobs-take', 'light');

    await page.getByRole('button', { name: 'Take by squash into main' }).click();
    const said = page.getByTestId('take-result');
    await expect.poll(() => said.textContent(), JOB_WAIT).toContain(`Squashed ${branch} into main: one commit,`);
    expect(await said.textContent()).toContain('so its worktree and branch go at the first prune 30 days after the job ended');
    expect(await gitIn(ui.world.project, ['log', '--format=%an|%s', `${base}..main`])).toBe(`Page User|${subject}\n`);
    expect(await treeOf(ui.world.project)).toEqual({ 'a.txt': 'one\nTWO\nthree\n', 'new.txt': 'created\n' });
    // The delegate's branch stays, with its own commit, until pruning finds it taken.
    expect(await branches(ui.world.project)).toContain(branch);
    // Once taken, the page offers neither another way to take it nor to throw it away (issue 38); the review stays.
    expect(await page.getByTestId('command-merge').count()).toBe(0);
    expect(await page.getByTestId('command-cherry-pick').count()).toBe(0);
    expect(await page.getByTestId('command-review').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Discard…' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('names the files that run code once taken, and takes them only once the user says they reviewed them', async () => {
    const base = await makeRepo(ui.world.project, { 'a.txt': 'one\n' });
    await ui.world.startService();
    ui.world.model.script('hook', [
      { dynamic: (request) => ({ toolUse: { name: 'Write', input: { file_path: path.join(delegateCwd(request), 'conftest.py'), content: 'import os\n' } } }) },
      { text: 'Wrote conftest.py.' },
    ]);
    const started = await startJob('hook', 'Write conftest.py.', { waitSeconds: 90 });
    expect(started.job.state).toBe('succeeded');

    const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${started.job.id}`));
    await expect
      .poll(() => page.getByTestId('changes-runs-code').textContent(), JOB_WAIT)
      .toBe('Runs code when taken: conftest.py (pytest runs it before the tests). Review them before taking.');
    await page.getByRole('button', { name: 'Take…', exact: true }).click();
    await expect
      .poll(() => page.getByTestId('take-runs-code').textContent(), JOB_WAIT)
      .toContain('Runs code on your machine once taken: conftest.py (pytest runs it before the tests).');
    const takeIt = page.getByRole('button', { name: 'Take by merge into main' });
    expect(await takeIt.isDisabled()).toBe(true);
    expect((await gitIn(ui.world.project, ['rev-parse', 'main'])).trim()).toBe(base);
    await page.getByLabel('I have reviewed these files: take them.').check();
    await takeIt.click();
    await expect.poll(() => page.getByTestId('take-result').textContent(), JOB_WAIT).toContain('into main by fast-forward');
    expect(await treeOf(ui.world.project)).toEqual({ 'a.txt': 'one\n', 'conftest.py': 'import os\n' });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("takes a fan-out's other job from its row in the comparison", { timeout: 120_000 }, async () => {
    const base = await makeRepo(ui.world.project, { 'a.txt': 'one\n' });
    await ui.world.startService();
    // The file tool, in each delegate's own worktree: no program to run.
    ui.world.model.script('fan', [
      { dynamic: (request) => ({ toolUse: { name: 'Write', input: { file_path: path.join(delegateCwd(request), 'by.txt'), content: 'by\n' } } }) },
      { text: 'Wrote by.txt.' },
    ]);
    const started = await startJob('fan', 'Write by.txt.', { model: undefined, models: [MODEL, 'qwen/qwen3.7-flash'], waitSeconds: 90 });
    const [first = '', second = ''] = started.group?.jobs.map((j) => j.jobId) ?? [];
    const other = (await (await ui.contract()).call('jobs.status', { jobId: second, waitSeconds: 90 })).job;
    expect(other?.state).toBe('succeeded');
    const branch = other?.isolation?.branch ?? '';

    const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${first}`));
    const take = page.getByRole('button', { name: "Take qwen/qwen3.7-flash's work…" });
    await expect.poll(() => take.count(), JOB_WAIT).toBe(1);
    await take.click();
    const comparison = page.getByRole('region', { name: 'Comparison' });
    await expect
      .poll(() => comparison.getByTestId('take-merge').textContent(), JOB_WAIT)
      .toBe("fast-forward: main moves to the delegate's 1 commit; 1 file, +1 −0");
    await comparison.getByRole('button', { name: 'Take by merge into main' }).click();
    await expect.poll(() => comparison.getByTestId('take-result').textContent(), JOB_WAIT).toContain(`Merged ${branch} into main by fast-forward`);
    expect((await gitIn(ui.world.project, ['rev-parse', 'main'])).trim()).not.toBe(base);
    expect((await gitIn(ui.world.project, ['rev-parse', 'main'])).trim()).toBe((await gitIn(ui.world.project, ['rev-parse', branch])).trim());
    expect(await treeOf(ui.world.project)).toEqual({ 'a.txt': 'one\n', 'by.txt': 'by\n' });
    expect(errors).toEqual([]);
    await context.close();
  });
});
