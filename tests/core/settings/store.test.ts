import { mkdtemp, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src-main/contract/protocol.js';
import type { Settings } from '../../../src-main/contract/settings.js';
import { defaultSettings } from '../../../src-main/contract/settings.js';
import { findJsonErrorOffset, SettingsStore } from '../../../src-main/core/settings/store.js';

const posix = process.platform !== 'win32';
/** Long enough for the 50 ms debounce and a reload to have happened, several times over. */
const QUIET_MS = 400;

let dir: string;
let file: string;
const stores: SettingsStore[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'settings-store-'));
  file = path.join(dir, 'config', 'settings.json');
});

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.stop()));
  await rm(dir, { recursive: true, force: true });
});

function makeStore(extra: Partial<ConstructorParameters<typeof SettingsStore>[0]> = {}): SettingsStore {
  const store = new SettingsStore({ file, ...extra });
  stores.push(store);
  return store;
}

async function writeSettingsText(text: string): Promise<void> {
  await makeStore().update({}); // creates the directory and a valid file
  await writeFile(file, text);
}

/** Resolves with the next value passed to a callback, or rejects after a while. */
function nextCall<T>(register: (listener: (value: T) => void) => void, timeoutMs = 5_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the callback was not called')), timeoutMs);
    register((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

const quiet = () => new Promise((resolve) => setTimeout(resolve, QUIET_MS));

async function rejectionOf(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

describe('loading', () => {
  it('uses the defaults when there is no file, without creating one', async () => {
    const store = makeStore();
    expect(await store.load()).toEqual(defaultSettings());
    expect(store.problem).toBeUndefined();
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reads what update() wrote, as pretty JSON with a trailing newline', async () => {
    await makeStore().update({ mode: 'auto', allowlist: ['anthropic/*'], defaultModel: 'anthropic/claude-sonnet-4' });
    const text = await readFile(file, 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "mode": "auto",\n');
    const fresh = makeStore();
    expect(await fresh.load()).toMatchObject({ mode: 'auto', allowlist: ['anthropic/*'] });
  });

  it('fills in defaults for settings the file leaves out', async () => {
    await writeSettingsText('{ "concurrency": 5 }\n');
    expect(await makeStore().load()).toEqual({ ...defaultSettings(), concurrency: 5 });
  });

  it('reads a file written before the provider policy existed: the policy is the default one', async () => {
    const { provider: _absent, ...older } = { ...defaultSettings(), mode: 'auto' as const };
    await writeSettingsText(`${JSON.stringify(older, null, 2)}\n`);
    const store = makeStore();
    expect(await store.load()).toEqual({ ...defaultSettings(), mode: 'auto' });
    expect(store.problem).toBeUndefined();
    // Only some provider fields: the rest are defaulted too.
    await writeFile(file, '{ "provider": { "zdr": true } }\n');
    expect((await makeStore().load()).provider).toEqual({ ...defaultSettings().provider, zdr: true });
  });
});

describe('a file that is not valid JSON', () => {
  const broken = '{\n  "mode": "auto",\n  "concurrency": 4\n  "retentionDays": 7\n}\n';

  it('names the file and the line:column, and keeps the last good settings', async () => {
    await writeSettingsText('{ "mode": "auto" }\n');
    const store = makeStore();
    await store.load();
    await writeFile(file, broken);
    await store.load();
    expect(store.problem).toContain(`${file}:4:3`);
    expect(store.problem).toMatch(/not valid JSON/);
    expect(store.current.mode).toBe('auto');
  });

  it('gives line:column even when the JSON error message has no position', async () => {
    await writeSettingsText('{\n  "mode": }\n');
    const store = makeStore();
    await store.load();
    expect(store.problem).toContain(`${file}:2:11`);
    expect(store.problem).toContain("Unexpected token '}'");
  });

  it('refuses updates and leaves the file byte for byte as it was', async () => {
    await writeSettingsText(broken);
    const store = makeStore();
    await store.load();
    const error = await rejectionOf(store.update({ mode: 'off' }));
    expect(error.code).toBe('settings_invalid');
    expect(error.message).toContain(`Fix or delete ${file} first`);
    expect(await readFile(file, 'utf8')).toBe(broken);
  });

  it('reports the problem once, and its end once the file is fixed', async () => {
    const problems: Array<string | undefined> = [];
    const store = makeStore({ onProblem: (p) => problems.push(p) });
    await writeSettingsText(broken);
    await store.load();
    await store.load();
    await writeFile(file, '{ "mode": "off" }');
    await store.load();
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain(file);
    expect(problems[1]).toBeUndefined();
    expect(store.current.mode).toBe('off');
  });

  it('says so when the file is empty', async () => {
    await writeSettingsText('\n');
    const store = makeStore();
    await store.load();
    expect(store.problem).toContain(`Settings file ${file} is empty`);
  });
});

describe('findJsonErrorOffset', () => {
  // V8 gives a position for these; the scanner, used when it does not, must agree with it.
  it.each(['{"a": 1,}', '{\n  "a": 1\n  "b": 2\n}', '{"a": 1', '{"a": "x\ty"}', '{"a":1} x', '[1, 2', '{"a": 01}', '{"a" 1}'])(
    'finds the offset V8 reports for %j',
    (text) => {
      let v8Offset: number | undefined;
      try {
        JSON.parse(text);
      } catch (error) {
        const match = /at position (\d+)/.exec((error as Error).message);
        v8Offset = match ? Number(match[1]) : undefined;
      }
      expect(v8Offset).toBeTypeOf('number');
      expect(findJsonErrorOffset(text)).toBe(v8Offset);
    },
  );

  it('finds nothing wrong with valid JSON', () => {
    expect(findJsonErrorOffset('{"a": [1, -2.5e3, true, null, "\\u00e9\\n"], "b": {}}')).toBeUndefined();
  });
});

describe('a file with invalid values', () => {
  it('names the file, the field path, the line and what is wrong', async () => {
    await writeSettingsText('{\n  "mode": "auto",\n  "budgets": {\n    "perJobUsd": 1,\n    "perDayUsd": -1\n  }\n}\n');
    const store = makeStore();
    await store.load();
    expect(store.problem).toContain(file);
    expect(store.problem).toContain('budgets.perDayUsd (line 5): Too small');
    expect(store.current).toEqual(defaultSettings());
  });

  it('names an unknown setting and its line', async () => {
    await writeSettingsText('{\n  "mode": "auto",\n  "colour": "blue"\n}\n');
    const store = makeStore();
    await store.load();
    expect(store.problem).toContain('colour (line 3)');
  });

  it('refuses updates while the values are invalid', async () => {
    await writeSettingsText('{ "concurrency": 0 }');
    const store = makeStore();
    await store.load();
    expect((await rejectionOf(store.update({ mode: 'off' }))).code).toBe('settings_invalid');
  });
});

describe('update', () => {
  it('merges a patch and tells the listener', async () => {
    const changes: Settings[] = [];
    const store = makeStore({ onChange: (s) => changes.push(s) });
    await store.load();
    const result = await store.update({ mode: 'off', concurrency: 7 });
    expect(result).toMatchObject({ mode: 'off', concurrency: 7, defaultModel: defaultSettings().defaultModel });
    expect(store.current).toEqual(result);
    expect(changes).toEqual([result]);
  });

  it('accepts a function of the current settings', async () => {
    const store = makeStore();
    await store.load();
    await store.update((s) => ({ ...s, budgets: { ...s.budgets, perDayUsd: 9 } }));
    expect(store.current.budgets).toEqual({ ...defaultSettings().budgets, perDayUsd: 9 });
  });

  it('treats an undefined field in a patch as "leave it alone"', async () => {
    const store = makeStore();
    await store.update({ mode: 'auto' });
    await store.update({ mode: undefined, concurrency: 2 });
    expect(store.current.mode).toBe('auto');
  });

  it('writes nothing when the result is invalid, and says which field is wrong', async () => {
    const store = makeStore();
    await store.load();
    const error = await rejectionOf(store.update({ concurrency: 0 }));
    expect(error.code).toBe('settings_invalid');
    expect(error.message).toMatch(/^Settings not saved: concurrency: Too small/);
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(store.current).toEqual(defaultSettings());
  });

  it('checks rules across fields', async () => {
    const store = makeStore();
    const error = await rejectionOf(store.update({ permissionCeiling: 'plan', defaultPermissionMode: 'acceptEdits' }));
    expect(error.message).toContain('defaultPermissionMode: "acceptEdits" is above the permission ceiling "plan"');
  });

  it('gives out settings that cannot be changed behind its back', async () => {
    const store = makeStore();
    await store.load();
    expect(() => {
      (store.current.allowlist as string[]).push('x/y');
    }).toThrow(TypeError);
  });

  it('does not lose a hand edit the watcher has not reported yet', async () => {
    const store = makeStore();
    await store.update({ mode: 'auto' });
    await writeFile(file, '{ "mode": "auto", "concurrency": 9 }');
    await store.update({ mode: 'off' });
    expect(store.current).toMatchObject({ mode: 'off', concurrency: 9 });
  });

  it('reads a hand edit, or a removed file, the watcher has not reported yet, as an update would start from it', async () => {
    const store = makeStore();
    store.watch();
    await store.update((s) => ({ ...s, mode: 'auto', provider: { ...s.provider, zdr: true } }));
    await rm(file);
    // At once: before the watcher's debounce has run.
    expect((await store.read()).provider.zdr).toBe(false);
    await writeFile(file, '{ "mode": "off" }');
    expect((await store.read()).mode).toBe('off');
    await store.stop();
  });

  it.skipIf(!posix)('writes the file private to the user (0600)', async () => {
    await makeStore().update({ mode: 'auto' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});

describe('watching', () => {
  it('reloads after a hand edit and tells the listener exactly once', async () => {
    await writeSettingsText('{ "mode": "ondemand" }\n');
    const changes: Settings[] = [];
    let notify: (s: Settings) => void = () => undefined;
    const store = makeStore({
      onChange: (s) => {
        changes.push(s);
        notify(s);
      },
    });
    await store.load();
    store.watch();
    const changed = nextCall<Settings>((listener) => (notify = listener));
    await writeFile(file, '{\n  "mode": "auto"\n}\n');
    expect((await changed).mode).toBe('auto');
    await quiet();
    expect(changes).toHaveLength(1);
  });

  it('sees an editor-style save (write elsewhere, rename over)', async () => {
    await writeSettingsText('{ "mode": "ondemand" }\n');
    let notify: (s: Settings) => void = () => undefined;
    const store = makeStore({ onChange: (s) => notify(s) });
    await store.load();
    store.watch();
    const changed = nextCall<Settings>((listener) => (notify = listener));
    const temp = path.join(path.dirname(file), 'settings.json.swp');
    await writeFile(temp, '{ "mode": "off" }\n');
    await rename(temp, file);
    expect((await changed).mode).toBe('off');
  });

  it('ignores the echo of its own writes', async () => {
    const changes: Settings[] = [];
    const store = makeStore({ onChange: (s) => changes.push(s) });
    await store.load();
    store.watch();
    await store.update({ mode: 'auto' });
    await quiet();
    expect(changes.map((s) => s.mode)).toEqual(['auto']);
  });

  it('does not call the listener when an edit changes nothing that matters', async () => {
    await writeSettingsText('{ "mode": "auto" }\n');
    const changes: Settings[] = [];
    const store = makeStore({ onChange: (s) => changes.push(s) });
    await store.load();
    changes.length = 0;
    store.watch();
    await writeFile(file, '{\n    "mode":   "auto"\n}\n');
    await quiet();
    expect(changes).toEqual([]);
  });

  it('reports a broken hand edit and keeps the settings in force', async () => {
    await writeSettingsText('{ "mode": "auto" }\n');
    let notify: (p: string | undefined) => void = () => undefined;
    const store = makeStore({ onProblem: (p) => notify(p) });
    await store.load();
    store.watch();
    const problem = nextCall<string | undefined>((listener) => (notify = listener));
    await writeFile(file, '{ "mode": "auto", }\n');
    expect(await problem).toContain(`${file}:1:19`);
    expect(store.current.mode).toBe('auto');
  });

  it('goes back to the defaults when the file is deleted', async () => {
    await writeSettingsText('{ "mode": "off" }\n');
    let notify: (s: Settings) => void = () => undefined;
    const store = makeStore({ onChange: (s) => notify(s) });
    await store.load();
    store.watch();
    const changed = nextCall<Settings>((listener) => (notify = listener));
    await unlink(file);
    expect(await changed).toEqual(defaultSettings());
  });

  it.skipIf(!posix)('creates a missing settings directory (0700) so it can watch it', async () => {
    const store = makeStore();
    store.watch();
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
  });

  it('leaves no watcher or timer behind after stop()', async () => {
    const resources = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap' || r === 'Timeout');
    const before = resources();
    const store = makeStore();
    await store.load();
    store.watch();
    expect(resources().length).toBeGreaterThan(before.length);
    await writeFile(file, '{ "mode": "auto" }\n'); // a reload may be pending or running when stop() comes
    await store.stop();
    expect(resources()).toEqual(before);
  });
});
