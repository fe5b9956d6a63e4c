/**
 * The npm package as a user gets it: `npm pack`, then `npm install -g <tarball>` into a fresh prefix with a
 * fresh HOME and a working folder outside the repository, then the installed commands. npm's cache is the
 * machine's (offline when it holds the dependencies; CI reaches the npm registry otherwise). Then the bridge
 * through `npx`, as README registers it, with an npm cache of its own (npx installs into it; the keychain
 * module comes from the registry).
 * Packs with --ignore-scripts: `prepack` rebuilds dist/ in this checkout, which other test files are running;
 * `npm test` has built it already, and the test checks that `prepack` is the build.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, assertBuilt, runProcess, testEnv } from '../support/built.js';
import { DelegationWorld } from '../support/delegation.js';
import { CLAUDE_CLI, ScriptedModel, toolResults } from '../support/fake-anthropic.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { runOuterClaudeIn } from '../support/outer-claude.js';
import { makeRepo } from '../support/git-repo.js';
import { CLOSED_REGISTRY, runPrintedCommands } from '../support/printed-commands.js';
import { CHECK_IDS } from '../../src-main/core/setup/doctor.js';

const PKG = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};
const KEY = 'sk-or-v1-npm-package-0123456789abcdef';
/** This machine's npm cache and configuration (registry, CA file): a new user has theirs too. `--prefix` would move the global one. */
const [NPM_CACHE = '', NPM_USERCONFIG = '', NPM_GLOBALCONFIG = ''] = execFileSync('npm', ['config', 'get', 'cache', 'userconfig', 'globalconfig'], {
  encoding: 'utf8',
})
  .trim()
  .split('\n')
  .map((line) => line.replace(/^\w+=/, ''));
const NETWORK_ENV = /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|HTTPS?_PROXY|NO_PROXY)$/i;

const fake = new FakeOpenRouter();
let root = '';
let tarball = '';
let files: string[] = [];
/** Where npm put the package, and the world the installed commands run in. */
let installed = '';
let env: NodeJS.ProcessEnv = {};
let work = '';
let claudeConfigDir = '';

function npm(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  return runProcess('npm', args, { cwd: options.cwd, env: options.env ?? { ...process.env } });
}

function installedCommand(name: string, args: string[]) {
  return runProcess(path.join(root, 'prefix', 'bin', name), args, { env, cwd: work });
}

/** How README's npx registration starts the bridge, with the packed tarball in place of the package's name. */
function npxBridge(): string[] {
  return ['npx', '-y', '-p', tarball, 'openrouter-delegate-mcp'];
}

/** Starts the bridge through npx as Claude Code would, in the working folder; initialize, tools/list, then closes it. */
async function listToolsThroughNpx(childEnv: NodeJS.ProcessEnv): Promise<string[]> {
  const [command = 'npx', ...args] = npxBridge();
  const definedEnv = Object.fromEntries(Object.entries(childEnv).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const transport = new StdioClientTransport({ command, args, env: definedEnv, cwd: work, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'npm-package-test', version: '1.0.0' });
  try {
    await client.connect(transport);
    return (await client.listTools()).tools.map((tool) => tool.name);
  } catch (error) {
    throw new Error(`npx bridge: ${String(error)}\n${stderr}`);
  } finally {
    // Waits for npx (and the bridge under it) to exit: the code cache is written by then.
    await client.close();
  }
}

beforeAll(async () => {
  assertBuilt();
  await fake.start();
  fake.addKey(KEY);
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ord-npm-')));
  const userHome = path.join(root, 'user');
  const pathDir = path.join(root, 'path');
  work = path.join(root, 'work');
  claudeConfigDir = path.join(root, 'claude-config');
  for (const dir of [userHome, pathDir, work, claudeConfigDir]) await mkdir(dir, { recursive: true });

  const pack = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', root], { cwd: ROOT });
  expect(pack.code, pack.stderr).toBe(0);
  const [report] = JSON.parse(pack.stdout) as Array<{ filename: string; size: number; unpackedSize: number; files: Array<{ path: string }> }>;
  if (!report) throw new Error(`npm pack said nothing:\n${pack.stderr}`);
  tarball = path.join(root, report.filename);
  files = report.files.map((f) => f.path).sort();
  console.log(`npm package: ${report.filename}, ${report.size} bytes packed, ${report.unpackedSize} unpacked, ${files.length} files`);

  // A new user's machine: nothing but this prefix, this HOME, the system's node and npm, and Claude Code.
  const npmEnv: NodeJS.ProcessEnv = {
    PATH: `${path.join(root, 'prefix', 'bin')}${path.delimiter}${pathDir}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}/usr/bin:/bin`,
    HOME: userHome,
    npm_config_cache: NPM_CACHE,
    npm_config_userconfig: NPM_USERCONFIG,
    npm_config_globalconfig: NPM_GLOBALCONFIG,
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => NETWORK_ENV.test(name))),
  };
  const install = await npm(['install', '-g', tarball, '--prefix', path.join(root, 'prefix'), '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: work,
    env: npmEnv,
  });
  expect(install.code, install.stderr).toBe(0);
  // npm 11 lists a package's install scripts on a global install and asks for --allow-scripts; there are none.
  expect(install.stderr).not.toContain('install-scripts');
  installed = path.join(root, 'prefix', 'lib', 'node_modules', PKG.name);
  // The pinned Claude Code CLI, as `claude` on the PATH (the devDependency, not the repository's PATH).
  await symlink(CLAUDE_CLI, path.join(pathDir, 'claude'));
  env = testEnv(path.join(root, 'ord'), fake.baseUrl, {
    ...npmEnv,
    CLAUDE_CONFIG_DIR: claudeConfigDir,
    OPENROUTER_API_KEY: KEY,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  });
}, 180_000);

afterAll(async () => {
  if (installed) await installedCommand('openrouter-delegate', ['stop']);
  await fake.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('is publishable: a name, no "private", the bins into dist/, a prepack that builds, Electron out of the dependencies', () => {
    expect(PKG.name).toBe('openrouter-delegate');
    expect(PKG).not.toHaveProperty('private');
    expect(PKG.bin).toEqual({
      'openrouter-delegate': 'dist/cli/openrouter-delegate.js',
      'openrouter-delegate-mcp': 'dist/bridge/openrouter-delegate-mcp.js',
      'openrouter-mcp-config': 'dist/cli/openrouter-mcp-config.js',
    });
    expect(PKG.scripts.prepack).toBe('node scripts/build.mjs');
    // No install scripts at all, so a global install of the tarball asks for no `--allow-scripts`: the checkout's
    // Electron download runs in `npm start`'s prestart instead.
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(PKG.scripts).not.toHaveProperty(hook);
    expect(PKG.scripts.prestart).toContain('node scripts/electron-runtime.mjs');
    // Everything else is bundled into dist/ (scripts/build.mjs); the keychain is native code and loads at run time,
    // and the sandbox runtime runs as a program of its own (the box around each delegate, core/jobs/process/box.ts).
    expect(Object.keys(PKG.dependencies)).toEqual(['@anthropic-ai/sandbox-runtime', '@napi-rs/keyring']);
  });

  it('ships dist/ (bridge, CLIs, settings page), README, LICENSE and SECURITY.md, and nothing else', () => {
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'SECURITY.md', 'package.json', ...Object.values(PKG.bin), 'dist/bridge/bridge.cjs']));
    expect(files).toContain('dist/renderer/index.html');
    expect(files.some((f) => /^dist\/renderer\/assets\/index-[\w-]+\.js$/.test(f))).toBe(true);
    // npm always packs package.json's `main` (Electron's entry in a checkout); nothing loads it from the package.
    const allowed = /^(LICENSE|README\.md|SECURITY\.md|package\.json|dist\/(bridge|cli)\/[\w.-]+\.c?js|dist\/renderer\/.+|dist\/electron\/main\.js)$/;
    expect(files.filter((f) => !allowed.test(f))).toEqual([]);
    expect(files.filter((f) => /\.map$|^(tests|src-|bench|scripts|resources|docs)\b|fixtures/.test(f))).toEqual([]);
  });

  it('installs globally with its three commands, and only the keychain module beside it', () => {
    for (const name of Object.keys(PKG.bin)) expect(statSync(path.join(root, 'prefix', 'bin', name)).isFile()).toBe(true);
    expect(existsSync(path.join(installed, 'node_modules', '@napi-rs', 'keyring'))).toBe(true);
    expect(existsSync(path.join(installed, 'node_modules', 'electron'))).toBe(false);
  });

  it('runs --version and doctor --json from the prefix', async () => {
    const version = await installedCommand('openrouter-delegate', ['--version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toContain(PKG.version);
    const doctor = await installedCommand('openrouter-delegate', ['doctor', '--json']);
    // Checks may fail on a new machine (nothing registered yet); the report is what is tested.
    const report = JSON.parse(doctor.stdout) as { ok: boolean; checks: Array<{ id: string; status: string; summary: string }> };
    expect(typeof report.ok).toBe('boolean');
    // Every check, in the doctor's order.
    expect(report.checks.map((c) => c.id)).toEqual([...CHECK_IDS]);
    for (const check of report.checks) expect(['ok', 'warn', 'fail']).toContain(check.status);
    expect(report.checks.find((c) => c.id === 'claude')?.status).toBe('ok');
  });

  it('install registers the installed bridge with the real Claude Code, which starts it', async () => {
    const result = await installedCommand('openrouter-delegate', ['install']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Registered the bridge as "openrouter"');
    const bridge = path.join(installed, 'dist', 'bridge', 'openrouter-delegate-mcp.js');
    const config = JSON.parse(await readFile(path.join(claudeConfigDir, '.claude.json'), 'utf8')) as { mcpServers: Record<string, { args: string[] }> };
    expect(config.mcpServers.openrouter?.args).toEqual([bridge]);
    const get = await runProcess('claude', ['mcp', 'get', 'openrouter'], { env, cwd: work });
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toContain(`Args: ${bridge}`);
    expect(get.stdout).toMatch(/Status: .*Connected/);
  }, 60_000);

  it('the commands the product prints run verbatim from a project folder, from the installed package, asking no registry', async () => {
    // The user's project, elsewhere; the prefix's bin on the PATH as npm's global install leaves it; no registry answers.
    const project = path.join(root, 'project');
    await makeRepo(project, { 'README.md': 'x\n' });
    const doctor = await runPrintedCommands({ ...env, npm_config_registry: CLOSED_REGISTRY }, project);
    expect(doctor).toMatch(/^✓ Commands on your PATH: `openrouter-delegate` runs this installation/m);
    expect(doctor).toMatch(/^✓ Claude Code CLI: /m);
  }, 120_000);

  it('serve --ui serves the packaged settings page', async () => {
    await installedCommand('openrouter-delegate', ['stop']);
    const child = spawn(path.join(root, 'prefix', 'bin', 'openrouter-delegate'), ['serve', '--ui', '--notify-ready'], {
      env,
      cwd: work,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      let out = '';
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const found = /Settings page: (\S+)/.exec(out);
          if (found?.[1] && /^ready$/m.test(out)) resolve(found[1]);
        });
        child.once('exit', (code) => reject(new Error(`serve --ui exited (${code}):\n${err}`)));
      });
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<script type="module"');
    } finally {
      await installedCommand('openrouter-delegate', ['stop']);
      await exited;
    }
  }, 60_000);

  it('the README’s npx registration works: Claude Code starts the bridge from npm’s cache through npx', async () => {
    // A cache of its own: npx installs into <cache>/_npx, and the machine's npm cache gets nothing.
    const npxEnv = { ...env, npm_config_cache: path.join(root, 'npx-cache'), CLAUDE_CONFIG_DIR: path.join(root, 'claude-config-npx') };
    await mkdir(path.join(root, 'claude-config-npx'));
    // README, "From npm": `claude mcp add --scope user openrouter -- npx -y -p openrouter-delegate openrouter-delegate-mcp`, the tarball for the name.
    const add = await runProcess('claude', ['mcp', 'add', '--scope', 'user', 'openrouter', '--', ...npxBridge()], { env: npxEnv, cwd: work });
    expect(add.code, add.stderr).toBe(0);
    const get = await runProcess('claude', ['mcp', 'get', 'openrouter'], { env: npxEnv, cwd: work });
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toContain(`Args: -y -p ${tarball} openrouter-delegate-mcp`);
    expect(get.stdout).toMatch(/Status: .*Connected/);
    const [installDir = ''] = await readdir(path.join(root, 'npx-cache', '_npx'));
    expect(existsSync(path.join(root, 'npx-cache', '_npx', installDir, 'node_modules', PKG.name, 'dist', 'bridge', 'openrouter-delegate-mcp.js'))).toBe(true);
  }, 120_000);

  it('through npx, the bridge keeps its V8 code cache in the user’s cache folder, and the next start takes it', async () => {
    const npxEnv = { ...env, npm_config_cache: path.join(root, 'npx-cache') };
    const cacheDir = path.join(root, 'ord', 'cache', 'v8');
    await rm(cacheDir, { recursive: true, force: true });
    const caches = async () => (await readdir(cacheDir).catch(() => [])).filter((name) => name.endsWith('.bin'));
    expect(await listToolsThroughNpx(npxEnv)).toContain('delegate_start');
    const [written = ''] = await caches();
    expect(written).toMatch(/^bridge-\w+\.bin$/);
    const before = await stat(path.join(cacheDir, written));
    expect(await listToolsThroughNpx(npxEnv)).toContain('delegate_start');
    // Taken, not rejected: a missing or refused cache is written again (a new file, renamed into place).
    expect(await caches()).toEqual([written]);
    const after = await stat(path.join(cacheDir, written));
    expect({ ino: after.ino, mtimeMs: after.mtimeMs }).toEqual({ ino: before.ino, mtimeMs: before.mtimeMs });
  }, 120_000);

  it('a real claude -p delegates one job through the installed bridge, whose service runs it', async () => {
    const world = new DelegationWorld({ prefix: 'ord-npm-job-' });
    try {
      await world.start({}, { PATH: env.PATH });
      world.model.script('inner', [{ text: 'Counted by the packaged service.' }]);
      world.model.script('outer', [
        { toolUse: { name: 'mcp__openrouter__delegate_start', input: { prompt: `${ScriptedModel.marker('inner')} Count.`, wait_seconds: 60 } } },
        { dynamic: (request) => ({ text: `Delegate said: ${toolResults(request).at(-1)?.text.includes('Counted by the packaged service.') ?? false}` }) },
      ]);
      const outer = await runOuterClaudeIn(world, {
        serverName: 'openrouter',
        server: { command: process.execPath, args: [path.join(installed, 'dist', 'bridge', 'openrouter-delegate-mcp.js')] },
        tools: ['delegate_start'],
        input: `${ScriptedModel.marker('outer')} Delegate the count.`,
      });
      expect(outer.code, outer.stderr).toBe(0);
      expect((JSON.parse(outer.stdout) as { result: string }).result).toBe('Delegate said: true');
      expect(world.model.requestsFor('inner')).toHaveLength(1);
      // The service that ran the job is the installed one, not this checkout's.
      const status = await runProcess(path.join(root, 'prefix', 'bin', 'openrouter-delegate'), ['status', '--json'], { env: world.env, cwd: work });
      expect(status.code, status.stderr).toBe(0);
      const pid = (JSON.parse(status.stdout) as { service: { pid: number } }).service.pid;
      if (process.platform === 'linux') expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain(installed);
    } finally {
      await world.stop();
    }
  }, 120_000);
});
