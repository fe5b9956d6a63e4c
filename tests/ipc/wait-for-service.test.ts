import { afterEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src-main/contract/protocol.js';
import { IpcServer } from '../../src-main/ipc/server.js';
import { TrayAppExitedError, waitForService } from '../../src-main/ipc/wait-for-service.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import { makeTempHome } from '../support/temp-home.js';

const POSIX = process.platform !== 'win32';

describe.runIf(POSIX)('waitForService', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });

  async function locations() {
    const { home, cleanup } = await makeTempHome();
    cleanups.push(cleanup);
    return resolveLocations({ OPENROUTER_DELEGATE_HOME: home });
  }

  async function startService(at: Awaited<ReturnType<typeof locations>>): Promise<void> {
    const server = new IpcServer({ locations: at, serverName: 'openrouter-delegate/test', dispatch: () => Promise.resolve({}) });
    await server.start();
    cleanups.push(() => server.stop());
  }

  const never = new Promise<string>(() => undefined);

  it('keeps trying until the service answers', async () => {
    const at = await locations();
    const answered = waitForService({ locations: at, clientName: 'test/1', timeoutMs: 10_000, exited: never, logFile: 'service.log' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await startService(at);
    const client = await answered;
    expect(client.server.pid).toBe(process.pid);
    client.close();
  });

  it('gives up at the deadline, pointing at the log', async () => {
    const at = await locations();
    const started = Date.now();
    await expect(waitForService({ locations: at, clientName: 'test/1', timeoutMs: 400, exited: never, logFile: '/logs/service.log' })).rejects.toThrow(
      new ServiceError('unavailable', 'The tray app did not answer within 400 ms. See /logs/service.log.'),
    );
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('stops waiting when the app exits first', async () => {
    const at = await locations();
    const error = await waitForService({
      locations: at,
      clientName: 'test/1',
      timeoutMs: 10_000,
      exited: Promise.resolve('exited with code 1'),
      logFile: 'x',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrayAppExitedError);
    expect((error as Error).message).toBe('The tray app exited with code 1 before its service answered');
  });

  it('still connects when the app exited because a service already answers (it handed over)', async () => {
    const at = await locations();
    await startService(at);
    const client = await waitForService({
      locations: at,
      clientName: 'test/1',
      timeoutMs: 10_000,
      exited: Promise.resolve('exited with code 0'),
      logFile: 'x',
    });
    // Connected, and to the service that was already there: its hello names it.
    expect(client.server).toMatchObject({ type: 'hello', server: 'openrouter-delegate/test', pid: process.pid });
    client.close();
  });
});
