/**
 * The balance (docs/ARCHITECTURE.md §5): `/v1/key` with the normal key, `/v1/credits` only with a
 * management key. Cached briefly so a burst of tool calls costs one request, and refreshed on demand.
 */
import { ServiceError } from '../../contract/index.js';
import type { Balance, SecretKind } from '../../contract/index.js';
import type { OpenRouterClient } from '../openrouter/client.js';
import type { SecretStore } from '../secrets/secret-store.js';
import { BALANCE_MAX_AGE_MS } from '../jobs/money/budget.js';

export interface BalanceMonitorDeps {
  client: Pick<OpenRouterClient, 'getKeyInfo' | 'getCredits'>;
  secrets: Pick<SecretStore, 'get'>;
  now?: () => number;
  /** A cached balance younger than this is served without asking OpenRouter. */
  maxAgeMs?: number;
}

function problemOf(error: unknown): string {
  return error instanceof ServiceError ? error.message : 'The balance could not be read (unexpected error).';
}

export class BalanceMonitor {
  private readonly deps: BalanceMonitorDeps;
  private readonly now: () => number;
  private readonly maxAgeMs: number;
  private cached: { at: number; balance: Balance } | null = null;
  private inFlight: Promise<Balance> | null = null;

  constructor(deps: BalanceMonitorDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
    this.maxAgeMs = deps.maxAgeMs ?? BALANCE_MAX_AGE_MS;
  }

  /** Forget the cached balance (the key changed, a job ended). */
  invalidate(): void {
    this.cached = null;
  }

  /**
   * The balance: the cached copy while it is younger than maxAgeMs, else read from OpenRouter. With `stale`, an older
   * copy with figures is served at once when it is younger than `stale.maxMs` and was read at or after
   * `stale.notBefore`, and is read again behind it (stale while revalidate): for admission (admission.ts), which must
   * not wait on a round trip to OpenRouter, knows what its copy cannot (when the service last spent), and reads again
   * before it refuses on a copy. `refresh` reads it now whatever the copy's age. A read that fails is the new copy
   * too: its figures are gone, and its problem says why.
   */
  async get(options: { refresh?: boolean; stale?: { maxMs: number; notBefore: number } } = {}): Promise<Balance> {
    const { refresh, stale } = options;
    const cached = this.cached;
    if (!refresh && cached && this.now() - cached.at < this.maxAgeMs) return cached.balance;
    // Not a copy without figures (a read that failed): that would start jobs with no balance to check them against.
    const figures = cached !== null && (cached.balance.key !== null || cached.balance.credits !== null);
    if (!refresh && cached && stale && figures && this.now() - cached.at < stale.maxMs && cached.at >= stale.notBefore) {
      this.read().catch(() => undefined);
      return cached.balance;
    }
    return this.read();
  }

  /** One read of OpenRouter at a time: a burst of callers shares it. */
  private read(): Promise<Balance> {
    this.inFlight ??= this.fetch().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private secret(kind: SecretKind): { value: string; source: Balance['keySource'] } | { problem: string } | null {
    try {
      return this.deps.secrets.get(kind);
    } catch (error) {
      return { problem: problemOf(error) };
    }
  }

  private async fetch(): Promise<Balance> {
    const at = this.now();
    const api = this.secret('api');
    const balance: Balance = { keySource: 'none', key: null, credits: null, fetchedAt: new Date(at).toISOString() };
    if (api === null) {
      balance.keyProblem = 'No OpenRouter key. Run `openrouter-delegate key set` (or open Settings → Account) to add one.';
    } else if ('problem' in api) {
      balance.keyProblem = api.problem;
    } else {
      balance.keySource = api.source;
      try {
        balance.key = await this.deps.client.getKeyInfo(api.value);
      } catch (error) {
        balance.keyProblem = problemOf(error);
        if (error instanceof ServiceError) balance.keyProblemCode = error.code;
      }
    }
    const management = this.secret('management');
    if (management === null) {
      balance.creditsNote = 'Account credits need a management key (optional): `openrouter-delegate key set --management`.';
    } else if ('problem' in management) {
      balance.creditsNote = management.problem;
    } else {
      try {
        balance.credits = await this.deps.client.getCredits(management.value);
      } catch (error) {
        balance.creditsNote = problemOf(error);
      }
    }
    this.cached = { at, balance };
    return balance;
  }
}
