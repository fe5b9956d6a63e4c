/**
 * What callers see of jobs (views.ts), built on a registry that holds hand-made records in a real JobStore
 * folder: no process runs. A view's place in the queue, the list's order and grouping, a fan-out's comparison,
 * and a result noticing that a worktree was deleted by hand on every turn that shares it.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { JobState } from '../../../../src-main/contract/index.js';
import { JobRegistry, liveJob } from '../../../../src-main/core/jobs/supervisor/job-registry.js';
import type { LiveJob } from '../../../../src-main/core/jobs/supervisor/job-registry.js';
import { newJobRecord } from '../../../../src-main/core/jobs/record/job-record.js';
import type { JobRequestFields } from '../../../../src-main/core/jobs/record/job-record.js';
import { JobStore } from '../../../../src-main/core/jobs/record/job-store.js';
import { JobViews } from '../../../../src-main/core/jobs/supervisor/views.js';
import { jobFields } from '../../../support/job-fields.js';
import { makeTempHome } from '../../../support/temp-home.js';
import { inWorktree, registryDeps } from '../../../support/registry-deps.js';

const START = Date.parse('2026-11-30T09:15:00Z');
const SESSION_A = '0a0a0a0a-1111-4222-8333-444455556666';
const SESSION_B = '0b0b0b0b-1111-4222-8333-444455556666';

let home: { home: string; cleanup: () => Promise<void> };
let clock: number;
let store: JobStore;
let registry: JobRegistry;
let views: JobViews;
let logged: string[];

beforeEach(async () => {
  home = await makeTempHome('views-');
  clock = START;
  logged = [];
  store = new JobStore({ dir: path.join(home.home, 'jobs'), now: () => clock });
  registry = new JobRegistry(registryDeps(store, () => clock, { log: (line) => logged.push(line) }));
  views = new JobViews(registry);
});

afterEach(async () => {
  registry.markStopped();
  await registry.settled();
  await home.cleanup();
});

/** A job made a minute after the last one, on disk and in the registry, in `state`. */
async function made(state: JobState, fields: Partial<JobRequestFields> = {}): Promise<LiveJob> {
  clock += 60_000;
  const record = newJobRecord(store.newJobId(), jobFields(fields), clock);
  record.state = state;
  if (state !== 'queued') record.startedAt = record.createdAt;
  if (state !== 'queued' && state !== 'running') record.endedAt = record.createdAt;
  await store.create(record, 'Fix the failing test');
  const job = liveJob(record);
  registry.add(job);
  return job;
}

const view = (job: LiveJob) => views.view(job, { waitSeconds: 0, progressLimit: 15 });

describe('JobViews.view: the queue', () => {
  it("shows each queued job's place in the queue, first come first served", async () => {
    const [first, second] = [await made('queued'), await made('queued')];
    registry.enqueue(first.record.id);
    registry.enqueue(second.record.id);
    expect((await view(first)).queuePosition).toBe(1);
    expect((await view(second)).queuePosition).toBe(2);
  });

  it('moves a job up once the one before it leaves the queue', async () => {
    const [first, second] = [await made('queued'), await made('queued')];
    registry.enqueue(first.record.id);
    registry.enqueue(second.record.id);
    registry.leaveQueue(first.record.id);
    expect((await view(first)).queuePosition).toBeNull();
    expect((await view(second)).queuePosition).toBe(1);
  });

  it('shows no place for a job that is not queued, even if its id is still waiting in the queue', async () => {
    const running = await made('running');
    registry.enqueue(running.record.id);
    expect((await view(running)).queuePosition).toBeNull();
  });
});

describe('JobViews.list', () => {
  it("lists jobs newest first, a conversation's turns together where its newest turn stands", async () => {
    const a1 = await made('succeeded', { sessionId: SESSION_A, turn: 1 });
    const b1 = await made('failed', { sessionId: SESSION_B, turn: 1 });
    const a2 = await made('running', { sessionId: SESSION_A, turn: 2, previousJobId: a1.record.id });

    const list = views.list({ limit: 20 });

    expect(list.conversations.map((c) => c.sessionId)).toEqual([SESSION_A, SESSION_B]);
    expect(list.conversations[0]?.jobs.map((j) => j.id)).toEqual([a2.record.id, a1.record.id]);
    expect(list.conversations[1]?.jobs.map((j) => j.id)).toEqual([b1.record.id]);
    expect({ shown: list.shownJobs, total: list.totalJobs, running: list.running, queued: list.queued }).toEqual({ shown: 3, total: 3, running: 1, queued: 0 });
  });

  it('shows the newest jobs up to the limit, and counts the rest', async () => {
    await made('succeeded', { sessionId: SESSION_A });
    const newer = await made('succeeded', { sessionId: SESSION_B });
    const list = views.list({ limit: 1 });
    expect(list.conversations.flatMap((c) => c.jobs.map((j) => j.id))).toEqual([newer.record.id]);
    expect({ shown: list.shownJobs, total: list.totalJobs }).toEqual({ shown: 1, total: 2 });
  });

  it("puts a fan-out's conversations side by side, where its newest one stands", async () => {
    const grouped = [
      await made('succeeded', { sessionId: '1c1c1c1c-1111-4222-8333-444455556666' }),
      await made('succeeded', { sessionId: SESSION_A }),
      await made('succeeded', { sessionId: '2c2c2c2c-1111-4222-8333-444455556666' }),
    ];
    for (const job of [grouped[0], grouped[2]]) if (job) job.record.groupId = 'group_1234abcd';
    const list = views.list({ limit: 20 });
    expect(list.conversations.map((c) => c.jobs[0]?.id)).toEqual([grouped[2]?.record.id, grouped[0]?.record.id, grouped[1]?.record.id]);
  });

  it('says which job folders could not be read at the last load', () => {
    registry.noteUnreadable([{ dir: '/data/jobs/job_x', problem: 'job.json is not JSON' }]);
    expect(views.list({ limit: 20 }).unreadable).toEqual([{ dir: '/data/jobs/job_x', problem: 'job.json is not JSON' }]);
  });
});

describe('JobViews.group', () => {
  it("gives a fan-out's jobs in the order they were admitted, and nothing for a job outside one", async () => {
    const first = await made('succeeded', { model: 'deepseek/deepseek-v4-flash-0731' });
    const alone = await made('succeeded');
    const second = await made('running', { model: 'qwen/qwen3-coder' });
    first.record.groupId = 'group_1234abcd';
    second.record.groupId = 'group_1234abcd';

    const group = views.group(second.record);
    expect(group?.jobs.map((j) => [j.jobId, j.model, j.state])).toEqual([
      [first.record.id, 'deepseek/deepseek-v4-flash-0731', 'succeeded'],
      [second.record.id, 'qwen/qwen3-coder', 'running'],
    ]);
    expect(views.group(alone.record)).toBeUndefined();
  });
});

describe('JobViews.result: a worktree deleted by hand', () => {
  it('is noticed on every finished turn that shared it, and on no other worktree', async () => {
    const gone = path.join(home.home, 'worktrees', 'job_gone');
    const other = path.join(home.home, 'worktrees', 'job_other');
    const repo = path.join(home.home, 'no-such-repo');
    const turn1 = await made('succeeded', { sessionId: SESSION_A, turn: 1, isolation: inWorktree(gone, repo) });
    const elsewhere = await made('succeeded', { sessionId: SESSION_B, turn: 1, isolation: inWorktree(other, repo) });
    const turn2 = await made('succeeded', { sessionId: SESSION_A, turn: 2, isolation: inWorktree(gone, repo) });

    const result = await views.result(turn2, { jobId: turn2.record.id, waitSeconds: 0, maxChars: 50_000 });

    expect(result.changes).toBeNull();
    expect([turn1, turn2].map((j) => j.record.isolation?.worktreeState)).toEqual(['missing', 'missing']);
    expect(elsewhere.record.isolation?.worktreeState).toBe('present');
    // Saved, not only changed in memory: the next start reads it so.
    expect((await store.load(turn1.record.id)).isolation?.worktreeState).toBe('missing');
  });
});
