/**
 * The root of one delegate's box (docs/ISOLATION.md "The box"), in two ways:
 *
 * - **Warm** (core/jobs/process/box-spares.ts): started before its job exists so the job does not wait for it. It
 *   loads the sandbox runtime's library (`@anthropic-ai/sandbox-runtime`) and starts its proxy and socat bridges with a
 *   policy that lets nothing through, then waits on stdin for one claim: the job's settings file (the runtime's own
 *   schema), its command, folder, environment and stdio files. It takes that policy, wraps the command, runs it with
 *   the job's stdio, and removes its temp folder (its TMPDIR, which the job then owns) when it exits. One claim; a
 *   stdin that ends before it (the service went) ends the box. Reports on stdout, one line each: `ready`, then
 *   `started <pid>` or `failed <why>`; nothing after. Run as `node box-root.js --warm '<ripgrep config as JSON>'`,
 *   detached, in its own private temp folder (`box-<random>`, job-temp.ts).
 * - **Cold** (box.ts boxCommand, when no warm box is up, and the verifier's checks): `node box-root.js --settings
 *   <file> -- <command…>`, the one form of the runtime's own CLI (`srt`) the service uses: the command gets this
 *   process's environment and stdio. Errors go to stderr as `Error: …`; it removes nothing.
 *
 * Any other arguments are refused (exit 2), removing nothing.
 *
 * Either way it then does what the runtime's CLI does, but for one thing: on Linux the box's bubblewrap is this
 * process's own child, not a shell's (the CLI runs the wrapped command through `sh -c`, and where `sh` is dash, as on
 * Debian and Ubuntu, that shell stays between them), so bubblewrap's `--die-with-parent` ends the whole box when this
 * root dies, even by SIGKILL. It forwards SIGTERM and SIGINT to the command, tidies the runtime's mount points and
 * exits with the command's code (0 when a SIGTERM or SIGINT ended it, as the CLI).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** One claim: the job's box and what runs in it (box-spares.ts BoxClaim, as JSON). */
interface Claim {
  settingsFile: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdinFile: string;
  stdoutFile: string;
  stderrFile: string;
}

// The runtime's own modules, pinned with this package (package.json): its library, its settings loader, its quoting.
interface Runtime {
  SandboxManager: {
    initialize(config: unknown): Promise<void>;
    updateConfig(config: unknown): void;
    wrapWithSandbox(command: string): Promise<string>;
    cleanupAfterCommand(): void;
  };
}
const RUNTIME = '@anthropic-ai/sandbox-runtime';

const mode = process.argv[2] === '--settings' ? 'cold' : process.argv[2] === '--warm' ? 'warm' : null;
const cold = mode !== 'warm';
/**
 * A warm box's temp folder (a `box-<random>` made for it by box-spares.ts), removed when it ends. A cold box removes
 * nothing: its TMPDIR is its caller's.
 */
const ownTmp = process.env.TMPDIR ?? '';
const tmp = mode === 'warm' && path.basename(ownTmp).startsWith('box-') ? ownTmp : '';
let child: ChildProcess | undefined;
/**
 * The runtime's start (its proxy and socat bridges), settled or not. A box that must end before its command runs waits
 * for it: the runtime stops its bridges at exit only once it knows them, and one ended mid-start left its socat running.
 */
let starting: Promise<unknown> = Promise.resolve();

/** A warm box's report to the service; a cold box's stdout is its command's, and is never touched here. */
function report(line: string): void {
  if (!cold && process.stdout.writable) process.stdout.write(`${line}\n`);
}
// Only a warm box's stdout is a pipe to the service: a listener on a cold one's would make its file description
// non-blocking, which bubblewrap and the delegate would inherit.
if (!cold) process.stdout.on('error', () => undefined);

function removeTmp(): void {
  if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
}

function quit(code: number): never {
  try {
    removeTmp();
  } finally {
    process.exit(code);
  }
}

// Before its command runs a signal ends the box (once the runtime's start has settled); after, it goes to the command,
// as the runtime's CLI does.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (child === undefined) void starting.finally(() => quit(0));
    else child.kill(signal);
  });
}

async function loadRuntime(): Promise<{
  SandboxManager: Runtime['SandboxManager'];
  loadConfigFromString(text: string): unknown;
  quote(args: string[]): string;
}> {
  const [{ SandboxManager }, { loadConfigFromString }, { quote }] = (await Promise.all([
    import(RUNTIME),
    import(`${RUNTIME}/dist/utils/config-loader.js`),
    import(`${RUNTIME}/dist/utils/shell-quote.js`),
  ])) as [Runtime, { loadConfigFromString(text: string): unknown }, { quote(args: string[]): string }];
  return { SandboxManager, loadConfigFromString, quote };
}

/**
 * Runs the wrapped command as this process's child: `exec` makes the shell become bubblewrap, whose
 * `--die-with-parent` then ties the box to this root. Its exit is this process's, as the runtime's CLI's.
 */
function run(runtime: Runtime['SandboxManager'], wrapped: string, stdio: 'inherit' | number[], onError: (why: string) => void): ChildProcess {
  const started = spawn(`exec ${wrapped}`, { shell: true, stdio });
  started.on('error', (error) => onError(`cannot run the command: ${error.message}`));
  started.on('exit', (code, signal) => {
    runtime.cleanupAfterCommand();
    // As the runtime's CLI: a command ended by SIGTERM or SIGINT (a cancel) exits 0, by another signal 1, and says so.
    if (signal && signal !== 'SIGINT' && signal !== 'SIGTERM') process.stderr.write(`Process killed by signal: ${signal}\n`);
    quit(signal ? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : 1) : (code ?? 0));
  });
  return started;
}

/** A cold box: its settings and command from argv, its environment and stdio this process's. */
async function runNow(args: string[]): Promise<void> {
  const [settingsFile, separator, ...argv] = args;
  if (settingsFile === undefined || separator !== '--' || argv.length === 0) throw new Error('usage: box-root.js --settings <file> -- <command…>');
  const { SandboxManager, loadConfigFromString, quote } = await loadRuntime();
  const config = loadConfigFromString(readFileSync(settingsFile, 'utf8'));
  if (!config) throw new Error(`${settingsFile} is not a valid settings file for the sandbox runtime`);
  const initialized = SandboxManager.initialize(config);
  starting = initialized.catch(() => undefined);
  await initialized;
  const wrapped = await SandboxManager.wrapWithSandbox(quote(argv));
  child = run(SandboxManager, wrapped, 'inherit', (why) => {
    process.stderr.write(`Error: ${why}\n`);
    quit(1);
  });
}

/** A warm box: up with a policy that lets nothing through, then the one claim from stdin. */
async function runClaimed(): Promise<void> {
  const ripgrep: unknown = JSON.parse(process.argv[3] ?? '{"command":"rg"}');
  const { SandboxManager, loadConfigFromString, quote } = await loadRuntime();
  // Started, and one command wrapped and dropped: what the runtime finds once per process (its probes of bubblewrap,
  // its helpers' paths) is then found before the claim, not after it.
  const ready = SandboxManager.initialize(idle(ripgrep))
    .then(async () => {
      await SandboxManager.wrapWithSandbox('true');
      SandboxManager.cleanupAfterCommand();
    })
    .then(
      () => null,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
  starting = ready;
  void ready.then((failed) => report(failed === null ? 'ready' : `failed ${failed}`));

  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  // A line that is no JSON is said as a failure in main's catch, with the box's folder removed, not a crash in a listener.
  const claim = await new Promise<Claim | null>((resolve, reject) => {
    lines.once('line', (line) => {
      try {
        resolve(JSON.parse(line) as Claim);
      } catch {
        reject(new Error('its claim was not JSON'));
      }
    });
    lines.once('close', () => resolve(null));
  });
  lines.close();
  process.stdin.destroy();
  // The service went before it had a job for this box: it ends once the runtime knows its bridges, which then go too.
  if (claim === null) {
    await ready;
    quit(0);
  }

  const failed = await ready;
  if (failed !== null) return refuse(claim, `the sandbox runtime did not start: ${failed}`);
  const config = loadConfigFromString(readFileSync(claim.settingsFile, 'utf8'));
  if (!config) return refuse(claim, `${claim.settingsFile} is not a valid settings file for the sandbox runtime`);
  SandboxManager.updateConfig(config);
  process.chdir(claim.cwd);
  for (const name of Object.keys(process.env)) delete process.env[name];
  Object.assign(process.env, claim.env);
  const wrapped = await SandboxManager.wrapWithSandbox(quote(claim.argv));
  const stdio = [openSync(claim.stdinFile, 'r'), openSync(claim.stdoutFile, 'a', 0o600), openSync(claim.stderrFile, 'a', 0o600)];
  try {
    child = run(SandboxManager, wrapped, stdio, (why) => refuse(claim, why));
  } finally {
    for (const fd of stdio) closeSync(fd);
  }
  child.on('spawn', () => {
    report(`started ${child?.pid ?? 0}`);
    process.stdout.end();
  });
}

/** The policy a box holds until its claim: no domain, no write. */
function idle(ripgrep: unknown): unknown {
  return {
    network: { allowedDomains: [], deniedDomains: [], strictAllowlist: true, allowLocalBinding: false, allowAllUnixSockets: false },
    filesystem: { denyRead: [], allowRead: [], allowWrite: [], denyWrite: [], allowGitConfig: false },
    ripgrep,
  };
}

/** A claim the box cannot run: said to the service and in the job's stderr file, as the runtime's CLI would. */
function refuse(claim: Claim, why: string): void {
  try {
    const fd = openSync(claim.stderrFile, 'a', 0o600);
    try {
      writeSync(fd, `Error: ${why}\n`);
    } finally {
      closeSync(fd);
    }
  } catch {
    // The service says it too.
  }
  report(`failed ${why}`);
  quit(1);
}

if (mode === null) {
  process.stderr.write('usage: box-root.js --settings <file> -- <command…>, or --warm <ripgrep config as JSON>\n');
  process.exit(2);
}
(mode === 'cold' ? runNow(process.argv.slice(3)) : runClaimed()).catch((error: unknown) => {
  const why = error instanceof Error ? error.message : String(error);
  if (cold) process.stderr.write(`Error: ${why}\n`);
  report(`failed ${why}`);
  quit(1);
});
