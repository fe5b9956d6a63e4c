/**
 * Fan-out (docs/ISOLATION.md, "Fan-out"; issue 14, item 4), end to end: the real service, the real `claude -p`
 * as each delegate against the scripted model, a real git repository, and the real bridge as the calling model's side.
 * One delegate_start naming three models makes three jobs, each on its own branch with its own edits, and one comparison;
 * a set the budgets cannot hold together, or one model the policy refuses, refuses the whole set with nothing made.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src-main/contract/index.js';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { callOk } from '../support/delegation.js';
import { ScriptedModel, delegateCwd } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';
import { branchFiles, branches, repoState, startWithRepo, treeOf } from '../support/git-repo.js';

const m = ScriptedModel.marker;
const MODELS = ['deepseek/deepseek-v4-flash-0731', 'qwen/qwen3.7-flash', 'upstage/solar-pro4'];
/** The project every fan-out starts from. */
const FILES = { 'a.txt': 'one\n' };

let world: FaultWorld;

beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

/** What each model's delegate leaves: a file naming the model that wrote it, so each branch's edits are its own. */
function writesItsModel(name: string): void {
  world.model.script(name, [
    {
      dynamic: (request) => ({
        toolUse: { name: 'Write', input: { file_path: path.join(delegateCwd(request), 'by.txt'), content: `${request.model ?? '?'}\n` } },
      }),
    },
    { text: 'wrote by.txt' },
  ]);
}

async function nothingMade(client: IpcClient): Promise<void> {
  const list = await client.call('jobs.list', {});
  expect(list.totalJobs).toBe(0);
  expect(await branches(world.project)).toEqual(['main']);
  const worktrees = path.join(world.locations.data, 'worktrees');
  expect(existsSync(worktrees) ? await readdir(worktrees) : []).toEqual([]);
  const jobs = path.join(world.locations.data, 'jobs');
  expect(existsSync(jobs) ? await readdir(jobs) : []).toEqual([]);
}

describe('a fan-out to several models', { timeout: 120_000 }, () => {
  it('makes one job per model, each on its own branch with its own edits, and one comparison in delegate_result', async () => {
    const { client } = await startWithRepo(world, FILES);
    const before = { state: await repoState(world.project), tree: await treeOf(world.project) };
    writesItsModel('fan');
    const bridge = await world.bridge();

    const started = await callOk(bridge, 'delegate_start', { prompt: `${m('fan')} write by.txt`, models: MODELS, allowed_tools: ['Write'], detail: false });
    const groupLine = /Comparison (group_\w+), 3 models:/.exec(started.text);
    expect(groupLine, started.text).not.toBeNull();
    const jobIds = [...started.text.matchAll(/\((job_\w+)(?:, this one)?\)/g)].map((match) => match[1] as string);
    expect(jobIds).toHaveLength(3);
    for (const id of jobIds) await world.waitForEnd(client, id);

    const results = await Promise.all(jobIds.map((jobId) => client.call('jobs.result', { jobId })));
    expect(results.map((r) => [r.job.model, r.job.state])).toEqual(MODELS.map((model) => [model, 'succeeded']));
    expect(new Set(results.map((r) => r.job.groupId))).toEqual(new Set([groupLine?.[1]]));
    expect(new Set(results.map((r) => r.job.sessionId)).size).toBe(3);
    for (const r of results) {
      const branch = r.job.isolation?.branch ?? '';
      expect(await branchFiles(world.project, branch)).toEqual({ 'a.txt': 'one\n', 'by.txt': `${r.job.model}\n` });
      expect(r.group?.jobs.map((j) => j.jobId)).toEqual(jobIds);
    }
    expect((await branches(world.project)).length).toBe(4);
    // The user's tree is no one's playground.
    expect({ state: await repoState(world.project), tree: await treeOf(world.project) }).toEqual(before);

    // Asked of any one of them, delegate_result compares all three, a line each, and says how to take one.
    const result = await callOk(bridge, 'delegate_result', { job_id: jobIds[1], detail: false });
    const lines = result.text.split('\n');
    const at = lines.findIndex((line) => line.startsWith('Comparison '));
    expect(at).toBeGreaterThan(0);
    for (const [i, r] of results.entries()) {
      const line = lines[at + 1 + i] ?? '';
      expect(line).toContain(`${r.job.model} (${r.job.id}${i === 1 ? ', this one' : ''}): succeeded, `);
      expect(line).toMatch(/ in \/ .* out, /);
      expect(line).toContain(`1 file +1 −0, ${r.job.isolation?.branch ?? ''}`);
    }
    expect(lines[at + 4]).toContain('Take one: openrouter-delegate take <job id> (or git merge <its branch>)');

    // delegate_list keeps the three side by side, each marked as the comparison's.
    const list = await callOk(bridge, 'delegate_list', { detail: false });
    expect(list.text.match(new RegExp(`\\(comparison ${groupLine?.[1] ?? ''}\\)`, 'g')), list.text).toHaveLength(3);
  });

  it('answers a delegate_start that waited with the comparison as it is when the wait ends, not as it was at the start', async () => {
    await startWithRepo(world, FILES);
    writesItsModel('waited');
    const bridge = await world.bridge();
    const started = await callOk(bridge, 'delegate_start', {
      prompt: `${m('waited')} write by.txt`,
      models: MODELS.slice(0, 2),
      allowed_tools: ['Write'],
      wait_seconds: 90,
    });
    expect(started.text).toMatch(/^Job job_\w+: succeeded/);
    expect(started.text).toMatch(/\(job_\w+, this one\): succeeded, /);
    expect(started.text).not.toMatch(/this one\): queued/);
  });

  it('is refused whole, with nothing made, when the set would pass the daily budget', async () => {
    // Each model's cap ($0.50) fits the per-job budget; the three together ($1.50) do not fit the day's $1.20.
    const { client } = await startWithRepo(world, FILES, { budgets: { perJobUsd: 0.5, perDayUsd: 1.2, reserveUsd: 0 } });
    const refused = await client.call('jobs.start', { prompt: `${m('fan')} go`, models: MODELS, caller: { cwd: world.project } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ServiceError);
    expect((refused as ServiceError).code).toBe('budget_refused');
    expect((refused as ServiceError).message).toContain("these 3 jobs' caps of $1.50 ($0.50 each)");
    await nothingMade(client);
    expect(world.model.requests).toHaveLength(0);
  });

  it('is refused whole, with nothing made, when one model fails the policy', async () => {
    const { client } = await startWithRepo(world, FILES, { blocklist: ['upstage/*'] });
    const refused = await client.call('jobs.start', { prompt: `${m('fan')} go`, models: MODELS, caller: { cwd: world.project } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ServiceError);
    expect((refused as ServiceError).code).toBe('policy_refused');
    expect((refused as ServiceError).message).toMatch(/upstage\/solar-pro4.*The fan-out was refused whole: no job was started\./s);
    await nothingMade(client);
  });

  it("refuses more models than the user's fan-out limit, and model beside models", async () => {
    const { client } = await startWithRepo(world, FILES, { fanOutLimit: 2 });
    const over = await client.call('jobs.start', { prompt: 'go', models: MODELS, caller: { cwd: world.project } }).catch((e: unknown) => e);
    expect((over as ServiceError).message).toBe("3 models are more than the user's fan-out limit of 2. Name at most 2.");
    const both = await client
      .call('jobs.start', { prompt: 'go', model: MODELS[0], models: MODELS.slice(1), caller: { cwd: world.project } })
      .catch((e: unknown) => e);
    expect((both as ServiceError).message).toBe('Give either model or models (a fan-out), not both.');
    await nothingMade(client);
  });
});
