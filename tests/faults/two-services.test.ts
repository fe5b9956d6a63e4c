/**
 * Services racing for one home (docs/ARCHITECTURE.md §1: one service per home): started at the same moment, exactly
 * one serves and the others exit at once, saying why; a job left by a killed service is adopted by the
 * winner only, and a job it left queued is started once, not once per racer.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alive } from '../support/delegation.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { FaultWorld, exitedWithin } from '../support/faults.js';
import type { ServiceProcess } from '../support/faults.js';

const m = ScriptedModel.marker;
const RACERS = 3;
let world: FaultWorld;

beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

/** Starts RACERS services for the home at once; resolves with the one that serves and the others. */
async function race(): Promise<{ winner: ServiceProcess; losers: ServiceProcess[] }> {
  const racers = Array.from({ length: RACERS }, () => world.spawnService());
  const outcomes = await Promise.all(racers.map((r) => r.outcome));
  expect(outcomes.filter((o) => o === 'ready')).toHaveLength(1);
  const winner = racers[outcomes.indexOf('ready')] as ServiceProcess;
  return { winner, losers: racers.filter((r) => r !== winner) };
}

describe('services started at the same moment for one home', { timeout: 90_000 }, () => {
  it('exactly one serves; the others exit 0 saying a service already runs for this home', async () => {
    await world.start();
    const { winner, losers } = await race();
    for (const loser of losers) {
      expect(await exitedWithin(loser)).toEqual({ code: 0, signal: null });
      expect(loser.stderr()).toContain(`The OpenRouter Delegate service is already running for this home (socket ${world.locations.socketPath}).`);
    }
    const client = await world.connect();
    expect(((await client.callRaw('service.status', {})) as { pid: number }).pid).toBe(winner.pid);
    expect(alive(winner.pid)).toBe(true);
  });

  it('a job a killed service left running is adopted by one of them only, and its result collected once', async () => {
    await world.start();
    const gate = world.gate('left');
    world.model.script('left', [
      { toolUse: { name: 'Bash', input: { command: gate.command('gate-passed'), description: 'Wait' } } },
      { text: 'Adopted once.' },
    ]);
    const crashed = await world.serve();
    const before = await world.connect();
    const started = await world.startJob(before, { prompt: `${m('left')} go`, allowedTools: ['Bash'] });
    const jobId = started.job.id;
    await world.waitForRunning(before, jobId);
    await gate.reached();
    process.kill(crashed.pid, 'SIGKILL');
    await crashed.exited;

    const { winner, losers } = await race();
    for (const loser of losers) expect(await exitedWithin(loser)).toEqual({ code: 0, signal: null });
    const client = await world.connect();
    expect((await client.call('jobs.status', { jobId })).job.state).toBe('running');
    await gate.open();
    const result = await client.call('jobs.result', { jobId, waitSeconds: 90 });
    expect(result.resultText).toBe('Adopted once.');

    expect(winner.stderr()).toContain(`jobs: re-adopting ${jobId}`);
    // The losers never read the jobs folder: they stopped at the socket.
    for (const loser of losers) expect(loser.stderr()).not.toContain('jobs:');
    expect(world.model.requestsFor('left')).toHaveLength(2);
  });

  it('a job a killed service left queued is started once, by the one that serves', async () => {
    await world.start({ concurrency: 1 });
    const gate = world.gate('ahead');
    world.model.script('ahead', [{ toolUse: { name: 'Bash', input: { command: gate.command('gate-passed'), description: 'Wait' } } }, { text: 'first' }]);
    world.model.script('waiting', [{ text: 'Started once.' }]);
    const crashed = await world.serve();
    const before = await world.connect();
    const ahead = await world.startJob(before, { prompt: `${m('ahead')} go`, allowedTools: ['Bash'] });
    await world.waitForRunning(before, ahead.job.id);
    const waiting = await world.startJob(before, { prompt: `${m('waiting')} go` });
    expect(waiting.job.state).toBe('queued');
    await gate.reached();
    process.kill(crashed.pid, 'SIGKILL');
    await crashed.exited;

    const { losers } = await race();
    for (const loser of losers) expect(await exitedWithin(loser)).toEqual({ code: 0, signal: null });
    const client = await world.connect();
    await gate.open();
    const result = await client.call('jobs.result', { jobId: waiting.job.id, waitSeconds: 90 });
    expect(result.job.state).toBe('succeeded');
    expect(result.resultText).toBe('Started once.');
    // One delegate asked the model once; a second racer starting it too would have made a second session.
    expect(world.model.requestsFor('waiting')).toHaveLength(1);
  });
});
