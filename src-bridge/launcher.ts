/**
 * The `openrouter-delegate-mcp` executable. Claude Code starts a bridge for every session, so its
 * start-up is on the user's critical path: this launcher compiles the bundled bridge with V8's code
 * cache (kept in the user's private cache folder, keyed by the bundle's content and the Node
 * version), which saves most of the compile time. Any cache problem falls back to a plain compile.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { resolveLocations } from '../src-main/platform/locations.js';
import type { BridgeHooks } from './main.js';
import { errorMessage } from '../src-main/common/errors.js';

const bundle = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bridge.cjs');
const source = readFileSync(bundle, 'utf8');
const key = createHash('sha256').update(process.version).update(process.arch).update(source).digest('hex').slice(0, 24);
const cacheFile = path.join(resolveLocations(process.env).cache, 'v8', `bridge-${key}.bin`);

let cachedData: Buffer | undefined;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}

const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: bundle,
  ...(cachedData ? { cachedData } : {}),
});
const needsCache = cachedData === undefined || script.cachedDataRejected === true;

/**
 * Each version of the bridge and of Node writes a cache of its own (about 600 kB), and one installed by npx
 * changes with every release. Caches no start has written for STALE_MS go when a new one is written: a cache
 * still in use that goes costs its next start one compile, and is written again.
 */
const STALE_MS = 14 * 24 * 60 * 60 * 1000;

function saveCache(): void {
  const dir = path.dirname(cacheFile);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
    renameSync(temp, cacheFile);
  } catch {
    // A read-only or full cache folder only costs start-up time.
    return;
  }
  try {
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      if (file === cacheFile || !/^bridge-[0-9a-f]{24}\.bin$/.test(name)) continue;
      if (Date.now() - statSync(file).mtimeMs > STALE_MS) unlinkSync(file);
    }
  } catch {
    // Another start pruning at the same time, or a file that is not ours to remove: left for the next time.
  }
}

const module = { exports: {} as { runBridge?: (hooks: BridgeHooks) => Promise<void> } };
(script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));
const runBridge = module.exports.runBridge;
if (!runBridge) throw new Error(`${bundle} does not export runBridge; reinstall openrouter-delegate.`);
runBridge(needsCache ? { onWarm: saveCache } : {}).catch((error: unknown) => {
  process.stderr.write(`[openrouter-delegate-mcp] fatal: ${errorMessage(error)}\n`);
  process.exit(1);
});
