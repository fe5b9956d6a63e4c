// `npm start` runs this in its `prestart`, after the build: it fetches the Electron runtime the tray app needs, once.
// Electron 45 no longer downloads its runtime when it is installed, only when something first loads the
// `electron` package, and the tray app is looked up without loading it (src-main/platform/tray-app.ts: from
// Node, that would start a download). It is not an install script: npm lists a package's install scripts
// (`prepare` included) on every global install of its tarball and asks for `--allow-scripts`, and the published
// package has no Electron (this file is not in it either). ELECTRON_SKIP_BINARY_DOWNLOAD=1 skips it (CI, machines
// without network), quietly: `npm start` itself says why it runs the headless service. A failed download never
// stops the start: the headless service and the bridge do not need Electron.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const installer = path.join(root, 'node_modules', 'electron', 'install.js');
const skip = process.env.ELECTRON_SKIP_BINARY_DOWNLOAD;

const skipped = skip !== undefined && skip !== '' && skip !== '0' && skip !== 'false';
if (!skipped && existsSync(installer)) {
  // install.js returns at once when the runtime of its version is already there.
  // Its errors are read, not passed on: without a network it throws a bare `TypeError: fetch failed` with its stack,
  // which reads as the start failing (issue 38); its first line is said in ours.
  const run = spawnSync(process.execPath, [installer], { cwd: root, stdio: ['inherit', 'inherit', 'pipe'], encoding: 'utf8', timeout: 10 * 60_000 });
  if (run.status !== 0) {
    const said = (run.stderr ?? '')
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim();
    const how = run.error ? run.error.message : run.signal ? `stopped by ${run.signal}` : `exit code ${run.status}`;
    const why = said ? `${said.replace(/^TypeError: fetch failed$/, 'no network: fetch failed')}; ${how}` : how;
    console.log(
      `openrouter-delegate: the Electron runtime could not be downloaded (${why}). The tray app needs it; the headless ` +
        'service and the bridge do not. Try again with `node node_modules/electron/install.js`.',
    );
  }
}
