import { afterEach, describe, expect, it } from 'vitest';
import { ServiceHost, watchdogTurnedOff } from '../../src-main/host/service-host.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import { AlreadyRunningError } from '../../src-main/ipc/server.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import { makeTempHome } from '../support/temp-home.js';

const ENV = { OPENROUTER_API_KEY: `sk-or-v1-${'0'.repeat(64)}`, OPENROUTER_BASE_URL: 'http://127.0.0.1:9' };

describe.runIf(process.platform !== 'win32')('the service host', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });

  async function host(home: string): Promise<ServiceHost> {
    const created = new ServiceHost({ locations: resolveLocations({ OPENROUTER_DELEGATE_HOME: home }), env: ENV, host: 'headless', log: () => undefined });
    cleanups.push(() => created.stop());
    return created;
  }

  async function home(): Promise<string> {
    const made = await makeTempHome('ord-host-');
    cleanups.push(made.cleanup);
    return made.home;
  }

  it('serves the service on its socket, and the typed caller reaches the same dispatcher', async () => {
    const served = await host(await home());
    await served.start();
    const client = await IpcClient.connect({ locations: served.locations, clientName: 'test/1' });
    cleanups.push(async () => client.close());
    expect((await client.call('service.status', {})).clients).toBe(1);
    expect((await served.caller('tray')('settings.update', { patch: { mode: 'off' } })).mode).toBe('off');
    expect((await client.call('settings.get', {})).mode).toBe('off');
  });

  it('a second host on the same home is refused the socket', async () => {
    const shared = await home();
    await (await host(shared)).start();
    await expect((await host(shared)).start()).rejects.toBeInstanceOf(AlreadyRunningError);
  });
});

describe('turning the watchdog off', () => {
  it('is off by the variable, or by its name before 2026-12', () => {
    expect(watchdogTurnedOff({})).toBe(false);
    expect(watchdogTurnedOff({ OPENROUTER_DELEGATE_WATCHDOG: 'on' })).toBe(false);
    expect(watchdogTurnedOff({ OPENROUTER_DELEGATE_WATCHDOG: 'off' })).toBe(true);
    expect(watchdogTurnedOff({ OPENROUTER_DELEGATE_KEEPER: 'off' })).toBe(true);
  });
});
