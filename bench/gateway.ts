/**
 * The metering gateway on the hot path (src-main/core/gateway/gateway.ts): every delegate request goes
 * delegate → gateway → OpenRouter, so what it adds is measured against the same request sent straight to the
 * same fake OpenRouter, in the same run, interleaved.
 *
 * Three processes, as in use: this one is the delegate (Node's fetch, keep-alive, like Claude Code's
 * client); the service is the built `openrouter-delegate serve`, with real jobs whose `claude` is a stand-in
 * (bench/fixtures/gateway-claude.mjs) that hands over its job token and stays running, so every request is
 * looked up, priced, logged and announced as a delegate's is; the fake OpenRouter runs in a process of its
 * own (bench/lib/gateway-upstream.ts).
 *
 * Rows: overhead per streaming request (a ~20 KB body shaped like Claude Code's first request, an answer of
 * 30 SSE events), the gateway's p50 and p99 latency minus the direct p50 and p99; throughput of one long answer;
 * 8 jobs streaming at once. A fourth row runs a `Service` in this process with a keychain that counts its
 * reads, and counts them over warm gateway requests and `models.list` calls: none may reach the keychain.
 *
 * `npx tsx bench/gateway.ts` runs it alone (after `npm run build`); `bench/run.ts` adds the rows to its table.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { KeyringEntryFactory } from '../src-main/core/secrets/secret-store.js';
import { ServiceHost } from '../src-main/host/service-host.js';
import { IpcClient } from '../src-main/ipc/client.js';
import { resolveLocations } from '../src-main/platform/locations.js';
import { median, ms, percentile, printTable } from './lib/stats.js';
import type { BudgetRow } from './lib/stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'dist/cli/openrouter-delegate.js');
const UPSTREAM = path.join(ROOT, 'bench/lib/gateway-upstream.ts');
const STAND_IN = path.join(ROOT, 'bench/fixtures/gateway-claude.mjs');
const KEY = `sk-or-v1-${'9a7e'.repeat(16)}`;
const MODEL = 'deepseek/deepseek-v4-flash-0731';

const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const LONG_MB = Number(process.env.BENCH_GATEWAY_MB ?? 20);
const LONG_RUNS = Number(process.env.BENCH_GATEWAY_RUNS ?? 5);
const JOBS = 8;
/** Each of the 8 jobs sends this many requests one after another, per round; two rounds a side. */
const PER_JOB = Math.max(20, Math.ceil(CALLS / JOBS));
const ROUNDS = 2;

/** Where a request goes and with what bearer: OpenRouter's root with the key, or the gateway with a job token. */
interface Target {
  messages: string;
  bearer: string;
}

// What the job's budget and the day's must allow: thousands of requests, a few long answers.
const SETTINGS = { concurrency: JOBS, jobTimeoutMinutes: 60, budgets: { perJobUsd: 1000, perDayUsd: 10_000, reserveUsd: 0 } };

/**
 * A request shaped like Claude Code's first of a task (profile lean): system blocks with cache breakpoints,
 * six tool schemas, the prompt with its reminders; ~20.8 KB like the one README's economy row measured.
 */
export function claudeCodeRequest(model: string, targetBytes = 20_800): string {
  const prose = (seed: string, chars: number) => {
    const words = `${seed} Use the tool when the task needs it; say what you did and why, and keep the answer short. Paths are absolute. `;
    return words.repeat(Math.ceil(chars / words.length)).slice(0, chars);
  };
  const tool = (name: string, properties: Record<string, unknown>, required: string[]) => ({
    name,
    description: prose(`${name}:`, 1500),
    input_schema: { type: 'object', properties, required, additionalProperties: false, $schema: 'http://json-schema.org/draft-07/schema#' },
  });
  const str = (description: string) => ({ type: 'string', description });
  const build = (pad: number) => ({
    model,
    max_tokens: 32_000,
    stream: true,
    metadata: { user_id: 'user_0f3c_account__session_6f1e2a9c-4b7d-4e8a-9c1f-2d3e4f5a6b7c' },
    system: [
      { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral' } },
      {
        type: 'text',
        text: prose('You are an interactive CLI tool that helps users with software engineering tasks.', pad),
        cache_control: { type: 'ephemeral' },
      },
    ],
    tools: [
      tool('Bash', { command: str('The command to execute'), timeout: { type: 'number' }, description: str('What it does') }, ['command']),
      tool('Read', { file_path: str('Absolute path'), offset: { type: 'number' }, limit: { type: 'number' } }, ['file_path']),
      tool('Edit', { file_path: str('Absolute path'), old_string: str('Text to replace'), new_string: str('Replacement') }, [
        'file_path',
        'old_string',
        'new_string',
      ]),
      tool('Write', { file_path: str('Absolute path'), content: str('The content') }, ['file_path', 'content']),
      tool('Glob', { pattern: str('Glob pattern'), path: str('Folder') }, ['pattern']),
      tool('Grep', { pattern: str('Regular expression'), path: str('Folder'), glob: str('Files') }, ['pattern']),
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: `<system-reminder>\n${prose('As you answer the user, use the following context.', 600)}\n</system-reminder>` },
          {
            type: 'text',
            text: 'Read src/parse.ts, fix the off-by-one in nextLine, run the tests and say what changed.',
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ],
  });
  const fixed = JSON.stringify(build(0)).length;
  return JSON.stringify(build(Math.max(0, targetBytes - fixed)));
}

/** Sends one streaming Messages request and reads the answer to its end, as Claude Code does; returns its bytes. */
async function send(target: Target, body: string, query = ''): Promise<number> {
  const res = await fetch(`${target.messages}?beta=true${query}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
      'user-agent': 'claude-cli/2.1.332 (external, sdk-cli)',
      'x-app': 'cli',
      authorization: `Bearer ${target.bearer}`,
    },
    body,
  });
  if (res.status !== 200 || !res.body) throw new Error(`${target.messages} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  let bytes = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return bytes;
    bytes += value.byteLength;
  }
}

/** CPU time a process has used, in ms (Linux: /proc; NaN elsewhere, and the rows then say "?"). */
async function cpuMs(pid: number | undefined): Promise<number> {
  if (pid === undefined || pid === process.pid) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  // utime and stime, in clock ticks of 10 ms (fields 14 and 15; the name in parentheses may hold spaces).
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields ? (Number(fields[11]) + Number(fields[12])) * 10 : Number.NaN;
}

/** The CPU each process spent while fn ran, in ms. */
async function cpuDuring<T>(pids: Record<string, number | undefined>, fn: () => Promise<T>): Promise<{ result: T; cpu: Record<string, number> }> {
  const before = Object.fromEntries(await Promise.all(Object.entries(pids).map(async ([name, pid]) => [name, await cpuMs(pid)] as const)));
  const result = await fn();
  const cpu: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) cpu[name] = (await cpuMs(pid)) - (before[name] ?? 0);
  return { result, cpu };
}

const perUnit = (total: number, units: number) => (Number.isFinite(total) ? (total / units).toFixed(2) : '?');

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** A child that prints one JSON line when ready; its stdin closing tells it to stop. */
async function startChild<T>(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; ready: T }> {
  const child = spawn(process.execPath, args, { env, cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => (log = `${log}${d.toString()}`.slice(-4000)));
  const lines = createInterface({ input: child.stdout! });
  const ready = await new Promise<T>((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line) as T));
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${log}`)));
  });
  return { child, ready };
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals | null): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stdin?.end();
  if (signal) child.kill(signal);
  await exited;
}

function startUpstream(): Promise<{ child: ChildProcess; ready: { baseUrl: string; longChunkBytes: number } }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, BENCH_GATEWAY_MB: String(LONG_MB) };
  return startChild(['--import', 'tsx', UPSTREAM, KEY, MODEL], env);
}

/** A home with settings that let thousands of requests through, and a folder for the stand-ins' token files. */
async function makeHome(prefix: string): Promise<{ home: string; project: string; tokens: string }> {
  const home = await mkdtemp(path.join(os.tmpdir(), prefix));
  const project = path.join(home, 'project');
  const tokens = path.join(home, 'tokens');
  await mkdir(project, { recursive: true });
  await mkdir(tokens, { recursive: true, mode: 0o700 });
  await mkdir(path.join(home, 'config'), { recursive: true, mode: 0o700 });
  await writeFile(path.join(home, 'config', 'settings.json'), JSON.stringify(SETTINGS), { mode: 0o600 });
  return { home, project, tokens };
}

interface Delegate {
  jobId: string;
  target: Target;
  model: string;
}

/** Starts n jobs and waits for each stand-in to hand over its gateway address and token. */
async function startDelegates(n: number, tokens: string, start: (prompt: string) => Promise<string>): Promise<Delegate[]> {
  const delegates: Delegate[] = [];
  for (let i = 0; i < n; i++) {
    const tokenFile = path.join(tokens, `job-${i}.json`);
    const jobId = await start(`gateway bench ${JSON.stringify({ tokenFile, lifetimeMs: 20 * 60_000 })}`);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const text = await readFile(tokenFile, 'utf8').catch(() => null);
      if (text !== null) {
        const handed = JSON.parse(text) as { url: string; token: string; model: string };
        delegates.push({ jobId, target: { messages: `${handed.url}/v1/messages`, bearer: handed.token }, model: handed.model });
        break;
      }
      if (Date.now() > deadline) throw new Error(`job ${jobId}: its stand-in never handed over its token (${tokenFile})`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  return delegates;
}

/** Both paths must give the delegate the same answer, or the figures compare nothing. */
async function sameAnswer(direct: Target, gateway: Target, body: string, query = ''): Promise<void> {
  const [a, b] = [await send(direct, body, query), await send(gateway, body, query)];
  if (a !== b || a === 0) throw new Error(`the gateway's answer is ${b} bytes, the direct one ${a}: not the same answer`);
}

async function overheadRows(direct: Target, gateway: Target, body: string): Promise<BudgetRow[]> {
  await sameAnswer(direct, gateway, body);
  for (let i = 0; i < 50; i++) {
    await send(direct, body);
    await send(gateway, body);
  }
  const viaDirect: number[] = [];
  const viaGateway: number[] = [];
  // Interleaved, the order swapped every call, so load on the machine and warm caches favour neither.
  for (let i = 0; i < CALLS; i++) {
    if (i % 2 === 0) {
      viaDirect.push(await timed(() => send(direct, body)));
      viaGateway.push(await timed(() => send(gateway, body)));
    } else {
      viaGateway.push(await timed(() => send(gateway, body)));
      viaDirect.push(await timed(() => send(direct, body)));
    }
  }
  const [d50, d99, g50, g99] = [median(viaDirect), percentile(viaDirect, 99), median(viaGateway), percentile(viaGateway, 99)];
  const kb = (Buffer.byteLength(body) / 1000).toFixed(1);
  const base = `direct to the same fake OpenRouter p50 ${ms(d50)}, p99 ${ms(d99)}`;
  return [
    {
      budget: `gateway overhead per streaming request (${kb} kB body, 30 SSE events), p50 ≤ 2 ms`,
      measured: `+${ms(g50 - d50)} (through the gateway p50 ${ms(g50)})`,
      baseline: base,
      ratio: g50 / d50,
      value: g50 - d50,
      limit: 2,
    },
    {
      budget: `gateway overhead per streaming request (${kb} kB body, 30 SSE events), p99 ≤ 10 ms`,
      measured: `+${ms(g99 - d99)} (through the gateway p99 ${ms(g99)})`,
      baseline: base,
      ratio: g99 / d99,
      value: g99 - d99,
      limit: 10,
    },
  ];
}

/** The processes besides this one whose CPU the rows report. */
interface Pids {
  service: number | undefined;
  upstream: number | undefined;
}

async function throughputRow(direct: Target, gateway: Target, body: string, chunkBytes: number, pids: Pids): Promise<BudgetRow> {
  await sameAnswer(direct, gateway, body, '&bench=long');
  const rates = { direct: [] as number[], gateway: [] as number[] };
  let bytes = 0;
  let serviceCpu = 0;
  const run = async (side: 'direct' | 'gateway') => {
    const t = performance.now();
    const { cpu } = await cpuDuring({ service: pids.service }, async () => (bytes = await send(side === 'direct' ? direct : gateway, body, '&bench=long')));
    rates[side].push(bytes / 1e6 / ((performance.now() - t) / 1000));
    if (side === 'gateway') serviceCpu += cpu.service ?? Number.NaN;
  };
  for (let i = 0; i < LONG_RUNS; i++) {
    if (i % 2 === 0) {
      await run('direct');
      await run('gateway');
    } else {
      await run('gateway');
      await run('direct');
    }
  }
  const [d, g] = [median(rates.direct), median(rates.gateway)];
  const mb = bytes / 1e6;
  return {
    budget: `gateway streaming throughput, one ${mb.toFixed(0)} MB answer (${(chunkBytes / 1024).toFixed(0)} KB chunks of 200-char deltas) ≥ 0.9× direct`,
    measured: `${g.toFixed(0)} MB/s (median of ${LONG_RUNS}); service CPU ${perUnit(serviceCpu, LONG_RUNS * mb)} ms/MB`,
    baseline: `direct ${d.toFixed(0)} MB/s`,
    // The gateway's throughput as a share of the direct one's; the budget reads it the other way up.
    ratio: g / d,
    value: d / g,
    limit: 1 / 0.9,
  };
}

interface Load {
  seconds: number;
  requests: number;
  latencies: number[];
  /** CPU ms per process over the load. */
  cpu: Record<string, number>;
}

/** JOBS clients at once, each sending PER_JOB requests one after another: the wall time, each request's latency, the CPU of each process. */
async function concurrentLoad(targets: Target[], body: string, pids: Pids): Promise<Load> {
  const latencies: number[] = [];
  const t = performance.now();
  const { cpu } = await cpuDuring({ client: process.pid, ...pids }, () =>
    Promise.all(
      targets.map(async (target) => {
        for (let i = 0; i < PER_JOB; i++) latencies.push(await timed(() => send(target, body)));
      }),
    ),
  );
  return { seconds: (performance.now() - t) / 1000, requests: targets.length * PER_JOB, latencies, cpu };
}

async function concurrencyRow(direct: Target, delegates: Delegate[], body: string, pids: Pids): Promise<BudgetRow> {
  const targets = { direct: delegates.map(() => direct), gateway: delegates.map((d) => d.target) };
  await concurrentLoad(targets.direct, body, pids);
  await concurrentLoad(targets.gateway, body, pids);
  const loads: Record<'direct' | 'gateway', Load[]> = { direct: [], gateway: [] };
  for (let i = 0; i < ROUNDS; i++) {
    loads.direct.push(await concurrentLoad(targets.direct, body, pids));
    loads.gateway.push(await concurrentLoad(targets.gateway, body, pids));
  }
  const sum = (side: 'direct' | 'gateway', of: (l: Load) => number) => loads[side].reduce((total, l) => total + of(l), 0);
  const rate = (side: 'direct' | 'gateway') => sum(side, (l) => l.requests) / sum(side, (l) => l.seconds);
  const p99 = (side: 'direct' | 'gateway') =>
    ms(
      percentile(
        loads[side].flatMap((l) => l.latencies),
        99,
      ),
    );
  const cpu = (side: 'direct' | 'gateway', name: string) =>
    perUnit(
      sum(side, (l) => l.cpu[name] ?? Number.NaN),
      sum(side, (l) => l.requests),
    );
  const [d, g] = [rate('direct'), rate('gateway')];
  return {
    budget: `${JOBS} jobs streaming at once, as fast as they are answered (${PER_JOB * ROUNDS} requests each), throughput ≥ 0.9× direct`,
    measured: `${g.toFixed(0)} req/s, p99 ${p99('gateway')}; CPU ms/request: service ${cpu('gateway', 'service')}, client ${cpu('gateway', 'client')}`,
    baseline: `direct ${d.toFixed(0)} req/s, p99 ${p99('direct')}; CPU ms/request: client ${cpu('direct', 'client')}, fake OpenRouter ${cpu('direct', 'upstream')}`,
    ratio: g / d,
    value: d / g,
    limit: 1 / 0.9,
  };
}

/** Rows 1–3: the built service in its own process, its jobs' stand-ins, the fake OpenRouter in another. */
export async function gatewayBench(): Promise<BudgetRow[]> {
  const upstream = await startUpstream();
  const { home, project, tokens } = await makeHome('ord-bench-gateway-');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    OPENROUTER_DELEGATE_HOME: home,
    OPENROUTER_BASE_URL: upstream.ready.baseUrl,
    OPENROUTER_API_KEY: KEY,
    OPENROUTER_DELEGATE_CLAUDE: STAND_IN,
  };
  const locations = resolveLocations(env);
  let service: ChildProcess | null = null;
  const delegates: Delegate[] = [];
  try {
    service = await startServe(env);
    // Connected only to start and cancel: the service's job.changed events would otherwise land in this process, the delegate's side.
    const client = await IpcClient.connect({ locations, clientName: 'bench' });
    try {
      const start = async (prompt: string) => (await client.call('jobs.start', { prompt, maxCostUsd: 1000, caller: { cwd: project } })).job.id;
      delegates.push(...(await startDelegates(JOBS, tokens, start)));
    } finally {
      client.close();
    }
    const direct: Target = { messages: `${upstream.ready.baseUrl}/v1/messages`, bearer: KEY };
    const first = delegates[0];
    if (!first) throw new Error('no job started');
    const body = claudeCodeRequest(first.model);
    const pids: Pids = { service: service.pid, upstream: upstream.child.pid };
    return [
      ...(await overheadRows(direct, first.target, body)),
      await throughputRow(direct, first.target, body, upstream.ready.longChunkBytes, pids),
      await concurrencyRow(direct, delegates, body, pids),
    ];
  } finally {
    if (delegates.length > 0 && service) {
      const client = await IpcClient.connect({ locations, clientName: 'bench' });
      for (const d of delegates) await client.call('jobs.cancel', { jobId: d.jobId }).catch(() => undefined);
      client.close();
    }
    if (service) await stopChild(service, 'SIGTERM');
    await stopChild(upstream.child, null);
    await rm(home, { recursive: true, force: true });
  }
}

/** `serve --notify-ready` prints "ready" (not JSON): waits for it. */
async function startServe(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  // BENCH_CPU_PROF=<folder>: the service writes a V8 CPU profile there when it stops (open it in Chrome's DevTools).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const entry = process.env.BENCH_CPU_PROF ? ['--import', 'tsx', path.join(ROOT, 'src-main/cli/openrouter-delegate.ts')] : [CLI];
  const child = spawn(process.execPath, [...profile, ...entry, 'serve', '--notify-ready'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log = `${log}${d.toString()}`.slice(-4000)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`service exited with ${code}:\n${log}`)));
  });
  return child;
}

/** An in-memory keychain that counts its reads (as tests/core/secrets/secret-cache.test.ts's does). */
function countingKeychain(): { factory: KeyringEntryFactory; values: Map<string, string>; reads: () => number } {
  const values = new Map<string, string>();
  let reads = 0;
  const factory: KeyringEntryFactory = (service, account) => ({
    getPassword: () => {
      reads++;
      return values.get(`${service}/${account}`) ?? null;
    },
    setPassword: (password: string) => void values.set(`${service}/${account}`, password),
    deleteCredential: () => values.delete(`${service}/${account}`),
  });
  return { factory, values, reads: () => reads };
}

/**
 * Row 4: a real Service (ServiceHost: its socket and its gateway listening) in this process, the key in a
 * keychain that counts every getPassword, one job running. After a warm-up (the first models.list, the first
 * gateway requests), every keychain read made by any part of the service is counted over CALLS gateway
 * requests (job lookup, the key for the upstream call, the request log and the job.changed event scrubbed of
 * the key) and CALLS `models.list` calls through `Service.dispatch` (answers scrubbed of the key).
 */
export async function gatewayKeychainBench(): Promise<BudgetRow> {
  const upstream = await startUpstream();
  const { home, project, tokens } = await makeHome('ord-bench-gateway-keychain-');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    OPENROUTER_BASE_URL: upstream.ready.baseUrl,
    OPENROUTER_DELEGATE_CLAUDE: STAND_IN,
  };
  const locations = resolveLocations({ OPENROUTER_DELEGATE_HOME: home });
  const keychain = countingKeychain();
  keychain.values.set(`${locations.keychainService}/openrouter-api-key`, KEY);
  const host = new ServiceHost({ locations, env, host: 'headless', log: () => undefined, keyring: keychain.factory });
  const call = host.caller('bench');
  const delegates: Delegate[] = [];
  try {
    await host.start();
    delegates.push(
      ...(await startDelegates(1, tokens, async (prompt) => (await call('jobs.start', { prompt, maxCostUsd: 1000, caller: { cwd: project } })).job.id)),
    );
    const first = delegates[0];
    if (!first) throw new Error('no job started');
    const body = claudeCodeRequest(first.model);
    for (let i = 0; i < 10; i++) {
      await send(first.target, body);
      await call('models.list', { limit: 25 });
    }
    const warm = keychain.reads();
    for (let i = 0; i < CALLS; i++) {
      await send(first.target, body);
      await call('models.list', { limit: 25 });
    }
    const hot = keychain.reads() - warm;
    return {
      budget: 'keychain reads on the hot path (warm gateway requests + models.list), = 0',
      measured: `${hot} reads over ${CALLS} gateway requests + ${CALLS} models.list calls`,
      baseline: `warm-up (start, first job, 10 of each): ${warm} reads`,
      ratio: hot / Math.max(1, warm),
      value: hot,
      limit: 0,
    };
  } finally {
    for (const d of delegates) await call('jobs.cancel', { jobId: d.jobId }).catch(() => undefined);
    await host.stop();
    await stopChild(upstream.child, null);
    await rm(home, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const rows = [...(await gatewayBench()), await gatewayKeychainBench()];
  printTable(rows);
  if (rows.some((r) => r.value > r.limit)) process.exitCode = 1;
}
