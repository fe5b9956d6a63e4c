/**
 * `openrouter-delegate start` (what `npm start` runs): the tray app where it is installed and a display
 * exists, else the headless service in the foreground, saying why. The tray app is a stand-in here
 * (tests/support/fake-checkout.ts): the real Electron binary cannot be downloaded on these machines.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, ROOT, runCli, runProcess } from '../support/built.js';
import { useE2eHomes } from '../support/e2e-homes.js';
import { makeFakeCheckout } from '../support/fake-checkout.js';

const POSIX = process.platform !== 'win32';

const { newHome, onCleanup } = useE2eHomes();

/** Whether this checkout has a downloaded Electron binary (read as electron's own index.js does, without loading it). */
function electronInstalled(): boolean {
  const electron = path.join(ROOT, 'node_modules', 'electron');
  const pathTxt = path.join(electron, 'path.txt');
  return existsSync(pathTxt) && existsSync(path.join(electron, 'dist', readFileSync(pathTxt, 'utf8').trim()));
}

interface Foreground {
  stderr: () => string;
  exited: Promise<number | null>;
  stop: () => void;
}

/** Runs `start` in the foreground until `marker` appears on its stderr. */
function startForeground(cli: string, env: NodeJS.ProcessEnv, marker: string): Promise<Foreground> {
  const child = spawn(process.execPath, [cli, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let stderr = '';
  onCleanup(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes(marker)) resolve({ stderr: () => stderr, exited, stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`start exited with ${code} before saying "${marker}": ${stderr}`)));
  });
}

interface StatusJson {
  running: boolean;
  service?: { host: string; pid: number };
}

/** `status --json`, retried until the service answers (bounded). */
async function statusOnceRunning(env: NodeJS.ProcessEnv): Promise<StatusJson> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const result = await runCli(['status', '--json'], env);
    if (result.code === 0) return JSON.parse(result.stdout) as StatusJson;
    if (Date.now() > deadline) throw new Error(`the service never answered: ${result.stdout}${result.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('openrouter-delegate start', () => {
  it.runIf(process.platform === 'linux')(
    'with no display (and here no Electron runtime) says which, and runs the headless service in the foreground',
    async () => {
      const { env } = await newHome();
      const run = await startForeground(CLI, env, 'Ctrl-C stops it');
      expect(run.stderr()).toContain('Not starting the tray app: ');
      expect(run.stderr()).toContain('no display (DISPLAY and WAYLAND_DISPLAY are unset)');
      expect(run.stderr().includes('Electron runtime not installed (')).toBe(!electronInstalled());
      expect(run.stderr()).toContain('Starting the headless service instead. Ctrl-C stops it.');
      expect((await statusOnceRunning(env)).service?.host).toBe('headless');
      run.stop();
      expect(await run.exited).toBe(0);
    },
  );

  it('says so when a service already runs, and starts nothing', async () => {
    const { env } = await newHome();
    const first = await startForeground(CLI, env, 'Ctrl-C stops it');
    const { service } = await statusOnceRunning(env);
    const second = await runCli(['start'], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`The service is already running (headless, pid ${service?.pid}).`);
    first.stop();
    expect(await first.exited).toBe(0);
  });

  it.runIf(POSIX)('starts the installed tray app on the checkout, detached, and returns once its service answers', async () => {
    const checkout = await makeFakeCheckout('serves');
    onCleanup(checkout.cleanup);
    const { home, env } = await newHome({ DISPLAY: ':99', ELECTRON_RUN_AS_NODE: '1' });
    const result = await runProcess(process.execPath, [checkout.cli, 'start'], { env });
    expect(result.stderr).toContain(`Starting the tray app (${path.join(checkout.root, 'node_modules', 'electron', 'dist', 'electron')}; log: `);
    expect(result.code).toBe(0);
    const status = await statusOnceRunning(env);
    expect(result.stdout).toContain(`The tray app is running (service pid ${status.service?.pid}) and takes over from here`);
    expect(await readFile(checkout.argsFile(home), 'utf8')).toBe(`${checkout.root}\n`);
    expect(await readFile(checkout.runAsNodeFile(home), 'utf8')).toBe('unset\n');
  });

  it.runIf(POSIX)('when the tray app exits before its service answers, says so and runs the headless service instead', async () => {
    const checkout = await makeFakeCheckout('exits');
    onCleanup(checkout.cleanup);
    const { home, env } = await newHome({ DISPLAY: ':99' });
    const run = await startForeground(checkout.cli, env, 'Ctrl-C stops it');
    const log = path.join(home, 'logs', 'service.log');
    expect(run.stderr()).toContain(`The tray app exited with code 3 before its service answered (see ${log}).`);
    expect(run.stderr()).toContain('Starting the headless service instead. Ctrl-C stops it.');
    expect(await readFile(log, 'utf8')).toContain('fake electron: cannot open the display');
    expect((await statusOnceRunning(env)).service?.host).toBe('headless');
    run.stop();
    expect(await run.exited).toBe(0);
  });
});
