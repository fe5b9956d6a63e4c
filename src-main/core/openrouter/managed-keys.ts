/**
 * What the management API (`/v1/keys`) says about a key, read without its secret; and the one way a hash goes into
 * a path; and the readers of JSON fields the client shares. The client (client.ts) makes the requests.
 */
import type { LimitReset } from '../../contract/methods.js';
import { ServiceError } from '../../contract/protocol.js';
import { isRecord } from '../../common/errors.js';

export function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function booleanOrNull(value: unknown): boolean | null {
  return typeof value === 'boolean' ? value : null;
}

/** What a new key is made with (OpenRouter's `POST /v1/keys`); a limit resets at midnight UTC. */
export interface NewKey {
  name: string;
  limitUsd: number;
  limitReset: LimitReset | null;
  includeByokInLimit: boolean;
}

/** A key as the management API describes it: never its secret, which only `createKey` returns, once. */
export interface ManagedKey {
  /** How OpenRouter names the key in `/v1/keys/{hash}`. */
  hash: string;
  name: string | null;
  limitUsd: number | null;
  limitReset: LimitReset | null;
  disabled: boolean | null;
}

const LIMIT_RESETS: readonly unknown[] = ['daily', 'weekly', 'monthly'];

export function limitResetOrNull(value: unknown): LimitReset | null {
  return LIMIT_RESETS.includes(value) ? (value as LimitReset) : null;
}

/** `/v1/keys/{hash}`: a hash is OpenRouter's hex digest; anything else is never put into a path. */
export function keyPath(hash: string): string {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(hash)) throw new ServiceError('invalid_params', 'That is not the hash of an OpenRouter key.');
  return `/v1/keys/${hash}`;
}

/** The `data` of a `/v1/keys` answer, without anything secret. */
export function managedKey(body: unknown): ManagedKey | null {
  const data = isRecord(body) && isRecord(body.data) ? body.data : null;
  const hash = stringOrNull(data?.hash);
  if (data === null || hash === null || hash === '') return null;
  return {
    hash,
    name: stringOrNull(data.name),
    limitUsd: numberOrNull(data.limit),
    limitReset: limitResetOrNull(data.limit_reset),
    disabled: booleanOrNull(data.disabled),
  };
}
