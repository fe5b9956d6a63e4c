/**
 * The Jobs page over the loopback host, against the real service, the real `claude` CLI and the fake
 * OpenRouter playing the model: real delegated jobs, started through the contract, listed live, followed
 * in detail while their tail grows, cancelled and killed from the page.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { GatewayRequest, JobRecord, JobView, StartJobRequest } from '../../src-main/contract/index.js';
import { newJobRecord } from '../../src-main/core/jobs/record/job-record.js';
import { JobStore } from '../../src-main/core/jobs/record/job-store.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import { formatMs, formatTime, formatUsd } from '../../src-renderer/lib/format.js';
import {
  billedCostText,
  changesSummary,
  listBlocks,
  placeOf,
  diffMark,
  jobDurationSeconds,
  memberChangesText,
  memberCostText,
  memberTokensText,
  mergeCommand,
  spendTone,
  tailLine,
} from '../../src-renderer/lib/jobs.js';
import { countRequests, requestRow, requestsSummary } from '../../src-renderer/lib/requests.js';
import { ScriptedModel, toolResults, type ModelRequest, type TextStep, type ToolUseStep } from '../support/fake-anthropic.js';
import { MODEL, alive, processesRunning } from '../support/delegation.js';
import { jobFields } from '../support/job-fields.js';
import { UiWorlds, useBrowser, openPage, screenshot, screenshotOf, expectAccessible } from '../support/ui.js';
import { branches, makeRepo } from '../support/git-repo.js';

const m = ScriptedModel.marker;
/** Bounds for waits on a real `claude` process (it starts in about a second; CI machines are slower). */
const JOB_WAIT = { timeout: 45_000, interval: 200 };

const chrome = useBrowser();
const ui = new UiWorlds('ui-test/jobs');

/** Starts a real delegated job in the project, its model answering from `script`. */
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

async function jobRecord(jobId: string): Promise<JobRecord> {
  return (await (await ui.contract()).call('jobs.status', { jobId })).job;
}

/** The file the 'grow' job's second step waits for (in the project, which the test removes). */
const growGate = () => path.join(ui.world.project, '.gate-grow');
/** The file the 'watched' job's Bash call waits for. */
const watchGate = () => path.join(ui.world.project, '.gate-watched');
/** The file every model of the 'fan' fan-out waits for before it writes. */
const fanGate = () => path.join(ui.world.project, '.gate-fan');
const jobRow = (page: Page, jobId: string) => page.locator(`[data-testid="job-row"][data-job-id="${jobId}"]`);
const tailEntries = (page: Page) => page.getByTestId('tail-entry');
const tailTexts = (page: Page) => tailEntries(page).allTextContents();
const requestsSection = (page: Page) => page.getByRole('region', { name: 'Requests', exact: true });
const requestRows = (page: Page) => page.getByTestId('request-row');

/** The job's request log as the service keeps it. */
async function requestLog(jobId: string): Promise<GatewayRequest[]> {
  return (await (await ui.contract()).call('jobs.requests', { jobId })).requests;
}

/** Every cell of one request row, by its test id. */
async function rowCells(page: Page, index: number): Promise<Record<string, string | null>> {
  const row = requestRows(page).nth(index);
  const cells: Record<string, string | null> = {};
  for (const id of ['time', 'outcome', 'provider', 'tokens', 'cache', 'cost', 'first-byte', 'duration']) {
    cells[id] = (await row.getByTestId(`request-${id}`).textContent())?.trim() ?? null;
  }
  for (const id of ['model', 'note', 'lowered', 'cache-detail']) {
    const cell = row.getByTestId(`request-${id}`);
    cells[id] = (await cell.count()) ? ((await cell.textContent())?.trim() ?? null) : null;
  }
  return cells;
}

describe('the Jobs page', () => {
  ui.each();

  describe('with no jobs', () => {
    for (const theme of ['light', 'dark'] as const) {
      it(`says there are none yet and how delegation starts, with today's spend against the budget (${theme})`, async () => {
        await ui.world.startService();
        const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('jobs'), { theme });
        const empty = page.getByRole('region', { name: 'No jobs yet' });
        await expect.poll(() => empty.isVisible()).toBe(true);
        expect(await empty.textContent()).toContain('delegate_start');
        expect(await page.getByTestId('spent-today').textContent()).toBe('$0.00');
        expect(await page.getByTestId('daily-budget').textContent()).toContain('of $5.00 daily budget');
        expect(await page.getByRole('button', { name: 'Kill all…' }).isDisabled()).toBe(true);
        await screenshot(page, 'jobs-empty', theme);
        await expectAccessible(page);
        expect(errors).toEqual([]);
        await context.close();
      });
    }

    it('warns about a job folder it cannot read, naming the folder and the problem', async () => {
      const broken = path.join(resolveLocations(ui.world.env).jobsDir, 'job_20260101T000000Z_aaaaaa');
      await mkdir(broken, { recursive: true });
      await writeFile(path.join(broken, 'job.json'), '{ not json');
      await ui.world.startService();
      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('jobs'));
      const warning = page.getByRole('alert').filter({ hasText: 'A job folder could not be read.' });
      await expect.poll(() => warning.count()).toBe(1);
      const item = warning.getByTestId('unreadable-job');
      expect(await item.locator('.path').textContent()).toBe(broken);
      expect(await item.textContent()).toContain('job.json is not valid JSON');
      await screenshot(page, 'jobs-unreadable', 'light');
      expect(errors).toEqual([]);
      await context.close();
    });

    it('says so when a job link names no job', async () => {
      await ui.world.startService();
      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('jobs/job_20260101T000000Z_bbbbbb'));
      const alert = page.getByRole('alert');
      await expect.poll(() => alert.textContent()).toContain('There is no job job_20260101T000000Z_bbbbbb');
      expect(await page.getByRole('link', { name: 'See all jobs' }).getAttribute('href')).toBe('#jobs');
      expect(errors).toEqual([]);
      await context.close();
    });
  });

  describe('a running job', () => {
    it('is listed under its conversation, and its detail shows the tail growing while it runs', { timeout: 90_000 }, async () => {
      await ui.world.startService();
      ui.world.model.script('first', [{ text: 'First turn done.' }]);
      ui.world.model.script('grow', [
        { text: 'Looking at the project first.', toolUse: { name: 'Bash', input: { command: 'echo step-one', description: 'First step' } } },
        // Held until the test has seen the tail as it was: then it must grow.
        {
          toolUse: { name: 'Bash', input: { command: `sh -c 'while [ ! -e ${growGate()} ]; do sleep 0.1; done; echo step-two'`, description: 'Second step' } },
        },
        { toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 401"', description: 'Keep working' } } },
      ]);
      // Two turns of one conversation: a finished one, then a running follow-up.
      const first = await startJob('first', 'Say hello.', { waitSeconds: 90 });
      expect(first.job.state).toBe('succeeded');
      const followup = await (
        await ui.contract()
      ).call('jobs.followup', {
        sessionId: first.job.sessionId,
        prompt: `${m('grow')} Now do the work in three steps.`,
        caller: { cwd: ui.world.project },
      });
      const jobId = followup.job.id;

      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('jobs'));
      const conversation = page.locator(`[data-testid="conversation"][data-session-id="${first.job.sessionId}"]`);
      await expect.poll(() => conversation.getByTestId('job-row').count(), JOB_WAIT).toBe(2);
      // Newest first, both under the one conversation.
      expect(await conversation.getByTestId('job-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job-id')))).toEqual([jobId, first.job.id]);
      await expect.poll(() => jobRow(page, jobId).getByTestId('job-state').textContent(), JOB_WAIT).toBe('Running');
      expect(await jobRow(page, first.job.id).getByTestId('job-state').textContent()).toBe('Succeeded');
      expect(await jobRow(page, jobId).getByTestId('job-model').textContent()).toBe(MODEL);
      expect(await page.getByTestId('running-count').textContent()).toBe('1');

      // The job is a real link, reached and followed by keyboard.
      const link = jobRow(page, jobId).getByRole('link');
      expect(await link.getAttribute('href')).toBe(`#jobs/${jobId}`);
      await link.focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.url()).toMatch(new RegExp(`#jobs/${jobId}$`));
      // The address changes first; the page follows on the hashchange event.
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Job ${jobId}`);

      // A tool call appears first; more entries follow while the job runs, with no reload of the page.
      await expect.poll(async () => (await tailTexts(page)).some((t) => t.includes('echo step-one')), JOB_WAIT).toBe(true);
      const early = await tailEntries(page).count();
      // Its requests so far (the call that ran echo, the one now held at the gate), read again on each job.changed.
      await expect.poll(() => requestRows(page).count(), JOB_WAIT).toBe(2);
      await writeFile(growGate(), 'open\n');
      await expect.poll(async () => (await tailTexts(page)).some((t) => t.includes('sleep 401')), JOB_WAIT).toBe(true);
      await expect.poll(() => requestRows(page).count(), JOB_WAIT).toBe(3);
      expect(await page.getByTestId('requests-summary').textContent()).toBe('3 requests, all ok');
      expect(await tailEntries(page).count()).toBeGreaterThan(early);
      const texts = await tailTexts(page);
      expect(texts.some((t) => t.includes('step-two'))).toBe(true);
      expect(texts.some((t) => t.includes('Looking at the project first.'))).toBe(true);
      expect(await page.locator('[data-testid="tail-entry"][data-kind="call"]').count()).toBeGreaterThanOrEqual(3);
      expect(await page.getByTestId('detail-model').textContent()).toBe(MODEL);
      expect(await page.getByTestId('detail-permission').textContent()).toBe(followup.job.permissionMode);
      expect(await page.getByTestId('tail-live').isVisible()).toBe(true);
      expect(await page.getByTestId('file-stream').textContent()).toBe(followup.files.stream);

      await page.goto(ui.world.pageUrl('jobs'));
      await expect.poll(() => jobRow(page, jobId).getByTestId('job-state').textContent()).toBe('Running');
      await screenshot(page, 'jobs', 'light');
      await expectAccessible(page);
      expect(errors).toEqual([]);
      await context.close();

      // The list in the dark theme, and in a small window.
      for (const [name, options] of [
        ['jobs', { theme: 'dark' }],
        ['jobs-narrow', { width: 560, height: 700 }],
      ] as const) {
        const other = await openPage(chrome.browser, ui.world.pageUrl('jobs'), options);
        await expect.poll(() => jobRow(other.page, jobId).count()).toBe(1);
        await screenshot(other.page, name, 'theme' in options ? options.theme : 'light');
        await expectAccessible(other.page);
        expect(other.errors).toEqual([]);
        await other.context.close();
      }
    });

    it("marks a sub-agent's entries in the tail and highlights a failed tool call", async () => {
      await ui.world.startService();
      ui.world.model.script('lead', [
        { toolUse: { name: 'Agent', input: { description: 'Check the tests', prompt: `Run the checks ${m('helper')}`, subagent_type: 'general-purpose' } } },
        { toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 405"', description: 'Keep working' } } },
      ]);
      ui.world.model.script('helper', [
        { toolUse: { name: 'Bash', input: { command: 'echo from-helper', description: 'Echo' } } },
        // Inside the project: a pre-approved Read reaches nothing outside the job's folders.
        { toolUse: { name: 'Read', input: { file_path: `${ui.world.project}/missing-notes.txt` } } },
        { text: 'The helper is done: one file was missing.' },
      ]);
      // Sub-agents come with Claude Code's full tool set only.
      await (await ui.contract()).call('settings.update', { patch: { delegateProfile: 'full' } });
      const { job } = await startJob('lead', 'Check the project with a helper.', { allowedTools: ['Bash', 'Agent', 'Read'], profile: 'full' });

      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${job.id}`));
      const failed = page.locator('[data-testid="tail-entry"][data-kind="error"]');
      await expect.poll(() => failed.count(), JOB_WAIT).toBe(1);
      expect(await failed.textContent()).toContain('File does not exist');
      expect(await failed.textContent()).toContain('Tool error');
      expect(await failed.getAttribute('data-subagent')).toBe('true');
      await expect.poll(async () => (await tailTexts(page)).some((t) => t.includes('sleep 405')), JOB_WAIT).toBe(true);
      const fromHelper = page.locator('[data-testid="tail-entry"][data-subagent="true"]');
      expect(await fromHelper.count()).toBeGreaterThanOrEqual(4);
      for (const text of await fromHelper.allTextContents()) expect(text).toContain('sub-agent');
      const leadsCall = page.locator('[data-testid="tail-entry"][data-subagent="false"]').filter({ hasText: 'sleep 405' });
      expect(await leadsCall.count()).toBe(1);
      expect(await leadsCall.textContent()).not.toContain('sub-agent');
      await screenshot(page, 'jobs-detail', 'light');
      expect(errors).toEqual([]);
      await context.close();

      for (const [name, options] of [
        ['jobs-detail', { theme: 'dark' }],
        ['jobs-detail-narrow', { width: 560, height: 700 }],
      ] as const) {
        const other = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${job.id}`), options);
        await expect.poll(async () => (await tailTexts(other.page)).some((t) => t.includes('sleep 405'))).toBe(true);
        await screenshot(other.page, name, 'theme' in options ? options.theme : 'light');
        expect(other.errors).toEqual([]);
        await other.context.close();
      }
    });

    it('is cancelled from its page: it ends `cancelled` and its whole process tree is gone', async () => {
      await ui.world.startService();
      ui.world.model.script('sleepy', [{ toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 402"', description: 'Wait a long time' } } }]);
      const { job } = await startJob('sleepy', 'Wait.');
      await expect.poll(() => processesRunning(['sleep', '402']), JOB_WAIT).toHaveLength(1);
      const sleepers = await processesRunning(['sleep', '402']);
      const claudePid = (await jobRecord(job.id)).pid ?? 0;
      expect(alive(claudePid)).toBe(true);

      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${job.id}`));
      const cancel = page.getByRole('button', { name: 'Cancel job' });
      await expect.poll(() => cancel.isVisible(), JOB_WAIT).toBe(true);
      await cancel.click();
      await expect.poll(() => page.getByTestId('job-state').textContent(), JOB_WAIT).toBe('Cancelled');
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'The job is cancelled' }).count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Cancel job' }).count()).toBe(0);
      expect(await page.getByTestId('end-reason').textContent()).toContain('Cancelled on request');

      expect((await jobRecord(job.id)).state).toBe('cancelled');
      expect(alive(claudePid)).toBe(false);
      for (const pid of sleepers) expect(alive(pid)).toBe(false);
      expect(await processesRunning(['sleep', '402'])).toEqual([]);
      // The tail's refresh stopped with the job: no error appeared while the page stayed open.
      expect(errors).toEqual([]);
      await context.close();
    });
  });

  describe('a job watched until it ends', () => {
    it('shows its answer and billed cost without a reload, then stops re-reading it', async () => {
      await ui.world.startService();
      ui.world.model.script('watched', [
        { toolUse: { name: 'Bash', input: { command: `sh -c 'while [ ! -e ${watchGate()} ]; do sleep 0.1; done; echo forty-two'`, description: 'Think' } } },
        { text: 'Watched to the end: 42.' },
      ]);
      const { job } = await startJob('watched', 'Think, then answer.');
      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${job.id}`));
      const statusReads: string[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/api/call/jobs.status')) statusReads.push(request.url());
      });

      // While it runs (held at its Bash call), its tail is read again and again (it grows without an event).
      await expect.poll(() => statusReads.length, JOB_WAIT).toBeGreaterThanOrEqual(2);
      await writeFile(watchGate(), 'open\n');
      await expect.poll(() => page.getByTestId('result-text').textContent(), JOB_WAIT).toBe('Watched to the end: 42.');
      expect(await page.getByTestId('job-state').textContent()).toBe('Succeeded');
      // OpenRouter's charge arrives after the end, with a job.changed event: the page follows it.
      await expect.poll(async () => (await jobRecord(job.id)).billedCostUsd, JOB_WAIT).not.toBeNull();
      const record = await jobRecord(job.id);
      await expect.poll(() => page.getByTestId('detail-billed-cost').textContent(), JOB_WAIT).toBe(formatUsd(record.billedCostUsd));
      // Ended and billed: nothing more can change, so nothing more is read.
      const reads = statusReads.length;
      await page.waitForTimeout(2500);
      expect(statusReads.length).toBe(reads);
      expect(errors).toEqual([]);
      await context.close();
    });
  });

  describe('a finished job', () => {
    it('shows its answer, its tokens and what the cache served, both its estimated and its billed cost (each labelled), and its files to copy', async () => {
      await ui.world.startService();
      // Turn 1 writes the prompt cache, turn 2 reads it back (as a provider reports it).
      ui.world.model.script('answer', [
        {
          toolUse: { name: 'Bash', input: { command: 'echo forty-$((40+2))', description: 'Compute' } },
          usage: { input_tokens: 300, cache_creation_input_tokens: 6_000, output_tokens: 40 },
        },
        { text: 'The answer is 42.', usage: { input_tokens: 200, cache_read_input_tokens: 6_000, cache_creation_input_tokens: 400, output_tokens: 12 } },
      ]);
      const started = await startJob('answer', 'What is 40+2? Use Bash.', { waitSeconds: 90 });
      expect(started.job.state).toBe('succeeded');
      const billed = ui.world.model.generations.filter((g) => g.script === 'answer').reduce((sum, g) => sum + g.costUsd, 0);
      // OpenRouter reports the charge a little after the job ends; the page shows it once it is known.
      await expect.poll(async () => (await jobRecord(started.job.id)).billedCostUsd, JOB_WAIT).not.toBeNull();
      const record = await jobRecord(started.job.id);
      expect(record.billedCostUsd).toBeCloseTo(billed, 9);

      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${started.job.id}`));
      await expect.poll(() => page.getByTestId('result-text').textContent(), JOB_WAIT).toBe('The answer is 42.');
      expect(await page.getByTestId('job-state').textContent()).toBe('Succeeded');
      expect(await page.getByTestId('detail-estimated-cost').textContent()).toBe(formatUsd(record.estimatedCostUsd));
      expect(await page.getByTestId('detail-billed-cost').textContent()).toBe(formatUsd(record.billedCostUsd));
      const stats = page.locator('.stat .label');
      expect(await stats.allTextContents()).toEqual(expect.arrayContaining(['Estimated cost', 'Billed cost']));
      expect(record.usage).toEqual({ inputTokens: 500, outputTokens: 52, cacheReadTokens: 6_000, cacheWriteTokens: 6_400 });
      expect(await page.getByTestId('tokens').textContent()).toBe('12.9k in / 52 out; 47% of input from cache (6k read, 6.4k written)');
      expect((await tailTexts(page)).some((t) => t.includes('forty-42'))).toBe(true);
      expect(await page.getByRole('button', { name: 'Cancel job' }).count()).toBe(0);
      await screenshot(page, 'jobs-finished', 'light');

      // Its files on disk, each path copyable.
      expect(await page.getByTestId('file-result').textContent()).toBe(started.files.result);
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.getByRole('button', { name: 'Copy the path of answer' }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Copied the path of answer.' }).count()).toBe(1);
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(started.files.result);

      // The list shows the same two figures, under their own headings.
      await page.getByRole('link', { name: 'Jobs', exact: true }).first().click();
      const row = jobRow(page, started.job.id);
      await expect.poll(() => row.getByTestId('billed-cost').textContent()).toBe(formatUsd(record.billedCostUsd));
      expect(await row.getByTestId('estimated-cost').textContent()).toBe(formatUsd(record.estimatedCostUsd));
      expect(await page.getByRole('columnheader').allTextContents()).toEqual(expect.arrayContaining(['Estimated cost', 'Billed cost']));
      // And the listed jobs' share of input served from the cache.
      expect(await page.getByTestId('cache-share').textContent()).toBe('47%');
      expect(await page.getByTestId('cache-tokens').textContent()).toBe('6k read, 6.4k written');
      expect(errors).toEqual([]);
      await context.close();
    });
  });

  describe('a fan-out', () => {
    const MODELS = [MODEL, 'qwen/qwen3.7-flash', 'upstage/solar-pro4'];

    // Three delegates, each running its Bash in the sandbox, and a browser: more than the default 30 s on a loaded machine.
    it('shows one comparison, a row per model with its branch, following the jobs as they end, in both themes and narrow', { timeout: 120_000 }, async () => {
      await makeRepo(ui.world.project, { 'a.txt': 'one\n' });
      await ui.world.startService();
      // Held at the gate, so the page sees them running first: the comparison must follow their job.changed events.
      const write: ToolUseStep = {
        toolUse: {
          name: 'Bash',
          input: { command: `sh -c 'while [ ! -e ${fanGate()} ]; do sleep 0.1; done; printf "by\\n" > by.txt'`, description: 'Write' },
        },
      };
      // Three sandboxes over one repository's .git can trip over each other's empty mount files, and a command then
      // fails to start (docs/ISOLATION.md, "The sandbox"); the delegate sees bwrap's error and runs it again, as a model would.
      const again = (request: ModelRequest): TextStep | ToolUseStep =>
        toolResults(request).at(-1)?.text.includes('bwrap: ') ? write : { text: 'Wrote by.txt.' };
      ui.world.model.script('fan', [write, { dynamic: again }, { dynamic: again }, { text: 'Wrote by.txt.' }]);
      const started = await (
        await ui.contract()
      ).call('jobs.start', {
        prompt: `${m('fan')} Write by.txt.`,
        cwd: ui.world.project,
        models: MODELS,
        allowedTools: ['Bash'],
        caller: { cwd: ui.world.project },
      });
      const ids = started.group?.jobs.map((j) => j.jobId) ?? [];
      expect(ids).toHaveLength(3);
      const [first, second] = ids as [string, string];

      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${second}`));
      const rows = page.getByTestId('comparison-row');
      await expect.poll(() => rows.count(), JOB_WAIT).toBe(3);
      expect(await page.getByRole('region', { name: 'Comparison' }).count()).toBe(1);
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job-id')))).toEqual(ids);
      expect(await rows.locator('th[scope="row"]').allTextContents()).toEqual([MODELS[0], `${MODELS[1]} (this job)`, MODELS[2]]);
      expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('aria-current')))).toEqual([null, 'true', null]);
      const comparison = page.getByRole('region', { name: 'Comparison' });
      expect(await comparison.getByRole('columnheader').allTextContents()).toEqual([
        'Model',
        'State',
        'Cost',
        'Tokens in / out',
        'Time',
        'Files changed',
        'Branch',
      ]);
      await expect.poll(() => rows.getByTestId('comparison-changes').allTextContents()).toEqual(['—', '—', '—']);

      await writeFile(fanGate(), 'open\n');
      await expect.poll(() => rows.getByTestId('job-state').allTextContents(), JOB_WAIT).toEqual(['Succeeded', 'Succeeded', 'Succeeded']);
      await expect.poll(() => rows.getByTestId('comparison-changes').allTextContents(), JOB_WAIT).toEqual(['1 file, +1 −0', '1 file, +1 −0', '1 file, +1 −0']);
      const records = await Promise.all(ids.map(jobRecord));
      const branchNames = records.map((r) => r.isolation?.branch ?? '');
      expect(new Set(branchNames).size).toBe(3);
      expect(await rows.getByTestId('comparison-branch').allTextContents()).toEqual(branchNames);
      expect((await branches(ui.world.project)).sort()).toEqual(['main', ...branchNames].sort());

      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.getByRole('button', { name: `Copy ${mergeCommand(branchNames[2] ?? '')}` }).click();
      await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(`git merge ${branchNames[2]}`);

      // Each row leads to its job, where that row is the marked one.
      await rows.nth(0).getByRole('link', { name: MODELS[0] }).click();
      await expect.poll(() => page.locator('h1').textContent()).toBe(`Job ${first}`);
      await expect.poll(() => rows.nth(0).getAttribute('aria-current'), JOB_WAIT).toBe('true');
      expect(await rows.nth(1).getByRole('link', { name: MODELS[1] }).getAttribute('href')).toBe(`#jobs/${second}`);
      expect(errors).toEqual([]);
      await context.close();

      for (const theme of ['light', 'dark'] as const) {
        const other = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${second}`), { theme });
        await expect
          .poll(() => other.page.getByTestId('comparison-changes').allTextContents(), JOB_WAIT)
          .toEqual(['1 file, +1 −0', '1 file, +1 −0', '1 file, +1 −0']);
        await screenshotOf(other.page.locator('section[aria-labelledby="job-comparison"]'), 'jobs-comparison', theme);
        expect(other.errors).toEqual([]);
        await other.context.close();
      }
      // The job list shows the fan-out as one card under the user's repository, a row per model with its branch.
      const listed = await openPage(chrome.browser, ui.world.pageUrl('jobs'));
      const card = listed.page.getByTestId('fanout');
      await expect.poll(() => card.getByTestId('job-row').count(), JOB_WAIT).toBe(3);
      expect(await listed.page.getByTestId('conversation').count()).toBe(0);
      expect((await card.getByTestId('job-branch').allTextContents()).sort()).toEqual([...branchNames].sort());
      expect((await card.getByTestId('job-place').textContent())?.replace(/\s+/g, ' ').trim()).toBe(`in ${ui.world.project}, a branch per model`);
      expect(await card.getByTestId('fanout-compare').getAttribute('href')).toBe(`#jobs/${first}`);
      expect(listed.errors).toEqual([]);
      await listed.context.close();

      const narrow = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${second}`), { width: 420, height: 900 });
      await expect.poll(() => narrow.page.getByTestId('comparison-row').count(), JOB_WAIT).toBe(3);
      expect(await narrow.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      expect(await narrow.page.getByTestId('comparison-branch').first().isVisible()).toBe(true);
      await screenshotOf(narrow.page.locator('section[aria-labelledby="job-comparison"]'), 'jobs-comparison-narrow', 'light');
      expect(narrow.errors).toEqual([]);
      await narrow.context.close();
    });
  });

  describe("a worktree job's changes", () => {
    // Two themes, each checked by axe, and a real delegate: more than the default 30 s on a loaded machine.
    it(
      'shows each file with its added and removed lines in both themes, copies the merge command, and discards only after asking',
      { timeout: 90_000 },
      async () => {
        await makeRepo(ui.world.project, { 'a.txt': 'one\ntwo\nthree\n', 'old.txt': 'to be deleted\n' });
        await ui.world.startService();
        ui.world.model.script('changes', [
          { toolUse: { name: 'Bash', input: { command: "printf 'created\\n' > new.txt && sed -i s/two/TWO/ a.txt && rm old.txt", description: 'Edit' } } },
          { text: 'Edited.' },
        ]);
        const started = await startJob('changes', 'Edit the files.', { waitSeconds: 90 });
        expect(started.job.state).toBe('succeeded');
        const branch = started.job.isolation?.branch ?? '';
        const result = await (await ui.contract()).call('jobs.result', { jobId: started.job.id });
        const base = result.changes?.baseShort ?? '';

        for (const theme of ['light', 'dark'] as const) {
          const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${started.job.id}`), { theme });
          await expect.poll(() => page.getByTestId('diff-file').count(), JOB_WAIT).toBe(3);
          expect(await page.getByTestId('changes-summary').textContent()).toBe(`Branch ${branch} (from ${base}): 3 files changed, +2 −2.`);
          const a = page.getByTestId('diff-file').filter({ hasText: 'a.txt' });
          expect(await a.locator('summary').textContent()).toMatch(/a\.txt\s*\+1\s*−1/);
          expect(await a.locator('.line.del').allTextContents()).toEqual(['−two']);
          expect(await a.locator('.line.add').allTextContents()).toEqual(['+TWO']);
          expect(await a.locator('.line.ctx').allTextContents()).toEqual(['one', 'three']);
          expect(await page.getByTestId('diff-file').filter({ hasText: 'old.txt' }).locator('.line.del').allTextContents()).toEqual(['−to be deleted']);
          await screenshotOf(page.locator('section[aria-labelledby="job-changes"]'), 'jobs-changes', theme);
          // A finished worktree job's whole page: its details, activity log, changes and actions.
          await expectAccessible(page);
          expect(errors).toEqual([]);
          await context.close();
        }

        const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${started.job.id}`));
        await expect.poll(() => page.getByTestId('diff-file').count(), JOB_WAIT).toBe(3);
        expect(await page.getByTestId('command-merge').textContent()).toBe(`git merge ${branch}`);
        await context.grantPermissions(['clipboard-read', 'clipboard-write']);
        await page.getByRole('button', { name: 'Copy the merge command' }).click();
        await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(`git merge ${branch}`);

        // Discard asks first; keeping it changes nothing.
        await page.getByRole('button', { name: 'Discard…' }).click();
        await page.getByRole('button', { name: 'Keep it' }).click();
        expect(await branches(ui.world.project)).toContain(branch);
        await page.getByRole('button', { name: 'Discard…' }).click();
        await page.getByRole('button', { name: 'Discard the work' }).click();
        await expect.poll(() => page.getByTestId('changes-fate').textContent(), JOB_WAIT).toContain('was discarded');
        expect(await branches(ui.world.project)).toEqual(['main']);
        expect((await jobRecord(started.job.id)).isolation?.worktreeState).toBe('discarded');
        expect(errors).toEqual([]);
        await context.close();
      },
    );
  });

  describe('a failed job', () => {
    it('says why it failed, highlighted, and shows what it wrote last as such, not as an answer', async () => {
      await ui.world.startService();
      ui.world.model.script('broke', [{ error: { status: 402 } }]);
      const started = await startJob('broke', 'Try anyway.', { waitSeconds: 90 });
      expect(started.job.state).toBe('failed');

      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${started.job.id}`));
      await expect.poll(() => page.getByTestId('job-state').textContent(), JOB_WAIT).toBe('Failed');
      const reason = page.getByTestId('end-reason');
      expect(await reason.textContent()).toContain('out of credits (402)');
      expect(await reason.getAttribute('class')).toContain('fail');
      const output = page.getByRole('region', { name: 'Last output' });
      await expect.poll(() => output.textContent()).toContain('API Error: 402');
      expect(await output.textContent()).toContain('not a finished answer');
      expect(await page.getByRole('heading', { name: 'Answer', exact: true }).count()).toBe(0);
      expect(await page.locator('[data-testid="tail-entry"][data-kind="error"]').count()).toBeGreaterThanOrEqual(1);
      // OpenRouter's refusal is in the request log too, marked, with what it answered.
      const log = await requestLog(started.job.id);
      expect(log.length).toBeGreaterThanOrEqual(1);
      await expect.poll(() => requestRows(page).count()).toBe(log.length);
      expect(await rowCells(page, 0)).toMatchObject({ outcome: 'Error 402', note: 'OpenRouter answered 402' });
      expect(await requestRows(page).first().getAttribute('data-tone')).toBe('fail');
      await screenshot(page, 'jobs-failed', 'light');
      expect(errors).toEqual([]);
      await context.close();
    });
  });

  describe('the request log', () => {
    it('lists each request of a finished job with its figures: when, who served it, tokens, cache, cost and timings', async () => {
      await ui.world.startService();
      ui.world.model.script('logged', [
        {
          toolUse: { name: 'Bash', input: { command: 'echo logged', description: 'Log' } },
          usage: { input_tokens: 300, cache_creation_input_tokens: 6_000, output_tokens: 40 },
          provider: 'DeepInfra',
        },
        // OpenRouter may name another model than the one asked for: that row says so.
        {
          text: 'Logged.',
          usage: { input_tokens: 200, cache_read_input_tokens: 6_000, cache_creation_input_tokens: 400, output_tokens: 12 },
          provider: 'Chutes',
          model: 'deepseek/deepseek-v4-flash',
        },
      ]);
      // A cap small enough that the gateway lowers max_tokens (Claude Code asks for 32,000) to what it pays for.
      const started = await startJob('logged', 'Log it.', { waitSeconds: 90, maxCostUsd: 0.004 });
      expect(started.job.state).toBe('succeeded');
      const log = await requestLog(started.job.id);
      expect(log).toHaveLength(2);
      expect(started.job.requests).toEqual({ total: 2, failed: 0, refused: 0, clamped: 2 });

      for (const theme of ['light', 'dark'] as const) {
        const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${started.job.id}`), { theme });
        await expect.poll(() => requestRows(page).count(), JOB_WAIT).toBe(2);
        expect(await page.getByTestId('requests-summary').textContent()).toBe('2 requests: 2 with max_tokens lowered');
        const [first, second] = log;
        expect(await rowCells(page, 0)).toEqual({
          time: formatTime(first?.at),
          outcome: 'OK',
          provider: 'DeepInfra',
          model: null,
          note: null,
          lowered: `max_tokens lowered from 32,000 to ${first?.maxTokens?.toLocaleString('en-US')}`,
          tokens: '6.3k / 40',
          cache: '0%',
          'cache-detail': '0 read, 6k written',
          cost: formatUsd(first?.costUsd),
          'first-byte': formatMs(first?.firstByteMs),
          duration: formatMs(first?.durationMs),
        });
        expect(await rowCells(page, 1)).toEqual({
          time: formatTime(second?.at),
          outcome: 'OK',
          provider: 'Chutes',
          model: 'deepseek/deepseek-v4-flash',
          note: null,
          lowered: `max_tokens lowered from 32,000 to ${second?.maxTokens?.toLocaleString('en-US')}`,
          tokens: '6.6k / 12',
          cache: '91%',
          'cache-detail': '6k read, 400 written',
          cost: formatUsd(second?.costUsd),
          'first-byte': formatMs(second?.firstByteMs),
          duration: formatMs(second?.durationMs),
        });
        // The figures are the gateway's own: priced, timed, and lowered below what was asked.
        for (const request of log) {
          expect(request.costUsd).toBeGreaterThan(0);
          expect(request.firstByteMs).not.toBeNull();
          expect(request.maxTokens).toBeLessThan(32_000);
        }
        expect(await page.getByRole('columnheader').allTextContents()).toEqual(
          expect.arrayContaining(['Sent', 'Outcome', 'Served by', 'Tokens in / out', 'From cache', 'Cost', 'First byte', 'Took']),
        );
        expect(await requestsSection(page).getByRole('rowheader').count()).toBe(2);
        await screenshotOf(requestsSection(page), 'jobs-requests', theme);
        expect(errors).toEqual([]);
        await context.close();
      }

      // In a small window each request becomes a block of labelled lines: nothing runs off the side.
      const narrow = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${started.job.id}`), { width: 420, height: 800 });
      await expect.poll(() => requestRows(narrow.page).count(), JOB_WAIT).toBe(2);
      expect(await narrow.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      expect(await narrow.page.getByTestId('request-tokens').first().isVisible()).toBe(true);
      await screenshotOf(requestsSection(narrow.page), 'jobs-requests-narrow', 'light');
      expect(narrow.errors).toEqual([]);
      await narrow.context.close();
    });

    it('shows the request a cap refused, marked, with the reason', async () => {
      await ui.world.startService();
      ui.world.model.script('capped', [
        // $0.0168 of a $0.02 cap: the next prompt, as large again, cannot fit in what is left.
        { toolUse: { name: 'Bash', input: { command: 'echo spent', description: 'Spend' } }, usage: { input_tokens: 120_000, output_tokens: 20 } },
        { text: 'never asked for' },
      ]);
      const started = await startJob('capped', 'Spend.', { waitSeconds: 90, maxCostUsd: 0.02 });
      expect(started.job.state).toBe('budget_exceeded');
      const log = await requestLog(started.job.id);
      expect(log.map((r) => r.outcome)).toEqual(['ok', 'refused']);
      const note = log[1]?.note ?? '';
      expect(note).toMatch(/^budget reached: \$0\.0168 of the job's \$0\.02 spent or committed; the next request/);

      for (const theme of ['light', 'dark'] as const) {
        const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${started.job.id}`), { theme });
        await expect.poll(() => requestRows(page).count(), JOB_WAIT).toBe(2);
        expect(await page.getByTestId('requests-summary').textContent()).toBe('2 requests: 1 refused by the cap');
        const refused = requestRows(page).nth(1);
        expect(await refused.getAttribute('data-tone')).toBe('fail');
        expect(await rowCells(page, 1)).toMatchObject({ outcome: 'Refused', note, provider: '—', tokens: '—', cost: '$0.00', 'first-byte': '—' });
        expect(await refused.getByRole('cell').first().getAttribute('title')).toBe(note);
        expect(await rowCells(page, 0)).toMatchObject({ outcome: 'OK', note: null, tokens: '120k / 20' });
        expect(await requestRows(page).first().getAttribute('data-tone')).toBe('ok');
        await screenshotOf(requestsSection(page), 'jobs-requests-refused', theme);
        expect(errors).toEqual([]);
        await context.close();
      }
    });

    it('says so for a job that ran before requests went through the gateway', async () => {
      const store = new JobStore({ dir: resolveLocations(ui.world.env).jobsDir });
      const id = store.newJobId();
      const record = newJobRecord(id, jobFields({ cwd: ui.world.project, promptPreview: 'An older job' }), Date.now() - 60_000);
      await store.create(record, 'An older job');
      const ended = new Date().toISOString();
      await store.write({ ...record, state: 'succeeded', startedAt: record.createdAt, endedAt: ended, exitCode: 0 });
      await ui.world.startService();
      expect((await jobRecord(id)).requests).toBeUndefined();

      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${id}`));
      await expect.poll(() => page.getByTestId('no-requests').textContent(), JOB_WAIT).toContain('No requests through the gateway.');
      expect(await requestRows(page).count()).toBe(0);
      expect(await page.getByTestId('requests-summary').count()).toBe(0);
      expect(errors).toEqual([]);
      await context.close();
    });
  });

  describe("a job's verify commands", () => {
    /** A finished job written straight to the store, with what its verify commands found. */
    async function storedJob(promptPreview: string, extra: Partial<JobRecord> = {}): Promise<JobRecord> {
      const store = new JobStore({ dir: resolveLocations(ui.world.env).jobsDir });
      const record = newJobRecord(store.newJobId(), jobFields({ cwd: ui.world.project, promptPreview, sessionId: randomUUID() }), Date.now() - 60_000);
      await store.create(record, promptPreview);
      const ended = { ...record, state: 'succeeded' as const, startedAt: record.createdAt, endedAt: new Date().toISOString(), exitCode: 0, ...extra };
      await store.write(ended);
      return ended;
    }
    const run = { signal: null, timedOut: false, tests: null, testsBefore: null } as const;

    it("shows each command passed or failed in words, a failure's output behind a disclosure, the flags and the fix round, linked", async () => {
      const job = await storedJob('A verified job', {
        verify: {
          commands: ['npm run lint', 'npm test'],
          fixRoundsLeft: 0,
          saved: false,
          round: 0,
          outcome: 'failed',
          note: 'Its branch changes package-lock.json: the commands ran on the installed dependencies.',
          runs: [
            { ...run, command: 'npm run lint', ok: true, exitCode: 0, ms: 3100, tail: 'lint ok' },
            { ...run, command: 'npm test', ok: false, exitCode: 1, ms: 4100, tail: 'FAIL tests/a.test.ts\n<b>expected 42, got 43</b>\n' },
          ],
          flags: ['package.json script "test" changed'],
          fixJobId: 'job_fixround1',
        },
      });
      await ui.world.startService();

      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${job.id}`));
      const section = page.getByRole('region', { name: 'Verify commands' });
      await expect.poll(() => section.getByTestId('verify-lead').textContent(), JOB_WAIT).toBe('1 of 2 passed, on a clean checkout of its branch.');
      const rows = section.getByTestId('verify-run');
      expect((await rows.allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim())).toEqual([
        '✓ Passed npm run lint 3.1 s',
        "✗ Failed npm test exit 1, 4.1 s Its output's last lines: “<b>expected 42, got 43</b>”",
      ]);
      // The output is text: markup in it is shown, never made.
      expect(await section.locator('b').count()).toBe(0);
      await expect.poll(() => section.getByTestId('verify-tail').isVisible()).toBe(false);
      await section.getByText("Its output's last lines").click();
      expect(await section.getByTestId('verify-tail').textContent()).toBe('FAIL tests/a.test.ts\n<b>expected 42, got 43</b>\n');
      expect(await section.getByTestId('verify-flags').innerText()).toContain('package.json script "test" changed');
      expect(await section.getByTestId('verify-note').textContent()).toBe(
        'Its branch changes package-lock.json: the commands ran on the installed dependencies.',
      );
      expect(await section.getByRole('link', { name: 'job_fixround1' }).getAttribute('href')).toBe('#jobs/job_fixround1');
      await expectAccessible(page);
      await screenshotOf(section, 'jobs-verify', 'light');
      expect(errors).toEqual([]);
      await context.close();
    });

    it('ranks a fan-out by them: a Verify column, the best marked, and Take best opening the Take flow for its turn', async () => {
      const verify = { commands: ['npm test'], fixRoundsLeft: 0, saved: false, round: 0, note: null, flags: [], fixJobId: null };
      const passed = await storedJob('Fan out', {
        model: 'vendor/passes',
        groupId: 'grp_verify',
        verify: { ...verify, outcome: 'passed', runs: [{ ...run, command: 'npm test', ok: true, exitCode: 0, ms: 1200, tail: '' }] },
      });
      const failed = await storedJob('Fan out', {
        model: 'vendor/fails',
        groupId: 'grp_verify',
        verify: { ...verify, outcome: 'failed', runs: [{ ...run, command: 'npm test', ok: false, exitCode: 1, ms: 500, tail: 'nope' }] },
      });
      await ui.world.startService();

      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl(`jobs/${failed.id}`));
      const comparison = page.getByRole('region', { name: 'Comparison' });
      await expect.poll(() => comparison.getByTestId('comparison-verify').allTextContents(), JOB_WAIT).toEqual(['✓ 1/1', '✗ 0/1']);
      expect(await comparison.getByRole('columnheader', { name: 'Verify' }).count()).toBe(1);
      expect(await comparison.getByTestId('comparison-row').first().getAttribute('data-job-id')).toBe(passed.id);
      expect(await comparison.getByTestId('comparison-row').first().getByTestId('comparison-best').textContent()).toBe('Best');
      expect(await comparison.getByTestId('comparison-best').count()).toBe(1);
      await expectAccessible(page);
      await comparison.getByRole('button', { name: 'Take best…' }).click();
      // The Take flow of the best member's turn (here one that ran in place, so it says it cannot be taken).
      await expect.poll(() => comparison.getByTestId('take-refused').textContent(), JOB_WAIT).toContain(`Job ${passed.id} worked in`);
      expect(errors).toEqual([]);
      await context.close();
    });
  });

  describe('Kill all', () => {
    it('asks inline with the number of active jobs, and on confirmation cancels every one of them', async () => {
      await ui.world.startService();
      ui.world.model.script('busy-a', [{ toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 403"', description: 'Busy' } } }]);
      ui.world.model.script('busy-b', [{ toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 404"', description: 'Busy' } } }]);
      const a = await startJob('busy-a', 'Be busy.');
      const b = await startJob('busy-b', 'Be busy too.');
      await expect.poll(async () => (await processesRunning(['sleep', '403'])).length + (await processesRunning(['sleep', '404'])).length, JOB_WAIT).toBe(2);

      const { page, context, errors } = await openPage(chrome.browser, ui.world.pageUrl('jobs'));
      await expect.poll(() => page.getByTestId('running-count').textContent(), JOB_WAIT).toBe('2');

      // Asked first; keeping them changes nothing.
      await page.getByRole('button', { name: 'Kill all…' }).click();
      const question = page.getByRole('group', { name: /Cancel all 2 active jobs/ });
      await expect.poll(() => question.isVisible()).toBe(true);
      expect(await page.locator(':focus').textContent()).toBe('Keep them');
      await screenshot(page, 'jobs-kill-all', 'light');
      await page.getByRole('button', { name: 'Keep them' }).click();
      expect(await question.count()).toBe(0);
      expect(await processesRunning(['sleep', '403'])).toHaveLength(1);
      expect((await jobRecord(a.job.id)).state).toBe('running');

      await page.getByRole('button', { name: 'Kill all…' }).click();
      await page.getByRole('button', { name: 'Kill 2 jobs' }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Cancelled 2 jobs' }).count(), JOB_WAIT).toBe(1);
      for (const id of [a.job.id, b.job.id]) {
        expect((await jobRecord(id)).state).toBe('cancelled');
        await expect.poll(() => jobRow(page, id).getByTestId('job-state').textContent()).toBe('Cancelled');
      }
      expect(await processesRunning(['sleep', '403'])).toEqual([]);
      expect(await processesRunning(['sleep', '404'])).toEqual([]);
      await expect.poll(() => page.getByTestId('running-count').textContent()).toBe('0');
      expect(await page.getByRole('button', { name: 'Kill all…' }).isDisabled()).toBe(true);
      expect(errors).toEqual([]);
      await context.close();
    });
  });
});

describe('how a job is presented (pure)', () => {
  it("sums a branch's changes up in one sentence, and marks diff lines without colour", () => {
    const changes = {
      repo: '/r',
      branch: 'delegate/abc123',
      baseCommit: 'x',
      baseShort: '1a2b3c4',
      headCommit: 'y',
      baseDirty: false,
      files: [],
      totalFiles: 1,
      added: 3,
      removed: 0,
      commands: { diff: '', merge: '', cherryPick: '' },
      runsCode: [],
      worktree: null,
    };
    expect(changesSummary(changes)).toBe('Branch delegate/abc123 (from 1a2b3c4): 1 file changed, +3 −0.');
    expect(changesSummary({ ...changes, totalFiles: 0, added: 0 })).toBe('Branch delegate/abc123 (from 1a2b3c4): no changes.');
    expect([diffMark('add'), diffMark('del'), diffMark('ctx'), diffMark('hunk')]).toEqual(['+', '−', '', '']);
  });

  it("sums a fan-out member up for its comparison row: money, tokens, its branch's changes and how to take it", () => {
    const usage = { inputTokens: 1_200, outputTokens: 950, cacheReadTokens: 38_100, cacheWriteTokens: 2_000 };
    expect(memberCostText({ billedCostUsd: 0.0042, estimatedCostUsd: 0.005 })).toBe('$0.0042');
    expect(memberCostText({ billedCostUsd: null, estimatedCostUsd: 0.05 })).toBe('$0.05 est.');
    expect(memberTokensText({ usage })).toBe('41.3k in / 950 out');
    const runsCode: string[] = [];
    expect(memberChangesText({ branch: 'delegate/a', changes: { files: 2, added: 5, removed: 1 }, runsCode })).toBe('2 files, +5 −1');
    expect(memberChangesText({ branch: 'delegate/a', changes: { files: 2, added: 5, removed: 1 }, runsCode: ['.envrc', 'package.json'] })).toBe(
      '2 files, +5 −1; runs code when taken: .envrc, package.json',
    );
    expect(memberChangesText({ branch: 'delegate/a', changes: { files: 0, added: 0, removed: 0 }, runsCode })).toBe('no changes');
    expect(memberChangesText({ branch: 'delegate/a', changes: null, runsCode })).toBe('—');
    expect(memberChangesText({ branch: null, changes: null, runsCode })).toBe('—');
    expect(mergeCommand('delegate/a')).toBe('git merge delegate/a');
  });

  it("lists a worktree job under the user's repository and its branch, and a fan-out's conversations as one card", () => {
    const base = newJobRecord('j1', jobFields({ cwd: '/home/u/.local/share/ord/worktrees/j1' }), Date.parse('2026-12-01T10:00:00Z'));
    const isolation = {
      mode: 'worktree' as const,
      note: null,
      repo: '/home/u/project',
      worktree: '/home/u/.local/share/ord/worktrees/j1',
      gitDir: null,
      branch: 'delegate/j1',
      baseCommit: 'abc',
      baseDirty: false,
      worktreeState: 'present' as const,
      savedCommit: null,
      headCommit: null,
      changes: null,
      problem: null,
    };
    expect(placeOf({ ...base, isolation })).toEqual({ folder: '/home/u/project', branch: 'delegate/j1' });
    expect(placeOf({ ...base, cwd: '/home/u/project', isolation: { ...isolation, mode: 'none', repo: null, worktree: null, branch: null } })).toEqual({
      folder: '/home/u/project',
      branch: null,
    });
    expect(placeOf({ ...base, cwd: '/srv/x', isolation: undefined })).toEqual({ folder: '/srv/x', branch: null });

    const conversation = (sessionId: string, id: string, createdAt: string, costUsd: number, groupId?: string) => ({
      sessionId,
      model: 'm',
      cwd: '/p',
      jobs: [{ ...base, id, sessionId, createdAt }],
      costUsd,
      ...(groupId ? { groupId } : {}),
    });
    const blocks = listBlocks([
      conversation('s-new', 'j9', '2026-12-01T12:00:00Z', 0.5),
      conversation('s-b', 'j3', '2026-12-01T11:00:01Z', 0.25, 'g1'),
      conversation('s-a', 'j2', '2026-12-01T11:00:00Z', 0.125, 'g1'),
      conversation('s-old', 'j1', '2026-12-01T09:00:00Z', 1),
    ]);
    expect(blocks.map((b) => b.kind)).toEqual(['conversation', 'fanout', 'conversation']);
    const fanout = blocks[1];
    if (fanout?.kind !== 'fanout') throw new Error('expected the fan-out card second');
    expect(fanout.members.map((c) => c.sessionId)).toEqual(['s-b', 's-a']);
    expect(fanout.costUsd).toBe(0.375);
    // The comparison link opens the fan-out's first job.
    expect(fanout.firstJobId).toBe('j2');
  });

  it('names a tool call once, marks sub-agent lines, and shows failed results as errors', () => {
    expect(tailLine({ kind: 'tool_call', tool: 'Bash', text: 'Bash echo hi' })).toMatchObject({
      label: 'Tool call',
      kind: 'call',
      tool: 'Bash',
      text: 'echo hi',
      subagent: false,
    });
    expect(tailLine({ kind: 'tool_result', tool: 'Read', text: 'EISDIR', isError: true, subagent: true })).toMatchObject({
      label: 'Tool error',
      kind: 'error',
      subagent: true,
    });
    expect(tailLine({ kind: 'text', text: 'Done.' })).toMatchObject({ label: 'Said', kind: 'text', tool: null });
    expect(tailLine({ kind: 'notice', text: 'Rate limited', isError: true })).toMatchObject({ label: 'Error', kind: 'error' });
  });

  it('shows the billed cost only as OpenRouter reported it, and says why when it has not', () => {
    expect(billedCostText({ billedCostUsd: 0.0042, billing: 'complete' })).toBe('$0.0042');
    expect(billedCostText({ billedCostUsd: 0.0042, billing: 'partial' })).toBe('$0.0042 (partial)');
    expect(billedCostText({ billedCostUsd: null, billing: 'pending' })).toBe('pending');
    expect(billedCostText({ billedCostUsd: null, billing: 'unavailable' })).toBe('unavailable');
  });

  it('counts a running job up to now, a finished one to its end, and a queued one not at all', () => {
    const now = Date.parse('2026-01-01T00:10:00Z');
    expect(jobDurationSeconds({ startedAt: '2026-01-01T00:00:00Z', endedAt: null }, now)).toBe(600);
    expect(jobDurationSeconds({ startedAt: '2026-01-01T00:00:00Z', endedAt: '2026-01-01T00:03:12Z' }, now)).toBe(192);
    expect(jobDurationSeconds({ startedAt: null, endedAt: null }, now)).toBeNull();
  });

  const request: GatewayRequest = {
    id: 'r1',
    at: '2026-11-30T12:00:05.000Z',
    model: MODEL,
    provider: null,
    generationId: 'gen-1',
    status: 200,
    outcome: 'ok',
    usage: { inputTokens: 1_200, outputTokens: 950, cacheReadTokens: 38_100, cacheWriteTokens: 2_000 },
    costUsd: 0.0042,
    ceilingUsd: 0.05,
    maxTokens: 32_000,
    maxTokensAsked: null,
    firstByteMs: 850,
    durationMs: 12_345,
    note: null,
  };

  it("shows a request's figures, and its model only when it is not the job's", () => {
    expect(requestRow(request, MODEL)).toEqual({
      time: formatTime(request.at),
      model: null,
      provider: '—',
      outcome: 'OK',
      tone: 'ok',
      note: null,
      lowered: null,
      tokens: '41.3k / 950',
      cache: '92%',
      cacheDetail: '38.1k read, 2k written',
      cost: '$0.0042',
      firstByte: '850 ms',
      duration: '12 s',
    });
    expect(requestRow({ ...request, model: 'other/model', provider: 'DeepInfra' }, MODEL)).toMatchObject({ model: 'other/model', provider: 'DeepInfra' });
    const plain = { ...request, usage: { ...request.usage, cacheReadTokens: 0, cacheWriteTokens: 0 } };
    expect(requestRow(plain, MODEL)).toMatchObject({ tokens: '1.2k / 950', cache: '—', cacheDetail: null });
  });

  it('marks refusals and errors with their reason, and says when max_tokens was lowered', () => {
    const refused = {
      ...request,
      status: 402,
      outcome: 'refused' as const,
      usage: { ...request.usage, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    };
    expect(requestRow({ ...refused, costUsd: 0, firstByteMs: null, note: 'budget reached' }, MODEL)).toMatchObject({
      outcome: 'Refused',
      tone: 'fail',
      note: 'budget reached',
      tokens: '—',
      cache: '—',
      firstByte: '—',
    });
    expect(requestRow({ ...request, status: 429, outcome: 'upstream_error', note: 'OpenRouter answered 429' }, MODEL)).toMatchObject({
      outcome: 'Error 429',
      tone: 'fail',
      note: 'OpenRouter answered 429',
    });
    // An error inside an answer that began with 200.
    expect(requestRow({ ...request, outcome: 'upstream_error', note: 'Overloaded' }, MODEL)).toMatchObject({ outcome: 'Error', tone: 'fail' });
    expect(requestRow({ ...request, status: 0, outcome: 'aborted', note: 'the delegate hung up mid-answer' }, MODEL)).toMatchObject({
      outcome: 'Aborted',
      tone: 'warn',
    });
    expect(requestRow({ ...request, outcome: 'broken', note: 'OpenRouter broke off the answer' }, MODEL)).toMatchObject({
      outcome: 'Broken off',
      tone: 'fail',
    });
    expect(requestRow({ ...request, status: 0, outcome: 'pending' }, MODEL)).toMatchObject({ outcome: 'Under way', tone: 'warn' });
    expect(requestRow({ ...request, status: 0, outcome: 'interrupted', note: 'the service stopped before this request ended' }, MODEL)).toMatchObject({
      outcome: 'Interrupted',
      tone: 'warn',
    });
    expect(requestRow({ ...request, maxTokens: 14_100, maxTokensAsked: 32_000 }, MODEL).lowered).toBe('max_tokens lowered from 32,000 to 14,100');
  });

  it('sums the log up in one line, naming only what went wrong', () => {
    expect(requestsSummary({ total: 0, failed: 0, refused: 0, clamped: 0 })).toBeNull();
    expect(requestsSummary({ total: 1, failed: 0, refused: 0, clamped: 0 })).toBe('1 request, ok');
    expect(requestsSummary({ total: 7, failed: 0, refused: 0, clamped: 0 })).toBe('7 requests, all ok');
    expect(requestsSummary({ total: 7, failed: 2, refused: 1, clamped: 1 })).toBe('7 requests: 2 failed, 1 refused by the cap, 1 with max_tokens lowered');
    const log = [request, { ...request, outcome: 'refused' as const }, { ...request, outcome: 'broken' as const, maxTokensAsked: 32_000 }];
    expect(countRequests(log)).toEqual({ total: 3, failed: 1, refused: 1, clamped: 1 });
  });

  it('warns from 80% of the daily budget and fails once it is reached', () => {
    expect(spendTone(1, 5)).toBe('ok');
    expect(spendTone(4, 5)).toBe('warn');
    expect(spendTone(5, 5)).toBe('fail');
  });
});
