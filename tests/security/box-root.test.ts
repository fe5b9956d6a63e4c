/**
 * A box's root (src-main/cli/box-root.ts), warm and cold, through the real sandbox runtime, bubblewrap and socat: the
 * box is its root's direct child, so nothing of a job outlives a root killed outright (SIGKILL: the OOM killer, a
 * user's `kill -9`), and the cold way (`--settings <file> -- <command…>`) runs a command as the runtime's CLI would.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BoxSpares } from '../../src-main/core/jobs/process/box-spares.js';
import { boxSettings, boxedInner, ripgrep } from '../../src-main/core/jobs/process/box.js';
import { probeSandbox } from '../../src-main/platform/sandbox-probe.js';
import { ROOT } from '../support/built.js';
import { CLAUDE_CLI } from '../support/fake-anthropic.js';
import { processesRunning } from '../support/delegation.js';
import { groupOf, socatBridgesOf } from '../support/process-sandbox.js';

const SCRIPT = path.join(ROOT, 'dist', 'cli', 'box-root.js');
const available = (await probeSandbox()).available && existsSync(SCRIPT);
const RG = await ripgrep(CLAUDE_CLI, { PATH: process.env.PATH ?? '' });

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

describe.skipIf(!available || process.platform !== 'linux')("a box's root (the real runtime, bubblewrap and socat)", () => {
  let dir: string;
  let cwd: string;
  let token: string;
  /** Roots started by a test (each its own group), ended with their groups after it. */
  const roots: number[] = [];
  const savedTmp = process.env.TMPDIR;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ord-root-'));
    cwd = path.join(dir, 'work');
    await Promise.all([mkdir(cwd), mkdir(path.join(dir, 'tmp'))]);
    process.env.TMPDIR = path.join(dir, 'tmp');
    // A sleep no other process runs: how the test finds the boxed command from outside its pid namespace.
    token = `3600.${randomInt(1e9)}`;
  });

  afterEach(async () => {
    // Whatever a failed check left running: the boxed command, and the roots' groups (their socat bridges).
    killAll(await processesRunning(['sleep', token]));
    for (const pid of roots.splice(0)) killGroup(pid);
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    await rm(dir, { recursive: true, force: true });
  });

  async function settingsFile(tmp: string): Promise<string> {
    const file = path.join(dir, 'box.json');
    await writeFile(
      file,
      boxSettings({ gatewayUrl: null, allowedDomains: [], denyRead: [], allowRead: [], allowWrite: [cwd, tmp], denyWrite: [], ripgrep: RG }),
    );
    return file;
  }

  /** The root started cold, as boxCommand gives it, detached, with the job's stdio files. */
  async function startCold(script: string): Promise<{ pid: number; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }> {
    const tmp = path.join(dir, 'tmp', 'job');
    await mkdir(tmp);
    const inner = boxedInner({ command: 'sh', args: ['-c', script], env: { PATH: process.env.PATH ?? '', HOME: os.homedir(), TMPDIR: tmp, JOB_MARK: 'cold' } });
    const stdio = [openSync('/dev/null', 'r'), openSync(path.join(dir, 'stdout.log'), 'a'), openSync(path.join(dir, 'stderr.log'), 'a')];
    try {
      const root = spawn(process.execPath, [SCRIPT, '--settings', await settingsFile(tmp), '--', inner.command, ...inner.args], {
        cwd,
        env: inner.env,
        detached: true,
        stdio,
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        root.once('exit', (code, signal) => resolve({ code, signal })),
      );
      if (root.pid === undefined) throw new Error('no pid');
      roots.push(root.pid);
      return { pid: root.pid, exited };
    } finally {
      for (const fd of stdio) closeSync(fd);
    }
  }

  const stdout = () => readFile(path.join(dir, 'stdout.log'), 'utf8').catch(() => '');

  it('cold: runs its command in the box with its own environment and stdio, passes its exit code, and says nothing of its own on stdout', async () => {
    const root = await startCold(`echo "mark=$JOB_MARK"; echo out > '${dir}/escaped.txt' 2>/dev/null || echo 'outside refused'; exit 5`);
    expect(await root.exited).toEqual({ code: 5, signal: null });
    expect(await stdout()).toBe('mark=cold\noutside refused\n');
    expect(existsSync(path.join(dir, 'escaped.txt'))).toBe(false);
    // Its TMPDIR is its caller's: a cold root removes nothing.
    expect(existsSync(path.join(dir, 'tmp', 'job'))).toBe(true);
  });

  it('cold: refuses a settings file the runtime cannot take, on stderr, running nothing', async () => {
    await mkdir(path.join(dir, 'tmp', 'job'));
    const file = path.join(dir, 'bad.json');
    await writeFile(file, '{"network": "not a policy"}\n');
    const err = openSync(path.join(dir, 'stderr.log'), 'a');
    const root = spawn(process.execPath, [SCRIPT, '--settings', file, '--', 'touch', path.join(cwd, 'ran.txt')], { cwd, stdio: ['ignore', 'ignore', err] });
    closeSync(err);
    expect(await new Promise((resolve) => root.once('exit', resolve))).toBe(1);
    expect(await readFile(path.join(dir, 'stderr.log'), 'utf8')).toBe(`Error: ${file} is not a valid settings file for the sandbox runtime\n`);
    expect(existsSync(path.join(cwd, 'ran.txt'))).toBe(false);
  });

  it('refuses any other arguments (exit 2), and removes no folder, its TMPDIR included, whatever it was given', async () => {
    const keep = path.join(dir, 'tmp', 'keep');
    await mkdir(keep);
    const exitOf = (args: string[]) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [SCRIPT, ...args], { cwd, env: { PATH: process.env.PATH ?? '', TMPDIR: keep }, stdio: 'ignore' });
        child.once('exit', resolve);
      });
    expect(await exitOf([])).toBe(2);
    expect(await exitOf(['--settings=box.json', '--', 'true'])).toBe(2);
    expect(await exitOf([JSON.stringify(RG)])).toBe(2);
    // A warm box whose ripgrep is no JSON fails; its TMPDIR is not a box's own (`box-…`), so it stays.
    expect(await exitOf(['--warm', 'not json'])).toBe(1);
    expect(existsSync(keep)).toBe(true);
  });

  it('cold: SIGKILLed once its command runs, it leaves nothing of the box running', async () => {
    const root = await startCold(`echo up; exec sleep ${token}`);
    await expect.poll(stdout).toBe('up\n');
    expect(await processesRunning(['sleep', token])).not.toEqual([]);
    process.kill(root.pid, 'SIGKILL');
    await root.exited;
    await expect.poll(() => processesRunning(['sleep', token])).toEqual([]);
    // Its socat bridges on the host, in its group, are a cancel's to end with the tree (kill-tree.ts): afterEach's here.
  });

  it.each([
    ['its service goes (stdin closes)', (root: ChildProcess) => root.stdin?.end()],
    ['it is sent SIGTERM', (root: ChildProcess) => root.kill('SIGTERM')],
  ])('warm: ended while its runtime is still starting (%s), it leaves no socat bridge running', async (_how, end) => {
    const tmp = path.join(dir, 'tmp', 'box-starting');
    await mkdir(tmp);
    const root = spawn(process.execPath, [SCRIPT, '--warm', JSON.stringify(RG)], {
      cwd: tmp,
      env: { PATH: process.env.PATH ?? '', HOME: os.homedir(), TMPDIR: tmp },
      detached: true,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const exited = new Promise((resolve) => root.once('exit', resolve));
    const pid = root.pid ?? 0;
    roots.push(pid);
    // Its socat bridge is up, and the runtime still waits for its socket (it looks again 100 ms later): the box ends now.
    await expect.poll(async () => (await socatBridgesOf(pid)).length, { interval: 2, timeout: 15_000 }).toBeGreaterThan(0);
    let said = '';
    root.stdout?.on('data', (chunk: Buffer) => (said += chunk.toString()));
    end(root);
    await exited;
    expect(said).not.toContain('started');
    await expect.poll(() => groupOf(pid), { timeout: 5_000 }).toEqual([]);
  });

  it('warm: SIGKILLed once its claimed command runs, it leaves nothing of the box running', async () => {
    const spares = new BoxSpares({ node: process.execPath, script: SCRIPT, env: () => process.env, log: () => undefined });
    try {
      spares.refill(RG);
      const box = await spares.take(RG);
      if (!box) throw new Error('no warm box came up');
      const inner = boxedInner({ command: 'sh', args: ['-c', `echo up; exec sleep ${token}`], env: { PATH: process.env.PATH ?? '', TMPDIR: box.tmp } });
      await writeFile(path.join(dir, 'prompt.txt'), '');
      const claimed = box.claim({
        settingsFile: await settingsFile(box.tmp),
        ...inner,
        cwd,
        stdinFile: path.join(dir, 'prompt.txt'),
        stdoutFile: path.join(dir, 'stdout.log'),
        stderrFile: path.join(dir, 'stderr.log'),
      });
      const started = await claimed;
      roots.push(started.pid);
      await expect.poll(stdout).toBe('up\n');
      expect(await processesRunning(['sleep', token])).not.toEqual([]);
      process.kill(started.pid, 'SIGKILL');
      await started.exited;
      await expect.poll(() => processesRunning(['sleep', token])).toEqual([]);
    } finally {
      await spares.stop();
    }
  });
});
