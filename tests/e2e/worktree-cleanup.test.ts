/**
 * Cleanup that knows a squash, end to end (docs/ISOLATION.md, "Kept until you decide"): the real service and CLI, real
 * delegates in real worktrees. A job whose branch was squash-merged is removed at the next prune past retention, like a
 * merged one; one with work in no other branch stays. `openrouter-delegate worktrees` lists what is kept — job, branch,
 * taken/untaken/orphan, size, total — and `--remove-taken` removes orphans whose work is elsewhere, never other work.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobRecord, JobResult } from '../../src-main/contract/index.js';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { runCli } from '../support/built.js';
import { ScriptedModel, delegateCwd } from '../support/fake-anthropic.js';
import type { ScriptStep } from '../support/fake-anthropic.js';
import { FaultWorld } from '../support/faults.js';
import { branches, gitIn, startWithRepo, writeFiles } from '../support/git-repo.js';

const m = ScriptedModel.marker;
let world: FaultWorld;

const FILES = { 'a.txt': 'one\n', 'src/keep.ts': 'export const keep = 1;\n' };

beforeEach(() => {
  world = new FaultWorld();
});
afterEach(async () => {
  await world.stop();
});

const write = (name: string, content: string): ScriptStep => ({
  dynamic: (request) => ({ toolUse: { name: 'Write', input: { file_path: path.join(delegateCwd(request), name), content } } }),
});

async function run(client: IpcClient, name: string, file: string): Promise<JobRecord> {
  world.model.script(name, [write(file, `${name}\n`), { text: 'ok' }]);
  const started = await client.call('jobs.start', { prompt: `${m(name)} go`, caller: { cwd: world.project } });
  await world.waitForEnd(client, started.job.id);
  const result: JobResult = await client.call('jobs.result', { jobId: started.job.id });
  expect(result.job.isolation?.mode).toBe('worktree');
  return result.job;
}

async function age(jobId: string, days: number): Promise<void> {
  const store = world.store();
  const record = await store.load(jobId);
  const then = new Date(Date.now() - days * 24 * 3600_000).toISOString();
  await store.write({ ...record, createdAt: then, startedAt: then, endedAt: then });
}

describe('cleanup that knows a squash', { timeout: 120_000 }, () => {
  it('prunes a squash-merged job past retention, keeps untaken work, lists orphans and removes only those whose work is elsewhere', async () => {
    const { client } = await startWithRepo(world, FILES, { retentionDays: 1 });
    const squashed = await run(client, 'squashed', 'squashed.txt');
    const untaken = await run(client, 'untaken', 'untaken.txt');
    const orphanTaken = await run(client, 'orphan-taken', 'picked.txt');
    const orphanUntaken = await run(client, 'orphan-untaken', 'lost.txt');
    const at = (job: JobRecord) => ({ worktree: job.isolation?.worktree ?? '', branch: job.isolation?.branch ?? '' });

    // A second commit on the squashed branch, so the squash is no single commit's patch; a known-size file in the untaken one.
    await writeFiles(at(squashed).worktree, { 'more.txt': 'more\n' });
    await gitIn(at(squashed).worktree, ['add', '--all']);
    await gitIn(at(squashed).worktree, ['commit', '--quiet', '-m', 'more']);
    await gitIn(world.project, ['merge', '--quiet', '--squash', at(squashed).branch]);
    await gitIn(world.project, ['commit', '--quiet', '-m', 'the delegate work, squashed']);
    await gitIn(world.project, ['cherry-pick', at(orphanTaken).branch]);

    await runCli(['stop'], world.env);
    await age(squashed.id, 30);
    await age(untaken.id, 30);
    // Their job folders deleted: their worktrees are orphans now.
    for (const job of [orphanTaken, orphanUntaken]) await rm(world.store().jobDir(job.id), { recursive: true, force: true });

    await world.serve();
    const again = await world.connect();
    // Squash-merged: pruned with its worktree and branch. Untaken: kept past retention.
    await expect(again.call('jobs.status', { jobId: squashed.id })).rejects.toThrow(/No job/);
    expect(existsSync(at(squashed).worktree)).toBe(false);
    expect((await again.call('jobs.status', { jobId: untaken.id })).job.isolation?.worktreeState).toBe('present');

    const report = await again.call('worktrees.list', {});
    expect(report.worktrees.map((w) => [w.jobId, w.branch, w.state, w.takenBy])).toEqual(
      expect.arrayContaining([
        [untaken.id, at(untaken).branch, 'untaken', null],
        [null, at(orphanTaken).branch, 'orphan', 'picked'],
        [null, at(orphanUntaken).branch, 'orphan', null],
      ]),
    );
    expect(report.worktrees).toHaveLength(3);
    const untakenSize = report.worktrees.find((w) => w.jobId === untaken.id)?.bytes ?? 0;
    // FILES plus the delegate's file: 'one\n' + the keep line + 'untaken\n'.
    expect(untakenSize).toBe(4 + 23 + 8);
    expect(report.totalBytes).toBe(report.worktrees.reduce((sum, w) => sum + w.bytes, 0));

    const listed = await runCli(['worktrees'], world.env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${untaken.id}  ${at(untaken).branch}  untaken  35 B`);
    expect(listed.stdout).toContain(`(no job)  ${at(orphanTaken).branch}  orphan, work taken (picked into main)`);
    expect(listed.stdout).toContain('Total: 3 worktrees');
    expect(listed.stdout).toContain('openrouter-delegate worktrees --remove-taken` removes the 1 ');

    const removed = await runCli(['worktrees', '--remove-taken'], world.env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('Removed 1 worktree');
    expect(removed.stdout).toContain(`because commits on ${at(untaken).branch} are in no other branch`);
    expect(removed.stdout).toContain(`because its branch ${at(orphanUntaken).branch}`);
    expect(existsSync(at(orphanTaken).worktree)).toBe(false);
    expect(existsSync(at(orphanUntaken).worktree)).toBe(true);
    expect(existsSync(at(untaken).worktree)).toBe(true);
    expect((await branches(world.project)).sort()).toEqual([at(orphanUntaken).branch, at(untaken).branch, 'main'].sort());
  });
});
