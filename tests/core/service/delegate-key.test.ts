/**
 * The delegate key against the fake OpenRouter (real HTTP, the key-management endpoints as OpenRouter documents
 * them): made with the management key, kept (secret in the keychain, hash on disk), re-limited, rotated, and never
 * a key the service did not make touched.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenRouterClient } from '../../../src-main/core/openrouter/client.js';
import { SecretStore } from '../../../src-main/core/secrets/secret-store.js';
import type { KeyringEntryFactory } from '../../../src-main/core/secrets/secret-store.js';
import { DELEGATE_KEY_NAME, DelegateKey } from '../../../src-main/core/service/delegate-key.js';
import { FakeOpenRouter } from '../../support/fake-openrouter.js';
import { filesContaining, makeTempHome } from '../../support/temp-home.js';
import { serviceFailure } from '../../support/service-failure.js';

const USER_KEY = `sk-or-v1-${'a1'.repeat(32)}`;
const MANAGEMENT_KEY = `sk-or-v1-${'b2'.repeat(32)}`;

function memoryKeychain(): { factory: KeyringEntryFactory; values: Map<string, string> } {
  const values = new Map<string, string>();
  const factory: KeyringEntryFactory = (service, account) => {
    const id = `${service}/${account}`;
    return {
      getPassword: () => values.get(id) ?? null,
      setPassword: (password) => void values.set(id, password),
      deleteCredential: () => values.delete(id),
    };
  };
  return { factory, values };
}

let fake: FakeOpenRouter;
let home: { home: string; cleanup: () => Promise<void> };
let secrets: SecretStore;
let keychain: ReturnType<typeof memoryKeychain>;
let dayBudgetUsd: number;
let busyJobs: number;
let logs: string[];

function delegateKey(): DelegateKey {
  return new DelegateKey({
    client: new OpenRouterClient({ baseUrl: fake.baseUrl, timeoutMs: 5_000 }),
    secrets,
    file: path.join(home.home, 'delegate-key.json'),
    dayBudgetUsd: () => dayBudgetUsd,
    busyJobs: () => busyJobs,
    log: (line) => logs.push(line),
  });
}

const failure = serviceFailure;

/** A request on a key to the metered path, as a delegate's Claude Code makes it through the gateway. */
async function messageWith(key: string): Promise<number> {
  const response = await fetch(`${fake.baseUrl}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'x', messages: [] }),
  });
  await response.text();
  return response.status;
}

beforeEach(async () => {
  fake = new FakeOpenRouter();
  fake.addKey(USER_KEY, { limit: null, limitRemaining: null });
  fake.addKey(MANAGEMENT_KEY, { management: true });
  await fake.start();
  home = await makeTempHome('ord-delegate-key-');
  keychain = memoryKeychain();
  secrets = new SecretStore({ service: 'svc', env: {}, keyring: keychain.factory, platform: 'linux', cache: true });
  secrets.set('api', USER_KEY);
  secrets.set('management', MANAGEMENT_KEY);
  dayBudgetUsd = 5;
  busyJobs = 0;
  logs = [];
});

afterEach(async () => {
  await fake.stop();
  await home.cleanup();
});

describe('the delegate key', () => {
  it('is off until the user turns it on: no key is made, and none is offered', async () => {
    const keys = delegateKey();
    await keys.load();
    await keys.sync();
    expect([keys.mode, keys.key(), keys.problem]).toEqual(['user', null, null]);
    expect(fake.requestsTo('/api/v1/keys')).toEqual([]);
  });

  it("is made with the management key, limited to the day budget, reset daily, BYOK counted, named as the service's", async () => {
    const keys = delegateKey();
    await keys.load();
    const status = await keys.setMode('own');
    const [made] = fake.createdKeys();
    expect(made).toMatchObject({ name: DELEGATE_KEY_NAME, limit: 5, limitReset: 'daily', includeByokInLimit: true });
    expect(fake.requestsTo('/api/v1/keys')[0]?.headers.authorization).toBe(`Bearer ${MANAGEMENT_KEY}`);
    expect(keys.key()).toEqual({ value: made?.key, source: 'keychain' });
    expect(status).toMatchObject({ mode: 'own', hash: made?.hash, limitUsd: 5, limitReset: 'daily' });
    expect(status.problem).toBeUndefined();
  });

  it('keeps the secret in the keychain only: the file on disk holds its hash, 0600, and no log line holds either key', async () => {
    const keys = delegateKey();
    await keys.load();
    await keys.setMode('own');
    const secret = keys.key()?.value ?? '';
    expect(keychain.values.get('svc/openrouter-delegate-key')).toBe(secret);
    const file = path.join(home.home, 'delegate-key.json');
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ mode: 'own', key: { hash: fake.createdKeys()[0]?.hash, limitUsd: 5 } });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await filesContaining(home.home, secret)).toEqual([]);
    expect(logs.join('\n')).not.toContain(secret);
    expect(logs.join('\n')).not.toContain(MANAGEMENT_KEY);
  });

  it('is taken back by a restarted service from its file and the keychain, without making another', async () => {
    const first = delegateKey();
    await first.load();
    await first.setMode('own');
    const again = delegateKey();
    await again.load();
    await again.sync();
    expect(again.key()?.value).toBe(first.key()?.value);
    expect(fake.requestsTo('/api/v1/keys')).toHaveLength(1);
  });

  it('changes its limit at OpenRouter (PATCH by hash) when the day budget changes', async () => {
    const keys = delegateKey();
    await keys.load();
    await keys.setMode('own');
    const hash = fake.createdKeys()[0]?.hash ?? '';
    dayBudgetUsd = 12;
    await keys.sync();
    const patch = fake.requestsTo(`/api/v1/keys/${hash}`).find((r) => r.method === 'PATCH');
    expect(JSON.parse(patch?.body ?? '{}')).toEqual({ limit: 12, limit_reset: 'daily', include_byok_in_limit: true });
    expect(fake.keyInfo(hash)?.limit).toBe(12);
    expect(keys.status().limitUsd).toBe(12);
  });

  it('keeps the key at its old limit when the PATCH fails, says so, and tries again at the next sync', async () => {
    const keys = delegateKey();
    await keys.load();
    await keys.setMode('own');
    const hash = fake.createdKeys()[0]?.hash ?? '';
    dayBudgetUsd = 8;
    fake.failNext(`/api/v1/keys/${hash}`, { status: 500 });
    await keys.sync();
    expect(keys.status().problem).toContain('could not be made or changed');
    expect(keys.key()).not.toBeNull();
    expect(fake.keyInfo(hash)?.limit).toBe(5);
    await keys.sync();
    expect(fake.keyInfo(hash)?.limit).toBe(8);
    expect(keys.status().problem).toBeUndefined();
  });

  it('rotates: a new key, switched to, then the old one deleted', async () => {
    const keys = delegateKey();
    await keys.load();
    await keys.setMode('own');
    const old = fake.createdKeys()[0];
    const status = await keys.rotate();
    const [fresh] = fake.createdKeys();
    expect(fake.createdKeys()).toHaveLength(1);
    expect(fresh?.hash).not.toBe(old?.hash);
    expect(fake.keyInfo(old?.hash ?? '')).toBeNull();
    expect(keys.key()?.value).toBe(fresh?.key);
    expect(status.hash).toBe(fresh?.hash);
    const oldKeyAnswer = await fetch(`${fake.baseUrl}/v1/key`, { headers: { authorization: `Bearer ${old?.key ?? ''}` } });
    expect(oldKeyAnswer.status).toBe(401);
  });

  it("never deletes or changes a key it did not make: the user's key and the account's other keys stay as they were", async () => {
    const other = `sk-or-v1-${'d4'.repeat(32)}`;
    fake.addKey(other, { limit: 50 });
    const keys = delegateKey();
    await keys.load();
    await keys.setMode('own');
    dayBudgetUsd = 7;
    await keys.sync();
    await keys.rotate();
    const touched = fake.requests.filter((r) => r.path.startsWith('/api/v1/keys/')).map((r) => r.path.slice('/api/v1/keys/'.length));
    expect(touched).not.toContain(fake.keyInfo(USER_KEY)?.hash);
    expect(touched).not.toContain(fake.keyInfo(other)?.hash);
    expect(fake.keyInfo(USER_KEY)).not.toBeNull();
    expect(fake.keyInfo(other)?.limit).toBe(50);
  });

  it('refuses to rotate while a job still runs or is being billed with the current key, and keeps it', async () => {
    const keys = delegateKey();
    await keys.load();
    await keys.setMode('own');
    const current = keys.key()?.value;
    busyJobs = 1;
    const error = await failure(keys.rotate());
    expect(error.code).toBe('conflict');
    expect(error.message).toContain('being billed');
    expect(keys.key()?.value).toBe(current);
    expect(fake.createdKeys()).toHaveLength(1);
  });

  it('with a management key OpenRouter refuses: says why, and offers no key (delegates are refused, not given the user key)', async () => {
    secrets.set('management', USER_KEY);
    const keys = delegateKey();
    await keys.load();
    const error = await failure(keys.setMode('own'));
    expect(error.code).toBe('openrouter_forbidden');
    expect(keys.key()).toBeNull();
    expect(keys.problem).toContain('needs a management key');
    expect(keys.status()).toMatchObject({ mode: 'own', hash: null });
  });

  it('without a management key: says how to add one or turn the delegate key off', async () => {
    secrets.remove('management');
    const keys = delegateKey();
    await keys.load();
    expect((await failure(keys.setMode('own'))).code).toBe('no_key');
    expect(keys.problem).toContain('key set --management');
    expect(keys.problem).toContain('key delegate-off');
  });

  it('a create that fails leaves no key, and the next sync makes it', async () => {
    const keys = delegateKey();
    await keys.load();
    fake.failNext('/api/v1/keys', { status: 500 });
    expect((await failure(keys.setMode('own'))).code).toBe('openrouter_server_error');
    expect(keys.key()).toBeNull();
    expect(keys.problem).toContain('could not be made');
    await keys.sync();
    expect(keys.key()?.value).toBe(fake.createdKeys()[0]?.key);
    expect(keys.problem).toBeNull();
  });

  it('makes a new key when the keychain lost the secret, and deletes the lost one it made', async () => {
    const keys = delegateKey();
    await keys.load();
    await keys.setMode('own');
    const lost = fake.createdKeys()[0];
    secrets.remove('delegate');
    expect(keys.key()).toBeNull();
    await keys.sync();
    expect(fake.keyInfo(lost?.hash ?? '')).toBeNull();
    expect(keys.key()?.value).toBe(fake.createdKeys()[0]?.key);
  });

  it("is a cap OpenRouter enforces itself: once the day's limit is spent, the next request is refused (402)", async () => {
    const keys = delegateKey();
    await keys.load();
    await keys.setMode('own');
    const secret = keys.key()?.value ?? '';
    fake.charge(secret, 4.99);
    expect(await messageWith(secret)).not.toBe(402);
    fake.charge(secret, 0.02);
    expect(await messageWith(secret)).toBe(402);
  });
});
