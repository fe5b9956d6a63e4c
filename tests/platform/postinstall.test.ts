/**
 * scripts/postinstall.mjs, run the way npm runs it after `npm install` in a checkout: it fetches the Electron
 * runtime through electron's own installer (Electron 45 no longer does at install time), unless
 * ELECTRON_SKIP_BINARY_DOWNLOAD says not to, and a failed download never fails the install. The installer
 * here is a stand-in that writes down that it ran (the real one needs the network, which these machines lack).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/postinstall.mjs', import.meta.url));
const run = promisify(execFile);
let root = '';

afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** A checkout with the script and an electron installer that records its run and exits with `code`. */
async function checkout(code: number | null): Promise<string> {
  root = await mkdtemp(path.join(os.tmpdir(), 'ord-postinstall-'));
  await mkdir(path.join(root, 'scripts'));
  await copyFile(SCRIPT, path.join(root, 'scripts', 'postinstall.mjs'));
  if (code !== null) {
    await mkdir(path.join(root, 'node_modules', 'electron'), { recursive: true });
    await writeFile(
      path.join(root, 'node_modules', 'electron', 'install.js'),
      `require('fs').writeFileSync(require('path').join(__dirname, 'ran'), process.cwd()); process.exit(${code});`,
    );
  }
  return root;
}

async function postinstall(env: Record<string, string> = {}): Promise<string> {
  const { ELECTRON_SKIP_BINARY_DOWNLOAD: _skip, ...parent } = process.env;
  const { stdout } = await run(process.execPath, [path.join(root, 'scripts', 'postinstall.mjs')], { env: { ...parent, ...env } });
  return stdout;
}

/** Where the stand-in installer ran from, or null when it did not run. */
const ran = () => readFile(path.join(root, 'node_modules', 'electron', 'ran'), 'utf8').catch(() => null);

describe('npm install in a checkout', () => {
  it("runs electron's installer from the checkout, quietly when it succeeds", async () => {
    await checkout(0);
    expect(await postinstall()).toBe('');
    expect(await ran()).toBe(root);
  });

  it('does not fail the install when the download fails, and says how to try again', async () => {
    await checkout(1);
    const said = await postinstall();
    expect(said).toContain('the Electron runtime could not be downloaded (exit code 1)');
    expect(said).toContain('node node_modules/electron/install.js');
    expect(await ran()).toBe(root);
  });

  it('skips the download when ELECTRON_SKIP_BINARY_DOWNLOAD is set, and says what npm start will do', async () => {
    await checkout(0);
    expect(await postinstall({ ELECTRON_SKIP_BINARY_DOWNLOAD: '1' })).toContain('`npm start` runs the headless service');
    expect(await ran()).toBeNull();
  });

  it('does nothing where there is no electron (an installed package, not a checkout)', async () => {
    await checkout(null);
    expect(await postinstall()).toBe('');
  });
});
