/**
 * The service's keys in memory (issue 13): a store with `cache` asks the keychain once per key, follows its
 * own writes, reads again after `forget` (a 401) — and inside a running service, the hot path asks the
 * keychain nothing. The keychain here counts its reads; the real one is tested in secret-store.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { KeyringEntryFactory } from '../../../src-main/core/secrets/secret-store.js';
import { FAILED_READ_MS, SecretStore } from '../../../src-main/core/secrets/secret-store.js';
import { Service } from '../../../src-main/core/service/service.js';
import { resolveLocations } from '../../../src-main/platform/locations.js';
import { FakeOpenRouter } from '../../support/fake-openrouter.js';
import { makeTempHome } from '../../support/temp-home.js';

const KEY = `sk-or-v1-${'c'.repeat(64)}`;

/** A keychain in memory that counts what is asked of it; `down` makes every call fail as a dead D-Bus would. */
function countingKeychain() {
  const values = new Map<string, string>();
  const counts = { reads: 0, writes: 0 };
  let down = false;
  const factory: KeyringEntryFactory = (service, account) => {
    const id = `${service}/${account}`;
    const check = () => {
      if (down) throw new Error('Platform failure: DBus error: The name org.freedesktop.secrets was not provided by any .service files');
    };
    return {
      getPassword: () => {
        counts.reads++;
        check();
        return values.get(id) ?? null;
      },
      setPassword: (password: string) => {
        counts.writes++;
        check();
        values.set(id, password);
      },
      deleteCredential: () => {
        check();
        return values.delete(id);
      },
    };
  };
  return {
    factory,
    counts,
    values,
    setDown: (value: boolean) => {
      down = value;
    },
  };
}

describe('a store that keeps the keys in memory', () => {
  const store = (keychain: ReturnType<typeof countingKeychain>, now = () => 0) =>
    new SecretStore({ service: 'svc', env: {}, keyring: keychain.factory, platform: 'linux', cache: true, now });

  it('asks the keychain once per key, for get and status alike, and knows when there is none', () => {
    const keychain = countingKeychain();
    keychain.values.set('svc/openrouter-api-key', KEY);
    const secrets = store(keychain);
    expect(secrets.get('api')).toEqual({ value: KEY, source: 'keychain' });
    expect(secrets.get('api')?.value).toBe(KEY);
    expect(secrets.status()).toMatchObject({ apiKey: { present: true, source: 'keychain' }, managementKey: { present: false, source: 'none' } });
    expect(secrets.get('management')).toBeNull();
    expect(keychain.counts.reads).toBe(2); // one per kind
  });

  it('follows its own writes without reading them back', () => {
    const keychain = countingKeychain();
    const secrets = store(keychain);
    secrets.set('api', ` ${KEY} `);
    expect(secrets.get('api')?.value).toBe(KEY);
    secrets.remove('api');
    expect(secrets.get('api')).toBeNull();
    expect(keychain.counts.reads).toBe(0);
  });

  it('reads again after forget, e.g. a key changed elsewhere', () => {
    const keychain = countingKeychain();
    keychain.values.set('svc/openrouter-api-key', 'sk-or-v1-old');
    const secrets = store(keychain);
    expect(secrets.get('api')?.value).toBe('sk-or-v1-old');
    keychain.values.set('svc/openrouter-api-key', KEY);
    expect(secrets.get('api')?.value).toBe('sk-or-v1-old');
    secrets.forget('api');
    expect(secrets.get('api')?.value).toBe(KEY);
    expect(keychain.counts.reads).toBe(2);
  });

  it('answers a failed read with the same error for a while, then asks again; a write clears it at once', () => {
    const keychain = countingKeychain();
    let now = 0;
    const secrets = store(keychain, () => now);
    keychain.setDown(true);
    expect(() => secrets.get('api')).toThrow(/No Secret Service/);
    expect(() => secrets.get('api')).toThrow(/No Secret Service/);
    expect(keychain.counts.reads).toBe(1);
    keychain.setDown(false);
    now += FAILED_READ_MS;
    expect(secrets.get('api')).toBeNull();
    expect(keychain.counts.reads).toBe(2);

    keychain.setDown(true);
    secrets.forget();
    expect(() => secrets.get('api')).toThrow(/No Secret Service/);
    keychain.setDown(false);
    secrets.set('api', KEY);
    expect(secrets.get('api')?.value).toBe(KEY);
  });

  it('leaves the environment key out of it, and a store without cache reads every time', () => {
    const keychain = countingKeychain();
    const fromEnv = new SecretStore({ service: 'svc', env: { OPENROUTER_API_KEY: KEY }, keyring: keychain.factory, cache: true });
    expect(fromEnv.get('api')).toEqual({ value: KEY, source: 'environment' });
    expect(keychain.counts.reads).toBe(0);
    const uncached = new SecretStore({ service: 'svc', env: {}, keyring: keychain.factory });
    uncached.get('api');
    uncached.get('api');
    expect(keychain.counts.reads).toBe(2);
  });
});

describe('a running service', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });

  async function serviceWith(keychain: ReturnType<typeof countingKeychain>): Promise<{ service: Service; fake: FakeOpenRouter }> {
    const fake = new FakeOpenRouter();
    fake.addKey(KEY, { limit: 100, limitRemaining: 90, usage: 10 });
    await fake.start();
    cleanups.push(() => fake.stop());
    const { home, cleanup } = await makeTempHome('ord-keycache-');
    cleanups.push(cleanup);
    const locations = resolveLocations({ OPENROUTER_DELEGATE_HOME: home });
    keychain.values.set(`${locations.keychainService}/openrouter-api-key`, KEY);
    const service = new Service({ locations, env: { OPENROUTER_BASE_URL: fake.baseUrl }, host: 'headless', log: () => undefined, keyring: keychain.factory });
    await service.start();
    cleanups.push(() => service.stop());
    return { service, fake };
  }

  it('asks the keychain nothing on the hot path: model lists, balances, job lists and every scrubbed answer', async () => {
    const keychain = countingKeychain();
    const { service } = await serviceWith(keychain);
    const call = (method: string, params: unknown) => service.dispatch(method, params, { client: 'test' });
    await call('models.list', { limit: 5 });
    const before = keychain.counts.reads;
    for (let i = 0; i < 50; i++) {
      await call('models.list', { limit: 5 });
      await call('jobs.list', {});
      await call('secrets.status', {});
    }
    await call('balance.get', { refresh: true });
    expect(keychain.counts.reads - before).toBe(0);
    // Each kind (the key, the management key, the delegate key the service may have made) was read once, at most.
    expect(before).toBeLessThanOrEqual(3);
  });

  it('reads the key afresh once OpenRouter refuses it (401)', async () => {
    const keychain = countingKeychain();
    const { service, fake } = await serviceWith(keychain);
    const call = (method: string, params: unknown) => service.dispatch(method, params, { client: 'test' });
    await call('balance.get', { refresh: true });
    const before = keychain.counts.reads;
    fake.removeKey(KEY);
    const refused = (await call('balance.get', { refresh: true })) as { keyProblem?: string };
    expect(refused.keyProblem).toMatch(/401/);
    await call('secrets.status', {});
    expect(keychain.counts.reads - before).toBeGreaterThanOrEqual(1);
  });
});
