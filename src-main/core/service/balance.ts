/**
 * The balance (docs/ARCHITECTURE.md §5): `/v1/key` with the normal key, `/v1/credits` only with a
 * management key. Cached briefly so a burst of tool calls costs one request, and refreshed on demand.
 */
import { ServiceError } from '../../contract/index.js';
import type { Balance, SecretKind } from '../../contract/index.js';
import type { OpenRouterClient } from '../openrouter/client.js';
import type { SecretStore } from '../secrets/secret-store.js';

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
    this.maxAgeMs = deps.maxAgeMs ?? 60_000;
  }

  /** Forget the cached balance (the key changed, a job ended). */
  invalidate(): void {
    this.cached = null;
  }

  /**
   * The balance: the cached copy while it is younger than maxAgeMs, else read from OpenRouter. With `maxStaleMs`, a
   * copy older than maxAgeMs but younger than that is served at once and read again behind it (stale while
   * revalidate): for a caller that must not wait on a round trip to OpenRouter, and checks again before it refuses on
   * what the copy says (admission.ts). `refresh` reads it now whatever the copy's age.
   */
  async get(options: { refresh?: boolean; maxStaleMs?: number } = {}): Promise<Balance> {
    const age = this.cached ? this.now() - this.cached.at : Infinity;
    if (!options.refresh && this.cached && age < this.maxAgeMs) return this.cached.balance;
    if (!options.refresh && this.cached && options.maxStaleMs !== undefined && age < options.maxStaleMs) {
      // A read that fails keeps the copy and says so in its own place (the balance's problem), on the next read.
      this.read().catch(() => undefined);
      return this.cached.balance;
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
