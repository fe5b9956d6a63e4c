import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { killTree } from '../../../../src-main/core/jobs/process/kill-tree.js';
import { isSameProcess, processStartTime } from '../../../../src-main/core/jobs/process/process-table.js';
import { linux, processesWritingUnder, procStat, useProcessSandbox } from '../../../support/process-sandbox.js';
import type { ProcessIdentity } from '../../../support/process-sandbox.js';

const sandbox = useProcessSandbox();

/** Which of these processes are still running, judged from /proc by pid and start time. */
async function survivorsAmong(tree: ProcessIdentity[]): Promise<number[]> {
  const alive: number[] = [];
  for (const member of tree) if (await isSameProcess(member.pid, member.startTime)) alive.push(member.pid);
  return alive;
}

describe.skipIf(!linux)('killTree', () => {
  it('ends a shell and both of its background children', async () => {
    const root = await sandbox.bash('sleep 300 & sleep 300 & wait');
    const tree = [{ pid: root.pid, startTime: root.startTime }, ...(await sandbox.descendantsOf(root.pid, 2))];

    const outcome = await killTree(root.pid, { startTime: root.startTime });

    expect(outcome).toEqual({ killed: 3, survivors: [] });
    expect(await survivorsAmong(tree)).toEqual([]);
    expect(await processesWritingUnder(sandbox.dir)).toEqual([]);
  });

  it('also ends a grandchild that escaped into its own session with setsid', async () => {
    const root = await sandbox.bash('setsid sleep 300 & sleep 300 & wait');
    const escaped = async (list: Array<{ pid: number }>): Promise<number> =>
      (await Promise.all(list.map(async (member) => (await procStat(member.pid))?.session))).filter((session) => session !== root.pid).length;
    // The premise: one of them really left the job's session (and so its process group).
    const tree = [{ pid: root.pid, startTime: root.startTime }, ...(await sandbox.descendantsOf(root.pid, 2, async (list) => (await escaped(list)) === 1))];
    expect(await escaped(tree)).toBe(1);

    const outcome = await killTree(root.pid, { startTime: root.startTime, graceMs: 1000 });

    expect(outcome.survivors).toEqual([]);
    expect(await survivorsAmong(tree)).toEqual([]);
  });

  it('ends a grandchild whose parent already exited and which init adopted', async () => {
    // The subshell exits at once, so its sleep is reparented and keeps only the group as a link.
    const root = await sandbox.bash('(sleep 300 &); sleep 300 & wait');
    const adopted = async (list: Array<{ pid: number }>): Promise<number> =>
      (await Promise.all(list.map(async (member) => (await procStat(member.pid))?.ppid))).filter((ppid) => ppid !== root.pid && ppid !== process.pid).length;
    const tree = [{ pid: root.pid, startTime: root.startTime }, ...(await sandbox.descendantsOf(root.pid, 2, async (list) => (await adopted(list)) === 1))];
    expect(await adopted(tree)).toBe(1);

    await killTree(root.pid, { startTime: root.startTime, graceMs: 1000 });

    expect(await survivorsAmong(tree)).toEqual([]);
  });

  it('uses SIGKILL after the grace period on processes that ignore SIGTERM', async () => {
    const root = await sandbox.bash('trap "" TERM; sleep 300 & wait');
    // The sleep exists only once the trap is set, and inherits the ignored TERM.
    const tree = [{ pid: root.pid, startTime: root.startTime }, ...(await sandbox.descendantsOf(root.pid, 1))];
    const messages: string[] = [];

    const outcome = await killTree(root.pid, { startTime: root.startTime, graceMs: 200, log: (m) => messages.push(m) });

    expect(outcome.survivors).toEqual([]);
    expect(await survivorsAmong(tree)).toEqual([]);
    expect(await root.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(messages.join('\n')).toMatch(/SIGKILL/);
  });

  it('also ends what the tree starts while it is being killed', async () => {
    // On SIGTERM the shell starts a new process in a session of its own, then waits for it.
    const root = await sandbox.bash('trap "setsid sleep 300 & wait" TERM; sleep 300 & wait');
    await sandbox.descendantsOf(root.pid, 1);

    const outcome = await killTree(root.pid, { startTime: root.startTime, graceMs: 500 });

    expect(outcome.survivors).toEqual([]);
    expect(await processesWritingUnder(sandbox.dir)).toEqual([]);
  });

  it('lets a shell that handles SIGTERM exit on its own without SIGKILL', async () => {
    const root = await sandbox.bash('trap "exit 3" TERM; sleep 300 & wait');
    await sandbox.descendantsOf(root.pid, 1);
    const messages: string[] = [];

    await killTree(root.pid, { startTime: root.startTime, graceMs: 10_000, log: (m) => messages.push(m) });

    expect(await root.exited).toEqual({ code: 3, signal: null });
    expect(messages).toEqual([]);
  });

  it('kills nothing when the pid now belongs to a process with another start time', async () => {
    const root = await sandbox.bash('sleep 300 & wait');
    const tree = [{ pid: root.pid, startTime: root.startTime }, ...(await sandbox.descendantsOf(root.pid, 1))];

    const outcome = await killTree(root.pid, { startTime: 'some-other-process:123' });

    expect(outcome).toEqual({ killed: 0, survivors: [] });
    expect(await survivorsAmong(tree)).toEqual(tree.map((member) => member.pid));
  });

  it('refuses pids that would signal this process or everything', async () => {
    await expect(killTree(0)).rejects.toThrow(/Refusing/);
    await expect(killTree(1)).rejects.toThrow(/Refusing/);
    await expect(killTree(process.pid)).rejects.toThrow(/Refusing/);
  });
});

describe.skipIf(!linux)('listDescendants', () => {
  it('lists a tree and nothing of another tree', async () => {
    const first = await sandbox.bash('sleep 300 & wait', 'first');
    const second = await sandbox.bash('sleep 300 & sleep 300 & wait', 'second');
    const ofFirst = await sandbox.descendantsOf(first.pid, 1);
    const ofSecond = await sandbox.descendantsOf(second.pid, 2);
    expect(ofFirst.map((p) => p.pid)).not.toContain(second.pid);
    for (const p of ofSecond) expect(ofFirst.map((q) => q.pid)).not.toContain(p.pid);
  });

  it('reads processes whose name contains spaces and parentheses', async () => {
    // comm ends at the last ')' of /proc/<pid>/stat; a naive split would misread every field.
    const odd = path.join(sandbox.dir, 'a) b (c');
    await copyFile('/usr/bin/sleep', odd);
    const root = await sandbox.bash(`'${odd}' 300 & wait`);
    const [child] = await sandbox.descendantsOf(root.pid, 1);
    expect(child?.startTime).toEqual(await processStartTime(child?.pid ?? -1));
    expect((await procStat(child?.pid ?? -1))?.ppid).toBe(root.pid);
  });
});
