/**
 * The settings window's one registration point: every contract method has a handler, each refuses
 * any sender but our page before the service sees anything, the service's dispatcher validates the
 * parameters, errors come back as data, and service events reach the window.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONTRACT, ServiceError, defaultSettings } from '../../src-main/contract/index.js';
import type { EventName } from '../../src-main/contract/index.js';
import { Service } from '../../src-main/core/service/service.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import { EVENT_CHANNEL, methodChannel } from '../../src-main/electron/contract-api.js';
import { SETTINGS_WINDOW_CLIENT, registerContractIpc } from '../../src-main/electron/ipc-main.js';
import type { ContractIpcDeps } from '../../src-main/electron/ipc-main.js';
import { SettingsWindow } from '../../src-main/electron/settings-window.js';
import { makeTempHome } from '../support/temp-home.js';
import { FakeBrowserWindow, FakeWebContents, fakeElectron } from './fake-electron.js';
import type { FakeElectron } from './fake-electron.js';

let electron: FakeElectron;
let settingsWindow: SettingsWindow;
let service: Service;
let cleanup: () => Promise<void>;
let unregister: () => void;
const logged: string[] = [];
let listeners: Array<(event: EventName, data: unknown) => void>;

function register(overrides: Partial<ContractIpcDeps> = {}): void {
  unregister = registerContractIpc({
    ipcMain: electron.ipcMain,
    dispatch: service.dispatch,
    onEvent: (listener) => {
      listeners.push(listener);
      return () => (listeners = listeners.filter((l) => l !== listener));
    },
    trusts: (event) => settingsWindow.trusts(event),
    target: () => settingsWindow.webContents,
    log: (line) => logged.push(line),
    ...overrides,
  });
}

function openWindow(): FakeBrowserWindow {
  settingsWindow.open();
  const window = FakeBrowserWindow.instances.at(-1);
  if (!window) throw new Error('no window');
  return window;
}

beforeEach(async () => {
  electron = fakeElectron();
  logged.length = 0;
  listeners = [];
  const home = await makeTempHome('ord-ipc-');
  cleanup = home.cleanup;
  // Not started: the dispatcher and the settings need no socket; nothing here touches the network.
  service = new Service({ locations: resolveLocations({ OPENROUTER_DELEGATE_HOME: home.home }), env: {}, host: 'electron', log: () => undefined });
  settingsWindow = new SettingsWindow({ electron, preloadPath: '/app/preload.cjs', pageUrl: 'app://settings/index.html', platform: 'linux' });
});

afterEach(async () => {
  unregister?.();
  await cleanup();
});

describe('registration', () => {
  it('registers one handler per contract method, on the contract: channel, and removes them all again', () => {
    register();
    expect([...electron.ipcMain.handlers.keys()].sort()).toEqual(
      Object.keys(CONTRACT)
        .map((m) => `contract:${m}`)
        .sort(),
    );
    expect(listeners).toHaveLength(1);
    unregister();
    expect(electron.ipcMain.handlers.size).toBe(0);
    expect(listeners).toHaveLength(0);
  });
});

describe('a call', () => {
  it('from our page is answered by the service', async () => {
    register();
    const window = openWindow();
    const reply = await electron.ipcMain.invoke(methodChannel('settings.get'), { sender: window.webContents, senderFrame: window.frame() }, {});
    expect(reply).toEqual({ ok: true, result: defaultSettings() });
  });

  it('from any other sender is refused before the service sees it', async () => {
    let dispatched = 0;
    register({
      dispatch: async (...args) => {
        dispatched++;
        return service.dispatch(...args);
      },
    });
    const window = openWindow();
    const foreign = [
      { sender: new FakeWebContents(), senderFrame: window.frame() },
      { sender: window.webContents, senderFrame: window.frame('https://evil.example/') },
      { sender: window.webContents, senderFrame: window.frame(undefined, window.frame()) },
      { sender: window.webContents, senderFrame: null },
    ];
    for (const event of foreign) {
      expect(await electron.ipcMain.invoke(methodChannel('service.stop'), event, { killJobs: true })).toEqual({
        ok: false,
        error: { code: 'unauthorized', message: expect.stringContaining('Only the OpenRouter Delegate settings window') },
      });
    }
    expect(dispatched).toBe(0);
    expect(logged.filter((l) => l.includes('refused service.stop'))).toHaveLength(4);
  });

  it('with invalid parameters is refused by the contract, as on the socket', async () => {
    register();
    const window = openWindow();
    const event = { sender: window.webContents, senderFrame: window.frame() };
    const reply = await electron.ipcMain.invoke(methodChannel('jobs.cancel'), event, { jobId: 42, extra: true });
    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_params', message: expect.stringContaining('Invalid parameters for jobs.cancel') } });
    const patch = await electron.ipcMain.invoke(methodChannel('settings.update'), event, { patch: { mode: 'sometimes' } });
    expect(patch).toMatchObject({ ok: false, error: { code: 'invalid_params' } });
  });

  it('passes a service error on with its code, and hides anything unexpected behind "internal"', async () => {
    const calls: Array<{ method: string; client: string }> = [];
    register({
      dispatch: async (method, _params, ctx) => {
        calls.push({ method, client: ctx.client });
        if (method === 'balance.get') throw new ServiceError('no_key', 'No OpenRouter key.');
        throw new Error('secret internals /home/someone');
      },
    });
    const window = openWindow();
    const event = { sender: window.webContents, senderFrame: window.frame() };
    expect(await electron.ipcMain.invoke(methodChannel('balance.get'), event, {})).toEqual({
      ok: false,
      error: { code: 'no_key', message: 'No OpenRouter key.' },
    });
    const internal = await electron.ipcMain.invoke(methodChannel('jobs.list'), event, {});
    expect(internal).toEqual({ ok: false, error: { code: 'internal', message: expect.stringContaining('jobs.list') } });
    expect(JSON.stringify(internal)).not.toContain('secret internals');
    expect(calls).toEqual([
      { method: 'balance.get', client: SETTINGS_WINDOW_CLIENT },
      { method: 'jobs.list', client: SETTINGS_WINDOW_CLIENT },
    ]);
  });
});

describe('events', () => {
  it('go to the open window as { event, data }, and nowhere while it is closed', () => {
    register();
    const emit = (event: EventName, data: unknown) => listeners.forEach((l) => l(event, data));
    emit('settings.changed', defaultSettings());
    const window = openWindow();
    emit('balance.changed', { keySource: 'none' });
    expect(window.webContents.sent).toEqual([{ channel: EVENT_CHANNEL, args: [{ event: 'balance.changed', data: { keySource: 'none' } }] }]);
    window.close();
    emit('settings.changed', defaultSettings());
    expect(window.webContents.sent).toHaveLength(1);
  });
});
