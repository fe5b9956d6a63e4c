import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ClaudeCommandError,
  ClaudeRegistration,
  bridgeCommand,
  claudeUserConfigFile,
  formatCommand,
  lookupRegistration,
  mcpAddArgs,
  parseClaudeVersion,
  parseUserScopeServer,
  registrationDifferences,
} from '../../../src-main/core/setup/claude-registration.js';
import type { ClaudeRunResult, ClaudeRunner, RegisteredServer, StdioCommand } from '../../../src-main/core/setup/claude-registration.js';

/** What `claude mcp add --scope user openrouter -e FOO=bar -- /usr/bin/node /some/path/x.js --flag "a b"` wrote (2.1.332). */
const CAPTURED_CONFIG = `{
  "firstStartTime": "2026-11-30T09:53:54.858Z",
  "firstStartVersion": "2.1.332",
  "migrationVersion": 15,
  "mcpServers": {
    "openrouter": {
      "type": "stdio",
      "command": "/usr/bin/node",
      "args": [
        "/some/path/x.js",
        "--flag",
        "a b"
      ],
      "env": {
        "FOO": "bar"
      }
    }
  }
}`;

const EXPECTED: StdioCommand = {
  command: '/opt/node/bin/node',
  args: ['/opt/ord/dist/bridge/openrouter-delegate-mcp.js'],
  env: { OPENROUTER_DELEGATE_HOME: '/home/me/ord' },
};

function server(overrides: Partial<RegisteredServer> = {}): RegisteredServer {
  return { type: 'stdio', command: EXPECTED.command, args: [...EXPECTED.args], env: { ...EXPECTED.env }, url: null, ...overrides };
}

let dir: string;
let configFile: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ord-setup-'));
  configFile = path.join(dir, '.claude.json');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/**
 * Plays `claude mcp add / add-json / remove --scope user` on the config file, answering like 2.1.332
 * (exit codes and messages captured from the real CLI), and records every call.
 */
class FakeClaude implements ClaudeRunner {
  readonly label = '/usr/local/bin/claude';
  readonly calls: Array<{ args: string[]; input: string | undefined }> = [];
  /** Answers the next call with this instead of acting. */
  nextResult: ClaudeRunResult | undefined;

  constructor(private readonly file: string) {}

  async run(args: readonly string[], input?: string): Promise<ClaudeRunResult> {
    this.calls.push({ args: [...args], input });
    const scripted = this.nextResult;
    this.nextResult = undefined;
    if (scripted) return scripted;
    const config = JSON.parse(await readFile(this.file, 'utf8').catch(() => '{}')) as { mcpServers?: Record<string, unknown> };
    const servers = (config.mcpServers ??= {});
    const [, verb] = args;
    const name = args[4] ?? '';
    if (verb === 'remove') {
      if (!(name in servers)) return { code: 1, stdout: '', stderr: `No MCP server named "${name}" in user scope\n` };
      delete servers[name];
    } else {
      if (name in servers) return { code: 1, stdout: '', stderr: `MCP server ${name} already exists in user config\n` };
      if (verb === 'add-json') {
        servers[name] = JSON.parse(input ?? '') as unknown;
      } else {
        const dash = args.indexOf('--');
        const env: Record<string, string> = {};
        for (let i = 5; i < dash; i += 2) {
          const [key, ...value] = (args[i + 1] ?? '').split('=');
          env[key ?? ''] = value.join('=');
        }
        servers[name] = { type: 'stdio', command: args[dash + 1], args: args.slice(dash + 2), env };
      }
    }
    await writeFile(this.file, JSON.stringify(config, null, 2));
    return { code: 0, stdout: `File modified: ${this.file}\n`, stderr: '' };
  }
}

async function registered(): Promise<unknown> {
  return (JSON.parse(await readFile(configFile, 'utf8')) as { mcpServers: Record<string, unknown> }).mcpServers.openrouter;
}

describe('the bridge command', () => {
  it('is absolute Node + absolute bridge script, with OPENROUTER_DELEGATE_HOME only when a home is set', () => {
    expect(bridgeCommand({ nodePath: '/usr/bin/node', bridgeScript: '/opt/ord/dist/bridge/openrouter-delegate-mcp.js', home: null })).toEqual({
      command: '/usr/bin/node',
      args: ['/opt/ord/dist/bridge/openrouter-delegate-mcp.js'],
      env: {},
    });
    const withHome = bridgeCommand({ nodePath: 'node-relative', bridgeScript: 'dist/bridge/x.js', home: 'homes/one' });
    expect(path.isAbsolute(withHome.command)).toBe(true);
    expect(path.isAbsolute(withHome.args[0] ?? '')).toBe(true);
    expect(withHome.env).toEqual({ OPENROUTER_DELEGATE_HOME: path.resolve('homes/one') });
  });

  it('is added with the name before -e (which takes several values) and the command after --', () => {
    expect(mcpAddArgs('openrouter', EXPECTED)).toEqual([
      'mcp',
      'add',
      '--scope',
      'user',
      'openrouter',
      '-e',
      'OPENROUTER_DELEGATE_HOME=/home/me/ord',
      '--',
      '/opt/node/bin/node',
      '/opt/ord/dist/bridge/openrouter-delegate-mcp.js',
    ]);
    expect(mcpAddArgs('openrouter', { ...EXPECTED, env: {} })).toEqual([
      'mcp',
      'add',
      '--scope',
      'user',
      'openrouter',
      '--',
      EXPECTED.command,
      ...EXPECTED.args,
    ]);
  });

  it('is shown as a shell would need it typed', () => {
    expect(formatCommand('/usr/bin/node', ['/My Apps/bridge.js', "it's"])).toBe(`/usr/bin/node '/My Apps/bridge.js' 'it'\\''s'`);
  });
});

describe("Claude Code's config file", () => {
  it('is .claude.json in CLAUDE_CONFIG_DIR when set, else in the home folder', async () => {
    expect(await claudeUserConfigFile({ CLAUDE_CONFIG_DIR: path.join(dir, 'cfg') }, path.join(dir, 'home'))).toBe(path.join(dir, 'cfg', '.claude.json'));
    expect(await claudeUserConfigFile({}, path.join(dir, 'home'))).toBe(path.join(dir, 'home', '.claude.json'));
  });

  it('is the legacy .config.json of the config folder when that holds something', async () => {
    const legacyDir = path.join(dir, 'home', '.claude');
    await mkdir(legacyDir, { recursive: true });
    await writeFile(path.join(legacyDir, '.config.json'), '');
    expect(await claudeUserConfigFile({}, path.join(dir, 'home'))).toBe(path.join(dir, 'home', '.claude.json'));
    await writeFile(path.join(legacyDir, '.config.json'), '{}');
    expect(await claudeUserConfigFile({}, path.join(dir, 'home'))).toBe(path.join(legacyDir, '.config.json'));
  });

  it('yields the user-scope entry of a real 2.1.332 file, arguments with spaces intact', () => {
    expect(parseUserScopeServer(CAPTURED_CONFIG, 'openrouter', 'f')).toEqual({
      type: 'stdio',
      command: '/usr/bin/node',
      args: ['/some/path/x.js', '--flag', 'a b'],
      env: { FOO: 'bar' },
      url: null,
    });
    expect(parseUserScopeServer(CAPTURED_CONFIG, 'other', 'f')).toBeNull();
    expect(parseUserScopeServer('{"projects":{}}', 'openrouter', 'f')).toBeNull();
  });

  it('treats an entry without a type as stdio, as Claude Code does', () => {
    expect(parseUserScopeServer('{"mcpServers":{"openrouter":{"command":"x"}}}', 'openrouter', 'f')).toMatchObject({
      type: 'stdio',
      command: 'x',
      args: [],
      env: {},
    });
  });

  it('refuses a file that is not JSON, naming it', () => {
    expect(() => parseUserScopeServer('{"mcpServers": ', 'openrouter', '/h/.claude.json')).toThrow(/\/h\/\.claude\.json is not valid JSON/);
  });

  it('a missing file means not registered', async () => {
    expect(await lookupRegistration({ configFile, expected: EXPECTED })).toEqual({ registered: false, configFile });
  });
});

describe('comparing a registration with this installation', () => {
  it('finds nothing to change in the same command, whatever other env entries the user added', () => {
    expect(registrationDifferences(EXPECTED, server({ env: { ...EXPECTED.env, OPENROUTER_API_KEY: 'sk-or-x' } }))).toEqual([]);
  });

  it('names a different command, a different or missing home, and a non-stdio server', () => {
    expect(registrationDifferences(EXPECTED, server({ command: 'openrouter-delegate-mcp', args: [] }))).toEqual([
      'command `openrouter-delegate-mcp` instead of `/opt/node/bin/node /opt/ord/dist/bridge/openrouter-delegate-mcp.js`',
    ]);
    expect(registrationDifferences(EXPECTED, server({ env: {} }))).toEqual(['OPENROUTER_DELEGATE_HOME not set (this installation uses /home/me/ord)']);
    expect(registrationDifferences(EXPECTED, server({ env: { OPENROUTER_DELEGATE_HOME: '/else' } }))).toEqual([
      'OPENROUTER_DELEGATE_HOME=/else instead of /home/me/ord',
    ]);
    expect(registrationDifferences({ ...EXPECTED, env: {} }, server())).toEqual([
      'OPENROUTER_DELEGATE_HOME=/home/me/ord (this installation uses the default locations)',
    ]);
    expect(registrationDifferences(EXPECTED, server({ type: 'http', command: null, args: [], url: 'https://x.test/mcp' }))).toEqual([
      'it is a http server at https://x.test/mcp, not this stdio bridge',
    ]);
  });
});

describe('install and uninstall through claude mcp', () => {
  it('adds the bridge when it is not registered', async () => {
    const claude = new FakeClaude(configFile);
    const outcome = await new ClaudeRegistration({ runner: claude, configFile, expected: EXPECTED }).install();
    expect(outcome).toEqual({ action: 'added', configFile, command: EXPECTED });
    expect(claude.calls.map((c) => c.args)).toEqual([mcpAddArgs('openrouter', EXPECTED)]);
    expect(await registered()).toEqual({ type: 'stdio', command: EXPECTED.command, args: EXPECTED.args, env: EXPECTED.env });
  });

  it('changes nothing, and does not run claude, when the same command is registered', async () => {
    const claude = new FakeClaude(configFile);
    const registration = new ClaudeRegistration({ runner: claude, configFile, expected: EXPECTED });
    await registration.install();
    const before = await readFile(configFile, 'utf8');
    expect((await registration.install()).action).toBe('unchanged');
    expect(claude.calls).toHaveLength(1);
    expect(await readFile(configFile, 'utf8')).toBe(before);
  });

  it('replaces another command: remove, then add, saying what changed', async () => {
    await writeFile(configFile, JSON.stringify({ mcpServers: { openrouter: { type: 'stdio', command: 'openrouter-delegate-mcp', args: [], env: {} } } }));
    const claude = new FakeClaude(configFile);
    const outcome = await new ClaudeRegistration({ runner: claude, configFile, expected: EXPECTED }).install();
    expect(outcome).toMatchObject({ action: 'replaced', previous: { command: 'openrouter-delegate-mcp' }, keptEnv: [] });
    expect(outcome.action === 'replaced' && outcome.differences.join(' ')).toContain('openrouter-delegate-mcp');
    expect(claude.calls.map((c) => c.args[1])).toEqual(['remove', 'add']);
    expect(await registered()).toMatchObject({ command: EXPECTED.command, args: EXPECTED.args, env: EXPECTED.env });
  });

  it("keeps the user's own env entries when replacing, passing them on stdin, never in argv", async () => {
    const env = { OPENROUTER_API_KEY: 'sk-or-v1-secret', OPENROUTER_DELEGATE_HOME: '/old/home' };
    await writeFile(configFile, JSON.stringify({ mcpServers: { openrouter: { type: 'stdio', command: '/old/node', args: ['/old/bridge.js'], env } } }));
    const claude = new FakeClaude(configFile);
    const outcome = await new ClaudeRegistration({ runner: claude, configFile, expected: EXPECTED }).install();
    expect(outcome).toMatchObject({ action: 'replaced', keptEnv: ['OPENROUTER_API_KEY'] });
    const add = claude.calls[1];
    expect(add?.args).toEqual(['mcp', 'add-json', '--scope', 'user', 'openrouter', '-']);
    expect(claude.calls.some((c) => c.args.join(' ').includes('sk-or-v1-secret'))).toBe(false);
    expect(await registered()).toEqual({
      type: 'stdio',
      command: EXPECTED.command,
      args: EXPECTED.args,
      env: { OPENROUTER_API_KEY: 'sk-or-v1-secret', OPENROUTER_DELEGATE_HOME: '/home/me/ord' },
    });
  });

  it('replaces a registration claude has but this lookup could not see', async () => {
    const claude = new FakeClaude(path.join(dir, 'elsewhere.json'));
    await writeFile(path.join(dir, 'elsewhere.json'), JSON.stringify({ mcpServers: { openrouter: { command: '/old' } } }));
    const outcome = await new ClaudeRegistration({ runner: claude, configFile, expected: EXPECTED }).install();
    expect(outcome).toMatchObject({ action: 'replaced', previous: null });
    expect(claude.calls.map((c) => c.args[1])).toEqual(['add', 'remove', 'add']);
  });

  it('reports a failing claude with what it said and what to check', async () => {
    const claude = new FakeClaude(configFile);
    claude.nextResult = { code: 1, stdout: '', stderr: 'EACCES: permission denied, open .claude.json\n' };
    const failure = await new ClaudeRegistration({ runner: claude, configFile, expected: EXPECTED }).install().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ClaudeCommandError);
    expect((failure as Error).message).toContain('`claude mcp add --scope user openrouter');
    expect((failure as Error).message).toContain('(exit 1): EACCES: permission denied');
    expect((failure as Error).message).toContain(`${configFile} is writable`);
  });

  it('says when a replacement removed the old entry but could not add the new one', async () => {
    await writeFile(configFile, JSON.stringify({ mcpServers: { openrouter: { command: '/old' } } }));
    const claude = new FakeClaude(configFile);
    const registration = new ClaudeRegistration({ runner: claude, configFile, expected: EXPECTED });
    const run = claude.run.bind(claude);
    claude.run = async (args, input) => (args[1] === 'add' ? { code: 1, stdout: '', stderr: 'disk full' } : run(args, input));
    await expect(registration.install()).rejects.toThrow(/previous registration was already removed: run `openrouter-delegate install` again/);
  });

  it('uninstall removes the registration, then says it is absent', async () => {
    const claude = new FakeClaude(configFile);
    const registration = new ClaudeRegistration({ runner: claude, configFile, expected: EXPECTED });
    await registration.install();
    expect(await registration.uninstall()).toMatchObject({ action: 'removed', previous: { command: EXPECTED.command } });
    expect(await registered()).toBeUndefined();
    expect(await registration.uninstall()).toEqual({ action: 'absent', configFile });
  });

  it('uninstall still fails loudly when claude cannot remove an entry that is there', async () => {
    const claude = new FakeClaude(configFile);
    const registration = new ClaudeRegistration({ runner: claude, configFile, expected: EXPECTED });
    await registration.install();
    claude.nextResult = { code: 1, stdout: '', stderr: 'EROFS: read-only file system' };
    await expect(registration.uninstall()).rejects.toThrow(/EROFS/);
  });
});

describe('claude --version', () => {
  it('is read from the real output, and kept as is when it has no version number', () => {
    expect(parseClaudeVersion('2.1.332 (Claude Code)\n')).toBe('2.1.332');
    expect(parseClaudeVersion('claude 3.0.0-beta.2\n')).toBe('3.0.0-beta.2');
    expect(parseClaudeVersion('dev build\n')).toBe('dev build');
    expect(parseClaudeVersion('  \n')).toBeNull();
  });
});
