/**
 * A job's gateway token (docs/ARCHITECTURE.md §11): what its delegate holds instead of the OpenRouter key.
 * Random, one per job, good only while that job runs and only at the gateway; the service keeps its hash.
 */
import { createHash, randomBytes } from 'node:crypto';

export function newJobToken(): string {
  return `ordg-${randomBytes(32).toString('base64url')}`;
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
