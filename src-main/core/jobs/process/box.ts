/**
 * The box a sandboxed delegate runs in, whole (docs/ISOLATION.md "The box", SECURITY.md §3): the `claude` process,
 * its file tools, and every program they start, inside one Anthropic sandbox runtime (`@anthropic-ai/sandbox-runtime`,
 * the library Claude Code's own sandbox is built on: bubblewrap and socat on Linux, Seatbelt on macOS), started once
 * per job. Its only network is the gateway's port, through the runtime's proxy, plus the user's allowed domains; it
 * writes only the job's folder, its temp folder and its session's Claude config folder; it reads none of the service's
 * folders, other jobs' folders or the usual secret stores. Claude Code's own per-command sandbox is then off: it
 * describes itself to the model on every request, and costs every Bash call a sandbox of its own.
 *
 * The box's root process is the job's detached root (`boxRuntime`: this package's box root, src-main/cli/box-root.ts,
 * or from the sources the runtime's CLI): its proxy lives and dies with the job, so a restarted service finds its
 * boxes working, and killing the root's tree ends everything in it.
 */
import { lstat, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import { ENV, ServiceError } from '../../../contract/index.js';
import { isInside } from '../../fs/paths.js';
import type { JobRecord, SandboxPolicy } from '../../../contract/index.js';
import { onPath } from '../../../platform/sandbox-probe.js';
import { expandHome, presentSecretStores } from './sandbox.js';

/** Where the runtime's CLI lives (a dependency of this package: it ships with the app). */
export function boxRuntimeCli(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@anthropic-ai/sandbox-runtime/package.json')), 'dist', 'cli.js');
}

/**
 * How to start a box cold: `<node> <cli> --settings <file> -- <command…>`. The cli is this package's box root
 * (`dist/cli/box-root.js`, src-main/cli/box-root.ts) when the service runs from its bundle: it runs the box as the
 * runtime's own CLI does, but as its direct child, so the box ends when its root dies. From the sources there is
 * none, and the runtime's CLI runs it. The node: this process's own; in the tray app, whose Electron may not run as
 * Node (the RunAsNode fuse, docs/PACKAGING.md), the Node `npm start` ran (ENV.node), else `node` on the delegate's
 * PATH, as the bridge's launcher does.
 */
export interface BoxRuntime {
  node: string;
  cli: string;
}

export function boxRuntime(env: NodeJS.ProcessEnv = process.env, root: string | null = null): BoxRuntime {
  return { node: boxNode(env), cli: root ?? boxRuntimeCli() };
}

/** The Node a box's root runs on (boxRuntime's; a warm box's too): found without the runtime, which may be missing. */
export function boxNode(env: NodeJS.ProcessEnv = process.env): string {
  return process.versions.electron ? (env[ENV.node] ?? 'node') : process.execPath;
}

/** The ripgrep a box's runtime runs (`ripgrep()`): a program, and the name it is called by. */
export interface Ripgrep {
  command: string;
  argv0?: string;
}

export interface BoxSettingsInput {
  /**
   * The gateway's address (the delegate's ANTHROPIC_BASE_URL): its host and port are the box's one loopback door.
   * Null for a box with no door to it (verify commands, core/verify).
   */
  gatewayUrl: string | null;
  /** Programs in the box may listen on its own loopback (a test's server); on Linux each box has a loopback of its own. */
  allowLocalBinding?: boolean;
  /** The user's allowed domains (package registries …). */
  allowedDomains: readonly string[];
  /** Paths nothing in the box reads: the service's folders, other jobs', the secret stores, the user's denyRead. */
  denyRead: readonly string[];
  /** Paths inside a denied one that the box reads and writes (the session's Claude config folder). */
  allowRead: readonly string[];
  /** What the box writes: the job's folder, its temp folder, its Claude config folder, its add_dirs. */
  allowWrite: readonly string[];
  /** Paths inside a writable one that stay read-only (the user's `.git` of an in-place job). */
  denyWrite: readonly string[];
  /**
   * ripgrep, which the runtime uses on Linux to find the files it protects: `rg` on the PATH, else Claude Code's own
   * native binary, which is ripgrep when called by that name (its argv[0]).
   */
  ripgrep: Ripgrep;
}

/** The gateway's `host:port`, the one loopback entry the box's proxy lets through. */
export function gatewayDomain(gatewayUrl: string): string {
  const url = new URL(gatewayUrl);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.hostname}:${port}`;
}

const trimmed = (file: string): string => file.replace(/\/+$/, '') || '/';
const unique = (files: readonly string[]): string[] => [...new Set(files.map(trimmed))];

/** The runtime's settings file for one job (its schema: the pinned runtime's `SandboxRuntimeConfig`). */
export function boxSettings(input: BoxSettingsInput): string {
  return `${JSON.stringify(
    {
      network: {
        allowedDomains: unique([...(input.gatewayUrl === null ? [] : [gatewayDomain(input.gatewayUrl)]), ...input.allowedDomains]),
        deniedDomains: [],
        // What no entry names is refused, never asked about.
        strictAllowlist: true,
        allowLocalBinding: input.allowLocalBinding ?? false,
        allowAllUnixSockets: false,
      },
      filesystem: {
        denyRead: unique(input.denyRead),
        allowRead: unique(input.allowRead),
        allowWrite: unique(input.allowWrite),
        denyWrite: unique(input.denyWrite),
        allowGitConfig: false,
      },
      ripgrep: input.ripgrep,
    },
    null,
    2,
  )}\n`;
}

/** Variables the runtime sets inside the box that would send the delegate's loopback requests past its proxy. */
const PROXY_BYPASS = ['NO_PROXY', 'no_proxy'];

/**
 * Git inside the box, whatever the user's config says: no hooks, no fsmonitor, no signing (GIT_CONFIG_COUNT, which
 * overrides every config file).
 */
export const BOX_GIT_CONFIG: Readonly<Record<string, string>> = {
  'core.hooksPath': '/dev/null',
  'core.fsmonitor': 'false',
  'commit.gpgsign': 'false',
};

function gitConfigEnv(): string[] {
  const entries = Object.entries(BOX_GIT_CONFIG);
  return [`GIT_CONFIG_COUNT=${entries.length}`, ...entries.flatMap(([key, value], i) => [`GIT_CONFIG_KEY_${i}=${key}`, `GIT_CONFIG_VALUE_${i}=${value}`])];
}

export interface BoxedCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * `claude args…` run in the box the settings file describes. Inside, `env` takes away what would bypass the proxy
 * (the runtime lists loopback in NO_PROXY, and the gateway is on loopback), gives back the job's own TMPDIR (the
 * runtime sets its own), and sets git's config.
 */
export function boxCommand(runtime: BoxRuntime, settingsFile: string, inner: BoxedCommand): BoxedCommand {
  const boxed = boxedInner(inner);
  return { command: runtime.node, args: [runtime.cli, '--settings', settingsFile, '--', boxed.command, ...boxed.args], env: inner.env };
}

/** What runs inside the box, whether its runtime is the CLI (boxCommand) or a warm box (box-spares.ts). */
export function boxedInner(inner: BoxedCommand): BoxedCommand {
  const unset = PROXY_BYPASS.flatMap((name) => ['-u', name]);
  const tmp = inner.env.TMPDIR;
  return { command: 'env', args: [...unset, ...(tmp ? [`TMPDIR=${tmp}`] : []), ...gitConfigEnv(), inner.command, ...inner.args], env: inner.env };
}

/**
 * The box a sandboxed job runs in, from what admission decided for it (its record) and the user's policy as
 * it is at launch: nothing in it reads what its file tools may not. Null for a job whose programs are not sandboxed.
 */
export async function jobBox(
  rg: Ripgrep,
  record: JobRecord,
  policy: SandboxPolicy,
  env: Record<string, string>,
  denied: { dirs: readonly string[]; files: readonly string[] },
): Promise<BoxSettingsInput | null> {
  const decided = record.sandbox;
  if (decided?.programs !== 'sandboxed') return null;
  if (!env.ANTHROPIC_BASE_URL) throw new Error('The delegate has no gateway address, so its box would have no door to OpenRouter. Restart the service.');
  const home = env.HOME ?? homedir();
  const config = env.CLAUDE_CONFIG_DIR;
  // What the user closes to delegates wins over the folders a caller gives one: a folder inside one is refused, an
  // add_dir inside one stays unreadable (the runtime would otherwise open what it writes).
  const closed = [...(await presentSecretStores(home)), ...policy.denyRead.map((file) => expandHome(file, home))];
  const closing = (dir: string) => closed.find((entry) => isInside(dir, entry));
  const cwdClosed = closing(record.cwd);
  if (cwdClosed !== undefined) {
    throw new ServiceError(
      'policy_refused',
      `Nothing was started: the delegate's folder ${record.cwd} is inside ${cwdClosed}, which the user's settings close to delegates (sandbox.denyRead, or a secret store).`,
    );
  }
  return {
    gatewayUrl: env.ANTHROPIC_BASE_URL,
    allowedDomains: decided.domains ?? [],
    // Every job's temp folder is in one parent (job-temp.ts): none but its own is readable.
    denyRead: [...denied.dirs, ...denied.files, ...closed, ...(env.TMPDIR ? [path.dirname(env.TMPDIR)] : [])],
    allowRead: [...(config ? [config] : []), ...(env.TMPDIR ? [env.TMPDIR] : [])],
    allowWrite: [record.cwd, ...(env.TMPDIR ? [env.TMPDIR] : []), ...(config ? [config] : []), ...record.addDirs.filter((dir) => closing(dir) === undefined)],
    denyWrite: await ownGitDir(record),
    ripgrep: rg,
  };
}

/** The user's `.git` folder in an in-place job's folder: read-only in the box (a worktree's `.git` is a file, outside its writes). */
async function ownGitDir(record: JobRecord): Promise<string[]> {
  if (record.isolation?.mode === 'worktree') return [];
  const git = path.join(record.cwd, '.git');
  return (await lstat(git).then(
    (stat) => stat.isDirectory(),
    () => false,
  ))
    ? [git]
    : [];
}

/**
 * A session's own Claude Code config folder under the delegates' shared one (`<config>/sessions/<session id>`), made
 * for its first turn and kept for its follow-ups. A follow-up of a session begun before sessions had folders of their
 * own resumes from the shared folder, where its transcript is.
 */
export async function sessionConfigDir(shared: string, record: Pick<JobRecord, 'turn' | 'sessionId'>): Promise<string> {
  const own = path.join(shared, 'sessions', record.sessionId);
  if (
    record.turn > 1 &&
    !(await lstat(own).then(
      () => true,
      () => false,
    ))
  )
    return shared;
  await mkdir(own, { recursive: true, mode: 0o700 });
  return own;
}

/** `rg` on the PATH, else the delegate's own Claude Code called as `rg` (its native binary carries ripgrep). */
export async function ripgrep(claude: string, env: Record<string, string>): Promise<Ripgrep> {
  const rg = await onPath('rg', env);
  return rg ? { command: rg } : { command: claude, argv0: 'rg' };
}
