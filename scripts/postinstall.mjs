// `npm install` and `npm ci` in a checkout run this as `prepare`, which npm never runs for those who install the
// published package (a postinstall it would run, and this file is not in the package).
// Electron 45 no longer downloads its runtime when it is installed, only when something first loads the
// `electron` package, and the tray app is looked up without loading it (src-main/platform/tray-app.ts: from
// Node, that would start a download). So the runtime is fetched here, and `npm install && npm start` starts
// the tray app as the README says. ELECTRON_SKIP_BINARY_DOWNLOAD=1 skips it (CI, machines without network);
// a failed download never fails the install: the headless service and the bridge do not need Electron.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const installer = path.join(root, 'node_modules', 'electron', 'install.js');
const skip = process.env.ELECTRON_SKIP_BINARY_DOWNLOAD;

if (skip && skip !== '0' && skip !== 'false') {
  console.log('openrouter-delegate: ELECTRON_SKIP_BINARY_DOWNLOAD is set, so the tray app has no Electron runtime; `npm start` runs the headless service.');
} else if (existsSync(installer)) {
  // install.js returns at once when the runtime of its version is already there.
  const run = spawnSync(process.execPath, [installer], { cwd: root, stdio: 'inherit', timeout: 10 * 60_000 });
  if (run.status !== 0) {
    const why = run.error ? run.error.message : run.signal ? `stopped by ${run.signal}` : `exit code ${run.status}`;
    console.log(
      `openrouter-delegate: the Electron runtime could not be downloaded (${why}). The tray app needs it; the headless ` +
        'service and the bridge do not. Try again with `node node_modules/electron/install.js`.',
    );
  }
}
