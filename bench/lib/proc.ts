/**
 * What Linux's /proc says about a process: its memory, its open file descriptors (sockets named by
 * what they connect), and the processes on the machine. For the soak's leak checks.
 */
import { readFile, readdir, readlink } from 'node:fs/promises';

export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

export interface OpenFd {
  fd: number;
  /** What readlink says, e.g. `socket:[123]`, `/dev/null`, `anon_inode:[eventpoll]`. */
  target: string;
  /** For people: a socket's kind and endpoints, a pipe, a file path. */
  label: string;
  /** For comparing two listings: the label without the parts that change on every connection. */
  key: string;
}

const TCP_STATES: Record<string, string> = { '01': 'ESTABLISHED', '06': 'TIME_WAIT', '08': 'CLOSE_WAIT', '0A': 'LISTEN' };

function tcpAddress(hex: string): string {
  const [ip = '', port = ''] = hex.split(':');
  const host = ip.length === 8 ? [3, 2, 1, 0].map((i) => Number.parseInt(ip.slice(i * 2, i * 2 + 2), 16)).join('.') : `[${ip}]`;
  return `${host}:${Number.parseInt(port, 16)}`;
}

/** Socket inode → description, from the process's own view of its network namespace. */
async function socketTable(pid: number): Promise<Map<string, { label: string; key: string }>> {
  const table = new Map<string, { label: string; key: string }>();
  for (const proto of ['tcp', 'tcp6']) {
    const text = await readFile(`/proc/${pid}/net/${proto}`, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const [local, remote, state, inode] = [f[1] ?? '', f[2] ?? '', f[3] ?? '', f[9] ?? ''];
      const stateName = TCP_STATES[state] ?? `state ${state}`;
      table.set(inode, { label: `${proto} ${tcpAddress(local)} → ${tcpAddress(remote)} ${stateName}`, key: `${proto} → ${tcpAddress(remote)} ${stateName}` });
    }
  }
  const unix = await readFile(`/proc/${pid}/net/unix`, 'utf8').catch(() => '');
  for (const line of unix.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 7) continue;
    const [flags, inode, socketPath] = [f[3] ?? '', f[6] ?? '', f[7] ?? ''];
    // Flags 00010000 = __SO_ACCEPTCON: a listening socket.
    const kind = flags === '00010000' ? 'unix listening' : 'unix';
    const where = socketPath || '(connection)';
    table.set(inode, { label: `${kind} ${where}`, key: `${kind} ${where}` });
  }
  return table;
}

export async function openFds(pid: number): Promise<OpenFd[]> {
  const names = await readdir(`/proc/${pid}/fd`);
  const sockets = await socketTable(pid);
  const fds: OpenFd[] = [];
  for (const name of names) {
    const target = await readlink(`/proc/${pid}/fd/${name}`).catch(() => null);
    if (target === null) continue;
    let label = target;
    let key = target;
    const socket = /^socket:\[(\d+)\]$/.exec(target);
    if (socket) {
      const known = sockets.get(socket[1] ?? '');
      label = known ? `${known.label} (${target})` : `socket ${target}`;
      key = known?.key ?? 'socket (unknown kind)';
    } else if (target.startsWith('pipe:')) {
      key = 'pipe';
    }
    fds.push({ fd: Number(name), target, label, key });
  }
  return fds.sort((a, b) => a.fd - b.fd);
}

/** What `after` has more of than `before`, and what it has fewer of, compared by key. */
export function diffFds(before: OpenFd[], after: OpenFd[]): { added: OpenFd[]; removed: OpenFd[] } {
  const take = (from: OpenFd[], minus: OpenFd[]): OpenFd[] => {
    const left = new Map<string, number>();
    for (const fd of minus) left.set(fd.key, (left.get(fd.key) ?? 0) + 1);
    return from.filter((fd) => {
      const n = left.get(fd.key) ?? 0;
      if (n > 0) {
        left.set(fd.key, n - 1);
        return false;
      }
      return true;
    });
  };
  return { added: take(after, before), removed: take(before, after) };
}

export interface ProcEntry {
  pid: number;
  ppid: number;
  session: number;
  state: string;
  argv: string[];
}

/** Every process on the machine (those that vanish while we look are skipped). */
export async function processTable(): Promise<Map<number, ProcEntry>> {
  const table = new Map<number, ProcEntry>();
  const names = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  await Promise.all(
    names.map(async (name) => {
      const [stat, cmdline] = await Promise.all([
        readFile(`/proc/${name}/stat`, 'utf8').catch(() => ''),
        readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => ''),
      ]);
      const close = stat.lastIndexOf(')');
      if (close < 0) return;
      const f = stat.slice(close + 2).split(' ');
      table.set(Number(name), {
        pid: Number(name),
        state: f[0] ?? '?',
        ppid: Number(f[1]),
        session: Number(f[3]),
        argv: cmdline.split('\0').filter((a) => a !== ''),
      });
    }),
  );
  return table;
}

/** `root` and everything below it by parent links, plus its session (which keeps orphans adopted by init). */
export function treeOf(root: number, table: Map<number, ProcEntry>): ProcEntry[] {
  const members = new Map<number, ProcEntry>();
  for (const entry of table.values()) if (entry.pid === root || entry.session === root) members.set(entry.pid, entry);
  let grew = true;
  while (grew) {
    grew = false;
    for (const entry of table.values()) {
      if (!members.has(entry.pid) && members.has(entry.ppid)) {
        members.set(entry.pid, entry);
        grew = true;
      }
    }
  }
  return [...members.values()];
}

/** Live (non-zombie) processes whose environment mentions `needle`, e.g. a private home folder. */
export async function processesWithEnv(needle: string, table: Map<number, ProcEntry>): Promise<ProcEntry[]> {
  const found: ProcEntry[] = [];
  await Promise.all(
    [...table.values()].map(async (entry) => {
      if (entry.state === 'Z') return;
      const environ = await readFile(`/proc/${entry.pid}/environ`, 'utf8').catch(() => '');
      if (environ.includes(needle)) found.push(entry);
    }),
  );
  return found.sort((a, b) => a.pid - b.pid);
}
