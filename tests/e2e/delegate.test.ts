/**
 * Delegation end to end, as users run it: the built bridge (over stdio, like Claude Code) → the
 * service → the real `claude -p` CLI → a fake OpenRouter that plays the model.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { newJobRecord } from '../../src-main/core/jobs/record/job-record.js';
import { JobStore } from '../../src-main/core/jobs/record/job-store.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import { runCli } from '../support/built.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScriptedModel, toolResults } from '../support/fake-anthropic.js';
import { DelegationWorld, KEY, MODEL, alive, call, callOk, processesRunning, waitForEnd } from '../support/delegation.js';
import type { ViewShape } from '../support/delegation.js';
import { jobFields } from '../support/job-fields.js';

const m = ScriptedModel.marker;
let world: DelegationWorld;

beforeEach(() => {
  world = new DelegationWorld();
});
afterEach(async () => {
  await world.stop();
});

describe('a delegated job', () => {
  it('starts, shows its Bash call in the tail, answers with tokens and both costs, continues, and is listed', async () => {
    await world.start();
    world.model.script('compute', [
      { toolUse: { name: 'Bash', input: { command: 'echo delegated-$((40+2))', description: 'Compute the answer' } } },
      { text: 'The answer is 42.' },
    ]);
    world.model.script('again', [{ text: 'Still 42, as before.' }]);
    const client = await world.bridge();

    const started = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${m('compute')} What is 40+2? Use Bash.`, allowed_tools: ['Bash'] });
    const jobId = started.structured.job.id;
    expect(started.structured.job.model).toBe(MODEL);
    expect(started.text).toContain(`delegate_result {"job_id":"${jobId}"`);

    const status = await waitForEnd(client, jobId);
    expect(status.job.state).toBe('succeeded');
    expect(status.tail.some((e) => e.kind === 'tool_call' && e.tool === 'Bash' && e.text.includes('echo delegated'))).toBe(true);
    expect(status.tail.some((e) => e.kind === 'tool_result' && e.text.includes('delegated-42'))).toBe(true);

    const result = await callOk<ViewShape>(client, 'delegate_result', { job_id: jobId });
    expect(result.structured.resultText).toBe('The answer is 42.');
    expect(result.structured.job.toolCalls).toBe(1);
    expect(result.structured.job.usage.inputTokens).toBeGreaterThan(0);
    expect(result.structured.job.estimatedCostUsd).toBeGreaterThan(0);
    // The list prices it was admitted at are kept with it, so its cap holds across restarts.
    expect((result.structured.job as unknown as { prices: { inputPerM: number; outputPerM: number } }).prices).toMatchObject({
      inputPerM: 0.14,
      outputPerM: 0.28,
    });
    expect(result.text).toMatch(/est\. \$/);
    // The billed cost is OpenRouter's figure per generation, fetched after the job (it appears late).
    const billedExpected = world.model.generations.filter((g) => g.script === 'compute').reduce((sum, g) => sum + g.costUsd, 0);
    await expect
      .poll(async () => (await callOk<ViewShape>(client, 'delegate_result', { job_id: jobId })).structured.job.billedCostUsd, {
        timeout: 30_000,
        interval: 500,
      })
      .toBeCloseTo(billedExpected, 9);
    const sessionId = result.structured.job.sessionId;

    const followup = await callOk<ViewShape>(client, 'delegate_followup', { session_id: sessionId, prompt: `${m('again')} And now?`, wait_seconds: 90 });
    expect(followup.structured.job.state).toBe('succeeded');
    expect(followup.structured.job.id).not.toBe(jobId);
    expect(followup.structured.job.sessionId).toBe(sessionId);
    expect(followup.structured.job.turn).toBe(2);
    const resumed = world.model.lastRequestFor('again');
    expect(JSON.stringify(resumed.messages)).toContain('The answer is 42.');
    expect(JSON.stringify(resumed.messages)).toContain('delegated-42');
    expect(resumed.bearer).toBe(KEY);

    const list = await callOk<{ conversations: Array<{ sessionId: string; jobs: Array<{ id: string }>; costUsd: number }>; totalCostUsd: number }>(
      client,
      'delegate_list',
      {},
    );
    expect(list.structured.conversations).toHaveLength(1);
    expect(list.structured.conversations[0]?.sessionId).toBe(sessionId);
    expect(list.structured.conversations[0]?.jobs.map((j) => j.id)).toEqual([followup.structured.job.id, jobId]);
    expect(list.structured.totalCostUsd).toBeCloseTo(list.structured.conversations[0]?.costUsd ?? -1, 9);
  });

  it('is cancelled with its whole process tree, down to a `sleep` its Bash tool started', async () => {
    await world.start();
    // Claude Code refuses a bare `sleep N`; a shell around it is a command like any other.
    world.model.script('sleepy', [{ toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 317"', description: 'Wait a long time' } } }]);
    const client = await world.bridge();
    const started = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${m('sleepy')} wait`, allowed_tools: ['Bash'] });
    const jobId = started.structured.job.id;
    await expect.poll(() => processesRunning(['sleep', '317']), { timeout: 30_000, interval: 200 }).toHaveLength(1);
    const sleepers = await processesRunning(['sleep', '317']);
    const claudePid = (await callOk<ViewShape>(client, 'delegate_status', { job_id: jobId })).structured.job.pid ?? 0;
    expect(alive(claudePid)).toBe(true);

    const cancelled = await callOk<ViewShape>(client, 'delegate_cancel', { job_id: jobId });
    expect(cancelled.structured.job.state).toBe('cancelled');
    expect(alive(claudePid)).toBe(false);
    for (const pid of sleepers) expect(alive(pid)).toBe(false);
    expect(await processesRunning(['sleep', '317'])).toEqual([]);
  });

  it('survives the service being killed with SIGKILL: the bridge brings it back, the job is adopted and its result collected', async () => {
    // Killed at once, perhaps mid-request: the delegate's Claude Code retries against the gateway's port until the
    // service the bridge starts is back on it (delegateMaxRetries covers that window; docs/GUIDE.md, "How a job runs", Retries).
    // The bridge alone brings it back here (no watchdog); tests/faults/service-comes-back.test.ts has the watchdog alone.
    await world.start({ delegateMaxRetries: 5 }, { OPENROUTER_DELEGATE_WATCHDOG: 'off' });
    world.model.script('slow', [
      { toolUse: { name: 'Bash', input: { command: 'sleep 2; echo slept', description: 'Take a while' } } },
      { text: 'Finished after the restart.' },
    ]);
    const client = await world.bridge();
    const started = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${m('slow')} go`, allowed_tools: ['Bash'] });
    const jobId = started.structured.job.id;
    await expect
      .poll(async () => (await callOk<ViewShape>(client, 'delegate_status', { job_id: jobId })).structured.job.state, { timeout: 30_000 })
      .toBe('running');
    const { pid: servicePid } = await world.serviceStatus();
    process.kill(servicePid, 'SIGKILL');
    await expect.poll(() => alive(servicePid)).toBe(false);

    // The next call finds no service, starts one, which re-adopts the running job.
    const result = await callOk<ViewShape>(client, 'delegate_result', { job_id: jobId, wait_seconds: 90 });
    expect(result.structured.job.state).toBe('succeeded');
    expect(result.structured.resultText).toBe('Finished after the restart.');
    expect((await world.serviceStatus()).pid).not.toBe(servicePid);
  });
});

describe('budgets', () => {
  it('a tiny max_cost_usd ends the job budget_exceeded and kills what it started', async () => {
    await world.start();
    world.model.script('pricey', [
      { toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 318"', description: 'Spend' } }, usage: { input_tokens: 2_000_000 } },
      { text: 'should never get here' },
    ]);
    const client = await world.bridge();
    const started = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${m('pricey')} go`, allowed_tools: ['Bash'], max_cost_usd: 0.01 });
    const end = await waitForEnd(client, started.structured.job.id);
    expect(end.job.state).toBe('budget_exceeded');
    expect(end.job.estimatedCostUsd).toBeGreaterThan(0.01);
    expect(end.job.endReason).toContain('cap');
    // Stopped at the message that crossed the cap: its Bash call never ran, and claude is gone.
    expect(alive(end.job.pid ?? 0)).toBe(false);
    expect(await processesRunning(['sleep', '318'])).toEqual([]);
  });

  it('concurrent starts never overshoot the daily cap', async () => {
    await world.start({ budgets: { perJobUsd: 0.5, perDayUsd: 1, reserveUsd: 0 }, concurrency: 8 });
    world.model.script('hold', [{ toolUse: { name: 'Bash', input: { command: 'sleep 1', description: 'Hold' } } }, { text: 'ok' }]);
    const client = await world.bridge();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => call<ViewShape>(client, 'delegate_start', { prompt: `${m('hold')} go`, allowed_tools: ['Bash'], max_cost_usd: 0.3 })),
    );
    const admitted = answers.filter((a) => !a.isError);
    const refused = answers.filter((a) => a.isError);
    expect(admitted).toHaveLength(3);
    expect(admitted.length * 0.3).toBeLessThanOrEqual(1);
    for (const r of refused) expect(r.text).toContain('daily budget');
  });

  it('refuses a max_cost_usd above the per-job budget, starting nothing', async () => {
    await world.start({ budgets: { perJobUsd: 0.25, perDayUsd: 5, reserveUsd: 0 } });
    const client = await world.bridge();
    const answer = await call(client, 'delegate_start', { prompt: 'anything', max_cost_usd: 1 });
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain('per-job budget of $0.25');
    expect((await callOk<{ totalJobs: number }>(client, 'delegate_list', {})).structured.totalJobs).toBe(0);
  });
});

describe('OpenRouter errors during a job', () => {
  it.each([
    [401, /rejected the key \(401\)/],
    [402, /out of credits \(402\)/],
    [429, /rate-limited.*\(429\)/],
    [529, /overloaded.*\(529\)/],
  ])('%i ends the job failed with a message the user understands', async (status, message) => {
    await world.start();
    world.model.script(`fail${status}`, [{ error: { status } }]);
    const client = await world.bridge();
    const started = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${m(`fail${status}`)} go` });
    const end = await waitForEnd(client, started.structured.job.id);
    expect(end.job.state).toBe('failed');
    expect(end.job.endReason).toMatch(message);
  });
});

describe("the delegate's environment", () => {
  it("holds none of the caller's Anthropic/Claude variables and no MCP servers; its job token, which its programs can see, reaches no view", async () => {
    await world.start();
    world.model.script('env', [
      { toolUse: { name: 'Bash', input: { command: 'env', description: 'Show the environment' } } },
      { toolUse: { name: 'Bash', input: { command: 'echo "token=$ANTHROPIC_AUTH_TOKEN"', description: 'Show the key' } } },
      { text: 'seen' },
    ]);
    const client = await world.bridge({
      ANTHROPIC_API_KEY: 'sk-ant-parent-secret',
      CLAUDE_CODE_OAUTH_TOKEN: 'parent-oauth',
      ANTHROPIC_BASE_URL: 'https://api.anthropic.com',
    });
    const started = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${m('env')} env`, allowed_tools: ['Bash'] });
    const end = await waitForEnd(client, started.structured.job.id);
    expect(end.job.state).toBe('succeeded');
    const request = world.model.lastRequestFor('env');
    const printed = world.model
      .requestsFor('env')
      .flatMap((r) => toolResults(r).map((t) => t.text))
      .join('\n');
    expect(printed).toContain('OPENROUTER_DELEGATE_DEPTH=1');
    // Pointed at the service's gateway with a token of its own: the key is nowhere in its environment.
    expect(printed).toMatch(/^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+$/m);
    expect(printed).not.toContain(`ANTHROPIC_BASE_URL=${world.fake.baseUrl}`);
    // Its Claude Code holds a token of its own job (key-exposure.test.ts), and in one box its programs see it; the gateway
    // holds against what they can do with it (tests/security/hostile-delegate.test.ts).
    expect(printed).toMatch(/^token=ordg-[A-Za-z0-9_-]{43}$/m);
    expect(printed).not.toContain(KEY);
    expect(request.bearer).toBe(KEY);
    expect(printed).toMatch(/^ANTHROPIC_API_KEY=$/m);
    expect(printed).not.toContain('sk-ant-parent-secret');
    expect(printed).not.toContain('parent-oauth');
    expect(printed).not.toContain('CLAUDE_CODE_OAUTH_TOKEN');
    expect(request.tools.filter((t) => t.startsWith('mcp__'))).toEqual([]);
    const status = await callOk<ViewShape>(client, 'delegate_status', { job_id: end.job.id, progress_limit: 100 });
    // No view passes it on: every answer is scrubbed of token-shaped text.
    expect(status.text).toContain('token=ordg-[redacted]');
    expect(status.text).not.toMatch(/ordg-[A-Za-z0-9_-]{43}/);
    expect(status.text).not.toContain(KEY);
    expect(JSON.stringify(status.structured)).not.toContain(KEY);
    const result = await callOk(client, 'delegate_result', { job_id: end.job.id });
    expect(JSON.stringify(result)).not.toContain(KEY);
    expect(await readFile(end.files.result, 'utf8')).not.toContain(KEY);
  });
});

describe('supervision', () => {
  it('queues jobs beyond the concurrency limit and runs them in turn', async () => {
    await world.start({ concurrency: 1 });
    world.model.script('first', [{ toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 2"', description: 'Hold' } } }, { text: 'first done' }]);
    world.model.script('second', [{ text: 'second done' }]);
    const client = await world.bridge();
    const a = await callOk<ViewShape & { queuePosition: number | null }>(client, 'delegate_start', { prompt: `${m('first')} a`, allowed_tools: ['Bash'] });
    const b = await callOk<ViewShape & { queuePosition: number | null }>(client, 'delegate_start', { prompt: `${m('second')} b` });
    expect(b.structured.job.state).toBe('queued');
    expect(b.structured.queuePosition).toBe(1);
    expect(b.text).toContain('#1 in the queue');
    // A queued job that is cancelled never starts.
    world.model.script('third', [{ text: 'never' }]);
    const c = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${m('third')} c` });
    const cancelled = await callOk<ViewShape>(client, 'delegate_cancel', { job_id: c.structured.job.id });
    expect(cancelled.structured.job.state).toBe('cancelled');
    expect(cancelled.structured.job.pid).toBeNull();
    const second = await callOk<ViewShape>(client, 'delegate_result', { job_id: b.structured.job.id, wait_seconds: 60 });
    expect(second.structured.resultText).toBe('second done');
    const first = await callOk<ViewShape>(client, 'delegate_result', { job_id: a.structured.job.id });
    expect(first.structured.job.state).toBe('succeeded');
    // One at a time: the second started only after the first ended.
    expect(Date.parse((second.structured.job as unknown as { startedAt: string }).startedAt)).toBeGreaterThanOrEqual(
      Date.parse((first.structured.job as unknown as { endedAt: string }).endedAt),
    );
    expect(world.model.requestsFor('third')).toEqual([]);
  });

  it('a missing claude CLI fails the start with how to install it', async () => {
    await world.start({}, { OPENROUTER_DELEGATE_CLAUDE: '/nonexistent/claude' });
    const client = await world.bridge();
    const answer = await call(client, 'delegate_start', { prompt: 'x' });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/OPENROUTER_DELEGATE_CLAUDE points at \/nonexistent\/claude.*npm install -g @anthropic-ai\/claude-code/);
  });

  it('a job that runs past its timeout ends timed_out, its tree killed', async () => {
    await world.start();
    world.model.script('forever', [{ toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 319"', description: 'Never finish' } } }]);
    const client = await world.bridge();
    // 15 s: time for Claude Code to start and its sandbox to start the command on a loaded machine.
    const started = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${m('forever')} go`, allowed_tools: ['Bash'], timeout_minutes: 0.25 });
    await expect.poll(() => processesRunning(['sleep', '319']), { timeout: 20_000 }).toHaveLength(1);
    const end = await waitForEnd(client, started.structured.job.id);
    expect(end.job.state).toBe('timed_out');
    expect(end.job.endReason).toContain('timeout');
    expect(await processesRunning(['sleep', '319'])).toEqual([]);
  });

  it('a blocking wait sends MCP progress notifications while the job runs', async () => {
    await world.start();
    world.model.script('steady', [{ toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 5"', description: 'Work' } } }, { text: 'worked' }]);
    const client = await world.bridge();
    const started = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${m('steady')} go`, allowed_tools: ['Bash'] });
    const progress: string[] = [];
    const result = await client.callTool(
      { name: 'delegate_result', arguments: { job_id: started.structured.job.id, wait_seconds: 60, detail: true } },
      undefined,
      {
        timeout: 120_000,
        onprogress: (p) => progress.push(p.message ?? ''),
      },
    );
    expect((result.structuredContent as { resultText: string }).resultText).toBe('worked');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toMatch(/^running \d+ s, \d+ tool calls/);
  });

  it('on start, jobs whose process is gone are finished from their stream, or marked lost with the reason', async () => {
    await world.start();
    const store = new JobStore({ dir: resolveLocations(world.env).jobsDir });
    const record = (id: string) => ({
      ...newJobRecord(id, jobFields({ sessionId: crypto.randomUUID(), model: MODEL, cwd: world.project, promptPreview: 'left running' }), Date.now()),
      // As the last service left it: running, with a process that no longer exists.
      state: 'running' as const,
      startedAt: new Date().toISOString(),
      pid: 999_999,
      pidStartTime: 'not-a-live-process',
    });
    const finishedId = store.newJobId();
    const finished = await store.create(record(finishedId), 'prompt');
    await copyFile(fileURLToPath(new URL('../fixtures/claude/stream-success-tooluse-2.1.154.jsonl', import.meta.url)), finished.stream);
    const lostId = store.newJobId();
    const lost = await store.create(record(lostId), 'prompt');
    await writeFile(
      lost.stream,
      '{"type":"system","subtype":"init","session_id":"x"}\n{"type":"assistant","message":{"id":"gen-1-a","content":[{"type":"text","text":"half',
    ); // cut mid-line

    // Left queued, but its stream has output: the last service spawned it and died before saying so.
    const spawnedId = store.newJobId();
    const spawned = await store.create({ ...record(spawnedId), state: 'queued', pid: null, pidStartTime: null, startedAt: null }, 'prompt');
    await writeFile(spawned.stream, '{"type":"system","subtype":"init","session_id":"y"}\n');

    const client = await world.bridge();
    const notTwice = await callOk<ViewShape>(client, 'delegate_status', { job_id: spawnedId });
    expect(notTwice.structured.job.state).toBe('lost');
    expect(world.model.requests).toEqual([]);
    const done = await callOk<ViewShape>(client, 'delegate_status', { job_id: finishedId });
    expect(done.structured.job.state).toBe('succeeded');
    expect(done.structured.job.toolCalls).toBe(1);
    const gone = await callOk<ViewShape>(client, 'delegate_status', { job_id: lostId });
    expect(gone.structured.job.state).toBe('lost');
    expect(gone.structured.job.endReason).toContain('ended while the service was not running');
    // The records on disk say the same, so the next start does not redo it.
    expect((await store.load(lostId)).state).toBe('lost');
  });

  it('stop --kill-jobs ends every running job; a plain stop leaves them running', async () => {
    await world.start();
    world.model.script('busy', [{ toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 321"', description: 'Busy' } } }]);
    const client = await world.bridge();
    await callOk(client, 'delegate_start', { prompt: `${m('busy')} a`, allowed_tools: ['Bash'] });
    await expect.poll(() => processesRunning(['sleep', '321']), { timeout: 20_000 }).toHaveLength(1);
    expect((await runCli(['stop'], world.env)).code).toBe(0);
    expect(await processesRunning(['sleep', '321'])).toHaveLength(1);
    const killed = await runCli(['stop', '--kill-jobs'], world.env); // the bridge's next call restarts the service; here nothing runs
    expect(killed.stdout).toContain('not running');
    const list = await callOk<{ running: number }>(client, 'delegate_list', {}); // restarts and re-adopts
    expect(list.structured.running).toBe(1);
    const stopped = await runCli(['stop', '--kill-jobs'], world.env);
    expect(stopped.stdout).toContain('1 delegated job killed');
    expect(await processesRunning(['sleep', '321'])).toEqual([]);
  });
});
