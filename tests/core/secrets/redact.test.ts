import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src-main/contract/protocol.js';
import { REDACTED, holdsSecret, scrubDeep, scrubError, scrubSecrets } from '../../../src-main/core/secrets/redact.js';

/** A made-up key of OpenRouter's shape, built here so no key-shaped literal is tracked. */
const KEY = `sk-or-v1-${'7e57'.repeat(10)}`;

describe('scrubSecrets', () => {
  it('replaces the current key by its value, and anything shaped like an OpenRouter key', () => {
    expect(scrubSecrets(`key=${KEY}; other sk-or-v1-ffff and more`, KEY)).toBe(`key=${REDACTED}; other sk-or-${REDACTED} and more`);
  });

  it('replaces a current key of another shape only by its value', () => {
    expect(scrubSecrets('token custom-key-12345 here', 'custom-key-12345')).toBe(`token ${REDACTED} here`);
  });

  it("replaces a job's gateway token by its shape (its programs can print it), and nothing merely like it", async () => {
    const { newJobToken } = await import('../../../src-main/core/gateway/job-token.js');
    const token = newJobToken();
    expect(scrubSecrets(`token=${token}\n`, null)).toBe(`token=ordg-${REDACTED}\n`);
    expect(scrubSecrets('ordg-short and xordg-' + 'a'.repeat(43), null)).toBe('ordg-short and xordg-' + 'a'.repeat(43));
    expect(scrubSecrets('ordg-' + 'a'.repeat(44), null)).toBe('ordg-' + 'a'.repeat(44));
  });

  it('leaves words that only contain the shape, and keys too short to be keys, alone', () => {
    expect(scrubSecrets('a risk-or-reward model', null)).toBe('a risk-or-reward model');
    expect(scrubSecrets('a b c', 'a')).toBe('a b c');
  });

  it("replaces each of several keys by value: the user's key and the delegate key the service made", () => {
    const user = 'user-key-not-shaped-0001';
    const delegate = 'delegate-key-not-shaped-0002';
    expect(scrubSecrets(`a ${user} b ${delegate} c`, [user, delegate, null])).toBe(`a ${REDACTED} b ${REDACTED} c`);
    expect(scrubDeep({ note: delegate }, [user, delegate])).toEqual({ note: REDACTED });
    expect((scrubError(new Error(`echo ${delegate}`), [user, delegate]) as Error).message).toBe(`echo ${REDACTED}`);
  });

  it('says whether text holds a secret', () => {
    expect(holdsSecret(`x ${KEY}`, null)).toBe(true);
    expect(holdsSecret('nothing here', KEY)).toBe(false);
  });
});

describe('scrubDeep', () => {
  it('scrubs every string of a value, names included, and returns what holds nothing unchanged', () => {
    const value = { job: { promptPreview: `use ${KEY}`, tail: [{ text: KEY }], [KEY]: 1 }, n: 3, ok: true, none: null };
    const clean = scrubDeep(value, KEY);
    expect(JSON.stringify(clean)).not.toContain(KEY);
    expect(clean.n).toBe(3);
    expect(clean.job.tail[0]?.text).toBe(REDACTED);
    const untouched = { a: ['x', { b: 'y' }] };
    expect(scrubDeep(untouched, KEY)).toBe(untouched);
  });
});

describe('scrubError', () => {
  it("keeps a ServiceError's code and retry hint, without the key in message or stack", () => {
    const error = new ServiceError('openrouter_rate_limited', `slow down ${KEY}`, { retryAfterSeconds: 7 });
    const clean = scrubError(error, KEY) as ServiceError;
    expect(clean).toBeInstanceOf(ServiceError);
    expect(clean.code).toBe('openrouter_rate_limited');
    expect(clean.retryAfterSeconds).toBe(7);
    expect(`${clean.message}${clean.stack ?? ''}`).not.toContain(KEY);
  });

  it("keeps a ServiceError's next step, without the key in its params", () => {
    const error = new ServiceError('not_found', `No job ${KEY}.`, { next: { method: 'jobs.status', params: { jobId: KEY } } });
    const clean = scrubError(error, KEY) as ServiceError;
    expect(clean.next).toEqual({ method: 'jobs.status', params: { jobId: REDACTED } });
    expect(clean.message).not.toContain(KEY);
  });

  it('returns an error that holds nothing as it is', () => {
    const error = new Error('plain');
    expect(scrubError(error, KEY)).toBe(error);
  });
});

describe("OpenRouter's masked label", () => {
  it('is left as it is, so the key shows one way on every surface; a key before dots is not', () => {
    expect(scrubSecrets('key sk-or-v1-726...f5c, limit $5')).toBe('key sk-or-v1-726...f5c, limit $5');
    expect(scrubSecrets('sk-or-v1-acc…000')).toBe('sk-or-v1-acc…000');
    expect(scrubSecrets(`sk-or-v1-${'ab'.repeat(32)}...`)).toBe('sk-or-[redacted]...');
    expect(scrubSecrets('sk-or-v1-abcde...')).toBe('sk-or-[redacted]...');
  });
});
