/**
 * Registers the MCP bridge with Claude Code at user scope (docs/ARCHITECTURE.md §6, "connection to Claude Code"),
 * finds out whether it is registered, and removes it. Shared by `openrouter-delegate install`,
 * `uninstall`, `doctor` and (later) the settings window.
 *
 * Writes go through the `claude` CLI (`claude mcp add` / `add-json` / `remove`), so Claude Code stays
 * the owner of its config file. Reads do not: `claude mcp get` and `list` have no JSON output (their
 * "Args:" line joins the arguments with spaces, so a path with a space is ambiguous), and both
 * health-check the server by starting it — which for this bridge starts the whole service. The user
 * scope is a plain JSON file instead (`mcpServers` at the top of `.claude.json`), read here exactly as
 * Claude Code 2.1.332 locates it; the e2e tests check that against the real CLI.
 */
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ENV } from '../../contract/index.js';
import { isRecord } from '../../common/errors.js';

/** The name the bridge is registered under; tool names become `mcp__openrouter__…` (allow rules rely on it). */
export const SERVER_NAME = 'openrouter';

/** Variables that say *which* installation the bridge talks to: set by install, never carried over. */
const MANAGED_ENV = [ENV.home] as const;

/** A stdio MCP server as Claude Code starts it. */
export interface StdioCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** What Claude Code's config holds under the name; fields it does not have are null / empty. */
export interface RegisteredServer {
  /** `stdio` when the entry names no type (Claude Code's own default). */
  type: string;
  command: string | null;
  args: string[];
  env: Record<string, string>;
  url: string | null;
}

export type RegistrationState =
  | { registered: false; configFile: string }
  | {
      registered: true;
      configFile: string;
      server: RegisteredServer;
      /** True when Claude Code would start exactly this installation's bridge. */
      matches: boolean;
      /** What differs from this installation's command, in words (empty when it matches). */
      differences: string[];
    };

export type InstallOutcome =
  | { action: 'unchanged'; configFile: string; command: StdioCommand }
  | { action: 'added'; configFile: string; command: StdioCommand }
  | {
      action: 'replaced';
      configFile: string;
      command: StdioCommand;
      /** Null when Claude Code said "already exists" but its entry could not be read. */
      previous: RegisteredServer | null;
      differences: string[];
      /** Names (never values) of the user's own env entries carried over to the new registration. */
      keptEnv: string[];
    };

export type UninstallOutcome = { action: 'removed'; configFile: string; previous: RegisteredServer | null } | { action: 'absent'; configFile: string };

export interface ClaudeRunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the `claude` CLI with these arguments (and stdin), to completion. */
export interface ClaudeRunner {
  /** What the messages call it, e.g. its path. */
  readonly label: string;
  run(args: readonly string[], input?: string): Promise<ClaudeRunResult>;
}

export class ClaudeCommandError extends Error {
  readonly result: ClaudeRunResult;
  constructor(args: readonly string[], result: ClaudeRunResult, advice: string) {
    const said = (result.stderr.trim() || result.stdout.trim()).split('\n').slice(0, 5).join(' ').slice(0, 500);
    super(`\`claude ${args.join(' ')}\` failed (${result.code === null ? 'killed' : `exit ${result.code}`})${said ? `: ${said}` : ''}. ${advice}`);
    this.name = 'ClaudeCommandError';
    this.result = result;
  }
}

export interface BridgeCommandInput {
  /** The Node.js that runs the bridge (process.execPath of the CLI). */
  nodePath: string;
  /** Absolute path of dist/bridge/openrouter-delegate-mcp.js. */
  bridgeScript: string;
  /**
   * A launcher that runs the bridge by itself (the packaged app's resources/bin/openrouter-delegate-mcp):
   * when set, it is the whole command and nodePath / bridgeScript are not used.
   */
  launcher?: string | undefined;
  /** OPENROUTER_DELEGATE_HOME in force (Locations.home), passed on so the bridge talks to the same service. */
  home: string | null;
}

/** The command that starts this installation's bridge: absolute paths only, nothing found through PATH. */
export function bridgeCommand({ nodePath, bridgeScript, launcher, home }: BridgeCommandInput): StdioCommand {
  const env: Record<string, string> = home ? { [ENV.home]: path.resolve(home) } : {};
  if (launcher) return { command: path.resolve(launcher), args: [], env };
  return { command: path.resolve(nodePath), args: [path.resolve(bridgeScript)], env };
}

/**
 * Claude Code's global config file, which holds the user-scope MCP servers. As Claude Code 2.1.332
 * decides it: a non-empty legacy `.config.json` in its config folder (CLAUDE_CONFIG_DIR, else
 * ~/.claude) wins; otherwise `.claude.json` in CLAUDE_CONFIG_DIR, else in the home folder.
 */
export async function claudeUserConfigFile(env: NodeJS.ProcessEnv, homeDir: string): Promise<string> {
  const configDir = env.CLAUDE_CONFIG_DIR?.trim();
  const legacy = path.join(configDir || path.join(homeDir, '.claude'), '.config.json');
  const legacyStats = await stat(legacy).catch(() => null);
  if (legacyStats?.isFile() && legacyStats.size > 0) return legacy;
  return path.join(configDir || homeDir, '.claude.json');
}

/**
 * The user-scope entry `name` in the text of Claude Code's global config; null when there is none.
 * Throws when the text is not a JSON object (Claude Code itself would refuse such a file).
 */
export function parseUserScopeServer(text: string, name: string, file: string): RegisteredServer | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(
      `Claude Code's config ${file} is not valid JSON. Run \`claude mcp list\` to see what Claude Code makes of it, and repair or move the file.`,
    );
  }
  if (!isRecord(json)) throw new Error(`Claude Code's config ${file} is not a JSON object. Repair or move the file.`);
  const servers = json.mcpServers;
  if (!isRecord(servers)) return null;
  const entry = servers[name];
  if (!isRecord(entry)) return null;
  const env: Record<string, string> = {};
  if (isRecord(entry.env)) for (const [key, value] of Object.entries(entry.env)) if (typeof value === 'string') env[key] = value;
  return {
    type: typeof entry.type === 'string' ? entry.type : 'stdio',
    command: typeof entry.command === 'string' ? entry.command : null,
    args: Array.isArray(entry.args) ? entry.args.filter((arg): arg is string => typeof arg === 'string') : [],
    env,
    url: typeof entry.url === 'string' ? entry.url : null,
  };
}

/** A command line as a shell would show it; each argument with a space or quote is quoted. */
export function formatCommand(command: string | null, args: readonly string[]): string {
  const quote = (word: string) => (word === '' || /[\s"'\\$`]/.test(word) ? `'${word.replace(/'/g, `'\\''`)}'` : word);
  return [command ?? '(none)', ...args].map(quote).join(' ');
}

/** Why `registered` would not start exactly `expected`, one phrase per difference (empty: it would). */
export function registrationDifferences(expected: StdioCommand, registered: RegisteredServer): string[] {
  if (registered.type !== 'stdio') return [`it is a ${registered.type} server${registered.url ? ` at ${registered.url}` : ''}, not this stdio bridge`];
  const differences: string[] = [];
  const was = formatCommand(registered.command, registered.args);
  const wanted = formatCommand(expected.command, expected.args);
  if (was !== wanted) differences.push(`command \`${was}\` instead of \`${wanted}\``);
  for (const name of MANAGED_ENV) {
    const have = registered.env[name];
    const want = expected.env[name];
    if (have === want) continue;
    if (want === undefined) differences.push(`${name}=${have ?? ''} (this installation uses the default locations)`);
    else if (have === undefined) differences.push(`${name} not set (this installation uses ${want})`);
    else differences.push(`${name}=${have} instead of ${want}`);
  }
  return differences;
}

/** Reads Claude Code's user-scope registration of `name` and compares it with `expected`. */
export async function lookupRegistration(input: { configFile: string; expected: StdioCommand; name?: string }): Promise<RegistrationState> {
  const { configFile, expected } = input;
  let text: string;
  try {
    text = await readFile(configFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { registered: false, configFile };
    throw new Error(`Cannot read Claude Code's config ${configFile}: ${(error as Error).message}`);
  }
  const server = parseUserScopeServer(text, input.name ?? SERVER_NAME, configFile);
  if (server === null) return { registered: false, configFile };
  const differences = registrationDifferences(expected, server);
  return { registered: true, configFile, server, matches: differences.length === 0, differences };
}

/** `claude mcp add --scope user <name> [-e K=V …] -- <command> <args…>` (the name before -e: -e takes several values). */
export function mcpAddArgs(name: string, command: StdioCommand): string[] {
  const env = Object.entries(command.env).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
  return ['mcp', 'add', '--scope', 'user', name, ...env, '--', command.command, ...command.args];
}

/** `claude mcp add-json --scope user <name> -`, with the JSON on stdin: env values never reach a process listing. */
export function mcpAddJsonArgs(name: string): string[] {
  return ['mcp', 'add-json', '--scope', 'user', name, '-'];
}

export function mcpRemoveArgs(name: string): string[] {
  return ['mcp', 'remove', '--scope', 'user', name];
}

/** Claude Code 2.1.332: "MCP server openrouter already exists in user config". */
const ALREADY_EXISTS = /already exists/i;
/** Claude Code 2.1.332: `No MCP server named "openrouter" in user scope`. */
const NOT_FOUND = /no mcp server|not found|does not exist/i;

export interface ClaudeRegistrationDeps {
  runner: ClaudeRunner;
  /** Claude Code's global config (claudeUserConfigFile). */
  configFile: string;
  /** This installation's bridge command (bridgeCommand). */
  expected: StdioCommand;
  name?: string;
}

export class ClaudeRegistration {
  private readonly deps: ClaudeRegistrationDeps;
  private readonly name: string;

  constructor(deps: ClaudeRegistrationDeps) {
    this.deps = deps;
    this.name = deps.name ?? SERVER_NAME;
  }

  lookup(): Promise<RegistrationState> {
    return lookupRegistration({ configFile: this.deps.configFile, expected: this.deps.expected, name: this.name });
  }

  /**
   * Registers this installation's bridge. Idempotent: an identical registration is left alone; a
   * different one is removed and added again, keeping the user's own env entries (e.g. a key they
   * put there) but not the ones that choose the installation.
   */
  async install(): Promise<InstallOutcome> {
    const { configFile, expected } = this.deps;
    const state = await this.lookup();
    if (state.registered && state.matches) return { action: 'unchanged', configFile, command: expected };
    if (!state.registered) {
      const result = await this.deps.runner.run(mcpAddArgs(this.name, expected));
      if (result.code === 0) return { action: 'added', configFile, command: expected };
      // Registered after all, where this lookup could not see it (another config file): replace it.
      if (!ALREADY_EXISTS.test(result.stderr + result.stdout)) throw this.failure(mcpAddArgs(this.name, expected), result);
      await this.remove();
      await this.add(expected);
      return {
        action: 'replaced',
        configFile,
        command: expected,
        previous: null,
        differences: ['it was registered in a config file this check does not read'],
        keptEnv: [],
      };
    }
    const kept = state.server.type === 'stdio' ? keptEnv(state.server.env) : {};
    const command: StdioCommand = { ...expected, env: { ...kept, ...expected.env } };
    await this.remove();
    try {
      await this.add(command);
    } catch (error) {
      if (error instanceof ClaudeCommandError)
        error.message += ' The previous registration was already removed: run `openrouter-delegate install` again once this is fixed.';
      throw error;
    }
    return { action: 'replaced', configFile, command, previous: state.server, differences: state.differences, keptEnv: Object.keys(kept) };
  }

  /** Removes the user-scope registration; not being registered is not an error. */
  async uninstall(): Promise<UninstallOutcome> {
    const { configFile } = this.deps;
    const state = await this.lookup();
    const args = mcpRemoveArgs(this.name);
    const result = await this.deps.runner.run(args);
    if (result.code === 0) return { action: 'removed', configFile, previous: state.registered ? state.server : null };
    if (!state.registered || NOT_FOUND.test(result.stderr + result.stdout)) return { action: 'absent', configFile };
    throw this.failure(args, result);
  }

  private async add(command: StdioCommand): Promise<void> {
    const onlyManaged = Object.keys(command.env).every((key) => (MANAGED_ENV as readonly string[]).includes(key));
    // Our own env is a folder path; the user's kept entries may be keys, which must not sit in argv.
    const args = onlyManaged ? mcpAddArgs(this.name, command) : mcpAddJsonArgs(this.name);
    const input = onlyManaged ? undefined : JSON.stringify({ type: 'stdio', command: command.command, args: command.args, env: command.env });
    const result = await this.deps.runner.run(args, input);
    if (result.code !== 0) throw this.failure(args, result);
  }

  private async remove(): Promise<void> {
    const args = mcpRemoveArgs(this.name);
    const result = await this.deps.runner.run(args);
    if (result.code !== 0 && !NOT_FOUND.test(result.stderr + result.stdout)) throw this.failure(args, result);
  }

  private failure(args: readonly string[], result: ClaudeRunResult): ClaudeCommandError {
    return new ClaudeCommandError(
      args,
      result,
      `Check that ${this.deps.runner.label} is Claude Code (\`claude --version\`) and that ${this.deps.configFile} is writable, then try again.`,
    );
  }
}

function keptEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !(MANAGED_ENV as readonly string[]).includes(key)));
}

export interface ClaudeRunnerOptions {
  claudePath: string;
  env: NodeJS.ProcessEnv;
  /** Kill `claude` after this long (default 60 s): it must never hang an install. */
  timeoutMs?: number;
}

/** Runs the real `claude`, without a shell, with a bounded run time. */
export function claudeRunner({ claudePath, env, timeoutMs = 60_000 }: ClaudeRunnerOptions): ClaudeRunner {
  return {
    label: claudePath,
    run: (args, input) =>
      new Promise((resolve, reject) => {
        const child = spawn(claudePath, [...args], { env, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, timeout: timeoutMs, killSignal: 'SIGKILL' });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
        child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
        child.once('error', (error) => reject(new Error(`Could not run Claude Code's CLI at ${claudePath}: ${error.message}`)));
        child.once('close', (code) => resolve({ code, stdout, stderr }));
        // claude may exit before reading stdin; that EPIPE is no error of ours.
        child.stdin.on('error', () => undefined);
        child.stdin.end(input ?? '');
      }),
  };
}

/** `claude --version` prints "2.1.332 (Claude Code)": the version number, or the first line as is. */
export function parseClaudeVersion(output: string): string | null {
  const line = output.trim().split('\n')[0]?.trim() ?? '';
  if (line === '') return null;
  return /\d+\.\d+\.\d+[\w.+-]*/.exec(line)?.[0] ?? line;
}
