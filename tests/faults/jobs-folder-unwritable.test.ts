/**
 * The jobs folder on a full file system, and on one remounted read-only (a real 300 KiB tmpfs mounted on
 * the home's jobs folder): a new job is refused with an error that says what is wrong, nothing is spawned,
 * no half-made job folder is left, and the jobs already there are all kept.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobView } from '../../src-main/contract/index.js';
import type { IpcClient } from '../../src-main/ipc/client.js';
import { ScriptedModel } from '../support/fake-anthropic.js';
import { FaultWorld, canMount, fillFileSystem, mountTmpfs, remountReadOnly } from '../support/faults.js';
import type { ServiceProcess } from '../support/faults.js';

const m = ScriptedModel.marker;
const mounting = await canMount();
const skipReason = mounting.ok ? '' : ` (skipped: ${mounting.reason})`;

let world: FaultWorld;
let client: IpcClient;
let service: ServiceProcess;
let jobsDir: string;
/** A job that finished before the file system filled up or went read-only. */
let earlier: JobView;

beforeEach(async () => {
  if (!mounting.ok) return;
  world = new FaultWorld();
  await world.start();
  jobsDir = world.locations.jobsDir;
  await mkdir(jobsDir, { recursive: true, mode: 0o700 });
  world.onCleanup(await mountTmpfs(jobsDir, '300k'));
  world.model.script('earlier', [{ text: 'Done before the trouble.' }]);
  world.model.script('refused', [{ text: 'never' }]);
  service = await world.serve();
  client = await world.connect();
  const started = await world.startJob(client, { prompt: `${m('earlier')} go` });
  earlier = await world.waitForEnd(client, started.job.id);
  expect(earlier.job.state).toBe('succeeded');
}, 90_000);
afterEach(async () => {
  // Stops the service before the file system under it is unmounted (stop runs the unmount last).
  await world?.stop();
}, 60_000);

/** The jobs there are, as the service lists them, and the folders on disk. */
async function jobsKept(): Promise<{ listed: string[]; folders: string[] }> {
  const list = await client.call('jobs.list', {});
  const listed = list.conversations.flatMap((c) => c.jobs.map((j) => j.id));
  const folders = (await readdir(jobsDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  return { listed, folders };
}

describe(`the jobs folder on a full file system${skipReason}`, { timeout: 90_000 }, () => {
  it.skipIf(!mounting.ok)('refuses a new job, saying the disk is full and what to do; nothing is spawned, no folder is left', async () => {
    await fillFileSystem(jobsDir);
    await expect(world.startJob(client, { prompt: `${m('refused')} go` })).rejects.toThrow(
      `Cannot start the job: the jobs folder ${jobsDir} is on a full disk (ENOSPC). Free some space, then start the job again.`,
    );
    expect(world.model.requestsFor('refused')).toEqual([]);
    expect((await jobsKept()).folders).toEqual([earlier.job.id]);
  });

  it.skipIf(!mounting.ok)('loses none of the jobs already there', async () => {
    await fillFileSystem(jobsDir);
    await expect(world.startJob(client, { prompt: `${m('refused')} go` })).rejects.toThrow('ENOSPC');
    expect((await jobsKept()).listed).toEqual([earlier.job.id]);
    const result = await client.call('jobs.result', { jobId: earlier.job.id });
    expect(result.job.state).toBe('succeeded');
    expect(result.resultText).toBe('Done before the trouble.');
  });

  it.skipIf(!mounting.ok)('starts jobs again once space is freed', async () => {
    const filler = await fillFileSystem(jobsDir);
    await expect(world.startJob(client, { prompt: `${m('refused')} go` })).rejects.toThrow('ENOSPC');
    await rm(filler);
    world.model.script('later', [{ text: 'Room again.' }]);
    const started = await world.startJob(client, { prompt: `${m('later')} go` });
    expect((await client.call('jobs.result', { jobId: started.job.id, waitSeconds: 90 })).resultText).toBe('Room again.');
  });
});

describe(`the jobs folder filling up under a running job${skipReason}`, { timeout: 90_000 }, () => {
  /**
   * A job held at a Bash call while the disk fills; its delegate then has output it cannot write. The call
   * prints 16 KiB after the gate: a full tmpfs still lets a file fill the rest of its last 4 KiB page, and a
   * short tool result fitted there once (a CI run saw the job succeed).
   */
  async function jobOnFullDisk(): Promise<{ end: JobView; filler: string }> {
    const gate = world.gate('full');
    const command = `${gate.command('gate-passed')}; head -c 16384 /dev/zero | tr '\\0' x`;
    world.model.script('full', [{ toolUse: { name: 'Bash', input: { command, description: 'Wait' } } }, { text: 'Said to a full disk.' }]);
    const started = await world.startJob(client, { prompt: `${m('full')} go`, allowedTools: ['Bash'] });
    await world.waitForRunning(client, started.job.id);
    await expect.poll(() => world.model.requestsFor('full').length, { timeout: 30_000 }).toBe(1);
    const filler = await fillFileSystem(jobsDir);
    await gate.open();
    return { end: await world.waitForEnd(client, started.job.id), filler };
  }

  it.skipIf(!mounting.ok)("ends the job failed, in Claude Code's own words about the full disk", async () => {
    const { end } = await jobOnFullDisk();
    expect(end.job.state).toBe('failed');
    expect(end.job.endReason).toMatch(/disk is full \(ENOSPC\)/);
  });

  it.skipIf(!mounting.ok)('saves how the job ended once space is freed, so a restarted service still knows', async () => {
    const { end, filler } = await jobOnFullDisk();
    await rm(filler);
    await expect.poll(async () => (await world.store().load(end.job.id)).state, { timeout: 15_000, interval: 200 }).toBe('failed');
    await client.call('service.stop', { killJobs: false });
    expect((await service.exited).code).toBe(0);
    await world.serve();
    client = await world.connect();
    const after = await client.call('jobs.status', { jobId: end.job.id });
    expect(after.job.state).toBe('failed');
    expect(after.job.endReason).toBe(end.job.endReason);
    expect((await client.call('jobs.list', {})).totalJobs).toBe(2);
  });
});

describe(`the jobs folder on a read-only file system${skipReason}`, { timeout: 90_000 }, () => {
  it.skipIf(!mounting.ok)('refuses a new job, saying the file system is read-only; nothing is spawned, no folder is left', async () => {
    await remountReadOnly(jobsDir);
    await expect(world.startJob(client, { prompt: `${m('refused')} go` })).rejects.toThrow(
      `Cannot start the job: the jobs folder ${jobsDir} is on a read-only file system (EROFS).`,
    );
    expect(world.model.requestsFor('refused')).toEqual([]);
    expect((await jobsKept()).folders).toEqual([earlier.job.id]);
  });

  it.skipIf(!mounting.ok)('loses none of the jobs already there, and a restarted service still lists them', async () => {
    await remountReadOnly(jobsDir);
    await expect(world.startJob(client, { prompt: `${m('refused')} go` })).rejects.toThrow('EROFS');
    expect((await jobsKept()).listed).toEqual([earlier.job.id]);
    await client.call('service.stop', { killJobs: false });
    expect((await service.exited).code).toBe(0);
    await world.serve();
    client = await world.connect();
    const result = await client.call('jobs.result', { jobId: earlier.job.id });
    expect(result.job.state).toBe('succeeded');
    expect(result.resultText).toBe('Done before the trouble.');
    expect(path.dirname(result.files.dir)).toBe(jobsDir);
  });
});
