import { describe, expect, it } from 'vitest';
import { CONTRACT, ServiceError, defaultSettings } from '../../../src-main/contract/index.js';
import { CONTRACT_METHODS } from '../../../src-main/contract/method-names.js';
import { createDispatcher } from '../../../src-main/core/service/dispatcher.js';
import type { Handlers } from '../../../src-main/core/service/dispatcher.js';

function unexpected(): never {
  throw new Error('this handler should not run');
}

/** Every method's handler refuses to run unless a test overrides it; the compiler checks none is missing. */
function handlers(overrides: Partial<Handlers>): Handlers {
  const all: Handlers = {
    'service.status': unexpected,
    'service.stop': unexpected,
    'settings.get': unexpected,
    'settings.update': unexpected,
    'secrets.status': unexpected,
    'secrets.set': unexpected,
    'secrets.remove': unexpected,
    'delegateKey.set': unexpected,
    'delegateKey.rotate': unexpected,
    'balance.get': unexpected,
    'models.list': unexpected,
    'jobs.start': unexpected,
    'jobs.followup': unexpected,
    'jobs.status': unexpected,
    'jobs.result': unexpected,
    'jobs.cancel': unexpected,
    'jobs.diff': unexpected,
    'jobs.discard': unexpected,
    'jobs.takePreview': unexpected,
    'jobs.take': unexpected,
    'jobs.requests': unexpected,
    'jobs.list': unexpected,
    'jobs.warm': unexpected,
    'worktrees.list': unexpected,
    'worktrees.removeTaken': unexpected,
    'jobs.killAll': unexpected,
    'spend.report': unexpected,
    'jobs.scoreboard': unexpected,
    'verify.commands': unexpected,
    'setup.status': unexpected,
    'setup.connect': unexpected,
    'setup.disconnect': unexpected,
    'setup.doctor': unexpected,
    'settingsPage.open': unexpected,
  };
  return { ...all, ...overrides };
}

const ctx = { client: 'test' };

async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof ServiceError)) throw new Error(`expected a ServiceError, got ${String(error)}`);
  return error;
}

describe('the dispatcher', () => {
  it('refuses an unknown method and names the known ones', async () => {
    const error = await rejection(createDispatcher(handlers({}))('secrets.dump', {}, ctx));
    expect(error.code).toBe('unknown_method');
    expect(error.message).toContain('models.list');
  });

  it('does not treat Object.prototype names as methods', async () => {
    const error = await rejection(createDispatcher(handlers({}))('toString', {}, ctx));
    expect(error.code).toBe('unknown_method');
  });

  it('refuses invalid params with the path of the offending field, before any handler runs', async () => {
    const error = await rejection(createDispatcher(handlers({}))('models.list', { limit: 0, sort: 'cheapest' }, ctx));
    expect(error.code).toBe('invalid_params');
    expect(error.message).toMatch(/limit/);
    expect(error.message).toMatch(/sort/);
  });

  it('refuses unknown fields, so a typo is not silently ignored', async () => {
    const error = await rejection(createDispatcher(handlers({}))('models.list', { filtr: 'qwen' }, ctx));
    expect(error.code).toBe('invalid_params');
    expect(error.message).toContain('filtr');
  });

  it('hands the handler parsed params with the contract defaults filled in', async () => {
    let seen: unknown;
    const dispatch = createDispatcher(
      handlers({
        'models.list': async (params) => {
          seen = params;
          throw new ServiceError('internal', 'stop here');
        },
      }),
    );
    await rejection(dispatch('models.list', undefined, ctx));
    expect(seen).toEqual({ limit: 25, sort: 'price', refresh: false });
  });

  it('passes the handler result through', async () => {
    const settings = defaultSettings();
    const dispatch = createDispatcher(handlers({ 'settings.get': async () => settings }));
    await expect(dispatch('settings.get', {}, ctx)).resolves.toBe(settings);
  });

  it('routes every method to its own handler and to no other', async () => {
    const ran: string[] = [];
    const recording = Object.fromEntries(
      CONTRACT_METHODS.map((method) => [
        method,
        async () => {
          ran.push(method);
          throw new ServiceError('internal', 'stop here');
        },
      ]),
    ) as Partial<Handlers>;
    const dispatch = createDispatcher(handlers(recording));
    // The methods whose params may be empty; the others are refused before any handler, as tested above.
    const callable = CONTRACT_METHODS.filter((method) => CONTRACT[method].request.safeParse({}).success);
    expect(callable.length).toBeGreaterThan(5);
    for (const method of callable) await rejection(dispatch(method, {}, ctx));
    expect(ran).toEqual(callable);
  });
});
