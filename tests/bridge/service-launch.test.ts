import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TrayAppLocation } from '../../src-main/platform/tray-app.js';
import { chooseServiceLaunch, cliScriptBeside } from '../../src-bridge/service-launch.js';

const NODE = '/usr/bin/node';
const CLI = '/app/dist/cli/openrouter-delegate.js';
const HEADLESS_ARGS = [CLI, 'serve', '--notify-ready'];

describe('chooseServiceLaunch: what the bridge starts when no service answers', () => {
  const electron = '/app/node_modules/electron/dist/electron';
  const installed: TrayAppLocation = { found: true, binary: electron, args: ['/app'] };
  const notInstalled: TrayAppLocation = { found: false, problem: 'Electron runtime not installed (no binary)' };
  const displays: Record<string, Record<string, string>> = { none: {}, x11: { DISPLAY: ':1' }, wayland: { WAYLAND_DISPLAY: 'wayland-1' } };
  const cases = ['linux', 'darwin', 'win32'].flatMap((platform) =>
    Object.keys(displays).flatMap((display) => [true, false].map((trayApp) => ({ platform, display, trayApp }))),
  );

  it.each(cases)('$platform, display $display, tray app installed: $trayApp', ({ platform, display, trayApp }) => {
    const launch = chooseServiceLaunch({ platform, env: displays[display] ?? {}, trayApp: trayApp ? installed : notInstalled, nodePath: NODE, cliScript: CLI });
    const hasDisplay = platform !== 'linux' || display !== 'none';
    if (trayApp && hasDisplay) {
      // The tray app, detached; should it exit before its socket answers, the headless service instead.
      expect(launch).toEqual({
        kind: 'tray-app',
        command: electron,
        args: ['/app'],
        fallback: { kind: 'headless', command: NODE, args: HEADLESS_ARGS, reason: 'the tray app did not start' },
      });
      return;
    }
    expect(launch).toMatchObject({ kind: 'headless', command: NODE, args: HEADLESS_ARGS });
    const reason = launch.kind === 'headless' ? launch.reason : '';
    expect(reason.includes('Electron runtime not installed (no binary)')).toBe(!trayApp);
    expect(reason.includes('no display (DISPLAY and WAYLAND_DISPLAY are unset)')).toBe(!hasDisplay);
  });

  it('runs the CLI shipped beside the bridge (dist/bridge → dist/cli)', () => {
    expect(cliScriptBeside(path.join('/app', 'dist', 'bridge'))).toBe(path.join('/app', 'dist', 'cli', 'openrouter-delegate.js'));
  });
});
