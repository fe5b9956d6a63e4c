/**
 * A service killed mid-job comes back by itself (docs/ARCHITECTURE.md §11). Since the metering gateway, a delegate
 * reaches OpenRouter only through the service; the watchdog starts a killed service again while jobs are active,
 * on the gateway's same port, and the delegate's Claude Code carries on after its own retries. With the real
 * CLI as delegate and no bridge connected; with a bridge, tests/e2e/delegate.test.ts.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alive } from '../support/delegation.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';
import type { IpcClient } from '../../src-main/ipc/client.js';

const m = ScriptedModel.marker;
let world: FaultWorld;

beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

async function gatewayPort(): Promise<number> {
  return (JSON.parse(await readFile(world.locations.gatewayFile, 'utf8')) as { port: number }).port;
}

/** Polls the socket until a service other than `pid` answers; returns it and how long that took. */
async function nextService(pid: number, since: number): Promise<{ client: IpcClient; pid: number; afterMs: number }> {
  let found: { client: IpcClient; pid: number; afterMs: number } | null = null;
  await expect
    .poll(
      async () => {
        const client = await world.connect().catch(() => null);
        if (!client) return false;
        const status = await client.call('service.status', {});
        if (status.pid === pid) return false;
        found = { client, pid: status.pid, afterMs: Date.now() - since };
        return true;
      },
      { timeout: 30_000, interval: 100 },
    )
    .toBe(true);
  if (!found) throw new Error('no service came back');
  return found;
}

describe('a service killed with SIGKILL mid-job, no bridge connected', { timeout: 120_000 }, () => {
  it('is brought back by the watchdog; the delegate carries on through the same port and its request log is whole', async () => {
    await world.start({ delegateMaxRetries: 6 }, { OPENROUTER_DELEGATE_WATCHDOG: 'on' });
    const gate = world.gate('back');
    world.model.script('back', [
      { toolUse: { name: 'Bash', input: { command: gate.command('gate-passed'), description: 'Wait' } } },
      { text: 'Finished under the service the watchdog brought back.' },
    ]);
    const first = await world.serve();
    const before = await world.connect();
    const started = await world.startJob(before, { prompt: `${m('back')} go`, allowedTools: ['Bash'] });
    const jobId = started.job.id;
    await world.waitForRunning(before, jobId);
    await gate.reached();
    const port = await gatewayPort();
    const watchdogPid = Number.parseInt(await readFile(world.locations.watchdogFile, 'utf8'), 10);
    expect(alive(watchdogPid)).toBe(true);

    const killedAt = Date.now();
    process.kill(first.pid, 'SIGKILL');
    await first.exited;
    // The delegate asks the model again at once, into a dead port: its Claude Code retries until the service is back.
    await gate.open();

    const { client, pid, afterMs } = await nextService(first.pid, killedAt);
    console.log(`[service-comes-back] the watchdog's service answered ${afterMs} ms after the SIGKILL`);
    expect(pid).not.toBe(first.pid);
    expect(await gatewayPort()).toBe(port);
    const result = await client.call('jobs.result', { jobId, waitSeconds: 90 });
    expect(result.job.state).toBe('succeeded');
    expect(result.resultText).toBe('Finished under the service the watchdog brought back.');
    const log = await client.call('jobs.requests', { jobId });
    expect(log.requests.map((r) => [r.status, r.outcome])).toEqual([
      [200, 'ok'],
      [200, 'ok'],
    ]);
    expect(world.model.requestsFor('back')).toHaveLength(2);
    const serviceLog = await readFile(path.join(world.locations.logs, 'service.log'), 'utf8');
    expect(serviceLog).toContain('watchdog: the service is gone while jobs are active; starting it');
    // Nothing left to keep: the watchdog leaves by itself.
    await expect.poll(() => alive(watchdogPid), { timeout: 15_000 }).toBe(false);
  });

  it('cut off in the middle of a request: the log keeps that request as interrupted, the retry carries the job', async () => {
    await world.start({ delegateMaxRetries: 6 }, { OPENROUTER_DELEGATE_WATCHDOG: 'on' });
    const gate = world.gate('cut');
    world.model.script('cut', [
      { toolUse: { name: 'Bash', input: { command: gate.command('gate-passed'), description: 'Wait' } } },
      // The second request is held at the fake long enough to kill the service under it.
      { text: 'Answered on the retry.', delayMs: 1500 },
    ]);
    const first = await world.serve();
    const before = await world.connect();
    const started = await world.startJob(before, { prompt: `${m('cut')} go`, allowedTools: ['Bash'] });
    const jobId = started.job.id;
    await world.waitForRunning(before, jobId);
    await gate.reached();
    await gate.open();
    await expect.poll(() => world.model.requestsFor('cut').length, { timeout: 30_000, interval: 20 }).toBe(2);
    const killedAt = Date.now();
    process.kill(first.pid, 'SIGKILL');
    await first.exited;

    const { client } = await nextService(first.pid, killedAt);
    const result = await client.call('jobs.result', { jobId, waitSeconds: 90 });
    expect(result.job.state).toBe('succeeded');
    expect(result.resultText).toBe('Answered on the retry.');
    const log = await client.call('jobs.requests', { jobId });
    expect(log.requests.map((r) => [r.status, r.outcome])).toEqual([
      [200, 'ok'],
      [0, 'interrupted'],
      [200, 'ok'],
    ]);
    expect(log.requests[1]?.note).toContain('the service stopped before this request ended');
  });

  it('stopped on purpose (`stop`): the watchdog leaves it stopped', async () => {
    await world.start({}, { OPENROUTER_DELEGATE_WATCHDOG: 'on' });
    const gate = world.gate('held');
    world.model.script('held', [{ toolUse: { name: 'Bash', input: { command: gate.command('x'), description: 'Wait' } } }, { text: 'late' }]);
    const first = await world.serve();
    const before = await world.connect();
    const started = await world.startJob(before, { prompt: `${m('held')} go`, allowedTools: ['Bash'] });
    await world.waitForRunning(before, started.job.id);
    await gate.reached();
    const watchdogPid = Number.parseInt(await readFile(world.locations.watchdogFile, 'utf8'), 10);
    await before.call('service.stop', { killJobs: false });
    await first.exited;
    await expect.poll(() => alive(watchdogPid), { timeout: 10_000 }).toBe(false);
    expect(await world.connect().catch(() => null)).toBeNull();
    const serviceLog = await readFile(path.join(world.locations.logs, 'service.log'), 'utf8');
    expect(serviceLog).toContain('watchdog: the service stopped (its socket is gone); leaving it stopped');
  });
});
