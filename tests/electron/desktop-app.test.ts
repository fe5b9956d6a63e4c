/**
 * The tray app's wiring, with Electron faked at the edge and everything else real (docs/ARCHITECTURE.md §8):
 * the service core in a temp home, real `claude -p` jobs against the fake OpenRouter, the built
 * bridge over stdio. The menu is clicked and the dialogs answered the way a user would.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventName, JobRecord } from '../../src-main/contract/index.js';
import { trayIconFile } from '../../src-main/electron/present/tray.js';
import { newJobRecord } from '../../src-main/core/jobs/record/job-record.js';
import { JobStore } from '../../src-main/core/jobs/record/job-store.js';
import { ServiceHost } from '../../src-main/host/service-host.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import { KEY, MODEL, alive, processesRunning } from '../support/delegation.js';
import { DesktopWorld, ICONS, SOON, iconExists, sleeper } from './desktop-world.js';
import { FakeBrowserWindow, FakeNotification, FakeTray } from './fake-electron.js';
import { jobFields } from '../support/job-fields.js';

let world: DesktopWorld;
beforeEach(() => {
  world = new DesktopWorld();
});
afterEach(async () => {
  await world.stop();
});

const icon = (state: 'idle' | 'running' | 'attention') => path.join(ICONS, trayIconFile(state, 'linux', true));

async function settingsOnDisk(): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(world.locations.settingsFile, 'utf8')) as Record<string, unknown>;
}

describe('starting', () => {
  it('starts hidden in the tray: a tray drawn by the presenter, no window, the service serving', async () => {
    await world.start();
    const app = await world.launchStarted();
    expect(app.tray.image).toBe(icon('idle'));
    expect(iconExists(app.tray.image)).toBe(true);
    expect(app.tray.toolTip).toBe('OpenRouter Delegate — $90.00 left');
    expect(app.tray.item('refreshBalance')?.label).toBe('Refresh balance');
    expect(app.tray.menu?.template[0]?.label).toBe('Balance: $90.00 of $100.00 left');
    expect(FakeBrowserWindow.instances).toEqual([]);
    const client = await IpcClient.connect({ locations: world.locations, clientName: 'test' });
    try {
      expect((await client.call('service.status', {})).host).toBe('electron');
    } finally {
      client.close();
    }
    // One app per home: Electron's lock is keyed by a folder inside the home.
    expect(app.electron.app.paths.get('userData')).toBe(path.join(world.locations.data, 'electron'));
  });

  it('a second launch on the same home hands over: it quits without starting anything', async () => {
    await world.start();
    const second = await world.launch((electron) => (electron.app.lockAvailable = false));
    expect(second.outcome).toBe('second-instance');
    expect(second.electron.app.quits).toBe(1);
    expect(FakeTray.instances).toEqual([]);
    await expect(IpcClient.connect({ locations: world.locations, clientName: 'test' })).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('the first app shows its settings window when a second launch knocks', async () => {
    await world.start();
    const app = await world.launchStarted();
    app.electron.app.emit('second-instance');
    expect(FakeBrowserWindow.instances).toHaveLength(1);
  });

  it('a knock during start-up opens the window once the service is up, not before', async () => {
    await world.start();
    let windowsWhileStarting = -1;
    const app = await world.launch((electron) => {
      electron.app.whenReady = async () => {
        electron.app.emit('second-instance');
        windowsWhileStarting = FakeBrowserWindow.instances.length;
      };
    });
    expect(app.outcome).toBe('started');
    expect(windowsWhileStarting).toBe(0);
    expect(FakeBrowserWindow.instances).toHaveLength(1);
  });

  it('a headless service already serving this home keeps it: the app says what to do and starts nothing', async () => {
    await world.start();
    const headless = new ServiceHost({ locations: world.locations, env: world.env, host: 'headless', log: () => undefined });
    await headless.start();
    try {
      const app = await world.launch();
      expect(app.outcome).toBe('already-running');
      expect(app.logs.join('\n')).toContain('openrouter-delegate stop');
      expect(FakeTray.instances).toEqual([]);
    } finally {
      await headless.stop();
    }
  });

  it('quits when its service is stopped from outside (`openrouter-delegate stop` sends service.stop)', async () => {
    await world.start();
    const app = await world.launchStarted();
    const client = await IpcClient.connect({ locations: world.locations, clientName: 'test' });
    const closed = new Promise<void>((resolve) => client.onClose(resolve));
    expect(await client.call('service.stop', { killJobs: false })).toEqual({ stopping: true, killedJobs: 0 });
    await closed;
    await expect.poll(() => app.electron.app.quits, SOON).toBe(1);
    expect(app.tray.destroyed).toBe(true);
    expect(app.electron.ipcMain.handlers.size).toBe(0);
  });
});

describe('the tray follows the service', () => {
  it('shows a running job (icon, tooltip, menu) and cancels it from its submenu', { timeout: 60_000 }, async () => {
    await world.start();
    const app = await world.launchStarted();
    const started = await world.startJob(app, 'tray-sleepy', sleeper(341));
    const jobId = started.job.id;
    await expect.poll(() => app.tray.image, { timeout: 10_000 }).toBe(icon('running'));
    expect(app.tray.toolTip).toMatch(/1 (running|queued)/);
    expect(app.tray.item(`cancelJob:${jobId}`)?.label).toBe('Cancel');
    await expect.poll(() => processesRunning(['sleep', '341']), { timeout: 30_000, interval: 200 }).toHaveLength(1);
    // No event says "a second passed": while a job runs, its elapsed time is redrawn once a second.
    // (Polled, not slept for: on a loaded machine a second's timer can fire late.)
    const menusBefore = app.tray.menusSet;
    await expect.poll(() => app.tray.menusSet - menusBefore, { timeout: 10_000, interval: 100 }).toBeGreaterThanOrEqual(2);

    app.tray.click(`cancelJob:${jobId}`);
    await expect.poll(() => processesRunning(['sleep', '341']), { timeout: 10_000 }).toEqual([]);
    await expect.poll(() => app.tray.image, SOON).toBe(icon('idle'));
    // …and only then: once the job's late billing is in, nothing is redrawn until the service says something changed.
    const billing = () => app.service.supervisor.list({ limit: 1 }).conversations[0]?.jobs[0]?.billing;
    await expect.poll(billing, { timeout: 15_000 }).not.toBe('pending');
    // The service's last word (the billing) reaches the tray over IPC, on a loaded machine later than the supervisor
    // shows it: wait for half a second without a redraw (a once-a-second ticker still running would leave such a
    // window too, and then fail below), then none may come in the next 1.5 s.
    let quietSince = { count: app.tray.menusSet, at: Date.now() };
    await expect
      .poll(
        () => {
          if (app.tray.menusSet !== quietSince.count) quietSince = { count: app.tray.menusSet, at: Date.now() };
          return Date.now() - quietSince.at;
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBeGreaterThanOrEqual(500);
    const menusIdle = app.tray.menusSet;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(app.tray.menusSet).toBe(menusIdle);
    expect(app.tray.item(`cancelJob:${jobId}`)).toBeUndefined();
    // Cancelled on request is not a failure: no attention.
    expect(app.tray.images).not.toContain(icon('attention'));
  });

  it('kill-all from the menu, once confirmed, kills every real job and what it started', { timeout: 90_000 }, async () => {
    await world.start();
    const app = await world.launchStarted();
    await world.startJob(app, 'kill-a', sleeper(342));
    await world.startJob(app, 'kill-b', sleeper(343));
    await expect
      .poll(async () => [...(await processesRunning(['sleep', '342'])), ...(await processesRunning(['sleep', '343']))], { timeout: 45_000, interval: 200 })
      .toHaveLength(2);
    const claudePids = app.service.supervisor.activeJobs().map((j) => j.pid ?? 0);
    expect(claudePids.every(alive)).toBe(true);
    await expect.poll(() => app.tray.item('killAll')?.label, SOON).toBe('Kill all jobs (2)…');

    // Asked, and answered "Cancel": nothing happens.
    app.tray.click('killAll');
    await expect.poll(() => app.electron.dialog.asked.length, SOON).toBe(1);
    expect(app.electron.dialog.asked[0]?.message).toBe('Kill 2 delegated jobs?');
    expect(await processesRunning(['sleep', '342'])).toHaveLength(1);

    app.electron.dialog.choose(/^Kill/);
    app.tray.click('killAll');
    await expect
      .poll(async () => [...(await processesRunning(['sleep', '342'])), ...(await processesRunning(['sleep', '343']))], { timeout: 15_000 })
      .toEqual([]);
    for (const pid of claudePids) await expect.poll(() => alive(pid), SOON).toBe(false);
    const states = () => app.service.supervisor.list({ limit: 10 }).conversations.flatMap((c) => c.jobs.map((j) => j.state));
    await expect.poll(states, SOON).toEqual(['cancelled', 'cancelled']);
    await expect.poll(() => app.tray.item('killAll'), SOON).toBeUndefined();
  });

  it('a job that fails asks for attention until the user looks at it', { timeout: 60_000 }, async () => {
    await world.start();
    const app = await world.launchStarted();
    const started = await world.startJob(app, 'tray-fail', [{ error: { status: 401 } }]);
    const jobId = started.job.id;
    await expect.poll(() => app.tray.image, { timeout: 45_000 }).toBe(icon('attention'));
    expect(app.tray.toolTip).toContain('a job failed');
    app.tray.click(`openSettings:jobs:${jobId}`);
    expect(FakeBrowserWindow.instances.at(-1)?.url).toMatch(new RegExp(`#jobs/${jobId}$`));
    await expect.poll(() => app.tray.image, SOON).toBe(icon('idle'));
  });

  it('has an icon file for every state, on every platform and bar colour', () => {
    for (const state of ['idle', 'running', 'attention'] as const) {
      for (const [platform, dark] of [
        ['darwin', false],
        ['win32', false],
        ['win32', true],
        ['linux', true],
      ] as const) {
        expect(iconExists(path.join(ICONS, trayIconFile(state, platform, dark))), `${state} ${platform} ${dark}`).toBe(true);
      }
    }
  });
});

describe('notifications', () => {
  it('a finished job produces exactly one notification, and clicking it opens that job', { timeout: 60_000 }, async () => {
    await world.start();
    const app = await world.launchStarted();
    // Snapshots: an in-process listener is handed the supervisor's live record.
    const finalEvents: Array<Pick<JobRecord, 'id' | 'billing'>> = [];
    app.service.onEvent((event: EventName, data: unknown) => {
      const job = (data as { job?: JobRecord }).job;
      if (event === 'job.changed' && job && job.endedAt) finalEvents.push({ id: job.id, billing: job.billing });
    });
    const started = await world.startJob(app, 'tray-quick', [{ text: 'Summary: all good.\nMore details that stay in the result.' }]);
    const jobId = started.job.id;
    // After the end, the job changes again when OpenRouter's billed cost arrives: still one notice.
    await expect.poll(() => finalEvents.filter((j) => j.id === jobId && j.billing !== 'pending').length, { timeout: 45_000 }).toBeGreaterThan(0);
    expect(finalEvents.filter((j) => j.id === jobId && j.billing === 'pending').length).toBeGreaterThan(0);
    await expect.poll(() => FakeNotification.instances.length, SOON).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(FakeNotification.instances).toHaveLength(1);
    const notification = FakeNotification.instances[0] as FakeNotification;
    expect(notification.shown).toBe(true);
    expect(notification.options.title).toBe('Delegated job succeeded');
    expect(notification.options.body).toContain(MODEL);
    expect(notification.options.body).toContain('Summary: all good.');
    expect(notification.options.body).not.toContain('More details');
    expect(notification.options.urgency).toBe('normal');

    notification.click();
    const window = FakeBrowserWindow.instances.at(-1);
    expect(window?.url).toMatch(new RegExp(`#jobs/${jobId}$`));
  });

  it('a low balance alerts once, not on every refresh; the notice opens the account page', { timeout: 30_000 }, async () => {
    await world.start();
    world.fake.addKey(KEY, { limit: 100, limitRemaining: 0.2, usage: 99.8 });
    const app = await world.launchStarted();
    await expect.poll(() => FakeNotification.instances.map((n) => n.options.title), SOON).toEqual(['OpenRouter balance is low']);
    expect(app.tray.image).toBe(icon('attention'));
    const keyReads = () => world.fake.requests.filter((r) => r.path === '/api/v1/key').length;
    for (let i = 0; i < 2; i++) {
      const before = keyReads();
      app.tray.click('refreshBalance');
      await expect.poll(keyReads, SOON).toBe(before + 1);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(FakeNotification.instances).toHaveLength(1);
    FakeNotification.instances[0]?.click();
    expect(FakeBrowserWindow.instances.at(-1)?.url).toMatch(/#account$/);
  });

  it("a day's spend near the daily budget alerts once", async () => {
    await world.start({ budgets: { perJobUsd: 0.5, perDayUsd: 5, reserveUsd: 0.5 } });
    // Earlier today, a job spent $4.50 (as the last run of the app left it on disk).
    const store = new JobStore({ dir: world.locations.jobsDir });
    const id = store.newJobId();
    const now = Date.now();
    await store.create(
      {
        ...newJobRecord(
          id,
          jobFields({ sessionId: crypto.randomUUID(), model: MODEL, cwd: world.project, maxCostUsd: 5, promptPreview: 'big job' }),
          now - 60_000,
        ),
        state: 'succeeded',
        startedAt: new Date(now - 60_000).toISOString(),
        endedAt: new Date(now - 30_000).toISOString(),
        estimatedCostUsd: 4.5,
        billedCostUsd: 4.5,
        billing: 'complete',
      },
      'prompt',
    );
    const app = await world.launchStarted();
    expect(FakeNotification.instances.map((n) => n.options.title)).toEqual(['Daily budget 90% used']);
    // An old job is history, not news: it got no notice of its own.
    expect(app.tray.menu?.template.some((i) => i.label === 'Spent today: $4.50 of $5.00')).toBe(true);
  });
});

describe('the menu changes settings through the service', () => {
  it('the mode radio writes the settings file, and a connected bridge hears tools/list_changed', { timeout: 30_000 }, async () => {
    await world.start({ mode: 'ondemand' });
    const app = await world.launchStarted();
    expect(app.tray.item('setMode:ondemand')?.checked).toBe(true);
    const bridge = await world.bridge();
    expect((await bridge.listTools()).tools).toHaveLength(7);
    const changed = new Promise<void>((resolve) => bridge.setNotificationHandler(ToolListChangedNotificationSchema, async () => resolve()));

    app.tray.click('setMode:off');
    await changed;
    expect((await settingsOnDisk()).mode).toBe('off');
    expect((await bridge.listTools()).tools.map((t) => t.name)).toEqual(['openrouter_models']);
    await expect.poll(() => app.tray.item('setMode:off')?.checked, SOON).toBe(true);
    expect(app.tray.item('setMode:ondemand')?.checked).toBe(false);
    expect(app.tray.toolTip).toContain('delegation off');
  });

  it('start at login and the jobs folder go to Electron', async () => {
    await world.start();
    const app = await world.launchStarted();
    expect(app.tray.item('toggleStartAtLogin')?.checked).toBe(false);
    app.tray.click('toggleStartAtLogin');
    await expect.poll(() => app.tray.item('toggleStartAtLogin')?.checked, SOON).toBe(true);
    expect(app.electron.app.loginItem).toEqual({ openAtLogin: true });
    app.tray.click('openJobsFolder');
    await expect.poll(() => app.electron.shell.openedPaths, SOON).toEqual([world.locations.jobsDir]);
  });
});

describe('quitting with jobs running', () => {
  it('"Keep them running" leaves the job running, and the next start adopts it', { timeout: 90_000 }, async () => {
    await world.start();
    const first = await world.launchStarted();
    const started = await world.startJob(first, 'quit-keep', sleeper(344));
    await expect.poll(() => processesRunning(['sleep', '344']), { timeout: 30_000, interval: 200 }).toHaveLength(1);
    first.electron.dialog.choose(/^Keep them running$/);
    first.tray.click('quit');
    await expect.poll(() => first.electron.app.quits, { timeout: 10_000 }).toBe(1);
    expect(first.electron.dialog.asked.map((q) => q.buttons)).toEqual([['Keep them running', 'Kill them', 'Cancel']]);
    expect(first.electron.dialog.asked[0]?.message).toBe('1 delegated job is still running.');
    expect(first.tray.destroyed).toBe(true);
    expect(await processesRunning(['sleep', '344'])).toHaveLength(1);

    const second = await world.launchStarted();
    expect(second.service.supervisor.activeJobs().map((j) => [j.id, j.state])).toEqual([[started.job.id, 'running']]);
    await expect.poll(() => second.tray.image, SOON).toBe(icon('running'));
  });

  it('"Cancel" changes nothing; "Kill them" kills the jobs, then quits', { timeout: 90_000 }, async () => {
    await world.start();
    const app = await world.launchStarted();
    const started = await world.startJob(app, 'quit-kill', sleeper(345));
    await expect.poll(() => processesRunning(['sleep', '345']), { timeout: 30_000, interval: 200 }).toHaveLength(1);

    app.electron.dialog.choose(/^Cancel$/);
    await app.desktop.quit();
    expect(app.electron.app.quits).toBe(0);
    expect(app.tray.destroyed).toBe(false);

    app.electron.dialog.choose(/^Kill them$/);
    // Cmd-Q or the OS asking: Electron's quit comes through before-quit and gets the same question.
    app.electron.app.quit();
    await expect.poll(() => app.electron.app.quits, { timeout: 15_000 }).toBe(1);
    expect(app.electron.dialog.asked).toHaveLength(2);
    expect(await processesRunning(['sleep', '345'])).toEqual([]);
    const store = new JobStore({ dir: world.locations.jobsDir });
    expect((await store.load(started.job.id)).state).toBe('cancelled');
  });

  it('with no job running, quits without asking', async () => {
    await world.start();
    const app = await world.launchStarted();
    app.tray.click('quit');
    await expect.poll(() => app.electron.app.quits, SOON).toBe(1);
    expect(app.electron.dialog.asked).toEqual([]);
  });
});
