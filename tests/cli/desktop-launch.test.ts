/**
 * `start` decides between the tray app and the headless service from what this checkout holds. What is installed is
 * handed in (an InstallProbe), so each answer is its own test whatever this machine has: CI has no Electron binary, and
 * a test that read the machine would check only one of them.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseStartHost } from '../../src-main/cli/desktop-launch.js';
import type { InstallProbe } from '../../src-main/platform/tray-app.js';
import { ROOT } from '../support/built.js';

const ELECTRON = path.join(ROOT, 'node_modules', 'electron');
const BINARY = path.join(ELECTRON, 'dist', 'electron');
const BUILT_APP = path.join(ROOT, 'dist', 'electron', 'main.js');

/** A checkout with Electron's package, and with its downloaded binary and the built app only when told. */
function checkout(has: { binary: boolean; built: boolean }): InstallProbe {
  const files = new Set([ELECTRON, ...(has.binary ? [BINARY] : []), ...(has.built ? [BUILT_APP] : [])]);
  return {
    exists: (file) => files.has(file),
    readText: (file) => (has.binary && file === path.join(ELECTRON, 'path.txt') ? 'electron\n' : null),
  };
}

describe('chooseStartHost: `start` looks at this checkout', () => {
  it('on Linux without a display: the headless service, saying so', () => {
    const choice = chooseStartHost({}, 'linux', checkout({ binary: true, built: true }));
    expect(choice).toMatchObject({ host: 'headless', reason: expect.stringContaining('no display (DISPLAY and WAYLAND_DISPLAY are unset)') });
  });

  it('with a display, Electron downloaded and the app built: the tray app on the checkout', () => {
    expect(chooseStartHost({ DISPLAY: ':0' }, 'linux', checkout({ binary: true, built: true }))).toEqual({ host: 'electron', binary: BINARY, args: [ROOT] });
  });

  it('with a display but the app not built: headless, naming `npm run build`', () => {
    const choice = chooseStartHost({ DISPLAY: ':0' }, 'linux', checkout({ binary: true, built: false }));
    expect(choice).toMatchObject({ host: 'headless', reason: expect.stringMatching(/^tray app not built .*npm run build/) });
  });

  it("with a display but Electron's binary not downloaded: headless, saying how to get it", () => {
    const choice = chooseStartHost({ DISPLAY: ':0' }, 'linux', checkout({ binary: false, built: true }));
    expect(choice).toMatchObject({ host: 'headless', reason: expect.stringMatching(/^Electron runtime not installed \(.*install\.js/) });
  });
});
