/**
 * The settings page's budgets (issue 6): the renderer's JavaScript ≤ 150 kB gzipped, and its first
 * paint ≤ 300 ms in headless Chromium. Baselines from the same run: a bare Svelte 5 page built with
 * the same Vite settings (the least a Svelte page can weigh), and a static HTML page served on the
 * same loopback to the same browser (the least a page can take to paint).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { ROOT } from '../tests/support/built.js';
import { launchBrowser, serveSettingsPage } from '../tests/support/ui.js';
import { median, ms } from './lib/stats.js';
import type { BudgetRow } from './lib/stats.js';

const PAINT_RUNS = Number(process.env.BENCH_PAINT_RUNS ?? 15);
const BUNDLE_LIMIT_KB = 150;
const PAINT_LIMIT_MS = 300;

async function gzippedJsKb(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir)) if (name.endsWith('.js')) bytes += gzipSync(await readFile(path.join(dir, name))).length;
  return bytes / 1024;
}

/** A one-heading Svelte 5 page, built like ours: the floor any Svelte page pays. */
async function bareSvelteKb(): Promise<number> {
  // Inside the checkout (.tmp/ is ignored), so `svelte` resolves from our node_modules like the real page.
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', 'bench-svelte-'));
  try {
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><div id="app"></div><script type="module" src="./main.js"></script>');
    await writeFile(
      path.join(dir, 'main.js'),
      "import { mount } from 'svelte';\nimport App from './App.svelte';\nmount(App, { target: document.getElementById('app') });\n",
    );
    await writeFile(path.join(dir, 'App.svelte'), '<script>let name = $state("world");</script>\n<h1>Hello {name}</h1>\n');
    const { build } = await import('vite');
    const { svelte } = await import('@sveltejs/vite-plugin-svelte');
    await build({
      root: dir,
      configFile: false,
      logLevel: 'silent',
      base: './',
      plugins: [svelte({ compilerOptions: { runes: true } })],
      build: { outDir: path.join(dir, 'dist'), target: 'chrome120', minify: true, modulePreload: { polyfill: false } },
    });
    return await gzippedJsKb(path.join(dir, 'dist', 'assets'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function bundleRow(): Promise<BudgetRow> {
  const ours = await gzippedJsKb(path.join(ROOT, 'dist', 'renderer', 'assets'));
  const bare = await bareSvelteKb();
  return {
    budget: `settings page JS ≤ ${BUNDLE_LIMIT_KB} kB gzipped`,
    measured: `${ours.toFixed(1)} kB`,
    baseline: `bare Svelte 5 page ${bare.toFixed(1)} kB`,
    ratio: ours / bare,
    value: ours,
    limit: BUNDLE_LIMIT_KB,
  };
}

/** first-contentful-paint of `url` in a fresh context, in ms from navigation start. */
async function firstPaint(browser: Browser, url: string): Promise<number> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url);
    return await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const found = performance.getEntriesByName('first-contentful-paint')[0];
          if (found) return resolve(found.startTime);
          new PerformanceObserver((list) => {
            const entry = list.getEntriesByName('first-contentful-paint')[0];
            if (entry) resolve(entry.startTime);
          }).observe({ type: 'paint', buffered: true } as PerformanceObserverInit);
        }),
    );
  } finally {
    await context.close();
  }
}

async function staticPage(): Promise<{ url: string; close: () => Promise<void> }> {
  const html = '<!doctype html><html lang="en"><meta charset="utf-8"><title>baseline</title><h1>Settings</h1><p>A static page.</p></html>';
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function paintRow(baseUrl: string): Promise<BudgetRow> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'ord-bench-ui-'));
  await mkdir(path.join(home, 'config'), { recursive: true, mode: 0o700 });
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, OPENROUTER_DELEGATE_HOME: home, OPENROUTER_BASE_URL: baseUrl };
  for (const name of ['DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR']) if (process.env[name]) env[name] = process.env[name];
  const service = await serveSettingsPage(env);
  const baseline = await staticPage();
  const browser = await launchBrowser();
  try {
    const ours: number[] = [];
    const bare: number[] = [];
    // One warm-up each (the browser's own first start), then interleaved runs.
    await firstPaint(browser, `${service.url}&account`);
    await firstPaint(browser, baseline.url);
    for (let i = 0; i < PAINT_RUNS; i++) {
      ours.push(await firstPaint(browser, `${service.url}&account`));
      bare.push(await firstPaint(browser, baseline.url));
    }
    return {
      budget: `settings page first paint ≤ ${PAINT_LIMIT_MS} ms (headless Chromium)`,
      measured: `${ms(median(ours))} median`,
      baseline: `static HTML page ${ms(median(bare))}`,
      ratio: median(ours) / median(bare),
      value: median(ours),
      limit: PAINT_LIMIT_MS,
    };
  } finally {
    await browser.close();
    await baseline.close();
    await new Promise<void>((resolve) => {
      service.child.once('exit', () => resolve());
      service.child.kill('SIGTERM');
    });
    await rm(home, { recursive: true, force: true });
  }
}

/** `baseUrl`: the fake OpenRouter the bench already runs. */
export async function settingsPageBench(baseUrl: string): Promise<BudgetRow[]> {
  return [await bundleRow(), await paintRow(baseUrl)];
}

// Run alone: `npx tsx bench/ui.ts` (prints the two rows).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { FakeOpenRouter } = await import('../tests/support/fake-openrouter.js');
  const { printTable } = await import('./lib/stats.js');
  const fake = new FakeOpenRouter();
  await fake.start();
  try {
    printTable(await settingsPageBench(fake.baseUrl));
  } finally {
    await fake.stop();
  }
}
