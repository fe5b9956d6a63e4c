/**
 * The delegate's process and everything it starts (docs/ARCHITECTURE.md §4). A job's `claude -p` runs detached
 * (its own session and process group) with its stdio going straight into the job's files, so it
 * outlives a crashed service and loses no output; a restarted service recognises it by pid *and*
 * start time, so a recycled pid is never mistaken for a job. Cancel ends the whole tree, including
 * grandchildren that left the group (`setsid`, `nohup … &`), and never a process that is not ours.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describeFsError } from '../fs/atomic-write.js';

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
    const stdin = await openStdio(options.stdinFile, 'r', command, 'read');
    handles.push(stdin);
    const stdout = await openStdio(options.stdoutFile, 'a', command, 'open for writing');
    handles.push(stdout);
    const stderr = await openStdio(options.stderrFile, 'a', command, 'open for writing');
    handles.push(stderr);
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
      throw new Error(`Cannot start ${command}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
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
    const cwdExists = await stat(cwd).then((s) => s.isDirectory(), () => false);
    if (!cwdExists) return `Cannot start ${command}: the working directory ${cwd} does not exist (ENOENT).`;
    const where = path.isAbsolute(command) ? '' : ' on the PATH';
    return `Cannot start ${command}: the program was not found${where} (ENOENT). Check that it is installed and the path is right.`;
  }
  if (code === 'EACCES') return `Cannot start ${command}: permission denied; the file is not executable or a folder on the way is not readable (EACCES).`;
  return `Cannot start ${command}: ${error.message}`;
}

// ---------------------------------------------------------------------------------------------
// Identity: pid + start time

interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  /** Session id; -1 where the platform does not tell (macOS). */
  session: number;
  /** Exited but not yet reaped: dead for every purpose here. */
  zombie: boolean;
  /** Stopped by a signal (state T): it cannot fork or leave its group until it is continued. */
  stopped: boolean;
  startTime: string | null;
}

/** The fields of /proc/<pid>/stat we use, or null when the text is not a stat line. */
export function parseProcStat(text: string): { state: string; ppid: number; pgrp: number; session: number; startTicks: string } | null {
  // comm (field 2) is in parentheses and may itself contain spaces and parentheses: the last ')' ends it.
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 1).trim().split(/\s+/);
  // fields[0] is field 3 (state), so field n is fields[n - 3]; starttime is field 22.
  const [state, ppid, pgrp, session] = [fields[0], fields[1], fields[2], fields[3]];
  const startTicks = fields[19];
  if (state === undefined || ppid === undefined || pgrp === undefined || session === undefined || startTicks === undefined) return null;
  if (!/^\d+$/.test(startTicks)) return null;
  return { state, ppid: Number(ppid), pgrp: Number(pgrp), session: Number(session), startTicks };
}

let bootIdPromise: Promise<string> | undefined;

/** Ticks since boot repeat after a reboot; the boot id makes a start time unique across boots. */
function bootId(): Promise<string> {
  bootIdPromise ??= readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
    (text) => text.trim(),
    // Some containers hide it; the boot time in seconds serves the same purpose.
    () => readFile('/proc/stat', 'utf8').then((text) => /^btime (\d+)$/m.exec(text)?.[1] ?? 'unknown-boot', () => 'unknown-boot'),
  );
  return bootIdPromise;
}

async function readLinuxProc(pid: number, boot: string): Promise<ProcInfo | null> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const parsed = parseProcStat(text);
  if (!parsed) return null;
  return {
    pid,
    ppid: parsed.ppid,
    pgrp: parsed.pgrp,
    session: parsed.session,
    zombie: parsed.state === 'Z',
    stopped: parsed.state === 'T',
    startTime: `${boot}:${parsed.startTicks}`,
  };
}

function run(file: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    // LC_ALL=C: `ps -o lstart` is locale-dependent, and a start time must read the same after a restart
    // under another LANG, or a live job would be taken for a dead one.
    execFile(file, args, { windowsHide: true, timeout: 15_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, LC_ALL: 'C' } }, (error, stdout) => {
      resolve(error ? null : stdout);
    });
  });
}

/**
 * An opaque string that differs between two processes that had the same pid: on Linux the boot id
 * and the start time in clock ticks; on macOS the start time to the second; on Windows the creation
 * time as a FILETIME. null when no such process exists (or its start time cannot be read).
 */
export async function processStartTime(pid: number): Promise<string | null> {
  if (!isPlausiblePid(pid)) return null;
  if (process.platform === 'linux') {
    return (await readLinuxProc(pid, await bootId()))?.startTime ?? null;
  }
  if (process.platform === 'win32') {
    const out = await run('powershell.exe', [
      '-NoProfile',
      '-NonInteractive',
      '-Command',
      `(Get-Process -Id ${pid} -ErrorAction Stop).StartTime.ToFileTimeUtc()`,
    ]);
    const value = out?.trim();
    return value && /^\d+$/.test(value) ? value : null;
  }
  const out = await run('ps', ['-o', 'lstart=', '-p', String(pid)]);
  const value = out?.trim();
  return value ? value : null;
}

/** True when `pid` is alive (not a zombie) and is the process that had `startTime`. Unknown identity (null) is never "the same". */
export async function isSameProcess(pid: number, startTime: string | null): Promise<boolean> {
  if (startTime === null || !isAlive(pid)) return false;
  return (await processStartTime(pid)) === startTime;
}

/** Whether the process exists and has not exited; a zombie (exited, not yet reaped) counts as dead. */
export function isAlive(pid: number): boolean {
  if (!isPlausiblePid(pid)) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.state !== 'Z';
  } catch {
    return false;
  }
}

function isPlausiblePid(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0;
}

// ---------------------------------------------------------------------------------------------
// The tree

/** Every process on the machine, in one pass. */
async function scanProcesses(): Promise<Map<number, ProcInfo>> {
  const table = new Map<number, ProcInfo>();
  if (process.platform === 'linux') {
    const boot = await bootId();
    const names = await readdir('/proc').catch(() => [] as string[]);
    const infos = await Promise.all(names.filter((name) => /^\d+$/.test(name)).map((name) => readLinuxProc(Number(name), boot)));
    for (const info of infos) if (info) table.set(info.pid, info);
    return table;
  }
  // macOS and other BSDs. lstart is last because it contains spaces; same format as processStartTime.
  const out = await run('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart=']);
  for (const line of (out ?? '').split('\n')) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.+?)\s*$/.exec(line);
    if (!match) continue;
    const [, pid, ppid, pgid, state, lstart] = match;
    table.set(Number(pid), {
      pid: Number(pid),
      ppid: Number(ppid),
      pgrp: Number(pgid),
      session: -1,
      zombie: (state ?? '').startsWith('Z'),
      stopped: (state ?? '').startsWith('T'),
      startTime: lstart ?? null,
    });
  }
  return table;
}

/**
 * Whether the root's pid still means the root. A process group or session keeps its id reserved
 * while any member lives, so with the root gone its group and session hold only its own
 * processes; once the pid shows up with another start time it was recycled and means someone else.
 */
function rootStillOurs(rootPid: number, rootStartTime: string | null, table: Map<number, ProcInfo>): boolean {
  const entry = table.get(rootPid);
  return entry === undefined || (rootStartTime !== null && entry.startTime === rootStartTime);
}

/**
 * The root's tree in `table`: its group and session (which keep processes whose parent died and
 * which init adopted), plus everything descending by parent links from the root or from a process
 * already known to be a member (so one that left with setsid is followed while its parent lives).
 * Zombies, init and this process are never members.
 */
function collectTree(
  rootPid: number,
  rootStartTime: string | null,
  table: Map<number, ProcInfo>,
  known: ReadonlyMap<number, string | null>,
): ProcInfo[] {
  const members = new Map<number, ProcInfo>();
  const admit = (info: ProcInfo): void => {
    if (info.zombie || info.pid === 1 || info.pid === process.pid) return;
    members.set(info.pid, info);
  };
  const groupIsOurs = rootStillOurs(rootPid, rootStartTime, table);
  const root = table.get(rootPid);
  if (root && groupIsOurs) admit(root);
  for (const info of table.values()) {
    if (groupIsOurs && (info.pgrp === rootPid || info.session === rootPid)) admit(info);
    // A known member counts only while it is the same process (its pid may have been recycled).
    else if (known.has(info.pid) && known.get(info.pid) === info.startTime) admit(info);
  }
  // Parents are linked to children by ppid; repeat until nothing new joins. `seen` rather than
  // `members` ends the loop: a zombie or this process is looked at once and never admitted.
  const seen = new Set<number>(members.keys());
  if (root) seen.add(rootPid);
  let grew = true;
  while (grew) {
    grew = false;
    for (const info of table.values()) {
      if (seen.has(info.pid) || !members.has(info.ppid)) continue;
      seen.add(info.pid);
      admit(info);
      grew = true;
    }
  }
  return [...members.values()];
}

/**
 * Everything `pid` started, directly or not, that is still running (the root itself excluded).
 * Linux and macOS; on Windows taskkill /T walks the tree itself, so this returns [].
 */
export async function listDescendants(pid: number): Promise<Array<{ pid: number; startTime: string | null }>> {
  if (process.platform === 'win32' || !isPlausiblePid(pid)) return [];
  const table = await scanProcesses();
  const rootStartTime = table.get(pid)?.startTime ?? null;
  return collectTree(pid, rootStartTime, table, new Map())
    .filter((info) => info.pid !== pid)
    .map((info) => ({ pid: info.pid, startTime: info.startTime }));
}

export interface KillTreeOptions {
  /** The root's recorded start time: when the pid now belongs to another process, nothing is killed. */
  startTime?: string | null;
  /** How long SIGTERM gets before SIGKILL (default 3000 ms). */
  graceMs?: number;
  log?: (message: string) => void;
}

export interface KillTreeResult {
  /** Processes of the tree that were running and are gone now. */
  killed: number;
  /** Pids that are still alive after SIGKILL (stuck in the kernel, or not ours to kill). */
  survivors: number[];
}

const DEFAULT_GRACE_MS = 3000;
/** After SIGKILL: how long to wait for the kernel to finish them, and to catch last-moment forks. */
const KILL_SETTLE_MS = 2000;

/**
 * Ends `pid` and everything it started: SIGTERM to its group and to each process of the tree, a
 * grace period, then SIGKILL to whatever is left. The tree is taken before anything is signalled
 * (a dying parent's children are adopted by init and lose their link to it) and taken again while
 * it dies (a tree that forks while dying). A pid is only signalled while its start time still
 * matches, so a recycled pid is never hit.
 */
export async function killTree(pid: number, options: KillTreeOptions = {}): Promise<KillTreeResult> {
  if (!isPlausiblePid(pid) || pid === 1 || pid === process.pid) {
    // -pid with 0 or 1 would signal our own group or everything we may signal.
    throw new Error(`Refusing to kill process tree ${pid}: not a job's process id.`);
  }
  const log = options.log ?? (() => undefined);
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  if (process.platform === 'win32') return killTreeWindows(pid, options.startTime ?? null, log);

  const first = await scanProcesses();
  const rootEntry = first.get(pid);
  const expected = options.startTime ?? null;
  if (expected !== null && rootEntry && rootEntry.startTime !== expected) {
    log(`Process ${pid} is no longer the job's process (start time differs); nothing killed.`);
    return { killed: 0, survivors: [] };
  }
  const rootStartTime = rootEntry?.startTime ?? expected;

  const members = new Map<number, string | null>();
  const absorb = (table: Map<number, ProcInfo>): number[] => {
    const added: number[] = [];
    for (const info of collectTree(pid, rootStartTime, table, members)) {
      if (!members.has(info.pid)) {
        members.set(info.pid, info.startTime);
        added.push(info.pid);
      }
    }
    return added;
  };
  const stillAlive = (table: Map<number, ProcInfo>): number[] =>
    [...members].filter(([member, startTime]) => {
      const entry = table.get(member);
      return entry !== undefined && !entry.zombie && entry.startTime === startTime;
    }).map(([member]) => member);
  const signalGroup = (table: Map<number, ProcInfo>, signal: NodeJS.Signals): void => {
    if (rootStillOurs(pid, rootStartTime, table)) send(-pid, signal);
  };

  // Phase 1: SIGTERM, and wait for the tree to go, signalling newcomers as they appear.
  for (const member of absorb(first)) send(member, 'SIGTERM');
  signalGroup(first, 'SIGTERM');
  let table = first;
  let alive = stillAlive(table);
  const graceEnds = Date.now() + graceMs;
  let delay = 10;
  while (alive.length > 0 && Date.now() < graceEnds) {
    await sleep(Math.min(delay, Math.max(0, graceEnds - Date.now())));
    delay = Math.min(delay * 2, 200);
    table = await scanProcesses();
    for (const member of absorb(table)) send(member, 'SIGTERM');
    alive = stillAlive(table);
  }

  // Phase 2: freeze what is left with SIGSTOP, which cannot be caught: a stopped process can neither
  // fork nor leave the session. Take the tree again until every member is stopped and nothing new
  // joined, so that killing a parent cannot orphan a child it forked (or moved to a new session) an
  // instant before. Then SIGKILL all of it, and scan again for anything that got away meanwhile.
  if (alive.length > 0) {
    log(`Process tree ${pid}: ${alive.length} process(es) still running ${graceMs} ms after SIGTERM; sending SIGKILL.`);
    const settleEnds = Date.now() + KILL_SETTLE_MS;
    signalGroup(table, 'SIGSTOP');
    for (const member of alive) send(member, 'SIGSTOP');
    delay = 1;
    while (Date.now() < settleEnds) {
      await sleep(delay);
      delay = Math.min(delay * 2, 50);
      table = await scanProcesses();
      const added = absorb(table);
      for (const member of added) send(member, 'SIGSTOP');
      alive = stillAlive(table);
      if (added.length === 0 && alive.every((member) => table.get(member)?.stopped)) break;
    }
    delay = 10;
    for (;;) {
      signalGroup(table, 'SIGKILL');
      for (const member of alive) send(member, 'SIGKILL');
      await sleep(delay);
      delay = Math.min(delay * 2, 200);
      table = await scanProcesses();
      for (const member of absorb(table)) send(member, 'SIGKILL');
      alive = stillAlive(table);
      if (alive.length === 0 || Date.now() >= settleEnds) break;
    }
    if (alive.length > 0) log(`Process tree ${pid}: still running after SIGKILL: ${alive.join(', ')}.`);
  }
  return { killed: members.size - alive.length, survivors: alive };
}

function send(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // ESRCH: already gone, which is the goal. EPERM: not ours; it is reported as a survivor.
  }
}

async function killTreeWindows(pid: number, expected: string | null, log: (message: string) => void): Promise<KillTreeResult> {
  if (expected !== null) {
    const current = await processStartTime(pid);
    if (current === null) return { killed: 0, survivors: [] };
    if (current !== expected) {
      log(`Process ${pid} is no longer the job's process (start time differs); nothing killed.`);
      return { killed: 0, survivors: [] };
    }
  }
  const out = await run('taskkill', ['/T', '/F', '/PID', String(pid)]);
  const survivors = isAlive(pid) ? [pid] : [];
  return { killed: out === null ? 0 : 1, survivors };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Running processes by the value `name` has in their environment (Linux, from /proc/<pid>/environ;
 * elsewhere the environment of another process cannot be read reliably, and this is empty). A
 * delegate's tools run their commands in sessions of their own: once the delegate is gone, its job
 * marker is the only link left to them. This process is never included. One pass over /proc.
 */
export async function processesByEnv(name: string): Promise<Map<string, Array<{ pid: number; startTime: string | null }>>> {
  const found = new Map<string, Array<{ pid: number; startTime: string | null }>>();
  if (process.platform !== 'linux') return found;
  const prefix = `${name}=`;
  const names = await readdir('/proc').catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
      .map(async (entry) => {
        const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => null);
        const variable = environ?.split('\0').find((item) => item.startsWith(prefix));
        if (variable === undefined) return;
        const value = Buffer.from(variable.slice(prefix.length), 'latin1').toString('utf8');
        const pid = Number(entry);
        const startTime = await processStartTime(pid);
        // No await between the look-up and the set: the other readers run in between.
        found.set(value, [...(found.get(value) ?? []), { pid, startTime }]);
      }),
  );
  return found;
}

/** The processes whose environment holds `name=value` (see processesByEnv). */
export async function processesWithEnv(name: string, value: string): Promise<Array<{ pid: number; startTime: string | null }>> {
  return (await processesByEnv(name)).get(value) ?? [];
}
