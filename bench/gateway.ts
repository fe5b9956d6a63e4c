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
 * Rows:
 *  - overhead per streaming request (a ~20 KB body shaped like Claude Code's first request, an answer of 30 SSE
 *    events): the gateway's p50 and p99 latency minus the direct p50 and p99; and the same while another local
 *    user holds IDLE_SOCKETS idle sockets to the gateway's port (a process of its own: this file run as
 *    `hold-idle`), beside the same with none held, in alternate rounds (SECURITY.md §2);
 *  - streaming throughput as a delegate sees it: one long answer the fake streams at a pace (50 MB/s, far above
 *    any model's), and 8 jobs' answers at once (5 MB/s each), through the gateway against direct;
 *  - capacity, where the machine is the limit: one long answer as fast as it is read, and 8 jobs' requests back
 *    to back, against a proxy that only copies (bench/lib/bare-proxy.ts, a process of its own with the gateway's
 *    upstream client) and direct. On a machine with fewer cores than the three processes need, any proxy is
 *    far from direct here; the bare proxy shows how far, and the budget is the gateway's own work beside it;
 *  - a `Service` in this process with a keychain that counts its reads, over warm gateway requests and
 *    `models.list` calls: none may reach the keychain.
 *
 * `npx tsx bench/gateway.ts` runs it alone (after `npm run build`); `bench/run.ts` adds the rows to its table.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
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
const BARE_PROXY = path.join(ROOT, 'bench/lib/bare-proxy.ts');
const STAND_IN = path.join(ROOT, 'bench/fixtures/gateway-claude.mjs');
const KEY = `sk-or-v1-${'9a7e'.repeat(16)}`;
const MODEL = 'deepseek/deepseek-v4-flash-0731';

const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const LONG_MB = Number(process.env.BENCH_GATEWAY_MB ?? 20);
const LONG_RUNS = Number(process.env.BENCH_GATEWAY_RUNS ?? 5);
/** The paced answer's rate and size: one stream, and each of the 8 jobs' streams at once. */
const PACED_MBPS = Number(process.env.BENCH_GATEWAY_PACED_MBPS ?? 50);
const PACED_MB = 10;
const PACED_JOB_MBPS = 5;
const PACED_JOB_MB = 5;
const JOBS = 8;
/** Each of the 8 jobs sends this many requests one after another, per round; two rounds a side. */
const PER_JOB = Math.max(20, Math.ceil(CALLS / JOBS));
const ROUNDS = 2;
/** Another local user's sockets to the gateway's port, idle (not a byte sent), for the stranger rows. */
const IDLE_SOCKETS = Number(process.env.BENCH_GATEWAY_IDLE ?? 1000);
/** The stranger never holds its sockets longer than this, whatever happens to the bench. */
const STRANGER_MAX_MS = 10 * 60_000;

/** Where a request goes and with what bearer: OpenRouter's root with the key, or the gateway with a job token. */
interface Target {
  messages: string;
  bearer: string;
}

// What the job's budget and the day's must allow: thousands of requests, a few long answers.
const SETTINGS = { concurrency: JOBS, jobTimeoutMinutes: 60, budgets: { perJobUsd: 1000, perDayUsd: 10_000, reserveUsd: 0 } };

/**
 * A request shaped like Claude Code's first of a task (profile lean): system blocks with cache breakpoints,
 * six tool schemas, the prompt with its reminders; ~20.8 KB like the one docs/PERFORMANCE.md's economy row measured.
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

/**
 * The body with the row's instructions to the bench's fake (`bench=long`, `bench=paced&rate=…&bytes=…`) in
 * `metadata.user_id`: the gateway passes on no query but `?beta=true`, and metadata goes through as sent.
 */
const withInstructions = (() => {
  const made = new Map<string, string>();
  return (body: string, query: string): string => {
    if (query === '') return body;
    const key = `${query}\n${body.length}`;
    let found = made.get(key);
    if (found === undefined) {
      found = JSON.stringify({ ...(JSON.parse(body) as Record<string, unknown>), metadata: { user_id: query.replace(/^&/, '') } });
      made.set(key, found);
    }
    return found;
  };
})();

/** Sends one streaming Messages request and reads the answer to its end, as Claude Code does; returns its bytes. */
async function send(target: Target, body: string, query = ''): Promise<number> {
  const res = await fetch(`${target.messages}?beta=true`, {
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
    body: withInstructions(body, query),
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

/**
 * A home with settings that let thousands of requests through, and a folder for the stand-ins' token files: inside the
 * project, where the jobs run in place, since a delegate's box writes nowhere else.
 */
async function makeHome(prefix: string): Promise<{ home: string; project: string; tokens: string }> {
  const home = await mkdtemp(path.join(os.tmpdir(), prefix));
  const project = path.join(home, 'project');
  const tokens = path.join(project, 'tokens');
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

/** Warms both paths up once: the same answer from each, then 50 requests each. */
async function warmUp(direct: Target, gateway: Target, body: string): Promise<void> {
  await sameAnswer(direct, gateway, body);
  for (let i = 0; i < 50; i++) {
    await send(direct, body);
    await send(gateway, body);
  }
}

/** `calls` requests each way, interleaved, the order swapped every call, so load on the machine and warm caches favour neither. */
async function latencies(direct: Target, gateway: Target, body: string, calls: number): Promise<{ direct: number[]; gateway: number[] }> {
  const viaDirect: number[] = [];
  const viaGateway: number[] = [];
  for (let i = 0; i < calls; i++) {
    if (i % 2 === 0) {
      viaDirect.push(await timed(() => send(direct, body)));
      viaGateway.push(await timed(() => send(gateway, body)));
    } else {
      viaGateway.push(await timed(() => send(gateway, body)));
      viaDirect.push(await timed(() => send(direct, body)));
    }
  }
  return { direct: viaDirect, gateway: viaGateway };
}

async function overheadRows(direct: Target, gateway: Target, body: string): Promise<BudgetRow[]> {
  await warmUp(direct, gateway, body);
  const { direct: viaDirect, gateway: viaGateway } = await latencies(direct, gateway, body, CALLS);
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

/**
 * Another local user against the delegates (SECURITY.md §2): a stranger, in a process of its own, holds
 * IDLE_SOCKETS sockets to the gateway's port that never send a byte, and opens each again as soon as the
 * gateway closes it (the gateway keeps 256 strangers' sockets, closes the oldest for each new one, and any that
 * sends no headers for 2 s). The gateway's overhead over direct, p50 and p99, with the stranger there and with
 * none, in alternate rounds of the same run; the same budgets as without.
 */
async function strangerRows(direct: Target, gateway: Target, body: string): Promise<BudgetRow[]> {
  await warmUp(direct, gateway, body);
  const port = Number(new URL(gateway.messages).port);
  const calls = Math.ceil(CALLS / ROUNDS);
  const quiet = { direct: [] as number[], gateway: [] as number[] };
  const held = { direct: [] as number[], gateway: [] as number[] };
  let reopened = 0;
  let strangerSeconds = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const none = await latencies(direct, gateway, body, calls);
    quiet.direct.push(...none.direct);
    quiet.gateway.push(...none.gateway);
    const stranger = await startStranger(port, IDLE_SOCKETS);
    try {
      const some = await latencies(direct, gateway, body, calls);
      held.direct.push(...some.direct);
      held.gateway.push(...some.gateway);
    } finally {
      const churn = await stranger.stop();
      reopened += churn.reopened;
      strangerSeconds += churn.seconds;
    }
  }
  const over = (side: { direct: number[]; gateway: number[] }, p: number) => percentile(side.gateway, p) - percentile(side.direct, p);
  const rate = (reopened / strangerSeconds).toFixed(0);
  const row = (p: number, limit: number): BudgetRow => ({
    budget: `gateway overhead p${p} while a stranger holds ${IDLE_SOCKETS} idle sockets to its port (opening again each one closed), ≤ ${limit} ms`,
    measured: `+${ms(over(held, p))} (through the gateway p${p} ${ms(percentile(held.gateway, p))}; the stranger opened ${rate} sockets/s)`,
    baseline: `with none held +${ms(over(quiet, p))} (through the gateway p${p} ${ms(percentile(quiet.gateway, p))})`,
    ratio: percentile(held.gateway, p) / percentile(quiet.gateway, p),
    value: over(held, p),
    limit,
  });
  return [row(50, 2), row(99, 10)];
}

/** Starts the stranger (this file run as `hold-idle`); resolves once all its sockets are open. */
async function startStranger(port: number, count: number): Promise<{ stop: () => Promise<{ reopened: number; seconds: number }> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'hold-idle', String(port), String(count)], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log = `${log}${d.toString()}`.slice(-4000)));
  const lines = createInterface({ input: child.stdout });
  const next = () =>
    new Promise<Record<string, number>>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the stranger exited with ${code}:\n${log}`));
      child.once('exit', onExit);
      lines.once('line', (line) => {
        child.off('exit', onExit);
        resolve(JSON.parse(line) as Record<string, number>);
      });
    });
  await next();
  return {
    stop: async () => {
      const last = next();
      child.stdin.end();
      const { reopened = 0, seconds = 1 } = await last;
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
      return { reopened, seconds };
    },
  };
}

/**
 * The stranger, in its own process: `count` sockets to 127.0.0.1:`port` that send nothing, each opened again
 * once closed. Prints `{"open":count}` once all are open; when its stdin ends (or after STRANGER_MAX_MS) it
 * closes them, prints how many it opened again and over how long, and exits.
 */
async function holdIdleSockets(port: number, count: number): Promise<void> {
  const sockets = new Set<net.Socket>();
  let stopping = false;
  let reopened = 0;
  const open = (): Promise<void> =>
    new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('connect', () => resolve());
      socket.once('close', () => {
        sockets.delete(socket);
        resolve();
        if (stopping) return;
        reopened++;
        void open();
      });
    });
  for (let opened = 0; opened < count; opened += 50) await Promise.all(Array.from({ length: Math.min(50, count - opened) }, open));
  const started = performance.now();
  console.log(JSON.stringify({ open: count }));
  await new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.resume();
    setTimeout(resolve, STRANGER_MAX_MS).unref();
  });
  stopping = true;
  const seconds = (performance.now() - started) / 1000;
  for (const socket of sockets) socket.destroy();
  console.log(JSON.stringify({ reopened, seconds }));
}

/** The processes besides this one whose CPU the rows report. */
interface Pids {
  service: number | undefined;
  upstream: number | undefined;
  bare: number | undefined;
}

/** The three ways to the same fake OpenRouter: straight, through a proxy that only copies, through the gateway. */
interface Paths {
  direct: Target;
  bare: Target;
  gateway: Target;
}
type Side = keyof Paths;
const SIDES: Side[] = ['direct', 'bare', 'gateway'];

/** The sides in a new order each round (a rotation), so load on the machine and warm caches favour none. */
const rotation = (round: number): Side[] => SIDES.map((_, i) => SIDES[(i + round) % SIDES.length] as Side);

/** One long answer through each side, `runs` times: the median MB/s of each, and the service's CPU per MB. */
async function streamRates(
  paths: Paths,
  body: string,
  query: string,
  runs: number,
  pids: Pids,
): Promise<{ rates: Record<Side, number>; mb: number; serviceMsPerMb: string }> {
  const rates: Record<Side, number[]> = { direct: [], bare: [], gateway: [] };
  let bytes = 0;
  let serviceCpu = 0;
  for (let round = 0; round < runs; round++) {
    for (const side of rotation(round)) {
      const t = performance.now();
      const { cpu } = await cpuDuring({ service: pids.service }, async () => (bytes = await send(paths[side], body, query)));
      rates[side].push(bytes / 1e6 / ((performance.now() - t) / 1000));
      if (side === 'gateway') serviceCpu += cpu.service ?? Number.NaN;
    }
  }
  const mb = bytes / 1e6;
  return {
    rates: { direct: median(rates.direct), bare: median(rates.bare), gateway: median(rates.gateway) },
    mb,
    serviceMsPerMb: perUnit(serviceCpu, runs * mb),
  };
}

/**
 * Issue 13's budget, "streaming throughput ≥ 0.9× direct", for a stream that comes at a pace, as a model's
 * does: the fake writes the answer at PACED_MBPS (50 MB/s), a hundred times and more what the fastest model
 * streams (a few thousand tokens a second, well under 1 MB/s of SSE), and the delegate must receive it as fast
 * through the gateway as straight from the fake.
 */
async function pacedRow(paths: Paths, body: string, pids: Pids): Promise<BudgetRow> {
  const query = `&bench=paced&rate=${PACED_MBPS}&bytes=${PACED_MB * 1e6}`;
  await sameAnswer(paths.direct, paths.gateway, body, query);
  const { rates, mb, serviceMsPerMb } = await streamRates(paths, body, query, LONG_RUNS, pids);
  return {
    budget: `gateway streaming throughput, one ${mb.toFixed(0)} MB answer streamed at ${PACED_MBPS} MB/s, ≥ 0.9× direct`,
    measured: `${rates.gateway.toFixed(1)} MB/s (median of ${LONG_RUNS}); service CPU ${serviceMsPerMb} ms/MB`,
    baseline: `direct ${rates.direct.toFixed(1)} MB/s`,
    ratio: rates.gateway / rates.direct,
    value: rates.direct / rates.gateway,
    limit: 1 / 0.9,
  };
}

/**
 * What the gateway can carry when nothing else limits it: the fake writes as fast as it is read, and this
 * machine's cores are shared by the delegate, the service and the fake. Against the bare proxy, which has
 * the same extra process and copy and nothing else, the gateway's own work (metering the stream) may cost a
 * fifth at most; the distance from direct is shown beside it.
 */
async function capacityRow(paths: Paths, body: string, chunkBytes: number, pids: Pids): Promise<BudgetRow> {
  await sameAnswer(paths.direct, paths.gateway, body, '&bench=long');
  await sameAnswer(paths.direct, paths.bare, body, '&bench=long');
  const { rates, mb, serviceMsPerMb } = await streamRates(paths, body, '&bench=long', LONG_RUNS, pids);
  return {
    budget: `gateway capacity, one ${mb.toFixed(0)} MB answer as fast as it is read (${(chunkBytes / 1024).toFixed(0)} KB chunks of 200-char deltas), ≥ 0.8× a proxy that only copies`,
    measured: `${rates.gateway.toFixed(0)} MB/s (median of ${LONG_RUNS}); service CPU ${serviceMsPerMb} ms/MB`,
    baseline: `bare proxy ${rates.bare.toFixed(0)} MB/s; direct ${rates.direct.toFixed(0)} MB/s (gateway ${(rates.gateway / rates.direct).toFixed(2)}× direct, bare proxy ${(rates.bare / rates.direct).toFixed(2)}×)`,
    ratio: rates.gateway / rates.bare,
    value: rates.bare / rates.gateway,
    limit: 1 / 0.8,
  };
}

/** Issue 13's budget with 8 jobs: each streams a long answer at PACED_JOB_MBPS, all at once, through one side. */
async function pacedJobsRow(paths: Paths, delegates: Delegate[], body: string): Promise<BudgetRow> {
  const query = `&bench=paced&rate=${PACED_JOB_MBPS}&bytes=${PACED_JOB_MB * 1e6}`;
  const rates: Record<'direct' | 'gateway', number[]> = { direct: [], gateway: [] };
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const side of round % 2 === 0 ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const)) {
      const t = performance.now();
      const bytes = await Promise.all(delegates.map((d) => send(side === 'direct' ? paths.direct : d.target, body, query)));
      rates[side].push(bytes.reduce((a, b) => a + b, 0) / 1e6 / ((performance.now() - t) / 1000));
    }
  }
  const [d, g] = [median(rates.direct), median(rates.gateway)];
  return {
    budget: `${JOBS} jobs streaming at once, ${PACED_JOB_MB} MB each at ${PACED_JOB_MBPS} MB/s, together ≥ 0.9× direct`,
    measured: `${g.toFixed(1)} MB/s together (median of ${ROUNDS + 1})`,
    baseline: `direct ${d.toFixed(1)} MB/s`,
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

/**
 * Requests, not bytes: 8 jobs sending short answers' requests back to back, as fast as they are answered —
 * thousands a second, where a delegate sends one every few seconds. Each costs the gateway a token lookup, a
 * price, two request-log lines and an event; the budget holds it to 0.7× the rate of a proxy that only copies.
 */
async function concurrencyRow(paths: Paths, delegates: Delegate[], body: string, pids: Pids): Promise<BudgetRow> {
  const targets: Record<Side, Target[]> = {
    direct: delegates.map(() => paths.direct),
    bare: delegates.map(() => paths.bare),
    gateway: delegates.map((d) => d.target),
  };
  for (const side of SIDES) await concurrentLoad(targets[side], body, pids);
  const loads: Record<Side, Load[]> = { direct: [], bare: [], gateway: [] };
  for (let round = 0; round < ROUNDS; round++) for (const side of rotation(round)) loads[side].push(await concurrentLoad(targets[side], body, pids));
  const sum = (side: Side, of: (l: Load) => number) => loads[side].reduce((total, l) => total + of(l), 0);
  const rate = (side: Side) => sum(side, (l) => l.requests) / sum(side, (l) => l.seconds);
  const p99 = (side: Side) =>
    ms(
      percentile(
        loads[side].flatMap((l) => l.latencies),
        99,
      ),
    );
  const cpu = (side: Side, name: string) =>
    perUnit(
      sum(side, (l) => l.cpu[name] ?? Number.NaN),
      sum(side, (l) => l.requests),
    );
  const [d, b, g] = [rate('direct'), rate('bare'), rate('gateway')];
  return {
    budget: `${JOBS} jobs' requests back to back, as fast as they are answered (${PER_JOB * ROUNDS} each), ≥ 0.7× a proxy that only copies`,
    measured: `${g.toFixed(0)} req/s, p99 ${p99('gateway')}; CPU ms/request: service ${cpu('gateway', 'service')}, client ${cpu('gateway', 'client')}`,
    baseline: `bare proxy ${b.toFixed(0)} req/s (its CPU ${cpu('bare', 'bare')} ms/request); direct ${d.toFixed(0)} req/s, p99 ${p99('direct')} (gateway ${(g / d).toFixed(2)}× direct)`,
    ratio: g / b,
    value: b / g,
    limit: 1 / 0.7,
  };
}

/** All rows but the keychain's: the built service in its own process, its jobs' stand-ins, the fake OpenRouter and the bare proxy in others. */
export async function gatewayBench(): Promise<BudgetRow[]> {
  const upstream = await startUpstream();
  const bare = await startChild<{ url: string }>(['--import', 'tsx', BARE_PROXY, upstream.ready.baseUrl], { PATH: process.env.PATH, HOME: process.env.HOME });
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
    const first = delegates[0];
    if (!first) throw new Error('no job started');
    const paths: Paths = {
      direct: { messages: `${upstream.ready.baseUrl}/v1/messages`, bearer: KEY },
      bare: { messages: `${bare.ready.url}/v1/messages`, bearer: KEY },
      gateway: first.target,
    };
    const body = claudeCodeRequest(first.model);
    const pids: Pids = { service: service.pid, upstream: upstream.child.pid, bare: bare.child.pid };
    return [
      ...(await overheadRows(paths.direct, paths.gateway, body)),
      ...(await strangerRows(paths.direct, paths.gateway, body)),
      await pacedRow(paths, body, pids),
      await pacedJobsRow(paths, delegates, body),
      await capacityRow(paths, body, upstream.ready.longChunkBytes, pids),
      await concurrencyRow(paths, delegates, body, pids),
    ];
  } finally {
    if (delegates.length > 0 && service) {
      const client = await IpcClient.connect({ locations, clientName: 'bench' });
      for (const d of delegates) await client.call('jobs.cancel', { jobId: d.jobId }).catch(() => undefined);
      client.close();
    }
    if (service) await stopChild(service, 'SIGTERM');
    await stopChild(bare.child, null);
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
  if (process.argv[2] === 'hold-idle') await holdIdleSockets(Number(process.argv[3]), Number(process.argv[4]));
  else {
    const rows = [...(await gatewayBench()), await gatewayKeychainBench()];
    printTable(rows);
    if (rows.some((r) => r.value > r.limit)) process.exitCode = 1;
  }
}
