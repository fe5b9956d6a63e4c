/**
 * Starting a job's process (docs/ARCHITECTURE.md §4). A job's `claude -p` runs detached (its own session
 * and process group) with its stdio going straight into the job's files, so it outlives a crashed
 * service and loses no output. Its start time is read at once (process-table.ts), so a restarted
 * service recognises it by pid *and* start time and never mistakes a recycled pid for a job.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { FileHandle } from 'node:fs/promises';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { describeFsError } from '../../fs/atomic-write.js';
import { processStartTime } from './process-table.js';
import { errorMessage } from '../../../common/errors.js';
import { allOrFirstError } from '../../../common/promises.js';

export interface SpawnDetachedOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Read as the child's stdin (the prompt: never argv, which other users can see). */
  stdinFile: string;
  /** Appended to, created 0600 when missing. */
  stdoutFile: string;
  stderrFile: string;
}

export interface ProcessExit {
  code: number | null;
  signal: string | null;
}

export interface DetachedProcess {
  pid: number;
  /** Identity beside the pid (see processStartTime); null when it could not be read. */
  startTime: string | null;
  /**
   * Settles when the child exits, as long as this process's event loop runs (the service's server
   * keeps it running); never rejects. The child does not by itself keep the loop alive: a service
   * that stops without killing its jobs can exit, and the job, detached, runs on to be re-adopted.
   */
  exited: Promise<ProcessExit>;
}

/**
 * Starts `command` in its own session and process group (`detached`), with stdio bound to files.
 * Resolves once the OS has started it; rejects with a message naming the program or file at fault.
 */
export async function spawnDetached(options: SpawnDetachedOptions): Promise<DetachedProcess> {
  const { command, cwd } = options;
  const handles: FileHandle[] = [];
  let child: ChildProcess;
  let started: Promise<void>;
  let exited: Promise<ProcessExit>;
  try {
    // Opened at once; each one that opened is in `handles`, closed below whatever happens.
    const kept = (handle: FileHandle): FileHandle => {
      handles.push(handle);
      return handle;
    };
    const [stdin, stdout, stderr] = await allOrFirstError<[FileHandle, FileHandle, FileHandle]>([
      openStdio(options.stdinFile, 'r', command, 'read').then(kept),
      openStdio(options.stdoutFile, 'a', command, 'open for writing').then(kept),
      openStdio(options.stderrFile, 'a', command, 'open for writing').then(kept),
    ]);
    try {
      child = spawn(command, [...options.args], {
        cwd,
        env: options.env,
        // Own session and group: a terminal's Ctrl-C or the service's death does not reach it,
        // and the group id lets cancel signal everything it started at once.
        detached: true,
        windowsHide: true,
        stdio: [stdin.fd, stdout.fd, stderr.fd],
      });
    } catch (error) {
      // Thrown synchronously for arguments the OS can never accept (a NUL byte, a bad env).
      throw new Error(`Cannot start ${command}: ${errorMessage(error)}`, { cause: error });
    }
    // Listen before anything else is awaited: 'spawn' or 'error' fires on the next tick.
    const spawned = child;
    exited = new Promise<ProcessExit>((resolve) => {
      spawned.once('exit', (code, signal) => resolve({ code, signal }));
    });
    started = new Promise<void>((resolve, reject) => {
      spawned.once('spawn', () => resolve());
      spawned.once('error', (error) => reject(error));
    });
    // Settled before it is awaited (the handles close first): not an unhandled rejection.
    started.catch(() => undefined);
    // A later 'error' (a failed kill through this handle) must not become an uncaught exception.
    spawned.on('error', () => undefined);
    // The exit callback still comes while anything else keeps the loop alive (libuv's SIGCHLD
    // watcher runs regardless); only a loop that has nothing else left may now end.
    spawned.unref();
  } finally {
    // The child holds its own copies of the descriptors from here on (spawn forks synchronously).
    await Promise.all(handles.map((handle) => handle.close().catch(() => undefined)));
  }

  try {
    await started;
  } catch (error) {
    const message = await describeSpawnError(error as Error, command, cwd);
    throw new Error(message, { cause: error });
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`Cannot start ${command}: the system gave it no process id.`);
  return { pid, startTime: await processStartTime(pid), exited };
}

async function openStdio(file: string, flags: 'r' | 'a', command: string, action: string): Promise<FileHandle> {
  try {
    return await open(file, flags, 0o600);
  } catch (error) {
    throw new Error(`Cannot start ${command}: ${describeFsError(error, file, action)}`, { cause: error });
  }
}

async function describeSpawnError(error: Error, command: string, cwd: string): Promise<string> {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') {
    // Node reports a missing working directory as ENOENT of the program: tell them apart.
    const cwdExists = await stat(cwd).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!cwdExists) return `Cannot start ${command}: the working directory ${cwd} does not exist (ENOENT).`;
    const where = path.isAbsolute(command) ? '' : ' on the PATH';
    return `Cannot start ${command}: the program was not found${where} (ENOENT). Check that it is installed and the path is right.`;
  }
  if (code === 'EACCES') return `Cannot start ${command}: permission denied; the file is not executable or a folder on the way is not readable (EACCES).`;
  return `Cannot start ${command}: ${error.message}`;
}
