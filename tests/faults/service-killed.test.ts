/**
 * The service is killed with SIGKILL while a delegate works (docs/ARCHITECTURE.md §4: jobs are files first, processes
 * second). The delegate runs on, detached; the next service re-adopts it and collects its result.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseProcStat } from '../../src-main/core/jobs/process/process-table.js';
import { alive } from '../support/delegation.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';

const m = ScriptedModel.marker;
let world: FaultWorld;

beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

/**
 * A job held at its Bash call (it has asked the model once and waits for the gate), under a service that
 * is then killed with SIGKILL. The delegate runs on.
 */
async function heldJobUnderKilledService(name: string, answer: string) {
  await world.start();
  const gate = world.gate(name);
  world.model.script(name, [
    { toolUse: { name: 'Bash', input: { command: gate.command('gate-passed'), description: 'Wait for the gate' } } },
    { text: answer },
  ]);
  const first = await world.serve();
  const before = await world.connect();
  const started = await world.startJob(before, { prompt: `${m(name)} go`, allowedTools: ['Bash'] });
  const jobId = started.job.id;
  const running = await world.waitForRunning(before, jobId);
  await gate.reached();
  expect(world.model.requestsFor(name)).toHaveLength(1);
  process.kill(first.pid, 'SIGKILL');
  const exit = await first.exited;
  return { gate, jobId, running, exit };
}

describe('a service killed with SIGKILL mid-job', { timeout: 90_000 }, () => {
  it('leaves the delegate running; the restarted service adopts that same process and collects its result', async () => {
    const { gate, jobId, running, exit } = await heldJobUnderKilledService('adopt', 'Finished under the second service.');
    const delegatePid = running.job.pid ?? 0;
    expect(exit.signal).toBe('SIGKILL');
    expect(alive(delegatePid)).toBe(true);

    await world.serve();
    const after = await world.connect();
    const adopted = await after.call('jobs.status', { jobId });
    expect(adopted.job.state).toBe('running');
    expect(adopted.job.pid).toBe(delegatePid);

    await gate.open();
    const result = await after.call('jobs.result', { jobId, waitSeconds: 90 });
    expect(result.job.state).toBe('succeeded');
    expect(result.resultText).toBe('Finished under the second service.');
    expect(result.job.toolCalls).toBe(1);
    expect(result.tail.some((entry) => entry.kind === 'tool_result' && entry.text.includes('gate-passed'))).toBe(true);
    // Never started a second time: the model saw one session, asked twice (the call, then the answer).
    expect(new Set(world.model.requestsFor('adopt').map((r) => r.headers.sessionId)).size).toBe(1);
    expect(world.model.requestsFor('adopt')).toHaveLength(2);
  });

  it.skipIf(process.platform !== 'linux')(
    'killed between spawning a delegate and recording it: the next service finds the delegate by its marker and adopts it, never spawning it twice',
    async () => {
      const { gate, jobId, running } = await heldJobUnderKilledService('unrecorded', 'Adopted, not run twice.');
      const delegatePid = running.job.pid ?? 0;
      // What the record says when the service dies in that moment: still queued, no pid.
      const file = path.join(running.files.dir, 'job.json');
      const record = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
      await writeFile(file, JSON.stringify({ ...record, state: 'queued', startedAt: null, pid: null, pidStartTime: null, claudePath: null }));

      await world.serve();
      const after = await world.connect();
      const adopted = await after.call('jobs.status', { jobId });
      expect(adopted.job.state).toBe('running');
      // Its root, or under a warm box's root (started before its job, so unmarked: box-spares.ts) the command it runs:
      // the marked tree's root either way, which ends with the box.
      const adoptedPid = adopted.job.pid ?? 0;
      if (adoptedPid !== delegatePid) expect(parseProcStat(await readFile(`/proc/${adoptedPid}/stat`, 'utf8'))?.ppid).toBe(delegatePid);

      await gate.open();
      const result = await after.call('jobs.result', { jobId, waitSeconds: 90 });
      expect(result.job.state).toBe('succeeded');
      expect(result.resultText).toBe('Adopted, not run twice.');
      expect(world.model.requestsFor('unrecorded')).toHaveLength(2);
    },
  );
});
