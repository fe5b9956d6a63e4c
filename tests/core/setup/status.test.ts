/**
 * The Claude Code page's answers (setup.status / setup.connect / setup.disconnect) straight from
 * core/setup/status.ts, against the real `claude` CLI and a throwaway HOME: what Claude Code's own
 * config file holds after each step is what the answers must describe.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src-main/contract/index.js';
import type { SetupStatus } from '../../../src-main/contract/index.js';
import { resolveLocations } from '../../../src-main/platform/locations.js';
import { createSetupContext } from '../../../src-main/core/setup/context.js';
import type { SetupContext } from '../../../src-main/core/setup/context.js';
import { connectClaude, disconnectClaude, setupStatus } from '../../../src-main/core/setup/status.js';
import { BRIDGE, assertBuilt, runProcess } from '../../support/built.js';
import { CLAUDE_CLI } from '../../support/fake-anthropic.js';
import { makeTempHome } from '../../support/temp-home.js';

beforeAll(() => assertBuilt());

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

interface World {
  /** OPENROUTER_DELEGATE_HOME. */
  home: string;
  /** HOME, where Claude Code keeps .claude.json. */
  userHome: string;
  env: NodeJS.ProcessEnv;
  context: SetupContext;
}

/** A fresh home and HOME; `claude` is the devDependency unless `extra` says otherwise. */
async function newWorld(extra: NodeJS.ProcessEnv = {}, bridgeScript = BRIDGE): Promise<World> {
  const { home: root, cleanup } = await makeTempHome('ord-status-');
  cleanups.push(cleanup);
  const home = path.join(root, 'ord');
  const userHome = path.join(root, 'user');
  await mkdir(userHome, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: userHome,
    OPENROUTER_DELEGATE_HOME: home,
    OPENROUTER_DELEGATE_CLAUDE: CLAUDE_CLI,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...extra,
  };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const context = await createSetupContext({
    env,
    locations: resolveLocations(env),
    nodePath: process.execPath,
    bridgeScript,
    homeDir: userHome,
    connectService: async () => null,
  });
  return { home, userHome, env, context };
}

/** `claude mcp add --scope user openrouter …` run by hand, as a user would have done it. */
async function addByHand(world: World, command: string[]): Promise<void> {
  const result = await runProcess(CLAUDE_CLI, ['mcp', 'add', '--scope', 'user', 'openrouter', '--', ...command], { env: world.env });
  expect(result.code, result.stderr).toBe(0);
}

/** The user-scope "openrouter" entry as Claude Code wrote it, or undefined. */
async function entryIn(file: string): Promise<{ command?: string; args?: string[]; env?: Record<string, string> } | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '{}');
  return (JSON.parse(text) as { mcpServers?: Record<string, { command?: string; args?: string[]; env?: Record<string, string> }> }).mcpServers?.openrouter;
}

describe('setupStatus', () => {
  it('says "absent" before anything is registered, with the exact command and the `claude mcp add` line', async () => {
    const world = await newWorld();
    const status = await setupStatus(world.context);
    expect(status).toEqual<SetupStatus>({
      serverName: 'openrouter',
      configFile: path.join(world.userHome, '.claude.json'),
      command: `${process.execPath} ${BRIDGE}`,
      addCommand: `claude mcp add --scope user openrouter -e OPENROUTER_DELEGATE_HOME=${world.home} -- ${process.execPath} ${BRIDGE}`,
      env: { OPENROUTER_DELEGATE_HOME: world.home },
      registration: 'absent',
      registeredCommand: null,
      differences: [],
      claude: { path: CLAUDE_CLI },
      bridgeExists: true,
    });
  });

  it('follows CLAUDE_CONFIG_DIR to the same file Claude Code writes', async () => {
    const world = await newWorld();
    const configDir = path.join(world.userHome, 'elsewhere');
    await mkdir(configDir);
    const env = { ...world.env, CLAUDE_CONFIG_DIR: configDir };
    const context = await createSetupContext({
      env,
      locations: resolveLocations(env),
      nodePath: process.execPath,
      bridgeScript: BRIDGE,
      homeDir: world.userHome,
      connectService: async () => null,
    });
    expect((await setupStatus(context)).configFile).toBe(path.join(configDir, '.claude.json'));
    const { status } = await connectClaude(context);
    expect(status.registration).toBe('registered');
    expect(await entryIn(path.join(configDir, '.claude.json'))).toMatchObject({ command: process.execPath, args: [BRIDGE] });
    expect(await entryIn(path.join(world.userHome, '.claude.json'))).toBeUndefined();
  });

  it('describes a registration of another command under our name as "different", with each difference', async () => {
    const world = await newWorld();
    await addByHand(world, ['/bin/echo', 'x']);
    const status = await setupStatus(world.context);
    expect(status.registration).toBe('different');
    expect(status.registeredCommand).toBe('/bin/echo x');
    expect(status.differences).toEqual([
      `command \`/bin/echo x\` instead of \`${process.execPath} ${BRIDGE}\``,
      `OPENROUTER_DELEGATE_HOME not set (this installation uses ${world.home})`,
    ]);
  });

  it('reports a missing `claude` as a problem that says how to install it, instead of failing', async () => {
    const world = await newWorld({ OPENROUTER_DELEGATE_CLAUDE: '/nonexistent/claude' });
    const status = await setupStatus(world.context);
    expect(status.claude.path).toBeNull();
    expect(status.claude.problem).toContain('/nonexistent/claude');
    expect(status.claude.problem).toContain('npm install -g @anthropic-ai/claude-code');
    expect(status.registration).toBe('absent');
  });

  it('says when this installation has no bridge to register', async () => {
    const world = await newWorld({}, path.join('/nonexistent', 'openrouter-delegate-mcp.js'));
    expect((await setupStatus(world.context)).bridgeExists).toBe(false);
  });

  it('fails with setup_failed, in words that name the file, when Claude Code’s config is not JSON', async () => {
    const world = await newWorld();
    await writeFile(path.join(world.userHome, '.claude.json'), '{ not json');
    const failure = await setupStatus(world.context).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServiceError);
    expect((failure as ServiceError).code).toBe('setup_failed');
    expect((failure as ServiceError).message).toContain(path.join(world.userHome, '.claude.json'));
    expect((failure as ServiceError).message).toContain('not valid JSON');
  });
});

describe('connectClaude', () => {
  it('registers this installation’s bridge through `claude mcp add` and answers "registered"', async () => {
    const world = await newWorld();
    const { lines, status } = await connectClaude(world.context);
    expect(lines[0]).toBe(`Registered the bridge as "openrouter" in Claude Code's user config (${path.join(world.userHome, '.claude.json')}):`);
    expect(lines).toContain(`  ${process.execPath} ${BRIDGE}`);
    expect(lines.at(-1)).toContain('restart them, or run /mcp');
    expect(status.registration).toBe('registered');
    expect(status.registeredCommand).toBe(status.command);
    expect(await entryIn(path.join(world.userHome, '.claude.json'))).toEqual({
      type: 'stdio',
      command: process.execPath,
      args: [BRIDGE],
      env: { OPENROUTER_DELEGATE_HOME: world.home },
    });
  });

  it('leaves an identical registration alone', async () => {
    const world = await newWorld();
    await connectClaude(world.context);
    const before = await readFile(path.join(world.userHome, '.claude.json'), 'utf8');
    const again = await connectClaude(world.context);
    expect(again.lines[0]).toContain('already registered');
    expect(again.lines[0]).toContain('nothing changed');
    expect(again.status.registration).toBe('registered');
    expect(await readFile(path.join(world.userHome, '.claude.json'), 'utf8')).toBe(before);
  });

  it('replaces a different registration and says what it was', async () => {
    const world = await newWorld();
    await addByHand(world, ['/bin/echo', 'x']);
    const { lines, status } = await connectClaude(world.context);
    expect(lines[0]).toContain('Replaced the "openrouter" registration');
    expect(lines).toContain('  was: /bin/echo x');
    expect(lines).toContain(`  now: ${process.execPath} ${BRIDGE}`);
    expect(status.registration).toBe('registered');
    expect(status.differences).toEqual([]);
    expect(await entryIn(path.join(world.userHome, '.claude.json'))).toMatchObject({ command: process.execPath, args: [BRIDGE] });
  });

  it('fails with claude_missing and registers nothing when `claude` cannot be found', async () => {
    const world = await newWorld({ OPENROUTER_DELEGATE_CLAUDE: '/nonexistent/claude' });
    const failure = await connectClaude(world.context).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServiceError);
    expect((failure as ServiceError).code).toBe('claude_missing');
    expect((failure as ServiceError).message).toContain('npm install -g @anthropic-ai/claude-code');
    expect(await entryIn(path.join(world.userHome, '.claude.json'))).toBeUndefined();
  });

  it('fails with setup_failed, saying how to build it, when the bridge is missing', async () => {
    const world = await newWorld({}, path.join('/nonexistent', 'openrouter-delegate-mcp.js'));
    const failure = await connectClaude(world.context).catch((error: unknown) => error);
    expect((failure as ServiceError).code).toBe('setup_failed');
    expect((failure as ServiceError).message).toContain('The bridge is not built');
    expect((failure as ServiceError).message).toContain('npm run build');
    expect(await entryIn(path.join(world.userHome, '.claude.json'))).toBeUndefined();
  });
});

describe('disconnectClaude', () => {
  it('removes the registration through `claude mcp remove`, then says there is nothing to remove', async () => {
    const world = await newWorld();
    await connectClaude(world.context);
    const removed = await disconnectClaude(world.context);
    expect(removed.lines[0]).toContain('Removed the "openrouter" MCP server');
    expect(removed.status.registration).toBe('absent');
    expect(await entryIn(path.join(world.userHome, '.claude.json'))).toBeUndefined();
    const get = await runProcess(CLAUDE_CLI, ['mcp', 'get', 'openrouter'], { env: world.env });
    expect(get.stderr).toContain('No MCP server named "openrouter"');

    const again = await disconnectClaude(world.context);
    expect(again.lines[0]).toContain('nothing to remove');
    expect(again.status.registration).toBe('absent');
  });

  it('removes a different registration too', async () => {
    const world = await newWorld();
    await addByHand(world, ['/bin/echo', 'x']);
    const { status } = await disconnectClaude(world.context);
    expect(status.registration).toBe('absent');
    expect(await entryIn(path.join(world.userHome, '.claude.json'))).toBeUndefined();
  });
});
