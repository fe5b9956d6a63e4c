/**
 * A folder per test for jobs' files, and cleanup of every process a test started, for the tests of
 * spawning, reading and killing processes (tests/core/jobs/spawn-detached, process-table, kill-tree).
 * Cleanup does not trust the code under test alone: whatever still writes into the folder is killed too.
 */
import { mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { killTree, listDescendants } from '../../src-main/core/jobs/process/kill-tree.js';
import { isSameProcess, parseProcStat, scanProcesses } from '../../src-main/core/jobs/process/process-table.js';
import { spawnDetached } from '../../src-main/core/jobs/process/spawn-detached.js';
import type { DetachedProcess } from '../../src-main/core/jobs/process/spawn-detached.js';

export const linux = process.platform === 'linux';

export type ProcessIdentity = { pid: number; startTime: string | null };

export interface ProcessSandbox {
  /** This test's folder: the working directory and the output files of what it starts. */
  readonly dir: string;
  /** Remembers processes so that they end with the test, even when it fails. */
  track(...processes: ProcessIdentity[]): void;
  files(name?: string): { stdinFile: string; stdoutFile: string; stderrFile: string };
  /** `bash -c script`, detached, in the test's folder (tracked). */
  bash(script: string, name?: string): Promise<DetachedProcess>;
  /**
   * Waits until `pid` has exactly `count` descendants, all settled as `ready` says (a forked shell
   * has not yet run setsid, say), and returns them (tracked).
   */
  descendantsOf(pid: number, count: number, ready?: (tree: ProcessIdentity[]) => Promise<boolean>): Promise<ProcessIdentity[]>;
}

/** Registers this file's beforeEach/afterEach; call once at the top of a test file. */
export function useProcessSandbox(): ProcessSandbox {
  let dir = '';
  let started: ProcessIdentity[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'process-sandbox-'));
    await writeFile(path.join(dir, 'stdin.txt'), '');
    started = [];
  });

  afterEach(async () => {
    for (const { pid, startTime } of started.reverse()) {
      if (await isSameProcess(pid, startTime)) await killTree(pid, { startTime, graceMs: 0 });
    }
    for (const { pid, startTime } of started) {
      // Anything that escaped its tree (the very thing under test) still must not outlive the test.
      if (await isSameProcess(pid, startTime)) process.kill(pid, 'SIGKILL');
    }
    if (linux) for (const pid of await processesWritingUnder(dir)) process.kill(pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  const sandbox: ProcessSandbox = {
    get dir() {
      return dir;
    },
    track(...processes) {
      started.push(...processes);
    },
    files(name = 'job') {
      return {
        stdinFile: path.join(dir, 'stdin.txt'),
        stdoutFile: path.join(dir, `${name}.out`),
        stderrFile: path.join(dir, `${name}.err`),
      };
    },
    async bash(script, name) {
      const child = await spawnDetached({ command: 'bash', args: ['-c', script], cwd: dir, env: process.env, ...sandbox.files(name) });
      started.push({ pid: child.pid, startTime: child.startTime });
      return child;
    },
    async descendantsOf(pid, count, ready = async () => true) {
      const found = await waitFor(`${count} descendants of ${pid}`, async () => {
        const list = await listDescendants(pid);
        return list.length === count && (await ready(list)) ? list : undefined;
      });
      started.push(...found);
      return found;
    },
  };
  return sandbox;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function procStat(pid: number): Promise<ReturnType<typeof parseProcStat>> {
  return parseProcStat(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''));
}

/**
 * Every live process whose stdout or stderr is a file under `folder`: the whole job tree, found
 * without asking the code under test (everything a job starts inherits its output files).
 */
export async function processesWritingUnder(folder: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const targets = await Promise.all(['1', '2'].map((fd) => readlink(`/proc/${name}/fd/${fd}`).catch(() => '')));
    if (targets.some((target) => target.startsWith(`${folder}/`))) pids.push(Number(name));
  }
  return pids;
}

/** The live processes of `root`'s process group but `root` itself: a box's bridges, and its shell, bubblewrap and all in it. */
export async function groupOf(root: number): Promise<number[]> {
  return [...(await scanProcesses()).values()].filter((info) => info.pid !== root && info.pgrp === root && !info.zombie).map((info) => info.pid);
}

/** Those of `root`'s group that are socat: the sandbox runtime's bridges on the host. */
export async function socatBridgesOf(root: number): Promise<number[]> {
  const names = await Promise.all((await groupOf(root)).map(async (pid) => [pid, await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')] as const));
  return names.filter(([, comm]) => comm.trim() === 'socat').map(([pid]) => pid);
}
