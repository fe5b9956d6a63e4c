import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { JobRecord } from '../../../../src-main/contract/jobs.js';
import { isActive } from '../../../../src-main/contract/jobs.js';
import { newJobRecord } from '../../../../src-main/core/jobs/record/job-record.js';
import type { JobRequestFields } from '../../../../src-main/core/jobs/record/job-record.js';
import { ServiceError } from '../../../../src-main/contract/protocol.js';
import { InvalidJobIdError, JobNotFoundError, JobStore, UnreadableJobError } from '../../../../src-main/core/jobs/record/job-store.js';
import { jobFields } from '../../../support/job-fields.js';

const posix = process.platform !== 'win32';
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.parse('2026-11-30T09:15:00Z');

let root: string;
let jobsDir: string;
let store: JobStore;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'job-store-'));
  jobsDir = path.join(root, 'data', 'jobs');
  store = new JobStore({ dir: jobsDir, now: () => NOW });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function record(id: string, overrides: Partial<JobRecord> = {}): JobRecord {
  const fields: JobRequestFields = jobFields({ sessionId: '6f1c2a8e-4b1d-4c8e-9a51-0d2f3e4a5b6c', model: 'qwen/qwen3-coder' });
  return { ...newJobRecord(id, fields, NOW), ...overrides };
}

async function mode(file: string): Promise<number> {
  return (await stat(file)).mode & 0o777;
}

describe('job ids', () => {
  it('look like job_<UTC second>_<6 base32 characters>', () => {
    expect(store.newJobId()).toMatch(/^job_20261130T091500Z_[0-9a-hjkmnp-tv-z]{6}$/);
  });

  it('sort in creation order, within one second too, and never repeat', () => {
    let clock = NOW;
    const ticking = new JobStore({ dir: jobsDir, now: () => clock });
    const ids: string[] = [];
    for (let i = 0; i < 500; i++) {
      ids.push(ticking.newJobId());
      // Several ids per second, then the next second.
      if (i % 100 === 99) clock += 1000;
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it.each(['../x', '..', '', 'job_20261130T091500Z_abcde/../../x', 'job_20261130T091500Z_ABCDEF', '/etc/passwd', 'job_20261130T091500Z_abcdef\0'])(
    'refuses %j instead of using it as a path',
    (id) => {
      expect(() => store.jobDir(id)).toThrow(InvalidJobIdError);
      expect(() => store.paths(id)).toThrow(/is not a job id\. Job ids look like job_/);
    },
  );

  it('points a caller with a bad id at the job list, as a contract call', () => {
    expect(() => store.jobDir('../x')).toThrow(expect.objectContaining({ next: { method: 'jobs.list', params: {} } }));
  });

  it('refuses a bad id when loading, without touching the disk', async () => {
    await expect(store.load('../../etc')).rejects.toBeInstanceOf(InvalidJobIdError);
    await expect(store.readResult('../x')).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

describe('create, write and load', () => {
  it('creates the job folder with its files, private to the owner', async () => {
    const id = store.newJobId();
    const paths = await store.create(record(id), 'Fix the failing test\nin src/');

    expect((await readdir(paths.dir)).sort()).toEqual(['job.json', 'prompt.txt', 'stderr.log', 'stream.jsonl']);
    expect(await readFile(paths.prompt, 'utf8')).toBe('Fix the failing test\nin src/');
    expect(await readFile(paths.stream, 'utf8')).toBe('');
    expect(await readFile(paths.stderr, 'utf8')).toBe('');
    expect(paths).toEqual({
      dir: path.join(jobsDir, id),
      job: path.join(jobsDir, id, 'job.json'),
      prompt: path.join(jobsDir, id, 'prompt.txt'),
      stream: path.join(jobsDir, id, 'stream.jsonl'),
      stderr: path.join(jobsDir, id, 'stderr.log'),
      result: path.join(jobsDir, id, 'result.txt'),
      requests: path.join(jobsDir, id, 'requests.jsonl'),
      tokenHash: path.join(jobsDir, id, 'gateway-token.sha256'),
      box: path.join(jobsDir, id, 'box.json'),
      verifyLog: path.join(jobsDir, id, 'verify.log'),
    });
  });

  it("keeps the gateway token's hash and the request log, private, and reads back what parses", async () => {
    const id = store.newJobId();
    const paths = await store.create(record(id), 'prompt');
    expect(await store.readTokenHash(id)).toBeNull();
    await store.writeTokenHash(id, 'a'.repeat(64));
    expect(await store.readTokenHash(id)).toBe('a'.repeat(64));
    const entry = {
      id: 'r1',
      at: '2026-12-01T00:00:00.000Z',
      model: 'm',
      provider: null,
      generationId: 'gen-1',
      status: 200,
      outcome: 'ok' as const,
      usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
      costUsd: 0.001,
      ceilingUsd: 0.01,
      maxTokens: 100,
      maxTokensAsked: null,
      firstByteMs: 5,
      durationMs: 9,
      note: null,
    };
    await store.appendRequest(id, { ...entry, outcome: 'pending' as const });
    await store.appendRequest(id, { ...entry, id: 'r2', generationId: 'gen-2' });
    await store.appendRequest(id, entry);
    await writeFile(paths.requests, '{"torn', { flag: 'a' });
    await store.appendRequest(id, { ...entry, id: 'r3', generationId: 'gen-3' });
    // A request's last line wins, in the order requests started; the torn line is lost, not the one after it.
    expect((await store.readRequests(id)).map((r) => [r.id, r.outcome, r.generationId])).toEqual([
      ['r1', 'ok', 'gen-1'],
      ['r2', 'ok', 'gen-2'],
      ['r3', 'ok', 'gen-3'],
    ]);
    if (posix) {
      expect(await mode(paths.requests)).toBe(0o600);
      expect(await mode(paths.tokenHash)).toBe(0o600);
    }
    await expect(store.appendRequest(store.newJobId(), entry)).rejects.toThrow();
    // Let go, the log opens again for the next line; with its folder gone, a line is refused, not written elsewhere.
    await store.closeRequestLog(id);
    await store.appendRequest(id, { ...entry, id: 'r4', generationId: 'gen-4' });
    expect((await store.readRequests(id)).map((r) => r.id)).toEqual(['r1', 'r2', 'r3', 'r4']);
    await store.remove(id);
    await expect(store.appendRequest(id, entry)).rejects.toThrow(JobNotFoundError);
  });

  it.skipIf(!posix)('gives the folder 0700 and the files 0600 whatever the umask', async () => {
    const previous = process.umask(0o022);
    try {
      const paths = await store.create(record(store.newJobId()), 'prompt');
      expect(await mode(paths.dir)).toBe(0o700);
      for (const file of [paths.job, paths.prompt, paths.stream, paths.stderr]) expect(await mode(file)).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });

  it('reads back exactly what was written, and the latest write', async () => {
    const id = store.newJobId();
    await store.create(record(id), 'prompt');
    expect(await store.load(id)).toEqual(record(id));

    const running = record(id, { state: 'running', pid: 4242, pidStartTime: 'boot:123', startedAt: new Date(NOW + 1000).toISOString() });
    await store.write(running);
    expect(await store.load(id)).toEqual(running);
  });

  it('refuses a second job with an existing id and leaves the first alone', async () => {
    const id = store.newJobId();
    await store.create(record(id), 'first');
    await expect(store.create(record(id), 'second')).rejects.toMatchObject({ code: 'conflict' });
    expect(await readFile(store.paths(id).prompt, 'utf8')).toBe('first');
  });

  it('throws on an invalid record and keeps the last good job.json', async () => {
    const id = store.newJobId();
    await store.create(record(id), 'prompt');
    const broken = { ...record(id), state: 'exploded' } as unknown as JobRecord;
    await expect(store.write(broken)).rejects.toThrow(/not a valid job record: state/);
    expect(await store.load(id)).toEqual(record(id));
  });

  it('does not bring back the folder of a job that was removed', async () => {
    const id = store.newJobId();
    await store.create(record(id), 'prompt');
    await rm(store.jobDir(id), { recursive: true });
    await expect(store.write(record(id, { state: 'failed' }))).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await readdir(jobsDir)).toEqual([]);
  });

  it('says "not found" for an unknown job', async () => {
    const error = await store.load('job_20261130T091500Z_000000').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobNotFoundError);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ code: 'not_found', jobId: 'job_20261130T091500Z_000000' });
  });

  it('names the file and the problem when job.json is corrupt', async () => {
    const id = store.newJobId();
    const paths = await store.create(record(id), 'prompt');
    await writeFile(paths.job, '{"version": 1, "id": ');
    const error = await store.load(id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnreadableJobError);
    expect((error as Error).message).toContain(paths.job);
    expect((error as Error).message).toMatch(/not valid JSON/);
  });
});

describe('loadAll', () => {
  it('loads every good job and lists each unreadable folder with its reason', async () => {
    const good = [store.newJobId(), store.newJobId()];
    for (const id of good) await store.create(record(id), 'prompt');
    const corrupt = store.newJobId();
    const truncated = store.newJobId();
    const invalid = store.newJobId();
    const empty = store.newJobId();
    for (const id of [corrupt, truncated, invalid, empty]) await store.create(record(id), 'prompt');
    await writeFile(store.paths(corrupt).job, 'not json at all');
    const full = await readFile(store.paths(truncated).job, 'utf8');
    await writeFile(store.paths(truncated).job, full.slice(0, full.length / 2));
    await writeFile(store.paths(invalid).job, JSON.stringify({ ...record(invalid), turn: 0 }));
    await writeFile(store.paths(empty).job, '');
    await mkdir(path.join(jobsDir, 'stray-folder'));
    await writeFile(path.join(jobsDir, 'notes.txt'), 'a stray file');

    const { records, unreadable } = await store.loadAll();

    expect(records.map((r) => r.id)).toEqual(good);
    const problems = Object.fromEntries(unreadable.map((u) => [path.basename(u.dir), u.problem]));
    expect(Object.keys(problems).sort()).toEqual([corrupt, empty, invalid, truncated, 'stray-folder'].sort());
    expect(problems[corrupt]).toMatch(/job\.json is not valid JSON/);
    expect(problems[truncated]).toMatch(/not valid JSON, perhaps cut short/);
    expect(problems[invalid]).toMatch(/not a job record: turn/);
    expect(problems[empty]).toMatch(/is empty/);
    expect(problems['stray-folder']).toMatch(/not a job folder/);
  });

  it('reports a job folder without job.json', async () => {
    const id = store.newJobId();
    await store.create(record(id), 'prompt');
    await rm(store.paths(id).job);
    const { records, unreadable } = await store.loadAll();
    expect(records).toEqual([]);
    expect(unreadable).toEqual([{ dir: store.jobDir(id), problem: `${store.paths(id).job} is missing` }]);
  });

  it('reports a job.json that describes another job', async () => {
    const [first, second] = [store.newJobId(), store.newJobId()];
    await store.create(record(first), 'prompt');
    await store.create(record(second), 'prompt');
    await writeFile(store.paths(second).job, JSON.stringify(record(first)));
    const { records, unreadable } = await store.loadAll();
    expect(records.map((r) => r.id)).toEqual([first]);
    expect(unreadable[0]?.problem).toMatch(`describes job ${first}, not ${second}`);
  });

  it('finds no jobs when the jobs folder does not exist yet', async () => {
    expect(await store.loadAll()).toEqual({ records: [], unreadable: [] });
  });
});

describe('results and stderr', () => {
  it('has no result until one is written', async () => {
    const id = store.newJobId();
    await store.create(record(id), 'prompt');
    expect(await store.readResult(id)).toBeNull();
    await store.writeResult(id, 'All tests pass.');
    expect(await store.readResult(id)).toBe('All tests pass.');
    expect(await readFile(store.paths(id).result, 'utf8')).toBe('All tests pass.');
  });

  it('returns the end of stderr starting at a line', async () => {
    const id = store.newJobId();
    const paths = await store.create(record(id), 'prompt');
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i} ${'x'.repeat(20)}`);
    await writeFile(paths.stderr, `${lines.join('\n')}\n`);

    const tail = await store.readStderrTail(id, 200);

    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(200);
    expect(tail.endsWith(`${lines[99]}\n`)).toBe(true);
    expect(lines).toContain(tail.split('\n')[0]);
  });

  it('returns all of a short stderr and nothing for a missing one', async () => {
    const id = store.newJobId();
    const paths = await store.create(record(id), 'prompt');
    expect(await store.readStderrTail(id)).toBe('');
    await writeFile(paths.stderr, 'Error: no key\n');
    expect(await store.readStderrTail(id)).toBe('Error: no key\n');
    await rm(paths.stderr);
    expect(await store.readStderrTail(id)).toBe('');
  });

  it('cuts one long line without splitting a character', async () => {
    const id = store.newJobId();
    const paths = await store.create(record(id), 'prompt');
    await writeFile(paths.stderr, 'é'.repeat(1000));
    const tail = await store.readStderrTail(id, 101);
    expect(tail).toBe('é'.repeat(50));
  });
});

describe('prune', () => {
  const old = (days: number): string => new Date(NOW - days * DAY).toISOString();

  it('removes finished jobs past the retention and keeps active and recent ones', async () => {
    const ids = {
      oldFinished: store.newJobId(),
      oldActive: store.newJobId(),
      recentFinished: store.newJobId(),
      oldNeverStarted: store.newJobId(),
    };
    // Four conversations of one turn each.
    await store.create(record(ids.oldFinished, { sessionId: 's1', state: 'succeeded', createdAt: old(40), endedAt: old(31) }), 'p');
    await store.create(record(ids.oldActive, { sessionId: 's2', state: 'running', createdAt: old(40) }), 'p');
    await store.create(record(ids.recentFinished, { sessionId: 's3', state: 'failed', createdAt: old(40), endedAt: old(29) }), 'p');
    await store.create(record(ids.oldNeverStarted, { sessionId: 's4', state: 'cancelled', createdAt: old(31) }), 'p');

    const { removed } = await store.prune({ retentionDays: 30, isActive: (r) => isActive(r.state) });

    expect(removed).toEqual([ids.oldFinished, ids.oldNeverStarted].sort());
    expect((await readdir(jobsDir)).sort()).toEqual([ids.oldActive, ids.recentFinished].sort());
  });

  it('removes a conversation only whole: a turn past the retention stays while a later turn of it does not', async () => {
    const [first, second, alone] = [store.newJobId(), store.newJobId(), store.newJobId()];
    await store.create(record(first, { sessionId: 'talk', turn: 1, state: 'succeeded', createdAt: old(40), endedAt: old(39) }), 'p');
    await store.create(record(second, { sessionId: 'talk', turn: 2, state: 'succeeded', createdAt: old(10), endedAt: old(9) }), 'p');
    await store.create(record(alone, { sessionId: 'other', state: 'succeeded', createdAt: old(40), endedAt: old(39) }), 'p');
    expect((await store.prune({ retentionDays: 30, isActive: () => false })).removed).toEqual([alone]);
    // Once its last turn is due too, it goes, every turn.
    expect((await store.prune({ retentionDays: 5, isActive: () => false })).removed).toEqual([first, second].sort());
  });

  it('removes unreadable job folders only once they are older than the retention, and never stray folders', async () => {
    const [young, aged] = [store.newJobId(), store.newJobId()];
    for (const id of [young, aged]) {
      await store.create(record(id), 'p');
      await writeFile(store.paths(id).job, '{');
    }
    const stray = path.join(jobsDir, 'keep-me');
    await mkdir(stray);
    const longAgo = new Date(NOW - 60 * DAY);
    await utimes(store.jobDir(aged), longAgo, longAgo);
    await utimes(stray, longAgo, longAgo);

    const { removed } = await store.prune({ retentionDays: 30, isActive: () => false });

    expect(removed).toEqual([aged]);
    expect((await readdir(jobsDir)).sort()).toEqual(['keep-me', young].sort());
  });
});

/**
 * Real failing file systems: a tiny tmpfs, filled up or remounted read-only. Needs root (mount);
 * elsewhere the permission test stands in.
 */
describe.skipIf(process.platform !== 'linux' || !isRoot)('create on a broken jobs folder', () => {
  let mountPoint: string;
  let mounted = false;

  const sh = (command: string, args: string[]): Promise<void> =>
    new Promise((resolve, reject) =>
      execFile(command, args, (error, _out, stderr) => (error ? reject(new Error(`${command} ${args.join(' ')}: ${stderr}`)) : resolve())),
    );

  beforeAll(async () => {
    mountPoint = await mkdtemp(path.join(os.tmpdir(), 'job-store-tmpfs-'));
    await sh('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', mountPoint]);
    mounted = true;
  });

  afterAll(async () => {
    if (mounted) await sh('umount', [mountPoint]);
    await rm(mountPoint, { recursive: true, force: true });
  });

  beforeEach(async () => {
    await sh('mount', ['-o', 'remount,rw', mountPoint]);
    await rm(path.join(mountPoint, 'jobs'), { recursive: true, force: true });
    await rm(path.join(mountPoint, 'filler'), { force: true });
  });

  it('says the disk is full and leaves no half-made job behind', async () => {
    const tmpfsStore = new JobStore({ dir: path.join(mountPoint, 'jobs'), now: () => NOW });
    await mkdir(tmpfsStore.dir);
    // Fill every block; the job folder itself can still be made (directories take no blocks).
    await writeFile(path.join(mountPoint, 'filler'), Buffer.alloc(1024 * 1024)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOSPC') throw error;
    });

    const error = await tmpfsStore.create(record(tmpfsStore.newJobId()), 'a prompt that needs a block').catch((e: unknown) => e);

    expect((error as Error).message).toBe(
      `Cannot start the job: the jobs folder ${tmpfsStore.dir} is on a full disk (ENOSPC). Free some space, then start the job again.`,
    );
    expect(await readdir(tmpfsStore.dir)).toEqual([]);
  });

  it('says the file system is read-only and leaves nothing behind', async () => {
    const tmpfsStore = new JobStore({ dir: path.join(mountPoint, 'jobs'), now: () => NOW });
    await mkdir(tmpfsStore.dir);
    await sh('mount', ['-o', 'remount,ro', mountPoint]);

    const error = await tmpfsStore.create(record(tmpfsStore.newJobId()), 'prompt').catch((e: unknown) => e);

    expect((error as Error).message).toBe(`Cannot start the job: the jobs folder ${tmpfsStore.dir} is on a read-only file system (EROFS).`);
    expect(error).toMatchObject({ code: 'io_error' });
    expect(await readdir(tmpfsStore.dir)).toEqual([]);
  });
});

describe.skipIf(!posix || isRoot)('create in a folder it may not write', () => {
  it('says permission is denied', async () => {
    await mkdir(jobsDir, { recursive: true });
    await chmod(jobsDir, 0o500);
    try {
      await expect(store.create(record(store.newJobId()), 'prompt')).rejects.toThrow(
        `Cannot start the job: the jobs folder ${jobsDir} cannot be written to: permission denied (EACCES).`,
      );
      expect(await readdir(jobsDir)).toEqual([]);
    } finally {
      await chmod(jobsDir, 0o700);
    }
  });
});
