/**
 * What the box adds (issue 36; docs/ISOLATION.md "The box"): the real `claude -p` runs a script of Bash calls (`true`)
 * against the scripted model, once whole inside the box a sandboxed job gets (core/jobs/process/box.ts: the Anthropic sandbox
 * runtime around `claude`, its network only the model's port) and once without it (Bash pre-approved), interleaved.
 * A call's time is the time between the model's request that asked for it and the one that carries its result back;
 * the start is the time from the spawn to the first request. The same model and the same Claude Code on both sides,
 * so the differences are the box. Budgets: a Bash call ≤ +20 ms (median), the start ≤ +50 ms, the first request
 * ≤ 1.05× its bytes unboxed. Linux with bubblewrap, socat and ripgrep only; elsewhere the rows say they were skipped.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { boxCommand, boxedInner, boxRuntime, boxSettings, ripgrep } from '../src-main/core/jobs/process/box.js';
import { BoxSpares } from '../src-main/core/jobs/process/box-spares.js';
import type { WarmBox } from '../src-main/core/jobs/process/box-spares.js';
import { buildChildEnv } from '../src-main/core/jobs/process/child-env.js';
import { presentSecretStores } from '../src-main/core/jobs/process/sandbox.js';
import { probeSandbox } from '../src-main/platform/sandbox-probe.js';
import { CLAUDE_CLI, ScriptedModel } from '../tests/support/fake-anthropic.js';
import type { ScriptStep } from '../tests/support/fake-anthropic.js';
import { FakeOpenRouter } from '../tests/support/fake-openrouter.js';
import { median, ms, percentile } from './lib/stats.js';
import type { BudgetRow } from './lib/stats.js';

const KEY = `sk-or-v1-${'b0a7'.repeat(16)}`;
const MODEL = 'deepseek/deepseek-v4-flash-0731';
const CALLS = Number(process.env.BENCH_SANDBOX_CALLS ?? 15);
const RUNS = Number(process.env.BENCH_SANDBOX_RUNS ?? 3);
const CALL_LIMIT_MS = 20;
const START_LIMIT_MS = 50;
const BYTES_LIMIT = 1.05;

interface Turn {
  /** Each Bash call's time, ms. */
  times: number[];
  /** From the spawn to the first request, ms. */
  start: number;
  /** The first request's bytes. */
  bytes: number;
}

/** The box's root, warm or cold, as the service runs it (service.ts: box.ts boxRuntime, box-spares.ts). */
const BOX_ROOT = path.resolve('dist/cli/box-root.js');
/** Unboxed; in a box started for it (cold: its root started then, as the service starts one); in a warm box, started before it and claimed (box-spares.ts). */
type Side = 'plain' | 'cold' | 'warm';

/** One delegate turn of CALLS Bash calls, on one side. */
async function turn(fake: FakeOpenRouter, model: ScriptedModel, dir: string, side: Side, spares: BoxSpares): Promise<Turn> {
  const boxed = side !== 'plain';
  const name = `sbx${randomUUID().slice(0, 8)}`;
  const arrivals: number[] = [];
  const step = (index: number): ScriptStep => ({
    dynamic: () => {
      arrivals.push(performance.now());
      // As the service does once a job's Claude Code has started: the next warm box (job-launcher.ts).
      if (index === 0 && side === 'warm') spares.refill(rg);
      return index < CALLS ? { toolUse: { name: 'Bash', input: { command: 'true', description: 'Nothing' } } } : { text: 'finished' };
    },
  });
  model.script(
    name,
    Array.from({ length: CALLS + 1 }, (_, i) => step(i)),
  );
  const cwd = await mkdtemp(path.join(dir, 'work-'));
  const rg = await ripgrep(CLAUDE_CLI, process.env as Record<string, string>);
  // A warm box is taken when it is up, as a job takes it: its temp folder is the delegate's.
  const warm = side === 'warm' ? await warmBox(spares, rg) : null;
  const tmp = warm?.tmp ?? (await mkdtemp(path.join(dir, 'tmp-')));
  const config = await mkdtemp(path.join(dir, 'config-'));
  const env = buildChildEnv({
    parentEnv: { ...process.env, TMPDIR: tmp },
    baseUrl: fake.baseUrl,
    token: KEY,
    model: MODEL,
    claudeConfigDir: config,
    maxRetries: 0,
  });
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--model', MODEL, '--permission-mode', 'acceptEdits', '--session-id', randomUUID()];
  args.push(
    '--strict-mcp-config',
    '--mcp-config',
    '{"mcpServers":{}}',
    '--setting-sources',
    'user',
    '--tools=Bash,Read,Edit,Write,Glob,Grep',
    '--allowedTools=Bash',
  );
  let command = { command: CLAUDE_CLI, args, env };
  if (boxed) {
    const settingsFile = path.join(dir, `${name}.json`);
    const settings = boxSettings({
      gatewayUrl: fake.baseUrl,
      allowedDomains: [],
      denyRead: await presentSecretStores(os.homedir()),
      allowRead: [],
      allowWrite: [cwd, tmp, config],
      denyWrite: [],
      ripgrep: rg,
    });
    await writeFile(settingsFile, settings);
    if (warm) return warmTurn(warm, { settingsFile, ...boxedInner(command) }, cwd, name, dir, model, arrivals);
    command = boxCommand(boxRuntime(process.env, BOX_ROOT), settingsFile, command);
  }
  // The prompt from a file, as a job reads it (spawn-detached.ts): a pipe is a socket to Node, and Debian's bash, which
  // the runtime starts inside the box, reads ~/.bashrc when its stdin is a socket (as if run by sshd), so a pipe would
  // time the user's shell start-up files, not the box.
  const promptFile = path.join(dir, `${name}.prompt`);
  await writeFile(promptFile, `${ScriptedModel.marker(name)} go`);
  const prompt = await open(promptFile, 'r');
  const spawnedAt = performance.now();
  const child = spawn(command.command, command.args, { cwd, env: command.env, stdio: [prompt.fd, 'ignore', 'ignore'] });
  await new Promise((resolve) => child.once('close', resolve));
  await prompt.close();
  if (arrivals.length !== CALLS + 1) throw new Error(`sandbox bench: ${arrivals.length - 1} of ${CALLS} Bash calls came back (boxed: ${boxed})`);
  return {
    times: arrivals.slice(1).map((at, i) => at - (arrivals[i] ?? at)),
    start: (arrivals[0] ?? spawnedAt) - spawnedAt,
    bytes: model.requestsFor(name)[0]?.bytes ?? Number.NaN,
  };
}

/** A warm box, up and ready: the one waiting, or a new one started and waited for (the first turn's). */
async function warmBox(spares: BoxSpares, rg: { command: string; argv0?: string }): Promise<WarmBox> {
  const taken = await spares.take(rg);
  if (taken) return taken;
  spares.refill(rg);
  const next = await spares.take(rg);
  if (!next) throw new Error('sandbox bench: no warm box came up (is dist/cli/box-root.js built?)');
  return next;
}

/** The turn in its warm box: the clock starts at the claim, where a job's launch hands its box the command. */
async function warmTurn(
  warm: WarmBox,
  inner: { settingsFile: string; command: string; args: string[]; env: Record<string, string> },
  cwd: string,
  name: string,
  dir: string,
  model: ScriptedModel,
  arrivals: number[],
): Promise<Turn> {
  const promptFile = path.join(dir, `${name}.prompt`);
  await writeFile(promptFile, `${ScriptedModel.marker(name)} go`);
  const spawnedAt = performance.now();
  const child = await warm.claim({ ...inner, cwd, stdinFile: promptFile, stdoutFile: '/dev/null', stderrFile: '/dev/null' });
  await child.exited;
  if (arrivals.length !== CALLS + 1) throw new Error(`sandbox bench: ${arrivals.length - 1} of ${CALLS} Bash calls came back (warm box)`);
  return {
    times: arrivals.slice(1).map((at, i) => at - (arrivals[i] ?? at)),
    start: (arrivals[0] ?? spawnedAt) - spawnedAt,
    bytes: model.requestsFor(name)[0]?.bytes ?? Number.NaN,
  };
}

export async function sandboxBench(): Promise<BudgetRow[]> {
  const available = await probeSandbox();
  if (!available.available) {
    return [
      {
        budget: `box: what it adds to a Bash call, median ≤ ${CALL_LIMIT_MS} ms; to the start, ≤ ${START_LIMIT_MS} ms`,
        measured: `skipped: ${available.reason}`,
        baseline: '—',
        ratio: Number.NaN,
        value: 0,
        limit: CALL_LIMIT_MS,
      },
    ];
  }
  const fake = new FakeOpenRouter();
  fake.addKey(KEY);
  await fake.start();
  const model = new ScriptedModel(fake, { apiKey: KEY });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ord-bench-box-'));
  const inside: Turn[] = [];
  const cold: Turn[] = [];
  const outside: Turn[] = [];
  const spares = new BoxSpares({ node: process.execPath, script: BOX_ROOT, env: () => process.env, log: () => undefined });
  try {
    // Interleaved, so that load on the machine falls on all alike.
    for (let run = 0; run < RUNS; run++) {
      outside.push(await turn(fake, model, dir, 'plain', spares));
      inside.push(await turn(fake, model, dir, 'warm', spares));
      cold.push(await turn(fake, model, dir, 'cold', spares));
    }
  } finally {
    await spares.stop();
    model.stop();
    await fake.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const calls = (turns: Turn[]): number[] => turns.flatMap((t) => t.times);
  const callRow = (what: string, p: number, limit: number): BudgetRow => {
    const boxed = percentile(calls(inside), p);
    const plain = percentile(calls(outside), p);
    return {
      budget: `box: what it adds to a Bash call (${what}, ${calls(inside).length} calls)${limit > 0 ? `, ≤ ${limit} ms` : ' (no budget set)'}`,
      measured: `${ms(boxed)} a call, ${boxed >= plain ? '+' : '−'}${ms(Math.abs(boxed - plain))}`,
      baseline: `the same call unboxed ${ms(plain)}`,
      ratio: boxed / plain,
      value: limit > 0 ? boxed - plain : 0,
      limit,
    };
  };
  const plainStart = median(outside.map((t) => t.start));
  const startRow = (turns: Turn[], what: string, limit: number): BudgetRow => {
    const boxedStart = median(turns.map((t) => t.start));
    return {
      budget: `box: what it adds to a delegate's start, ${what} (spawn to first request, median of ${turns.length})${limit > 0 ? `, ≤ ${limit} ms` : ' (no budget set)'}`,
      measured: `${ms(boxedStart)}, ${boxedStart >= plainStart ? '+' : '−'}${ms(Math.abs(boxedStart - plainStart))}`,
      baseline: `unboxed ${ms(plainStart)}`,
      ratio: boxedStart / plainStart,
      value: limit > 0 ? boxedStart - plainStart : 0,
      limit,
    };
  };
  // A job takes the warm box when one is up (the service keeps one); a cold one when two start at once, or one comes
  // within a second of the last.
  const start = startRow(inside, 'a warm box', START_LIMIT_MS);
  const coldStart = startRow(cold, 'a cold box (no warm one up)', 0);
  const boxedBytes = inside[0]?.bytes ?? Number.NaN;
  const plainBytes = outside[0]?.bytes ?? Number.NaN;
  const bytes: BudgetRow = {
    budget: `box: a delegate's first request, boxed, ≤ ${BYTES_LIMIT}× unboxed`,
    measured: `${boxedBytes} bytes`,
    baseline: `unboxed ${plainBytes} bytes`,
    ratio: boxedBytes / plainBytes,
    value: boxedBytes / plainBytes,
    limit: BYTES_LIMIT,
  };
  return [callRow('median', 50, CALL_LIMIT_MS), callRow('p99', 99, 0), start, coldStart, bytes];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await sandboxBench();
  for (const r of rows) console.log(`${r.budget}: ${r.measured} (${r.baseline}); ${r.value <= r.limit || r.limit === 0 ? 'within' : 'OVER'}`);
}
