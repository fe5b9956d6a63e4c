/**
 * The delegate key (issue 35): a second cap, enforced by OpenRouter itself. With the management key, the service
 * makes a key of its own for its delegates, limited to the day budget and reset daily (`limit_reset: "daily"`,
 * BYOK counted), and the gateway sends that key upstream instead of the user's. Should the service's metering
 * ever fail, OpenRouter refuses the next request past the day budget (402).
 *
 * Opt-in (`openrouter-delegate key delegate-on`): making keys in someone's account is not done behind their back,
 * and a management key may be stored only for the account's credits. The choice, the key's hash and its limit
 * are kept in `delegate-key.json` (data folder, 0600); its secret only in the keychain (`delegate`). Only a key
 * this file names is ever changed or deleted: never one the service did not make.
 *
 * When the choice is `own` and there is no usable key (the management key refused, a create that failed, the
 * secret lost), `key()` is null and `problem` says why: delegates are refused rather than sent with the user's
 * key, which the user chose not to hand them. A PATCH that fails leaves the key with its previous limit (still a
 * cap) and is reported and tried again at the next sync.
 */
import { ServiceError } from '../../contract/index.js';
import type { DelegateKeyStatus, KeySource } from '../../contract/index.js';
import { errorMessage } from '../../common/errors.js';
import { readFileIfExists, writeFileAtomic } from '../fs/atomic-write.js';
import type { OpenRouterClient } from '../openrouter/client.js';
import type { SecretStore } from '../secrets/secret-store.js';

/** What OpenRouter's key list shows, so the user knows where the key came from. */
export const DELEGATE_KEY_NAME = 'OpenRouter Delegate: delegates (made by the service, limited to the day budget)';

interface DelegateKeyFile {
  mode: 'own' | 'user';
  /** The key the service made (null: none yet). */
  key: { hash: string; limitUsd: number; createdAt: string } | null;
}

export interface DelegateKeyDeps {
  client: Pick<OpenRouterClient, 'createKey' | 'updateKey' | 'deleteKey'>;
  secrets: Pick<SecretStore, 'get' | 'set' | 'remove' | 'forget'>;
  /** `delegate-key.json` in the data folder. */
  file: string;
  /** The day budget now (settings.budgets.perDayUsd): the key's limit. */
  dayBudgetUsd: () => number;
  /** Jobs still running or still being billed: a rotation waits for none (their generations are read with the old key). */
  busyJobs: () => number;
  now?: () => number;
  log?: (line: string) => void;
}

const NO_MANAGEMENT_KEY =
  'The delegate key needs a management key: add one with `openrouter-delegate key set --management` (create it at https://openrouter.ai/settings/management-keys), or turn the delegate key off with `openrouter-delegate key delegate-off`.';

export class DelegateKey {
  private readonly deps: DelegateKeyDeps;
  private readonly now: () => number;
  private state: DelegateKeyFile = { mode: 'user', key: null };
  private problemText: string | null = null;
  /** One change at a time: a sync, a switch, a rotation. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(deps: DelegateKeyDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
  }

  /** Reads `delegate-key.json` (none: the user's key, as before). */
  async load(): Promise<void> {
    const text = await readFileIfExists(this.deps.file);
    this.state = text === undefined ? { mode: 'user', key: null } : parseFile(text);
  }

  get mode(): 'own' | 'user' {
    return this.state.mode;
  }

  /** Why delegates cannot run with the delegate key now; null when they can (or the user's key is used). */
  get problem(): string | null {
    if (this.state.mode !== 'own') return null;
    if (this.problemText !== null && this.state.key === null) return this.problemText;
    if (this.state.key === null) return 'The delegate key is not made yet; the service makes it when it starts and when its day budget changes.';
    return this.secret() === null ? 'The delegate key is missing from the keychain. Make a new one with `openrouter-delegate key rotate-delegate`.' : null;
  }

  /** The key the gateway sends upstream in `own` mode; null when there is none (see `problem`). */
  key(): { value: string; source: KeySource } | null {
    if (this.state.mode !== 'own' || this.state.key === null) return null;
    const value = this.secret();
    return value === null ? null : { value, source: 'keychain' };
  }

  /**
   * The delegate key's secret, for scrubbing, whatever the mode (a key switched off is still a key). None made, none
   * asked for: a service whose key comes from OPENROUTER_API_KEY, with no keychain, asks it nothing on the hot path.
   */
  secret(): string | null {
    if (this.state.key === null) return null;
    try {
      return this.deps.secrets.get('delegate')?.value ?? null;
    } catch {
      return null;
    }
  }

  status(): DelegateKeyStatus {
    const key = this.state.key;
    return {
      mode: this.state.mode,
      hash: key?.hash ?? null,
      limitUsd: key?.limitUsd ?? null,
      limitReset: key ? 'daily' : null,
      createdAt: key?.createdAt ?? null,
      ...(this.problemText !== null || this.problem !== null ? { problem: this.problem ?? this.problemText ?? undefined } : {}),
    };
  }

  /** Chooses whose key the delegates use; `own` makes the key now, and throws what went wrong. */
  setMode(mode: 'own' | 'user'): Promise<DelegateKeyStatus> {
    return this.serial(async () => {
      this.state = { ...this.state, mode };
      await this.save();
      this.problemText = null;
      if (mode === 'own') await this.reconcile(true);
      return this.status();
    });
  }

  /** Makes the key if it is missing, and brings its limit to the day budget; never throws (see `problem`). */
  sync(): Promise<void> {
    return this.serial(async () => {
      if (this.state.mode === 'own') await this.reconcile(false);
    });
  }

  /** A new key, switched to, then the old one deleted; only when no job needs the old one to be billed. */
  rotate(): Promise<DelegateKeyStatus> {
    return this.serial(async () => {
      if (this.state.mode !== 'own')
        throw new ServiceError('invalid_params', 'The delegate key is off; turn it on with `openrouter-delegate key delegate-on`.');
      const busy = this.deps.busyJobs();
      if (busy > 0) {
        throw new ServiceError(
          'conflict',
          `${busy} job${busy === 1 ? ' is' : 's are'} still running or being billed with the current delegate key (OpenRouter's records of their requests are read with it). Rotate once they have ended.`,
        );
      }
      const old = this.state.key;
      await this.create(this.management(true) as string);
      if (old) await this.deleteMade(old.hash);
      return this.status();
    });
  }

  private async reconcile(throwing: boolean): Promise<void> {
    try {
      const management = this.management(throwing);
      if (management === null) return;
      if (this.state.key === null || this.secret() === null) {
        const lost = this.state.key;
        await this.create(management);
        if (lost) await this.deleteMade(lost.hash);
      } else if (this.state.key.limitUsd !== this.deps.dayBudgetUsd()) {
        await this.relimit(management, this.state.key.hash);
      }
      this.problemText = null;
    } catch (error) {
      this.problemText = `The delegate key could not be made or changed: ${errorMessage(error)}`;
      this.deps.log?.(`delegate key: ${this.problemText}`);
      if (throwing) throw error;
    }
  }

  private management(throwing: boolean): string | null {
    const management = this.deps.secrets.get('management')?.value ?? null;
    if (management !== null) return management;
    this.problemText = NO_MANAGEMENT_KEY;
    if (throwing) throw new ServiceError('no_key', NO_MANAGEMENT_KEY);
    return null;
  }

  /** Creates the key and keeps it: its secret in the keychain first, then its hash here (the secret is shown once). */
  private async create(management: string): Promise<void> {
    const limitUsd = this.deps.dayBudgetUsd();
    const made = await this.deps.client.createKey(management, { name: DELEGATE_KEY_NAME, limitUsd, limitReset: 'daily', includeByokInLimit: true });
    this.deps.secrets.set('delegate', made.secret);
    this.state = { ...this.state, key: { hash: made.hash, limitUsd, createdAt: new Date(this.now()).toISOString() } };
    await this.save();
    this.deps.log?.(`delegate key: made ${made.hash.slice(0, 12)}… limited to $${limitUsd}/day`);
  }

  private async relimit(management: string, hash: string): Promise<void> {
    const limitUsd = this.deps.dayBudgetUsd();
    await this.deps.client.updateKey(management, hash, { limitUsd, limitReset: 'daily', includeByokInLimit: true });
    if (this.state.key?.hash === hash) this.state = { ...this.state, key: { ...this.state.key, limitUsd } };
    await this.save();
    this.deps.log?.(`delegate key: limit now $${limitUsd}/day`);
  }

  /** Deletes a key this service made (by the hash it kept); a failure is logged, not thrown: the new key is in use. */
  private async deleteMade(hash: string): Promise<void> {
    try {
      const management = this.deps.secrets.get('management')?.value;
      if (!management) throw new ServiceError('no_key', 'no management key');
      await this.deps.client.deleteKey(management, hash);
    } catch (error) {
      this.deps.log?.(
        `delegate key: the old key ${hash.slice(0, 12)}… could not be deleted (${errorMessage(error)}); delete it at https://openrouter.ai/settings/keys`,
      );
    }
  }

  private async save(): Promise<void> {
    await writeFileAtomic(this.deps.file, `${JSON.stringify(this.state, null, 2)}\n`, { mode: 0o600 });
  }

  private serial<T>(step: () => Promise<T>): Promise<T> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

function parseFile(text: string): DelegateKeyFile {
  try {
    const value = JSON.parse(text) as Partial<DelegateKeyFile>;
    const key = value.key;
    const validKey =
      key && typeof key.hash === 'string' && typeof key.limitUsd === 'number' && typeof key.createdAt === 'string'
        ? { hash: key.hash, limitUsd: key.limitUsd, createdAt: key.createdAt }
        : null;
    return { mode: value.mode === 'own' ? 'own' : 'user', key: validKey };
  } catch {
    // Only the service writes this file, so one that exists was written when the delegate key was on: it stays on
    // (the user's key is not sent silently), and a new key is made; the one the file named, unknown now, is left alone.
    return { mode: 'own', key: null };
  }
}
