import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResponseOf } from '../../../src-main/contract/index.js';
import { Service } from '../../../src-main/core/service/service.js';
import type { ServiceTransport } from '../../../src-main/core/service/service.js';
import { resolveLocations } from '../../../src-main/platform/locations.js';
import { makeTempHome } from '../../support/temp-home.js';

const ENV = { OPENROUTER_API_KEY: `sk-or-v1-${'0'.repeat(64)}`, OPENROUTER_BASE_URL: 'http://127.0.0.1:9' };

/** A transport that writes down what the service asks of it. */
function recordingTransport(clientCount = 0): ServiceTransport & { calls: string[]; events: string[] } {
  const calls: string[] = [];
  const events: string[] = [];
  return {
    calls,
    events,
    clientCount,
    start: async () => void calls.push('start'),
    stop: async () => void calls.push('stop'),
    broadcast: (event) => events.push(event),
  };
}

describe('a service and its transports', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });

  async function service(): Promise<Service> {
    const { home, cleanup } = await makeTempHome('ord-transports-');
    cleanups.push(cleanup);
    const created = new Service({ locations: resolveLocations({ OPENROUTER_DELEGATE_HOME: home }), env: ENV, host: 'headless', log: () => undefined });
    cleanups.push(() => created.stop());
    return created;
  }

  it('opens none by itself: what it serves on is attached from outside', async () => {
    const bare = await service();
    await bare.start();
    expect(existsSync(bare.locations.socketPath)).toBe(false);
    expect(bare.status().clients).toBe(0);
  });

  it('starts what is attached, tells it every event, counts its clients and stops it', async () => {
    const core = await service();
    const socket = recordingTransport(2);
    const page = recordingTransport(1);
    core.attach(socket);
    core.attach(page);
    await core.start();
    expect([socket.calls, page.calls]).toEqual([['start'], ['start']]);
    expect(core.status().clients).toBe(3);
    await core.dispatch('settings.update', { patch: { mode: 'off' } }, { client: 'test' });
    expect(socket.events).toContain('settings.changed');
    expect(page.events).toContain('settings.changed');
    await core.stop();
    expect([socket.calls, page.calls]).toEqual([
      ['start', 'stop'],
      ['start', 'stop'],
    ]);
  });

  it("answers its own doctor's questions through its dispatcher, never dialling a socket (it has none here)", async () => {
    const { home, cleanup } = await makeTempHome('ord-transports-');
    cleanups.push(cleanup);
    const setup = { nodePath: process.execPath, bridgeScript: '/nonexistent/openrouter-delegate-mcp.js' };
    const core = new Service({ locations: resolveLocations({ OPENROUTER_DELEGATE_HOME: home }), env: ENV, host: 'headless', log: () => undefined, setup });
    cleanups.push(() => core.stop());
    await core.start();
    const report = (await core.dispatch('setup.doctor', {}, { client: 'test' })) as ResponseOf<'setup.doctor'>;
    expect(report.checks.find((check) => check.id === 'service')).toMatchObject({
      status: 'ok',
      summary: expect.stringMatching(/^running \(pid \d+, headless, /),
    });
  });
});
