/**
 * What the bridge starts when no service answers, as Claude Code would see it: the tray app where it is
 * installed and a display exists, else the headless service; and it says why on its stderr. The tray
 * app is a stand-in (tests/support/fake-checkout.ts): the real Electron binary cannot be downloaded here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BRIDGE, ROOT, runCli } from '../support/built.js';
import { useE2eHomes } from '../support/e2e-homes.js';
import { makeFakeCheckout } from '../support/fake-checkout.js';

const POSIX = process.platform !== 'win32';

const { newHome, onCleanup, connectBridge } = useE2eHomes();

async function serviceHost(env: NodeJS.ProcessEnv): Promise<{ host: string; pid: number } | undefined> {
  const status = JSON.parse((await runCli(['status', '--json'], env)).stdout) as { service?: { host: string; pid: number } };
  return status.service;
}

function electronInstalled(): boolean {
  const electron = path.join(ROOT, 'node_modules', 'electron');
  const pathTxt = path.join(electron, 'path.txt');
  return existsSync(pathTxt) && existsSync(path.join(electron, 'dist', readFileSync(pathTxt, 'utf8').trim()));
}

describe('the bridge starts a service when none answers', () => {
  it.runIf(process.platform === 'linux')('without a display (and here without the Electron runtime): the headless service, saying why on stderr', async () => {
    const { home, env } = await newHome();
    const { client, stderr } = await connectBridge(env, BRIDGE);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    const line =
      stderr()
        .split('\n')
        .find((l) => l.includes('no service answered')) ?? '';
    expect(line).toMatch(/^\[openrouter-delegate-mcp\] no service answered; starting the headless service, not the tray app: /);
    expect(line).toContain('no display (DISPLAY and WAYLAND_DISPLAY are unset)');
    expect(line.includes('Electron runtime not installed (')).toBe(!electronInstalled());
    expect(line).toContain(`(log: ${path.join(home, 'logs', 'service.log')})`);
    expect((await serviceHost(env))?.host).toBe('headless');
  });

  it.runIf(POSIX)('with the tray app installed and a display: starts the app detached and waits for its socket', async () => {
    const checkout = await makeFakeCheckout('serves');
    onCleanup(checkout.cleanup);
    const { home, env } = await newHome({ DISPLAY: ':99' });
    const { client, stderr } = await connectBridge(env, checkout.bridge);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    expect(stderr()).toContain(
      `no service answered; starting the tray app (${path.join(checkout.root, 'node_modules', 'electron', 'dist', 'electron')}; log: `,
    );
    expect(stderr()).not.toContain('headless');
    expect(await readFile(checkout.argsFile(home), 'utf8')).toBe(`${checkout.root}\n`);
    // The stand-in app outlives the bridge, as the real one does.
    const before = await serviceHost(env);
    await client.close();
    expect((await serviceHost(env))?.pid).toBe(before?.pid);
  });

  it.runIf(POSIX)('when the tray app exits before its socket answers: the headless service instead, saying so', async () => {
    const checkout = await makeFakeCheckout('exits');
    onCleanup(checkout.cleanup);
    const { env } = await newHome({ WAYLAND_DISPLAY: 'wayland-9' });
    const { client, stderr } = await connectBridge(env, checkout.bridge);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    expect(stderr()).toContain('starting the tray app (');
    expect(stderr()).toContain('The tray app exited with code 3 before its service answered; starting the headless service instead (log: ');
    expect((await serviceHost(env))?.host).toBe('headless');
  });
});
