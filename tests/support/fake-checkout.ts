/**
 * A source checkout of the built app with a stand-in for the Electron binary (the real one cannot be
 * downloaded on these machines): the built bundles, node_modules/electron with a path.txt naming a
 * shell script, and a dist/electron/main.js. The stand-in records how it was started, then either
 * runs the headless service (the tray app's service, as far as the socket can tell) or fails at once
 * (a tray app that cannot run here).
 */
import { chmod, cp, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from './built.js';
import { makeTempHome } from './temp-home.js';

export type FakeElectron = 'serves' | 'exits';

export interface FakeCheckout {
  root: string;
  cli: string;
  bridge: string;
  /** Where the stand-in writes its arguments and ELECTRON_RUN_AS_NODE (inside the test's home). */
  argsFile: (home: string) => string;
  runAsNodeFile: (home: string) => string;
  cleanup: () => Promise<void>;
}

export async function makeFakeCheckout(electron: FakeElectron): Promise<FakeCheckout> {
  const { home: root, cleanup } = await makeTempHome('ord-checkout-');
  for (const dir of ['cli', 'bridge']) await cp(path.join(ROOT, 'dist', dir), path.join(root, 'dist', dir), { recursive: true });
  await mkdir(path.join(root, 'dist', 'electron'), { recursive: true });
  await writeFile(path.join(root, 'dist', 'electron', 'main.js'), '// the tray app (not run: the stand-in binary below is)\n');
  await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'fake-checkout', type: 'module', main: 'dist/electron/main.js' }));
  await mkdir(path.join(root, 'node_modules', 'electron', 'dist'), { recursive: true });
  // The CLI loads the keychain's native module from node_modules, like the real checkout.
  await symlink(path.join(ROOT, 'node_modules', '@napi-rs'), path.join(root, 'node_modules', '@napi-rs'), 'dir');
  await writeFile(path.join(root, 'node_modules', 'electron', 'path.txt'), 'electron');
  const cli = path.join(root, 'dist', 'cli', 'openrouter-delegate.js');
  const behaviour =
    electron === 'serves'
      ? `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(cli)} serve`
      : 'echo "fake electron: cannot open the display" >&2\nexit 3';
  const binary = path.join(root, 'node_modules', 'electron', 'dist', 'electron');
  await writeFile(
    binary,
    `#!/bin/sh\nprintf '%s\\n' "$@" > "$OPENROUTER_DELEGATE_HOME/fake-electron.args"\nprintf '%s\\n' "\${ELECTRON_RUN_AS_NODE-unset}" > "$OPENROUTER_DELEGATE_HOME/fake-electron.run-as-node"\n${behaviour}\n`,
  );
  await chmod(binary, 0o755);
  return {
    root,
    cli,
    bridge: path.join(root, 'dist', 'bridge', 'openrouter-delegate-mcp.js'),
    argsFile: (home) => path.join(home, 'fake-electron.args'),
    runAsNodeFile: (home) => path.join(home, 'fake-electron.run-as-node'),
    cleanup,
  };
}
