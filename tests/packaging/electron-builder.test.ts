/**
 * electron-builder.yml against the code and the build: the targets, what stays out of the asar, the
 * fuses, the launchers in resources/bin. Packaging itself needs the Electron download (release machines
 * only), so the last test packs with a stand-in Electron distribution instead, fuses aside.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { APP_EXECUTABLE_NAME, locateTrayApp } from '../../src-main/platform/tray-app.js';
import { ROOT, assertBuilt } from '../support/built.js';

// electron-builder's own YAML parser and config validator (js-yaml and app-builder-lib come with it).
const require = createRequire(import.meta.url);
const yaml = require('js-yaml') as { load(text: string): unknown };
const configTools = require('app-builder-lib/out/util/config/config') as {
  validateConfiguration(config: unknown, debugLogger: unknown): Promise<void>;
};
const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };

interface FileSet {
  from: string;
  to: string;
  filter?: string[];
}
interface BuilderConfig {
  appId: string;
  productName: string;
  executableName: string;
  files: Array<string | FileSet>;
  asar: boolean;
  asarUnpack: string[];
  extraResources: FileSet[];
  electronFuses: Record<string, boolean>;
  npmRebuild: boolean;
  publish: null;
  mac: { target: string[]; hardenedRuntime: boolean; icon: string; extendInfo: Record<string, unknown>; extraResources: FileSet[] };
  linux: { target: string[]; category: string; icon: string; executableName: string; extraResources: FileSet[] };
  win: { target: string; icon: string; extraResources: FileSet[] };
  nsis: { oneClick: boolean; perMachine: boolean };
}

const POSIX = process.platform !== 'win32';
/** What the built bundles print for --version. */
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const CONFIG_FILE = path.join(ROOT, 'electron-builder.yml');
const config = yaml.load(readFileSync(CONFIG_FILE, 'utf8')) as BuilderConfig;

const LAUNCHERS = {
  'openrouter-delegate-mcp': 'dist/bridge/openrouter-delegate-mcp.js',
  'openrouter-delegate': 'dist/cli/openrouter-delegate.js',
  'openrouter-mcp-config': 'dist/cli/openrouter-mcp-config.js',
} as const;
const BIN = path.join(ROOT, 'resources', 'bin');

beforeAll(() => assertBuilt());

describe('electron-builder.yml', () => {
  it('is a configuration electron-builder accepts', async () => {
    await expect(configTools.validateConfiguration(structuredClone(config), new DebugLogger(false))).resolves.toBeUndefined();
    // The validator is strict: a misspelt key would not pass silently.
    await expect(configTools.validateConfiguration({ ...structuredClone(config), asarUnpak: [] }, new DebugLogger(false))).rejects.toThrow(/asarUnpak/);
  });

  it('builds the Linux AppImage and deb, the macOS dmg and zip, and a per-user Windows NSIS installer', () => {
    expect(config.productName).toBe('OpenRouter Delegate');
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.linux.category).toBe('Development');
    expect(config.mac.target).toEqual(['dmg', 'zip']);
    expect(config.win.target).toBe('nsis');
    expect(config.nsis).toMatchObject({ oneClick: true, perMachine: false });
    expect(config.publish).toBeNull();
  });

  it('gives the deb its project URL from package.json (the homepage, repository and bugs the npm package has too)', async () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { homepage: string; repository: { url: string }; bugs: { url: string } };
    expect(pkg.homepage).toBe('https://github.com/openrouter-delegate/openrouter-delegate');
    expect(pkg.repository.url).toBe('git+https://github.com/openrouter-delegate/openrouter-delegate.git');
    expect(pkg.bugs.url).toBe(`${pkg.homepage}/issues`);
    expect(config).not.toHaveProperty('extraMetadata');
    // What electron-builder's deb target (FpmTarget) asks for, from its own reading of the project; it refuses to build without one.
    const { Packager } = require('app-builder-lib/out/packager') as { Packager: new (options: { projectDir: string }) => { validateConfig(): Promise<void> } };
    const { AppInfo } = require('app-builder-lib/out/appInfo') as {
      AppInfo: new (packager: unknown, version: null) => { computePackageUrl(): Promise<string | null> };
    };
    const packager = new Packager({ projectDir: ROOT });
    await packager.validateConfig();
    await expect(new AppInfo(packager, null).computePackageUrl()).resolves.toBe(pkg.homepage);
  });

  it('makes a tray-only macOS app (no Dock icon) with the hardened runtime', () => {
    expect(config.mac.extendInfo.LSUIElement).toBe(true);
    expect(config.mac.hardenedRuntime).toBe(true);
  });

  it('uses the icon the resources hold', () => {
    for (const icon of [config.mac.icon, config.linux.icon, config.win.icon]) {
      expect(icon).toBe('resources/icon.png');
      expect(existsSync(path.join(ROOT, icon)), icon).toBe(true);
    }
  });

  it('names the app’s executable as the bridge and the CLI look for it, on every platform', () => {
    expect(config.executableName).toBe(APP_EXECUTABLE_NAME);
    expect(config.linux.executableName).toBe(APP_EXECUTABLE_NAME);
  });

  it('ships the built app and its resources, not the launchers, inside the asar', () => {
    expect(config.asar).toBe(true);
    expect(config.files).toEqual(expect.arrayContaining(['dist/**', 'package.json', 'resources/**', '!resources/bin/**']));
  });

  it('unpacks native modules (the keychain’s .node files) and the bundles a plain Node runs', () => {
    expect(config.asarUnpack).toEqual(
      expect.arrayContaining([
        '**/*.node',
        'node_modules/@napi-rs/keyring/**',
        'node_modules/@napi-rs/keyring-*/**',
        'node_modules/@anthropic-ai/sandbox-runtime/**',
        'node_modules/@pondwader/**',
        'node_modules/node-forge/**',
        'dist/cli/**',
        'dist/bridge/**',
      ]),
    );
    expect(config.npmRebuild).toBe(false);
  });

  it('sets every fuse deliberately: Electron never runs as Node, no injected options, only the checked app.asar', () => {
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      loadBrowserProcessSpecificV8Snapshot: false,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  it('puts the POSIX launchers in resources/bin on macOS and Linux, the .cmd ones on Windows', () => {
    const posix = { from: 'resources/bin', to: 'bin', filter: ['*', '!*.cmd'] };
    expect(config.mac.extraResources).toEqual([posix]);
    expect(config.linux.extraResources).toEqual([posix]);
    expect(config.win.extraResources).toEqual([{ from: 'resources/bin', to: 'bin', filter: ['*.cmd'] }]);
  });

  it('marks the unpacked bundles as ES modules for the system Node', () => {
    expect(config.extraResources).toEqual([{ from: 'resources/packaged/package.json', to: 'app.asar.unpacked/dist/package.json' }]);
    expect(JSON.parse(readFileSync(path.join(ROOT, 'resources', 'packaged', 'package.json'), 'utf8'))).toMatchObject({ type: 'module' });
  });
});

describe('the launchers in resources/bin', () => {
  it('are exactly the bridge and the two CLIs, each for POSIX and Windows', async () => {
    const names = Object.keys(LAUNCHERS);
    expect((await readdir(BIN)).sort()).toEqual([...names, ...names.map((n) => `${n}.cmd`)].sort());
  });

  it.each(Object.entries(LAUNCHERS))('%s points at %s, which the build produces and the asar leaves unpacked', (name, bundle) => {
    const sh = readFileSync(path.join(BIN, name), 'utf8');
    const cmd = readFileSync(path.join(BIN, `${name}.cmd`), 'utf8');
    expect(sh.startsWith('#!/bin/sh\n')).toBe(true);
    expect(sh).toContain(`\nbundle=app.asar.unpacked/${bundle}\n`);
    expect(cmd).toContain(`"%~dp0..\\app.asar.unpacked\\${bundle.replaceAll('/', '\\')}" %*`);
    expect(
      cmd.split('\n').every((line) => line === '' || line.endsWith('\r')),
      'CRLF line ends',
    ).toBe(true);
    expect(existsSync(path.join(ROOT, bundle)), `${bundle} is built`).toBe(true);
    expect(config.asarUnpack).toContain(`${path.posix.dirname(bundle)}/**`);
  });

  it.runIf(POSIX).each(Object.keys(LAUNCHERS))('%s is executable', (name) => {
    expect(() => accessSync(path.join(BIN, name), constants.X_OK)).not.toThrow();
  });
});

/** A scratch folder holding only a `node` link, to be PATH: no other Node can be found by accident. */
async function nodeOnlyPath(scratch: string): Promise<string> {
  const dir = path.join(scratch, 'path-bin');
  await mkdir(dir, { recursive: true });
  await symlink(process.execPath, path.join(dir, 'node'));
  return dir;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { env, encoding: 'utf8', timeout: 20_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe.runIf(POSIX)('the POSIX launchers, run from an installed app’s resources folder', () => {
  let scratch = '';
  afterEach(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
    scratch = '';
  });

  /** resources/ as electron-builder lays it out: bin/, and app.asar.unpacked/ with the bundles and the keyring. */
  async function fakeResources(): Promise<string> {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'ord-resources-'));
    const resources = path.join(scratch, 'OpenRouter Delegate', 'resources');
    const unpacked = path.join(resources, 'app.asar.unpacked');
    await mkdir(path.join(resources, 'bin'), { recursive: true });
    for (const name of Object.keys(LAUNCHERS)) {
      await copyFile(path.join(BIN, name), path.join(resources, 'bin', name));
      await chmod(path.join(resources, 'bin', name), 0o755);
    }
    for (const dir of ['cli', 'bridge']) await cp(path.join(ROOT, 'dist', dir), path.join(unpacked, 'dist', dir), { recursive: true });
    await copyFile(path.join(ROOT, 'resources', 'packaged', 'package.json'), path.join(unpacked, 'dist', 'package.json'));
    await mkdir(path.join(unpacked, 'node_modules'), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules', '@napi-rs'), path.join(unpacked, 'node_modules', '@napi-rs'), 'dir');
    return resources;
  }

  it.each(Object.keys(LAUNCHERS))('%s --version runs its bundle on the node found on PATH', async (name) => {
    const resources = await fakeResources();
    const result = run(path.join(resources, 'bin', name), ['--version'], { PATH: await nodeOnlyPath(scratch), HOME: scratch });
    expect(result).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('works through a symbolic link (as an installer or a user may put it on PATH)', async () => {
    const resources = await fakeResources();
    const link = path.join(scratch, 'links', 'openrouter-delegate');
    await mkdir(path.dirname(link));
    await symlink(path.relative(path.dirname(link), path.join(resources, 'bin', 'openrouter-delegate')), link);
    const result = run('/bin/sh', [link, '--version'], { PATH: `${await nodeOnlyPath(scratch)}:/usr/bin:/bin`, HOME: scratch });
    expect(result).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('uses OPENROUTER_DELEGATE_NODE when set', async () => {
    const resources = await fakeResources();
    const result = run('/bin/sh', [path.join(resources, 'bin', 'openrouter-mcp-config'), '--version'], {
      PATH: '/nonexistent',
      OPENROUTER_DELEGATE_NODE: process.execPath,
    });
    expect(result).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('without any Node says what to install, with exit code 127', async () => {
    const resources = await fakeResources();
    const result = run('/bin/sh', [path.join(resources, 'bin', 'openrouter-delegate-mcp'), '--version'], { PATH: path.join(scratch, 'empty') });
    expect(result.code).toBe(127);
    expect(result.stderr).toContain('openrouter-delegate-mcp: needs Node.js 20.19 or later, and there is no node on PATH');
    expect(result.stderr).toContain('OPENROUTER_DELEGATE_NODE');
  });
});

describe.runIf(process.platform === 'linux')('electron-builder, with a stand-in Electron distribution', () => {
  let scratch = '';
  afterEach(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
    scratch = '';
  });

  it('lays out the app as the launchers and the tray-app lookup expect', { timeout: 180_000 }, async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'ord-pack-'));
    // What electron-builder copies from an Electron zip; the real executable is not needed to lay it out.
    const electronDist = path.join(scratch, 'electron-dist');
    await mkdir(path.join(electronDist, 'resources'), { recursive: true });
    await writeFile(path.join(electronDist, 'electron'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    for (const file of ['LICENSE', 'LICENSES.chromium.html']) await writeFile(path.join(electronDist, file), '');
    await writeFile(path.join(electronDist, 'version'), '45.5.0');
    const { build, Platform } = require('electron-builder') as {
      build(options: unknown): Promise<string[]>;
      Platform: { LINUX: { createTarget(type: string): unknown } };
    };
    // Fuses live in the real binary (the stand-in has none to flip); the rest is the file as it is. Given
    // as a file of its own: an object would be merged into electron-builder.yml, doubling every list.
    const configFile = path.join(scratch, 'electron-builder.json');
    await writeFile(configFile, JSON.stringify({ ...config, electronDist, electronFuses: null, directories: { output: path.join(scratch, 'release') } }));
    await build({ projectDir: ROOT, targets: Platform.LINUX.createTarget('dir'), config: configFile });
    const app = path.join(scratch, 'release', 'linux-unpacked');
    const resources = path.join(app, 'resources');
    expect(existsSync(path.join(resources, 'app.asar'))).toBe(true);
    for (const bundle of Object.values(LAUNCHERS)) expect(existsSync(path.join(resources, 'app.asar.unpacked', bundle)), bundle).toBe(true);
    expect((await readdir(path.join(resources, 'app.asar.unpacked', 'node_modules', '@napi-rs'))).sort()).toEqual(
      (await readdir(path.join(ROOT, 'node_modules', '@napi-rs'))).sort(),
    );
    expect((await readdir(path.join(resources, 'bin'))).sort()).toEqual(Object.keys(LAUNCHERS).sort());

    const env = { PATH: await nodeOnlyPath(scratch), HOME: scratch };
    for (const name of Object.keys(LAUNCHERS)) {
      expect(run(path.join(resources, 'bin', name), ['--version'], env), name).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    }
    // The bridge and the CLI, running from there, find the app's own executable.
    expect(locateTrayApp({ bundleDir: path.join(resources, 'app.asar.unpacked', 'dist', 'bridge'), platform: 'linux' })).toEqual({
      found: true,
      binary: path.join(app, APP_EXECUTABLE_NAME),
      args: [],
    });
  });
});
