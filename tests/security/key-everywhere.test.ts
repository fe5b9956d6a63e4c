/**
 * An OpenRouter key a caller puts into what it sends — the prompt, a prompt file, the system prompt, tool
 * rules, its own client name, a folder's name — comes back in nothing the service hands out or writes, and
 * never reaches the delegate or its model (SECURITY.md §2). Tried with the real service as its own process,
 * the real bridge and the real `claude -p`; a client on the socket hears every event meanwhile.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVENTS } from '../../src-main/contract/index.js';
import type { JobView } from '../../src-main/contract/index.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import { KEY, call } from '../support/delegation.js';
import type { ToolAnswer } from '../support/delegation.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';
import type { ServiceProcess } from '../support/faults.js';
import { filesContaining } from '../support/temp-home.js';
import { errorMessage } from '../../src-main/common/errors.js';

const m = ScriptedModel.marker;
const PLANTED = `OPENROUTER_API_KEY=${KEY}`;

let world: FaultWorld;
let service: ServiceProcess;
/** A client whose own name carries the key: the service logs that name, and records it on the jobs it starts. */
let spy: IpcClient;
let heard: Array<{ event: string; data: unknown }>;
let bridge: Client;
/** Everything the service handed out in this test: tool results (text and structuredContent), answers on the socket. */
let handedOut: unknown[];

beforeEach(async () => {
  world = new FaultWorld();
  await world.start();
  service = await world.serve();
  spy = await IpcClient.connect({ locations: world.locations, clientName: `spy ${KEY}`, timeoutMs: 10_000 });
  world.onCleanup(async () => spy.close());
  heard = [];
  for (const event of Object.keys(EVENTS)) spy.on(event, (data) => heard.push({ event, data }));
  bridge = await world.bridge();
  handedOut = [];
});
afterEach(async () => {
  await world.stop();
});

async function tool(name: string, args: Record<string, unknown>): Promise<ToolAnswer<{ job: JobView['job'] }>> {
  const answer = await call<{ job: JobView['job'] }>(bridge, name, args);
  handedOut.push(answer);
  return answer;
}

async function socketCall(method: Parameters<IpcClient['call']>[0], params: Record<string, unknown>): Promise<unknown> {
  const answer = await spy.call(method, params as never).catch((error: unknown) => ({ error: errorMessage(error) }));
  handedOut.push(answer);
  return answer;
}

/** Nothing handed out, no event heard, no line of the service's log holds the key. */
function expectNothingOutHoldsTheKey(): void {
  for (const answer of handedOut) expect(JSON.stringify(answer)).not.toContain(KEY);
  expect(JSON.stringify(heard)).not.toContain(KEY);
  // The premise of the log check: it quotes the spy's name, which carries the key.
  expect(service.stderr()).toContain('(spy [redacted]) connected');
  expect(service.stderr()).not.toContain(KEY);
}

describe('an OpenRouter key a caller plants in its request', () => {
  it('comes back in no tool result, event, log line or file of the service, and never reaches the delegate', async () => {
    world.model.script('inline', [{ text: 'Inline done.' }]);
    world.model.script('from-file', [{ text: 'File done.' }]);
    world.model.script('follow', [{ text: 'Follow-up done.' }]);
    world.model.script('by-socket', [{ text: 'Socket done.' }]);
    const brief = path.join(world.project, 'brief.md');
    await writeFile(brief, `${PLANTED}\n${m('from-file')} do the brief\n`);

    const inline = await tool('delegate_start', {
      prompt: `${PLANTED}\n${m('inline')} go`,
      append_system_prompt: `Authenticate with ${KEY}.`,
      allowed_tools: [`Bash(echo ${KEY})`],
      disallowed_tools: [`Bash(curl ${KEY})`],
      wait_seconds: 90,
    });
    const fromFile = await tool('delegate_start', { prompt_file: 'brief.md', wait_seconds: 90 });
    const followup = await tool('delegate_followup', { job_id: inline.structured.job.id, prompt: `${PLANTED}\n${m('follow')} again`, wait_seconds: 90 });
    const bySocket = (await socketCall('jobs.start', {
      prompt: `${PLANTED}\n${m('by-socket')} go`,
      caller: { cwd: world.project },
      waitSeconds: 90,
    })) as JobView;
    const ids = [inline.structured.job.id, fromFile.structured.job.id, followup.structured.job.id, bySocket.job.id];

    for (const id of ids) {
      await tool('delegate_status', { job_id: id, wait_seconds: 90 });
      await tool('delegate_result', { job_id: id });
      await socketCall('jobs.status', { jobId: id, progressLimit: 100 });
      await socketCall('jobs.result', { jobId: id });
    }
    await tool('delegate_list', {});
    const list = (await socketCall('jobs.list', { limit: 100 })) as { conversations: Array<{ jobs: Array<JobView['job']> }> };

    // The premise: every job ran, and every planted value reached its record (redacted).
    const jobs = list.conversations.flatMap((c) => c.jobs);
    expect(jobs.map((j) => j.state)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    for (const job of jobs) expect(job.promptPreview).toBe('OPENROUTER_API_KEY=[redacted]');
    const first = jobs.find((j) => j.id === inline.structured.job.id);
    expect(first).toMatchObject({
      appendSystemPrompt: 'Authenticate with [redacted].',
      allowedTools: ['Bash(echo [redacted])'],
      disallowedTools: ['Bash(curl [redacted])'],
    });
    expect(jobs.find((j) => j.id === bySocket.job.id)?.client).toBe('spy [redacted]');
    expect(heard.filter((h) => h.event === 'job.changed').length).toBeGreaterThanOrEqual(ids.length * 2);

    expectNothingOutHoldsTheKey();

    // Files: the one the test planted holds it; nothing the service or a delegate wrote does (job.json,
    // prompt.txt, result.txt, the raw stream, stderr.log, Claude Code's transcripts under the data folder).
    expect(await filesContaining(world.home, KEY)).toEqual([brief]);
    const promptFile = path.join(world.locations.jobsDir, fromFile.structured.job.id, 'prompt.txt');
    expect(await readFile(promptFile, 'utf8')).toBe(`OPENROUTER_API_KEY=[redacted]\n${m('from-file')} do the brief\n`);

    // The delegates' model got the prompt and system prompt, without the key (only as the bearer token).
    const requests = ['inline', 'from-file', 'follow', 'by-socket'].map((name) => world.model.lastRequestFor(name));
    expect(requests[0]?.system).toContain('Authenticate with [redacted].');
    expect(JSON.stringify(requests[0]?.messages)).toContain('OPENROUTER_API_KEY=[redacted]');
    for (const request of requests) expect(JSON.stringify({ system: request.system, messages: request.messages, tools: request.tools })).not.toContain(KEY);
  }, 180_000);

  it('in the name of a folder, has the job refused, and the refusal does not repeat it', async () => {
    await mkdir(path.join(world.project, KEY));
    const asCwd = await tool('delegate_start', { prompt: 'work in that folder', cwd: KEY });
    const asAddDir = await tool('delegate_start', { prompt: 'use that folder too', add_dirs: [KEY] });
    for (const refused of [asCwd, asAddDir]) {
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain(`${path.join(world.project, '[redacted]')} has an OpenRouter key in its path`);
    }
    const bySocket = await socketCall('jobs.start', { prompt: 'work in that folder', cwd: path.join(world.project, KEY), caller: { cwd: world.project } });
    expect(bySocket).toMatchObject({ error: expect.stringContaining('Rename the folder') });

    expect(((await socketCall('jobs.list', {})) as { totalJobs: number }).totalJobs).toBe(0);
    expectNothingOutHoldsTheKey();
    expect(await filesContaining(world.home, KEY)).toEqual([]);
  });

  it('is not quoted back by an error about the input that carries it', async () => {
    const errors = [
      await tool('delegate_start', { prompt_file: `missing-${KEY}.md` }),
      await tool('delegate_start', { prompt: 'go', cwd: `nowhere-${KEY}` }),
      await tool('delegate_start', { prompt: 'go', model: `vendor/${KEY}` }),
    ];
    for (const error of errors) {
      expect(error.isError, error.text).toBe(true);
      // The premise: each error quotes the input it is about.
      expect(error.text).toContain('[redacted]');
    }
    expectNothingOutHoldsTheKey();
  });
});
