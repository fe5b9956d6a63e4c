/**
 * One verify command, run (docs/VERIFY.md): `sh -c <command>` in the clean checkout, detached like a delegate (its own
 * session, so its whole tree can be ended), its output into a file of its own, stopped at its timeout or when the job
 * is cancelled — with everything it started.
 */
import { open, readFile } from 'node:fs/promises';
import type { VerifyRun } from '../../contract/index.js';
import { killTree } from '../jobs/process/kill-tree.js';
import { spawnDetached } from '../jobs/process/spawn-detached.js';
import type { BoxedCommand } from '../jobs/process/box.js';
import { testCount } from './test-counts.js';

/** The end of a command's output kept on the job's record and shown to the parent and to a fix round. */
export const TAIL_CHARS = 3000;
const TAIL_LINES = 40;
/** The most of one command's output read back (its end); the log file holds it whole. */
const READ_BACK_BYTES = 256 * 1024;

// eslint-disable-next-line no-control-regex -- colour and cursor codes are control characters.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007/g;

/** The last lines of `output`, without colour codes, at most TAIL_CHARS. */
export function outputTail(output: string): string {
  const lines = output.replace(ANSI, '').replace(/\r\n?/g, '\n').trimEnd().split('\n').slice(-TAIL_LINES);
  const text = lines.join('\n');
  return text.length > TAIL_CHARS ? `…${text.slice(-TAIL_CHARS)}` : text;
}

async function lastBytes(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, READ_BACK_BYTES);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

export interface RunCommandInput {
  command: string;
  /** How to run it: `sh -c <command>` as is, or inside the box (box.ts boxCommand). */
  spawn: BoxedCommand;
  cwd: string;
  outputFile: string;
  timeoutMs: number;
  signal: AbortSignal;
  now?: () => number;
}

/** Runs the command to its end, its timeout or the abort; never throws for what the command does. */
export async function runCommand(input: RunCommandInput): Promise<VerifyRun> {
  const now = input.now ?? Date.now;
  const started = now();
  const child = await spawnDetached({
    command: input.spawn.command,
    args: input.spawn.args,
    cwd: input.cwd,
    env: input.spawn.env,
    stdinFile: '/dev/null',
    stdoutFile: input.outputFile,
    stderrFile: input.outputFile,
  });
  let timedOut = false;
  const stop = () => void killTree(child.pid, { startTime: child.startTime, graceMs: 2000 }).catch(() => undefined);
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, input.timeoutMs);
  input.signal.addEventListener('abort', stop, { once: true });
  if (input.signal.aborted) stop();
  const exit = await child.exited;
  clearTimeout(timer);
  input.signal.removeEventListener('abort', stop);
  const output = (await lastBytes(input.outputFile).catch(() => readFile(input.outputFile, 'utf8').catch(() => ''))).replace(ANSI, '');
  return {
    command: input.command,
    ok: exit.code === 0 && !timedOut,
    exitCode: exit.code,
    signal: exit.signal,
    timedOut,
    ms: now() - started,
    tail: outputTail(output),
    tests: testCount(output.replace(/\r\n?/g, '\n')),
    testsBefore: null,
  };
}
