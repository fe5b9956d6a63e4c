/**
 * What the fault suite (tests/faults) shares: a home with the fake OpenRouter playing the model, the real
 * service started as users start it (`openrouter-delegate serve`, as its own process, so a test can SIGKILL
 * it), a client on its socket, gates that hold a delegate mid-job until the test opens them, and a clean-up
 * that leaves no service, delegate or mount behind.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { isActive } from '../../src-main/contract/index.js';
import type { JobView } from '../../src-main/contract/index.js';
import { killTree } from '../../src-main/core/jobs/process/kill-tree.js';
import { JobStore } from '../../src-main/core/jobs/record/job-store.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import { CLI, assertBuilt } from './built.js';
import { DelegationWorld, alive } from './delegation.js';
import type { WorldOptions } from './delegation.js';
import { errorMessage } from '../../src-main/common/errors.js';

const run = promisify(execFile);

/** One `openrouter-delegate serve` process. */
export interface ServiceProcess {
  pid: number;
  /** 'ready': it serves this home; 'already-running': it found another service and handed over. */
  outcome: Promise<'ready' | 'already-running'>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout: () => string;
  /** Its log: the service logs to stderr. */
  stderr: () => string;
}

/** How the service ended; fails (with its log) when it still runs after `ms`, rather than hanging the test. */
export async function exitedWithin(service: ServiceProcess, ms = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`service ${service.pid} still runs ${ms} ms on; its log:\n${service.stderr()}`)), ms);
  });
  try {
    return await Promise.race([service.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The `jobs.start` fields a test gives; the caller's directory is the home's project. */
export interface StartFields {
  prompt: string;
  allowedTools?: string[];
  timeoutMinutes?: number;
  maxCostUsd?: number;
  verify?: string[];
  fixRounds?: number;
}

export class FaultWorld extends DelegationWorld {
  private readonly services: Array<{ child: ChildProcessWithoutNullStreams; exited: ServiceProcess['exited'] }> = [];
  private readonly clients: IpcClient[] = [];
  private readonly gates: Gate[] = [];

  constructor(options: Pick<WorldOptions, 'model' | 'fake'> = {}) {
    super({ prefix: 'ord-fault-', ...options });
  }

  /**
   * Starts the fake and makes a home whose settings.json holds `settings` (no retries by default). No watchdog
   * unless `extraEnv` asks for one: these tests kill and start services themselves, and decide who comes back.
   */
  override async start(settings: Record<string, unknown> = {}, extraEnv: NodeJS.ProcessEnv = {}): Promise<void> {
    assertBuilt();
    await super.start(settings, { OPENROUTER_DELEGATE_WATCHDOG: 'off', ...extraEnv });
  }

  /** Runs after the services and delegates are gone, before the home is removed (LIFO). */
  onCleanup(cleanup: () => Promise<unknown>): void {
    this.cleanups.push(cleanup);
  }

  /** A gate in the project, opened by stop() at the latest (so no Bash call a test held waits on after it). */
  gate(name: string): Gate {
    const gate = new Gate(this.project, name);
    this.gates.push(gate);
    return gate;
  }

  /** Starts `openrouter-delegate serve --notify-ready` for this home, without waiting for it. */
  spawnService(): ServiceProcess {
    const child = spawn(process.execPath, [CLI, 'serve', '--notify-ready'], { env: this.env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end();
    let stdout = '';
    let stderr = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const outcome = new Promise<'ready' | 'already-running'>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (/^ready$/m.test(stdout)) resolve('ready');
        else if (/^already-running$/m.test(stdout)) resolve('already-running');
      });
      void exited.then(({ code, signal }) => reject(new Error(`serve exited (${code ?? signal}) before saying ready: ${stderr}`)));
    });
    outcome.catch(() => undefined);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    this.services.push({ child, exited });
    return { pid: child.pid ?? 0, outcome, exited, stdout: () => stdout, stderr: () => stderr };
  }

  /** Starts the service and waits until it serves this home. */
  async serve(): Promise<ServiceProcess> {
    const service = this.spawnService();
    expect(await service.outcome).toBe('ready');
    return service;
  }

  /** A client on the service's socket, closed after the test. */
  async connect(): Promise<IpcClient> {
    const client = await IpcClient.connect({ locations: this.locations, clientName: 'fault-test', timeoutMs: 10_000 });
    this.clients.push(client);
    return client;
  }

  /** `jobs.start` from the home's project. */
  startJob(client: IpcClient, fields: StartFields): Promise<JobView> {
    return client.call('jobs.start', { ...fields, caller: { cwd: this.project } });
  }

  /** Waits (bounded) until the job has left queued/running. */
  async waitForEnd(client: IpcClient, jobId: string): Promise<JobView> {
    const view = await client.call('jobs.status', { jobId, waitSeconds: 90 });
    expect(['queued', 'running', 'verifying']).not.toContain(view.job.state);
    return view;
  }

  /** Waits (bounded) until the job's delegate runs. */
  async waitForRunning(client: IpcClient, jobId: string): Promise<JobView> {
    await expect.poll(async () => (await client.call('jobs.status', { jobId })).job.state, { timeout: 30_000, interval: 100 }).toBe('running');
    return client.call('jobs.status', { jobId });
  }

  /** The job store of this home, read directly from disk (as a service would). */
  store(): JobStore {
    return new JobStore({ dir: this.locations.jobsDir });
  }

  /**
   * Stops every service (killing their jobs), kills any delegate a killed service left behind, then runs
   * the other clean-ups and removes the home.
   */
  override async stop(): Promise<void> {
    // A delegate killed under a test leaves its Bash call behind, in a session of its own where no kill
    // of the job's tree reaches it any more: opening its gate lets it end.
    for (const gate of this.gates.splice(0)) await gate.open().catch(() => undefined);
    for (const client of this.clients.splice(0)) client.close();
    await this.endService();
    for (const { child, exited } of this.services.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
    if (this.locations) await killLeftDelegates(this.store());
    while (this.cleanups.length) await this.cleanups.pop()?.();
  }
}

/** Delegates that a killed service left running (nobody else would end them). */
async function killLeftDelegates(store: JobStore): Promise<void> {
  const { records } = await store.loadAll().catch(() => ({ records: [] }));
  for (const record of records) {
    if (isActive(record.state) && record.pid !== null && alive(record.pid)) await killTree(record.pid, { startTime: record.pidStartTime, graceMs: 0 });
  }
}

/**
 * Holds a delegate mid-job: its Bash call waits until the test opens the gate (a file in the project), so
 * the test decides when the job may end instead of guessing how long it takes.
 */
export class Gate {
  readonly file: string;
  constructor(project: string, name: string) {
    this.file = path.join(project, `.gate-${name}`);
  }

  /** The Bash call that says it has reached the gate, waits for it, then says `message`. */
  command(message: string): string {
    return `sh -c 'touch ${this.file}.reached; while [ ! -e ${this.file} ]; do sleep 0.1; done; echo ${message}'`;
  }

  /**
   * Resolves once the delegate waits at the gate: its model request is answered and it makes none until the
   * gate opens, so the service (and its gateway) may be killed without cutting a request short.
   */
  async reached(): Promise<void> {
    await expect.poll(() => existsSync(`${this.file}.reached`), { timeout: 30_000, interval: 50 }).toBe(true);
  }

  async open(): Promise<void> {
    await writeFile(this.file, 'open\n');
  }
}

/** Whether this process may mount file systems (root, and a kernel and container that let it). */
export async function canMount(): Promise<{ ok: boolean; reason: string }> {
  if (process.platform !== 'linux') return { ok: false, reason: 'mounting a tmpfs needs Linux' };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'mounting a tmpfs needs root' };
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'ord-mount-probe-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', scratch]);
    await run('umount', [scratch]);
    return { ok: true, reason: '' };
  } catch (error) {
    return { ok: false, reason: `mount -t tmpfs failed here: ${errorMessage(error)}` };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Mounts a tmpfs of `size` (e.g. '300k') on `dir`; returns its unmount (lazy when still busy). */
export async function mountTmpfs(dir: string, size: string): Promise<() => Promise<void>> {
  await run('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  return async () => {
    await run('umount', [dir]).catch(() => run('umount', ['-l', dir]));
  };
}

/**
 * Remounts the file system on `dir` read-only. The kernel refuses while a file on it is open for writing
 * (the service writes a job's billed cost a moment after the job ends): tried again until it is not, bounded.
 */
export async function remountReadOnly(dir: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await run('mount', ['-o', 'remount,ro', dir]);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Fills the file system holding `dir` to the last byte; returns the filler file. */
export async function fillFileSystem(dir: string): Promise<string> {
  const filler = path.join(dir, 'filler.bin');
  // dd stops at ENOSPC (and says so, with a non-zero exit): that is the point.
  await run('dd', ['if=/dev/zero', `of=${filler}`, 'bs=4096']).catch(() => undefined);
  return filler;
}
