/**
 * The doctor's checks (doctor.ts runs them and builds the report): one function per check, each giving a verdict that
 * says what was found and, when something does not hold, what to do. The pure judges (judgeRuntimeFiles,
 * judgeSandbox, judgeWorktrees) decide from facts already gathered, so their verdicts are tested without a disk.
 *
 * Everything that touches the outside (claude, the service, the keychain, OpenRouter, the disk) comes in through
 * DoctorDeps, so each verdict can be tested with fakes; the real wiring is setup/context.ts.
 */
import type { Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { APP_VERSION, ENV, ServiceError } from '../../contract/index.js';
import { defaultSettings } from '../../contract/index.js';
import type { CheckStatus, DelegateKeyStatus, ErrorCode, KeyBalance, SandboxPolicy, SavedVerify, SecretsStatus } from '../../contract/index.js';
import type { ServiceCall } from '../../contract/api.js';
import type { Locations } from '../../platform/locations.js';
import type { SandboxAvailability } from '../../platform/sandbox-probe.js';
import type { OpenRouterClient } from '../openrouter/client.js';
import type { SecretStore } from '../secrets/secret-store.js';
import { formatCommand, parseClaudeVersion } from './claude-registration.js';
import type { ClaudeRunner, RegistrationState, StdioCommand } from './claude-registration.js';
import { errorMessage } from '../../common/errors.js';
import { formatBytes, formatMs, formatUsd } from '../../common/format.js';
import { KEY_CAP_FIX, keyCapWarning, limitResetText } from '../../common/key-cap.js';
import { folderSize } from '../jobs/git/worktree-cleanup.js';

/** The calls the doctor makes on a running service. */
export interface ServiceLink {
  call: ServiceCall;
  close(): void;
}

/** What the doctor needs to know about a path: its kind, permission bits and owner. */
export interface PathFacts {
  kind: 'directory' | 'file' | 'socket' | 'symlink' | 'other';
  mode: number;
  uid: number;
}

export interface DoctorDeps {
  locations: Locations;
  env: NodeJS.ProcessEnv;
  /** Finds `claude` (OPENROUTER_DELEGATE_CLAUDE, the claudePath setting, PATH); throws `claude_missing`. */
  locateClaude: () => Promise<string>;
  /** A runner for the `claude` found. */
  claudeRunner: (claudePath: string) => ClaudeRunner;
  /** Claude Code's user-scope registration of the bridge (ClaudeRegistration.lookup). */
  lookupRegistration: () => Promise<RegistrationState>;
  /** This installation's bridge command, and whether its script exists. */
  expectedBridge: StdioCommand;
  bridgeScriptExists: () => Promise<boolean>;
  /** A connection to the running service, or null when none answers (other failures throw). */
  connectService: () => Promise<ServiceLink | null>;
  secrets: Pick<SecretStore, 'get' | 'keychainStatus'>;
  openRouter: Pick<OpenRouterClient, 'listModels' | 'getKeyInfo'>;
  /** The API root `openRouter` talks to (baseUrlFrom), named in the answer. */
  baseUrl: string;
  /**
   * Loads the settings file: the store's `problem`, whether the file exists, and the sandbox settings in force (the
   * defaults when the file is missing or broken; absent: the defaults).
   */
  loadSettings: () => Promise<{
    file: string;
    exists: boolean;
    problem: string | undefined;
    sandbox?: SandboxPolicy;
    perDayUsd?: number;
    verifyCommands?: SavedVerify[];
  }>;
  /** Whether a delegate's box runs here (platform/sandbox-probe.ts's probeSandbox). */
  probeSandbox: () => Promise<SandboxAvailability>;
  /** Facts about a path without following links; null when it does not exist. Default: lstat. */
  inspectPath?: (file: string) => Promise<PathFacts | null>;
  /** Our uid (undefined where there is none, i.e. Windows). Default: process.getuid(). */
  uid?: number | undefined;
  platform?: NodeJS.Platform;
  /** How many worktrees `<data>/worktrees` holds and their files' size (worktree-cleanup.ts's folderSize). Default: that walk. */
  measureWorktrees?: () => Promise<{ count: number; bytes: number; complete: boolean }>;
  /** Milliseconds, for the OpenRouter round trip. Default: performance.now. */
  now?: () => number;
  /** The folder the doctor runs in (the CLI's), for the verify commands of its repository; absent from the settings page. */
  projectFolder?: string | undefined;
  /** This installation's `openrouter-delegate` script and its Node, for the PATH check; absent for the packaged app. */
  cli?: { nodePath: string; script: string } | undefined;
}

/** A check's answer before it is given its id and title. */
export interface Verdict {
  status: CheckStatus;
  /** What was found. */
  summary: string;
  /** What to do about it; absent when there is nothing to do. */
  fix?: string;
  /** How long the check's request took, when that is part of the answer (OpenRouter). */
  durationMs?: number;
}

export const ok = (summary: string, extra: Partial<Verdict> = {}): Verdict => ({ status: 'ok', summary, ...extra });
export const warn = (summary: string, fix?: string): Verdict => ({ status: 'warn', summary, ...(fix ? { fix } : {}) });
export const fail = (summary: string, fix?: string): Verdict => ({ status: 'fail', summary, ...(fix ? { fix } : {}) });

/** OpenRouter answered, and said no: the key cannot be used as it is. Anything else means "not checked". */
const KEY_REFUSED: ReadonlySet<ErrorCode> = new Set(['openrouter_unauthorized', 'openrouter_payment_required', 'openrouter_forbidden']);

const SET_KEY = 'Run `openrouter-delegate key set` (or set OPENROUTER_API_KEY in the environment of the service).';
const INSTALL = 'Run `openrouter-delegate install`.';

/** Runs one check, turning an unexpected throw into a failed check rather than a failed doctor. */
async function guarded(check: () => Promise<Verdict>): Promise<Verdict> {
  try {
    return await check();
  } catch (error) {
    return fail(`the check itself failed: ${errorMessage(error)}`);
  }
}

export function checkClaude(deps: DoctorDeps): Promise<Verdict> {
  return guarded(async () => {
    let claudePath: string;
    try {
      claudePath = await deps.locateClaude();
    } catch (error) {
      return fail(errorMessage(error));
    }
    const result = await deps.claudeRunner(claudePath).run(['--version']);
    const version = result.code === 0 ? parseClaudeVersion(result.stdout) : null;
    if (version === null) {
      const said = (result.stderr.trim() || result.stdout.trim()).split('\n')[0] ?? '';
      return fail(
        `${claudePath} did not answer \`claude --version\` (${result.code === null ? 'killed' : `exit ${result.code}`})${said ? `: ${said}` : ''}.`,
        'Reinstall Claude Code (`npm install -g @anthropic-ai/claude-code`), or point OPENROUTER_DELEGATE_CLAUDE or the `claudePath` setting at a working `claude`.',
      );
    }
    return ok(`version ${version} at ${claudePath}.`);
  });
}

export function checkRegistration(deps: DoctorDeps): Promise<Verdict> {
  return guarded(async () => {
    const script = deps.expectedBridge.args[0] ?? deps.expectedBridge.command;
    if (!(await deps.bridgeScriptExists()))
      return fail(`the bridge is not built: ${script} is missing.`, 'Run `npm run build` (or reinstall), then `openrouter-delegate install`.');
    let state: RegistrationState;
    try {
      state = await deps.lookupRegistration();
    } catch (error) {
      return fail(errorMessage(error));
    }
    if (!state.registered) return fail(`not registered (no user-scope MCP server "openrouter" in ${state.configFile}).`, INSTALL);
    if (state.matches) return ok(`as "openrouter" (user scope, ${state.configFile}): ${formatCommand(deps.expectedBridge.command, deps.expectedBridge.args)}.`);
    return warn(
      `"openrouter" is registered, but not with this installation's bridge: ${state.differences.join('; ')}.`,
      'Run `openrouter-delegate install` to point it at this installation.',
    );
  });
}

export async function checkRunningService(service: ServiceLink): Promise<Verdict> {
  const status = await service.call('service.status', {});
  const what = `running (pid ${status.pid}, ${status.host}, version ${status.version}, up ${status.uptimeSeconds} s, ${status.clients} client${status.clients === 1 ? '' : 's'}).`;
  if (status.version !== APP_VERSION) {
    return warn(`${what} This CLI is version ${APP_VERSION}.`, 'Restart it with `openrouter-delegate stop`; the bridge starts the new version when needed.');
  }
  return ok(what);
}

async function realInspect(file: string): Promise<PathFacts | null> {
  let stats: Stats;
  try {
    stats = await lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const kind = stats.isSymbolicLink() ? 'symlink' : stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : stats.isSocket() ? 'socket' : 'other';
  return { kind, mode: stats.mode & 0o7777, uid: stats.uid };
}

export function checkRuntime(deps: DoctorDeps, serviceRunning: boolean): Promise<Verdict> {
  return guarded(async () => {
    const platform = deps.platform ?? process.platform;
    if (platform === 'win32') return ok('named pipe in your profile folder (POSIX permissions do not apply on Windows).');
    const inspect = deps.inspectPath ?? realInspect;
    const { runtime, tokenFile, socketPath } = deps.locations;
    const [dir, token, socket] = await Promise.all([inspect(runtime), inspect(tokenFile), inspect(socketPath)]);
    const uid = deps.uid !== undefined ? deps.uid : process.getuid?.();
    return judgeRuntimeFiles({ runtime, tokenFile, socketPath, dir, token, socket, uid, serviceRunning });
  });
}

export interface RuntimeFacts {
  runtime: string;
  tokenFile: string;
  socketPath: string;
  dir: PathFacts | null;
  token: PathFacts | null;
  socket: PathFacts | null;
  uid: number | undefined;
  serviceRunning: boolean;
}

function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}

/** The verdict on the socket folder, the token and the socket (docs/ARCHITECTURE.md §2: 0700 folder, 0600 files, ours). */
export function judgeRuntimeFiles(facts: RuntimeFacts): Verdict {
  const { runtime, dir, uid } = facts;
  if (dir === null) {
    return facts.serviceRunning
      ? fail(`${runtime} is missing although the service is running.`, 'Restart the service: `openrouter-delegate stop`, then `openrouter-delegate serve`.')
      : ok(`${runtime} does not exist yet; the service creates it (0700) when it starts.`);
  }
  if (dir.kind === 'symlink')
    return fail(`${runtime} is a symbolic link, so the service refuses it.`, `Remove the link (\`rm ${runtime}\`); the service creates the folder again.`);
  if (dir.kind !== 'directory') return fail(`${runtime} is not a folder.`, `Remove it (\`rm ${runtime}\`); the service creates the folder again.`);
  if (uid !== undefined && dir.uid !== uid) {
    return fail(`${runtime} belongs to uid ${dir.uid}, not to you (uid ${uid}).`, `Remove it, or set ${ENV.home} to a folder of your own.`);
  }
  if ((dir.mode & 0o777) !== 0o700) {
    return fail(
      `${runtime} has mode ${octal(dir.mode)}, not 0700${dir.mode & 0o077 ? ': other users could reach the service socket' : ''}.`,
      `Run \`chmod 700 ${runtime}\`.`,
    );
  }
  const files: Array<[string, string, PathFacts | null, 'file' | 'socket']> = [
    ['token', facts.tokenFile, facts.token, 'file'],
    ['socket', facts.socketPath, facts.socket, 'socket'],
  ];
  const present: string[] = [];
  for (const [label, file, info, kind] of files) {
    if (info === null) continue;
    if (info.kind !== kind)
      return fail(
        `the ${label} ${file} is ${info.kind === 'symlink' ? 'a symbolic link' : `not a ${kind === 'file' ? 'regular file' : 'socket'}`}.`,
        `Stop the service (\`openrouter-delegate stop\`) and remove ${file}; the next start writes it again.`,
      );
    if (uid !== undefined && info.uid !== uid)
      return fail(`the ${label} ${file} belongs to uid ${info.uid}, not to you (uid ${uid}).`, `Stop the service and remove ${file}.`);
    if ((info.mode & 0o077) !== 0)
      return fail(
        `the ${label} ${file} has mode ${octal(info.mode)}, not 0600.`,
        `Run \`chmod 600 ${file}\`, or restart the service (\`openrouter-delegate stop\`), which writes it again.`,
      );
    present.push(`${label} ${octal(info.mode)}`);
  }
  const rest = present.length > 0 ? `, ${present.join(', ')}` : facts.serviceRunning ? '' : ' (no token or socket while the service is not running)';
  return ok(`${runtime} 0700${rest}, all yours.`);
}

export function checkSettings(deps: DoctorDeps): Promise<Verdict> {
  return guarded(async () => {
    const { file, exists, problem } = await deps.loadSettings();
    if (problem) return fail(problem);
    return ok(exists ? `${file} is valid.` : `no ${file} yet: the defaults are in force.`);
  });
}

export function checkSandbox(deps: DoctorDeps): Promise<Verdict> {
  return guarded(async () => {
    // A settings file that cannot be read leaves the defaults in force (the settings check says why).
    const policy = (await deps.loadSettings().catch(() => undefined))?.sandbox ?? defaultSettings().sandbox;
    return judgeSandbox(policy, await deps.probeSandbox());
  });
}

/**
 * The verdict on the sandbox for delegates' programs (docs/ISOLATION.md "The box"), against the settings: a sandbox
 * that is missing fails only where the settings require one for programs a delegate may run.
 */
export function judgeSandbox(policy: Pick<SandboxPolicy, 'programs' | 'use'>, availability: SandboxAvailability): Verdict {
  const where = availability.available ? `${availability.via} is available` : `not available: ${availability.reason}`;
  if (policy.programs === 'off') return ok(`programs are off in the settings: delegates run none (the sandbox: ${where}).`);
  if (policy.use === 'off') {
    return warn(
      `the sandbox is off in the settings: programs a delegation pre-approves run unsandboxed, as you, with your files and network (the sandbox: ${where}).`,
      availability.available
        ? 'Set the sandbox to required: `openrouter-mcp-config --sandbox required`.'
        : `${capitalized(availability.fix)}; then set the sandbox to required: \`openrouter-mcp-config --sandbox required\`.`,
    );
  }
  if (availability.available) return ok(`runs each delegate whole in a box of its own (its Claude Code, file tools and programs): ${availability.via}.`);
  if (policy.use === 'required') {
    return fail(`${where}. The settings require it, so a delegation whose delegate could run programs is refused.`, `${capitalized(availability.fix)}.`);
  }
  return warn(`${where}. Programs run unsandboxed, only when a delegation pre-approves them, and the job says so.`, `${capitalized(availability.fix)}.`);
}

function capitalized(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

/**
 * A keyring where no desktop started one (SSH, a server): the commands, as tests/e2e/headless-keyring.test.ts runs
 * them, and the alternative with what it costs.
 */
export const HEADLESS_KEYRING =
  'Without a desktop (SSH, a server): `sudo apt-get install gnome-keyring dbus-x11`, then in the shell you start Claude Code from: ' +
  '`eval "$(dbus-launch --sh-syntax)"`, `read -rs -p "Keyring password: " pw; printf %s "$pw" | gnome-keyring-daemon --unlock --components=secrets`, ' +
  "`openrouter-delegate key set`. Or set OPENROUTER_API_KEY in that shell instead: simpler, but any program you run can then read it from the service's environment.";

export function checkKeychain(deps: DoctorDeps): Promise<Verdict> {
  return guarded(async () => {
    const keychain = deps.secrets.keychainStatus();
    if (keychain.available) return ok(`${keychain.backend} is available.`);
    const envKey = Boolean(deps.env[ENV.apiKey]?.trim());
    const why = `${keychain.backend} is unavailable: ${keychain.problem ?? 'no reason given'}`;
    const linux = (deps.platform ?? process.platform) === 'linux';
    return envKey
      ? warn(
          `${why} The key comes from OPENROUTER_API_KEY, so nothing needs it now.`,
          `To keep the key in the keychain instead, unlock or install a keyring, then run \`openrouter-delegate key set\`.${linux ? ` ${HEADLESS_KEYRING}` : ''}`,
        )
      : fail(why, linux ? HEADLESS_KEYRING : undefined);
  });
}

function keySourceText(source: SecretsStatus['apiKey']['source']): string {
  return source === 'environment' ? 'from OPENROUTER_API_KEY' : source === 'keychain' ? 'from the OS keychain' : 'none';
}

function describeBalance(key: KeyBalance): string {
  const label = key.label ? ` (${key.label})` : '';
  if (key.limitUsd === null) return `accepted by OpenRouter${label}, no spending limit on the key`;
  return `accepted by OpenRouter${label}, ${formatUsd(key.remainingUsd ?? 0)} of its ${formatUsd(key.limitUsd)} limit left, ${limitResetText(key.limitReset ?? null)}`;
}

/**
 * An accepted key: ok, or a warning when its own limit is no backstop for the day budget (common/key-cap.ts); when
 * the delegates use a key the service made (capped by OpenRouter at the day budget), that key's state instead.
 */
async function judgeKey(deps: DoctorDeps, source: string, key: KeyBalance, delegateKey?: DelegateKeyStatus): Promise<Verdict> {
  const summary = `${source}: ${describeBalance(key)}.`;
  if (delegateKey?.mode === 'own') {
    if (delegateKey.problem) return fail(`${summary} Delegates are refused: ${delegateKey.problem}`);
    return ok(`${summary} Delegates use a key the service made, limited by OpenRouter to ${formatUsd(delegateKey.limitUsd ?? 0)} a day.`);
  }
  const settings = await deps.loadSettings().catch(() => undefined);
  const warning = keyCapWarning(key, settings?.perDayUsd ?? defaultSettings().budgets.perDayUsd);
  return warning === null ? ok(summary) : warn(`${summary} ${warning}`, KEY_CAP_FIX);
}

/** A failed key check: refused by OpenRouter is a failure; could not ask is a warning. */
function keyError(source: string, code: ErrorCode | undefined, message: string): Verdict {
  if (code !== undefined && KEY_REFUSED.has(code)) return fail(`${source}, but ${message}`);
  return warn(
    `${source}, but it could not be checked: ${message}`,
    'See the OpenRouter check; run `openrouter-delegate doctor` again once OpenRouter answers.',
  );
}

export function checkKey(deps: DoctorDeps, service: ServiceLink | null): Promise<Verdict> {
  return guarded(async () => {
    if (service) {
      // The service's key is the one delegations use (its environment may differ from ours).
      const balance = await service.call('balance.get', { refresh: true });
      if (balance.keySource === 'none') return fail(balance.keyProblem ?? 'no key.', balance.keyProblem ? undefined : SET_KEY);
      const source = `${keySourceText(balance.keySource)} (the service's)`;
      const status = await service.call('service.status', {}).catch(() => null);
      if (balance.key) return judgeKey(deps, source, balance.key, status?.delegateKey);
      return keyError(source, balance.keyProblemCode, balance.keyProblem ?? 'no reason given.');
    }
    let secret: ReturnType<DoctorDeps['secrets']['get']>;
    try {
      secret = deps.secrets.get('api');
    } catch (error) {
      return fail(errorMessage(error));
    }
    if (secret === null) return fail('no key in the OS keychain, and OPENROUTER_API_KEY is not set.', SET_KEY);
    const source = keySourceText(secret.source);
    try {
      return await judgeKey(deps, source, await deps.openRouter.getKeyInfo(secret.value));
    } catch (error) {
      return keyError(source, error instanceof ServiceError ? error.code : undefined, errorMessage(error));
    }
  });
}

export function checkOpenRouter(deps: DoctorDeps): Promise<Verdict> {
  return guarded(async () => {
    const now = deps.now ?? (() => performance.now());
    const started = now();
    try {
      const body = await deps.openRouter.listModels();
      const durationMs = Math.round(now() - started);
      const data = typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined;
      const count = Array.isArray(data) ? `${data.length} models` : 'answered';
      return ok(`GET /v1/models at ${hostOf(deps.baseUrl)}: ${count} in ${formatMs(durationMs)}.`, { durationMs });
    } catch (error) {
      const durationMs = Math.round(now() - started);
      return { ...fail(`${errorMessage(error)} (after ${formatMs(durationMs)})`), durationMs };
    }
  });
}

/** Above this, the kept worktrees are worth a look: leftover worktrees are where gigabytes go unnoticed. */
export const WORKTREES_WARN_BYTES = 5e9;

async function measureWorktrees(data: string): Promise<{ count: number; bytes: number; complete: boolean }> {
  const dir = path.join(data, 'worktrees');
  const count = (await readdir(dir, { withFileTypes: true }).catch(() => [])).filter((entry) => entry.isDirectory()).length;
  return { count, ...(await folderSize(dir)) };
}

export function checkWorktrees(deps: DoctorDeps): Promise<Verdict> {
  return guarded(async () => {
    const measured = await (deps.measureWorktrees ?? (() => measureWorktrees(deps.locations.data)))();
    return judgeWorktrees(measured);
  });
}

export function judgeWorktrees({ count, bytes, complete }: { count: number; bytes: number; complete: boolean }): Verdict {
  if (count === 0) return ok('none kept.');
  const summary = `${count} kept, ${complete ? '' : 'at least '}${formatBytes(bytes)}.`;
  if (bytes <= WORKTREES_WARN_BYTES) return ok(summary);
  return warn(
    `${summary} More than ${formatBytes(WORKTREES_WARN_BYTES)}.`,
    'Run `openrouter-delegate worktrees` to see which are taken (their work is in another branch), then `openrouter-delegate worktrees --remove-taken` to remove those.',
  );
}

function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}
