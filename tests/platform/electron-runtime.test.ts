/**
 * scripts/electron-runtime.mjs, run the way `npm start`'s prestart runs it in a checkout: it fetches the Electron
 * runtime through electron's own installer (Electron 45 no longer does at install time), unless
 * ELECTRON_SKIP_BINARY_DOWNLOAD says not to, and a failed download never stops the start. The installer
 * here is a stand-in that writes down that it ran (the real one needs the network, which these machines lack).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/electron-runtime.mjs', import.meta.url));
const run = promisify(execFile);
let root = '';

afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

/** A checkout with the script and an electron installer that records its run, says `stderr`, and exits with `code`. */
async function checkout(code: number | null, stderr = ''): Promise<string> {
  root = await mkdtemp(path.join(os.tmpdir(), 'ord-electron-runtime-'));
  await mkdir(path.join(root, 'scripts'));
  await copyFile(SCRIPT, path.join(root, 'scripts', 'electron-runtime.mjs'));
  if (code !== null) {
    await mkdir(path.join(root, 'node_modules', 'electron'), { recursive: true });
    await writeFile(
      path.join(root, 'node_modules', 'electron', 'install.js'),
      `require('fs').writeFileSync(require('path').join(__dirname, 'ran'), process.cwd()); process.stderr.write(${JSON.stringify(stderr)}); process.exit(${code});`,
    );
  }
  return root;
}

async function electronRuntime(env: Record<string, string> = {}): Promise<string> {
  return (await electronRuntimeSaid(env)).stdout;
}

async function electronRuntimeSaid(env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  const { ELECTRON_SKIP_BINARY_DOWNLOAD: _skip, ...parent } = process.env;
  return run(process.execPath, [path.join(root, 'scripts', 'electron-runtime.mjs')], { env: { ...parent, ...env } });
}

/** Where the stand-in installer ran from, or null when it did not run. */
const ran = () => readFile(path.join(root, 'node_modules', 'electron', 'ran'), 'utf8').catch(() => null);

describe('npm start in a checkout', () => {
  it("runs electron's installer from the checkout, quietly when it succeeds", async () => {
    await checkout(0);
    expect(await electronRuntime()).toBe('');
    expect(await ran()).toBe(root);
  });

  it('does not stop the start when the download fails, and says how to try again', async () => {
    await checkout(1);
    const said = await electronRuntime();
    expect(said).toContain('the Electron runtime could not be downloaded (exit code 1)');
    expect(said).toContain('node node_modules/electron/install.js');
    expect(await ran()).toBe(root);
  });

  it("says the installer's error in one line, not its stack: without a network, `fetch failed` (issue 38)", async () => {
    await checkout(1, 'TypeError: fetch failed\n    at node:internal/deps/undici/undici:14976:13\n    at async FetchDownloader.download (…)\n');
    const said = await electronRuntimeSaid();
    expect(said.stdout).toContain('the Electron runtime could not be downloaded (no network: fetch failed; exit code 1)');
    expect(`${said.stdout}${said.stderr}`).not.toContain('undici');
  });

  it('skips the download, quietly, when ELECTRON_SKIP_BINARY_DOWNLOAD is set (npm start then says why it runs headless)', async () => {
    await checkout(0);
    expect(await electronRuntime({ ELECTRON_SKIP_BINARY_DOWNLOAD: '1' })).toBe('');
    expect(await ran()).toBeNull();
    // "0" and "false" mean "do not skip", as in Electron's own installer.
    expect(await electronRuntime({ ELECTRON_SKIP_BINARY_DOWNLOAD: '0' })).toBe('');
    expect(await ran()).toBe(root);
  });

  it('does nothing where there is no electron (an installed package, not a checkout)', async () => {
    await checkout(null);
    expect(await electronRuntime()).toBe('');
  });
});
