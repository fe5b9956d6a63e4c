/**
 * The tray app as an installer leaves it, without Electron (which these machines cannot download): what
 * electron-builder.yml puts where, worked out from the real build output by electron-builder's own file
 * matchers (those it packs with), then an installed app's resources folder laid out from exactly that, in
 * which the bridge the tray app's Connect registers is found, and answers Claude Code.
 */
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, realpath, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeSetupFor, packagedResources } from '../../src-main/platform/tray-app.js';
import { ROOT, assertBuilt, runProcess, testEnv } from '../support/built.js';
import { CLAUDE_CLI } from '../support/fake-anthropic.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';

const require = createRequire(import.meta.url);
const yaml = require('js-yaml') as { load(text: string): unknown };

/** electron-builder's matchers for `files`, `asarUnpack` and `extraResources` (app-builder-lib/out/fileMatcher.js). */
interface FileMatcher {
  from: string;
  to: string;
  patterns: string[];
  createFilter(): (file: string, stat: ReturnType<typeof statSync>) => boolean;
}
const { getFileMatchers } = require('app-builder-lib/out/fileMatcher') as {
  getFileMatchers(
    config: unknown,
    name: 'files' | 'asarUnpack' | 'extraResources',
    defaultDestination: string,
    options: { macroExpander: (pattern: string) => string; customBuildOptions: unknown; globalOutDir: string; defaultSrc: string },
  ): FileMatcher[] | null;
};

type PlatformKey = 'linux' | 'mac' | 'win';
const config = yaml.load(readFileSync(path.join(ROOT, 'electron-builder.yml'), 'utf8')) as Record<string, unknown> & Record<PlatformKey, unknown>;
const POSIX = process.platform !== 'win32';
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** What the service answers tools/list with (src-bridge/tools). */
const TOOLS = ['delegate_cancel', 'delegate_followup', 'delegate_list', 'delegate_result', 'delegate_start', 'delegate_status', 'openrouter_models'];

/** Every file under `dir`, as paths relative to `base` with forward slashes; links followed (node_modules may be one). */
async function filesUnder(dir: string, base: string, skip: ReadonlySet<string> = new Set()): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir)) {
    if (skip.has(entry)) continue;
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) found.push(...(await filesUnder(full, base)));
    else found.push(path.relative(base, full).split(path.sep).join('/'));
  }
  return found.sort();
}

/** Where each file goes in an installed app, relative to its resources folder; worked out as electron-builder does. */
interface AppContents {
  /** Project files packed into app.asar (the unpacked ones among them). */
  asar: string[];
  /** Files (project and the production node_modules) written beside the asar, into app.asar.unpacked. */
  unpacked: string[];
  /** extraResources: the source file and its place under resources/. */
  extra: Array<{ source: string; destination: string }>;
}

async function appContents(platform: PlatformKey): Promise<AppContents> {
  const options = {
    macroExpander: (pattern: string) => pattern,
    customBuildOptions: config[platform],
    globalOutDir: path.join(ROOT, 'release'),
    defaultSrc: ROOT,
  };
  const [files] = getFileMatchers(config, 'files', '/app', options) ?? [];
  const [unpack] = getFileMatchers(config, 'asarUnpack', '/app', options) ?? [];
  if (!files || !unpack) throw new Error('electron-builder.yml has no `files` or no `asarUnpack`');
  // node_modules is collected by electron-builder from the production dependencies, not by `files`.
  const project = await filesUnder(ROOT, ROOT, new Set(['.git', 'node_modules', 'release', 'dist.building', 'test-results']));
  const inApp = files.createFilter();
  const isUnpacked = unpack.createFilter();
  const asar = project.filter((file) => inApp(path.join(ROOT, file), statSync(path.join(ROOT, file))));
  const production = Object.keys((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
  // The production dependencies and their optional platform packages (the keychain's prebuilt binary).
  const scopes = [...new Set(production.map((name) => name.split('/')[0] ?? name))];
  const modules = (await Promise.all(scopes.map((scope) => filesUnder(path.join(ROOT, 'node_modules', scope), ROOT)))).flat();
  const unpacked = [...asar, ...modules].filter((file) => isUnpacked(path.join(ROOT, file), statSync(path.join(ROOT, file))));
  const extra: AppContents['extra'] = [];
  for (const matcher of getFileMatchers(config, 'extraResources', '/resources', options) ?? []) {
    const destination = path.posix.relative('/resources', matcher.to.split(path.sep).join('/'));
    if (statSync(matcher.from).isFile()) {
      extra.push({ source: matcher.from, destination });
      continue;
    }
    const accept = matcher.createFilter();
    for (const file of await filesUnder(matcher.from, matcher.from)) {
      if (accept(path.join(matcher.from, file), statSync(path.join(matcher.from, file))))
        extra.push({ source: path.join(matcher.from, file), destination: `${destination}/${file}` });
    }
  }
  return { asar, unpacked, extra };
}

beforeAll(() => assertBuilt());

describe('what electron-builder.yml puts into the app, from the build output', () => {
  it('packs the built app and the tray’s resources, and nothing of the sources, tests or tooling', async () => {
    const { asar } = await appContents('linux');
    expect(asar).toEqual(
      expect.arrayContaining(['package.json', 'dist/electron/main.js', 'dist/electron/preload.cjs', 'dist/renderer/index.html', 'resources/icon.png']),
    );
    expect(asar.filter((file) => file.startsWith('resources/tray/')).length).toBeGreaterThan(0);
    // package.json `main` is what Electron loads from the asar.
    expect(asar).toContain((JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { main: string }).main);
    expect(asar.filter((file) => !/^(package\.json|dist\/.+|resources\/(icon[\w-]*\.png|tray\/.+|README\.md))$/.test(file))).toEqual([]);
  });

  it('leaves the bridge, the CLIs and the keychain module unpacked, for the system Node', async () => {
    const { unpacked } = await appContents('linux');
    const bundles = [...(await filesUnder(path.join(ROOT, 'dist', 'bridge'), ROOT)), ...(await filesUnder(path.join(ROOT, 'dist', 'cli'), ROOT))];
    expect(bundles).toEqual(expect.arrayContaining(['dist/bridge/openrouter-delegate-mcp.js', 'dist/bridge/bridge.cjs', 'dist/cli/openrouter-delegate.js']));
    expect(unpacked).toEqual(expect.arrayContaining(bundles));
    expect(unpacked).toContain('node_modules/@napi-rs/keyring/package.json');
    expect(unpacked.filter((file) => file.endsWith('.node')).length, 'the prebuilt keychain binary').toBeGreaterThan(0);
    // The tray app's own code stays in the asar, where onlyLoadAppFromAsar and the integrity check cover it.
    expect(unpacked.filter((file) => file.startsWith('dist/electron/') || file.startsWith('dist/renderer/'))).toEqual([]);
  });

  it.each([
    ['linux', ['openrouter-delegate', 'openrouter-delegate-mcp', 'openrouter-mcp-config']],
    ['mac', ['openrouter-delegate', 'openrouter-delegate-mcp', 'openrouter-mcp-config']],
    ['win', ['openrouter-delegate-mcp.cmd', 'openrouter-delegate.cmd', 'openrouter-mcp-config.cmd']],
  ] as const)('%s: the launchers in resources/bin, and the package.json that makes the unpacked bundles ES modules', async (platform, launchers) => {
    const { extra } = await appContents(platform);
    expect(extra.map((e) => e.destination).sort()).toEqual(['app.asar.unpacked/dist/package.json', ...launchers.map((name) => `bin/${name}`)].sort());
    expect(extra.find((e) => e.destination === 'app.asar.unpacked/dist/package.json')?.source).toBe(path.join(ROOT, 'resources', 'packaged', 'package.json'));
  });
});

describe.runIf(POSIX)('an installed app’s resources folder, laid out from those files', () => {
  const fake = new FakeOpenRouter();
  let scratch = '';
  let resources = '';
  let env: NodeJS.ProcessEnv = {};
  let claudeConfig = '';
  const launcher = (name: string) => path.join(resources, 'bin', name);

  beforeAll(async () => {
    await fake.start();
    scratch = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ord-installed-')));
    // As on a deb install: /opt/OpenRouter Delegate/resources, a space in the path included.
    resources = path.join(scratch, 'OpenRouter Delegate', 'resources');
    const { unpacked, extra } = await appContents('linux');
    for (const file of unpacked) await cp(path.join(ROOT, file), path.join(resources, 'app.asar.unpacked', file));
    for (const { source, destination } of extra) await cp(source, path.join(resources, destination));
    // Only `node` on PATH, and Claude Code: the system Node the launchers look for, and nothing of this checkout's.
    const pathDir = path.join(scratch, 'path');
    await mkdir(pathDir);
    await symlink(process.execPath, path.join(pathDir, 'node'));
    await symlink(CLAUDE_CLI, path.join(pathDir, 'claude'));
    claudeConfig = path.join(scratch, 'claude-config');
    await mkdir(claudeConfig);
    env = testEnv(path.join(scratch, 'home'), fake.baseUrl, { PATH: pathDir, HOME: scratch, CLAUDE_CONFIG_DIR: claudeConfig, DISABLE_TELEMETRY: '1' });
  }, 60_000);

  afterAll(async () => {
    if (resources) await runProcess(launcher('openrouter-delegate'), ['stop'], { env });
    await fake.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('the tray app’s Connect registers resources/bin/openrouter-delegate-mcp, which is there and executable', () => {
    // The tray app's main process runs from inside the asar: that folder is where it looks from (src-main/electron/main.ts).
    const trayApp = bridgeSetupFor({ bundleDir: path.join(resources, 'app.asar', 'dist', 'electron'), platform: 'linux', nodePath: undefined });
    expect(packagedResources(path.join(resources, 'app.asar', 'dist', 'electron'))).toBe(resources);
    expect(trayApp?.bridgeLauncher).toBe(launcher('openrouter-delegate-mcp'));
    expect(() => accessSync(launcher('openrouter-delegate-mcp'), constants.X_OK)).not.toThrow();
    expect(existsSync(trayApp?.bridgeScript ?? '')).toBe(true);
  });

  it('that launcher, run on the system Node, answers initialize and tools/list, starting the service from the same app', async () => {
    const client = new Client({ name: 'installed-app-test', version: '1.0.0' });
    const childEnv = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const transport = new StdioClientTransport({ command: launcher('openrouter-delegate-mcp'), args: [], env: childEnv, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await client.connect(transport);
      expect(client.getServerVersion()).toMatchObject({ name: 'openrouter-delegate', version: VERSION });
      expect((await client.listTools()).tools.map((tool) => tool.name).sort(), stderr).toEqual(TOOLS);
    } finally {
      await client.close();
    }
    const status = await runProcess(launcher('openrouter-delegate'), ['status', '--json'], { env });
    expect(status.code, status.stderr).toBe(0);
    const pid = (JSON.parse(status.stdout) as { service: { pid: number } }).service.pid;
    if (process.platform === 'linux') expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain(path.join(resources, 'app.asar.unpacked', 'dist', 'cli'));
  }, 60_000);

  it('`openrouter-delegate install` from the app registers that same launcher, and the real Claude Code starts it', async () => {
    const install = await runProcess(launcher('openrouter-delegate'), ['install'], { env });
    expect(install.code, install.stderr).toBe(0);
    const registered = JSON.parse(await readFile(path.join(claudeConfig, '.claude.json'), 'utf8')) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    };
    expect(registered.mcpServers.openrouter).toMatchObject({ command: launcher('openrouter-delegate-mcp'), args: [] });
    const get = await runProcess('claude', ['mcp', 'get', 'openrouter'], { env });
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/Status: .*Connected/);
  }, 60_000);
});
