#!/usr/bin/env node
// Builds one bundle per entry with Vite (Rollup underneath): the service CLI and the MCP bridge.
// `--if-needed` skips the build when every output is newer than every source and config file,
// so `npm start` and `npm test` build on a fresh clone and stay fast afterwards.
import { chmod, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Native modules cannot be bundled; they load from node_modules at run time. */
const NATIVE_EXTERNALS = ['@napi-rs/keyring', 'electron'];

export const ENTRIES = [
  // The CLIs and the bridge are CommonJS so their launchers can compile them with V8's code cache
  // (src-main/platform/code-cache.ts). One launcher serves both CLIs: it runs the bundle of its own name.
  { name: 'cli', input: 'src-main/cli/openrouter-delegate.ts', outDir: 'dist/cli', fileName: 'openrouter-delegate.cjs', format: 'cjs', bin: false },
  { name: 'cli-launcher', input: 'src-main/cli/launcher.ts', outDir: 'dist/cli', fileName: 'openrouter-delegate.js', format: 'es', bin: true },
  { name: 'config', input: 'src-main/cli/openrouter-mcp-config.ts', outDir: 'dist/cli', fileName: 'openrouter-mcp-config.cjs', format: 'cjs', bin: false },
  { name: 'config-launcher', input: 'src-main/cli/launcher.ts', outDir: 'dist/cli', fileName: 'openrouter-mcp-config.js', format: 'es', bin: true },
  { name: 'bridge', input: 'src-bridge/main.ts', outDir: 'dist/bridge', fileName: 'bridge.cjs', format: 'cjs', bin: false },
  { name: 'bridge-launcher', input: 'src-bridge/launcher.ts', outDir: 'dist/bridge', fileName: 'openrouter-delegate-mcp.js', format: 'es', bin: true },
  { name: 'electron-main', input: 'src-main/electron/main.ts', outDir: 'dist/electron', fileName: 'main.js', format: 'es', bin: false },
  // A box's root, warm or cold (src-main/cli/box-root.ts): the sandbox runtime stays a package, as its vendored helpers sit beside its files.
  {
    name: 'box-root',
    input: 'src-main/cli/box-root.ts',
    outDir: 'dist/cli',
    fileName: 'box-root.js',
    format: 'es',
    bin: false,
    external: ['@anthropic-ai/sandbox-runtime'],
  },
  // A sandboxed preload may require only 'electron': one CommonJS file with everything else inlined.
  { name: 'preload', input: 'src-main/electron/preload.ts', outDir: 'dist/electron', fileName: 'preload.cjs', format: 'cjs', bin: false },
];

/** The settings page (Svelte 5): one browser bundle, served by Electron's window and by `serve --ui`. */
export const RENDERER = { root: 'src-renderer', outDir: 'dist/renderer', marker: 'index.html' };

const SOURCE_DIRS = ['src-main', 'src-bridge', 'src-renderer', 'scripts'];
const SOURCE_FILES = ['package.json', 'package-lock.json'];

async function newestMtime(paths) {
  let newest = 0;
  async function visit(p) {
    let s;
    try {
      s = await stat(p);
    } catch {
      return;
    }
    if (s.isDirectory()) {
      for (const entry of await readdir(p)) await visit(path.join(p, entry));
    } else {
      newest = Math.max(newest, s.mtimeMs);
    }
  }
  for (const p of paths) await visit(path.join(root, p));
  return newest;
}

async function oldestOutput() {
  let oldest = Infinity;
  for (const e of [...ENTRIES, { outDir: RENDERER.outDir, fileName: RENDERER.marker }]) {
    try {
      oldest = Math.min(oldest, (await stat(path.join(root, e.outDir, e.fileName))).mtimeMs);
    } catch {
      return 0;
    }
  }
  return oldest;
}

async function buildEntry(build, entry) {
  const version = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')).version;
  await build({
    root,
    configFile: false,
    logLevel: 'warn',
    define: { __APP_VERSION__: JSON.stringify(version) },
    ssr: { noExternal: true, external: [...NATIVE_EXTERNALS, ...(entry.external ?? [])], target: 'node' },
    build: {
      ssr: entry.input,
      outDir: entry.outDir,
      emptyOutDir: false,
      target: 'node20',
      minify: true,
      sourcemap: false,
      reportCompressedSize: false,
      rollupOptions: {
        // zod's sources carry @__PURE__ notes Rollup cannot place; harmless, and noise in every build.
        onwarn(warning, warn) {
          if (warning.code !== 'INVALID_ANNOTATION') warn(warning);
        },
        external: (id) => id.startsWith('node:') || [...NATIVE_EXTERNALS, ...(entry.external ?? [])].some((x) => id === x || id.startsWith(`${x}/`)),
        output: {
          format: entry.format,
          entryFileNames: entry.fileName,
          inlineDynamicImports: true,
          ...(entry.bin ? { banner: '#!/usr/bin/env node' } : {}),
        },
      },
    },
  });
  if (entry.bin) await chmod(path.join(root, entry.outDir, entry.fileName), 0o755);
}

async function buildRenderer(build, outDir) {
  const { svelte } = await import('@sveltejs/vite-plugin-svelte');
  await build({
    root: path.join(root, RENDERER.root),
    configFile: false,
    logLevel: 'warn',
    // Relative asset URLs: the same files load from file:// in Electron and from / over HTTP.
    base: './',
    plugins: [svelte({ compilerOptions: { runes: true } })],
    build: {
      outDir: path.join(root, outDir),
      emptyOutDir: true,
      target: 'chrome120',
      minify: true,
      sourcemap: false,
      reportCompressedSize: false,
      // Everything in files (the CSP allows no inline script or style, and no data: scripts).
      assetsInlineLimit: 0,
      modulePreload: { polyfill: false },
      rollupOptions: {
        onwarn(warning, warn) {
          if (warning.code !== 'INVALID_ANNOTATION') warn(warning);
        },
      },
    },
  });
}

/** One build at a time in this checkout (tests and people may start builds together); a lock older than 5 minutes is stale. */
async function withBuildLock(work) {
  const lock = path.join(root, '.build.lock');
  const started = Date.now();
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const age =
        Date.now() -
        (await stat(lock).then(
          (s) => s.mtimeMs,
          () => Date.now(),
        ));
      if (age > 5 * 60_000) await rm(lock, { recursive: true, force: true });
      else if (Date.now() - started > 10 * 60_000) throw new Error(`Another build holds ${lock}; remove it if no build is running.`);
      else await sleep(250);
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

async function main() {
  const ifNeeded = process.argv.includes('--if-needed');
  // `--renderer`: only the settings page (what its authors rebuild while they work on it).
  const rendererOnly = process.argv.includes('--renderer');
  await withBuildLock(async () => {
    if (ifNeeded && (await oldestOutput()) > (await newestMtime([...SOURCE_DIRS, ...SOURCE_FILES]))) return;
    const { build } = await import('vite');
    const started = Date.now();
    if (rendererOnly) {
      const staging = `${RENDERER.outDir}.building`;
      await buildRenderer(build, staging);
      await rm(path.join(root, RENDERER.outDir), { recursive: true, force: true });
      await rename(path.join(root, staging), path.join(root, RENDERER.outDir));
      console.error(`built ${RENDERER.outDir}/ in ${Date.now() - started} ms`);
      return;
    }
    // Build beside dist/ and swap at the end: a failed build leaves the last good one in place.
    const staging = path.join(root, 'dist.building');
    await rm(staging, { recursive: true, force: true });
    for (const entry of ENTRIES) await buildEntry(build, { ...entry, outDir: entry.outDir.replace(/^dist/, 'dist.building') });
    await buildRenderer(build, RENDERER.outDir.replace(/^dist/, 'dist.building'));
    await rm(path.join(root, 'dist'), { recursive: true, force: true });
    await rename(staging, path.join(root, 'dist'));
    console.error(`built ${ENTRIES.map((e) => `${e.outDir}/${e.fileName}`).join(', ')}, ${RENDERER.outDir}/ in ${Date.now() - started} ms`);
  });
}

await main();
