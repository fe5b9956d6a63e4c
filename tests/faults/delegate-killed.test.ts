/**
 * A delegate (the `claude -p` process of a running job) is killed with SIGKILL from outside, as the OOM
 * killer or a user's `kill -9` would: the job ends `failed`, says how, and shows what the delegate last
 * wrote on stderr; nobody waiting on it hangs, and the next job gets its place.
 */
import { appendFile, readFile, readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { withoutStderrNoise } from '../../src-main/contract/index.js';
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

/** Processes whose command line mentions `text` (Linux /proc). */
async function processesMentioning(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) found.push(Number(entry));
  }
  return found;
}

/** Starts a job held at a Bash call; resolves once its delegate runs and has written to its stderr. */
async function heldJob(client: IpcClient, name: string): Promise<{ jobId: string; pid: number; stderrFile: string }> {
  const gate = world.gate(name);
  world.model.script(name, [{ toolUse: { name: 'Bash', input: { command: gate.command('never-seen'), description: 'Wait' } } }, { text: 'never said' }]);
  const started = await world.startJob(client, { prompt: `${m(name)} go`, allowedTools: ['Bash'] });
  const running = await world.waitForRunning(client, started.job.id);
  await expect.poll(() => world.model.requestsFor(name).length, { timeout: 30_000 }).toBe(1);
  // Its answer relayed whole and its Bash call under way: a service killed now cuts no request short (under load,
  // a kill that landed mid-answer failed the delegate, which these tests run without retries).
  await gate.reached();
  // Claude Code says something on stderr as it starts (e.g. that it does not know the model's name).
  await expect.poll(async () => (await readFile(running.files.stderr, 'utf8')).trim(), { timeout: 30_000 }).not.toBe('');
  return { jobId: started.job.id, pid: running.job.pid ?? 0, stderrFile: running.files.stderr };
}

/** What a dying delegate says last, added to its stderr as it would write it; its stderr then. */
const LAST_WORDS = 'fatal: out of memory (the test’s own last words)';
async function lastWords(stderrFile: string): Promise<string> {
  await appendFile(stderrFile, `${LAST_WORDS}\n`);
  return readFile(stderrFile, 'utf8');
}

describe('a delegate killed with SIGKILL', { timeout: 90_000 }, () => {
  it('ends its job failed, saying it was killed, with the end of its stderr', async () => {
    await world.start();
    await world.serve();
    const client = await world.connect();
    const { jobId, pid, stderrFile } = await heldJob(client, 'killed');
    const stderr = await lastWords(stderrFile);
    const waiting = client.call('jobs.result', { jobId, waitSeconds: 90 });

    process.kill(pid, 'SIGKILL');

    const end = await waiting;
    expect(end.waitTimedOut).toBe(false);
    expect(end.job.state).toBe('failed');
    expect(end.job.signal).toBe('SIGKILL');
    expect(end.job.endReason).toBe(`Claude Code was killed by SIGKILL without a result. Its last words: ${LAST_WORDS}`);
    // Claude Code's own noise (it does not know the model's name) is in the file, never in what is shown.
    expect(stderr).toContain('[claude-code:unrecognized_model]');
    expect(end.stderrTail).toBe(withoutStderrNoise(stderr));
    expect(end.stderrTail).not.toContain('unrecognized_model');
    expect(end.resultText).toBeNull();
    expect(alive(pid)).toBe(false);
  });

  it.skipIf(process.platform !== 'linux')('ends what its Bash tool left running in a session of its own', async () => {
    await world.start();
    await world.serve();
    const client = await world.connect();
    const { jobId, pid } = await heldJob(client, 'orphans');
    const gateFile = world.gate('orphans').file;
    // The premise: the Bash command runs, outside the delegate's process group.
    await expect.poll(async () => (await processesMentioning(gateFile)).length, { timeout: 30_000 }).toBeGreaterThan(0);

    process.kill(pid, 'SIGKILL');

    expect((await client.call('jobs.result', { jobId, waitSeconds: 90 })).job.state).toBe('failed');
    await expect.poll(() => processesMentioning(gateFile), { timeout: 30_000 }).toEqual([]);
  });

  it('gives its place to the next job: with a concurrency of 1, a queued job runs', async () => {
    await world.start({ concurrency: 1 });
    world.model.script('next', [{ text: 'The next job ran.' }]);
    await world.serve();
    const client = await world.connect();
    const { pid } = await heldJob(client, 'first');
    const queued = await world.startJob(client, { prompt: `${m('next')} go` });
    expect(queued.job.state).toBe('queued');

    process.kill(pid, 'SIGKILL');

    const next = await client.call('jobs.result', { jobId: queued.job.id, waitSeconds: 90 });
    expect(next.job.state).toBe('succeeded');
    expect(next.resultText).toBe('The next job ran.');
  });

  it('ends its job failed also when a restarted service had adopted it', async () => {
    await world.start();
    const first = await world.serve();
    const before = await world.connect();
    const { jobId, pid, stderrFile } = await heldJob(before, 'adopted');
    process.kill(first.pid, 'SIGKILL');
    await first.exited;
    await world.serve();
    const client = await world.connect();
    expect((await client.call('jobs.status', { jobId })).job.state).toBe('running');
    const stderr = await lastWords(stderrFile);
    const waiting = client.call('jobs.result', { jobId, waitSeconds: 90 });

    process.kill(pid, 'SIGKILL');

    const end = await waiting;
    expect(end.waitTimedOut).toBe(false);
    expect(end.job.state).toBe('failed');
    // Not its parent, the adopting service cannot learn the signal; it still says the delegate died without a result.
    expect(end.job.endReason).toBe(`Claude Code ended without a result. Its last words: ${LAST_WORDS}`);
    expect(end.stderrTail).toBe(withoutStderrNoise(stderr));
  });
});
