import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  APP_EXECUTABLE_NAME,
  bridgeSetupFor,
  chooseHost,
  displayProblem,
  locateTrayApp,
  packagedResources,
  spawnTrayApp,
} from '../../src-main/platform/tray-app.js';
import type { InstallProbe, TrayAppLocation } from '../../src-main/platform/tray-app.js';
import { makeTempHome } from '../support/temp-home.js';

const POSIX = process.platform !== 'win32';
const NO_DISPLAY = 'no display (DISPLAY and WAYLAND_DISPLAY are unset)';

describe('displayProblem', () => {
  it.each(['darwin', 'win32'])('%s always has a display', (platform) => {
    expect(displayProblem(platform, {})).toBeNull();
  });

  it.each(['linux', 'freebsd', 'openbsd'])('%s needs DISPLAY or WAYLAND_DISPLAY', (platform) => {
    expect(displayProblem(platform, {})).toBe(NO_DISPLAY);
    expect(displayProblem(platform, { DISPLAY: ':0' })).toBeNull();
    expect(displayProblem(platform, { WAYLAND_DISPLAY: 'wayland-0' })).toBeNull();
  });

  it('counts an empty or blank variable as unset', () => {
    expect(displayProblem('linux', { DISPLAY: '', WAYLAND_DISPLAY: '  ' })).toBe(NO_DISPLAY);
  });
});

describe('chooseHost: the tray app when installed and a display exists, else headless saying why', () => {
  const found: TrayAppLocation = { found: true, binary: '/app/electron', args: ['/app'] };
  const missing: TrayAppLocation = { found: false, problem: 'Electron runtime not installed (no binary)' };
  const displays: Record<string, Record<string, string>> = { none: {}, x11: { DISPLAY: ':0' }, wayland: { WAYLAND_DISPLAY: 'wayland-0' } };
  const cases = ['linux', 'darwin', 'win32'].flatMap((platform) =>
    Object.keys(displays).flatMap((display) => [true, false].map((installed) => ({ platform, display, installed }))),
  );

  it.each(cases)('$platform, display $display, tray app installed: $installed', ({ platform, display, installed }) => {
    const choice = chooseHost({ platform, env: displays[display] ?? {}, trayApp: installed ? found : missing });
    const hasDisplay = platform !== 'linux' || display !== 'none';
    if (installed && hasDisplay) {
      expect(choice).toEqual({ host: 'electron', binary: '/app/electron', args: ['/app'] });
      return;
    }
    expect(choice.host).toBe('headless');
    const reason = choice.host === 'headless' ? choice.reason : '';
    expect(reason.includes('Electron runtime not installed (no binary)')).toBe(!installed);
    expect(reason.includes(NO_DISPLAY)).toBe(!hasDisplay);
  });

  it('names both reasons when both hold', () => {
    expect(chooseHost({ platform: 'linux', env: {}, trayApp: missing })).toEqual({
      host: 'headless',
      reason: `Electron runtime not installed (no binary); ${NO_DISPLAY}`,
    });
  });
});

/** An install layout in memory: the files that exist, and the text of those that are read. */
function probe(files: Record<string, string | true>): InstallProbe {
  const at = (file: string) => files[path.resolve(file)];
  return {
    exists: (file) => at(file) !== undefined || Object.keys(files).some((f) => f.startsWith(`${path.resolve(file)}${path.sep}`)),
    readText: (file) => {
      const content = at(file);
      return typeof content === 'string' ? content : null;
    },
  };
}

describe('locateTrayApp in a source checkout', () => {
  const root = path.resolve('/src/checkout');
  const bundleDir = path.join(root, 'dist', 'bridge');
  const electron = path.join(root, 'node_modules', 'electron');
  const binary = path.join(electron, 'dist', 'electron');
  const main = path.join(root, 'dist', 'electron', 'main.js');

  it('runs node_modules/electron’s binary (as path.txt names it) on the checkout', () => {
    const layout = probe({ [path.join(electron, 'path.txt')]: 'electron', [binary]: true, [main]: true });
    expect(locateTrayApp({ bundleDir, platform: 'linux', probe: layout })).toEqual({ found: true, binary, args: [root] });
  });

  it('finds the macOS binary inside Electron.app', () => {
    const mac = path.join(electron, 'dist', 'Electron.app', 'Contents', 'MacOS', 'Electron');
    const layout = probe({ [path.join(electron, 'path.txt')]: 'Electron.app/Contents/MacOS/Electron', [mac]: true, [main]: true });
    expect(locateTrayApp({ bundleDir, platform: 'darwin', probe: layout })).toEqual({ found: true, binary: mac, args: [root] });
  });

  it('without node_modules/electron (an npm install of the CLI): not installed', () => {
    const result = locateTrayApp({ bundleDir, platform: 'linux', probe: probe({ [main]: true }) });
    expect(result).toMatchObject({ found: false, problem: expect.stringMatching(/^Electron runtime not installed \(no node_modules\/electron/) });
  });

  it('when the binary was never downloaded (no path.txt): not installed, and how to fetch it', () => {
    const result = locateTrayApp({ bundleDir, platform: 'linux', probe: probe({ [path.join(electron, 'package.json')]: '{}', [main]: true }) });
    expect(result).toMatchObject({
      found: false,
      problem: expect.stringMatching(/^Electron runtime not installed \(node_modules\/electron has no binary; `node node_modules\/electron\/install\.js`/),
    });
  });

  it('when path.txt names a binary that is gone: not installed, naming it', () => {
    const result = locateTrayApp({ bundleDir, platform: 'linux', probe: probe({ [path.join(electron, 'path.txt')]: 'electron', [main]: true }) });
    expect(result).toMatchObject({ found: false, problem: expect.stringContaining(`Electron runtime not installed (${binary} is missing`) });
  });

  it('when the app itself is not built: says to build it', () => {
    const result = locateTrayApp({ bundleDir, platform: 'linux', probe: probe({ [path.join(electron, 'path.txt')]: 'electron', [binary]: true }) });
    expect(result).toEqual({ found: false, problem: 'tray app not built (dist/electron/main.js is missing; run `npm run build`)' });
  });
});

describe('locateTrayApp in the packaged app (bundles unpacked from the asar)', () => {
  const cases = [
    { platform: 'linux', resources: '/opt/OpenRouter Delegate/resources', binary: `/opt/OpenRouter Delegate/${APP_EXECUTABLE_NAME}` },
    {
      platform: 'darwin',
      resources: '/Applications/OpenRouter Delegate.app/Contents/Resources',
      binary: `/Applications/OpenRouter Delegate.app/Contents/MacOS/${APP_EXECUTABLE_NAME}`,
    },
    {
      platform: 'win32',
      resources: '/Users/me/AppData/Local/Programs/OpenRouter Delegate/resources',
      binary: `/Users/me/AppData/Local/Programs/OpenRouter Delegate/${APP_EXECUTABLE_NAME}.exe`,
    },
  ];

  it.each(cases)('$platform: the app’s own executable, with no arguments (it loads its app.asar)', ({ platform, resources, binary }) => {
    const bundleDir = path.resolve(resources, 'app.asar.unpacked', 'dist', 'cli');
    const result = locateTrayApp({ bundleDir, platform, probe: probe({ [path.resolve(binary)]: true }) });
    expect(result).toEqual({ found: true, binary: path.resolve(binary), args: [] });
  });

  it('a missing executable is a damaged install: says to reinstall', () => {
    const bundleDir = path.resolve('/opt/OpenRouter Delegate/resources/app.asar.unpacked/dist/bridge');
    expect(locateTrayApp({ bundleDir, platform: 'linux', probe: probe({}) })).toMatchObject({
      found: false,
      problem: expect.stringContaining('reinstall OpenRouter Delegate'),
    });
  });
});

describe('bridgeSetupFor: what install registers, one answer per installation', () => {
  const installs = [
    { platform: 'linux', resources: '/opt/OpenRouter Delegate/resources', launcher: 'bin/openrouter-delegate-mcp' },
    { platform: 'darwin', resources: '/Applications/OpenRouter Delegate.app/Contents/Resources', launcher: 'bin/openrouter-delegate-mcp' },
    { platform: 'win32', resources: '/Users/me/AppData/Local/Programs/OpenRouter Delegate/resources', launcher: 'bin/openrouter-delegate-mcp.cmd' },
  ];

  it.each(installs)('$platform, packaged: the tray app (in the asar) and the CLI (unpacked) both register $launcher', ({ platform, resources, launcher }) => {
    const fromTrayApp = path.resolve(resources, 'app.asar', 'dist', 'electron');
    const fromCli = path.resolve(resources, 'app.asar.unpacked', 'dist', 'cli');
    const expected = {
      bridgeLauncher: path.join(path.resolve(resources), launcher),
      bridgeScript: path.resolve(resources, 'app.asar.unpacked', 'dist', 'bridge', 'openrouter-delegate-mcp.js'),
    };
    expect(packagedResources(fromTrayApp)).toBe(path.resolve(resources));
    expect(packagedResources(fromCli)).toBe(path.resolve(resources));
    expect(bridgeSetupFor({ bundleDir: fromTrayApp, platform, nodePath: undefined })).toMatchObject(expected);
    expect(bridgeSetupFor({ bundleDir: fromCli, platform, nodePath: '/usr/bin/node' })).toMatchObject(expected);
  });

  it('a checkout or an npm install: the given Node with the built bridge beside the bundle, no launcher', () => {
    const root = path.resolve('/home/me/.npm-global/lib/node_modules/openrouter-delegate');
    const setup = bridgeSetupFor({ bundleDir: path.join(root, 'dist', 'cli'), platform: 'linux', nodePath: '/usr/bin/node' });
    expect(setup).toEqual({ nodePath: '/usr/bin/node', bridgeScript: path.join(root, 'dist', 'bridge', 'openrouter-delegate-mcp.js') });
    expect(packagedResources(path.join(root, 'dist', 'cli'))).toBeNull();
  });

  it('the tray app in a checkout, started without OPENROUTER_DELEGATE_NODE: nothing to register (Electron is no Node)', () => {
    expect(bridgeSetupFor({ bundleDir: path.resolve('/src/openrouter-delegate/dist/electron'), platform: 'linux', nodePath: undefined })).toBeUndefined();
  });
});

describe.runIf(POSIX)('spawnTrayApp', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });

  async function logsFolder(): Promise<{ logs: string }> {
    const { home, cleanup } = await makeTempHome();
    cleanups.push(cleanup);
    return { logs: path.join(home, 'logs') };
  }

  it('starts the app without ELECTRON_RUN_AS_NODE (which would make Electron plain Node), output to the service log', async () => {
    const locations = await logsFolder();
    const app = spawnTrayApp({
      binary: '/bin/sh',
      args: ['-c', 'echo "run-as-node=${ELECTRON_RUN_AS_NODE-unset} other=$OTHER"; exit 3'],
      env: { ELECTRON_RUN_AS_NODE: '1', OTHER: 'kept' },
      locations,
    });
    expect(await app.exited).toBe('exited with code 3');
    app.release();
    expect(app.logFile).toBe(path.join(locations.logs, 'service.log'));
    expect(await readFile(app.logFile, 'utf8')).toBe('run-as-node=unset other=kept\n');
  });

  it('reports an executable that cannot be started', async () => {
    const app = spawnTrayApp({ binary: '/nonexistent/electron', args: [], env: {}, locations: await logsFolder() });
    expect(await app.exited).toMatch(/^could not be started \(.*ENOENT/);
  });
});
