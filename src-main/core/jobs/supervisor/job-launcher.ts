/**
 * What a job's launch needs before its process runs (docs/ARCHITECTURE.md §4): its key and prices, its gateway token,
 * its temp and config folders, what its tools may not reach, its box's settings, and the spawn itself, in a warm box
 * (box-spares.ts) or cold. The lifecycle (lifecycle.ts) calls it and goes on from the process it starts.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { ENV } from '../../../contract/index.js';
import type { JobRecord } from '../../../contract/index.js';
import { requireKey, sandboxAvailability } from './admission.js';
import { claudeArgs } from '../process/claude-args.js';
import type { ProgramsArgs } from '../process/claude-args.js';
import { makeJobTempDir } from '../process/job-temp.js';
import type { JobRegistry, LiveJob, SupervisorDeps } from './job-registry.js';
import { resolveModel } from '../record/job-request.js';
import { spawnDetached } from '../process/spawn-detached.js';
import type { DetachedProcess, SpawnDetachedOptions } from '../process/spawn-detached.js';
import { BoxSpares, sweepBoxTemps } from '../process/box-spares.js';
import type { WarmBox } from '../process/box-spares.js';
import { newJobToken, tokenHash } from '../../gateway/job-token.js';
import { serviceFoldersToDeny } from '../git/worktrees.js';
import { boxCommand, boxedInner, boxNode, boxRuntime, boxSettings, jobBox, ripgrep, sessionConfigDir } from '../process/box.js';
import type { BoxedCommand, BoxSettingsInput, Ripgrep } from '../process/box.js';
import { allOrFirstError } from '../../../common/promises.js';

/** What a job's launch uses of the supervisor's dependencies. */
export type LaunchDeps = Pick<
  SupervisorDeps,
  'apiKey' | 'keyProblem' | 'models' | 'childEnv' | 'locateClaude' | 'spawn' | 'boxRuntime' | 'boxRoot' | 'serviceDirs' | 'serviceSubdirs' | 'sandbox'
>;

/** What a job's tools may not reach (the service's folders), and the box that holds it to that. */
interface Confinement {
  denied: { dirs: readonly string[]; files: readonly string[] };
  box: BoxSettingsInput | null;
  programs: ProgramsArgs;
}

/** What a job's launch starts: the command (a cold box's runtime, or claude), or the warm box it took and what runs in it. */
export interface Prepared {
  command: string;
  args: string[];
  env: Record<string, string>;
  claude: string;
  boxed: boolean;
  warm: { box: WarmBox; settingsFile: string; inner: BoxedCommand } | null;
}

export class JobLauncher {
  private readonly registry: JobRegistry;
  private readonly deps: LaunchDeps;
  /** The warm box the next sandboxed job takes (box-spares.ts). */
  readonly spares: BoxSpares;

  constructor(registry: JobRegistry, deps: LaunchDeps) {
    this.registry = registry;
    this.deps = deps;
    this.spares = new BoxSpares({ node: deps.boxRuntime?.node ?? boxNode(), script: deps.boxRoot ?? null, env: () => process.env, log: registry.log });
  }

  /**
   * What a delegate needs before it can be spawned, the steps that wait on none other at once: where claude is; what
   * its tools may not reach and the sandbox that holds its programs to that; its temp folder; its gateway token's hash
   * on disk. Null when the job was cancelled meanwhile; its temp folder goes then, and on a failure.
   */
  async prepare(job: LiveJob): Promise<Prepared | null> {
    const { deps } = this;
    const { store, settings } = this.registry;
    const record = job.record;
    // A job re-queued after a restart lost its in-memory key and prices: look them up again.
    job.apiKey ??= requireKey(deps);
    job.pricing ??= record.prices ?? resolveModel(record.model, await deps.models(), settings()).pricing;
    // The delegate gets a token for the gateway, never the key; its hash is on disk before the delegate
    // exists, so a service restarted at any moment after knows what the delegate holds. Admission wrote the
    // hash of the token it made with the job's files; a job re-queued after a restart gets a new one here.
    const onDisk = job.tokenOnDisk;
    job.tokenOnDisk = null;
    const token = onDisk ?? newJobToken();
    job.tokenHash = tokenHash(token);
    const env: Record<string, string> = { ...deps.childEnv(record.model, token, job.callerPath), [ENV.job]: record.id };
    // Its session's own Claude Code config folder (transcripts, for --resume): no job reads another's.
    if (env.CLAUDE_CONFIG_DIR) env.CLAUDE_CONFIG_DIR = await sessionConfigDir(env.CLAUDE_CONFIG_DIR, record);
    const [claude, denied] = await allOrFirstError<[string, Confinement['denied'], void | undefined]>([
      deps.locateClaude(job.callerPath),
      this.denied(record),
      onDisk === null ? store.writeTokenHash(record.id, job.tokenHash) : undefined,
    ]);
    // A sandboxed job takes a warm box if one is up (box-spares.ts); its temp folder is that box's.
    const rg = record.sandbox?.programs === 'sandboxed' ? await ripgrep(claude, env) : null;
    const warm = rg === null ? null : await this.spares.take(rg);
    // The next spare once this job's Claude Code has started (its first stream line, lifecycle.ts), not beside its start.
    if (rg !== null) job.started = () => this.spares.refill(rg);
    // A temp folder of its own, made fresh (job-temp.ts): the sandbox lets programs write in it, and in no other job's or the user's.
    const tmp = warm?.tmp ?? (await makeJobTempDir(record.id));
    env.TMPDIR = tmp;
    job.tmp = tmp;
    const removeTmp = async () => {
      warm?.discard();
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    };
    try {
      const confined = await this.confinement(rg, record, env, denied);
      if (job.terminating) {
        await removeTmp();
        return null;
      }
      const inner = { command: claude, env, args: claudeArgs(record, confined.denied.dirs, confined.denied.files, confined.programs) };
      if (confined.box === null) {
        warm?.discard();
        return { ...inner, claude, boxed: false, warm: null };
      }
      const settingsFile = store.paths(record.id).box;
      await writeFile(settingsFile, boxSettings(confined.box), { mode: 0o600 });
      return { ...boxCommand(deps.boxRuntime ?? boxRuntime(), settingsFile, inner), claude, boxed: true, warm: warm && { box: warm, settingsFile, inner } };
    } catch (error) {
      await removeTmp();
      throw error;
    }
  }

  /** Starts the job's process: in its warm box if it took one, else as prepared (a cold box's runtime, or claude itself). */
  async spawn(prepared: Prepared, stdio: Pick<SpawnDetachedOptions, 'cwd' | 'stdinFile' | 'stdoutFile' | 'stderrFile'>): Promise<DetachedProcess> {
    const { command, args, env, warm } = prepared;
    if (warm !== null) {
      const inner = boxedInner(warm.inner);
      return await warm.box.claim({ ...stdio, ...inner, settingsFile: warm.settingsFile });
    }
    return await (this.deps.spawn ?? spawnDetached)({ command, args, env, ...stdio });
  }

  /**
   * At the service's start: the temp folders of boxes killed outright go (box-spares.ts). A spare starts now for a
   * user whose last job on record ran in a box: they delegate, and their next job should not wait for a cold box.
   * Otherwise the first Claude Code session that connects starts one (warmForSession), so a service that no session
   * uses keeps no idle box.
   */
  async tidyBoxes(): Promise<void> {
    if (!this.spares.enabled) return;
    await sweepBoxTemps();
    const last = this.lastJob();
    if (last?.sandbox?.programs !== 'sandboxed' || this.registry.settings().sandbox.programs !== 'sandboxed') return;
    this.spares.refill(await this.likelyRipgrep(last));
  }

  /**
   * A Claude Code session connected (`jobs.warm`: its bridge says so as it starts, and after the service restarts, with
   * its PATH): a spare starts now, when this machine boxes delegates' programs, for the ripgrep a job of that session
   * will have, so that even the first job a home ever runs takes a warm box. Its first delegation comes at the soonest
   * after the parent model's first turn; a spare is ready some 0.4 s after it starts. One spare per service, however
   * many sessions connect. It also runs the sandbox probe admission waits on (cached: admission.ts), before the first
   * delegation rather than in it.
   */
  async warmForSession(callerPath: string | undefined): Promise<void> {
    const policy = this.registry.settings().sandbox;
    if (!this.spares.wanted || policy.programs === 'off' || policy.use === 'off') return;
    if (!(await sandboxAvailability(this.deps)).available) return;
    this.spares.prime(await this.likelyRipgrep(this.lastJob(), callerPath));
  }

  /** The job on record started last, if any. */
  private lastJob(): JobRecord | null {
    return this.registry
      .all()
      .reduce<JobRecord | null>((latest, job) => (latest === null || job.record.createdAt > latest.createdAt ? job.record : latest), null);
  }

  /**
   * The ripgrep the next job's box will likely have: for a session that gave its PATH, what a job of it gets (prepare:
   * its claude and its PATH). Else the one the last job's box had (its box.json), since a job started from the same
   * Claude Code gets the same, wherever the service itself was started from (a tray app's PATH is not a terminal's);
   * else the one the service would give. A spare for another is not taken (box-spares.ts take).
   */
  private async likelyRipgrep(last: JobRecord | null, callerPath?: string): Promise<Ripgrep> {
    if (callerPath !== undefined) return await ripgrep(await this.deps.locateClaude(callerPath), { PATH: callerPath });
    return (
      (last === null ? null : await boxRipgrep(this.registry.store.paths(last.id).box)) ??
      (await ripgrep(await this.deps.locateClaude(undefined), { PATH: process.env.PATH ?? '' }))
    );
  }

  /** What a job's tools may not reach; refused when its worktree is gone. */
  private async denied(record: JobRecord): Promise<Confinement['denied']> {
    const { deps } = this;
    const isolation = record.isolation;
    if (isolation?.mode === 'worktree' && !(await this.registry.worktrees.present(isolation))) {
      throw new Error(`Its worktree ${isolation.worktree ?? ''} is gone (deleted by hand?), so the delegate has nowhere to work. Start a new delegation.`);
    }
    // A worktree job's file tools reach its worktree, inside the data folder, and none of the service's folders besides.
    return isolation?.mode === 'worktree' && isolation.worktree
      ? await serviceFoldersToDeny(deps.serviceDirs ?? [], deps.serviceSubdirs ?? [], isolation.worktree)
      : { dirs: deps.serviceDirs ?? [], files: [] };
  }

  /** The box that holds the job to what it may reach (none when its programs are not sandboxed), and its Bash. */
  private async confinement(rg: Ripgrep | null, record: JobRecord, env: Record<string, string>, denied: Confinement['denied']): Promise<Confinement> {
    const policy = this.registry.settings().sandbox;
    const programs = record.sandbox?.programs;
    return {
      denied,
      // Its ripgrep is the one prepare found for its warm box (null: its programs are not sandboxed, and it has none).
      box: rg === null ? null : await jobBox(rg, record, policy, env, denied),
      programs: { denyBash: programs === 'none', allowBash: programs === 'sandboxed' && policy.programs === 'sandboxed' },
    };
  }
}

/** The ripgrep a job's box settings name (box.ts boxSettings), as `ripgrep()` gives it; null when unreadable. */
async function boxRipgrep(settingsFile: string): Promise<Ripgrep | null> {
  // A missing or torn file (JSON.parse throws) is no ripgrep, not an error.
  const settings = await readFile(settingsFile, 'utf8')
    .then((text) => JSON.parse(text) as unknown)
    .catch(() => null);
  const rg = (settings as { ripgrep?: { command?: unknown; argv0?: unknown } } | null)?.ripgrep;
  if (typeof rg?.command !== 'string' || !(rg.argv0 === undefined || typeof rg.argv0 === 'string')) return null;
  return rg.argv0 === undefined ? { command: rg.command } : { command: rg.command, argv0: rg.argv0 };
}
