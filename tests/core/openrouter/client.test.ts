import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceError } from '../../../src-main/contract/protocol.js';
import { OpenRouterClient } from '../../../src-main/core/openrouter/client.js';
import type { OpenRouterClientDeps } from '../../../src-main/core/openrouter/client.js';
import { CREDITS_FORBIDDEN_MESSAGE, FakeOpenRouter, readFixture, readJsonFixture } from '../../support/fake-openrouter.js';
import { serviceFailure } from '../../support/service-failure.js';

// Built, not written out: a literal key-shaped string in the repository looks like a leaked key to scanners.
const KEY = `sk-or-v1-${'0123456789abcdef'.repeat(3)}0123456789ab`;
const MANAGEMENT_KEY = 'sk-or-v1-management0123456789abcdef0123456789abcdef0123456789abcd';
const UNKNOWN_KEY = 'sk-or-v1-unknown00000000000000000000000000000000000000000000000000';

/** The deadline the timeout tests wait out, far shorter than the service's. */
const TIMEOUT_MS = 50;

let fake: FakeOpenRouter;
let clock: number;

function client(overrides: Partial<OpenRouterClientDeps> = {}): OpenRouterClient {
  return new OpenRouterClient({ baseUrl: fake.baseUrl, timeoutMs: 5_000, now: () => clock, ...overrides });
}

const failure = serviceFailure;

/** Everything an error could leak through: message, stack, wire form and the cause chain. */
function everythingIn(error: ServiceError): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current instanceof Error) {
    parts.push(current.message, current.stack ?? '', JSON.stringify(current), String(current));
    current = (current as Error & { cause?: unknown }).cause;
  }
  if (current !== undefined) parts.push(String(current));
  parts.push(JSON.stringify(error.toWire()));
  return parts.join('\n');
}

async function closedPortBaseUrl(): Promise<string> {
  const closed = new FakeOpenRouter();
  await closed.start();
  const url = closed.baseUrl;
  await closed.stop();
  return url;
}

beforeEach(async () => {
  clock = Date.parse('2026-08-20T12:00:00Z');
  fake = new FakeOpenRouter({ now: () => clock });
  fake.addKey(KEY);
  fake.addKey(MANAGEMENT_KEY, { management: true });
  await fake.start();
});

afterEach(async () => {
  await fake.stop();
});

describe('OpenRouterClient requests', () => {
  it('returns the raw /v1/models body', async () => {
    const body = (await client().listModels()) as { data: unknown[] };
    expect(body.data).toHaveLength(414);
  });

  it('sends the attribution headers on every request', async () => {
    await client().listModels();
    await client().getKeyInfo(KEY);
    expect(fake.requests.map((r) => [r.headers['http-referer'], r.headers['x-title']])).toEqual([
      ['https://github.com/openrouter-delegate/openrouter-delegate', 'OpenRouter Delegate'],
      ['https://github.com/openrouter-delegate/openrouter-delegate', 'OpenRouter Delegate'],
    ]);
  });

  it('sends the configured app title and URL', async () => {
    await client({ appTitle: 'Test Title', appUrl: 'https://example.test/app' }).listModels();
    expect(fake.requests[0]?.headers).toMatchObject({ 'http-referer': 'https://example.test/app', 'x-title': 'Test Title' });
  });

  it('lists models without Authorization when no key is given', async () => {
    await client().listModels();
    expect(fake.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('sends the key as a bearer token when one is given', async () => {
    await client().listModels(KEY);
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('accepts a base URL with a trailing slash', async () => {
    await client({ baseUrl: `${fake.baseUrl}/` }).listModels();
    expect(fake.requests[0]?.path).toBe('/api/v1/models');
  });
});

describe('OpenRouterClient.getKeyInfo', () => {
  it('maps the current { data } shape', async () => {
    fake.respondNext('/api/v1/key', { status: 200, body: readJsonFixture('key-2026.json') });
    expect(await client().getKeyInfo(KEY)).toEqual({
      label: 'sk-or-v1-726...f5c',
      limitUsd: 1,
      remainingUsd: 0.8246643901,
      limitReset: null,
      usageUsd: 0.1753356099,
      usageDailyUsd: 0,
      usageWeeklyUsd: 0,
      usageMonthlyUsd: 0,
      isFreeTier: false,
    });
  });

  it('maps the older bare object with no limit, missing fields as null', async () => {
    fake.respondNext('/api/v1/key', { status: 200, body: readJsonFixture('key-data-2025.json') });
    expect(await client().getKeyInfo(KEY)).toEqual({
      label: 'sk-or-v1-0fa...240',
      limitUsd: null,
      limitReset: null,
      remainingUsd: null,
      usageUsd: 0.65017511,
      usageDailyUsd: null,
      usageWeeklyUsd: null,
      usageMonthlyUsd: null,
      isFreeTier: false,
    });
  });

  it('maps the key shape recorded in credits-and-key-shapes.jsonl', async () => {
    const line = readFixture('credits-and-key-shapes.jsonl')
      .split('\n')
      .map((text) => (text.trim() ? (JSON.parse(text) as { endpoint: string; status: number; body: unknown }) : null))
      .find((entry) => entry?.endpoint === 'GET /api/v1/key' && entry.status === 200);
    fake.respondNext('/api/v1/key', { status: 200, body: line?.body });
    expect(await client().getKeyInfo(KEY)).toMatchObject({
      limitUsd: 300,
      remainingUsd: 73.49,
      usageUsd: 226.51,
      usageDailyUsd: 0.11,
      usageWeeklyUsd: 19.44,
      usageMonthlyUsd: 5.74,
    });
  });

  it('reads the key the fake server knows', async () => {
    expect(await client().getKeyInfo(KEY)).toMatchObject({ label: 'sk-or-v1-012...9ab', limitUsd: 1 });
  });

  it('rejects a body that does not describe a key as openrouter_bad_response', async () => {
    fake.respondNext('/api/v1/key', { status: 200, body: [1, 2, 3] });
    expect((await failure(client().getKeyInfo(KEY))).code).toBe('openrouter_bad_response');
  });
});

describe('OpenRouterClient.getCredits', () => {
  it('reads totals with a management key and computes what remains', async () => {
    expect(await client().getCredits(MANAGEMENT_KEY)).toEqual({ totalUsd: 610, usedUsd: 321.725553332, remainingUsd: 288.274446668 });
  });

  it('turns the 403 for a normal key into openrouter_forbidden', async () => {
    expect((await failure(client().getCredits(KEY))).code).toBe('openrouter_forbidden');
  });

  it('says a management key is needed, quoting OpenRouter', async () => {
    const error = await failure(client().getCredits(KEY));
    expect(error.message).toMatch(/^Account credits need a management key \(403\).*OpenRouter said: "Only management keys can fetch credits for an account"$/);
  });

  it('rejects credits without totals as openrouter_bad_response', async () => {
    fake.respondNext('/api/v1/credits', { status: 200, body: { data: { total_credits: 10 } } });
    expect((await failure(client().getCredits(MANAGEMENT_KEY))).code).toBe('openrouter_bad_response');
  });
});

describe('OpenRouterClient.getGeneration', () => {
  const ID = 'gen-1782395748-RbpAzhCNny8TxgUgPC4P';

  it('returns null while the generation is not recorded yet (404)', async () => {
    fake.addGeneration({ id: ID, visibleAfterMs: 5_000 });
    expect(await client().getGeneration(KEY, ID)).toBeNull();
  });

  it('returns the record once it has appeared', async () => {
    fake.addGeneration({ id: ID, visibleAfterMs: 5_000, totalCost: 0.0123 });
    clock += 5_000;
    expect(await client().getGeneration(KEY, ID)).toMatchObject({ id: ID, totalCostUsd: 0.0123 });
  });

  it('maps the real generation-200.json record', async () => {
    fake.respondNext('/api/v1/generation', { status: 200, body: readJsonFixture('generation-200.json') });
    expect(await client().getGeneration(KEY, ID)).toEqual({
      id: ID,
      totalCostUsd: 0.00000602,
      model: 'deepseek/deepseek-v4-flash-20260423',
      providerName: 'Fireworks',
      createdAt: '2026-06-25T13:55:48.515Z',
      tokensPrompt: 9,
      tokensCompletion: 19,
      nativeTokensPrompt: 11,
      nativeTokensCompletion: 16,
      nativeTokensReasoning: 19,
      nativeTokensCached: 0,
      cancelled: false,
      finishReason: 'length',
    });
  });

  it('treats the real generation-404.json answer as not recorded yet', async () => {
    fake.respondNext('/api/v1/generation', { status: 404, body: readJsonFixture('generation-404.json') });
    expect(await client().getGeneration(KEY, ID)).toBeNull();
  });

  it('sends the id as a query parameter', async () => {
    await client().getGeneration(KEY, ID);
    expect(fake.requestsTo('/api/v1/generation')[0]?.query).toEqual({ id: ID });
  });
});

describe('OpenRouterClient failures', () => {
  it('turns 401 into openrouter_unauthorized with what to do and what OpenRouter said', async () => {
    const error = await failure(client().getKeyInfo(UNKNOWN_KEY));
    expect([error.code, error.message]).toEqual([
      'openrouter_unauthorized',
      'OpenRouter rejected the key (401). Check it at https://openrouter.ai/settings/keys, then set it again with `openrouter-delegate key set`. OpenRouter said: "User not found."',
    ]);
  });

  it('turns 402 into openrouter_payment_required pointing at the credits page', async () => {
    fake.failNext('/api/v1/key', { status: 402, body: { error: { message: 'Insufficient credits', code: 402 } } });
    const error = await failure(client().getKeyInfo(KEY));
    expect([error.code, error.message.includes('https://openrouter.ai/settings/credits')]).toEqual(['openrouter_payment_required', true]);
  });

  it('turns 403 elsewhere into openrouter_forbidden', async () => {
    fake.failNext('/api/v1/key', { status: 403 });
    expect((await failure(client().getKeyInfo(KEY))).code).toBe('openrouter_forbidden');
  });

  it('turns 429 into openrouter_rate_limited with Retry-After in seconds', async () => {
    fake.failNext('/api/v1/models', { status: 429, headers: { 'Retry-After': '7' } });
    const error = await failure(client().listModels());
    expect([error.code, error.retryAfterSeconds]).toEqual(['openrouter_rate_limited', 7]);
  });

  it('reads a Retry-After HTTP date against the clock', async () => {
    fake.failNext('/api/v1/models', { status: 429, headers: { 'Retry-After': new Date(clock + 90_000).toUTCString() } });
    expect((await failure(client().listModels())).retryAfterSeconds).toBe(90);
  });

  it('puts the wait into the message', async () => {
    fake.failNext('/api/v1/models', { status: 429, headers: { 'Retry-After': '7' } });
    expect((await failure(client().listModels())).message).toContain('Wait 7 s, then try again.');
  });

  it('leaves retryAfterSeconds unset without Retry-After', async () => {
    fake.failNext('/api/v1/models', { status: 429 });
    expect((await failure(client().listModels())).retryAfterSeconds).toBeUndefined();
  });

  it.each([500, 502, 503, 529])('turns %i into openrouter_server_error', async (status) => {
    fake.failNext('/api/v1/models', { status, body: '<html>bad gateway</html>' });
    const error = await failure(client().listModels());
    expect([error.code, error.message.includes(`(${status})`)]).toEqual(['openrouter_server_error', true]);
  });

  it('turns a request that never answers into openrouter_timeout', async () => {
    fake.hang('/api/v1/models');
    expect((await failure(client({ timeoutMs: TIMEOUT_MS }).listModels())).code).toBe('openrouter_timeout');
  });

  it('turns an answer slower than timeoutMs into openrouter_timeout', async () => {
    fake.failNext('/api/v1/models', { status: 200, body: { data: [] }, delayMs: 10_000 });
    expect((await failure(client({ timeoutMs: TIMEOUT_MS }).listModels())).code).toBe('openrouter_timeout');
  });

  it('says how long it waited', async () => {
    fake.hang('/api/v1/models');
    expect((await failure(client({ timeoutMs: TIMEOUT_MS }).listModels())).message).toContain(`within ${TIMEOUT_MS} ms`);
  });

  it('turns a closed port into openrouter_unreachable naming the host and OPENROUTER_BASE_URL', async () => {
    const baseUrl = await closedPortBaseUrl();
    const error = await failure(client({ baseUrl }).listModels());
    expect([error.code, error.message]).toEqual([
      'openrouter_unreachable',
      `Cannot reach OpenRouter at ${new URL(baseUrl).host} (connection refused). Check your network connection, and OPENROUTER_BASE_URL if you set it.`,
    ]);
  });

  it('does not attach the raw fetch error as cause', async () => {
    const error = await failure(client({ baseUrl: await closedPortBaseUrl() }).getKeyInfo(KEY));
    expect(error.cause).toBeUndefined();
  });

  it('turns a body that is not JSON into openrouter_bad_response', async () => {
    fake.failNext('/api/v1/models', { status: 200, body: '<html>hello</html>' });
    expect((await failure(client().listModels())).code).toBe('openrouter_bad_response');
  });

  it('turns a 404 (wrong base URL) into openrouter_bad_response mentioning OPENROUTER_BASE_URL', async () => {
    const error = await failure(client({ baseUrl: `${fake.baseUrl}/nowhere` }).listModels());
    expect([error.code, error.message.includes('OPENROUTER_BASE_URL')]).toEqual(['openrouter_bad_response', true]);
  });

  it('refuses a key with a line break before sending it', async () => {
    const error = await failure(client().getKeyInfo(`${KEY}\n`));
    expect([error.code, fake.requests.length]).toEqual(['openrouter_unauthorized', 0]);
  });
});

describe('the key never leaks into an error', () => {
  const echoesKey = { error: { message: `Key ${KEY} is invalid; also saw sk-or-v1-someone-elses-key`, code: 401 } };

  it('scrubs the key OpenRouter echoes back', async () => {
    fake.failNext('/api/v1/key', { status: 401, body: echoesKey });
    const error = await failure(client().getKeyInfo(KEY));
    expect(everythingIn(error)).not.toContain(KEY);
  });

  it('scrubs anything shaped like an OpenRouter key', async () => {
    fake.failNext('/api/v1/key', { status: 401, body: echoesKey });
    const error = await failure(client().getKeyInfo(KEY));
    expect(everythingIn(error)).not.toContain('someone-elses-key');
  });

  it('keeps a key that is not shaped like sk-or- out too', async () => {
    const oddKey = 'plain-secret-value-1234567890';
    fake.failNext('/api/v1/key', { status: 403, body: { error: { message: `forbidden for ${oddKey}`, code: 403 } } });
    expect(everythingIn(await failure(client().getKeyInfo(oddKey)))).not.toContain(oddKey);
  });

  it.each([
    ['401', { status: 401 }],
    ['402', { status: 402 }],
    ['403', { status: 403 }],
    ['429', { status: 429, headers: { 'Retry-After': '3' } }],
    ['500', { status: 500 }],
    ['non-JSON', { status: 200, body: 'not json' }],
  ])('keeps it out of a %s failure', async (_name, script) => {
    fake.failNext('/api/v1/key', script);
    expect(everythingIn(await failure(client().getKeyInfo(KEY)))).not.toContain(KEY);
  });

  it('keeps it out of a timeout', async () => {
    fake.hang('/api/v1/key');
    expect(everythingIn(await failure(client({ timeoutMs: TIMEOUT_MS }).getKeyInfo(KEY)))).not.toContain(KEY);
  });

  it('keeps it out of an unreachable error', async () => {
    const error = await failure(client({ baseUrl: await closedPortBaseUrl() }).getKeyInfo(KEY));
    expect(everythingIn(error)).not.toContain(KEY);
  });

  it('keeps an unsendable key out of the error', async () => {
    const badKey = `${KEY}\r\nX-Evil: 1`;
    expect(everythingIn(await failure(client().getKeyInfo(badKey)))).not.toContain(KEY);
  });
});

it('the fake answers /credits for a normal key with the real message', async () => {
  const error = await failure(client().getCredits(KEY));
  expect(error.message).toContain(CREDITS_FORBIDDEN_MESSAGE);
});

describe('OpenRouterClient key management (/v1/keys)', () => {
  const NEW_KEY = { name: 'OpenRouter Delegate (delegates)', limitUsd: 5, limitReset: 'daily', includeByokInLimit: true } as const;

  it('creates a key with the limit, its daily reset and BYOK counted, and returns its secret and hash', async () => {
    const created = await client().createKey(MANAGEMENT_KEY, NEW_KEY);
    const made = fake.createdKeys();
    expect(made).toHaveLength(1);
    expect(created).toEqual({ hash: made[0]?.hash, name: NEW_KEY.name, limitUsd: 5, limitReset: 'daily', disabled: false, secret: made[0]?.key });
    const sent = fake.requestsTo('/api/v1/keys')[0];
    expect(sent?.method).toBe('POST');
    expect(sent?.headers.authorization).toBe(`Bearer ${MANAGEMENT_KEY}`);
    expect(JSON.parse(sent?.body ?? '')).toEqual({ name: NEW_KEY.name, limit: 5, limit_reset: 'daily', include_byok_in_limit: true });
  });

  it('changes a key limit by its hash with PATCH', async () => {
    const created = await client().createKey(MANAGEMENT_KEY, NEW_KEY);
    const updated = await client().updateKey(MANAGEMENT_KEY, created.hash, { limitUsd: 12.5 });
    expect(updated).toMatchObject({ hash: created.hash, limitUsd: 12.5, limitReset: 'daily' });
    const sent = fake.requestsTo(`/api/v1/keys/${created.hash}`)[0];
    expect([sent?.method, JSON.parse(sent?.body ?? '')]).toEqual(['PATCH', { limit: 12.5 }]);
    expect(fake.keyInfo(created.hash)?.limit).toBe(12.5);
  });

  it('deletes a key by its hash, and says false for one OpenRouter does not have', async () => {
    const created = await client().createKey(MANAGEMENT_KEY, NEW_KEY);
    expect(await client().deleteKey(MANAGEMENT_KEY, created.hash)).toBe(true);
    expect(fake.keyInfo(created.hash)).toBeNull();
    expect(await client().deleteKey(MANAGEMENT_KEY, created.hash)).toBe(false);
  });

  it('refuses to put anything but a hash into the path', async () => {
    expect((await failure(client().deleteKey(MANAGEMENT_KEY, '../credits'))).code).toBe('invalid_params');
    expect(fake.requests).toEqual([]);
  });

  it('says a management key is needed when a normal key tries (403), naming the method', async () => {
    const error = await failure(client().createKey(KEY, NEW_KEY));
    expect(error.code).toBe('openrouter_forbidden');
    expect(error.message).toContain('POST /v1/keys (403)');
    expect(error.message).toContain('key set --management');
  });

  it('turns a refused management key into openrouter_unauthorized', async () => {
    expect((await failure(client().createKey(UNKNOWN_KEY, NEW_KEY))).code).toBe('openrouter_unauthorized');
  });

  it('never quotes the new key in an error about an answer it cannot use', async () => {
    const secret = `sk-or-v1-${'f'.repeat(64)}`;
    fake.respondNext('/api/v1/keys', { status: 201, body: { data: { name: 'x' }, key: secret } });
    const error = await failure(client().createKey(MANAGEMENT_KEY, NEW_KEY));
    expect(error.code).toBe('openrouter_bad_response');
    expect(everythingIn(error)).not.toContain(secret);
  });

  it('reads limit_reset from /v1/key', async () => {
    const created = await client().createKey(MANAGEMENT_KEY, NEW_KEY);
    expect((await client().getKeyInfo(created.secret)).limitReset).toBe('daily');
    expect((await client().getKeyInfo(KEY)).limitReset).toBeNull();
  });
});
