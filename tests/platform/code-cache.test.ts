/**
 * The V8 code cache the bridge's and the CLIs' launchers share (src-main/platform/code-cache.ts), on a small
 * CommonJS bundle in a real folder. The launchers themselves, as users run them: tests/e2e/cli-code-cache.test.ts
 * and tests/e2e/bridge-models.test.ts.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STALE_MS, cacheFileFor, runCachedBundle } from '../../src-main/platform/code-cache.js';

/** A bundle with enough functions for V8 to cache, which reports the names it was run with. */
const SOURCE = `"use strict";
const path = require("node:path");
${Array.from({ length: 50 }, (_, i) => `function f${i}(x) { return x * ${i} + path.sep.length; }`).join('\n')}
exports.sum = [${Array.from({ length: 50 }, (_, i) => `f${i}`).join(', ')}].reduce((total, f) => total + f(2), 0);
exports.filename = __filename;
exports.dirname = __dirname;
exports.self = this === exports;
`;

let root: string;
let bundle: string;
let cacheDir: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ord-code-cache-'));
  bundle = path.join(root, 'dist', 'tool.cjs');
  cacheDir = path.join(root, 'cache', 'v8');
  await mkdir(path.dirname(bundle));
  await writeFile(bundle, SOURCE);
});
afterEach(async () => {
  await chmod(path.join(root, 'cache'), 0o700).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

let starts = 0;
/**
 * One start, as a new process would make it. V8 keeps what this process compiled and would hand it back for the same
 * source from the same file without reading the cache at all; each start runs its own copy of the bundle, as another
 * install of the same release would (the cache is keyed by the content, not the place).
 */
function start() {
  const copy = path.join(root, `start-${++starts}`, 'tool.cjs');
  mkdirSync(path.dirname(copy));
  copyFileSync(bundle, copy);
  return runCachedBundle({ bundle: copy, entryFile: path.join(path.dirname(copy), 'tool.js'), name: 'tool', cacheDir });
}
const cacheFile = async () => cacheFileFor(cacheDir, 'tool', await readFile(bundle, 'utf8'));
const cacheNames = async () => (await readdir(cacheDir).catch(() => [])).sort();

describe('runCachedBundle', () => {
  it('runs the bundle as Node runs a CommonJS module, with the launcher as its file', () => {
    const { exports } = start();
    const folder = path.join(root, `start-${starts}`);
    expect(exports).toEqual({ sum: 2500, filename: path.join(folder, 'tool.js'), dirname: folder, self: true });
  });

  it('the first start needs a cache and writes a private one; the next start takes it and writes nothing', async () => {
    const first = start();
    expect(first.needsCache).toBe(true);
    expect(await cacheNames()).toEqual([]);
    first.saveCache();
    const file = await cacheFile();
    expect(await cacheNames()).toEqual([path.basename(file)]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(cacheDir)).mode & 0o777).toBe(0o700);
    const written = await stat(file);

    const second = start();
    expect(second.needsCache).toBe(false);
    second.saveCache();
    const after = await stat(file);
    expect({ ino: after.ino, mtimeMs: after.mtimeMs }).toEqual({ ino: written.ino, mtimeMs: written.mtimeMs });
  });

  it('a corrupt cache still runs the bundle, and is replaced by a good one', async () => {
    start().saveCache();
    const file = await cacheFile();
    await writeFile(file, 'not a code cache');
    const next = start();
    expect(next.exports.sum).toBe(2500);
    expect(next.needsCache).toBe(true);
    next.saveCache();
    expect((await readFile(file)).length).toBeGreaterThan(100);
    expect(start().needsCache).toBe(false);
  });

  it('a new bundle has a cache of its own', async () => {
    start().saveCache();
    const before = await cacheFile();
    await writeFile(bundle, `${SOURCE}exports.version = 2;\n`);
    const next = start();
    expect(next.needsCache).toBe(true);
    expect(next.exports.version).toBe(2);
    next.saveCache();
    expect(await cacheNames()).toEqual([path.basename(before), path.basename(await cacheFile())].sort());
  });

  it.runIf(process.platform !== 'win32' && process.getuid?.() !== 0)('a cache folder it cannot write costs only the cache', async () => {
    await mkdir(path.join(root, 'cache'), { mode: 0o500 });
    const run = start();
    expect(run.exports.sum).toBe(2500);
    expect(() => run.saveCache()).not.toThrow();
    expect(await cacheNames()).toEqual([]);
  });

  it('a cache folder that cannot be made (a file in its way) costs only the cache', async () => {
    await writeFile(path.join(root, 'cache'), 'a file where the folder should be');
    const run = start();
    expect(run.exports.sum).toBe(2500);
    expect(() => run.saveCache()).not.toThrow();
  });

  it('leaves a cache another start wrote while this one ran', async () => {
    const long = start();
    const short = start();
    short.saveCache();
    const file = await cacheFile();
    const written = await stat(file);
    long.saveCache();
    const after = await stat(file);
    expect({ ino: after.ino, mtimeMs: after.mtimeMs }).toEqual({ ino: written.ino, mtimeMs: written.mtimeMs });
  });

  it("removes its own kind's caches no start has written for two weeks when it writes one, and nothing else", async () => {
    await mkdir(cacheDir, { recursive: true });
    const names = {
      old: `tool-${'a'.repeat(24)}.bin`,
      recent: `tool-${'b'.repeat(24)}.bin`,
      otherKind: `bridge-${'c'.repeat(24)}.bin`,
      notOurs: 'notes.bin',
    };
    const longAgo = new Date(Date.now() - STALE_MS - 24 * 60 * 60 * 1000);
    for (const [what, name] of Object.entries(names)) {
      const file = path.join(cacheDir, name);
      await writeFile(file, 'an older version');
      if (what !== 'recent') await utimes(file, longAgo, longAgo);
    }
    const run = start();
    expect(await cacheNames()).toContain(names.old);
    run.saveCache();
    expect(await cacheNames()).toEqual([path.basename(await cacheFile()), names.recent, names.otherKind, names.notOurs].sort());
  });
});
