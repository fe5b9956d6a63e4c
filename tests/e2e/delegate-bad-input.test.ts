/** Everything a model can get wrong gets a precise error; nothing starts and nothing is lost. */
import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { DelegationWorld, call, callOk, waitForEnd } from '../support/delegation.js';
import type { ViewShape } from '../support/delegation.js';

const world = new DelegationWorld();
let client: Client;

beforeAll(async () => {
  await world.start({ allowlist: ['deepseek/*', 'qwen/*'], blocklist: ['qwen/qwen3.8-27b'] });
  world.model.script('slowly', [{ toolUse: { name: 'Bash', input: { command: 'sh -c "sleep 3"', description: 'Hold' } } }, { text: 'ok' }]);
  world.model.script('quick', [{ text: 'quick answer' }]);
  client = await world.bridge();
});
afterAll(() => world.stop());

async function jobCount(): Promise<number> {
  return (await callOk<{ totalJobs: number }>(client, 'delegate_list', { limit: 500 })).structured.totalJobs;
}

/** The call is refused with `message`; a refused delegate_start leaves no job behind. */
async function refused(name: string, args: Record<string, unknown>, message: RegExp): Promise<void> {
  const before = name === 'delegate_start' ? await jobCount() : null;
  const answer = await call(client, name, args);
  expect(answer.isError, answer.text).toBe(true);
  expect(answer.text).toMatch(message);
  if (before !== null) expect(await jobCount(), 'a refused delegate_start left a job behind').toBe(before);
}

describe('delegate_start refuses, starting nothing', () => {
  it('both prompt and prompt_file', () => refused('delegate_start', { prompt: 'a', prompt_file: 'b.txt' }, /either prompt or prompt_file, not both/));
  it('neither prompt nor prompt_file', () => refused('delegate_start', {}, /prompt \(text\) or prompt_file/));
  it('a prompt file that does not exist', () =>
    refused('delegate_start', { prompt_file: 'missing.txt' }, /prompt_file .*missing\.txt cannot be read \(ENOENT\)/));
  it('a prompt file that is a directory', () => refused('delegate_start', { prompt_file: '.' }, /is not a regular file/));
  it('a huge prompt file', async () => {
    const file = path.join(world.project, 'huge.txt');
    await writeFile(file, 'x'.repeat(2 * 1024 * 1024));
    await refused('delegate_start', { prompt_file: 'huge.txt' }, /2\.0 MB; the limit is 1 MB/);
  });
  it('an empty prompt file', async () => {
    await writeFile(path.join(world.project, 'empty.txt'), '  \n');
    await refused('delegate_start', { prompt_file: 'empty.txt' }, /is empty/);
  });
  it("a prompt file outside the job's folders", () =>
    refused(
      'delegate_start',
      { prompt_file: '/etc/hostname' },
      /prompt_file \/etc\/hostname is outside the job's folders .*inside the job's folder \(cwd or add_dirs\)/,
    ));
  it('a prompt file that is a symlink', async () => {
    await symlink('/etc/hostname', path.join(world.project, 'linked.txt'));
    await refused('delegate_start', { prompt_file: 'linked.txt' }, /linked\.txt is a symlink/);
  });
  it("an allowed_tools path rule outside the job's folders", () =>
    refused('delegate_start', { prompt: 'a', allowed_tools: ['Read(//etc/**)'] }, /"Read\(\/\/etc\/\*\*\)" reaches outside the job's folders/));
  it('a cwd that does not exist', () => refused('delegate_start', { prompt: 'a', cwd: '/nonexistent/dir' }, /cwd \/nonexistent\/dir does not exist/));
  it('wait_seconds out of range', () => refused('delegate_start', { prompt: 'a', wait_seconds: 601 }, /wait_seconds/));
  it('a model outside the allowlist, naming allowed ones', () =>
    refused('delegate_start', { prompt: 'a', model: 'openai/gpt-5' }, /does not allow openai\/gpt-5: .*Allowed instead \(cheapest first\): (deepseek|qwen)\//));
  it('a blocklisted model', () => refused('delegate_start', { prompt: 'a', model: 'qwen/qwen3.8-27b' }, /blocklist/i));
  it('a model OpenRouter does not have', () =>
    refused('delegate_start', { prompt: 'a', model: 'deepseek/no-such-model' }, /OpenRouter has no model "deepseek\/no-such-model"/));
  it('a permission mode above the ceiling', () =>
    refused('delegate_start', { prompt: 'a', permission_mode: 'bypassPermissions' }, /above the user's ceiling "acceptEdits"/));
  it('a profile above the policy', () => refused('delegate_start', { prompt: 'a', profile: 'full' }, /profile "full" is above the user's profile "lean"/));
  it('a profile that does not exist', () => refused('delegate_start', { prompt: 'a', profile: 'huge' }, /profile/));
  it('an allowed tool the profile lacks', () =>
    refused(
      'delegate_start',
      { prompt: 'a', profile: 'minimal', allowed_tools: ['Grep'] },
      /"Grep" is not in profile "minimal", which gives the delegate only Read/,
    ));
});

describe('ids that do not exist', () => {
  it.each(['delegate_status', 'delegate_result', 'delegate_cancel'])('%s with an unknown job id', (tool) =>
    refused(tool, { job_id: 'job_20260101T000000Z_nosuch' }, /No job "job_20260101T000000Z_nosuch"/),
  );
  it('a follow-up to an unknown session', () =>
    refused('delegate_followup', { session_id: 'no-such-session', prompt: 'x' }, /No conversation with session_id "no-such-session"/));
  it('a follow-up naming both a job and a session', () =>
    refused('delegate_followup', { job_id: 'a', session_id: 'b', prompt: 'x' }, /either job_id or session_id/));
  it('a job id that tries to walk out of the jobs folder', () => refused('delegate_status', { job_id: '../../config/settings' }, /No job/));
});

describe('conversations', () => {
  it('refuses a follow-up while the previous turn still runs, then accepts it once it ended', async () => {
    const started = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${ScriptedModel.marker('slowly')} hold`, allowed_tools: ['Bash'] });
    const jobId = started.structured.job.id;
    await refused(
      'delegate_followup',
      { job_id: jobId, prompt: `${ScriptedModel.marker('quick')} next` },
      new RegExp(`job ${jobId}\\) is (queued|running).*delegate_result`),
    );
    await waitForEnd(client, jobId);
    const next = await callOk<ViewShape>(client, 'delegate_followup', { job_id: jobId, prompt: `${ScriptedModel.marker('quick')} next`, wait_seconds: 60 });
    expect(next.structured.job.state).toBe('succeeded');
    expect(next.structured.job.turn).toBe(2);
  });

  it('two follow-ups racing for one conversation: one starts, the other is refused', async () => {
    const first = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${ScriptedModel.marker('quick')} q`, wait_seconds: 60 });
    const answers = await Promise.all(
      [1, 2].map(() =>
        call<ViewShape>(client, 'delegate_followup', { session_id: first.structured.job.sessionId, prompt: `${ScriptedModel.marker('quick')} again` }),
      ),
    );
    expect(answers.filter((a) => !a.isError)).toHaveLength(1);
    expect(answers.find((a) => a.isError)?.text).toMatch(/follow-up of this conversation|previous turn/);
    const started = answers.find((a) => !a.isError);
    await waitForEnd(client, started?.structured.job.id ?? '');
  });

  it('cancelling a finished job changes nothing', async () => {
    const started = await callOk<ViewShape>(client, 'delegate_start', { prompt: `${ScriptedModel.marker('quick')} q`, wait_seconds: 60 });
    expect(started.structured.job.state).toBe('succeeded');
    const cancelled = await callOk<ViewShape>(client, 'delegate_cancel', { job_id: started.structured.job.id });
    expect(cancelled.structured.job.state).toBe('succeeded');
  });
});
