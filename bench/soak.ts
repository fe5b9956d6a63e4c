/**
 * `npm run bench:soak` (not in CI): many delegated jobs through the real `claude` CLI against the fake
 * OpenRouter, several at a time, with cancels sprinkled in; then what a service that runs for weeks
 * must not accumulate. Checked and printed:
 *  - every job's final state (cancelled ones must end `cancelled`, the others `succeeded` with their answer);
 *  - no process left behind: nothing whose environment points into this soak's home (claude, its Bash,
 *    a `sleep`), no child of the service, no zombie;
 *  - the service's open file descriptors at the start, after warm-up and at the end, and what differs;
 *  - its timers and loop-keeping handles (a probe loaded into it, bench/lib/service-probe.mjs, counts them),
 *    and that it exits promptly on SIGTERM once idle (nothing left holding its event loop);
 *  - its RSS (after a full GC, and after SOAK_IDLE_SECONDS idle) at the start, after warm-up, and at the end: flat.
 * Exits non-zero when anything leaked or a job ended in a state it should not have.
 *
 * SOAK_JOBS (default 200), SOAK_PARALLEL (8; also the service's concurrency setting), SOAK_CANCEL_EVERY
 * (10: every 10th job is cancelled while its Bash tool runs `sh -c "sleep 30"`), SOAK_RSS_SLACK_MB (20), SOAK_IDLE_SECONDS (40);
 * SOAK_HEAP_SNAPSHOT_DIR=<folder> also writes a heap snapshot of the service at start, warm-up and end.
 * `SOAK_JOBS=16 npm run bench:soak` is a quick smoke test.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isActive } from '../src-main/contract/index.js';
import type { JobRecord } from '../src-main/contract/index.js';
import { IpcClient } from '../src-main/ipc/client.js';
import { resolveLocations } from '../src-main/platform/locations.js';
import type { Locations } from '../src-main/platform/locations.js';
import { CLI, assertBuilt } from '../tests/support/built.js';
import { KEY, delegationEnv, makeDelegationHome } from '../tests/support/delegation.js';
import { CLAUDE_CLI, ScriptedModel } from '../tests/support/fake-anthropic.js';
import { FakeOpenRouter } from '../tests/support/fake-openrouter.js';
import { machineHeader } from './lib/machine.js';
import { diffFds, openFds, processTable, processesWithEnv, rssBytes, treeOf } from './lib/proc.js';
import type { ProcEntry } from './lib/proc.js';
import type { OpenFd } from './lib/proc.js';
import { median, percentile } from './lib/stats.js';

const PROBE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib', 'service-probe.mjs');
const positive = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number (got "${process.env[name]}").`);
  return value;
};
const JOBS = positive('SOAK_JOBS', 200);
const PARALLEL = Math.min(32, positive('SOAK_PARALLEL', 8));
const CANCEL_EVERY = positive('SOAK_CANCEL_EVERY', 10);
const RSS_SLACK_MB = positive('SOAK_RSS_SLACK_MB', 20);
/**
 * How long the service sits idle before the warm-up and end figures are read. Under eight streams at once V8 grows its
 * young generation towards 16 MB a semi-space, and no forced GC gives that back; V8's memory reducer does, after about
 * 30 s of little allocation (docs/PERFORMANCE.md "Soak"). The figures are the service as it sits between jobs.
 */
const IDLE_SECONDS = Number(process.env.SOAK_IDLE_SECONDS ?? 40);
/** Jobs run before the warm-up snapshot: caches filled, code paths compiled, pools grown. */
const WARMUP = Math.min(JOBS, Math.max(2 * PARALLEL, Math.round(JOBS / 10)));
const EXIT_LIMIT_MS = 5000;
const HOLD_SECONDS = 30;

type Kind = 'text' | 'tool' | 'cancel';
const EXPECTED: Record<Kind, { state: JobRecord['state']; result: string | null }> = {
  text: { state: 'succeeded', result: 'soak: answered in words' },
  tool: { state: 'succeeded', result: 'soak: answered after running Bash' },
  cancel: { state: 'cancelled', result: null },
};

function kindOf(index: number): Kind {
  if (index % CANCEL_EVERY === CANCEL_EVERY - 1) return 'cancel';
  return index % 2 === 0 ? 'tool' : 'text';
}

interface Outcome {
  index: number;
  kind: Kind;
  jobId: string | null;
  state: string;
  wallMs: number;
  /** How long jobs.cancel took to answer (the tree is gone when it does). */
  cancelMs: number | null;
  problems: string[];
}

interface Snapshot {
  rss: number;
  heapUsed: number;
  /** The V8 heap's committed size (its young generation included), which RSS counts whatever is in use. */
  heapTotal: number;
  /** Memory outside the V8 heap that V8 knows of: Buffers and other ArrayBuffers (part of it). */
  external: number;
  arrayBuffers: number;
  fds: OpenFd[];
  resources: Record<string, number>;
  timers: Record<string, number>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const log = (line: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return true;
}

class Soak {
  readonly fake = new FakeOpenRouter();
  readonly model = new ScriptedModel(this.fake, { apiKey: KEY });
  home = '';
  project = '';
  env: NodeJS.ProcessEnv = {};
  locations!: Locations;
  service!: ReturnType<typeof spawn>;
  servicePid = 0;
  control!: IpcClient;
  serviceLog: string[] = [];
  peakRss = 0;
  private cleanupHome: () => Promise<void> = async () => undefined;
  private probeFile = '';
  private readonly outcomes: Outcome[] = [];

  async start(): Promise<void> {
    assertBuilt();
    // Words only; words after Bash; Bash that would hold for half a minute (cancelled long before).
    this.model.script('soak-text', [{ text: EXPECTED.text.result ?? '' }]);
    this.model.script('soak-tool', [
      { toolUse: { name: 'Bash', input: { command: 'echo soak-$((6*7))', description: 'Echo a number' } } },
      { text: EXPECTED.tool.result ?? '' },
    ]);
    // Claude Code refuses a bare `sleep N`; a shell around it runs, and makes a tree for cancel to end.
    this.model.script('soak-cancel', [
      { toolUse: { name: 'Bash', input: { command: `sh -c "sleep ${HOLD_SECONDS}"`, description: 'Hold' } } },
      { text: 'soak: never cancelled' },
    ]);
    this.fake.addKey(KEY, { limit: 100_000, limitRemaining: 100_000 });
    await this.fake.start();
    const made = await makeDelegationHome('ord-soak-', { concurrency: PARALLEL, budgets: { perJobUsd: 1, perDayUsd: 100_000, reserveUsd: 0 } });
    this.home = made.home;
    this.project = made.project;
    this.cleanupHome = made.cleanup;
    this.probeFile = path.join(made.home, 'probe.json');
    const heapSnapshots = process.env.SOAK_HEAP_SNAPSHOT_DIR ? { SOAK_HEAP_SNAPSHOT_DIR: path.resolve(process.env.SOAK_HEAP_SNAPSHOT_DIR) } : {};
    this.env = delegationEnv(made.home, this.fake.baseUrl, made.tmp, { SOAK_PROBE_FILE: this.probeFile, ...heapSnapshots });
    this.locations = resolveLocations(this.env);
    this.service = spawn(process.execPath, ['--expose-gc', '--import', pathToFileURL(PROBE).href, CLI, 'serve', '--notify-ready'], {
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.service.stderr?.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) if (line.trim()) this.serviceLog.push(line);
      if (this.serviceLog.length > 5000) this.serviceLog.splice(0, this.serviceLog.length - 5000);
    });
    await new Promise<void>((resolve, reject) => {
      this.service.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      this.service.once('exit', (code) => reject(new Error(`The service exited with ${code} before it was ready:\n${this.serviceLog.join('\n')}`)));
    });
    this.servicePid = this.service.pid ?? 0;
    this.control = await IpcClient.connect({ locations: this.locations, clientName: 'soak/control' });
  }

  /** The probe's figures (after a full GC in the service), its RSS and its descriptors. */
  async snapshot(): Promise<Snapshot> {
    await rm(this.probeFile, { force: true });
    process.kill(this.servicePid, 'SIGUSR2');
    let text: string | null = null;
    for (let waited = 0; text === null; waited += 50) {
      if (waited > 10_000) throw new Error('The service probe did not answer SIGUSR2 within 10 s (was the service started with bench/lib/service-probe.mjs?).');
      await sleep(50);
      text = await readFile(this.probeFile, 'utf8').catch(() => null);
    }
    const probe = JSON.parse(text) as { memory: NodeJS.MemoryUsage; resources: Record<string, number>; timers: Record<string, number> };
    return {
      rss: await rssBytes(this.servicePid),
      heapUsed: probe.memory.heapUsed,
      heapTotal: probe.memory.heapTotal,
      external: probe.memory.external,
      arrayBuffers: probe.memory.arrayBuffers,
      fds: await openFds(this.servicePid),
      resources: probe.resources,
      timers: probe.timers,
    };
  }

  /** Runs jobs [from, to) with PARALLEL workers; each job gets its own connection, as bridges do. */
  async run(from: number, to: number): Promise<void> {
    let next = from;
    const sampler = setInterval(
      () =>
        void rssBytes(this.servicePid).then(
          (rss) => (this.peakRss = Math.max(this.peakRss, rss)),
          () => undefined,
        ),
      1000,
    );
    const worker = async () => {
      while (next < to) {
        const outcome = await this.job(next++);
        this.outcomes.push(outcome);
        const done = this.outcomes.length;
        if (outcome.problems.length > 0) log(`job ${outcome.index} (${outcome.kind}) ${outcome.state}: ${outcome.problems.join('; ')}`);
        if (done % 10 === 0 || done === JOBS) log(`${done}/${JOBS} jobs done — ${this.countLine()}; service RSS ${mb(await rssBytes(this.servicePid))}`);
      }
    };
    try {
      await Promise.all(Array.from({ length: PARALLEL }, worker));
    } finally {
      clearInterval(sampler);
    }
  }

  private async job(index: number): Promise<Outcome> {
    const kind = kindOf(index);
    const outcome: Outcome = { index, kind, jobId: null, state: 'not started', wallMs: 0, cancelMs: null, problems: [] };
    const t0 = performance.now();
    let client: IpcClient | null = null;
    try {
      client = await IpcClient.connect({ locations: this.locations, clientName: `soak/job-${index}` });
      const { job } = await client.call('jobs.start', {
        prompt: `${ScriptedModel.marker(`soak-${kind}`)} Soak job ${index}.`,
        ...(kind === 'text' ? {} : { allowedTools: ['Bash'] }),
        caller: { cwd: this.project },
      });
      outcome.jobId = job.id;
      let final: JobRecord;
      if (kind === 'cancel') final = await this.cancelWhileSleeping(client, job.id, outcome);
      else final = await this.collect(client, job.id, kind, outcome);
      outcome.state = final.state;
      if (final.state !== EXPECTED[kind].state) outcome.problems.push(`expected ${EXPECTED[kind].state}; ${final.endReason ?? 'no reason given'}`);
    } catch (error) {
      outcome.state = 'error';
      outcome.problems.push(error instanceof Error ? error.message : String(error));
    } finally {
      client?.close();
      outcome.wallMs = performance.now() - t0;
    }
    return outcome;
  }

  private async collect(client: IpcClient, jobId: string, kind: Kind, outcome: Outcome): Promise<JobRecord> {
    for (;;) {
      const result = await client.call('jobs.result', { jobId, waitSeconds: 120 });
      if (isActive(result.job.state)) continue;
      if (result.job.state === 'succeeded' && result.resultText !== EXPECTED[kind].result)
        outcome.problems.push(`answer was ${JSON.stringify(result.resultText)}`);
      if (result.job.state === 'succeeded' && result.job.toolCalls !== (kind === 'tool' ? 1 : 0)) outcome.problems.push(`${result.job.toolCalls} tool calls`);
      return result.job;
    }
  }

  /** Waits for the delegate's `sleep`, cancels, and checks that claude and the sleep are gone when cancel answers. */
  private async cancelWhileSleeping(client: IpcClient, jobId: string, outcome: Outcome): Promise<JobRecord> {
    let pid: number | null = null;
    let sleepers: number[] = [];
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      const { job } = await client.call('jobs.status', { jobId });
      if (!isActive(job.state)) {
        outcome.problems.push('ended before it could be cancelled');
        return job;
      }
      pid = job.pid;
      if (pid !== null) {
        const table = await processTable();
        sleepers = treeOf(pid, table)
          .filter((p) => p.state !== 'Z' && p.argv[0] === 'sleep' && p.argv[1] === String(HOLD_SECONDS))
          .map((p) => p.pid);
        if (sleepers.length > 0) break;
      }
      await sleep(100);
    }
    if (sleepers.length === 0) outcome.problems.push('its Bash `sleep` never appeared; cancelled anyway');
    const t0 = performance.now();
    const { job } = await client.call('jobs.cancel', { jobId });
    outcome.cancelMs = performance.now() - t0;
    // jobs.cancel answers once the tree is gone: nothing of it may be alive now.
    const table = await processTable();
    const survivors = [pid ?? 0, ...sleepers].filter((p) => p > 0 && table.get(p) !== undefined && table.get(p)?.state !== 'Z' && alive(p));
    if (survivors.length > 0) outcome.problems.push(`processes alive after cancel answered: ${survivors.join(', ')}`);
    return job;
  }

  /** Waits until no job is active or waiting for its billed cost, then until the service's descriptors stop changing. */
  async settle(): Promise<void> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const list = await this.control.call('jobs.list', { limit: 500 });
      const busy = list.conversations.flatMap((c) => c.jobs).filter((j) => isActive(j.state) || j.billing === 'pending').length;
      if (busy === 0) break;
      if (Date.now() > deadline) throw new Error(`${busy} job(s) still running or waiting for billing after 2 minutes.`);
      await sleep(500);
    }
    // The gateway's keep-alive sockets to the fake OpenRouter close once idle: a node:http server drops one after 5 s
    // (its keepAliveTimeout).
    await sleep(6000);
    let last = '';
    for (let stable = 0, tries = 0; stable < 4 && tries < 40; tries++) {
      const now = (await openFds(this.servicePid))
        .map((fd) => fd.key)
        .sort()
        .join('\n');
      stable = now === last ? stable + 1 : 0;
      last = now;
      await sleep(500);
    }
  }

  countLine(): string {
    const counts = new Map<string, number>();
    for (const o of this.outcomes) counts.set(o.state, (counts.get(o.state) ?? 0) + 1);
    return [...counts].map(([state, n]) => `${state} ${n}`).join(', ');
  }

  get results(): Outcome[] {
    return [...this.outcomes].sort((a, b) => a.index - b.index);
  }

  /** Processes this soak's jobs left behind: anything with our home in its environment, and any child of the service. */
  /**
   * What is left of the jobs: every process carrying the soak's home in its environment, or a child of the service —
   * but the warm box the service keeps once delegates run (core/jobs/process/box-spares.ts), which is reported apart:
   * at most one, a child of the service running box-root.js with no job in it (only its socat bridges beneath).
   */
  async leftovers(): Promise<{ strays: string[]; warm: string[] }> {
    const table = await processTable();
    const warmPids = new Set<number>();
    for (const p of table.values()) {
      if (p.ppid !== this.servicePid || !p.argv.some((arg) => arg.endsWith('box-root.js'))) continue;
      const tree = treeOf(p.pid, table);
      if (tree.every((q) => q.pid === p.pid || (q.argv[0] ?? '').endsWith('socat'))) for (const q of tree) warmPids.add(q.pid);
    }
    const found = new Map<number, string>();
    const line = (p: ProcEntry) => `${p.pid} ${p.state === 'Z' ? '(zombie, not reaped) ' : ''}${p.argv.join(' ').slice(0, 120)}`;
    for (const p of await processesWithEnv(`=${this.home}/`, table)) if (p.pid !== this.servicePid) found.set(p.pid, line(p));
    for (const p of table.values()) if (p.ppid === this.servicePid && p.pid !== this.servicePid) found.set(p.pid, line(p));
    const all = [...found.keys()];
    return {
      strays: all.filter((pid) => !warmPids.has(pid)).map((pid) => found.get(pid) ?? ''),
      warm: all.filter((pid) => warmPids.has(pid)).map((pid) => found.get(pid) ?? ''),
    };
  }

  /** SIGTERM with no job running: the service must exit by itself (process.exitCode, no process.exit). */
  async stopService(): Promise<{ exitMs: number; code: number | null; forced: boolean }> {
    this.control.close();
    const t0 = performance.now();
    const exited = new Promise<number | null>((resolve) => this.service.once('exit', (code) => resolve(code)));
    this.service.kill('SIGTERM');
    const first = await Promise.race([exited, sleep(EXIT_LIMIT_MS * 2).then(() => 'timeout' as const)]);
    if (first !== 'timeout') return { exitMs: performance.now() - t0, code: first, forced: false };
    this.service.kill('SIGKILL');
    return { exitMs: performance.now() - t0, code: await exited, forced: true };
  }

  async cleanup(keepHome: boolean): Promise<void> {
    if (this.service && this.service.exitCode === null && this.service.signalCode === null) {
      try {
        const client = await IpcClient.connect({ locations: this.locations, clientName: 'soak/cleanup' });
        await client.call('service.stop', { killJobs: true }).catch(() => undefined);
        client.close();
      } catch {
        this.service.kill('SIGKILL');
      }
    }
    this.model.stop();
    await this.fake.stop();
    if (!keepHome) await this.cleanupHome();
  }
}

function diffCounts(before: Record<string, number>, after: Record<string, number>): string[] {
  const lines: string[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [b, a] = [before[key] ?? 0, after[key] ?? 0];
    if (a !== b) lines.push(`${a > b ? '+' : '-'}${Math.abs(a - b)} ${key}`);
  }
  return lines;
}

function printCounts(title: string, counts: Record<string, number>): void {
  const entries = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
  console.log(`  ${title}: ${entries.length === 0 ? 'none' : ''}`);
  for (const [key, n] of entries) console.log(`    ${n} × ${key}`);
}

async function main(): Promise<number> {
  const wall0 = performance.now();
  const soak = new Soak();
  const failures: string[] = [];
  let keepHome = false;
  try {
    await soak.start();
    console.log(machineHeader('OpenRouter Delegate soak'));
    console.log(
      `${JOBS} jobs through the real claude CLI (${path.relative(process.cwd(), CLAUDE_CLI)}), ${PARALLEL} at a time (service concurrency ${PARALLEL}), every ${CANCEL_EVERY}th cancelled while its Bash runs sleep ${HOLD_SECONDS}; warm-up ${WARMUP} jobs; service pid ${soak.servicePid}\n`,
    );
    const atStart = await soak.snapshot();
    log(`start: RSS ${mb(atStart.rss)}, heap ${mb(atStart.heapUsed)}, ${atStart.fds.length} fds`);
    const jobs0 = performance.now();
    await soak.run(0, WARMUP);
    await soak.settle();
    await sleep(IDLE_SECONDS * 1000);
    const atWarm = await soak.snapshot();
    log(`after warm-up (${WARMUP} jobs): RSS ${mb(atWarm.rss)}, heap ${mb(atWarm.heapUsed)}, ${atWarm.fds.length} fds`);
    await soak.run(WARMUP, JOBS);
    // The jobs' own time: the quiet before the warm-up figures is not theirs.
    const jobsMs = performance.now() - jobs0 - IDLE_SECONDS * 1000;
    await soak.settle();
    await sleep(IDLE_SECONDS * 1000);
    const atEnd = await soak.snapshot();
    log(`end: RSS ${mb(atEnd.rss)}, heap ${mb(atEnd.heapUsed)}, ${atEnd.fds.length} fds`);
    const leftBeforeStop = await soak.leftovers();
    const stop = await soak.stopService();
    const leftAfterStop = await soak.leftovers();

    // ── report ──────────────────────────────────────────────────────────────────────────────
    const results = soak.results;
    console.log('\n== Jobs');
    const byKind = new Map<Kind, Map<string, number>>();
    for (const o of results) {
      const counts = byKind.get(o.kind) ?? new Map<string, number>();
      counts.set(o.state, (counts.get(o.state) ?? 0) + 1);
      byKind.set(o.kind, counts);
    }
    const total = new Map<string, number>();
    for (const o of results) total.set(o.state, (total.get(o.state) ?? 0) + 1);
    console.log(
      `  final states: ${['succeeded', 'cancelled', 'failed'].map((s) => `${s} ${total.get(s) ?? 0}`).join(' / ')}${[...total]
        .filter(([s]) => !['succeeded', 'cancelled', 'failed'].includes(s))
        .map(([s, n]) => `, ${s} ${n}`)
        .join('')} (of ${results.length})`,
    );
    for (const [kind, counts] of byKind) {
      const walls = results.filter((o) => o.kind === kind).map((o) => o.wallMs);
      console.log(
        `  ${kind.padEnd(6)} expected ${EXPECTED[kind].state.padEnd(9)}: ${[...counts].map(([s, n]) => `${s} ${n}`).join(', ')}; wall p50 ${seconds(median(walls))}, p95 ${seconds(percentile(walls, 95))}, max ${seconds(Math.max(...walls))}`,
      );
    }
    const cancels = results.map((o) => o.cancelMs).filter((v): v is number => v !== null);
    if (cancels.length > 0) {
      const escalated = soak.serviceLog.filter((l) => l.includes('sending SIGKILL')).length;
      console.log(
        `  cancel → tree gone: p50 ${Math.round(median(cancels))} ms, max ${Math.round(Math.max(...cancels))} ms; ${escalated} of ${cancels.length} needed SIGKILL after the grace period`,
      );
    }
    const unexpected = results.filter((o) => o.problems.length > 0);
    for (const o of unexpected) console.log(`  UNEXPECTED job ${o.index} (${o.kind}, ${o.jobId ?? 'no id'}): ${o.state} — ${o.problems.join('; ')}`);
    if (unexpected.length > 0) failures.push(`${unexpected.length} job(s) ended unexpectedly`);
    if (results.length !== JOBS) failures.push(`${JOBS - results.length} job(s) never ran`);
    console.log(`  ${JOBS} jobs in ${seconds(jobsMs)} (${(JOBS / (jobsMs / 60_000)).toFixed(1)} jobs/min)`);

    console.log('\n== Processes');
    console.log(
      `  left behind while the service ran (environment in ${soak.home}, or a child of the service): ${leftBeforeStop.strays.length === 0 ? 'none' : ''}`,
    );
    for (const line of leftBeforeStop.strays) console.log(`    ${line}`);
    // The warm box: one root and its two socat bridges, no job in it; it must end with the service (below).
    const warmRoots = leftBeforeStop.warm.filter((line) => line.includes('box-root.js')).length;
    console.log(`  the warm box waiting for the next job (expected: at most one, ending with the service): ${leftBeforeStop.warm.length === 0 ? 'none' : ''}`);
    for (const line of leftBeforeStop.warm) console.log(`    ${line}`);
    if (warmRoots > 1) failures.push(`${warmRoots} warm boxes waiting, not one`);
    const afterStop = [...leftAfterStop.strays, ...leftAfterStop.warm];
    console.log(`  left behind after it stopped: ${afterStop.length === 0 ? 'none' : ''}`);
    for (const line of afterStop) console.log(`    ${line}`);
    if (leftBeforeStop.strays.length + afterStop.length > 0) failures.push('processes leaked');

    console.log('\n== File descriptors of the service');
    console.log(`  start ${atStart.fds.length}, after warm-up ${atWarm.fds.length}, end ${atEnd.fds.length}`);
    for (const fd of atStart.fds) console.log(`    start fd ${String(fd.fd).padStart(3)}: ${fd.label}`);
    const { added: addedAll, removed } = diffFds(atStart.fds, atEnd.fds);
    // The warm box's stdin and stdout (a socket pair each, the way Node makes a child's pipes): two, if one is waiting.
    const pipes = addedAll.filter((fd) => fd.label.startsWith('unix (connection)')).slice(0, warmRoots === 1 ? 2 : 0);
    const added = addedAll.filter((fd) => !pipes.includes(fd));
    console.log(`  at the end and not at the start: ${added.length === 0 ? 'none' : ''}`);
    for (const fd of added) console.log(`    + fd ${fd.fd}: ${fd.label}`);
    for (const fd of pipes) console.log(`    + fd ${fd.fd}: ${fd.label}, the warm box's stdin or stdout`);
    console.log(`  at the start and not at the end: ${removed.length === 0 ? 'none' : ''}`);
    for (const fd of removed) console.log(`    - fd ${fd.fd}: ${fd.label}`);
    if (added.length > 0) failures.push(`${added.length} file descriptor(s) leaked`);

    console.log('\n== Timers and handles of the service (probe, after GC)');
    printCounts("live timers at the end (setTimeout/setInterval, ref'd and unref'd)", atEnd.timers);
    const timerDiff = diffCounts(atStart.timers, atEnd.timers);
    console.log(`  timers end vs start: ${timerDiff.length === 0 ? 'same' : timerDiff.join('; ')}`);
    printCounts('resources keeping the event loop alive at the end', atEnd.resources);
    const resourceDiff = diffCounts(atStart.resources, atEnd.resources);
    console.log(`  resources end vs start: ${resourceDiff.length === 0 ? 'same' : resourceDiff.join('; ')}`);
    if (timerDiff.some((l) => l.startsWith('+'))) failures.push('timers leaked');
    if (resourceDiff.some((l) => l.startsWith('+'))) failures.push('loop handles leaked');
    console.log(`  SIGTERM with no job running → exited in ${Math.round(stop.exitMs)} ms with code ${stop.code}${stop.forced ? ' — only after SIGKILL' : ''}`);
    if (stop.forced || stop.exitMs > EXIT_LIMIT_MS)
      failures.push(`the service took ${Math.round(stop.exitMs)} ms to exit on SIGTERM (something holds its event loop)`);
    if (stop.code !== 0) failures.push(`the service exited with ${stop.code}`);

    console.log('\n== Memory of the service (RSS after a full GC)');
    const growth = atEnd.rss - atWarm.rss;
    console.log(
      `  start ${mb(atStart.rss)} · after warm-up ${mb(atWarm.rss)} · end ${mb(atEnd.rss)} (${growth >= 0 ? '+' : ''}${mb(growth)} since warm-up; peak while running ${mb(soak.peakRss)})`,
    );
    console.log(
      `  V8 heap used (committed): start ${mb(atStart.heapUsed)} (${mb(atStart.heapTotal)}) · after warm-up ${mb(atWarm.heapUsed)} (${mb(atWarm.heapTotal)}) · end ${mb(atEnd.heapUsed)} (${mb(atEnd.heapTotal)})`,
    );
    console.log(
      `  outside the heap, known to V8 (external; of it ArrayBuffers): start ${mb(atStart.external)}; ${mb(atStart.arrayBuffers)} · after warm-up ${mb(atWarm.external)}; ${mb(atWarm.arrayBuffers)} · end ${mb(atEnd.external)}; ${mb(atEnd.arrayBuffers)}`,
    );
    if (growth > RSS_SLACK_MB * 1024 * 1024) failures.push(`RSS grew ${mb(growth)} after warm-up (more than ${RSS_SLACK_MB} MB)`);

    const notable = soak.serviceLog.filter((l) => /survived|still running after SIGKILL|not saved|cannot read|Error/i.test(l));
    console.log(`\n== Service log: ${soak.serviceLog.length} lines, ${notable.length} about kills that failed or errors${notable.length ? ':' : ''}`);
    for (const line of notable.slice(0, 20)) console.log(`    ${line}`);

    console.log(`\nWall time ${seconds(performance.now() - wall0)}.`);
    if (failures.length > 0) {
      keepHome = true;
      console.log(`SOAK FAILED: ${failures.join('; ')}. The home is kept for a look: ${soak.home}`);
      return 1;
    }
    console.log('SOAK PASSED: every job ended as expected; no leaked process, descriptor, timer or handle; memory flat.');
    return 0;
  } catch (error) {
    keepHome = true;
    console.error(`The soak could not finish: ${error instanceof Error ? error.stack : String(error)}`);
    if (soak.home) console.error(`Home kept: ${soak.home}; service log tail:\n${soak.serviceLog.slice(-20).join('\n')}`);
    return 1;
  } finally {
    await soak.cleanup(keepHome);
  }
}

process.exitCode = await main();
