/**
 * OpenRouter REST client: models, key, credits, generation (docs/ARCHITECTURE.md §5, §4 cost), and the key
 * management a management key may do (`/v1/keys`: create, update, delete), for the delegate key the service makes.
 *
 * Every failure becomes a ServiceError whose message says what to do. The key is a secret: it
 * is scrubbed from anything OpenRouter echoes back, and raw fetch errors (which can carry request
 * headers) are never attached as `cause`.
 */
import type { KeyBalance } from '../../contract/methods.js';
import { ServiceError } from '../../contract/protocol.js';
import { scrubSecrets } from '../secrets/redact.js';
import { isRecord } from '../../common/errors.js';
import { formatDuration, formatMs, truncateEnd } from '../../common/format.js';
import { booleanOrNull, keyPath, limitResetOrNull, managedKey, numberOrNull, stringOrNull } from './managed-keys.js';
import type { ManagedKey, NewKey } from './managed-keys.js';

export type { ManagedKey, NewKey };

// The CLI's errors are scrubbed with the same function; it lives with the secrets.
export { scrubSecrets };

export const DEFAULT_APP_URL = 'https://github.com/openrouter-delegate/openrouter-delegate';
export const DEFAULT_APP_TITLE = 'OpenRouter Delegate';
export const DEFAULT_TIMEOUT_MS = 15_000;

export interface OpenRouterClientDeps {
  /** API root, e.g. https://openrouter.ai/api; REST lives under `${baseUrl}/v1/…`. */
  baseUrl: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  appTitle?: string;
  appUrl?: string;
  /** Clock for HTTP-date Retry-After values. */
  now?: () => number;
  /** Told when OpenRouter refuses a key (401): the service then reads its keys afresh. */
  onUnauthorized?: () => void;
}

export interface AccountCredits {
  totalUsd: number;
  usedUsd: number;
  remainingUsd: number;
}

/** What OpenRouter billed for one generation (`gen-…`). */
export interface GenerationRecord {
  id: string;
  totalCostUsd: number;
  model: string | null;
  providerName: string | null;
  createdAt: string | null;
  tokensPrompt: number | null;
  tokensCompletion: number | null;
  nativeTokensPrompt: number | null;
  nativeTokensCompletion: number | null;
  nativeTokensReasoning: number | null;
  nativeTokensCached: number | null;
  cancelled: boolean | null;
  finishReason: string | null;
}

const KEYS_PAGE = 'https://openrouter.ai/settings/keys';
const MANAGEMENT_KEYS_PAGE = 'https://openrouter.ai/settings/management-keys';
/** How the user sets the key again; one place, so the wording follows the CLI. */
export const SET_KEY_HINT = '`openrouter-delegate key set`';
const CREDITS_PAGE = 'https://openrouter.ai/settings/credits';
/** Header values must be visible ASCII; anything else would make fetch throw with the value in its message. */
const SENDABLE_KEY = /^[\x21-\x7e]+$/;

type Json = Record<string, unknown>;

interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Sent as JSON. */
  body?: Json;
  key?: string;
  query?: Record<string, string>;
  /** Statuses handed back to the caller instead of thrown (e.g. 404 for a generation not yet recorded). */
  passStatuses?: readonly number[];
}

interface JsonResponse {
  status: number;
  body: unknown;
}

/** Money from float sums: 610 - 321.725553332 is 288.274446668, not 288.27444666800003. */
function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}

function openRouterMessage(body: unknown, key: string | undefined): string | null {
  const error = isRecord(body) ? body.error : undefined;
  const message = isRecord(error) ? error.message : undefined;
  if (typeof message !== 'string' || message.trim() === '') return null;
  const clean = scrubSecrets(message.trim(), key);
  return truncateEnd(clean, 301);
}

function withOpenRouterSays(message: string, said: string | null): string {
  return said === null ? message : `${message} OpenRouter said: "${said}"`;
}

/** Retry-After is either delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed));
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed unexpectedly',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

/** Only a code from the cause is used: fetch error messages may quote request headers. */
function networkReason(error: unknown): string {
  const cause = error instanceof Error ? (error as Error & { cause?: unknown }).cause : undefined;
  const code = isRecord(cause) && typeof cause.code === 'string' ? cause.code : undefined;
  if (code === undefined) return 'network error';
  if (/CERT|SSL|TLS/.test(code)) return `TLS problem: ${code}`;
  return NETWORK_REASONS[code] ?? code;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

export class OpenRouterClient {
  private readonly baseUrl: string;
  private readonly host: string;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;
  private readonly appTitle: string;
  private readonly appUrl: string;
  private readonly now: () => number;
  private readonly onUnauthorized: (() => void) | undefined;

  constructor(deps: OpenRouterClientDeps) {
    this.baseUrl = deps.baseUrl.replace(/\/+$/, '');
    this.host = new URL(this.baseUrl).host;
    this.fetchFn = deps.fetch ?? globalThis.fetch;
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.appTitle = deps.appTitle ?? DEFAULT_APP_TITLE;
    this.appUrl = deps.appUrl ?? DEFAULT_APP_URL;
    this.now = deps.now ?? Date.now;
    this.onUnauthorized = deps.onUnauthorized;
  }

  /** The raw `GET /v1/models` body; parsing is the catalog's job. No key needed. */
  async listModels(key?: string): Promise<unknown> {
    const response = await this.request('/v1/models', key === undefined ? {} : { key });
    return response.body;
  }

  async getKeyInfo(key: string): Promise<KeyBalance> {
    const { body } = await this.request('/v1/key', { key });
    const info = keyInfoObject(body);
    if (info === null) throw badResponse('/v1/key', 'it is not a key description');
    return {
      label: stringOrNull(info.label),
      limitUsd: numberOrNull(info.limit),
      remainingUsd: numberOrNull(info.limit_remaining),
      limitReset: limitResetOrNull(info.limit_reset),
      usageUsd: numberOrNull(info.usage),
      usageDailyUsd: numberOrNull(info.usage_daily),
      usageWeeklyUsd: numberOrNull(info.usage_weekly),
      usageMonthlyUsd: numberOrNull(info.usage_monthly),
      isFreeTier: booleanOrNull(info.is_free_tier),
    };
  }

  /** Account credits; OpenRouter answers 403 unless the key is a management key. */
  async getCredits(managementKey: string): Promise<AccountCredits> {
    const { body } = await this.request('/v1/credits', { key: managementKey });
    const data = isRecord(body) && isRecord(body.data) ? body.data : null;
    const total = numberOrNull(data?.total_credits);
    const used = numberOrNull(data?.total_usage);
    if (total === null || used === null) throw badResponse('/v1/credits', 'total_credits or total_usage is missing');
    return { totalUsd: total, usedUsd: used, remainingUsd: roundUsd(total - used) };
  }

  /** The billed record of one generation, or null while OpenRouter has not recorded it yet (404). */
  async getGeneration(key: string, id: string): Promise<GenerationRecord | null> {
    const { status, body } = await this.request('/v1/generation', { key, query: { id }, passStatuses: [404] });
    if (status === 404) return null;
    const data = isRecord(body) && isRecord(body.data) ? body.data : null;
    const totalCost = numberOrNull(data?.total_cost);
    if (data === null || totalCost === null) throw badResponse('/v1/generation', 'total_cost is missing');
    return {
      id: stringOrNull(data.id) ?? id,
      totalCostUsd: totalCost,
      model: stringOrNull(data.model),
      providerName: stringOrNull(data.provider_name),
      createdAt: stringOrNull(data.created_at),
      tokensPrompt: numberOrNull(data.tokens_prompt),
      tokensCompletion: numberOrNull(data.tokens_completion),
      nativeTokensPrompt: numberOrNull(data.native_tokens_prompt),
      nativeTokensCompletion: numberOrNull(data.native_tokens_completion),
      nativeTokensReasoning: numberOrNull(data.native_tokens_reasoning),
      nativeTokensCached: numberOrNull(data.native_tokens_cached),
      cancelled: booleanOrNull(data.cancelled),
      finishReason: stringOrNull(data.finish_reason),
    };
  }

  /**
   * Creates a key with a management key (`POST /v1/keys`, 201). The answer is the only time OpenRouter gives the
   * new key's secret: the caller keeps it or loses it.
   */
  async createKey(managementKey: string, key: NewKey): Promise<ManagedKey & { secret: string }> {
    const { body } = await this.request('/v1/keys', {
      method: 'POST',
      key: managementKey,
      body: { name: key.name, limit: key.limitUsd, limit_reset: key.limitReset, include_byok_in_limit: key.includeByokInLimit },
    });
    const secret = isRecord(body) ? stringOrNull(body.key) : null;
    const managed = managedKey(body);
    if (managed === null || secret === null || !SENDABLE_KEY.test(secret)) throw badResponse('/v1/keys', 'the new key or its hash is missing', 'POST');
    return { ...managed, secret };
  }

  /** Changes a key's limit (or name, or whether it is disabled) by its hash (`PATCH /v1/keys/{hash}`). */
  async updateKey(
    managementKey: string,
    hash: string,
    change: Partial<Pick<NewKey, 'name' | 'limitUsd' | 'limitReset' | 'includeByokInLimit'>> & { disabled?: boolean },
  ): Promise<ManagedKey> {
    const body: Json = {};
    if (change.name !== undefined) body.name = change.name;
    if (change.limitUsd !== undefined) body.limit = change.limitUsd;
    if (change.limitReset !== undefined) body.limit_reset = change.limitReset;
    if (change.includeByokInLimit !== undefined) body.include_byok_in_limit = change.includeByokInLimit;
    if (change.disabled !== undefined) body.disabled = change.disabled;
    const path = keyPath(hash);
    const answer = await this.request(path, { method: 'PATCH', key: managementKey, body });
    const managed = managedKey(answer.body);
    if (managed === null) throw badResponse(path, 'it does not describe a key', 'PATCH');
    return managed;
  }

  /** Deletes a key by its hash (`DELETE /v1/keys/{hash}`); false when OpenRouter has no such key (404). */
  async deleteKey(managementKey: string, hash: string): Promise<boolean> {
    const { status } = await this.request(keyPath(hash), { method: 'DELETE', key: managementKey, passStatuses: [404] });
    return status !== 404;
  }

  private headers(key: string | undefined, json: boolean): Record<string, string> {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      ...(json ? { 'Content-Type': 'application/json' } : {}),
      'HTTP-Referer': this.appUrl,
      'X-Title': this.appTitle,
    };
    if (key !== undefined) headers.Authorization = `Bearer ${key}`;
    return headers;
  }

  private async request(path: string, options: RequestOptions): Promise<JsonResponse> {
    const { key } = options;
    const method = options.method ?? 'GET';
    if (key !== undefined && !SENDABLE_KEY.test(key)) throw unsendableKey();
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
    let status: number;
    let retryAfter: string | null;
    let text: string;
    try {
      const response = await this.fetchFn(url, {
        method,
        headers: this.headers(key, options.body !== undefined),
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = response.status;
      retryAfter = response.headers.get('retry-after');
      text = await response.text();
    } catch (error) {
      throw this.transportError(`${method} ${path}`, error);
    }
    const body = parseJson(text);
    if ((status >= 200 && status < 300) || options.passStatuses?.includes(status)) {
      if (body === undefined) throw badResponse(path, 'it is not JSON', method);
      return { status, body };
    }
    if (status === 401) this.onUnauthorized?.();
    throw this.statusError(path, status, openRouterMessage(body, key), retryAfter, method);
  }

  private transportError(request: string, error: unknown): ServiceError {
    if (isTimeout(error)) {
      return new ServiceError(
        'openrouter_timeout',
        `OpenRouter did not answer ${request} within ${formatMs(this.timeoutMs)}. It may be slow or overloaded; try again in a minute.`,
      );
    }
    return new ServiceError(
      'openrouter_unreachable',
      `Cannot reach OpenRouter at ${this.host} (${networkReason(error)}). Check your network connection, and OPENROUTER_BASE_URL if you set it.`,
    );
  }

  private statusError(path: string, status: number, said: string | null, retryAfter: string | null, method: string): ServiceError {
    if (status === 401) {
      return new ServiceError(
        'openrouter_unauthorized',
        withOpenRouterSays(`OpenRouter rejected the key (401). Check it at ${KEYS_PAGE}, then set it again with ${SET_KEY_HINT}.`, said),
      );
    }
    if (status === 402) {
      return new ServiceError(
        'openrouter_payment_required',
        withOpenRouterSays(
          `OpenRouter says the account is out of credits or the key is over its limit (402). Top up at ${CREDITS_PAGE}, or raise the key's limit at ${KEYS_PAGE}.`,
          said,
        ),
      );
    }
    if (status === 403) return forbidden(path, said, method);
    if (status === 429) {
      const seconds = parseRetryAfter(retryAfter, this.now());
      const wait = seconds === undefined ? 'Wait a little' : `Wait ${formatDuration(seconds)}`;
      return new ServiceError(
        'openrouter_rate_limited',
        withOpenRouterSays(`OpenRouter is rate-limiting requests (429). ${wait}, then try again.`, said),
        seconds === undefined ? undefined : { retryAfterSeconds: seconds },
      );
    }
    if (status >= 500) {
      return new ServiceError(
        'openrouter_server_error',
        withOpenRouterSays(
          `OpenRouter had a server error (${status}) on ${method} ${path}. Try again in a minute; https://status.openrouter.ai shows outages.`,
          said,
        ),
      );
    }
    if (status === 404) {
      return new ServiceError(
        'openrouter_bad_response',
        withOpenRouterSays(
          `OpenRouter has no ${method} ${path} here (404). If OPENROUTER_BASE_URL is set, check that it points at the API root (e.g. https://openrouter.ai/api).`,
          said,
        ),
      );
    }
    return new ServiceError('openrouter_bad_response', withOpenRouterSays(`OpenRouter answered ${method} ${path} with an unexpected status ${status}.`, said));
  }
}

function keyInfoObject(body: unknown): Json | null {
  if (!isRecord(body)) return null;
  // Current API: `{ data: {...} }`; older answers (and some clients' captures) are the bare object.
  const info = isRecord(body.data) ? body.data : body;
  const known = ['label', 'limit', 'usage', 'limit_remaining', 'is_free_tier'];
  return known.some((name) => name in info) ? info : null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function badResponse(path: string, what: string, method = 'GET'): ServiceError {
  return new ServiceError(
    'openrouter_bad_response',
    `OpenRouter's answer to ${method} ${path} could not be used (${what}). If OPENROUTER_BASE_URL is set, check that it points at the OpenRouter API; otherwise try again later.`,
  );
}

function forbidden(path: string, said: string | null, method: string): ServiceError {
  if (path === '/v1/credits') {
    return new ServiceError(
      'openrouter_forbidden',
      withOpenRouterSays(
        `Account credits need a management key (403): a normal API key can only see its own limit and usage. Create one at ${MANAGEMENT_KEYS_PAGE} and add it in Settings → Account to see them.`,
        said,
      ),
    );
  }
  if (path.startsWith('/v1/keys')) {
    return new ServiceError(
      'openrouter_forbidden',
      withOpenRouterSays(
        `OpenRouter refused ${method} ${path} (403): making and changing keys needs a management key. Create one at ${MANAGEMENT_KEYS_PAGE} and set it with \`openrouter-delegate key set --management\`.`,
        said,
      ),
    );
  }
  return new ServiceError(
    'openrouter_forbidden',
    withOpenRouterSays(`OpenRouter refused ${method} ${path} for this key (403). Check the key's permissions at ${KEYS_PAGE}.`, said),
  );
}

function unsendableKey(): ServiceError {
  return new ServiceError(
    'openrouter_unauthorized',
    'The OpenRouter key contains spaces, line breaks or other characters a key cannot have. Copy it again from ' +
      `${KEYS_PAGE} and set it with ${SET_KEY_HINT}.`,
  );
}
