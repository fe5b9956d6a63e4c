/**
 * Recovery at start (docs/ARCHITECTURE.md §4): jobs are files first, processes second. What the last
 * service left running is re-adopted if its process is still the same one (pid and start time), else
 * finished from its stream; what it left queued is queued again — unless it had in fact been spawned.
 */
import { ENV } from '../../../contract/index.js';
import type { JobRecord } from '../../../contract/index.js';
import type { JobBilling } from './billing.js';
import { liveJob } from './job-registry.js';
import type { JobRegistry, LiveJob, SupervisorDeps } from './job-registry.js';
import type { JobLifecycle } from './lifecycle.js';
import { removeJobTempDirs } from '../process/job-temp.js';
import { verifyTurn } from './verify-turn.js';
import { isSameProcess, processesByEnv } from '../process/process-table.js';
import { streamParserFor } from '../stream/stream-parser.js';
import { TurnMeter } from '../money/turn-meter.js';
import { readStreamFile } from '../stream/stream-tail.js';

const LOST_REASON = "The job's process ended while the service was not running, and its stream has no result. What it did is in its stream file.";

type MarkedProcess = { pid: number; startTime: string | null; ppid?: number };

/** What recovery uses of the supervisor's dependencies. */
export type RecoveryDeps = Pick<SupervisorDeps, 'apiKey' | 'models' | 'adoptedPollMs' | 'verifier'>;

export class JobRecovery {
  private readonly registry: JobRegistry;
  private readonly deps: RecoveryDeps;
  private readonly lifecycle: JobLifecycle;
  private readonly billing: JobBilling;

  constructor(registry: JobRegistry, deps: RecoveryDeps, lifecycle: JobLifecycle, billing: JobBilling) {
    this.registry = registry;
    this.deps = deps;
    this.lifecycle = lifecycle;
    this.billing = billing;
  }

  /** Takes over the history the store holds: every job registered, the live ones followed again. */
  async recoverAll(records: JobRecord[]): Promise<void> {
    const { registry } = this;
    records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    const loaded = records.map((record) => liveJob(record));
    for (const job of loaded) registry.add(job);
    // Queued jobs may have been spawned by a service that died before recording it: one look at /proc for all of them.
    const marked = loaded.some((job) => job.record.state === 'queued') ? await processesByEnv(ENV.job) : new Map<string, never[]>();
    for (const job of loaded) {
      if (job.record.state === 'running') await this.recover(job);
      else if (job.record.state === 'queued') await this.requeue(job, marked.get(job.record.id) ?? []);
      else {
        if (job.record.billing === 'pending') this.billing.bill(job);
        if (job.record.state === 'verifying') registry.runInBackground(this.reverify(job));
      }
    }
  }

  /**
   * A job the last service left verifying: what its verify commands left running is ended (they carry the job's
   * marker), and they run again from the start on the same branch tip. Its turn succeeded (only such turns verify).
   */
  private async reverify(job: LiveJob): Promise<void> {
    await this.lifecycle.sweep(job.record.id);
    await removeJobTempDirs(job.record.id);
    if (job.record.verify) job.record.verify = { ...job.record.verify, outcome: 'running', runs: [], flags: [] };
    await verifyTurn(this.registry, this.deps.verifier, job, 'succeeded', this.lifecycle.fixRound);
  }

  /**
   * A job the last service left queued. If its stream has output, the last service spawned it and died
   * before it could record that: never spawn it twice — finish it from its stream instead.
   */
  private async requeue(job: LiveJob, marked: MarkedProcess[]): Promise<void> {
    const { registry } = this;
    // Spawned, but the service died before it could record that: its process carries the job's marker.
    const spawned = oldestProcess(marked);
    if (spawned) {
      Object.assign(job.record, {
        state: 'running',
        startedAt: job.record.startedAt ?? new Date(registry.now()).toISOString(),
        pid: spawned.pid,
        pidStartTime: spawned.startTime,
      });
      await registry.persist(job);
      await this.recover(job);
      return;
    }
    const parser = streamParserFor(job.record);
    const read = await readStreamFile(registry.store.paths(job.record.id).stream, (line) => parser.push(line)).catch(() => null);
    if (!read || read.bytes === 0) {
      registry.enqueue(job.record.id);
      return;
    }
    job.parser = parser;
    await this.readMeter(job);
    await this.lifecycle.finish(job, { code: null, signal: null }, parser.result ? undefined : LOST_REASON);
  }

  /** A job the last service left running: adopt its process if it is still the same one, else finish it from its stream. */
  private async recover(job: LiveJob): Promise<void> {
    const { registry } = this;
    const { pid, pidStartTime } = job.record;
    const alive = pid !== null && pidStartTime !== null && (await isSameProcess(pid, pidStartTime));
    // The prices kept at admission: the cap is enforced even offline, or if the model left the catalog.
    job.pricing =
      job.record.prices ??
      (await this.deps
        .models()
        .then((models) => models.find((m) => m.id === job.record.model)?.pricing ?? null)
        .catch(() => null));
    if (!job.pricing) registry.log(`jobs: ${job.record.id}: no prices for ${job.record.model}; its cost cannot be estimated until it ends`);
    await this.readMeter(job);
    job.apiKey = this.deps.apiKey()?.value ?? null;
    if (alive) {
      registry.log(`jobs: re-adopting ${job.record.id} (pid ${pid})`);
      // Its delegate still holds its gateway token: the gateway takes it again (a job from before the gateway has none).
      job.tokenHash = await registry.store.readTokenHash(job.record.id);
      registry.issueToken(job);
      this.lifecycle.follow(job);
      this.lifecycle.armTimeout(job);
      this.watchAdopted(job);
      return;
    }
    // The process is gone: whatever it wrote is in the stream file.
    const parser = (job.parser = streamParserFor(job.record));
    await readStreamFile(registry.store.paths(job.record.id).stream, (line) => parser.push(line)).catch(() => undefined);
    await this.lifecycle.finish(job, { code: null, signal: null }, parser.result ? undefined : LOST_REASON);
  }

  /** What the job's requests through the gateway cost so far, from its log: the meter starts where the last service left it. */
  private async readMeter(job: LiveJob): Promise<void> {
    const logged = await this.registry.store.readRequests(job.record.id, Number.POSITIVE_INFINITY).catch(() => []);
    job.meter = TurnMeter.fromLog(logged);
  }

  /** An adopted process is not our child, so no exit event: check on it until it is gone. */
  private watchAdopted(job: LiveJob): void {
    const { registry } = this;
    const { pid, pidStartTime } = job.record;
    const poll = () => {
      const timer = setTimeout(() => {
        job.timers.delete(cancel);
        if (registry.stopped) return;
        void isSameProcess(pid ?? 0, pidStartTime ?? '').then((alive) => {
          if (alive) poll();
          else registry.runInBackground(this.lifecycle.finish(job, { code: null, signal: null }));
        });
      }, this.deps.adoptedPollMs ?? 500);
      const cancel = () => clearTimeout(timer);
      job.timers.add(cancel);
    };
    poll();
  }
}

/** The delegate among a job's marked processes: the root of their tree, the oldest of the roots if several. */
export function oldestProcess(marked: MarkedProcess[]): { pid: number; startTime: string } | null {
  const known = marked.filter((p): p is { pid: number; startTime: string; ppid?: number } => p.startTime !== null);
  const ticks = (p: { startTime: string }) => Number(p.startTime.split(':').pop());
  // The root: a marked process whose parent carries no marker (its children, started in the same clock tick, tie with
  // it by start time: a box's root and the shell it starts always can). A warm box's root was started before its job
  // and carries none (box-spares.ts): its command's shell is the root found, and it ends with the box.
  const pids = new Set(known.map((p) => p.pid));
  const roots = known.filter((p) => p.ppid === undefined || !pids.has(p.ppid));
  return (roots.length > 0 ? roots : known).sort((a, b) => ticks(a) - ticks(b))[0] ?? null;
}
