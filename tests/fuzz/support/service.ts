/**
 * The real headless service for the fuzz tests, run the way users run it (`openrouter-delegate serve`)
 * in a throwaway home, and what /proc says about it: memory and child processes.
 *
 * The service gets no OpenRouter key (no OPENROUTER_API_KEY, and a fresh home has no keychain entry),
 * so `jobs.start` refuses with `no_key` before it spawns anything; OPENROUTER_DELEGATE_CLAUDE points at
 * a file that does not exist, so even a start that got past the key would find no `claude` to run.
 * HOME is an empty folder of the test home, so nothing the service looks up reaches the user's own files.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { resolveLocations } from '../../../src-main/platform/locations.js';
import type { Locations } from '../../../src-main/platform/locations.js';
import { readToken } from '../../../src-main/ipc/runtime-dir.js';
import { CLI, runCli, testEnv } from '../../support/built.js';

export interface FuzzService {
  pid: number;
  env: NodeJS.ProcessEnv;
  locations: Locations;
  token: string;
  /** What the service wrote on stderr (its log), the last megabyte of it. */
  log(): string;
  exited(): boolean;
  stop(): Promise<void>;
}

const LOG_KEEP = 1024 * 1024;

/**
 * The environment for a fuzz home: the fake OpenRouter, no key, a `claude` that does not exist.
 * FUZZ_SERVICE_CLI may name another build of the CLI (e.g. a deliberately broken copy, to check
 * that the properties can fail); it is run with tsx when it ends in .ts.
 */
export async function fuzzEnv(home: string, baseUrl: string): Promise<NodeJS.ProcessEnv> {
  const user = path.join(home, 'user');
  await mkdir(user, { recursive: true });
  const env = testEnv(home, baseUrl, { HOME: user, OPENROUTER_DELEGATE_CLAUDE: path.join(home, 'no-such-claude') });
  delete env.OPENROUTER_API_KEY;
  return env;
}

function serviceCommand(): string[] {
  const override = process.env.FUZZ_SERVICE_CLI;
  if (!override) return [CLI];
  return override.endsWith('.ts') ? ['--import', 'tsx', override] : [override];
}

/** Starts `openrouter-delegate serve` and waits for its "ready" line. */
export async function startFuzzService(env: NodeJS.ProcessEnv): Promise<FuzzService> {
  const child: ChildProcess = spawn(process.execPath, [...serviceCommand(), 'serve', '--notify-ready'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString('utf8');
    if (log.length > 2 * LOG_KEEP) log = log.slice(-LOG_KEEP);
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) => child.once('exit', (code) => ((exitCode = code), resolve())));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (/^ready$/m.test(out)) {
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    void exited.then(() => reject(new Error(`The service exited (code ${String(exitCode)}) before it was ready:\n${log}`)));
  });
  const locations = resolveLocations({ OPENROUTER_DELEGATE_HOME: env.OPENROUTER_DELEGATE_HOME });
  return {
    pid: child.pid as number,
    env,
    locations,
    token: await readToken(locations.tokenFile),
    log: () => log,
    exited: () => exitCode !== undefined,
    async stop() {
      if (exitCode !== undefined) return;
      await runCli(['stop', '--kill-jobs'], env);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface ProcMemory {
  /** Resident set now, and its peak since the process started (VmHWM), in MiB. */
  rssMiB: number;
  peakRssMiB: number;
}

export async function procMemory(pid: number): Promise<ProcMemory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, peakRssMiB: kib('VmHWM') / 1024 };
}

/**
 * Resets the peak (VmHWM) to the current RSS (Linux: `5` into /proc/<pid>/clear_refs), so a phase's
 * peak is its own. Returns the memory right after.
 */
export async function resetPeak(pid: number): Promise<ProcMemory> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
  return procMemory(pid);
}

/** Every live process below `pid`, with its command line. */
export async function descendants(pid: number): Promise<Array<{ pid: number; cmdline: string }>> {
  const parents = new Map<number, number>();
  const commands = new Map<number, string>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const close = stat.lastIndexOf(')');
    if (close < 0) continue;
    const fields = stat.slice(close + 2).split(' ');
    if (fields[0] === 'Z') continue;
    parents.set(Number(entry), Number(fields[1]));
    commands.set(Number(entry), (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).replace(/\0/g, ' ').trim());
  }
  const found: Array<{ pid: number; cmdline: string }> = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push({ pid: child, cmdline: commands.get(child) ?? '' });
        queue.push(child);
      }
    }
  }
  return found;
}

/** Job folders in the home: none may appear when no job may start. */
export async function jobFolders(locations: Locations): Promise<string[]> {
  return readdir(locations.jobsDir).catch(() => []);
}
