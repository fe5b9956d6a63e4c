/**
 * Jobs on disk (docs/ARCHITECTURE.md §4): one private folder per job under the jobs directory holding
 * `job.json` (written atomically), `prompt.txt`, `stream.jsonl`, `stderr.log` and `result.txt`.
 * History survives restarts; one broken folder never hides the others; old jobs are pruned.
 *
 * Job ids arrive from clients, so an id is checked against a strict format before it becomes part
 * of a path: `../x` is refused, never resolved.
 */
import { randomInt } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { chmod, mkdir, open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { GatewayRequest, JobRecord } from '../../../contract/jobs.js';
import { JobRecordSchema } from '../../../contract/jobs.js';
import { nextCall } from '../../../contract/methods.js';
import { ServiceError } from '../../../contract/protocol.js';
import { readFileIfExists, writeFileAtomic } from '../../fs/atomic-write.js';
import { describeIssues, errorCode, errorMessage } from '../../../common/errors.js';
import { truncateEnd } from '../../../common/format.js';
import { allOrFirstError } from '../../../common/promises.js';
import { RequestLogs } from '../money/request-log.js';

export interface JobPaths {
  dir: string;
  job: string;
  prompt: string;
  stream: string;
  stderr: string;
  result: string;
  /** The metering gateway's log: one JSON line per request the delegate made. */
  requests: string;
  /** The sha256 of the job's gateway token (the token itself lives only in the delegate's environment). */
  tokenHash: string;
  /** The settings of the box the job runs in (box.ts), written at each launch. */
  box: string;
  /** Its verify commands' whole output, one after the other (docs/VERIFY.md). */
  verifyLog: string;
}

export interface JobStoreOptions {
  /** Locations.jobsDir */
  dir: string;
  /** Milliseconds since the epoch; tests pass a fixed clock. */
  now?: () => number;
}

/** job_<UTC second>_<6 Crockford base32>: sorts by creation time as plain text. */
const JOB_ID_PATTERN = /^job_\d{8}T\d{6}Z_[0-9a-hjkmnp-tv-z]{6}$/;
const EXAMPLE_ID = 'job_20261130T091500Z_k3m9qz';
// Crockford's alphabet (no i, l, o, u) is in ASCII order, so suffixes compare like their numbers.
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';
const SUFFIX_LENGTH = 6;
const SUFFIX_SPACE = 32 ** SUFFIX_LENGTH;

export function isJobId(id: string): boolean {
  return JOB_ID_PATTERN.test(id);
}

/** A client sent something that is not a job id; says what one looks like. */
export class InvalidJobIdError extends ServiceError {
  constructor(readonly jobId: string) {
    super('invalid_request', `${quote(jobId)} is not a job id. Job ids look like ${EXAMPLE_ID}; the job list shows them.`, { next: nextCall('jobs.list', {}) });
    this.name = 'InvalidJobIdError';
  }
}

export class JobNotFoundError extends ServiceError {
  constructor(readonly jobId: string) {
    super('not_found', `No job ${jobId}. It may have been pruned after the retention period; the job list shows the jobs there are.`, {
      next: nextCall('jobs.list', {}),
    });
    this.name = 'JobNotFoundError';
  }
}

/** A job folder whose job.json cannot be used: names the file and what is wrong with it. */
export class UnreadableJobError extends ServiceError {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super('io_error', `Job file ${file} cannot be read: ${problem}`);
    this.name = 'UnreadableJobError';
  }
}

export class JobStore {
  readonly dir: string;
  private readonly now: () => number;
  private lastStamp = '';
  private lastSuffix = 0;
  private readonly requestLogs = new RequestLogs(
    (id) => this.paths(id).requests,
    (id) => new JobNotFoundError(id),
  );

  constructor(options: JobStoreOptions) {
    this.dir = options.dir;
    this.now = options.now ?? Date.now;
  }

  /**
   * A new id, unique and in creation order. Within one second the suffix counts up from a random
   * start (as ULIDs do), so ids made by this store in the same second still sort by creation.
   */
  newJobId(): string {
    const stamp = new Date(this.now())
      .toISOString()
      .replace(/\.\d+Z$/, 'Z')
      .replace(/[-:]/g, '');
    if (stamp === this.lastStamp && this.lastSuffix + 1 < SUFFIX_SPACE) {
      this.lastSuffix += 1;
    } else {
      // The lower half only: leaves room for the count-up.
      this.lastSuffix = randomInt(SUFFIX_SPACE / 2);
    }
    this.lastStamp = stamp;
    return `job_${stamp}_${encodeBase32(this.lastSuffix)}`;
  }

  /** The job's folder. Throws InvalidJobIdError for anything that is not exactly a job id. */
  jobDir(id: string): string {
    if (typeof id !== 'string' || !isJobId(id)) throw new InvalidJobIdError(String(id));
    return path.join(this.dir, id);
  }

  paths(id: string): JobPaths {
    const dir = this.jobDir(id);
    return {
      dir,
      job: path.join(dir, 'job.json'),
      prompt: path.join(dir, 'prompt.txt'),
      stream: path.join(dir, 'stream.jsonl'),
      stderr: path.join(dir, 'stderr.log'),
      result: path.join(dir, 'result.txt'),
      requests: path.join(dir, 'requests.jsonl'),
      tokenHash: path.join(dir, 'gateway-token.sha256'),
      box: path.join(dir, 'box.json'),
      verifyLog: path.join(dir, 'verify.log'),
    };
  }

  /**
   * Makes the job's folder with its prompt, record and empty output files. On failure nothing is
   * left behind and the error says, in plain words, what is wrong with the jobs folder.
   */
  /** A new job's folder and files; `tokenHash`, when given, is its delegate's gateway token's, as writeTokenHash writes it. */
  async create(record: JobRecord, prompt: string, tokenHash?: string): Promise<JobPaths> {
    const valid = validate(record);
    const paths = this.paths(valid.id);
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw this.cannotStart(error);
    }
    try {
      await mkdir(paths.dir, { mode: 0o700 });
    } catch (error) {
      if (errorCode(error) === 'EEXIST') throw new ServiceError('conflict', `Cannot start the job: ${paths.dir} already exists (job ids must be new).`);
      throw this.cannotStart(error);
    }
    try {
      // The umask may have taken bits away; the folder holds prompts and answers, so owner only.
      await chmod(paths.dir, 0o700);
      // The files of a new folder, none waiting on another: written at once (each still whole, synced, renamed).
      await allOrFirstError([
        writeFileAtomic(paths.prompt, prompt, { mode: 0o600 }),
        writeFileAtomic(paths.job, serialise(valid), { mode: 0o600 }),
        createEmpty(paths.stream),
        createEmpty(paths.stderr),
        tokenHash === undefined ? undefined : writeTokenHashFile(paths, tokenHash),
      ]);
    } catch (error) {
      await rm(paths.dir, { recursive: true, force: true }).catch(() => undefined);
      throw this.cannotStart(error);
    }
    return paths;
  }

  /** Removes a job folder create() made for a job that never entered the queue (a fan-out taken back whole). */
  async remove(id: string): Promise<void> {
    await this.closeRequestLog(id);
    await rm(this.paths(id).dir, { recursive: true, force: true });
  }

  /** Replaces job.json atomically. An invalid record is a bug in the caller, so it throws. */
  async write(record: JobRecord): Promise<void> {
    const valid = validate(record);
    const paths = this.paths(valid.id);
    // writeFileAtomic would recreate a pruned or deleted folder holding nothing but job.json.
    if (!(await isDirectory(paths.dir))) throw new JobNotFoundError(valid.id);
    await writeFileAtomic(paths.job, serialise(valid), { mode: 0o600 });
  }

  async load(id: string): Promise<JobRecord> {
    const paths = this.paths(id);
    const outcome = await this.readRecord(paths.dir, id);
    if (outcome.ok) return outcome.record;
    if (outcome.missing) throw new JobNotFoundError(id);
    throw new UnreadableJobError(paths.job, outcome.problem);
  }

  /**
   * Every job there is, oldest first. A folder that cannot be read is listed with the reason and
   * never stops the others from loading; loose files are ignored; no jobs folder means no jobs.
   */
  async loadAll(): Promise<{ records: JobRecord[]; unreadable: Array<{ dir: string; problem: string }> }> {
    let entries;
    try {
      entries = await readdir(this.dir, { withFileTypes: true });
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return { records: [], unreadable: [] };
      throw new ServiceError('io_error', `Cannot list the jobs folder ${this.dir}: ${errorMessage(error)}`, { cause: error });
    }
    const folders = entries
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .sort();
    const outcomes = await Promise.all(
      folders.map(async (name) => {
        const dir = path.join(this.dir, name);
        if (!isJobId(name)) return { dir, outcome: { ok: false as const, missing: false, problem: 'not a job folder: its name is not a job id' } };
        return { dir, outcome: await this.readRecord(dir, name) };
      }),
    );
    const records: JobRecord[] = [];
    const unreadable: Array<{ dir: string; problem: string }> = [];
    for (const { dir, outcome } of outcomes) {
      if (outcome.ok) records.push(outcome.record);
      // A folder that vanished between listing and reading was pruned meanwhile: not a problem.
      else if (!outcome.missing) unreadable.push({ dir, problem: outcome.problem });
    }
    return { records, unreadable };
  }

  async writeResult(id: string, text: string): Promise<void> {
    const paths = this.paths(id);
    if (!(await isDirectory(paths.dir))) throw new JobNotFoundError(id);
    await writeFileAtomic(paths.result, text, { mode: 0o600 });
  }

  /** Kept before the delegate is spawned, so a restarted service knows the token it holds. */
  async writeTokenHash(id: string, hash: string): Promise<void> {
    const paths = this.paths(id);
    if (!(await isDirectory(paths.dir))) throw new JobNotFoundError(id);
    await writeTokenHashFile(paths, hash);
  }

  async readTokenHash(id: string): Promise<string | null> {
    const text = await readFileIfExists(this.paths(id).tokenHash).catch(() => undefined);
    const hash = text?.trim() ?? '';
    return /^[0-9a-f]{64}$/.test(hash) ? hash : null;
  }

  /** Appends one line to the job's request log (request-log.ts). */
  appendRequest(id: string, entry: GatewayRequest): Promise<void> {
    return this.requestLogs.append(id, entry);
  }

  /** Closes the job's request log if it is open (its job ended, or the service stops). */
  closeRequestLog(id: string): Promise<void> {
    return this.requestLogs.close(id);
  }

  closeRequestLogs(): Promise<void> {
    return this.requestLogs.closeAll();
  }

  /** The last `limit` requests of the job's log, each as its last line says, in the order they started. */
  readRequests(id: string, limit = 1000): Promise<GatewayRequest[]> {
    return this.requestLogs.read(id, limit);
  }

  /** The final answer, or null when the job has none (yet). */
  async readResult(id: string): Promise<string | null> {
    return (await readFileIfExists(this.paths(id).result)) ?? null;
  }

  /** The end of stderr.log, at most `maxBytes`, starting at the beginning of a line when it can. */
  async readStderrTail(id: string, maxBytes = 4000): Promise<string> {
    const file = this.paths(id).stderr;
    let handle: FileHandle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return '';
      throw new ServiceError('io_error', `Cannot read ${file}: ${errorMessage(error)}`, { cause: error });
    }
    try {
      const { size } = await handle.stat();
      const length = Math.max(0, Math.min(size, Math.floor(maxBytes)));
      const start = size - length;
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, start);
      let bytes = buffer.subarray(0, bytesRead);
      if (start > 0) {
        const newline = bytes.indexOf(0x0a);
        // One long line: keep its end rather than nothing, but not half a UTF-8 character.
        if (newline >= 0) bytes = bytes.subarray(newline + 1);
        else while (bytes.length > 0 && ((bytes[0] ?? 0) & 0xc0) === 0x80) bytes = bytes.subarray(1);
      }
      return bytes.toString('utf8');
    } finally {
      await handle.close();
    }
  }

  /**
   * Removes finished jobs that ended (or, never started, were created) more than `retentionDays`
   * ago, a conversation only whole (every turn due). Active jobs stay whatever their age. An unreadable job folder goes too once its folder is
   * older than the retention; a folder that is not named like a job is never ours to remove.
   */
  async prune(options: {
    retentionDays: number;
    isActive: (record: JobRecord) => boolean;
    /** Asked about the records due: which of them to keep all the same (their worktree holds unmerged work). */
    spare?: (due: JobRecord[], all: JobRecord[]) => Promise<ReadonlySet<string>>;
  }): Promise<{ removed: string[] }> {
    if (!Number.isFinite(options.retentionDays) || options.retentionDays < 0) return { removed: [] };
    const cutoff = this.now() - options.retentionDays * 24 * 60 * 60 * 1000;
    const { records, unreadable } = await this.loadAll();
    const doomed: string[] = [];
    for (const record of records) {
      if (options.isActive(record)) continue;
      const endedAt = Date.parse(record.endedAt ?? record.createdAt);
      // A date we cannot read is no reason to delete someone's history.
      if (Number.isFinite(endedAt) && endedAt < cutoff) doomed.push(record.id);
    }
    // A conversation goes whole, once its last turn is due: its turns share a worktree, and the scoreboard keeps one
    // fact per conversation, made from all of them (score-facts.ts).
    const due = new Set(doomed);
    const kept = new Set(records.filter((record) => !due.has(record.id)).map((record) => record.sessionId));
    const whole = records.filter((record) => due.has(record.id) && !kept.has(record.sessionId)).map((record) => record.id);
    doomed.splice(0, doomed.length, ...whole);
    if (options.spare && doomed.length > 0) {
      const due = records.filter((record) => doomed.includes(record.id));
      const spared = await options.spare(due, records);
      doomed.splice(0, doomed.length, ...doomed.filter((id) => !spared.has(id)));
    }
    for (const { dir } of unreadable) {
      const name = path.basename(dir);
      if (!isJobId(name)) continue;
      const info = await stat(dir).catch(() => null);
      if (info && info.mtimeMs < cutoff) doomed.push(name);
    }
    const removed: string[] = [];
    for (const id of doomed) {
      await this.closeRequestLog(id);
      await rm(this.jobDir(id), { recursive: true, force: true });
      removed.push(id);
    }
    return { removed: removed.sort() };
  }

  private async readRecord(dir: string, id: string): Promise<{ ok: true; record: JobRecord } | { ok: false; missing: boolean; problem: string }> {
    const file = path.join(dir, 'job.json');
    let text: string | undefined;
    try {
      text = await readFileIfExists(file);
    } catch (error) {
      return { ok: false, missing: false, problem: errorMessage(error) };
    }
    if (text === undefined) {
      if (!(await isDirectory(dir))) return { ok: false, missing: true, problem: 'the job folder does not exist' };
      return { ok: false, missing: false, problem: `${file} is missing` };
    }
    if (text.trim() === '') return { ok: false, missing: false, problem: `${file} is empty` };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      const detail = errorMessage(error);
      return { ok: false, missing: false, problem: `${file} is not valid JSON, perhaps cut short (${detail})` };
    }
    const parsed = JobRecordSchema.safeParse(json);
    if (!parsed.success)
      return { ok: false, missing: false, problem: `${file} is not a job record: ${describeIssues(parsed.error.issues, { whole: '(the whole record)' })}` };
    if (parsed.data.id !== id) return { ok: false, missing: false, problem: `${file} describes job ${parsed.data.id}, not ${id}` };
    return { ok: true, record: parsed.data };
  }

  /** The create() failure in words: which folder, and what is wrong with it. */
  private cannotStart(error: unknown): ServiceError {
    const code = errorCode(error);
    const where = `the jobs folder ${this.dir}`;
    const reason =
      code === 'ENOSPC'
        ? `${where} is on a full disk (ENOSPC). Free some space, then start the job again.`
        : code === 'EDQUOT'
          ? `the disk quota for ${where} is used up (EDQUOT). Free some space, then start the job again.`
          : code === 'EROFS'
            ? `${where} is on a read-only file system (EROFS).`
            : code === 'EACCES' || code === 'EPERM'
              ? `${where} cannot be written to: permission denied (${code}). Check who owns it and its permissions.`
              : `${where} cannot be written to: ${errorMessage(error)}`;
    return new ServiceError('io_error', `Cannot start the job: ${reason}`, { cause: error });
  }
}

function validate(record: JobRecord): JobRecord {
  const parsed = JobRecordSchema.safeParse(record);
  if (!parsed.success) {
    throw new Error(
      `Refusing to store job ${String((record as { id?: unknown } | null)?.id)}: not a valid job record: ${describeIssues(parsed.error.issues, { whole: '(the whole record)' })}`,
    );
  }
  if (!isJobId(parsed.data.id)) throw new InvalidJobIdError(parsed.data.id);
  return parsed.data;
}

function serialise(record: JobRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

/** The delegate's gateway token's hash, one line: read back by readTokenHash. */
function writeTokenHashFile(paths: JobPaths, hash: string): Promise<void> {
  return writeFileAtomic(paths.tokenHash, `${hash}\n`, { mode: 0o600 });
}

async function createEmpty(file: string): Promise<void> {
  await writeFile(file, '', { flag: 'wx', mode: 0o600 });
  await chmod(file, 0o600);
}

async function isDirectory(dir: string): Promise<boolean> {
  return stat(dir).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

function encodeBase32(value: number): string {
  let text = '';
  for (let i = 0; i < SUFFIX_LENGTH; i += 1) {
    text = BASE32[value % 32] + text;
    value = Math.floor(value / 32);
  }
  return text;
}

function quote(text: string): string {
  return JSON.stringify(truncateEnd(text, 81));
}
