/**
 * Ending a job's process and everything it started (docs/ARCHITECTURE.md §4), including grandchildren
 * that left the group (`setsid`, `nohup … &`), and never a process that is not ours: every signal goes
 * to a pid whose start time still matches (process-table.ts), never to -pid for 0, 1 or this process,
 * and what survives SIGTERM is frozen with SIGSTOP before SIGKILL so it cannot fork away meanwhile.
 */
import { isAlive, isPlausiblePid, processStartTime, runCommand, scanProcesses } from './process-table.js';
import type { ProcInfo } from './process-table.js';

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
function collectTree(rootPid: number, rootStartTime: string | null, table: Map<number, ProcInfo>, known: ReadonlyMap<number, string | null>): ProcInfo[] {
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
 * The processes of one root's tree seen so far (pid → start time), kept across scans: one that joined the tree
 * stays a member while its pid means the same process, even once its link to the root is gone.
 */
class TreeMembers {
  private readonly known = new Map<number, string | null>();

  constructor(
    private readonly rootPid: number,
    private readonly rootStartTime: string | null,
  ) {}

  /** How many processes have been members: every one that was running when first seen. */
  get size(): number {
    return this.known.size;
  }

  /** Adds the tree's processes in `table` that were not members yet, and returns their pids. */
  absorb(table: Map<number, ProcInfo>): number[] {
    const added: number[] = [];
    for (const info of collectTree(this.rootPid, this.rootStartTime, table, this.known)) {
      if (!this.known.has(info.pid)) {
        this.known.set(info.pid, info.startTime);
        added.push(info.pid);
      }
    }
    return added;
  }

  /** The members still running in `table`: the same process (start time), and not a zombie. */
  stillAlive(table: Map<number, ProcInfo>): number[] {
    return [...this.known]
      .filter(([member, startTime]) => {
        const entry = table.get(member);
        return entry !== undefined && !entry.zombie && entry.startTime === startTime;
      })
      .map(([member]) => member);
  }

  /**
   * Signals the root's group, while its pid still means the root: the root is running, or, gone, some process in
   * `table` is still in its group, which keeps the id from being given to another (an empty group's id is free).
   */
  signalGroup(table: Map<number, ProcInfo>, signal: NodeJS.Signals): void {
    if (!rootStillOurs(this.rootPid, this.rootStartTime, table)) return;
    const reserved = table.has(this.rootPid) || [...table.values()].some((info) => info.pgrp === this.rootPid);
    if (reserved) send(-this.rootPid, signal);
  }
}

/** The latest process table, and the members of the tree still running in it. */
interface TreeScan {
  table: Map<number, ProcInfo>;
  alive: number[];
}

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
  const members = new TreeMembers(pid, rootEntry?.startTime ?? expected);

  const terminated = await terminateTree(members, first, graceMs);
  let alive = terminated.alive;
  if (alive.length > 0) {
    log(`Process tree ${pid}: ${alive.length} process(es) still running ${graceMs} ms after SIGTERM; sending SIGKILL.`);
    const settleEnds = Date.now() + KILL_SETTLE_MS;
    const frozen = await freezeTree(members, terminated, settleEnds);
    alive = await killFrozenTree(members, frozen, settleEnds);
    if (alive.length > 0) log(`Process tree ${pid}: still running after SIGKILL: ${alive.join(', ')}.`);
  }
  return { killed: members.size - alive.length, survivors: alive };
}

/** Phase 1: SIGTERM, and wait up to `graceMs` for the tree to go, signalling newcomers as they appear. */
async function terminateTree(members: TreeMembers, first: Map<number, ProcInfo>, graceMs: number): Promise<TreeScan> {
  for (const member of members.absorb(first)) send(member, 'SIGTERM');
  members.signalGroup(first, 'SIGTERM');
  let table = first;
  let alive = members.stillAlive(table);
  const graceEnds = Date.now() + graceMs;
  let delay = 10;
  while (alive.length > 0 && Date.now() < graceEnds) {
    await sleep(Math.min(delay, Math.max(0, graceEnds - Date.now())));
    delay = Math.min(delay * 2, 200);
    table = await scanProcesses();
    for (const member of members.absorb(table)) send(member, 'SIGTERM');
    alive = members.stillAlive(table);
  }
  return { table, alive };
}

/**
 * Phase 2: freeze what is left with SIGSTOP, which cannot be caught: a stopped process can neither fork nor leave
 * the session. Takes the tree again until every member is stopped and nothing new joined (or `settleEnds`), so that
 * killing a parent cannot orphan a child it forked (or moved to a new session) an instant before.
 */
async function freezeTree(members: TreeMembers, scan: TreeScan, settleEnds: number): Promise<TreeScan> {
  let { table, alive } = scan;
  members.signalGroup(table, 'SIGSTOP');
  for (const member of alive) send(member, 'SIGSTOP');
  let delay = 1;
  while (Date.now() < settleEnds) {
    await sleep(delay);
    delay = Math.min(delay * 2, 50);
    table = await scanProcesses();
    const added = members.absorb(table);
    for (const member of added) send(member, 'SIGSTOP');
    alive = members.stillAlive(table);
    if (added.length === 0 && alive.every((member) => table.get(member)?.stopped)) break;
  }
  return { table, alive };
}

/**
 * Phase 3: SIGKILL all of the frozen tree, and scan again for anything that got away meanwhile, until none is left
 * or `settleEnds`. Returns the members still running.
 */
async function killFrozenTree(members: TreeMembers, scan: TreeScan, settleEnds: number): Promise<number[]> {
  let { table, alive } = scan;
  let delay = 10;
  for (;;) {
    members.signalGroup(table, 'SIGKILL');
    for (const member of alive) send(member, 'SIGKILL');
    await sleep(delay);
    delay = Math.min(delay * 2, 200);
    table = await scanProcesses();
    for (const member of members.absorb(table)) send(member, 'SIGKILL');
    alive = members.stillAlive(table);
    if (alive.length === 0 || Date.now() >= settleEnds) break;
  }
  return alive;
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
  const out = await runCommand('taskkill', ['/T', '/F', '/PID', String(pid)]);
  const survivors = isAlive(pid) ? [pid] : [];
  return { killed: out === null ? 0 : 1, survivors };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
