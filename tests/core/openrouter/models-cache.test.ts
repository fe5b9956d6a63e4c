import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenRouterClient } from '../../../src-main/core/openrouter/client.js';
import { ModelsCache } from '../../../src-main/core/openrouter/models-cache.js';
import { FakeOpenRouter } from '../../support/fake-openrouter.js';
import { serviceFailure } from '../../support/service-failure.js';

const HOUR = 3_600_000;
const TTL = HOUR;
const MODELS = '/api/v1/models';

let fake: FakeOpenRouter;
let dir: string;
let file: string;
let clock: number;

function cache(baseUrl = fake.baseUrl): ModelsCache {
  return new ModelsCache({ client: new OpenRouterClient({ baseUrl, timeoutMs: 5_000 }), file, ttlMs: TTL, now: () => clock });
}

const failure = serviceFailure;

beforeEach(async () => {
  clock = Date.parse('2026-08-20T12:00:00Z');
  dir = await mkdtemp(path.join(os.tmpdir(), 'models-cache-test-'));
  file = path.join(dir, 'cache', 'models.json');
  fake = new FakeOpenRouter();
  await fake.start();
});

afterEach(async () => {
  await fake.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('ModelsCache', () => {
  it('fetches the catalog on first use', async () => {
    const snapshot = await cache().get();
    expect([snapshot.models.length, snapshot.stale, snapshot.ageSeconds, snapshot.fetchedAt]).toEqual([414, false, 0, '2026-08-20T12:00:00.000Z']);
  });

  it('writes the raw body and its time to the cache file, creating the folder', async () => {
    await cache().get();
    const saved = JSON.parse(await readFile(file, 'utf8')) as { fetchedAt: string; body: { data: unknown[] } };
    expect([saved.fetchedAt, saved.body.data.length]).toEqual(['2026-08-20T12:00:00.000Z', 414]);
  });

  it('leaves no temporary file beside the cache', async () => {
    await cache().get();
    expect(await readdir(path.dirname(file))).toEqual(['models.json']);
  });

  it('answers from memory within the TTL', async () => {
    const models = cache();
    await models.get();
    clock += TTL - 1000;
    await models.get();
    expect(fake.requestsTo(MODELS)).toHaveLength(1);
  });

  it('reports the age of the copy it serves', async () => {
    const models = cache();
    await models.get();
    clock += 90_000;
    expect((await models.get()).ageSeconds).toBe(90);
  });

  it('serves the same parsed array to repeated queries', async () => {
    const models = cache();
    const first = await models.get();
    const second = await models.get();
    expect(second.models).toBe(first.models);
  });

  it('fetches again once the TTL has passed', async () => {
    const models = cache();
    await models.get();
    clock += TTL;
    await models.get();
    expect(fake.requestsTo(MODELS)).toHaveLength(2);
  });

  it('fetches again when asked to refresh', async () => {
    const models = cache();
    await models.get();
    await models.get({ refresh: true });
    expect(fake.requestsTo(MODELS)).toHaveLength(2);
  });

  it('starts from the disk copy without asking OpenRouter', async () => {
    await cache().get();
    clock += 60_000;
    const snapshot = await cache().get();
    expect([fake.requestsTo(MODELS).length, snapshot.models.length, snapshot.ageSeconds]).toEqual([1, 414, 60]);
  });

  it('shares one fetch between concurrent callers', async () => {
    const models = cache();
    await Promise.all([models.get(), models.get(), models.get({ refresh: true })]);
    expect(fake.requestsTo(MODELS)).toHaveLength(1);
  });

  it('serves the old copy, marked stale, when OpenRouter cannot be reached', async () => {
    const models = cache();
    await models.get();
    await fake.stop();
    clock += 3 * HOUR;
    const snapshot = await models.get();
    expect([snapshot.stale, snapshot.models.length, snapshot.ageSeconds]).toEqual([true, 414, 3 * 3600]);
  });

  it('says why the refresh failed and how old the copy is', async () => {
    const models = cache();
    await models.get();
    await fake.stop();
    clock += 3 * HOUR;
    expect((await models.get()).warning).toMatch(
      /^Could not refresh the model list \(Cannot reach OpenRouter at 127\.0\.0\.1:\d+ \([^)]+\)\..*\); showing the copy fetched 3 h ago\.$/,
    );
  });

  it('serves the disk copy as stale when a new process cannot reach OpenRouter', async () => {
    await cache().get();
    const baseUrl = fake.baseUrl;
    await fake.stop();
    clock += 2 * HOUR;
    const snapshot = await cache(baseUrl).get();
    expect([snapshot.stale, snapshot.models.length]).toEqual([true, 414]);
  });

  it('serves the old copy when OpenRouter sends a broken list', async () => {
    const models = cache();
    await models.get();
    fake.failNext(MODELS, { status: 200, body: { unexpected: true } });
    const snapshot = await models.get({ refresh: true });
    expect([snapshot.stale, snapshot.models.length]).toEqual([true, 414]);
  });

  it('throws the failure when there is no copy to fall back on', async () => {
    fake.failNext(MODELS, { status: 503 });
    expect((await failure(cache().get())).code).toBe('openrouter_server_error');
  });

  it('ignores a corrupt cache file and fetches', async () => {
    await cache().get();
    await writeFile(file, '{ not json');
    const snapshot = await cache().get();
    expect([fake.requestsTo(MODELS).length, snapshot.models.length]).toEqual([2, 414]);
  });

  it('still answers, with a warning, when the cache file cannot be written', async () => {
    // A directory where the file should be makes the rename fail.
    await cache().get();
    await rm(file);
    await mkdir(file);
    const snapshot = await cache().get({ refresh: true });
    expect([snapshot.models.length, snapshot.warning?.startsWith('The model list was fetched but could not be saved')]).toEqual([414, true]);
  });
});
