/**
 * OpenRouter failing under a running job or at its start: unreachable, too slow, or answering 401, 402,
 * 429 or 5xx after the delegate has already done some work. Every job ends (never hangs), in a state and
 * with words the user can act on; the work done before the failure stays in its record and tail.
 */
import { readdir } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { alive } from '../support/delegation.js';
import { MESSAGES_PATH, ScriptedModel } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';

const m = ScriptedModel.marker;

describe("OpenRouter answering an error mid-job, after the delegate's first tool call", { timeout: 90_000 }, () => {
  const world = new FaultWorld();
  let client: IpcClient;
  beforeAll(async () => {
    // Several delegates at once in one folder, in place: Claude Code's sandbox races between them over the empty files it
    // makes there for a command ("bwrap: Can't find source path …/.claude/settings.json"; docs/ISOLATION.md, "The
    // sandbox"). What is tried here is not the sandbox, so it is off.
    await world.start({ concurrency: 8, sandbox: { use: 'off', programs: 'ask-approval' } });
    await world.serve();
    client = await world.connect();
  });
  afterAll(async () => {
    await world.stop();
  });

  it.concurrent.for([
    [401, 'OpenRouter rejected the key (401). The user can set a valid one with `openrouter-delegate key set`.'],
    [402, 'OpenRouter says the account is out of credits (402). Top up at https://openrouter.ai/settings/credits.'],
    [429, 'OpenRouter rate-limited the model (429) and Claude Code gave up retrying.'],
    [500, "The model's provider is overloaded or unavailable (500). Try again later or pick another model."],
    [502, "The model's provider is overloaded or unavailable (502). Try again later or pick another model."],
    [503, "The model's provider is overloaded or unavailable (503). Try again later or pick another model."],
    [529, "The model's provider is overloaded or unavailable (529). Try again later or pick another model."],
  ] as const)('%i ends the job failed with what to do, keeping the work done before it', async ([status, reason], { expect }) => {
    const name = `mid${status}`;
    world.model.script(name, [
      { toolUse: { name: 'Bash', input: { command: `echo work-before-${status}`, description: 'Some work' } } },
      { error: { status } },
    ]);
    const started = await world.startJob(client, { prompt: `${m(name)} go`, allowedTools: ['Bash'] });
    const end = await client.call('jobs.status', { jobId: started.job.id, waitSeconds: 90, progressLimit: 100 });
    expect(end.job.state).toBe('failed');
    expect(end.job.endReason).toContain(reason);
    expect(world.model.requestsFor(name).at(-1)?.status).toBe(status);
    expect(end.job.toolCalls).toBe(1);
    expect(end.job.estimatedCostUsd).toBeGreaterThan(0);
    expect(
      end.tail.some((e) => e.kind === 'tool_result' && e.text.includes(`work-before-${status}`)),
      JSON.stringify(end.tail),
    ).toBe(true);
  });
});

describe('OpenRouter failing around a job', { timeout: 90_000 }, () => {
  let world: FaultWorld;
  beforeEach(() => {
    world = new FaultWorld();
  });
  afterEach(async () => {
    await world.stop();
  });

  it("a start does not wait on OpenRouter's balance: the service read it as it started, and a start takes that copy", async () => {
    await world.start();
    world.model.script('balance', [{ text: 'Started on the copy.' }]);
    await world.serve();
    // The read the service made as it started; from here OpenRouter's balance never answers.
    await expect.poll(() => world.fake.requestsTo('/api/v1/key').length).toBe(1);
    world.fake.hang('/api/v1/key');
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: `${m('balance')} go` });
    // Admitted without asking OpenRouter again (the job's end reads it again, and that read hangs: it is not awaited).
    expect(world.fake.requestsTo('/api/v1/key')).toHaveLength(1);
    const end = await client.call('jobs.result', { jobId: started.job.id, waitSeconds: 60 });
    expect(end.job.state).toBe('succeeded');
    expect(end.resultText).toBe('Started on the copy.');
  });

  it('a 429 that clears is retried by Claude Code, and the job succeeds', async () => {
    await world.start({ delegateMaxRetries: 1 });
    world.model.script('clears', [
      { toolUse: { name: 'Bash', input: { command: 'echo before-the-limit', description: 'Some work' } } },
      { error: { status: 429, times: 1 } },
      { text: 'Done after one retry.' },
    ]);
    await world.serve();
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: `${m('clears')} go`, allowedTools: ['Bash'] });
    const end = await client.call('jobs.result', { jobId: started.job.id, waitSeconds: 90 });
    expect(end.job.state).toBe('succeeded');
    expect(end.resultText).toBe('Done after one retry.');
    expect(world.model.requestsFor('clears').map((r) => r.status)).toEqual([200, 429, 200]);
  });

  it('unreachable mid-job: the gateway answers 502 and the job ends failed, saying OpenRouter could not be reached, not that the provider is down', async () => {
    await world.start();
    const gate = world.gate('unreachable');
    world.model.script('unreachable', [{ toolUse: { name: 'Bash', input: { command: gate.command('gate-passed'), description: 'Wait' } } }, { text: 'never' }]);
    await world.serve();
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: `${m('unreachable')} go`, allowedTools: ['Bash'] });
    await world.waitForRunning(client, started.job.id);
    await gate.reached();

    await world.fake.stop();
    await gate.open();

    const end = await client.call('jobs.status', { jobId: started.job.id, waitSeconds: 90, progressLimit: 100 });
    expect(end.job.state).toBe('failed');
    // This machine's connection, not the model's provider (issue 24): what to check, and that the work is kept.
    expect(end.job.endReason).toMatch(
      /^OpenRouter could not be reached from this machine \(connection refused \(ECONNREFUSED\)\): not the model's provider\. Check the network/,
    );
    expect(end.job.endReason).not.toContain('overloaded');
    const log = await client.call('jobs.requests', { jobId: started.job.id });
    expect(log.requests.map((r) => [r.status, r.outcome])).toEqual([
      [200, 'ok'],
      [502, 'upstream_error'],
    ]);
    // Claude Code calls an errored turn's result "success": the reason must not repeat that.
    expect(end.job.endReason).not.toContain('success');
    expect(end.tail.some((e) => e.kind === 'tool_result' && e.text.includes('gate-passed'))).toBe(true);
  });

  it("unreachable at the start: the job is refused, naming OpenRouter's address, and nothing is created", async () => {
    await world.start();
    await world.serve();
    const client = await world.connect();
    const host = new URL(world.fake.baseUrl).host;
    await world.fake.stop();
    await expect(world.startJob(client, { prompt: 'anything' })).rejects.toThrow(
      `Cannot reach OpenRouter at ${host} (connection refused). Check your network connection, and OPENROUTER_BASE_URL if you set it.`,
    );
    expect((await client.call('jobs.list', {})).totalJobs).toBe(0);
    expect(await readdir(world.locations.jobsDir).catch(() => [])).toEqual([]);
  });

  it("too slow mid-job (the model never answers): the job's timeout ends it timed_out, its delegate killed", async () => {
    await world.start();
    world.model.script('slow', [
      { toolUse: { name: 'Bash', input: { command: 'echo before-the-silence', description: 'Some work' } } },
      { text: 'far too late', delayMs: 600_000 },
    ]);
    await world.serve();
    const client = await world.connect();
    const started = await world.startJob(client, { prompt: `${m('slow')} go`, allowedTools: ['Bash'], timeoutMinutes: 0.1 });
    const running = await world.waitForRunning(client, started.job.id);
    const end = await world.waitForEnd(client, started.job.id);
    expect(end.job.state).toBe('timed_out');
    expect(end.job.endReason).toBe('Stopped: the job ran longer than its timeout of 6 s.');
    expect(world.model.requestsFor('slow')).toHaveLength(2);
    expect(alive(running.job.pid ?? 0)).toBe(false);
  });

  it("too slow at the start (the model list never comes): the job is refused after OpenRouter's timeout, saying so", async () => {
    await world.start();
    world.fake.hang('/api/v1/models');
    await world.serve();
    const client = await world.connect();
    await expect(world.startJob(client, { prompt: 'anything' })).rejects.toThrow(
      'OpenRouter did not answer GET /v1/models within 15 s. It may be slow or overloaded; try again in a minute.',
    );
    expect((await client.call('jobs.list', {})).totalJobs).toBe(0);
    expect(world.model.requests.filter((r) => r.path === MESSAGES_PATH)).toEqual([]);
  });
});
