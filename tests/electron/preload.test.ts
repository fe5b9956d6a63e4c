/**
 * The preload exposes the contract and nothing else (docs/ARCHITECTURE.md §6): one function per contract method,
 * named like it, plus onEvent — never ipcRenderer, never the IPC event. Checked on the factory and on
 * the built bundle, loaded with a fake `electron` module the way a sandboxed preload is.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CONTRACT } from '../../src-main/contract/index.js';
import { API_GLOBAL, EVENT_CHANNEL, contractErrorParts, methodChannel } from '../../src-main/electron/contract-api.js';
import { CONTRACT_METHODS } from '../../src-main/contract/method-names.js';
import { buildApi } from '../../src-main/electron/preload-api.js';
import type { PreloadIpc } from '../../src-main/electron/preload-api.js';
import { ROOT } from '../support/built.js';

const PRELOAD_BUNDLE = path.join(ROOT, 'dist', 'electron', 'preload.cjs');

type Listener = (event: unknown, ...args: unknown[]) => void;

/** An ipcRenderer that records invocations and answers with `reply`. */
class FakeIpcRenderer implements PreloadIpc {
  readonly invoked: Array<{ channel: string; args: unknown[] }> = [];
  readonly listeners = new Map<string, Set<Listener>>();
  reply: (channel: string, params: unknown) => unknown = () => ({ ok: true, result: null });

  async invoke(channel: string, ...args: unknown[]): Promise<unknown> {
    this.invoked.push({ channel, args });
    return this.reply(channel, args[0]);
  }
  on(channel: string, listener: Listener): this {
    if (!this.listeners.has(channel)) this.listeners.set(channel, new Set());
    this.listeners.get(channel)?.add(listener);
    return this;
  }
  removeListener(channel: string, listener: Listener): this {
    this.listeners.get(channel)?.delete(listener);
    return this;
  }
  /** The main process sends on `channel`, with an IPC event whose sender is this very object. */
  emit(channel: string, payload: unknown): void {
    for (const listener of this.listeners.get(channel) ?? []) listener({ sender: this, senderId: 0 }, payload);
  }
}

describe('the contract method list the preload uses', () => {
  it('is exactly the contract, in order', () => {
    expect([...CONTRACT_METHODS]).toEqual(Object.keys(CONTRACT));
  });
});

describe('buildApi', () => {
  it('has one function per contract method and onEvent, nothing else, and cannot be changed', () => {
    const api = buildApi(new FakeIpcRenderer());
    expect(Object.keys(api).sort()).toEqual([...Object.keys(CONTRACT), 'onEvent'].sort());
    for (const value of Object.values(api)) expect(typeof value).toBe('function');
    expect(Object.isFrozen(api)).toBe(true);
  });

  it("invokes the method's own channel with the parameters and resolves with the result", async () => {
    const ipc = new FakeIpcRenderer();
    ipc.reply = (channel) => ({ ok: true, result: { channel } });
    const api = buildApi(ipc);
    await expect(api['jobs.cancel']({ jobId: 'j1' })).resolves.toEqual({ channel: 'contract:jobs.cancel' });
    await api['settings.get']();
    expect(ipc.invoked).toEqual([
      { channel: methodChannel('jobs.cancel'), args: [{ jobId: 'j1' }] },
      { channel: 'contract:settings.get', args: [undefined] },
    ]);
  });

  it('rejects a refused call with an Error that carries the code in its message (all that crosses the context bridge)', async () => {
    const ipc = new FakeIpcRenderer();
    ipc.reply = () => ({ ok: false, error: { code: 'no_key', message: 'No OpenRouter key. Open Settings → Account.' } });
    const api = buildApi(ipc);
    const error = await api['balance.get']({ refresh: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('[no_key] No OpenRouter key. Open Settings → Account.');
    expect((error as { code?: string }).code).toBe('no_key');
    expect(contractErrorParts(error)).toEqual({ code: 'no_key', message: 'No OpenRouter key. Open Settings → Account.' });
  });

  it('rejects an answer that is not a reply', async () => {
    const ipc = new FakeIpcRenderer();
    ipc.reply = () => 'surprise';
    await expect(buildApi(ipc)['service.status']()).rejects.toThrow(/^\[internal\]/);
  });

  it('onEvent hands the page { event, data } only — never the IPC event — until unsubscribed', () => {
    const ipc = new FakeIpcRenderer();
    const api = buildApi(ipc);
    const seen: unknown[][] = [];
    const stop = api.onEvent((...args) => seen.push(args));
    ipc.emit(EVENT_CHANNEL, { event: 'settings.changed', data: { mode: 'off' } });
    ipc.emit(EVENT_CHANNEL, 'not an event');
    ipc.emit('some-other-channel', { event: 'settings.changed', data: {} });
    expect(seen).toEqual([[{ event: 'settings.changed', data: { mode: 'off' } }]]);
    stop();
    ipc.emit(EVENT_CHANNEL, { event: 'settings.changed', data: { mode: 'auto' } });
    expect(seen).toHaveLength(1);
    expect(ipc.listeners.get(EVENT_CHANNEL)?.size).toBe(0);
  });
});

describe('the built preload (dist/electron/preload.cjs)', () => {
  it('requires nothing but electron and exposes exactly the contract methods and onEvent', async () => {
    const code = await readFile(PRELOAD_BUNDLE, 'utf8');
    const required: string[] = [];
    const exposed: Array<{ key: string; api: Record<string, unknown> }> = [];
    const fakeElectron = {
      contextBridge: { exposeInMainWorld: (key: string, api: Record<string, unknown>) => exposed.push({ key, api }) },
      ipcRenderer: new FakeIpcRenderer(),
    };
    const module = { exports: {} };
    const require = (id: string) => {
      required.push(id);
      if (id !== 'electron') throw new Error(`a sandboxed preload cannot require ${id}`);
      return fakeElectron;
    };
    vm.runInNewContext(`(function (require, module, exports) {${code}\n})`, {}, { filename: PRELOAD_BUNDLE })(require, module, module.exports);

    expect(required).toEqual(['electron']);
    expect(exposed).toHaveLength(1);
    expect(exposed[0]?.key).toBe(API_GLOBAL);
    expect(Object.keys(exposed[0]?.api ?? {}).sort()).toEqual([...Object.keys(CONTRACT), 'onEvent'].sort());
    expect(code).not.toMatch(/zod/i);
  });
});
