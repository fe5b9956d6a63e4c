/**
 * `openrouter-delegate install / uninstall / doctor` as a user runs them: the built CLI, the real
 * Claude Code CLI, and a throwaway HOME and CLAUDE_CONFIG_DIR, so the real Claude config is never touched.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BRIDGE, CLI, assertBuilt, runCli, runProcess, testEnv } from '../support/built.js';
import { CLAUDE_CLI } from '../support/fake-anthropic.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { makeTempHome } from '../support/temp-home.js';
import { makeRepo } from '../support/git-repo.js';
import { CLOSED_REGISTRY, runPrintedCommands } from '../support/printed-commands.js';
import { CHECK_IDS } from '../../src-main/core/setup/doctor.js';

const KEY = 'sk-or-v1-setup-e2e-0123456789abcdef';

const fake = new FakeOpenRouter();
beforeAll(async () => {
  assertBuilt();
  await fake.start();
  fake.addKey(KEY);
});
afterAll(() => fake.stop());

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

interface World {
  home: string;
  claudeConfigDir: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh OPENROUTER_DELEGATE_HOME, HOME and CLAUDE_CONFIG_DIR; `claude` is the devDependency. */
async function newWorld(extra: NodeJS.ProcessEnv = {}, baseUrl = fake.baseUrl): Promise<World> {
  const { home: root, cleanup } = await makeTempHome('ord-setup-');
  const home = path.join(root, 'ord');
  const claudeConfigDir = path.join(root, 'claude-config');
  const userHome = path.join(root, 'user');
  await mkdir(claudeConfigDir, { recursive: true });
  await mkdir(userHome, { recursive: true });
  const env = testEnv(home, baseUrl, {
    HOME: userHome,
    CLAUDE_CONFIG_DIR: claudeConfigDir,
    OPENROUTER_DELEGATE_CLAUDE: CLAUDE_CLI,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...extra,
  });
  cleanups.push(async () => {
    // `claude mcp get/list` health-check the bridge, which starts a service in this home.
    await runCli(['stop'], env);
    await cleanup();
  });
  return { home, claudeConfigDir, env };
}

function claude(world: World, args: string[]) {
  return runProcess(CLAUDE_CLI, args, { env: world.env });
}

interface ConfigEntry {
  type?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
}

/** The user-scope entry as Claude Code wrote it (CLAUDE_CONFIG_DIR/.claude.json), or undefined. */
async function registeredEntry(world: World): Promise<ConfigEntry | undefined> {
  const text = await readFile(path.join(world.claudeConfigDir, '.claude.json'), 'utf8').catch(() => '{}');
  return (JSON.parse(text) as { mcpServers?: Record<string, ConfigEntry> }).mcpServers?.openrouter;
}

/** Each check line of `doctor` as title → symbol. */
function doctorSymbols(stdout: string): Record<string, string> {
  const symbols: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const match = /^([✓!✗]) ([^:]+):/.exec(line);
    if (match?.[1] && match[2]) symbols[match[2]] = match[1];
  }
  return symbols;
}

function doctorLine(stdout: string, title: string): string {
  return stdout.split('\n').find((line) => line.slice(2).startsWith(`${title}:`)) ?? '';
}

const TITLES = [
  'Claude Code CLI',
  'Bridge registered with Claude Code',
  'Commands on your PATH',
  'Service',
  'Socket folder and token',
  'Settings file',
  "Sandbox for delegates' programs",
  'Keychain',
  'OpenRouter key',
  'OpenRouter reachable',
  'Kept worktrees',
  'Verify commands here',
];

describe('openrouter-delegate install', () => {
  it('registers the bridge at user scope with absolute paths and this home, and Claude Code can start it', async () => {
    const world = await newWorld();
    const result = await runCli(['install'], world.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Registered the bridge as "openrouter"');
    const entry = await registeredEntry(world);
    expect(entry).toEqual({ type: 'stdio', command: process.execPath, args: [BRIDGE], env: { OPENROUTER_DELEGATE_HOME: world.home } });

    // The registered command, spawned as Claude Code would, is a working bridge (it starts the service).
    const transport = new StdioClientTransport({
      command: entry?.command ?? '',
      args: entry?.args ?? [],
      env: { ...(world.env as Record<string, string>), ...entry?.env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'setup-e2e', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    expect(client.getServerVersion()?.name).toBe('openrouter-delegate');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('openrouter_models');
    expect(tools.map((t) => t.name)).toContain('delegate_start');
    await client.close();

    // Claude Code itself sees it at user scope, and its health check connects.
    const get = await claude(world, ['mcp', 'get', 'openrouter']);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/Scope: User config/);
    expect(get.stdout).toContain(`Command: ${process.execPath}`);
    expect(get.stdout).toContain(`Args: ${BRIDGE}`);
    expect(get.stdout).toContain(`OPENROUTER_DELEGATE_HOME=${world.home}`);
    expect(get.stdout).toMatch(/Status: .*Connected/);
    const list = await claude(world, ['mcp', 'list']);
    expect(list.stdout).toMatch(new RegExp(`openrouter: ${process.execPath} ${BRIDGE} - .*Connected`));
  });

  it('is a no-op when the same command is already registered', async () => {
    const world = await newWorld();
    expect((await runCli(['install'], world.env)).code).toBe(0);
    const before = await readFile(path.join(world.claudeConfigDir, '.claude.json'), 'utf8');
    const again = await runCli(['install'], world.env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('already registered');
    expect(again.stdout).toContain('nothing changed');
    expect(await readFile(path.join(world.claudeConfigDir, '.claude.json'), 'utf8')).toBe(before);
  });

  it('replaces a registration with another command, saying what changed and keeping the user’s env entries', async () => {
    const world = await newWorld();
    const manual = await claude(world, [
      'mcp',
      'add',
      '--scope',
      'user',
      'openrouter',
      '-e',
      'OPENROUTER_API_KEY=sk-or-v1-manual',
      '--',
      'openrouter-delegate-mcp',
      '--old',
    ]);
    expect(manual.code, manual.stderr).toBe(0);
    const result = await runCli(['install'], world.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Replaced the "openrouter" registration');
    expect(result.stdout).toContain('was: openrouter-delegate-mcp --old');
    expect(result.stdout).toContain(`now: ${process.execPath} ${BRIDGE}`);
    expect(result.stdout).toContain('kept your env entries: OPENROUTER_API_KEY');
    expect(result.stdout + result.stderr).not.toContain('sk-or-v1-manual');
    expect(await registeredEntry(world)).toEqual({
      type: 'stdio',
      command: process.execPath,
      args: [BRIDGE],
      env: { OPENROUTER_API_KEY: 'sk-or-v1-manual', OPENROUTER_DELEGATE_HOME: world.home },
    });
  });

  it('fails clearly when claude cannot be found, and registers nothing', async () => {
    const world = await newWorld({ OPENROUTER_DELEGATE_CLAUDE: '/nonexistent' });
    const result = await runCli(['install'], world.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('/nonexistent');
    expect(result.stderr).toContain('npm install -g @anthropic-ai/claude-code');
    expect(await registeredEntry(world)).toBeUndefined();

    const noPath = await newWorld({ OPENROUTER_DELEGATE_CLAUDE: undefined, PATH: path.join(world.home, 'no-such-dir') });
    const onPath = await runCli(['install'], noPath.env);
    expect(onPath.code).toBe(1);
    expect(onPath.stderr).toContain('was not found on the PATH');
    expect(onPath.stderr).toContain('npm install -g @anthropic-ai/claude-code');
  });
});

describe('openrouter-delegate install --link', () => {
  it('puts the commands on the PATH, and the commands the product prints then run verbatim from a project folder, asking no registry', async () => {
    const world = await newWorld({ OPENROUTER_API_KEY: KEY });
    const bin = path.join(world.env.HOME ?? '', '.local', 'bin');
    // What a parent model's Bash or the user's shell has: this checkout is on no folder of it, and npx would ask a registry that does not answer.
    const env = { ...world.env, PATH: `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin`, npm_config_registry: CLOSED_REGISTRY };
    const before = await runCli(['install'], env);
    expect(before.stdout).toMatch(
      /need this installation's `openrouter-delegate` on your PATH: `'.*' '.*openrouter-delegate\.js' install --link` puts it there\./,
    );
    const doctorBefore = await runCli(['doctor'], env);
    expect(doctorLine(doctorBefore.stdout, 'Commands on your PATH')).toMatch(/^! .*is not on your PATH/);

    const linked = await runCli(['install', '--link'], env);
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.stdout).toContain(`Linked: ${path.join(bin, 'openrouter-delegate')} runs this installation's openrouter-delegate.`);
    const project = path.join(world.env.HOME ?? '', 'project');
    await makeRepo(project, { 'README.md': 'x\n' });
    const doctor = await runPrintedCommands(env, project);
    expect(doctorLine(doctor, 'Commands on your PATH')).toMatch(/^✓ Commands on your PATH: `openrouter-delegate` runs this installation/);
    // Run in the project, the doctor speaks of its verify commands: none saved, none its top folder suggests.
    expect(doctorLine(doctor, 'Verify commands here')).toMatch(/^✓ Verify commands here: none saved for .*project, and its top folder suggests none\.$/);
  });

  it('refuses a folder that is not on the PATH, and never overwrites a command that is not its own', async () => {
    const world = await newWorld({ OPENROUTER_API_KEY: KEY });
    const bin = path.join(world.env.HOME ?? '', 'bin');
    const env = { ...world.env, PATH: `${bin}:${world.env.PATH ?? ''}` };
    const off = await runCli(['install', '--link-dir', path.join(world.env.HOME ?? '', 'elsewhere')], env);
    expect([off.code, off.stderr]).toEqual([1, expect.stringContaining('is not on your PATH, so a command put there would still not be found')]);
    await mkdir(bin, { recursive: true });
    await writeFile(path.join(bin, 'openrouter-mcp-config'), '#!/bin/sh\necho mine\n', { mode: 0o755 });
    const kept = await runCli(['install', '--link'], env);
    expect(kept.code).toBe(1);
    expect(kept.stderr).toContain(`Not linked: ${path.join(bin, 'openrouter-mcp-config')} is there already and is not ours`);
    expect(await readFile(path.join(bin, 'openrouter-mcp-config'), 'utf8')).toBe('#!/bin/sh\necho mine\n');
  });
});

describe('openrouter-delegate uninstall', () => {
  it('removes the registration, then says it is not registered', async () => {
    const world = await newWorld();
    expect((await runCli(['install'], world.env)).code).toBe(0);
    const removed = await runCli(['uninstall'], world.env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('Removed the "openrouter" MCP server');
    expect(await registeredEntry(world)).toBeUndefined();
    const get = await claude(world, ['mcp', 'get', 'openrouter']);
    expect(get.code).not.toBe(0);
    expect(get.stderr).toContain('No MCP server named "openrouter"');

    const again = await runCli(['uninstall'], world.env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('not registered');
  });
});

describe('openrouter-delegate doctor', () => {
  it('passes every check with a good key and the bridge installed; a stopped service is only a warning', async () => {
    const world = await newWorld({ OPENROUTER_API_KEY: KEY });
    world.env.PATH = `${path.join(world.env.HOME ?? '', '.local', 'bin')}:${world.env.PATH ?? ''}`;
    expect((await runCli(['install', '--link'], world.env)).code).toBe(0);
    const result = await runCli(['doctor'], world.env);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(doctorSymbols(result.stdout)).toEqual(Object.fromEntries(TITLES.map((title) => [title, title === 'Service' ? '!' : '✓'])));
    expect(doctorLine(result.stdout, 'Claude Code CLI')).toContain('version 2.1.332');
    expect(doctorLine(result.stdout, 'Service')).toContain('the bridge starts it');
    expect(doctorLine(result.stdout, 'OpenRouter key')).toContain('from OPENROUTER_API_KEY: accepted by OpenRouter');
    expect(doctorLine(result.stdout, 'OpenRouter reachable')).toMatch(/GET \/v1\/models at 127\.0\.0\.1:\d+: \d+ models in \d+(\.\d)? m?s\./);
    // This machine has the sandbox (as the delegate tests need): the check names what runs it.
    expect(doctorLine(result.stdout, "Sandbox for delegates' programs")).toMatch(
      /runs each delegate whole in a box of its own \(its Claude Code, file tools and programs\): (bubblewrap and socat|Seatbelt) \(/,
    );
    expect(result.stdout).not.toContain(KEY);
  });

  it('--json gives the same checks as structured results', async () => {
    const world = await newWorld({ OPENROUTER_API_KEY: KEY });
    expect((await runCli(['install'], world.env)).code).toBe(0);
    const text = await runCli(['doctor'], world.env);
    const json = await runCli(['doctor', '--json'], world.env);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as {
      ok: boolean;
      checks: Array<{ id: string; title: string; status: string; summary: string; durationMs?: number }>;
    };
    expect(report.ok).toBe(true);
    // Every check, in the doctor's order.
    expect(report.checks.map((c) => c.id)).toEqual([...CHECK_IDS]);
    const symbol = { ok: '✓', warn: '!', fail: '✗' } as Record<string, string>;
    expect(Object.fromEntries(report.checks.map((c) => [c.title, symbol[c.status]]))).toEqual(doctorSymbols(text.stdout));
    expect(report.checks.find((c) => c.id === 'openrouter')?.durationMs).toEqual(expect.any(Number));
  });

  it('checks the key through a running service, and the socket folder and token it made', async () => {
    const world = await newWorld({ OPENROUTER_API_KEY: KEY });
    expect((await runCli(['install'], world.env)).code).toBe(0);
    const serve = spawn(process.execPath, [CLI, 'serve', '--notify-ready'], { env: world.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((resolve) => serve.once('exit', resolve));
    cleanups.push(async () => {
      await runCli(['stop'], world.env);
      await exited;
    });
    await new Promise<void>((resolve, reject) => {
      serve.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      serve.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
    });
    const result = await runCli(['doctor'], world.env);
    expect(result.code, result.stdout).toBe(0);
    // Everything holds but the commands on the PATH, which this test did not link.
    expect(doctorSymbols(result.stdout)).toEqual(Object.fromEntries(TITLES.map((title) => [title, title === 'Commands on your PATH' ? '!' : '✓'])));
    expect(doctorLine(result.stdout, 'Service')).toContain(`pid ${serve.pid}`);
    expect(doctorLine(result.stdout, 'OpenRouter key')).toContain("(the service's): accepted by OpenRouter");
    expect(doctorLine(result.stdout, 'Socket folder and token')).toContain('0700, token 0600, socket 0600');
  });

  it('fails the key check with what to do when OpenRouter refuses the key', async () => {
    const world = await newWorld({ OPENROUTER_API_KEY: 'sk-or-v1-unknown-to-openrouter' });
    expect((await runCli(['install'], world.env)).code).toBe(0);
    const result = await runCli(['doctor'], world.env);
    expect(result.code).toBe(1);
    const line = doctorLine(result.stdout, 'OpenRouter key');
    expect(line.startsWith('✗')).toBe(true);
    expect(line).toContain('rejected the key (401)');
    expect(line).toContain('openrouter-delegate key set');
    expect(doctorSymbols(result.stdout)['OpenRouter reachable']).toBe('✓');
    expect(result.stdout).not.toContain('sk-or-v1-unknown-to-openrouter');
  });

  it('fails the OpenRouter check when it cannot be reached, and only warns about the key it could not check', async () => {
    const gone = new FakeOpenRouter();
    await gone.start();
    const baseUrl = gone.baseUrl;
    await gone.stop();
    const world = await newWorld({ OPENROUTER_API_KEY: KEY }, baseUrl);
    expect((await runCli(['install'], world.env)).code).toBe(0);
    const result = await runCli(['doctor'], world.env);
    expect(result.code).toBe(1);
    const line = doctorLine(result.stdout, 'OpenRouter reachable');
    expect(line.startsWith('✗')).toBe(true);
    expect(line).toContain(`Cannot reach OpenRouter at ${new URL(baseUrl).host}`);
    expect(line).toContain('Check your network connection');
    expect(doctorSymbols(result.stdout)['OpenRouter key']).toBe('!');
    const json = JSON.parse((await runCli(['doctor', '--json'], world.env)).stdout) as { ok: boolean; checks: Array<{ id: string; status: string }> };
    expect(json.ok).toBe(false);
    expect(json.checks.find((c) => c.id === 'openrouter')?.status).toBe('fail');
  });

  it('fails the registration and claude checks when claude is missing and nothing is registered', async () => {
    const world = await newWorld({ OPENROUTER_API_KEY: KEY, OPENROUTER_DELEGATE_CLAUDE: '/nonexistent' });
    const result = await runCli(['doctor'], world.env);
    expect(result.code).toBe(1);
    expect(doctorLine(result.stdout, 'Claude Code CLI')).toMatch(/^✗ .*npm install -g @anthropic-ai\/claude-code/);
    expect(doctorLine(result.stdout, 'Bridge registered with Claude Code')).toMatch(/^✗ .*Run `openrouter-delegate install`\./);
  });

  it("says ✗, from a project folder, where npx or npm put only the checkout's development copy of claude on the PATH (issue 38)", async () => {
    const world = await newWorld({ OPENROUTER_API_KEY: KEY });
    const { OPENROUTER_DELEGATE_CLAUDE: _named, ...env } = world.env;
    // What `npx openrouter-delegate doctor` run in the checkout puts first on the PATH.
    const devBin = path.dirname(CLAUDE_CLI);
    const result = await runProcess(process.execPath, [CLI, 'doctor'], {
      env: { ...env, PATH: `${devBin}${path.delimiter}/usr/bin${path.delimiter}/bin` },
      cwd: world.claudeConfigDir,
    });
    expect(result.code).toBe(1);
    expect(doctorLine(result.stdout, 'Claude Code CLI')).toMatch(
      /^✗ Claude Code CLI: Only this package's own development copy of Claude Code is on the PATH .*npm install -g @anthropic-ai\/claude-code/,
    );
  });
});
