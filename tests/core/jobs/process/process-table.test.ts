import { constants } from 'node:fs';
import { access, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { killTree } from '../../../../src-main/core/jobs/process/kill-tree.js';
import {
  isAlive,
  isSameProcess,
  parseProcStat,
  processStartTime,
  processesByEnv,
  processesWithEnv,
} from '../../../../src-main/core/jobs/process/process-table.js';
import { spawnDetached } from '../../../../src-main/core/jobs/process/spawn-detached.js';
import { linux, procStat, useProcessSandbox, waitFor } from '../../../support/process-sandbox.js';
import type { ProcessIdentity } from '../../../support/process-sandbox.js';

/** Writable for root on Linux: lets a test make the kernel reuse a pid. */
const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid';
const canChoosePids =
  linux &&
  (await access(NS_LAST_PID, constants.W_OK).then(
    () => true,
    () => false,
  ));

const sandbox = useProcessSandbox();

/** Waits until the clock has moved past the tick `startTime` records (Linux start times are ticks, 1/100 s). */
async function nextTickAfter(startTime: string | null): Promise<void> {
  const ticks = Number(startTime?.split(':').pop());
  await waitFor('the next clock tick', async () => {
    const uptime = Number((await readFile('/proc/uptime', 'utf8')).split(' ')[0]);
    return uptime * 100 > ticks + 1 ? true : undefined;
  });
}

describe('parseProcStat', () => {
  it('takes the fields after the last parenthesis', () => {
    const line = '4242 (a) b (c) S 17 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n';
    expect(parseProcStat(line)).toEqual({ state: 'S', ppid: 17, pgrp: 4242, session: 4242, startTicks: '987654' });
  });

  it('rejects text that is not a stat line', () => {
    expect(parseProcStat('')).toBeNull();
    expect(parseProcStat('12 (x) S 1 2')).toBeNull();
  });
});

describe.skipIf(!linux)('process identity', () => {
  it('gives two processes different start times and one process the same one every time', async () => {
    const first = await sandbox.bash('sleep 300', 'first');
    // Start times count clock ticks: the premise needs the second process to start a tick later.
    await nextTickAfter(first.startTime);
    const second = await sandbox.bash('sleep 300', 'second');
    expect(first.startTime).not.toBeNull();
    expect(await processStartTime(first.pid)).toBe(first.startTime);
    expect(await processStartTime(first.pid)).toBe(first.startTime);
    expect(second.startTime).not.toBe(first.startTime);
    expect(await isSameProcess(first.pid, first.startTime)).toBe(true);
    expect(await isSameProcess(first.pid, second.startTime)).toBe(false);
  });

  it.skipIf(!canChoosePids)('tells a recycled pid from the process that had it before', async () => {
    const before = await sandbox.bash('sleep 300', 'before');
    await killTree(before.pid, { startTime: before.startTime, graceMs: 0 });
    await before.exited;
    await nextTickAfter(before.startTime);
    // Make the kernel hand out the same pid again (CRIU's trick). The shell sets the last pid and
    // forks at once, so the window in which another fork on the machine can take the pid is short;
    // under load it still can, so try again a number of times.
    const pidFile = path.join(sandbox.dir, 'after.pid');
    let after: ProcessIdentity | undefined;
    for (let attempt = 0; attempt < 100 && after?.pid !== before.pid; attempt++) {
      const holder = await sandbox.bash(
        `echo ${before.pid - 1} > ${NS_LAST_PID}; sleep 300 & echo $! > '${pidFile}.tmp' && mv '${pidFile}.tmp' '${pidFile}'; wait`,
        'after',
      );
      const pid = await waitFor('the forked pid', async () => Number((await readFile(pidFile, 'utf8').catch(() => '')).trim()) || undefined);
      await rm(pidFile);
      after = { pid, startTime: await processStartTime(pid) };
      if (pid !== before.pid) {
        await killTree(holder.pid, { startTime: holder.startTime, graceMs: 0 });
        await holder.exited;
      }
    }
    expect(after?.pid).toBe(before.pid);
    if (!after) return;

    expect(after.startTime).not.toBeNull();
    expect(after.startTime).not.toBe(before.startTime);
    expect(await isSameProcess(after.pid, before.startTime)).toBe(false);
    expect(await killTree(after.pid, { startTime: before.startTime, graceMs: 0 })).toEqual({ killed: 0, survivors: [] });
    expect(await isSameProcess(after.pid, after.startTime)).toBe(true);
  });

  it('has no start time for a process that is gone', async () => {
    const child = await sandbox.bash('exit 0');
    await child.exited;
    expect(await processStartTime(child.pid)).toBeNull();
    expect(await isSameProcess(child.pid, child.startTime)).toBe(false);
  });

  it('counts a zombie (exited, not yet reaped) as dead', async () => {
    // `exec sleep` replaces the shell with a program that never reaps the shell's child; the child
    // waits until that exec has happened, so the shell cannot reap it first.
    const pidFile = path.join(sandbox.dir, 'zombie.pid');
    await sandbox.bash(`( while [ "$(cat /proc/$$/comm)" != sleep ]; do sleep 0.01; done ) & echo $! > '${pidFile}'; exec sleep 300`);
    const zombie = await waitFor('the zombie', async () => {
      const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
      return pid > 0 && (await procStat(pid))?.state === 'Z' ? pid : undefined;
    });
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(isAlive(zombie)).toBe(false);
  });

  it('calls a running process alive and a made-up pid dead', async () => {
    const child = await sandbox.bash('sleep 300');
    expect(isAlive(child.pid)).toBe(true);
    const pidMax = Number((await readFile('/proc/sys/kernel/pid_max', 'utf8')).trim());
    expect(isAlive(pidMax + 1)).toBe(false);
    expect(isAlive(0)).toBe(false);
  });
});

describe.skipIf(!linux)('processesWithEnv', () => {
  it('finds the processes that carry a marker in their environment, and only those', async () => {
    const marker = `job-${process.pid}-${Date.now()}`;
    const marked = await spawnDetached({
      command: 'sleep',
      args: ['300'],
      cwd: sandbox.dir,
      env: { ...process.env, ORD_TEST_MARK: marker },
      ...sandbox.files('marked'),
    });
    const prefixed = await spawnDetached({
      command: 'sleep',
      args: ['300'],
      cwd: sandbox.dir,
      env: { ...process.env, ORD_TEST_MARK: `${marker}-other` },
      ...sandbox.files('other'),
    });
    sandbox.track({ pid: marked.pid, startTime: marked.startTime }, { pid: prefixed.pid, startTime: prefixed.startTime });

    // With its parent, so that the root of a job's marked processes can be told (recovery.ts).
    expect(await processesWithEnv('ORD_TEST_MARK', marker)).toEqual([{ pid: marked.pid, startTime: marked.startTime, ppid: expect.any(Number) }]);
    expect(await processesWithEnv('ORD_TEST_MARK', 'nobody')).toEqual([]);
  });

  it('finds every process that carries the same marker (a delegate and the commands it started)', async () => {
    const marker = `job-${process.pid}-${Date.now()}-many`;
    const env = { ...process.env, ORD_TEST_MARK: marker };
    const spawned = await Promise.all(
      ['a', 'b', 'c'].map((name) => spawnDetached({ command: 'sleep', args: ['300'], cwd: sandbox.dir, env, ...sandbox.files(name) })),
    );
    for (const child of spawned) sandbox.track({ pid: child.pid, startTime: child.startTime });

    const found = (await processesByEnv('ORD_TEST_MARK')).get(marker) ?? [];
    expect(found.map((p) => p.pid).sort()).toEqual(spawned.map((child) => child.pid).sort());
  });
});
