/**
 * The secret store against the real OS keychain. On Linux that needs a D-Bus session with an unlocked
 * Secret Service: run under `scripts/with-keyring.sh` (CI does). Without one these tests fail and say
 * so; OPENROUTER_DELEGATE_TEST_NO_KEYCHAIN=1 skips them explicitly instead.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SecretKind } from '../../../src-main/contract/methods.js';
import { ServiceError } from '../../../src-main/contract/protocol.js';
import type { KeyringEntry, KeyringEntryFactory } from '../../../src-main/core/secrets/secret-store.js';
import { keychainBackendName, SecretStore } from '../../../src-main/core/secrets/secret-store.js';

const NO_KEYCHAIN = process.env.OPENROUTER_DELEGATE_TEST_NO_KEYCHAIN === '1';
const RUN_ID = randomBytes(4).toString('hex');
const KINDS: SecretKind[] = ['api', 'management'];
const usedServices = new Set<string>();

/** A service name no other run (or leftover) shares; everything stored under it is removed after each test. */
function testService(label: string): string {
  const service = `openrouter-delegate-test-${RUN_ID}-${label}`;
  usedServices.add(service);
  return service;
}

function fakeKey(): string {
  return `sk-or-v1-test-${randomBytes(16).toString('hex')}`;
}

function thrownBy(action: () => unknown): ServiceError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    return error as ServiceError;
  }
  throw new Error('expected the action to throw');
}

describe.skipIf(NO_KEYCHAIN)('on the real OS keychain', () => {
  beforeAll(() => {
    const status = new SecretStore({ service: testService('probe'), env: {} }).keychainStatus();
    if (!status.available) {
      throw new Error(
        `No usable OS keychain (${status.backend}): ${status.problem ?? 'unknown reason'}\n` +
          'Run the tests under scripts/with-keyring.sh (on Debian it needs: apt-get install -y dbus gnome-keyring), ' +
          'or set OPENROUTER_DELEGATE_TEST_NO_KEYCHAIN=1 to skip the keychain tests on purpose.',
      );
    }
  });

  afterEach(() => {
    for (const service of usedServices) {
      for (const kind of KINDS) new SecretStore({ service, env: {} }).remove(kind);
    }
  });

  it('stores, reads back and removes a key', () => {
    const store = new SecretStore({ service: testService('round-trip'), env: {} });
    const key = fakeKey();
    store.set('api', key);
    expect(store.get('api')).toEqual({ value: key, source: 'keychain' });
    store.remove('api');
    expect(store.get('api')).toBeNull();
  });

  it('replaces a stored key', () => {
    const store = new SecretStore({ service: testService('replace'), env: {} });
    store.set('api', fakeKey());
    const second = fakeKey();
    store.set('api', second);
    expect(store.get('api')?.value).toBe(second);
  });

  it('keeps the API key and the management key apart', () => {
    const store = new SecretStore({ service: testService('kinds'), env: {} });
    const api = fakeKey();
    const management = fakeKey();
    store.set('api', api);
    store.set('management', management);
    expect(store.get('api')?.value).toBe(api);
    expect(store.get('management')).toEqual({ value: management, source: 'keychain' });
    store.remove('management');
    expect(store.get('api')?.value).toBe(api);
  });

  it('treats removing a key that is not there as done', () => {
    const store = new SecretStore({ service: testService('remove-missing'), env: {} });
    expect(() => store.remove('api')).not.toThrow();
    expect(store.get('api')).toBeNull();
  });

  it('keeps two service names (two homes) apart', () => {
    const first = new SecretStore({ service: testService('home-a'), env: {} });
    const second = new SecretStore({ service: testService('home-b'), env: {} });
    const key = fakeKey();
    first.set('api', key);
    expect(second.get('api')).toBeNull();
    expect(second.status().apiKey).toEqual({ present: false, source: 'none' });
    second.set('api', fakeKey());
    expect(first.get('api')?.value).toBe(key);
  });

  it('lets OPENROUTER_API_KEY override the keychain, and says so', () => {
    const service = testService('override');
    const fromEnvironment = fakeKey();
    new SecretStore({ service, env: {} }).set('api', fakeKey());
    const store = new SecretStore({ service, env: { OPENROUTER_API_KEY: ` ${fromEnvironment}\n` } });
    expect(store.get('api')).toEqual({ value: fromEnvironment, source: 'environment' });
    expect(store.status().apiKey).toEqual({ present: true, source: 'environment' });
  });

  it('does not take the management key from the environment', () => {
    const store = new SecretStore({ service: testService('management-env'), env: { OPENROUTER_API_KEY: fakeKey(), OPENROUTER_MANAGEMENT_KEY: fakeKey() } });
    expect(store.get('management')).toBeNull();
  });

  it('reports which keys are present and where from, never the keys', () => {
    const api = fakeKey();
    const management = fakeKey();
    const store = new SecretStore({ service: testService('status'), env: {} });
    store.set('api', api);
    store.set('management', management);
    const status = store.status();
    expect(status).toEqual({
      keychain: { available: true, backend: keychainBackendName() },
      apiKey: { present: true, source: 'keychain' },
      managementKey: { present: true, source: 'keychain' },
    });
    const text = JSON.stringify(status);
    expect(text).not.toContain(api);
    expect(text).not.toContain(management);
  });

  it('refuses to store an empty key', () => {
    const store = new SecretStore({ service: testService('empty'), env: {} });
    expect(thrownBy(() => store.set('api', '  ')).code).toBe('invalid_params');
  });
});

describe.skipIf(process.platform !== 'linux')('on Linux without a Secret Service', () => {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const modulePath = path.join(repoRoot, 'src-main/core/secrets/secret-store.ts');
  // A separate process, because libdbus reads the bus address once per process.
  const childScript = `
    import { runnerImport } from 'vite';
    const { module } = await runnerImport(process.env.SECRET_STORE_MODULE, { configFile: false, logLevel: 'silent' });
    const store = new module.SecretStore({ service: process.env.SECRET_STORE_SERVICE, env: {} });
    const attempt = (action) => {
      try { return { ok: true, value: action() ?? null }; } catch (error) { return { code: error.code, message: error.message }; }
    };
    console.log(JSON.stringify({
      set: attempt(() => store.set('api', process.env.SECRET_STORE_VALUE)),
      get: attempt(() => store.get('api')),
      status: store.status(),
    }));`;

  async function runWithoutSecretService(busAddress: string | undefined) {
    const key = fakeKey();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      SECRET_STORE_MODULE: modulePath,
      SECRET_STORE_SERVICE: testService('no-secret-service'),
      SECRET_STORE_VALUE: key,
    };
    delete env.DBUS_SESSION_BUS_ADDRESS;
    if (busAddress !== undefined) env.DBUS_SESSION_BUS_ADDRESS = busAddress;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', childScript], { cwd: repoRoot, env });
    return { key, stdout, result: JSON.parse(stdout) as Record<string, { code?: string; message?: string; ok?: boolean }> & { status: unknown } };
  }

  it.each([
    ['a bus address that leads nowhere', 'unix:path=/nonexistent/openrouter-delegate-test-bus'],
    ['no DBUS_SESSION_BUS_ADDRESS at all', undefined],
  ])('says what to do, and stores nothing elsewhere, with %s', async (_label, busAddress) => {
    const { key, stdout, result } = await runWithoutSecretService(busAddress);
    expect(result.set).toMatchObject({ code: 'keychain_unavailable' });
    expect(result.set?.message).toContain(
      "No Secret Service on this Linux session (install and unlock gnome-keyring or KWallet), or set OPENROUTER_API_KEY in the service's environment.",
    );
    // Not silently kept in the kernel keyring: reading it back fails the same way instead of finding it.
    expect(result.get).toMatchObject({ code: 'keychain_unavailable' });
    expect(result.status).toMatchObject({ keychain: { available: false, backend: 'Secret Service (D-Bus)' }, apiKey: { present: false, source: 'none' } });
    expect(stdout).not.toContain(key);
  });
});

describe('keychain failures (simulated)', () => {
  function failingKeyring(message: (password?: string) => string): KeyringEntryFactory {
    return (): KeyringEntry => ({
      getPassword: () => {
        throw new Error(message());
      },
      setPassword: (password) => {
        throw new Error(message(password));
      },
      deleteCredential: () => {
        throw new Error(message());
      },
    });
  }

  it('tries once more when the Secret Service dropped the call (its daemon crashed and is started again)', () => {
    const dropped = 'Platform failure: DBus error: org.freedesktop.DBus.Error.NoReply: Message recipient disconnected from message bus without replying';
    let calls = 0;
    const flaky: KeyringEntryFactory = () => ({
      getPassword: () => {
        calls++;
        if (calls === 1) throw new Error(dropped);
        return 'the-stored-key';
      },
      setPassword: () => undefined,
      deleteCredential: () => true,
    });
    expect(new SecretStore({ service: 's', env: {}, platform: 'linux', keyring: flaky }).get('api')).toEqual({ value: 'the-stored-key', source: 'keychain' });
    expect(calls).toBe(2);
  });

  it('tries only once more, and not for other failures', () => {
    let calls = 0;
    const counting =
      (message: string): KeyringEntryFactory =>
      () => ({
        getPassword: () => {
          calls++;
          throw new Error(message);
        },
        setPassword: () => undefined,
        deleteCredential: () => true,
      });
    const dropped = new SecretStore({
      service: 's',
      env: {},
      platform: 'linux',
      keyring: counting('org.freedesktop.DBus.Error.NoReply: Message recipient disconnected from message bus without replying'),
    });
    expect(() => dropped.get('api')).toThrow(ServiceError);
    expect(calls).toBe(2);
    calls = 0;
    const locked = new SecretStore({ service: 's', env: {}, platform: 'linux', keyring: counting('Secret Service: unlock prompt was dismissed') });
    expect(() => locked.get('api')).toThrow(/locked/);
    expect(calls).toBe(1);
  });

  it('never repeats the key, even when the native error does', () => {
    const key = fakeKey();
    const store = new SecretStore({ service: 's', env: {}, platform: 'darwin', keyring: failingKeyring((p) => `could not save ${p ?? ''}`) });
    const error = thrownBy(() => store.set('api', key));
    expect(error.message).not.toContain(key);
    expect(error.message).toContain('[redacted]');
    expect(error.cause).toBeUndefined();
  });

  it('explains a locked keyring', () => {
    const store = new SecretStore({
      service: 's',
      env: {},
      platform: 'linux',
      keyring: failingKeyring(() => "Couldn't access platform storage: Secret Service: unlock prompt was dismissed"),
    });
    const error = thrownBy(() => store.set('api', fakeKey()));
    expect(error.code).toBe('keychain_unavailable');
    expect(error.message).toMatch(/is locked .* Unlock it/);
  });

  it('explains a Secret Service without a default keyring', () => {
    const store = new SecretStore({
      service: 's',
      env: {},
      platform: 'linux',
      keyring: failingKeyring(() => "Couldn't access platform storage: Secret Service: no result found"),
    });
    expect(thrownBy(() => store.set('management', fakeKey())).message).toContain('has no default keyring');
  });

  it('explains duplicate entries', () => {
    const store = new SecretStore({ service: 's', env: {}, platform: 'win32', keyring: failingKeyring(() => 'Entry is matched by 2 credentials: [...]') });
    const error = thrownBy(() => store.get('api'));
    expect(error.message).toContain('Windows Credential Manager holds more than one "openrouter-api-key" entry');
  });

  it('reports an unusable keychain in status() instead of throwing, and still sees the environment key', () => {
    const store = new SecretStore({
      service: 's',
      env: { OPENROUTER_API_KEY: fakeKey() },
      platform: 'linux',
      keyring: failingKeyring(() => 'Platform failure: DBus error: The name org.freedesktop.secrets was not provided by any .service files'),
    });
    const status = store.status();
    expect(status.keychain).toMatchObject({ available: false, backend: 'Secret Service (D-Bus)' });
    expect(status.keychain.problem).toContain('No Secret Service on this Linux session');
    expect(status.apiKey).toEqual({ present: true, source: 'environment' });
    expect(status.managementKey).toEqual({ present: false, source: 'none' });
    expect(store.get('api')?.source).toBe('environment');
  });

  it('names the backend of each platform', () => {
    expect(keychainBackendName('darwin')).toBe('macOS Keychain');
    expect(keychainBackendName('win32')).toBe('Windows Credential Manager');
    expect(keychainBackendName('linux')).toBe('Secret Service (D-Bus)');
  });
});
