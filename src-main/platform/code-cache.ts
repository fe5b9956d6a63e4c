/**
 * Runs a bundled CommonJS program compiled with V8's code cache: what the bridge and the CLIs' launchers share.
 * Every command and every Claude Code session starts a new Node, and compiling a bundle of several hundred kB is
 * most of a start; a cache V8 accepts skips that. The cache lives in the user's private cache folder, keyed by the
 * bundle's content, the Node version and the CPU, never beside the bundle (a copy in npm's cache or a read-only
 * install starts as fast as any). Any cache problem (none yet, corrupt, refused by V8, a read-only or full folder)
 * costs a plain compile and nothing else.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/**
 * Each version of a bundle and of Node writes a cache of its own (a few hundred kB), and one installed by npx changes
 * with every release. Caches no start has written for STALE_MS go when a new one of the same kind is written: a
 * cache still in use that goes costs its next start one compile, and is written again.
 */
export const STALE_MS = 14 * 24 * 60 * 60 * 1000;

export interface CachedBundleOptions {
  /** The CommonJS bundle to run. */
  bundle: string;
  /** What the bundle sees as `__filename` (and, through it, `import.meta.url`): the file users run, the launcher. */
  entryFile: string;
  /** The kind of cache, its files' prefix (`bridge`, `openrouter-delegate` …); only this kind's stale caches are pruned. */
  name: string;
  /** The folder the caches live in (made 0700 when missing). */
  cacheDir: string;
}

export interface CachedBundle {
  /** What the bundle exported. */
  exports: Record<string, unknown>;
  /** True when this start found no cache it could use: `saveCache` writes one; otherwise it does nothing. */
  needsCache: boolean;
  /**
   * Writes the cache (0600, through a temporary file and a rename, so a start never reads half a cache) when this
   * start needs one, then prunes this kind's stale caches. Synchronous, so it may run in an 'exit' listener; never
   * throws. Call it once the program has done its first work: V8 then also caches the functions that work compiled.
   */
  saveCache(): void;
}

/** The cache file for this bundle's content on this Node, V8 and CPU (Electron's Node may share a version number, not its V8). */
export function cacheFileFor(cacheDir: string, name: string, source: string): string {
  const key = createHash('sha256').update(process.version).update(process.versions.v8).update(process.arch).update(source).digest('hex').slice(0, 24);
  return path.join(cacheDir, `${name}-${key}.bin`);
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Which file is at `file` now (none: ''), to tell whether another start wrote the cache since this one read it. */
function identity(file: string): string {
  try {
    const { ino, mtimeMs, size } = statSync(file);
    return `${ino}:${mtimeMs}:${size}`;
  } catch {
    return '';
  }
}

function writeCache(file: string, data: Buffer): boolean {
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, data, { mode: 0o600 });
    renameSync(temp, file);
    return true;
  } catch {
    // A read-only or full cache folder only costs start-up time.
    return false;
  }
}

function pruneStale(cacheDir: string, name: string, keep: string): void {
  const ours = new RegExp(`^${name.replace(/[^a-z0-9]/gi, '\\$&')}-[0-9a-f]{24}\\.bin$`);
  try {
    for (const entry of readdirSync(cacheDir)) {
      const file = path.join(cacheDir, entry);
      if (file === keep || !ours.test(entry)) continue;
      if (Date.now() - statSync(file).mtimeMs > STALE_MS) unlinkSync(file);
    }
  } catch {
    // Another start pruning at the same time, or a file that is not ours to remove: left for the next time.
  }
}

/** Compiles and runs `bundle` (with the cache when one is there and V8 takes it); see CachedBundle for the rest. */
export function runCachedBundle(options: CachedBundleOptions): CachedBundle {
  const { bundle, entryFile, name, cacheDir } = options;
  const source = readFileSync(bundle, 'utf8');
  const cacheFile = cacheFileFor(cacheDir, name, source);
  const cachedData = readCache(cacheFile);
  const seen = identity(cacheFile);
  // The wrapper Node itself puts around a CommonJS module; `filename` puts the bundle's own lines in stack traces.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle,
    ...(cachedData ? { cachedData } : {}),
  });
  const needsCache = cachedData === undefined || script.cachedDataRejected === true;
  let saved = !needsCache;
  const saveCache = () => {
    if (saved) return;
    saved = true;
    // A long run (the service, a bridge) may end after a shorter one wrote the cache: that one stands.
    if (identity(cacheFile) !== seen) return;
    if (writeCache(cacheFile, script.createCachedData())) pruneStale(cacheDir, name, cacheFile);
  };
  const module = { exports: {} as Record<string, unknown> };
  // `require` resolves from the bundle's folder (the native keychain module is not bundled); `__filename` is the
  // launcher beside it, so a program that runs itself again (the service, the watchdog) runs the launcher, cache and all.
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, createRequire(bundle), module, entryFile, path.dirname(entryFile));
  return { exports: module.exports, needsCache, saveCache };
}
