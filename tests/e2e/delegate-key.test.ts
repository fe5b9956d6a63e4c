/**
 * The delegate key end to end (issue 35): the real service, the real `claude -p` as the delegate, the fake OpenRouter
 * managing keys as OpenRouter documents it. Turned on, the service makes a key limited to the day budget; every
 * request of a delegate reaches OpenRouter with that key, never the user's; after a rotation, with the new one (the
 * old one deleted); an error that quotes it is scrubbed before the delegate or any file sees it; and once that key's
 * day is spent, OpenRouter itself refuses the next request (402).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { KEY } from '../support/delegation.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';
import { filesContaining } from '../support/temp-home.js';

const m = ScriptedModel.marker;
const MANAGEMENT_KEY = `sk-or-v1-${'e5'.repeat(32)}`;
let world: FaultWorld;
/** The one bearer the scripted model answers: the delegate key the service made (none: nobody is answered). */
let delegateSecret = 'none yet';

beforeEach(() => {
  delegateSecret = 'none yet';
  // A generation is read only with the key that made it: the strict reading, which a rotation must survive.
  world = new FaultWorld({ model: { apiKey: () => delegateSecret }, fake: { generationsReadableBy: 'maker' } });
});
afterEach(async () => {
  await world.stop();
});

/** Waits until the job's billing has asked OpenRouter (a rotation waits for it). */
async function billed(client: IpcClient, jobId: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const view = await client.call('jobs.status', { jobId });
    if (view.job.billing !== 'pending') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`job ${jobId} is still being billed`);
}

async function runJob(client: IpcClient, script: string): Promise<string> {
  world.model.script(script, [{ text: `Answered ${script}.`, usage: { input_tokens: 3000, output_tokens: 20 } }]);
  const started = await world.startJob(client, { prompt: `${m(script)} go` });
  const end = await world.waitForEnd(client, started.job.id);
  expect(end.job.state).toBe('succeeded');
  return end.job.id;
}

describe('a delegate key the service makes with the management key', { timeout: 120_000 }, () => {
  it("carries every delegate request instead of the user's key, a new one after a rotation, and OpenRouter itself stops it at the day budget", async () => {
    await world.start({ budgets: { perJobUsd: 0.5, perDayUsd: 2, reserveUsd: 0 } });
    world.fake.addKey(MANAGEMENT_KEY, { management: true });
    await world.serve();
    const client = await world.connect();
    await client.call('secrets.set', { kind: 'management', value: MANAGEMENT_KEY });

    const on = await client.call('delegateKey.set', { mode: 'own' });
    const [first] = world.fake.createdKeys();
    expect(first).toMatchObject({ limit: 2, limitReset: 'daily', includeByokInLimit: true });
    expect(on).toMatchObject({ mode: 'own', hash: first?.hash, limitUsd: 2 });
    delegateSecret = first?.key ?? '';

    const firstJob = await runJob(client, 'first');
    const firstBearers = world.model.requestsFor('first').map((r) => r.bearer);
    expect(firstBearers.length).toBeGreaterThan(0);
    expect(new Set(firstBearers)).toEqual(new Set([first?.key]));
    // The job is billed from OpenRouter's record of its generation, read with the key that made it.
    await billed(client, firstJob);
    const firstView = await client.call('jobs.status', { jobId: firstJob });
    expect(firstView.job.billing).toBe('complete');

    const rotated = await client.call('delegateKey.rotate', {});
    const [second] = world.fake.createdKeys();
    expect(second?.hash).not.toBe(first?.hash);
    expect(rotated.hash).toBe(second?.hash);
    expect(world.fake.keyInfo(first?.hash ?? '')).toBeNull();
    delegateSecret = second?.key ?? '';

    await runJob(client, 'second');
    expect(new Set(world.model.requestsFor('second').map((r) => r.bearer))).toEqual(new Set([second?.key]));
    // The user's key went upstream with no delegate request; it still reads the balance.
    const upstream = world.fake.requests.filter((r) => r.path.startsWith('/api/v1/messages'));
    expect(upstream.some((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(false);

    // OpenRouter quotes the delegate key back in an error (body and header): the gateway scrubs it as it does the user's.
    const echoed = second?.key ?? '';
    world.model.script('echo', [
      { error: { status: 400, body: { error: { message: `Bad request for key ${echoed}`, code: 400 } }, headers: { 'x-echo': echoed } } },
    ]);
    const echo = await world.startJob(client, { prompt: `${m('echo')} go` });
    const echoEnd = await world.waitForEnd(client, echo.job.id);
    expect(world.model.requestsFor('echo').length).toBeGreaterThan(0);
    expect(JSON.stringify(echoEnd)).not.toContain(echoed);

    // Someone spends the rest of the key's day (another machine, a leak): OpenRouter refuses the next request itself.
    world.fake.charge(second?.key ?? null, 2);
    world.model.script('third', [{ text: 'never', usage: { input_tokens: 3000, output_tokens: 20 } }]);
    const third = await world.startJob(client, { prompt: `${m('third')} go` });
    const end = await world.waitForEnd(client, third.job.id);
    expect(end.job.state).not.toBe('succeeded');
    expect(world.model.requestsFor('third')).toEqual([]);
    const log = await client.call('jobs.requests', { jobId: third.job.id });
    expect(log.requests[0]?.status).toBe(402);

    // Neither key the service made is in any file of the home, nor in anything it answered.
    for (const secret of [first?.key ?? '', second?.key ?? '']) {
      expect(await filesContaining(world.home, secret)).toEqual([]);
      expect(JSON.stringify([on, rotated, end, log, await client.call('jobs.requests', { jobId: echo.job.id })])).not.toContain(secret);
    }
  });

  it("follows the day budget: a new budget is the key's new limit at OpenRouter; a request in flight finishes, the next is refused", async () => {
    await world.start({ budgets: { perJobUsd: 0.5, perDayUsd: 2, reserveUsd: 0 } });
    world.fake.addKey(MANAGEMENT_KEY, { management: true });
    await world.serve();
    const client = await world.connect();
    await client.call('secrets.set', { kind: 'management', value: MANAGEMENT_KEY });
    await client.call('delegateKey.set', { mode: 'own' });
    const made = world.fake.createdKeys()[0];
    delegateSecret = made?.key ?? '';

    await client.call('settings.update', { patch: { budgets: { perDayUsd: 3 } } });
    for (let i = 0; i < 50 && world.fake.keyInfo(made?.hash ?? '')?.limit !== 3; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(world.fake.keyInfo(made?.hash ?? '')).toMatchObject({ limit: 3, limitReset: 'daily' });
    expect(world.fake.requests.find((r) => r.method === 'PATCH')?.headers.authorization).toBe(`Bearer ${MANAGEMENT_KEY}`);

    // The key's day is spent while its first request is being answered: that answer arrives whole, the next is refused.
    world.model.script('spent', [
      {
        dynamic: () => {
          world.fake.charge(delegateSecret, 3);
          return { toolUse: { name: 'Bash', input: { command: 'echo one', description: 'One step' } }, usage: { input_tokens: 3000, output_tokens: 40 } };
        },
      },
      { text: 'never', usage: { input_tokens: 3000, output_tokens: 10 } },
    ]);
    const started = await world.startJob(client, { prompt: `${m('spent')} go`, allowedTools: ['Bash'] });
    const end = await world.waitForEnd(client, started.job.id);
    const log = await client.call('jobs.requests', { jobId: end.job.id });
    expect(log.requests.map((r) => r.status)).toEqual([200, 402]);
    expect(world.model.requestsFor('spent')).toHaveLength(1);
    expect(end.job.state).not.toBe('succeeded');
  });

  it("refuses delegates, saying why, when the delegate key is on but cannot be made: the user's key is not sent instead", async () => {
    await world.start();
    await world.serve();
    const client = await world.connect();
    await expect(client.call('delegateKey.set', { mode: 'own' })).rejects.toMatchObject({ code: 'no_key' });
    const status = await client.call('service.status', {});
    expect(status.delegateKey).toMatchObject({ mode: 'own', hash: null, problem: expect.stringContaining('needs a management key') as unknown });
    world.model.script('refused', [{ text: 'never' }]);
    await expect(world.startJob(client, { prompt: `${m('refused')} go` })).rejects.toMatchObject({
      code: 'no_key',
      message: expect.stringContaining('key set --management') as unknown,
    });
    expect(world.fake.requests.filter((r) => r.path.startsWith('/api/v1/messages'))).toEqual([]);
  });
});
