/**
 * Delegate profiles with the real `claude -p` (the version in package.json) against the scripted model: what
 * each profile puts in the first request a delegate sends (its tools and its size, which every turn pays
 * again), that a coding task still succeeds under the default `lean`, and that a follow-up keeps the
 * conversation's profile. docs/GUIDE.md "Delegate profiles" quotes the sizes this file prints.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DelegateProfile } from '../../src-main/contract/settings.js';
import type { ModelRequest, ToolCall } from '../support/fake-anthropic.js';
import { ScriptedModel, toolResults } from '../support/fake-anthropic.js';
import { KEY, MODEL } from '../support/delegation.js';
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
 * The tools a request offers. Claude Code adds `DeferredToolPlaceholder` (about 200 bytes) wherever it does
 * not run with --bare: a stand-in for the tools it loads on demand, not a tool the model can call.
 */
const offered = (request: ModelRequest): string[] => request.tools.filter((name) => name !== 'DeferredToolPlaceholder').sort();

/** Runs one job with `profile` whose model answers at once; returns the first request its delegate sent. */
async function firstRequest(profile: DelegateProfile): Promise<ModelRequest> {
  const name = `profile-${profile}`;
  world.model.script(name, [{ text: 'finished' }]);
  const client = await world.connect();
  const started = await client.call('jobs.start', { prompt: `${m(name)} Say hello.`, profile, caller: { cwd: world.project } });
  expect(started.job.profile).toBe(profile);
  const end = await world.waitForEnd(client, started.job.id);
  expect(end.job.state, end.job.endReason ?? '').toBe('succeeded');
  const [first] = world.model.requestsFor(name);
  if (!first) throw new Error(`no request played ${name}`);
  return first;
}

describe('what each profile sends the model', () => {
  it("full sends Claude Code's default tools; lean only the coding tools, in under 55% of the bytes; minimal only Read, smaller still", async () => {
    await world.start({ delegateProfile: 'full' });
    await world.serve();

    const full = await firstRequest('full');
    const lean = await firstRequest('lean');
    const minimal = await firstRequest('minimal');
    console.log(`first request bytes: full ${full.bytes}, lean ${lean.bytes}, minimal ${minimal.bytes}`);

    expect(offered(full)).toEqual(expect.arrayContaining(['Agent', 'Bash', 'Edit', 'Read', 'Skill', 'Workflow', 'ScheduleWakeup', 'ToolSearch', 'Write']));
    expect(offered(lean)).toEqual(['Bash', 'Edit', 'Glob', 'Grep', 'Read', 'Write']);
    expect(offered(minimal)).toEqual(['Read']);
    // Both carry Claude Code's description of the sandbox their Bash runs in (some 7 kB; bench/sandbox.ts): without
    // it lean is under half of full.
    expect(lean.bytes / full.bytes).toBeLessThan(0.55);
    expect(minimal.bytes).toBeLessThan(lean.bytes / 4);
    // --bare: Claude Code's short system prompt, and no project context.
    expect(minimal.system.length).toBeLessThan(lean.system.length / 10);
    // Every profile still reaches OpenRouter with the key and the pinned model.
    for (const request of [full, lean, minimal]) {
      expect(request.bearer).toBe(KEY);
      expect(request.model).toBe(MODEL);
    }
  });

  it('refuses a profile above the policy, and an allowed tool the profile lacks, before anything starts', async () => {
    await world.start();
    await world.serve();
    const client = await world.connect();
    const ask = (fields: Record<string, unknown>) => client.call('jobs.start', { prompt: 'Say hello.', caller: { cwd: world.project }, ...fields });

    await expect(ask({ profile: 'full' })).rejects.toMatchObject({
      code: 'policy_refused',
      message: expect.stringContaining('profile "full" is above the user\'s profile "lean". Use one of: minimal, lean'),
    });
    await expect(ask({ allowedTools: ['Read', 'Agent'] })).rejects.toMatchObject({
      code: 'policy_refused',
      message: expect.stringContaining('"Agent" is not in profile "lean", which gives the delegate only Bash, Read, Edit, Write, Glob, Grep'),
    });
    expect((await client.call('jobs.list', {})).conversations).toEqual([]);
    expect(world.model.requests).toEqual([]);
  });
});

describe('a coding task under lean (the default)', () => {
  it('reads, edits and runs a program through the real CLI; a follow-up keeps the profile', async () => {
    await world.start({ approvableTools: ['Read', 'Bash'] });
    await world.serve();
    const source = path.join(world.project, 'sum.js');
    await writeFile(source, 'module.exports = (a, b) => a - b;\n');
    const calls: ToolCall[] = [
      { name: 'Read', input: { file_path: source } },
      { name: 'Edit', input: { file_path: source, old_string: 'a - b', new_string: 'a + b' } },
      { name: 'Bash', input: { command: `node -e "console.log('sum=' + require('${source}')(2, 3))"`, description: 'Check the sum' } },
    ];
    world.model.script('lean-task', [...calls.map((toolUse) => ({ toolUse })), { text: 'Fixed.' }]);
    const client = await world.connect();

    const started = await client.call('jobs.start', { prompt: `${m('lean-task')} Fix sum.js.`, allowedTools: ['Bash'], caller: { cwd: world.project } });
    const end = await world.waitForEnd(client, started.job.id);

    expect(end.job).toMatchObject({ state: 'succeeded', profile: 'lean' });
    const results = toolResults(world.model.lastRequestFor('lean-task'));
    expect(results.map((r) => r.isError)).toEqual([false, false, false]);
    expect(results[2]?.text).toContain('sum=5');
    expect(await readFile(source, 'utf8')).toBe('module.exports = (a, b) => a + b;\n');

    world.model.script('lean-followup', [{ text: 'Still fixed.' }]);
    const followup = await client.call('jobs.followup', {
      jobId: started.job.id,
      prompt: `${m('lean-followup')} Check again.`,
      caller: { cwd: world.project },
    });
    const after = await world.waitForEnd(client, followup.job.id);
    expect(after.job).toMatchObject({ state: 'succeeded', profile: 'lean', turn: 2, sessionId: started.job.sessionId });
    const [resumed] = world.model.requestsFor('lean-followup');
    expect(resumed && offered(resumed)).toEqual(['Bash', 'Edit', 'Glob', 'Grep', 'Read', 'Write']);
  });
});

describe('a text task under minimal (--bare)', () => {
  it("minimal: Read still reaches the project, not the service's token; project settings stay unread; a follow-up resumes with --bare", async () => {
    await world.start();
    await world.serve();
    const notes = path.join(world.project, 'notes.txt');
    await writeFile(notes, 'NOTES-INSIDE\n');
    // --setting-sources user still holds under --bare: a project's own settings are not read.
    await mkdir(path.join(world.project, '.claude'));
    await writeFile(path.join(world.project, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['Read(./notes.txt)'] } }));
    world.model.script('minimal-task', [
      { toolUse: { name: 'Read', input: { file_path: notes } } },
      { toolUse: { name: 'Read', input: { file_path: world.locations.tokenFile } } },
      { text: 'Summarised.' },
    ]);
    const client = await world.connect();

    const started = await client.call('jobs.start', {
      prompt: `${m('minimal-task')} Summarise notes.txt.`,
      profile: 'minimal',
      caller: { cwd: world.project },
    });
    const end = await world.waitForEnd(client, started.job.id);

    expect(end.job).toMatchObject({ state: 'succeeded', profile: 'minimal' });
    const results = toolResults(world.model.lastRequestFor('minimal-task'));
    expect(results.map((r) => r.isError)).toEqual([false, true]);
    expect(results[0]?.text).toContain('NOTES-INSIDE');
    const token = (await readFile(world.locations.tokenFile, 'utf8')).trim();
    expect(JSON.stringify(world.model.requests.map((r) => r.body))).not.toContain(token);

    world.model.script('minimal-followup', [{ text: 'Shorter.' }]);
    const followup = await client.call('jobs.followup', { jobId: started.job.id, prompt: `${m('minimal-followup')} Shorter.`, caller: { cwd: world.project } });
    const after = await world.waitForEnd(client, followup.job.id);
    expect(after.job).toMatchObject({ state: 'succeeded', profile: 'minimal', turn: 2 });
    const [resumed] = world.model.requestsFor('minimal-followup');
    expect(resumed && offered(resumed)).toEqual(['Read']);
    // The conversation so far came back with the resume.
    expect(JSON.stringify(resumed?.messages)).toContain('NOTES-INSIDE');
  });
});
