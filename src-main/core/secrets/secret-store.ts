/**
 * The OpenRouter keys (docs/ARCHITECTURE.md §5): in the OS keychain (macOS Keychain, Windows Credential Manager,
 * the Secret Service on Linux), with OPENROUTER_API_KEY in the service's environment taking precedence.
 *
 * On Linux, @napi-rs/keyring tries the Secret Service and silently falls back to the kernel keyutils
 * keyring when there is none. That keyring lives in kernel memory and is emptied at every reboot, so a
 * key "saved" there would quietly disappear. Entries are therefore pinned to the Secret Service, and
 * when it is missing the user is told what to do instead (`keychain_unavailable`).
 *
 * Key values never appear in an error message: native messages are redacted before they are quoted,
 * and native errors are not attached as causes.
 *
 * With `cache` (the service's store), each key is read from the keychain once and then kept in memory:
 * every keychain read is a synchronous round trip (on Linux over D-Bus, to a daemon that can crash), and the
 * service needs the key for every job, balance and answer it scrubs. The cache follows this store's own
 * writes, and `forget` drops it (the service does on a 401, so a key fixed elsewhere is read again). A
 * failed read is answered with the same error for 10 s, then tried again. Short-lived stores (the CLI's) read
 * every time.
 *
 * The delegate key (`delegate`) is the one the service made with the management key for its delegates
 * (core/service/delegate-key.ts): the keychain only, never listed in `status`, never set by a caller.
 *
 * The management key comes from the keychain only. It can read the whole account's credits, and
 * docs/ARCHITECTURE.md §7 defines no variable for it, so no environment variable silently supplies it.
 */
import { Entry } from '@napi-rs/keyring';
import type { KeySource, SecretKind, SecretsStatus } from '../../contract/methods.js';
import { ServiceError } from '../../contract/protocol.js';
import { scrubSecrets } from './redact.js';
import { errorMessage } from '../../common/errors.js';

/** The part of a keyring entry this store uses. */
export interface KeyringEntry {
  getPassword(): string | null;
  setPassword(password: string): void;
  /** False when there was nothing to delete. */
  deleteCredential(): boolean;
}

/** Creates the entry for one account of one service; may throw when the keychain is unreachable. */
export type KeyringEntryFactory = (service: string, account: string) => KeyringEntry;

export interface SecretStoreDeps {
  /** Keychain service name (Locations.keychainService): distinct per home, so homes never share keys. */
  service: string;
  /** Where OPENROUTER_API_KEY is looked up (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Replaces the OS keychain; only for tests of error paths (the real keychain is tested for real). */
  keyring?: KeyringEntryFactory;
  /** Decides the backend name and Linux-specific advice (default process.platform). */
  platform?: NodeJS.Platform;
  /** Keep what the keychain said in memory (the long-running service); default false. */
  cache?: boolean;
  /** Clock for how long a failed read is remembered (default Date.now). */
  now?: () => number;
}

/** How long a store with `cache` answers a failed keychain read with the same error before it asks again. */
export const FAILED_READ_MS = 10_000;

export type KeychainStatus = SecretsStatus['keychain'];

/** What the store keeps: the user's keys (SecretKind), and the key the service made for its delegates. */
export type StoredKind = SecretKind | 'delegate';

export const KEYCHAIN_ACCOUNTS: Record<StoredKind, string> = {
  api: 'openrouter-api-key',
  management: 'openrouter-management-key',
  delegate: 'openrouter-delegate-key',
};

const KINDS = Object.keys(KEYCHAIN_ACCOUNTS) as StoredKind[];

const KIND_LABELS: Record<StoredKind, string> = {
  api: 'OpenRouter key',
  management: 'OpenRouter management key',
  delegate: 'OpenRouter key made for the delegates',
};

const NO_SECRET_SERVICE =
  "No Secret Service on this Linux session (install and unlock gnome-keyring or KWallet), or set OPENROUTER_API_KEY in the service's environment.";

/** The OS keychain. On Linux the Secret Service only: never the kernel keyring, which a reboot empties. */
export const osKeyring: KeyringEntryFactory = (service, account) => new Entry(service, account, { linux: { store: 'secret-service' } });

function usesSecretService(platform: NodeJS.Platform): boolean {
  return platform === 'linux' || platform === 'freebsd' || platform === 'openbsd';
}

export function keychainBackendName(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return 'macOS Keychain';
  if (platform === 'win32') return 'Windows Credential Manager';
  if (usesSecretService(platform)) return 'Secret Service (D-Bus)';
  return `none (no keychain support on ${platform})`;
}

type KeychainAction = 'read' | 'store' | 'remove';

/** D-Bus's words for a call whose recipient went away before it answered. */
const DROPPED_CALL = /NoReply|disconnected from (?:the )?message bus|Remote peer disconnected/i;

export class SecretStore {
  private readonly service: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly keyring: KeyringEntryFactory;
  private readonly platform: NodeJS.Platform;
  /** What the keychain holds for each kind (null: nothing), when `cache` is on and it has been read. */
  private readonly cached: Map<StoredKind, string | null> | null;
  private readonly failed = new Map<StoredKind, { error: unknown; at: number }>();
  private readonly now: () => number;

  constructor(deps: SecretStoreDeps) {
    this.service = deps.service;
    this.env = deps.env ?? process.env;
    this.keyring = deps.keyring ?? osKeyring;
    this.platform = deps.platform ?? process.platform;
    this.cached = deps.cache ? new Map() : null;
    this.now = deps.now ?? Date.now;
  }

  /** Drops what is kept in memory (one kind, or both), so the next read asks the keychain. */
  forget(kind?: StoredKind): void {
    for (const k of kind ? [kind] : KINDS) {
      this.cached?.delete(k);
      this.failed.delete(k);
    }
  }

  /**
   * The key and where it comes from; null when there is none. Throws `keychain_unavailable` when the
   * keychain has to be asked and cannot answer (a missing key is not an error, an unreadable one is).
   */
  get(kind: StoredKind): { value: string; source: KeySource } | null {
    const fromEnvironment = this.environmentValue(kind);
    if (fromEnvironment !== undefined) return { value: fromEnvironment, source: 'environment' };
    const value = this.stored(kind);
    return value ? { value, source: 'keychain' } : null;
  }

  /** The keychain's value for `kind` (null: none), from memory when it is kept; throws when the keychain cannot answer. */
  private stored(kind: StoredKind): string | null {
    if (this.cached === null) return this.withEntry(kind, 'read', (entry) => entry.getPassword()) || null;
    const known = this.cached.get(kind);
    if (known !== undefined) return known;
    const failure = this.failed.get(kind);
    if (failure && this.now() - failure.at < FAILED_READ_MS) throw failure.error;
    try {
      const value = this.withEntry(kind, 'read', (entry) => entry.getPassword()) || null;
      this.cached.set(kind, value);
      this.failed.delete(kind);
      return value;
    } catch (error) {
      this.failed.set(kind, { error, at: this.now() });
      throw error;
    }
  }

  /** Stores the key in the keychain (even when the environment overrides it: the override may go away). */
  set(kind: StoredKind, value: string): void {
    const trimmed = value.trim();
    if (trimmed === '') throw new ServiceError('invalid_params', `The ${KIND_LABELS[kind]} is empty; nothing was stored.`);
    // Whatever happens, the keychain is asked again next time: a failed write may have half-happened.
    this.forget(kind);
    this.withEntry(kind, 'store', (entry) => entry.setPassword(trimmed), trimmed);
    this.cached?.set(kind, trimmed);
  }

  /** Removes the key from the keychain; removing a key that is not there is fine. */
  remove(kind: StoredKind): void {
    this.forget(kind);
    this.withEntry(kind, 'remove', (entry) => {
      entry.deleteCredential();
    });
    this.cached?.set(kind, null);
  }

  /** Which keys are present and where from. Never contains a key, and never throws for keychain trouble. */
  status(): SecretsStatus {
    const keychain: KeychainStatus = { available: true, backend: keychainBackendName(this.platform) };
    const presence = (kind: SecretKind): SecretsStatus['apiKey'] => {
      if (this.environmentValue(kind) !== undefined) return { present: true, source: 'environment' };
      try {
        return this.stored(kind) ? { present: true, source: 'keychain' } : { present: false, source: 'none' };
      } catch (error) {
        noteProblem(keychain, error);
        return { present: false, source: 'none' };
      }
    };
    const apiKey = presence('api');
    const managementKey = presence('management');
    return { keychain, apiKey, managementKey };
  }

  /** Whether the keychain can be used right now, asked by reading (not writing) this service's entry; never from memory. */
  keychainStatus(): KeychainStatus {
    const keychain: KeychainStatus = { available: true, backend: keychainBackendName(this.platform) };
    try {
      this.withEntry('api', 'read', (entry) => entry.getPassword());
    } catch (error) {
      noteProblem(keychain, error);
    }
    return keychain;
  }

  private environmentValue(kind: StoredKind): string | undefined {
    if (kind !== 'api') return undefined;
    const value = this.env.OPENROUTER_API_KEY?.trim();
    return value ? value : undefined;
  }

  private withEntry<T>(kind: StoredKind, action: KeychainAction, use: (entry: KeyringEntry) => T, secret?: string): T {
    const attempt = () => use(this.keyring(this.service, KEYCHAIN_ACCOUNTS[kind]));
    try {
      return attempt();
    } catch (error) {
      // gnome-keyring-daemon can crash in the middle of a call (seen when another client dies during its
      // OpenSession); the call is dropped, and a session bus that starts the daemon on demand has it back for
      // the next one. Reading, storing and removing are idempotent, so one more try is safe.
      if (usesSecretService(this.platform) && DROPPED_CALL.test(errorMessage(error))) {
        try {
          return attempt();
        } catch (again) {
          throw describeKeychainError(again, { kind, action, platform: this.platform, secret });
        }
      }
      throw describeKeychainError(error, { kind, action, platform: this.platform, secret });
    }
  }
}

function noteProblem(keychain: KeychainStatus, error: unknown): void {
  if (error instanceof ServiceError && error.code === 'keychain_unavailable') keychain.available = false;
  keychain.problem ??= errorMessage(error);
}

interface KeychainErrorContext {
  kind: StoredKind;
  action: KeychainAction;
  platform: NodeJS.Platform;
  /** A value that must not be quoted back, even if the native layer echoed it. */
  secret?: string | undefined;
}

/** Turns a native keyring failure into an error that says what happened and what to do, without the key. */
export function describeKeychainError(error: unknown, context: KeychainErrorContext): ServiceError {
  if (error instanceof ServiceError) return error;
  const native = scrubSecrets(errorMessage(error), context.secret);
  const label = KIND_LABELS[context.kind];
  const backend = keychainBackendName(context.platform);
  if (/prompt was dismissed|locked|interaction is not allowed/i.test(native)) {
    return new ServiceError(
      'keychain_unavailable',
      `The ${backend} is locked and could not be unlocked (the unlock prompt was dismissed or could not be shown). ` +
        `Unlock it (log in to the desktop session, or open your keyring app) and try again, or set OPENROUTER_API_KEY in the service's environment.`,
    );
  }
  const linux = usesSecretService(context.platform);
  if (linux && /dbus|d-bus|org\.freedesktop\.secrets|autolaunch|Failed to connect/i.test(native)) {
    return new ServiceError('keychain_unavailable', `${NO_SECRET_SERVICE} (${dbusDetail(native)})`);
  }
  if (linux && /no result found/i.test(native)) {
    return new ServiceError(
      'keychain_unavailable',
      `The Secret Service has no default keyring to keep the ${label} in. Create or unlock a default keyring ` +
        `(e.g. "login" in Passwords and Keys / Seahorse), or set OPENROUTER_API_KEY in the service's environment.`,
    );
  }
  if (/ambiguous|matched by \d+ credentials/i.test(native)) {
    return new ServiceError(
      'internal',
      `The ${backend} holds more than one "${KEYCHAIN_ACCOUNTS[context.kind]}" entry; remove the extra ones with your keychain app.`,
    );
  }
  if (/longer than platform limit|too ?long/i.test(native)) {
    return new ServiceError('invalid_params', `The ${label} is too long for the ${backend}; nothing was stored.`);
  }
  if (/encoding|utf-?8/i.test(native)) {
    return new ServiceError('internal', `The ${label} in the ${backend} is not readable text; remove it and store the key again.`);
  }
  return new ServiceError('keychain_unavailable', `Could not ${context.action} the ${label} in the ${backend}: ${native}`);
}

/** Why D-Bus failed, in words; the native text is quoted because it tells an expert exactly what broke. */
function dbusDetail(native: string): string {
  const bus = process.env.DBUS_SESSION_BUS_ADDRESS;
  if (!bus) return 'DBUS_SESSION_BUS_ADDRESS is not set, so there is no D-Bus session to ask';
  if (/not provided by any \.service files/i.test(native)) return 'nothing on the D-Bus session provides org.freedesktop.secrets';
  return `D-Bus: ${native.replace(/^(?:Platform failure: )?(?:DBus error: )?/i, '')}`;
}
