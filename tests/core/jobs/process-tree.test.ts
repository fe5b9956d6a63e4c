import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, copyFile, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DetachedProcess } from '../../../src-main/core/jobs/process-tree.js';
import {
  isAlive,
  isSameProcess,
  killTree,
  listDescendants,
  parseProcStat,
  processStartTime,
  processesByEnv,
  processesWithEnv,
  spawnDetached,
} from '../../../src-main/core/jobs/process-tree.js';
import { ROOT } from '../../support/built.js';

const linux = process.platform === 'linux';
/** Writable for root on Linux: lets a test make the kernel reuse a pid. */
const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid';
const canChoosePids = linux && (await access(NS_LAST_PID, constants.W_OK).then(() => true, () => false));

let dir: string;
/** Every process a test started, by identity, so afterEach can end what a failed test left. */
let started: Array<{ pid: number; startTime: string | null }>;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'process-tree-'));
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

function files(name = 'job'): { stdinFile: string; stdoutFile: string; stderrFile: string } {
  return {
    stdinFile: path.join(dir, 'stdin.txt'),
    stdoutFile: path.join(dir, `${name}.out`),
    stderrFile: path.join(dir, `${name}.err`),
  };
}

async function bash(script: string, name?: string): Promise<DetachedProcess> {
  const child = await spawnDetached({ command: 'bash', args: ['-c', script], cwd: dir, env: process.env, ...files(name) });
  started.push({ pid: child.pid, startTime: child.startTime });
  return child;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Waits until `pid` has exactly `count` descendants, all settled as `ready` says (a forked shell
 * has not yet run setsid, say), and returns them (remembered for cleanup).
 */
async function descendantsOf(
  pid: number,
  count: number,
  ready: (tree: Array<{ pid: number; startTime: string | null }>) => Promise<boolean> = async () => true,
): Promise<Array<{ pid: number; startTime: string | null }>> {
  const found = await waitFor(`${count} descendants of ${pid}`, async () => {
    const list = await listDescendants(pid);
    return list.length === count && (await ready(list)) ? list : undefined;
  });
  started.push(...found);
  return found;
}

async function procStat(pid: number): Promise<ReturnType<typeof parseProcStat>> {
  return parseProcStat(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''));
}

/**
 * Every live process whose stdout or stderr is a file under `folder`: the whole job tree, found
 * without asking the code under test (everything a job starts inherits its output files).
 */
async function processesWritingUnder(folder: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const targets = await Promise.all(['1', '2'].map((fd) => readlink(`/proc/${name}/fd/${fd}`).catch(() => '')));
    if (targets.some((target) => target.startsWith(`${folder}/`))) pids.push(Number(name));
  }
  return pids;
}

/** Waits until the clock has moved past the tick `startTime` records (Linux start times are ticks, 1/100 s). */
async function nextTickAfter(startTime: string | null): Promise<void> {
  const ticks = Number(startTime?.split(':').pop());
  await waitFor('the next clock tick', async () => {
    const uptime = Number((await readFile('/proc/uptime', 'utf8')).split(' ')[0]);
    return uptime * 100 > ticks + 1 ? true : undefined;
  });
}

/** Which of these processes are still running, judged from /proc by pid and start time. */
async function survivorsAmong(tree: Array<{ pid: number; startTime: string | null }>): Promise<number[]> {
  const alive: number[] = [];
  for (const member of tree) if (await isSameProcess(member.pid, member.startTime)) alive.push(member.pid);
  return alive;
}

describe.skipIf(!linux)('killTree', () => {
  it('ends a shell and both of its background children', async () => {
    const root = await bash('sleep 300 & sleep 300 & wait');
    const tree = [{ pid: root.pid, startTime: root.startTime }, ...(await descendantsOf(root.pid, 2))];

    const outcome = await killTree(root.pid, { startTime: root.startTime });

    expect(outcome).toEqual({ killed: 3, survivors: [] });
    expect(await survivorsAmong(tree)).toEqual([]);
    expect(await processesWritingUnder(dir)).toEqual([]);
  });

  it('also ends a grandchild that escaped into its own session with setsid', async () => {
    const root = await bash('setsid sleep 300 & sleep 300 & wait');
    const escaped = async (list: Array<{ pid: number }>): Promise<number> =>
      (await Promise.all(list.map(async (member) => (await procStat(member.pid))?.session))).filter((session) => session !== root.pid).length;
    // The premise: one of them really left the job's session (and so its process group).
    const tree = [{ pid: root.pid, startTime: root.startTime }, ...(await descendantsOf(root.pid, 2, async (list) => (await escaped(list)) === 1))];
    expect(await escaped(tree)).toBe(1);

    const outcome = await killTree(root.pid, { startTime: root.startTime, graceMs: 1000 });

    expect(outcome.survivors).toEqual([]);
    expect(await survivorsAmong(tree)).toEqual([]);
  });

  it('ends a grandchild whose parent already exited and which init adopted', async () => {
    // The subshell exits at once, so its sleep is reparented and keeps only the group as a link.
    const root = await bash('(sleep 300 &); sleep 300 & wait');
    const adopted = async (list: Array<{ pid: number }>): Promise<number> =>
      (await Promise.all(list.map(async (member) => (await procStat(member.pid))?.ppid))).filter((ppid) => ppid !== root.pid && ppid !== process.pid).length;
    const tree = [{ pid: root.pid, startTime: root.startTime }, ...(await descendantsOf(root.pid, 2, async (list) => (await adopted(list)) === 1))];
    expect(await adopted(tree)).toBe(1);

    await killTree(root.pid, { startTime: root.startTime, graceMs: 1000 });

    expect(await survivorsAmong(tree)).toEqual([]);
  });

  it('uses SIGKILL after the grace period on processes that ignore SIGTERM', async () => {
    const root = await bash('trap "" TERM; sleep 300 & wait');
    // The sleep exists only once the trap is set, and inherits the ignored TERM.
    const tree = [{ pid: root.pid, startTime: root.startTime }, ...(await descendantsOf(root.pid, 1))];
    const messages: string[] = [];

    const outcome = await killTree(root.pid, { startTime: root.startTime, graceMs: 200, log: (m) => messages.push(m) });

    expect(outcome.survivors).toEqual([]);
    expect(await survivorsAmong(tree)).toEqual([]);
    expect(await root.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(messages.join('\n')).toMatch(/SIGKILL/);
  });

  it('also ends what the tree starts while it is being killed', async () => {
    // On SIGTERM the shell starts a new process in a session of its own, then waits for it.
    const root = await bash('trap "setsid sleep 300 & wait" TERM; sleep 300 & wait');
    await descendantsOf(root.pid, 1);

    const outcome = await killTree(root.pid, { startTime: root.startTime, graceMs: 500 });

    expect(outcome.survivors).toEqual([]);
    expect(await processesWritingUnder(dir)).toEqual([]);
  });

  it('lets a shell that handles SIGTERM exit on its own without SIGKILL', async () => {
    const root = await bash('trap "exit 3" TERM; sleep 300 & wait');
    await descendantsOf(root.pid, 1);
    const messages: string[] = [];

    await killTree(root.pid, { startTime: root.startTime, graceMs: 10_000, log: (m) => messages.push(m) });

    expect(await root.exited).toEqual({ code: 3, signal: null });
    expect(messages).toEqual([]);
  });

  it('kills nothing when the pid now belongs to a process with another start time', async () => {
    const root = await bash('sleep 300 & wait');
    const tree = [{ pid: root.pid, startTime: root.startTime }, ...(await descendantsOf(root.pid, 1))];

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
    const first = await bash('sleep 300 & wait', 'first');
    const second = await bash('sleep 300 & sleep 300 & wait', 'second');
    const ofFirst = await descendantsOf(first.pid, 1);
    const ofSecond = await descendantsOf(second.pid, 2);
    expect(ofFirst.map((p) => p.pid)).not.toContain(second.pid);
    for (const p of ofSecond) expect(ofFirst.map((q) => q.pid)).not.toContain(p.pid);
  });

  it('reads processes whose name contains spaces and parentheses', async () => {
    // comm ends at the last ')' of /proc/<pid>/stat; a naive split would misread every field.
    const odd = path.join(dir, 'a) b (c');
    await copyFile('/usr/bin/sleep', odd);
    const root = await bash(`'${odd}' 300 & wait`);
    const [child] = await descendantsOf(root.pid, 1);
    expect(child?.startTime).toEqual(await processStartTime(child?.pid ?? -1));
    expect((await procStat(child?.pid ?? -1))?.ppid).toBe(root.pid);
  });
});

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
    const first = await bash('sleep 300', 'first');
    // Start times count clock ticks: the premise needs the second process to start a tick later.
    await nextTickAfter(first.startTime);
    const second = await bash('sleep 300', 'second');
    expect(first.startTime).not.toBeNull();
    expect(await processStartTime(first.pid)).toBe(first.startTime);
    expect(await processStartTime(first.pid)).toBe(first.startTime);
    expect(second.startTime).not.toBe(first.startTime);
    expect(await isSameProcess(first.pid, first.startTime)).toBe(true);
    expect(await isSameProcess(first.pid, second.startTime)).toBe(false);
  });

  it.skipIf(!canChoosePids)('tells a recycled pid from the process that had it before', async () => {
    const before = await bash('sleep 300', 'before');
    await killTree(before.pid, { startTime: before.startTime, graceMs: 0 });
    await before.exited;
    await nextTickAfter(before.startTime);
    // Make the kernel hand out the same pid again (CRIU's trick); other forks on the machine may
    // take it first, so try a few times.
    let after: DetachedProcess | undefined;
    for (let attempt = 0; attempt < 20 && after?.pid !== before.pid; attempt++) {
      if (after) await killTree(after.pid, { startTime: after.startTime, graceMs: 0 });
      await writeFile(NS_LAST_PID, String(before.pid - 1));
      after = await bash('sleep 300', 'after');
    }
    expect(after?.pid).toBe(before.pid);
    if (!after) return;

    expect(await processStartTime(after.pid)).not.toBe(before.startTime);
    expect(await isSameProcess(after.pid, before.startTime)).toBe(false);
    expect(await killTree(after.pid, { startTime: before.startTime, graceMs: 0 })).toEqual({ killed: 0, survivors: [] });
    expect(await isSameProcess(after.pid, after.startTime)).toBe(true);
  });

  it('has no start time for a process that is gone', async () => {
    const child = await bash('exit 0');
    await child.exited;
    expect(await processStartTime(child.pid)).toBeNull();
    expect(await isSameProcess(child.pid, child.startTime)).toBe(false);
  });

  it('counts a zombie (exited, not yet reaped) as dead', async () => {
    // `exec sleep` replaces the shell with a program that never reaps the shell's child; the child
    // waits until that exec has happened, so the shell cannot reap it first.
    const pidFile = path.join(dir, 'zombie.pid');
    await bash(`( while [ "$(cat /proc/$$/comm)" != sleep ]; do sleep 0.01; done ) & echo $! > '${pidFile}'; exec sleep 300`);
    const zombie = await waitFor('the zombie', async () => {
      const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
      return pid > 0 && (await procStat(pid))?.state === 'Z' ? pid : undefined;
    });
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(isAlive(zombie)).toBe(false);
  });

  it('calls a running process alive and a made-up pid dead', async () => {
    const child = await bash('sleep 300');
    expect(isAlive(child.pid)).toBe(true);
    const pidMax = Number((await readFile('/proc/sys/kernel/pid_max', 'utf8')).trim());
    expect(isAlive(pidMax + 1)).toBe(false);
    expect(isAlive(0)).toBe(false);
  });
});

describe.skipIf(process.platform === 'win32')('spawnDetached', () => {
  it('writes stdout and stderr to their files, private, appending to what is there', async () => {
    const out = files();
    await writeFile(out.stdoutFile, 'before\n');
    await writeFile(out.stdinFile, 'the prompt\n');
    const child = await bash('cat; echo out; echo err >&2');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(await readFile(out.stdoutFile, 'utf8')).toBe('before\nthe prompt\nout\n');
    expect(await readFile(out.stderrFile, 'utf8')).toBe('err\n');
    expect((await stat(out.stderrFile)).mode & 0o777).toBe(0o600);
  });

  it.skipIf(!linux)('starts the child as leader of its own session and process group', async () => {
    const child = await bash('sleep 300');
    const info = await procStat(child.pid);
    expect(info).toMatchObject({ pgrp: child.pid, session: child.pid });
  });

  it('rejects with "not found" when the program does not exist', async () => {
    await expect(
      spawnDetached({ command: 'no-such-program-ord-test', args: [], cwd: dir, env: process.env, ...files() }),
    ).rejects.toThrow(/no-such-program-ord-test: the program was not found on the PATH/);
  });

  it('says so when the working directory does not exist', async () => {
    const missing = path.join(dir, 'missing');
    await expect(spawnDetached({ command: 'bash', args: ['-c', 'true'], cwd: missing, env: process.env, ...files() })).rejects.toThrow(
      `the working directory ${missing} does not exist`,
    );
  });

  it('names the input file when it cannot be read', async () => {
    const stdinFile = path.join(dir, 'no-prompt.txt');
    await expect(spawnDetached({ command: 'bash', args: ['-c', 'true'], cwd: dir, env: process.env, ...files(), stdinFile })).rejects.toThrow(
      stdinFile,
    );
  });

  it.skipIf(!linux)('keeps the child running after the process that spawned it has ended', async () => {
    // A separate Node process plays the service: it starts the job, reports it and simply ends:
    // a running job must not hold it open (a stopped service exits), nor die with it.
    const script = path.join(dir, 'service.mjs');
    const moduleUrl = pathToFileURL(path.join(ROOT, 'src-main/core/jobs/process-tree.ts')).href;
    const out = files('orphan');
    await writeFile(
      script,
      `import { spawnDetached } from ${JSON.stringify(moduleUrl)};
const child = await spawnDetached({ command: 'bash', args: ['-c', 'while :; do echo tick; sleep 0.05; done'],
  cwd: ${JSON.stringify(dir)}, env: process.env, ...${JSON.stringify(out)} });
process.stdout.write(JSON.stringify({ pid: child.pid, startTime: child.startTime }));
`,
    );
    // Run from the repository so `--import tsx` resolves; the child then loads the TypeScript source.
    const report = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, timeout: 20_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });
    const job = JSON.parse(report) as { pid: number; startTime: string };
    started.push(job);

    const sizeAfterParentDied = (await stat(out.stdoutFile)).size;
    await waitFor('the orphan to keep writing', async () => ((await stat(out.stdoutFile)).size > sizeAfterParentDied + 20 ? true : undefined));
    expect(await isSameProcess(job.pid, job.startTime)).toBe(true);
    expect((await procStat(job.pid))?.session).toBe(job.pid);
  });
});

describe.skipIf(!linux)('processesWithEnv', () => {
  it('finds the processes that carry a marker in their environment, and only those', async () => {
    const marker = `job-${process.pid}-${Date.now()}`;
    const marked = await spawnDetached({ command: 'sleep', args: ['300'], cwd: dir, env: { ...process.env, ORD_TEST_MARK: marker }, ...files('marked') });
    const prefixed = await spawnDetached({ command: 'sleep', args: ['300'], cwd: dir, env: { ...process.env, ORD_TEST_MARK: `${marker}-other` }, ...files('other') });
    started.push({ pid: marked.pid, startTime: marked.startTime }, { pid: prefixed.pid, startTime: prefixed.startTime });

    expect(await processesWithEnv('ORD_TEST_MARK', marker)).toEqual([{ pid: marked.pid, startTime: marked.startTime }]);
    expect(await processesWithEnv('ORD_TEST_MARK', 'nobody')).toEqual([]);
  });

  it('finds every process that carries the same marker (a delegate and the commands it started)', async () => {
    const marker = `job-${process.pid}-${Date.now()}-many`;
    const env = { ...process.env, ORD_TEST_MARK: marker };
    const spawned = await Promise.all(['a', 'b', 'c'].map((name) => spawnDetached({ command: 'sleep', args: ['300'], cwd: dir, env, ...files(name) })));
    for (const child of spawned) started.push({ pid: child.pid, startTime: child.startTime });

    const found = (await processesByEnv('ORD_TEST_MARK')).get(marker) ?? [];
    expect(found.map((p) => p.pid).sort()).toEqual(spawned.map((child) => child.pid).sort());
  });
});
