/**
 * The tray app as a test runs it: the real service core in a temp home (fake OpenRouter playing the
 * model, real `claude -p` jobs, set up like DelegationWorld) inside a DesktopApp whose Electron is
 * the fake one. The service runs in the test's own process, so stopping it needs no CLI.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'vitest';
import type { JobView } from '../../src-main/contract/index.js';
import type { Service } from '../../src-main/core/service/service.js';
import { DesktopApp } from '../../src-main/electron/desktop-app.js';
import { ServiceHost } from '../../src-main/host/service-host.js';
import type { LaunchOutcome } from '../../src-main/electron/desktop-app.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import type { Locations } from '../../src-main/platform/locations.js';
import { BRIDGE, ROOT } from '../support/built.js';
import { KEY, delegationEnv, makeDelegationHome } from '../support/delegation.js';
import type { ScriptStep } from '../support/fake-anthropic.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { FakeTray, fakeElectron } from './fake-electron.js';
import type { FakeElectron } from './fake-electron.js';

export const ICONS = path.join(ROOT, 'resources', 'tray');
/** For expect.poll: what follows an event comes soon, but a loaded machine (the whole suite, 2 workers) is slow. */
export const SOON = { timeout: 15_000, interval: 50 };

/** One tray app: its fake Electron, its hosted service (and the core inside, for the test to inspect), its log. */
export interface RunningApp {
  electron: FakeElectron;
  host: ServiceHost;
  service: Service;
  desktop: DesktopApp;
  logs: string[];
  outcome: LaunchOutcome;
}

export class DesktopWorld {
  readonly fake = new FakeOpenRouter();
  /** OpenRouter's billing record of a generation shows up a second late, as it does for real: a job changes again after it ended. */
  readonly model = new ScriptedModel(this.fake, { apiKey: KEY, generationVisibleAfterMs: 1000 });
  home = '';
  project = '';
  env: NodeJS.ProcessEnv = {};
  private readonly apps: RunningApp[] = [];
  private readonly cleanups: Array<() => Promise<unknown>> = [];

  get locations(): Locations {
    return resolveLocations(this.env);
  }

  /** The home with `settings`, the fake OpenRouter and the key (in OPENROUTER_API_KEY); no app yet. */
  async start(settings: Record<string, unknown> = {}): Promise<void> {
    this.fake.addKey(KEY, { limit: 100, limitRemaining: 90, usage: 10 });
    await this.fake.start();
    this.cleanups.push(
      () => this.fake.stop(),
      async () => this.model.stop(),
    );
    const { home, project, tmp, cleanup } = await makeDelegationHome('ord-tray-', settings);
    this.cleanups.push(cleanup);
    this.home = home;
    this.project = project;
    this.env = delegationEnv(home, this.fake.baseUrl, tmp);
  }

  /** The built MCP bridge over stdio, as Claude Code runs it, on this home. */
  async bridge(): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BRIDGE],
      env: this.env as Record<string, string>,
      cwd: this.project,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'tray-test', version: '1.0.0' });
    await client.connect(transport);
    this.cleanups.push(() => client.close());
    return client;
  }

  /** Launches a tray app on this home, as main.ts does (on Linux, whose panels are dark). */
  async launch(prepare: (electron: FakeElectron) => void = () => undefined): Promise<RunningApp> {
    const electron = fakeElectron();
    prepare(electron);
    const logs: string[] = [];
    const log = (line: string) => logs.push(line);
    const host = new ServiceHost({ locations: this.locations, env: this.env, host: 'electron', log });
    const desktop = new DesktopApp({
      electron,
      service: host,
      paths: { icons: ICONS, preload: '/opt/app/dist/electron/preload.cjs', page: 'app://settings/index.html' },
      platform: 'linux',
      log,
    });
    const app: RunningApp = { electron, host, service: host.service, desktop, logs, outcome: 'started' };
    this.apps.push(app);
    app.outcome = await desktop.launch();
    return app;
  }

  /** Launches an app that must start, and waits for its first balance. */
  async launchStarted(prepare?: (electron: FakeElectron) => void): Promise<RunningApp & { tray: FakeTray }> {
    const app = await this.launch(prepare);
    expect(app.outcome, app.logs.join('\n')).toBe('started');
    const tray = FakeTray.instances.at(-1);
    if (!tray) throw new Error('no tray');
    await expect.poll(() => tray.toolTip, { timeout: 10_000 }).toMatch(/left/);
    return { ...app, tray };
  }

  /** Starts a real delegated job (the real `claude -p`) that plays `steps`. */
  async startJob(app: RunningApp, script: string, steps: readonly ScriptStep[]): Promise<JobView> {
    this.model.script(script, steps);
    return (await app.service.dispatch(
      'jobs.start',
      { prompt: `${ScriptedModel.marker(script)} go`, allowedTools: ['Bash'], caller: { cwd: this.project } },
      { client: 'test' },
    )) as JobView;
  }

  /**
   * Stops every app, killing their jobs; then one more service re-adopts and kills any job an app
   * left running on purpose (or a failed test left behind); then the bridges, the fake and the home go.
   */
  async stop(): Promise<void> {
    for (const app of this.apps.splice(0)) {
      if (app.outcome === 'started') await app.desktop.shutdown({ killJobs: true });
    }
    if (this.home) {
      const sweeper = new ServiceHost({ locations: this.locations, env: this.env, host: 'headless', log: () => undefined });
      await sweeper.start().then(
        () => sweeper.stop({ killJobs: true }),
        () => undefined,
      );
    }
    while (this.cleanups.length) await this.cleanups.pop()?.();
  }
}

/** A job running `sh -c "sleep <seconds>"` (Claude Code refuses a bare sleep). */
export function sleeper(seconds: number): ScriptStep[] {
  return [{ toolUse: { name: 'Bash', input: { command: `sh -c "sleep ${seconds}"`, description: 'Wait a long time' } } }];
}

export function iconExists(file: string): boolean {
  return existsSync(file);
}
