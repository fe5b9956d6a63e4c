/**
 * The verifier (docs/VERIFY.md): when a worktree job's turn ends with changes, its verify commands run on a clean
 * checkout of its branch tip (checkout.ts), one after the other, each in a box of its own like the delegate's (no
 * network, writes only the checkout and a temp folder, reads none of the service's folders or the secret stores),
 * with the caches in that temp folder. Only so many jobs' commands run at once per repository. It costs no tokens.
 * What the branch changed in what judges it is flagged beside the outcome (rewritten-checks.ts).
 */
import { appendFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { availableParallelism, homedir } from 'node:os';
import path from 'node:path';
import { ENV } from '../../contract/index.js';
import type { SandboxPolicy, VerifyRun } from '../../contract/index.js';
import type { SandboxAvailability } from '../../platform/sandbox-probe.js';
import { boxCommand, boxRuntime, boxSettings, ripgrep } from '../jobs/process/box.js';
import type { BoxRuntime, BoxedCommand } from '../jobs/process/box.js';
import { inheritedEnv } from '../jobs/process/child-env.js';
import { jobTempRoot, makeJobTempDir } from '../jobs/process/job-temp.js';
import { expandHome, presentSecretStores } from '../jobs/process/sandbox.js';
import type { Verifier, VerifyReport, VerifyRequest } from '../jobs/supervisor/verify-link.js';
import { cleanCheckout, dependencyNote, missingDependencies } from './checkout.js';
import { rewrittenChecks } from './rewritten-checks.js';
import { runCommand } from './run-command.js';
import { errorMessage } from '../../common/errors.js';
import { clip, plain } from './flag-words.js';

export interface VerifierDeps {
  settings: () => { sandbox: SandboxPolicy; verifyTimeoutMinutes: number; verifyConcurrency: number | null };
  /** Whether a box can run here (platform/sandbox-probe.ts). */
  sandbox: () => Promise<SandboxAvailability>;
  /** The service's environment, of which the commands inherit what a delegate does (child-env.ts). */
  env: NodeJS.ProcessEnv;
  /** The service's folders: no command reads them. */
  serviceDirs: readonly string[];
  /** The `claude` a delegate runs, whose binary is ripgrep when `rg` is not installed (the runtime needs one). */
  locateClaude: (callerPath: string | undefined) => Promise<string>;
  /** Takes every secret out of text the parent will read. */
  redact: (text: string) => string;
  boxRuntime?: BoxRuntime;
  log?: (line: string) => void;
}

/** The largest file a command may write, in the shell's blocks (512 or 1,024 bytes: 1 or 2 GiB). */
const FILE_SIZE_BLOCKS = 2 * 1024 * 1024;
/** The most of one command's output copied into the job's verify.log (its end): a runaway test does not fill the disk. */
const LOG_COPY_BYTES = 4 * 1024 * 1024;

/** How a command runs (in its box, or as the user), and what to say of it. */
interface CommandWrap {
  wrap: (argv: string[]) => BoxedCommand;
  note: string | null;
}

/** The folders of one box: the job's verify folder (its settings file goes there), the checkout it runs in, its temp. */
interface BoxFolders {
  folder: string;
  checkout: string;
  tmp: string;
  settingsFile: string;
}

/** What a base's test count is asked with: the job's repository and base, its verify folder, its request, its cancel. */
interface BaseRun {
  repo: string;
  base: string;
  folder: string;
  request: VerifyRequest;
  signal: AbortSignal;
  /** The base's checkout and box, once they are being made (once per job). */
  baseReady?: Promise<{ how: CommandWrap; checkout: string } | string>;
}

/** Base test counts kept (repository, base and command each). */
const BASE_COUNTS_KEPT = 200;

export class BoxedVerifier implements Verifier {
  private readonly deps: VerifierDeps;
  /** The test count of a command on a base commit, by repository, base and command (fewerTests). */
  private readonly baseCounts = new Map<string, Promise<number | null>>();
  /** Jobs whose commands run now, and those waiting for a turn, per repository. */
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(deps: VerifierDeps) {
    this.deps = deps;
  }

  refusal(repo: string): Promise<string | null> {
    return missingDependencies(repo);
  }

  /** Jobs whose commands may run at once in one repository: the setting, else half the cores. */
  private limit(): number {
    return this.deps.settings().verifyConcurrency ?? Math.max(1, Math.floor(availableParallelism() / 2));
  }

  /** A turn to run in `repo`: what gives it back; null when the job was cancelled while it waited (it takes none). */
  private async turn(repo: string, signal: AbortSignal): Promise<(() => void) | null> {
    while ((this.running.get(repo) ?? 0) >= this.limit()) {
      if (signal.aborted) return null;
      await new Promise<void>((resolve) => {
        const waiters = this.waiting.get(repo) ?? new Set<() => void>();
        const wake = () => {
          waiters.delete(wake);
          signal.removeEventListener('abort', wake);
          resolve();
        };
        waiters.add(wake);
        this.waiting.set(repo, waiters);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
    if (signal.aborted) return null;
    this.running.set(repo, (this.running.get(repo) ?? 0) + 1);
    return () => {
      this.running.set(repo, (this.running.get(repo) ?? 1) - 1);
      // Every waiter looks again: none can be woken in another's place and leave it waiting.
      for (const wake of [...(this.waiting.get(repo) ?? [])]) wake();
    };
  }

  async run(request: VerifyRequest): Promise<VerifyReport> {
    const { record, signal } = request;
    const isolation = record.isolation;
    const repo = isolation?.repo;
    const base = isolation?.baseCommit;
    const head = isolation?.headCommit;
    if (!repo || !base || !head) return skipped('the job has no branch tip to judge.');
    const release = await this.turn(repo, signal);
    if (release === null) return { outcome: 'cancelled', note: null, runs: [], flags: [] };
    let folder: string | null = null;
    try {
      // Short names: the box's proxy sockets live in its temp folder, and a Unix socket's path has 108 bytes at most.
      folder = await makeJobTempDir(`${record.id}-v`);
      if (signal.aborted) return { outcome: 'cancelled', note: null, runs: [], flags: [] };
      const missing = await missingDependencies(repo);
      if (missing !== null) return skipped(missing);
      const checkout = path.join(folder, 'c');
      const tmp = path.join(folder, 't');
      await mkdir(tmp, { mode: 0o700 });
      await cleanCheckout(repo, head, checkout);
      const [flags, depsNote, how] = await Promise.all([
        rewrittenChecks({ cwd: repo, base, head, commands: request.commands }).catch((): string[] => []),
        dependencyNote(repo, base, head, checkout).catch(() => null),
        this.how(request, { folder, checkout, tmp, settingsFile: 'box.json' }),
      ]);
      if (typeof how === 'string') return skipped(how);
      const runs: VerifyRun[] = [];
      for (const [i, command] of request.commands.entries()) {
        if (signal.aborted) break;
        const outputFile = path.join(folder, `out-${i}.log`);
        const run = await this.runOne(command, how, checkout, outputFile, signal);
        runs.push({ ...run, tail: this.deps.redact(run.tail) });
        await this.keepLog(request.logFile, command, outputFile);
      }
      if (signal.aborted) return { outcome: 'cancelled', note: null, runs, flags };
      flags.push(...(await this.fewerTests(runs, { repo, base, folder, request, signal })));
      if (signal.aborted) return { outcome: 'cancelled', note: null, runs, flags };
      const note = [how.note, depsNote].filter((n) => n !== null).join(' ') || null;
      return { outcome: runs.every((run) => run.ok) ? 'passed' : 'failed', note, runs, flags };
    } finally {
      release();
      if (folder !== null)
        await rm(folder, { recursive: true, force: true }).catch((error: unknown) => this.deps.log?.(`verify: ${record.id}: ${errorMessage(error)}`));
    }
  }

  /** One command in `cwd`, in its box, its output into `outputFile`. */
  private runOne(command: string, how: CommandWrap, cwd: string, outputFile: string, signal: AbortSignal): Promise<VerifyRun> {
    return runCommand({
      command,
      // No file it writes, its output included, grows past the bound while it runs.
      spawn: how.wrap(['sh', '-c', `ulimit -f ${FILE_SIZE_BLOCKS} 2>/dev/null; ${command}`]),
      cwd,
      outputFile,
      timeoutMs: this.deps.settings().verifyTimeoutMinutes * 60_000,
      signal,
    });
  }

  /**
   * A flag for each command that passed running fewer tests than it runs on the branch's base (its runner's count):
   * a deleted or skipped test that failed passes that way. The base's count is asked once per repository, base and
   * command, and kept: a fan-out's candidates share it. Each run's counts are written on it.
   */
  private async fewerTests(runs: VerifyRun[], job: BaseRun): Promise<string[]> {
    const flags: string[] = [];
    for (const [i, run] of runs.entries()) {
      if (!run.ok || run.tests === null || job.signal.aborted) continue;
      const before = await this.baseCount(run.command, job);
      runs[i] = { ...run, testsBefore: before };
      if (before !== null && run.tests < before) flags.push(`${clip(plain(run.command), 40)} ran ${run.tests} tests, ${before} on the base`);
    }
    return flags;
  }

  /**
   * The base's count for `command`: one run per repository, base and command at a time, shared by the jobs that ask
   * meanwhile. Only a count is kept; a run that gave none (cut short, timed out, no summary) is asked again by the
   * next job, and a job whose shared run was another's cancelled one asks for itself.
   */
  private async baseCount(command: string, job: BaseRun, asked = false): Promise<number | null> {
    const key = `${job.repo}\0${job.base}\0${command}`;
    const known = this.baseCounts.get(key);
    const counted = known ?? this.countOnBase(command, job);
    if (!known) this.baseCounts.set(key, counted);
    const count = await counted;
    if (count === null) {
      if (this.baseCounts.get(key) === counted) this.baseCounts.delete(key);
      if (known && !asked && !job.signal.aborted) return this.baseCount(command, job, true);
    }
    while (this.baseCounts.size > BASE_COUNTS_KEPT) this.baseCounts.delete(this.baseCounts.keys().next().value ?? '');
    return count;
  }

  /**
   * Runs `command` on a clean checkout of the base, in a box of its own made only now: the branch's commands, which
   * ran before, could write none of its folders. Its count whatever its exit (a base that fails still ran its tests);
   * its output goes to the job's verify.log under a line that says what it was.
   */
  private async countOnBase(command: string, job: BaseRun): Promise<number | null> {
    try {
      job.baseReady ??= this.baseBox(job);
      const base = await job.baseReady;
      if (typeof base === 'string') return null;
      const outputFile = path.join(job.folder, `base-${randomBytes(4).toString('hex')}.log`);
      const run = await this.runOne(command, base.how, base.checkout, outputFile, job.signal);
      await this.keepLog(job.request.logFile, `${command}   # on the base ${job.base.slice(0, 12)}, for its test count`, outputFile);
      return job.signal.aborted || run.timedOut ? null : run.tests;
    } catch (error) {
      this.deps.log?.(`verify: ${job.request.record.id}: the base's test count: ${errorMessage(error)}`);
      return null;
    }
  }

  private async baseBox(job: BaseRun): Promise<{ how: CommandWrap; checkout: string } | string> {
    const checkout = path.join(job.folder, 'b');
    const tmp = path.join(job.folder, 'bt');
    await mkdir(tmp, { mode: 0o700 });
    await cleanCheckout(job.repo, job.base, checkout);
    const how = await this.how(job.request, { folder: job.folder, checkout, tmp, settingsFile: 'box-base.json' });
    return typeof how === 'string' ? how : { how, checkout };
  }

  /**
   * How each command runs: in its box (the settings file beside the checkout, where nothing in the box writes), or as
   * the user when this machine has no box and the user's settings allow programs without one; a string says why
   * neither.
   */
  private async how(request: VerifyRequest, where: BoxFolders): Promise<CommandWrap | string> {
    const { folder, checkout, tmp } = where;
    const deps = this.deps;
    const parent = inheritedEnv(deps.env);
    const env: Record<string, string> = {
      ...parent,
      ...(request.callerPath ? { PATH: request.callerPath } : {}),
      [ENV.job]: request.record.id,
      TMPDIR: tmp,
      XDG_CACHE_HOME: path.join(tmp, 'cache'),
      npm_config_cache: path.join(tmp, 'npm'),
      npm_config_update_notifier: 'false',
      GOCACHE: path.join(tmp, 'go-build'),
      CARGO_TARGET_DIR: path.join(tmp, 'target'),
      PYTHONDONTWRITEBYTECODE: '1',
      NO_COLOR: '1',
    };
    const plain = (argv: string[]): BoxedCommand => ({ command: argv[0] ?? 'sh', args: argv.slice(1), env });
    const policy = deps.settings().sandbox;
    const availability = await deps.sandbox();
    if (!availability.available) {
      if (policy.use === 'required') return `this machine has no box to run them in, and the user's settings require one (${availability.reason}).`;
      return { wrap: plain, note: `They ran without a box: ${availability.reason}.` };
    }
    const home = env.HOME ?? homedir();
    const settingsFile = path.join(folder, where.settingsFile);
    const claude = await deps.locateClaude(request.callerPath).catch(() => 'claude');
    await writeFile(
      settingsFile,
      boxSettings({
        gatewayUrl: null,
        allowedDomains: [],
        allowLocalBinding: true,
        denyRead: [...deps.serviceDirs, ...(await presentSecretStores(home)), ...policy.denyRead.map((file) => expandHome(file, home)), jobTempRoot()],
        allowRead: [checkout, tmp],
        allowWrite: [checkout, tmp],
        denyWrite: [],
        ripgrep: await ripgrep(claude, env),
      }),
      { mode: 0o600 },
    );
    const runtime = deps.boxRuntime ?? boxRuntime();
    return { wrap: (argv) => boxCommand(runtime, settingsFile, { command: argv[0] ?? 'sh', args: argv.slice(1), env }), note: null };
  }

  /** Appends a command's output (its end, when huge) to the job's verify.log, under a line naming it. */
  private async keepLog(logFile: string, command: string, outputFile: string): Promise<void> {
    const output = await readFile(outputFile).catch(() => Buffer.alloc(0));
    const kept = output.length > LOG_COPY_BYTES ? output.subarray(output.length - LOG_COPY_BYTES) : output;
    await appendFile(logFile, this.deps.redact(`$ ${command}\n${kept.toString('utf8')}\n`), { mode: 0o600 }).catch((error: unknown) =>
      this.deps.log?.(`verify: cannot write ${logFile}: ${errorMessage(error)}`),
    );
  }
}

function skipped(why: string): VerifyReport {
  return { outcome: 'skipped', note: `Not run: ${why}`, runs: [], flags: [] };
}
