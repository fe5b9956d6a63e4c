/**
 * Recovery at start (recovery.ts), on records a last service left in a real JobStore folder: the parts wired
 * by hand around one registry, no Supervisor. Queued jobs are queued again in the order they were made; a
 * running job whose process is gone is finished from its stream (lost when it holds no result); one whose
 * process is still the same is adopted, its gateway token honoured again.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { JobRecord, JobState } from '../../../../src-main/contract/index.js';
import { JobBilling } from '../../../../src-main/core/jobs/supervisor/billing.js';
import { JobRegistry } from '../../../../src-main/core/jobs/supervisor/job-registry.js';
import { newJobRecord } from '../../../../src-main/core/jobs/record/job-record.js';
import type { JobRequestFields } from '../../../../src-main/core/jobs/record/job-record.js';
import { JobStore } from '../../../../src-main/core/jobs/record/job-store.js';
import { killTree } from '../../../../src-main/core/jobs/process/kill-tree.js';
import { JobLifecycle } from '../../../../src-main/core/jobs/supervisor/lifecycle.js';
import { isSameProcess } from '../../../../src-main/core/jobs/process/process-table.js';
import { JobRecovery } from '../../../../src-main/core/jobs/supervisor/recovery.js';
import { spawnDetached } from '../../../../src-main/core/jobs/process/spawn-detached.js';
import { jobFields } from '../../../support/job-fields.js';
import { makeTempHome } from '../../../support/temp-home.js';
import { registryDeps } from '../../../support/registry-deps.js';

const START = Date.parse('2026-11-30T09:15:00Z');
/** The captured session's last line: a successful result. */
const RESULT_LINE =
  readFileSync(new URL('../data/openrouter-generations.jsonl', import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .at(-1) ?? '';

let home: { home: string; cleanup: () => Promise<void> };
let clock: number;
let store: JobStore;
let registry: JobRegistry;
let billing: JobBilling;
let recovery: JobRecovery;
let spawned: number;
let children: Array<{ pid: number; startTime: string | null }>;

beforeEach(async () => {
  home = await makeTempHome('recovery-');
  clock = START;
  spawned = 0;
  children = [];
  store = new JobStore({ dir: path.join(home.home, 'jobs'), now: () => clock });
  const deps = registryDeps(store, () => clock, {
    adoptedPollMs: 20,
    // Recovery itself never spawns; a job it wrongly queued and the queue then started would show here.
    spawn: () => {
      spawned++;
      return Promise.reject(new Error('no delegate is started in these tests'));
    },
  });
  registry = new JobRegistry(deps);
  billing = new JobBilling(registry, deps);
  const lifecycle = new JobLifecycle(registry, deps, billing);
  recovery = new JobRecovery(registry, deps, lifecycle, billing);
});

afterEach(async () => {
  registry.markStopped();
  billing.stop();
  for (const job of registry.all()) {
    await job.tail?.stop();
    registry.clearTimers(job);
  }
  await registry.settled();
  for (const { pid, startTime } of children) if (await isSameProcess(pid, startTime)) await killTree(pid, { startTime, graceMs: 0 });
  await home.cleanup();
});

/** A record the last service left on disk, made at `createdAtMs`, in `state`. */
async function leftOnDisk(state: JobState, createdAtMs: number, fields: Partial<JobRequestFields> = {}): Promise<JobRecord> {
  clock = createdAtMs;
  const record = newJobRecord(store.newJobId(), jobFields(fields), createdAtMs);
  record.state = state;
  if (state === 'running') record.startedAt = record.createdAt;
  await store.create(record, 'Fix the failing test');
  return record;
}

/** What the next start finds: every record on disk, as loadAll reads them (or in the reverse order). */
async function recoverFromDisk(order: 'as read' | 'reversed' = 'as read'): Promise<void> {
  clock = START + 3600_000;
  const { records } = await store.loadAll();
  await recovery.recoverAll(order === 'reversed' ? records.reverse() : records);
}

describe('JobRecovery: queued jobs', () => {
  it('queues them again in the order they were made, whatever order the folders are read in', async () => {
    const second = await leftOnDisk('queued', START + 2000);
    const first = await leftOnDisk('queued', START + 1000);
    const third = await leftOnDisk('queued', START + 3000);

    await recoverFromDisk('reversed');

    expect([first, second, third].map((r) => registry.queuePosition(r.id))).toEqual([1, 2, 3]);
    expect(registry.all().map((j) => j.record.id)).toEqual([first.id, second.id, third.id]);
    expect(registry.all().every((j) => j.record.state === 'queued')).toBe(true);
    expect(spawned).toBe(0);
  });

  it('finishes from its stream, never queuing again, a queued job whose stream has output (it was spawned)', async () => {
    const record = await leftOnDisk('queued', START + 1000);
    await writeFile(store.paths(record.id).stream, `${RESULT_LINE}\n`);

    await recoverFromDisk();
    await registry.settled();

    const job = registry.find(record.id);
    expect(registry.queuePosition(record.id)).toBeNull();
    expect(job.record.state).toBe('succeeded');
    expect(await store.readResult(record.id)).toBe('Fixed: `sum` subtracted instead of adding.');
    expect(spawned).toBe(0);
  });
});

describe('JobRecovery: running jobs', () => {
  it('marks lost, saying why, a running job whose process is gone and whose stream holds no result', async () => {
    // Its pid is another process's now (this one's, with another start time): never taken for the job.
    const record = await leftOnDisk('running', START + 1000);
    Object.assign(record, { pid: process.pid, pidStartTime: '1:1' });
    await store.write(record);

    await recoverFromDisk();
    await registry.settled();

    const onDisk = await store.load(record.id);
    expect(onDisk.state).toBe('lost');
    expect(onDisk.endReason).toMatch(/ended while the service was not running, and its stream has no result/);
    expect(onDisk.endedAt).not.toBeNull();
    expect(onDisk.billing).toBe('unavailable');
    expect(registry.runningCount()).toBe(0);
  });

  it('finishes from its stream a running job whose process is gone but whose stream has its result', async () => {
    const record = await leftOnDisk('running', START + 1000);
    await writeFile(store.paths(record.id).stream, `${RESULT_LINE}\n`);

    await recoverFromDisk();
    await registry.settled();

    const onDisk = await store.load(record.id);
    expect(onDisk.state).toBe('succeeded');
    expect(onDisk.numTurns).toBe(3);
    expect(await store.readResult(record.id)).toBe('Fixed: `sum` subtracted instead of adding.');
  });

  it('adopts a running job whose process is still the same one, and honours its gateway token again', async () => {
    const record = await leftOnDisk('running', START + 1000);
    const paths = store.paths(record.id);
    const child = await spawnDetached({
      command: 'sleep',
      args: ['30'],
      cwd: home.home,
      env: { PATH: process.env.PATH ?? '' },
      stdinFile: paths.prompt,
      stdoutFile: paths.stream,
      stderrFile: paths.stderr,
    });
    children.push({ pid: child.pid, startTime: child.startTime });
    Object.assign(record, { pid: child.pid, pidStartTime: child.startTime });
    await store.write(record);
    await store.writeTokenHash(record.id, 'c'.repeat(64));

    await recoverFromDisk();

    const job = registry.find(record.id);
    expect(job.record.state).toBe('running');
    expect(registry.jobByToken('c'.repeat(64))).toBe(job);
    expect(registry.runningCount()).toBe(1);
  });
});
