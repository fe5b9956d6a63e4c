/**
 * Reading the process table (docs/ARCHITECTURE.md §4): who is running, with which parent, group and
 * session, and a start time beside each pid. A pid alone is not an identity: the kernel hands it out
 * again once its process is gone, so everything that decides whether a process is still a job's (re-
 * adopting after a restart, killing a tree) compares the start time too. Read-only: nothing here signals.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

export interface ProcInfo {
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
  const fields = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
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
    () =>
      readFile('/proc/stat', 'utf8').then(
        (text) => /^btime (\d+)$/m.exec(text)?.[1] ?? 'unknown-boot',
        () => 'unknown-boot',
      ),
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

/** Runs a system tool (ps, powershell; taskkill for kill-tree.ts): its stdout, or null when it failed or hung. */
export function runCommand(file: string, args: string[]): Promise<string | null> {
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
    const out = await runCommand('powershell.exe', [
      '-NoProfile',
      '-NonInteractive',
      '-Command',
      `(Get-Process -Id ${pid} -ErrorAction Stop).StartTime.ToFileTimeUtc()`,
    ]);
    const value = out?.trim();
    return value && /^\d+$/.test(value) ? value : null;
  }
  const out = await runCommand('ps', ['-o', 'lstart=', '-p', String(pid)]);
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

/** 0 and negative numbers name process groups to kill(2), never one process. */
export function isPlausiblePid(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0;
}

/** Every process on the machine, in one pass. */
export async function scanProcesses(): Promise<Map<number, ProcInfo>> {
  const table = new Map<number, ProcInfo>();
  if (process.platform === 'linux') {
    const boot = await bootId();
    const names = await readdir('/proc').catch(() => [] as string[]);
    const infos = await Promise.all(names.filter((name) => /^\d+$/.test(name)).map((name) => readLinuxProc(Number(name), boot)));
    for (const info of infos) if (info) table.set(info.pid, info);
    return table;
  }
  // macOS and other BSDs. lstart is last because it contains spaces; same format as processStartTime.
  const out = await runCommand('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart=']);
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
 * Environments read at once by processesByEnv. /proc says its files are empty, so readFile reads each into
 * a 64 KiB buffer: reading every process's at once held megabytes of buffers per pass, and 20 jobs ending
 * together made 20 passes (bench/delegation.ts). A few at a time is about as quick: the reads are of the
 * kernel's memory, not of a disk.
 */
const PROC_READS_AT_ONCE = 8;

/**
 * Running processes by the value `name` has in their environment (Linux, from /proc/<pid>/environ;
 * elsewhere the environment of another process cannot be read reliably, and this is empty). A
 * delegate's tools run their commands in sessions of their own: once the delegate is gone, its job
 * marker is the only link left to them. This process is never included. One pass over /proc.
 */
export async function processesByEnv(name: string): Promise<Map<string, Array<{ pid: number; startTime: string | null; ppid?: number }>>> {
  const found = new Map<string, Array<{ pid: number; startTime: string | null; ppid?: number }>>();
  if (process.platform !== 'linux') return found;
  const prefix = `${name}=`;
  const names = await readdir('/proc').catch(() => [] as string[]);
  const pids = names.filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid);
  let next = 0;
  const reader = async (): Promise<void> => {
    while (next < pids.length) {
      const entry = pids[next++] as string;
      const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => null);
      const variable = environ?.split('\0').find((item) => item.startsWith(prefix));
      if (variable === undefined) continue;
      const value = Buffer.from(variable.slice(prefix.length), 'latin1').toString('utf8');
      const pid = Number(entry);
      const info = await readLinuxProc(pid, await bootId());
      // No await between the look-up and the set: the other readers run in between.
      found.set(value, [...(found.get(value) ?? []), { pid, startTime: info?.startTime ?? null, ...(info ? { ppid: info.ppid } : {}) }]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROC_READS_AT_ONCE, pids.length) }, reader));
  return found;
}

/** The processes whose environment holds `name=value` (see processesByEnv). */
export async function processesWithEnv(name: string, value: string): Promise<Array<{ pid: number; startTime: string | null }>> {
  return (await processesByEnv(name)).get(value) ?? [];
}
