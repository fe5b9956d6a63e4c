/**
 * Warm boxes (docs/ISOLATION.md "The box"): a box's root started before its job, so a sandboxed delegate starts as
 * soon as an unsandboxed one. A cold box pays at each start for a new Node loading the sandbox runtime, the runtime
 * finding bubblewrap and socat, and its wait for its socat bridges to listen (up to 100 ms by its own poll): some
 * 300 ms on a 2-core machine. A spare (dist/cli/box-root.js, src-main/cli/box-root.ts) has done all that with a
 * policy that lets nothing through; a job claims it with its own settings file, command and stdio, and from there it
 * is that job's box, exactly as a cold one (its detached root: identity, re-adoption and kill-tree are unchanged).
 *
 * One spare at a time, for one ripgrep (the runtime's, which depends on where the delegate's Claude Code is): the
 * service starts the next once a sandboxed job's Claude Code has started (job-launcher.ts), one with the service
 * when the last job on record ran in a box, and one when a Claude Code session connects (its bridge), so that even
 * the first job a home runs finds one.
 * It lives in a private temp folder made like a job's (job-temp.ts), which becomes the job's TMPDIR: the runtime's
 * bridge sockets are there. A spare whose service goes (its stdin closes) ends, and removes that folder; so does a
 * box when its command ends. Without the script (the service run from its sources, as unit tests do) there are no
 * spares and every box starts cold.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { jobTempRoot, makeJobTempDir } from './job-temp.js';
import { isSameProcess, processStartTime } from './process-table.js';
import type { DetachedProcess, ProcessExit, SpawnDetachedOptions } from './spawn-detached.js';
import { errorMessage } from '../../../common/errors.js';

/** A warm box's temp folder (job-temp.ts): `box-<random>`, beside the jobs' `<job id>-<random>`. */
const BOX_TEMP = 'box';
/** In a box's temp folder: its root's pid and start time, for the sweep after a service restart. */
const ROOT_FILE = '.box-root';
/**
 * When a claim's job gives no sign of having started (its first stream line: box-spares' caller calls refill then),
 * the next spare starts anyway this much later.
 */
const REFILL_FALLBACK_MS = 2_000;
/** How long a spare may take to start its runtime (some 0.4 s on a 2-core machine) before it is given up. */
const READY_TIMEOUT_MS = 15_000;

/**
 * Removes the temp folders of boxes whose root is gone: a box removes its own when it ends, but not when it is killed
 * outright (SIGKILL after a cancel's grace, a crash). Run at the service's start, before any spare; never throws.
 */
export async function sweepBoxTemps(parent: string = tmpdir()): Promise<void> {
  const root = jobTempRoot(parent);
  const names = await readdir(root).catch(() => [] as string[]);
  const uid = process.getuid?.();
  await Promise.all(
    names
      .filter((name) => name.startsWith(`${BOX_TEMP}-`))
      .map(async (name) => {
        const folder = path.join(root, name);
        const stats = await lstat(folder).catch(() => null);
        // Not one a spare is being made in this minute, whose root file is still to come.
        if (!stats?.isDirectory() || (uid !== undefined && stats.uid !== uid) || Date.now() - stats.mtimeMs < 60_000) return;
        // `<pid> <start time>`; a start time may hold spaces (macOS's is a date).
        const [pid, ...startTime] = (await readFile(path.join(folder, ROOT_FILE), 'utf8').catch(() => '')).trim().split(' ');
        if (pid && Number(pid) > 0 && (await isSameProcess(Number(pid), startTime.join(' ') || null))) return;
        await rm(folder, { recursive: true, force: true }).catch(() => undefined);
      }),
  );
}

/** The box's root program beside the running bundle (dist/cli, or dist/electron beside it, unpacked when packaged); null from the sources. */
export function locateBoxRoot(bundleDir: string): string | null {
  const unpacked = bundleDir.replace(/app\.asar([/\\])/, 'app.asar.unpacked$1');
  const candidates = [path.join(bundleDir, 'box-root.js'), path.resolve(unpacked, '..', 'cli', 'box-root.js')];
  return candidates.find((file) => existsSync(file)) ?? null;
}

export interface BoxSparesOptions {
  /** The Node that runs it (box.ts boxRuntime). */
  node: string;
  /** dist/cli/box-root.js; null: no spares. */
  script: string | null;
  /** The environment a spare's is taken from (an allowlist: spareEnv); its claim brings the job's. */
  env: () => NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/** What a claim runs: the runtime's settings file, and the command (with its folder, env and stdio files) it holds. */
export interface BoxClaim extends SpawnDetachedOptions {
  settingsFile: string;
}

interface Spare {
  key: string;
  tmp: string;
  child: ChildProcess;
  pid: number;
  startTime: string | null;
  exited: Promise<ProcessExit>;
  /** Its report lines, in order (`ready`, `started <pid>`, `failed <why>`). */
  next: () => Promise<string | null>;
  gone: boolean;
}

/** A spare taken for one job: its temp folder is the job's TMPDIR; claim runs the job in it. */
export interface WarmBox {
  tmp: string;
  claim(claim: BoxClaim): Promise<DetachedProcess>;
  /** Ends it unclaimed (its job was cancelled or refused before it ran). */
  discard(): void;
}

export class BoxSpares {
  private readonly options: BoxSparesOptions;
  private spare: Promise<Spare | null> | null = null;
  /** A job took the spare (or found none) and has not started yet: its start brings the next (refill), not prime. */
  private refillOwed = false;
  private stopped = false;

  constructor(options: BoxSparesOptions) {
    this.options = options;
  }

  get enabled(): boolean {
    return this.options.script !== null && !this.stopped;
  }

  /** Whether prime would start a spare now. */
  get wanted(): boolean {
    return this.enabled && this.spare === null && !this.refillOwed;
  }

  /**
   * A ready-to-claim spare for this ripgrep, if one is up (null: start the box cold). The next one is the caller's to
   * start (refill) once the job's Claude Code has started: a spare started beside it, on the same cores, made its start
   * 80–110 ms slower (`npm run bench`); at the latest it starts 2 s after this.
   */
  async take(ripgrep: { command: string; argv0?: string }): Promise<WarmBox | null> {
    if (!this.enabled) return null;
    const key = JSON.stringify(ripgrep);
    const pending = this.spare;
    this.spare = null;
    this.refillOwed = true;
    const spare = pending === null ? null : await pending;
    setTimeout(() => this.refill(ripgrep), REFILL_FALLBACK_MS).unref();
    if (spare === null) return null;
    if (spare.key !== key || spare.gone) {
      end(spare);
      return null;
    }
    return { tmp: spare.tmp, claim: (claim) => this.claim(spare, claim), discard: () => end(spare) };
  }

  /** Starts a spare for this ripgrep unless one is up or starting. */
  refill(ripgrep: { command: string; argv0?: string }): void {
    this.refillOwed = false;
    if (!this.enabled || this.spare !== null) return;
    const starting = this.start(JSON.stringify(ripgrep)).catch((error: unknown) => {
      this.options.log(`jobs: no warm box: ${errorMessage(error)}`);
      return null;
    });
    this.spare = starting;
    // One that failed to start, or ended before a job took it, is none: the next prime or refill starts another.
    const forget = () => {
      if (this.spare === starting) this.spare = null;
    };
    void starting.then((spare) => (spare === null ? forget() : spare.exited.then(forget)));
  }

  /**
   * Starts a spare for this ripgrep before any job asks (a Claude Code session connected), unless one is up or
   * starting, or a job that took the last is still starting: one started beside it would slow that start (take).
   */
  prime(ripgrep: { command: string; argv0?: string }): void {
    if (this.wanted) this.refill(ripgrep);
  }

  /** Ends the spare (the service is stopping); boxes already claimed are their jobs'. */
  async stop(): Promise<void> {
    this.stopped = true;
    const pending = this.spare;
    this.spare = null;
    const spare = pending === null ? null : await pending;
    if (spare !== null) end(spare);
  }

  private async start(key: string): Promise<Spare> {
    const script = this.options.script;
    if (script === null) throw new Error('no box-root script');
    const tmp = await makeJobTempDir(BOX_TEMP);
    let child: ChildProcess;
    try {
      child = spawn(this.options.node, [script, '--warm', key], {
        cwd: tmp,
        env: { ...spareEnv(this.options.env()), TMPDIR: tmp },
        // Its own session and group, as a cold box's root (spawn-detached.ts).
        detached: true,
        stdio: ['pipe', 'pipe', 'ignore'],
        windowsHide: true,
      });
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      throw error;
    }
    const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    child.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    // Neither the spare nor its pipes keep the service's loop alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
    const lines: string[] = [];
    const waiting: ((line: string | null) => void)[] = [];
    let closed = false;
    if (child.stdout) {
      const reader = createInterface({ input: child.stdout, crlfDelay: Infinity });
      reader.on('line', (line) => {
        const wake = waiting.shift();
        if (wake) wake(line);
        else lines.push(line);
      });
      reader.on('close', () => {
        closed = true;
        for (const wake of waiting.splice(0)) wake(null);
      });
    }
    const next = (): Promise<string | null> => {
      const line = lines.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (closed) return Promise.resolve(null);
      return new Promise((resolve) => waiting.push(resolve));
    };
    const pid = child.pid;
    if (pid === undefined) {
      await rm(tmp, { recursive: true, force: true });
      throw new Error('the system gave the warm box no process id');
    }
    const spare: Spare = { key, tmp, child, pid, startTime: await processStartTime(pid), exited, next, gone: false };
    void exited.then(() => {
      spare.gone = true;
    });
    await writeFile(path.join(tmp, ROOT_FILE), `${pid} ${spare.startTime ?? ''}\n`, { mode: 0o600 }).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const ready = await Promise.race([
      next(),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`not ready after ${READY_TIMEOUT_MS / 1000} s`), READY_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (ready !== 'ready') {
      end(spare);
      throw new Error(ready === null ? 'it ended before it was ready' : ready);
    }
    return spare;
  }

  private async claim(spare: Spare, claim: BoxClaim): Promise<DetachedProcess> {
    const { settingsFile, command, args, cwd, env, stdinFile, stdoutFile, stderrFile } = claim;
    const stdin = spare.child.stdin;
    if (spare.gone || !stdin) throw new Error('the warm box ended before its job came');
    stdin.end(`${JSON.stringify({ settingsFile, argv: [command, ...args], cwd, env, stdinFile, stdoutFile, stderrFile })}\n`);
    const said = await spare.next();
    if (said?.startsWith('started ')) return { pid: spare.pid, startTime: spare.startTime, exited: spare.exited };
    // Nothing of the job runs in it: the box says so before it spawns, or it died; its group goes whatever it left.
    end(spare);
    throw new Error(said?.startsWith('failed ') ? said.slice('failed '.length) : 'the warm box ended without starting its job');
  }
}

/**
 * A spare's environment before its claim, from an allowlist as a delegate's is (child-env.ts): what the runtime reads
 * as it starts — where its programs are, the home it protects, and the user's proxy, which its own proxy forwards the
 * allowed domains through and takes only then. Never the service's whole environment, which may hold a key
 * (OPENROUTER_API_KEY) and which other processes of the user could read in the spare's; its claim brings the job's.
 */
const SPARE_ENV = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'HTTP_PROXY',
  'http_proxy',
  'HTTPS_PROXY',
  'https_proxy',
  'NO_PROXY',
  'no_proxy',
  'ALL_PROXY',
  'all_proxy',
];

function spareEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(SPARE_ENV.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])));
}

/** Ends an unclaimed (or failed) spare and everything in its group; it removes its own folder, and so does this. */
function end(spare: Spare): void {
  spare.gone = true;
  try {
    process.kill(-spare.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
  void spare.exited.then(() => rm(spare.tmp, { recursive: true, force: true }).catch(() => undefined));
}
