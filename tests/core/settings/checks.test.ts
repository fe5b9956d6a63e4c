/**
 * updateSettings checks what a change names where it is made (issue 24): a model id against OpenRouter's list, with
 * the closest ids when it is not there and a warning when the list cannot be had; `claudePath` against the disk. A
 * refusal leaves the settings file as it was. The catalog is handed in; the files are real, in a temp folder.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError, defaultSettings } from '../../../src-main/contract/index.js';
import type { Settings, SettingsPatch } from '../../../src-main/contract/index.js';
import { parseModelsBody } from '../../../src-main/core/catalog/parse.js';
import type { CatalogModel } from '../../../src-main/core/catalog/parse.js';
import type { CatalogSnapshot } from '../../../src-main/core/openrouter/models-cache.js';
import { executableProblem, settingsChecks } from '../../../src-main/core/settings/checks.js';
import type { SettingsChecks } from '../../../src-main/core/settings/checks.js';
import { SettingsStore } from '../../../src-main/core/settings/store.js';
import { updateSettings } from '../../../src-main/core/settings/update.js';
import { OPENROUTER_FIXTURES } from '../../support/fake-openrouter.js';

const MODELS = parseModelsBody(JSON.parse(await readFile(path.join(OPENROUTER_FIXTURES, 'models-2026-08.json'), 'utf8')));
const UNREACHABLE = new ServiceError(
  'openrouter_unreachable',
  'Cannot reach OpenRouter at 127.0.0.1:9 (connection refused). Check your network connection, and OPENROUTER_BASE_URL if you set it.',
);

/** A catalog that answers from `models` (or throws `error`), and remembers what it was asked. */
class TestCatalog {
  readonly asked: Array<{ refresh: boolean }> = [];
  constructor(private readonly answer: (refresh: boolean) => CatalogSnapshot | Error) {}
  async get(options: { refresh?: boolean } = {}): Promise<CatalogSnapshot> {
    const refresh = options.refresh ?? false;
    this.asked.push({ refresh });
    const answer = this.answer(refresh);
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

function snapshot(models: CatalogModel[], extra: Partial<CatalogSnapshot> = {}): CatalogSnapshot {
  return { models, fetchedAt: new Date().toISOString(), ageSeconds: 0, stale: false, ...extra };
}

const listing = (models: CatalogModel[] = MODELS) => new TestCatalog(() => snapshot(models));

let dir: string;
let file: string;
const stores: SettingsStore[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'settings-checks-'));
  file = path.join(dir, 'config', 'settings.json');
});

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.stop()));
  await rm(dir, { recursive: true, force: true });
});

/** A store over a settings file that already holds `settings`. */
async function storeWith(settings: Partial<Settings> = {}): Promise<SettingsStore> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify({ ...defaultSettings(), ...settings }, null, 2)}\n`);
  const store = new SettingsStore({ file });
  stores.push(store);
  await store.load();
  return store;
}

function checksWith(catalog: TestCatalog): SettingsChecks {
  return settingsChecks(catalog);
}

/** The refusal's message; fails when the change was taken. Also checks that the file did not change. */
async function refusal(store: SettingsStore, patch: SettingsPatch, checks: SettingsChecks): Promise<string> {
  const before = await readFile(file, 'utf8');
  const error = await updateSettings(store, patch, checks).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  expect((error as ServiceError).code).toBe('settings_invalid');
  expect(await readFile(file, 'utf8')).toBe(before);
  return (error as ServiceError).message;
}

async function onDisk(): Promise<Settings> {
  return JSON.parse(await readFile(file, 'utf8')) as Settings;
}

describe("a model a change names, against OpenRouter's list", () => {
  it('takes a default model OpenRouter lists, without a warning', async () => {
    const store = await storeWith();
    const updated = await updateSettings(store, { defaultModel: 'qwen/qwen3-coder' }, checksWith(listing()));
    expect(updated).toEqual({ settings: { ...defaultSettings(), defaultModel: 'qwen/qwen3-coder' }, warnings: [] });
    expect((await onDisk()).defaultModel).toBe('qwen/qwen3-coder');
  });

  it('takes "best" as the default model, which names no model to look up, even under an allowlist', async () => {
    const store = await storeWith();
    const updated = await updateSettings(store, { allowlist: ['qwen/*'], defaultModel: 'best' }, checksWith(listing()));
    expect(updated.warnings).toEqual([]);
    expect((await onDisk()).defaultModel).toBe('best');
    await expect(refusal(store, { defaultModel: 'bestest' }, checksWith(listing()))).resolves.toMatch(/defaultModel/);
  });

  it('refuses a default model OpenRouter does not list, naming it and the closest ids, and changes nothing', async () => {
    const store = await storeWith();
    const message = await refusal(store, { mode: 'auto', defaultModel: 'deepseek/deepseek-v5' }, checksWith(listing()));
    expect(message).toBe(
      'Settings not changed: defaultModel: OpenRouter has no model "deepseek/deepseek-v5". ' +
        'Did you mean deepseek/deepseek-r1, deepseek/deepseek-v4-pro-0813, deepseek/deepseek-v4-flash-0731 or deepseek/deepseek-v4-pro?',
    );
    expect(store.current.mode).toBe('ondemand');
  });

  it('offers only ids the new policy allows', async () => {
    const store = await storeWith();
    const message = await refusal(store, { blocklist: ['deepseek/deepseek-r1'], defaultModel: 'deepseek/deepseek-v5' }, checksWith(listing()));
    expect(message).toMatch(/Did you mean deepseek\/deepseek-v4-pro-0813, /);
    expect(message).not.toContain('deepseek/deepseek-r1');
  });

  it('refuses a fallback model OpenRouter does not list, naming the field', async () => {
    const store = await storeWith();
    expect(await refusal(store, { fallbackModels: ['z-ai/glm-4.7', 'qwen/qwen3-codr'] }, checksWith(listing()))).toMatch(
      /^Settings not changed: fallbackModels: OpenRouter has no model "qwen\/qwen3-codr"\. Did you mean qwen\/qwen3-coder/,
    );
  });

  it('takes an id that differs from the listed one only in case, as a job finds it', async () => {
    const store = await storeWith();
    expect((await updateSettings(store, { defaultModel: 'Qwen/Qwen3-Coder' }, checksWith(listing()))).warnings).toEqual([]);
  });

  it('takes the models with a warning that names the check when the list cannot be had', async () => {
    const store = await storeWith();
    const unreachable = new TestCatalog(() => UNREACHABLE);
    const updated = await updateSettings(store, { defaultModel: 'deepseek/deepseek-v5', fallbackModels: ['z-ai/glm-9'] }, checksWith(unreachable));
    expect(updated.warnings).toEqual([`deepseek/deepseek-v5, z-ai/glm-9 were not checked against OpenRouter's model list: ${UNREACHABLE.message}`]);
    expect(await onDisk()).toMatchObject({ defaultModel: 'deepseek/deepseek-v5', fallbackModels: ['z-ai/glm-9'] });
  });

  it('asks OpenRouter again before refusing an id an older list lacks: the model may be new', async () => {
    const store = await storeWith();
    const newModel = { ...MODELS[0], id: 'deepseek/deepseek-v5' } as CatalogModel;
    const catalog = new TestCatalog((refresh) => (refresh ? snapshot([...MODELS, newModel]) : snapshot(MODELS, { ageSeconds: 1800 })));
    expect((await updateSettings(store, { defaultModel: 'deepseek/deepseek-v5' }, checksWith(catalog))).warnings).toEqual([]);
    expect(catalog.asked).toEqual([{ refresh: false }, { refresh: true }]);
  });

  it('takes an id an old copy lacks, with a warning, when no newer list can be had', async () => {
    const store = await storeWith();
    const catalog = new TestCatalog(() => snapshot(MODELS, { ageSeconds: 3 * 3600, stale: true }));
    expect((await updateSettings(store, { defaultModel: 'deepseek/deepseek-v5' }, checksWith(catalog))).warnings).toEqual([
      "deepseek/deepseek-v5 was not checked against OpenRouter's current model list: it could not be had, and the copy fetched 3 h ago lacks it. Check the id.",
    ]);
    expect((await onDisk()).defaultModel).toBe('deepseek/deepseek-v5');
  });

  it('checks only what the change changes: other fields, the same default, a fallback already in the list', async () => {
    // A fallback OpenRouter has since dropped never blocks editing the rest of the list.
    const store = await storeWith({ fallbackModels: ['gone/model-2024', 'z-ai/glm-4.7'] });
    const catalog = listing();
    await updateSettings(store, { mode: 'auto', claudePath: null }, checksWith(catalog));
    await updateSettings(store, { defaultModel: defaultSettings().defaultModel }, checksWith(catalog));
    await updateSettings(store, { fallbackModels: ['gone/model-2024'] }, checksWith(catalog));
    expect(catalog.asked).toEqual([]);
    await updateSettings(store, { fallbackModels: ['gone/model-2024', 'qwen/qwen3-coder'] }, checksWith(catalog));
    expect(catalog.asked).toHaveLength(1);
    expect((await onDisk()).fallbackModels).toEqual(['gone/model-2024', 'qwen/qwen3-coder']);
  });

  it('refuses what the schema refuses before asking OpenRouter anything', async () => {
    const store = await storeWith();
    const catalog = listing();
    expect(await refusal(store, { allowlist: ['qwen/*'], defaultModel: 'deepseek/deepseek-v5' }, checksWith(catalog))).toMatch(/is not in the allowlist/);
    expect(catalog.asked).toEqual([]);
  });
});

describe('a check that waits on OpenRouter', () => {
  /** A catalog whose answer waits until `release()`; `asked` resolves when it is first asked. */
  function heldCatalog(models: CatalogModel[] = MODELS) {
    let release = () => {};
    let asked = () => {};
    const askedOnce = new Promise<void>((resolve) => (asked = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const catalog = new TestCatalog(() => snapshot(models));
    const get = catalog.get.bind(catalog);
    catalog.get = async (options) => {
      asked();
      await released;
      return get(options);
    };
    return { catalog, askedOnce, release: () => release() };
  }

  it('does not hold up another change while OpenRouter is slow to answer', async () => {
    const store = await storeWith();
    const held = heldCatalog();
    const slow = updateSettings(store, { defaultModel: 'qwen/qwen3-coder' }, checksWith(held.catalog));
    await held.askedOnce;
    // A change that needs no check goes through while the other waits on OpenRouter.
    await updateSettings(store, { concurrency: 5 }, checksWith(listing()));
    expect((await onDisk()).concurrency).toBe(5);
    held.release();
    const updated = await slow;
    // The slow change lands on top of the quick one, and was checked again on the settings it was applied to.
    expect(updated.settings).toMatchObject({ concurrency: 5, defaultModel: 'qwen/qwen3-coder' });
    expect(held.catalog.asked).toHaveLength(2);
    expect(await onDisk()).toMatchObject({ concurrency: 5, defaultModel: 'qwen/qwen3-coder' });
  });

  it('applies the change to what changed meanwhile: a default model an allowlist set meanwhile refuses is refused, and nothing is saved', async () => {
    const store = await storeWith();
    const held = heldCatalog();
    const slow = updateSettings(store, { defaultModel: 'qwen/qwen3-coder' }, checksWith(held.catalog)).then(
      () => null,
      (error: unknown) => error,
    );
    await held.askedOnce;
    await updateSettings(store, { allowlist: ['deepseek/*'] }, checksWith(listing()));
    const before = await readFile(file, 'utf8');
    held.release();
    const error = await slow;
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).message).toMatch(/"qwen\/qwen3-coder" is not in the allowlist \(deepseek\/\*\)/);
    expect(await readFile(file, 'utf8')).toBe(before);
  });

  it('reports a settings file broken by hand before asking OpenRouter anything', async () => {
    const store = await storeWith();
    await writeFile(file, '{ not json');
    const catalog = listing();
    expect(await refusal(store, { defaultModel: 'qwen/qwen3-coder' }, checksWith(catalog))).toMatch(/not valid JSON/);
    expect(catalog.asked).toEqual([]);
  });
});

describe('the claude executable a change names, on disk', () => {
  async function program(name: string, mode: number): Promise<string> {
    const target = path.join(dir, name);
    await writeFile(target, '#!/bin/sh\necho claude\n');
    await chmod(target, mode);
    return target;
  }

  it('takes an executable file', async () => {
    const claude = await program('claude', 0o755);
    const store = await storeWith();
    expect(await updateSettings(store, { claudePath: claude }, checksWith(listing()))).toMatchObject({ settings: { claudePath: claude }, warnings: [] });
    expect((await onDisk()).claudePath).toBe(claude);
  });

  it('refuses a path where nothing is, and changes nothing', async () => {
    const store = await storeWith();
    const missing = path.join(dir, 'no-such-claude');
    expect(await refusal(store, { mode: 'off', claudePath: missing }, checksWith(listing()))).toBe(
      `Settings not changed: claudePath: ${missing} does not exist: give the full path of \`claude\` (\`command -v claude\` prints it).`,
    );
    expect(store.current.mode).toBe('ondemand');
  });

  it.skipIf(process.platform === 'win32')('refuses a file this user may not run', async () => {
    const plain = await program('claude', 0o644);
    const store = await storeWith();
    expect(await refusal(store, { claudePath: plain }, checksWith(listing()))).toBe(
      `Settings not changed: claudePath: ${plain} is not executable: make it so (\`chmod +x ${plain}\`) if it is \`claude\`, or give the full path of \`claude\` (\`command -v claude\` prints it).`,
    );
  });

  it('refuses a folder', async () => {
    const folder = path.join(dir, 'bin');
    await mkdir(folder);
    const store = await storeWith();
    expect(await refusal(store, { claudePath: folder }, checksWith(listing()))).toMatch(new RegExp(`claudePath: ${escape(folder)} is a folder, not a program`));
  });

  it('refuses a relative path: the service would read it against a folder of its own', async () => {
    expect(await executableProblem('bin/claude')).toMatch(/^"bin\/claude" is not an absolute path/);
  });

  it('checks only a path the change changes: a saved one that has gone since still lets other settings change', async () => {
    const gone = path.join(dir, 'was-claude');
    const store = await storeWith({ claudePath: gone });
    expect((await updateSettings(store, { mode: 'auto', claudePath: gone }, checksWith(listing()))).settings).toMatchObject({ mode: 'auto', claudePath: gone });
    expect((await updateSettings(store, { claudePath: null }, checksWith(listing()))).settings.claudePath).toBeNull();
  });

  it('says every refusal of one change at once', async () => {
    const store = await storeWith();
    const message = await refusal(store, { defaultModel: 'deepseek/deepseek-v5', claudePath: path.join(dir, 'nope') }, checksWith(listing()));
    expect(message).toMatch(/defaultModel: OpenRouter has no model "deepseek\/deepseek-v5"\..* claudePath: .*nope does not exist/);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('the budgets a change sets (issue 38)', () => {
  it('refuses a day budget below the smallest a job can have, saying how to stop delegating, and changes nothing', async () => {
    const store = await storeWith();
    const message = await refusal(store, { budgets: { perDayUsd: 0.001 } }, checksWith(listing()));
    expect(message).toBe(
      'Settings not changed: budgets.perDayUsd: a day budget of $0.001 is below the smallest a job can have ($0.01), so no job could start. ' +
        'To stop delegating, set the mode to off (`openrouter-mcp-config --mode off`).',
    );
    expect(store.current.budgets.perDayUsd).toBe(5);
  });

  it('takes a day budget below the per-job budget with a warning that each job is then capped by the day', async () => {
    const store = await storeWith();
    const updated = await updateSettings(store, { budgets: { perDayUsd: 0.2 } }, checksWith(listing()));
    expect(updated.warnings).toEqual(['The day budget ($0.20) is below the per-job budget ($0.50): each job is capped by what is left of the day.']);
    expect((await onDisk()).budgets.perDayUsd).toBe(0.2);
  });

  it('says nothing of budgets a change leaves alone, even when an old file holds such a day budget', async () => {
    const store = await storeWith({ budgets: { ...defaultSettings().budgets, perDayUsd: 0.001 } });
    expect((await updateSettings(store, { mode: 'auto' }, checksWith(listing()))).warnings).toEqual([]);
  });
});
