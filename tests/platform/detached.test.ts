/** spawnDetached: what the tray app, the headless service and the watchdog are started with, their output in the service log. */
import type { ChildProcess } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serviceLogFile, spawnDetached } from '../../src-main/platform/detached.js';
import { makeTempHome } from '../support/temp-home.js';

const POSIX = process.platform !== 'win32';

const exited = (child: ChildProcess): Promise<number | null> => new Promise((resolve) => child.once('exit', (code) => resolve(code)));

describe.runIf(POSIX)('spawnDetached', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });

  async function logsFolder(): Promise<{ logs: string }> {
    const { home, cleanup } = await makeTempHome();
    cleanups.push(cleanup);
    return { logs: path.join(home, 'logs') };
  }

  it('appends both streams to the service log, in a private folder it makes, and keeps what was there', async () => {
    const locations = await logsFolder();
    const first = spawnDetached({ command: '/bin/sh', args: ['-c', 'echo out; echo err >&2'], env: {}, locations });
    expect(first.logFile).toBe(serviceLogFile(locations));
    expect(await exited(first.child)).toBe(0);
    const second = spawnDetached({ command: '/bin/sh', args: ['-c', 'echo again'], env: {}, locations });
    await exited(second.child);
    expect(await readFile(first.logFile, 'utf8')).toBe('out\nerr\nagain\n');
    expect((await stat(locations.logs)).mode & 0o777).toBe(0o700);
    expect((await stat(first.logFile)).mode & 0o777).toBe(0o600);
  });

  it('hands the starter its stdout when piped, its stderr still to the log', async () => {
    const locations = await logsFolder();
    const { child, logFile } = spawnDetached({ command: '/bin/sh', args: ['-c', 'echo ready; echo oops >&2'], env: {}, locations, stdout: 'pipe' });
    let said = '';
    child.stdout?.on('data', (chunk: Buffer) => (said += chunk.toString('utf8')));
    await exited(child);
    expect(said).toBe('ready\n');
    expect(await readFile(logFile, 'utf8')).toBe('oops\n');
  });

  it('runs the process in a group of its own, so it outlives its starter', async () => {
    const { child } = spawnDetached({ command: '/bin/sh', args: ['-c', 'sleep 30'], env: { PATH: process.env.PATH }, locations: await logsFolder() });
    const pid = child.pid;
    // Never signal group 0 (our own): without a pid there is nothing to ask about.
    if (pid === undefined) throw new Error('sh was not started');
    const ended = exited(child);
    // Signal 0 to -pid asks only whether a process group with that id exists: a detached child leads its own.
    expect(() => process.kill(-pid, 0)).not.toThrow();
    process.kill(-pid, 'SIGTERM');
    await ended;
  });
});
