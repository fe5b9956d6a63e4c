import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseStartHost } from '../../src-main/cli/desktop-launch.js';
import { ROOT } from '../support/built.js';

/** This checkout's Electron binary, found as electron's own index.js finds it (without loading it: that would download it). */
function electronBinary(): string | null {
  const pathTxt = path.join(ROOT, 'node_modules', 'electron', 'path.txt');
  if (!existsSync(pathTxt)) return null;
  const binary = path.join(ROOT, 'node_modules', 'electron', 'dist', readFileSync(pathTxt, 'utf8').trim());
  return existsSync(binary) ? binary : null;
}

describe('chooseStartHost: `start` looks at this checkout', () => {
  it('on Linux without a display: the headless service, saying so', () => {
    const choice = chooseStartHost({}, 'linux');
    expect(choice).toMatchObject({ host: 'headless', reason: expect.stringContaining('no display (DISPLAY and WAYLAND_DISPLAY are unset)') });
  });

  it('with a display: the tray app on the checkout exactly when node_modules/electron has its binary and the app is built', () => {
    const binary = electronBinary();
    const built = existsSync(path.join(ROOT, 'dist', 'electron', 'main.js'));
    const choice = chooseStartHost({ DISPLAY: ':0' }, 'linux');
    if (binary && built) expect(choice).toEqual({ host: 'electron', binary, args: [ROOT] });
    else
      expect(choice).toMatchObject({ host: 'headless', reason: expect.stringMatching(binary ? /^tray app not built/ : /^Electron runtime not installed \(/) });
  });
});
