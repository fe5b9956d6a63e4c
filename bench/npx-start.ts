/**
 * The bridge started through `npx`, as a user without a global install registers it
 * (`claude mcp add openrouter -- npx -y -p openrouter-delegate openrouter-delegate-mcp`), against the repo
 * build started directly, in the same run: spawn → initialize → tools/list answered, with a service up.
 *
 * The package is not on the registry, so the bench packs this checkout (`npm pack`, the tarball users would
 * get) and runs `npx -y -p <tarball> openrouter-delegate-mcp` with an npm cache folder of its own: nothing of
 * the user's npm cache is read or written; the keychain module comes from the registry npm is configured
 * with. A registry name would cost one more thing per start: npm exec asks the registry for the package's
 * metadata every time (libnpmexec: `preferOnline`), which a tarball does not need (docs/PERFORMANCE.md).
 *
 * The V8 code cache lives in the user's cache folder, never beside the package (src-bridge/launcher.ts), so it
 * works the same from npm's cache. To show it, each side has its own home (and its own service): "no code
 * cache" deletes that home's cache/v8 before the start, "code cache" starts right after a start that wrote it.
 *
 * Rows: npx's first start (npm installs into the empty cache; once per version, so a row of its own, against
 * Claude Code's timeout for an MCP server to connect); npx starts once the package is in npm's cache, without
 * and with the code cache, each against the repo build in the same state; and what the code cache saves the
 * bridge where npx put it, started by node itself (npm's own share varies by more than the saving), against
 * what it saves the repo build, with the saving through npx beside it. `npx tsx bench/npx-start.ts` runs it alone (after `npm run build`).
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeOpenRouter } from '../tests/support/fake-openrouter.js';
import { coldStartMs } from './lib/mcp-stdio.js';
import { median, ms } from './lib/stats.js';
import type { BudgetRow } from './lib/stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'dist/cli/openrouter-delegate.js');
const BRIDGE = path.join(ROOT, 'dist/bridge/openrouter-delegate-mcp.js');
const RUNS = Number(process.env.BENCH_NPX_RUNS ?? process.env.BENCH_COLD_RUNS ?? 20);
/** Claude Code (2.1.332) gives an MCP server this long to connect before it gives up on it (MCP_TIMEOUT). */
const CLAUDE_MCP_TIMEOUT_MS = 30_000;
/** What npm needs from this machine to reach its registry: the user's npm configuration, CA files, proxies. */
const NETWORK_ENV = /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|HTTPS?_PROXY|NO_PROXY)$/i;

const seconds = (n: number): string => `${(n / 1000).toFixed(1)} s`;
/** A saving as a change of the start time: −25 ms is faster; a "saving" that made it slower shows as +. */
const change = (saving: number): string => (saving >= 0 ? `−${ms(saving)}` : `+${ms(-saving)}`);

/** The built service for one home, until the returned stop is called. */
function startService(env: NodeJS.ProcessEnv): Promise<() => Promise<void>> {
  const child: ChildProcess = spawn(process.execPath, [CLI, 'serve', '--notify-ready'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => (log = `${log}${d.toString()}`.slice(-4000)));
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(stop));
    child.once('exit', (code) => reject(new Error(`service exited with ${code}:\n${log}`)));
  });
}

/** The V8 code caches a home holds (written under a temporary name, then renamed to `.bin`). */
async function codeCaches(home: string): Promise<string[]> {
  return (await readdir(path.join(home, 'cache', 'v8')).catch(() => [])).filter((name) => name.endsWith('.bin'));
}

/** One start with no code cache in the home; afterwards the cache must be there, or every "code cache" start would be a cold one. */
async function startWithoutCache(command: string, args: string[], env: NodeJS.ProcessEnv, home: string, cwd: string): Promise<number> {
  await rm(path.join(home, 'cache', 'v8'), { recursive: true, force: true });
  const elapsed = await coldStartMs(command, args, env, cwd);
  if ((await codeCaches(home)).length === 0)
    throw new Error(`${[command, ...args].join(' ')} answered tools/list but wrote no V8 code cache under ${home}/cache/v8`);
  return elapsed;
}

async function startWithCache(command: string, args: string[], env: NodeJS.ProcessEnv, home: string, cwd: string): Promise<number> {
  if ((await codeCaches(home)).length === 0) throw new Error(`no V8 code cache under ${home}/cache/v8 to start with`);
  return coldStartMs(command, args, env, cwd);
}

export async function npxStartBench(): Promise<BudgetRow[]> {
  const fake = new FakeOpenRouter();
  await fake.start();
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'ord-bench-npx-')));
  const stops: Array<() => Promise<void>> = [];
  try {
    const repoHome = path.join(root, 'repo-home');
    const npxHome = path.join(root, 'npx-home');
    // The folder Claude Code starts the bridge in: a project with nothing installed (npm exec reads its tree).
    const work = path.join(root, 'work');
    const userHome = path.join(root, 'user');
    for (const dir of [repoHome, npxHome, work, userHome]) await mkdir(dir, { recursive: true });

    // --ignore-scripts: `prepack` would rebuild dist/, which `npm run bench` has just built.
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', root], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as Array<{ filename: string; size: number }>;
    const tarball = path.join(root, packed[0]?.filename ?? '');
    const [userconfig = '', globalconfig = ''] = execFileSync('npm', ['config', 'get', 'userconfig', 'globalconfig'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((line) => line.replace(/^\w+=/, ''));

    const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, OPENROUTER_BASE_URL: fake.baseUrl };
    for (const name of ['DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR']) if (process.env[name]) base[name] = process.env[name];
    const repoEnv: NodeJS.ProcessEnv = { ...base, OPENROUTER_DELEGATE_HOME: repoHome };
    const npxEnv: NodeJS.ProcessEnv = {
      ...base,
      HOME: userHome,
      OPENROUTER_DELEGATE_HOME: npxHome,
      npm_config_cache: path.join(root, 'npm-cache'),
      npm_config_userconfig: userconfig,
      npm_config_globalconfig: globalconfig,
    };
    stops.push(await startService(repoEnv), await startService({ ...base, OPENROUTER_DELEGATE_HOME: npxHome }));

    const npx: [string, string[]] = ['npx', ['-y', '-p', tarball, 'openrouter-delegate-mcp']];
    const repo: [string, string[]] = [process.execPath, [BRIDGE]];
    // Once: npm fetches the tarball's dependency and installs both into its (empty) cache.
    // Only this start goes to the network. The rest run without the CA and proxy variables, as the repo build
    // does: NODE_EXTRA_CA_CERTS alone makes every Node start read its file (about 30 ms here).
    const networkEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => NETWORK_ENV.test(name)));
    const first = await startWithoutCache(...npx, { ...npxEnv, ...networkEnv }, npxHome, work);

    // The same bridge where npx put it, started by node itself: what the code cache does there, without npm's
    // own share, which varies by more than the whole saving from one start to the next.
    const [installDir = ''] = await readdir(path.join(root, 'npm-cache', '_npx'));
    const inCache: [string, string[]] = [
      process.execPath,
      [path.join(root, 'npm-cache', '_npx', installDir, 'node_modules', 'openrouter-delegate', 'dist', 'bridge', 'openrouter-delegate-mcp.js')],
    ];

    const samples = {
      repoCold: [] as number[],
      repoWarm: [] as number[],
      npxCold: [] as number[],
      npxWarm: [] as number[],
      cacheCold: [] as number[],
      cacheWarm: [] as number[],
    };
    // Interleaved, so that load on the machine hits every kind of start alike.
    for (let i = 0; i < RUNS; i++) {
      samples.repoCold.push(await startWithoutCache(...repo, repoEnv, repoHome, work));
      samples.repoWarm.push(await startWithCache(...repo, repoEnv, repoHome, work));
      samples.npxCold.push(await startWithoutCache(...npx, npxEnv, npxHome, work));
      samples.npxWarm.push(await startWithCache(...npx, npxEnv, npxHome, work));
      samples.cacheCold.push(await startWithoutCache(...inCache, npxEnv, npxHome, work));
      samples.cacheWarm.push(await startWithCache(...inCache, npxEnv, npxHome, work));
    }
    const [rc, rw] = [median(samples.repoCold), median(samples.repoWarm)];
    const [nc, nw] = [median(samples.npxCold), median(samples.npxWarm)];
    const [cc, cw] = [median(samples.cacheCold), median(samples.cacheWarm)];
    // What the code cache saves: the same bundle, the same compile, wherever the package lives.
    const [repoSaving, inCacheSaving] = [rc - rw, cc - cw];
    // Through npx, each pair of starts (without, then with) taken together: the median of their differences.
    const npxSaving = median(samples.npxCold.map((cold, i) => cold - (samples.npxWarm[i] ?? cold)));
    const repoBuild = 'repo build `node dist/bridge/openrouter-delegate-mcp.js`';
    return [
      {
        budget: `npx first start → tools/list (npm installs the ${Math.round((packed[0]?.size ?? 0) / 1000)} kB package into an empty cache; once per version) ≤ Claude Code's 30 s MCP timeout`,
        measured: seconds(first),
        baseline: `${repoBuild}, no code cache ${ms(rc)}`,
        ratio: first / rc,
        value: first,
        limit: CLAUDE_MCP_TIMEOUT_MS,
      },
      {
        budget: 'npx start, package in npm’s cache, no code cache → tools/list, median (reported)',
        measured: `${ms(nc)} (npm’s own share ${ms(nc - rc)})`,
        baseline: `${repoBuild}, no code cache ${ms(rc)}`,
        ratio: nc / rc,
        value: nc,
        limit: Infinity,
      },
      {
        budget: 'npx start, package in npm’s cache, code cache → tools/list, median ≤ 1 s',
        measured: `${ms(nw)} (npm’s own share ${ms(nw - rw)})`,
        baseline: `${repoBuild}, code cache ${ms(rw)}`,
        ratio: nw / rw,
        value: nw,
        limit: 1000,
      },
      {
        budget: 'V8 code cache for the bridge in npm’s cache (node runs it from _npx/) saves ≥ 0.5× what it saves the repo build',
        measured: `${change(inCacheSaving)} (${ms(cc)} → ${ms(cw)}); through npx ${change(npxSaving)} (median of paired starts)`,
        baseline: `repo build ${change(repoSaving)} (${ms(rc)} → ${ms(rw)})`,
        ratio: inCacheSaving / repoSaving,
        // Passes when the saving is at least half the repo build's; none (or a loss) never passes.
        value: inCacheSaving > 0 ? repoSaving / inCacheSaving : Infinity,
        limit: 2,
      },
    ];
  } finally {
    for (const stop of stops) await stop();
    await fake.stop();
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { printTable } = await import('./lib/stats.js');
  printTable(await npxStartBench());
}
