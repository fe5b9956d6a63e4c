/**
 * What the sandbox adds to a delegate's Bash call (issue 22; docs/ISOLATION.md "The sandbox"): the real `claude -p`
 * runs a script of Bash calls (`true`) against the scripted model, once with the sandbox settings a job gets
 * (core/jobs/sandbox.ts) and once without a sandbox (Bash pre-approved), interleaved. A call's time is the time
 * between the model's request that asked for it and the one that carries its result back: the same model and the same
 * Claude Code on both sides, so the difference of the two is the sandbox. Budget: ≤ 50 ms per call (median and p99).
 * Linux with bubblewrap and socat only; elsewhere the row says it was skipped. BENCH_SANDBOX_EXTRA (JSON) adds
 * sandbox settings to try, e.g. '{"mandatoryDenySearchDepth":1}'.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { defaultSettings } from '../src-main/contract/index.js';
import { buildChildEnv } from '../src-main/core/jobs/child-env.js';
import { presentSecretStores, sandboxSettings } from '../src-main/core/jobs/sandbox.js';
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
const LIMIT_MS = 50;

/** One delegate turn of CALLS Bash calls: the time of each call, in ms, and the first request's bytes. */
async function callTimes(fake: FakeOpenRouter, model: ScriptedModel, dir: string, sandboxed: boolean): Promise<{ times: number[]; bytes: number }> {
  const name = `sbx${randomUUID().slice(0, 8)}`;
  const arrivals: number[] = [];
  const step = (index: number): ScriptStep => ({
    dynamic: () => {
      arrivals.push(performance.now());
      return index < CALLS ? { toolUse: { name: 'Bash', input: { command: 'true', description: 'Nothing' } } } : { text: 'finished' };
    },
  });
  model.script(
    name,
    Array.from({ length: CALLS + 1 }, (_, i) => step(i)),
  );
  const cwd = await mkdtemp(path.join(dir, 'work-'));
  const tmp = path.join(cwd, '.tmp');
  await mkdir(tmp);
  const env = buildChildEnv({
    parentEnv: { ...process.env, TMPDIR: tmp },
    baseUrl: fake.baseUrl,
    token: KEY,
    model: MODEL,
    claudeConfigDir: path.join(dir, 'config'),
    maxRetries: 0,
  });
  const extra = JSON.parse(process.env.BENCH_SANDBOX_EXTRA ?? '{}') as Record<string, unknown>;
  const withExtra = (json: string): string => {
    const parsed = JSON.parse(json) as { sandbox: Record<string, unknown> };
    return JSON.stringify({ sandbox: { ...parsed.sandbox, ...extra } });
  };
  const settings = sandboxed
    ? withExtra(
        sandboxSettings({
          policy: defaultSettings().sandbox,
          autoAllowBash: true,
          home: os.homedir(),
          secretStores: await presentSecretStores(os.homedir()),
          deniedDirs: [],
          deniedFiles: [],
          writable: [],
        }),
      )
    : JSON.stringify({ sandbox: { enabled: false } });
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--model', MODEL, '--permission-mode', 'acceptEdits', '--session-id', randomUUID()];
  args.push(
    '--strict-mcp-config',
    '--mcp-config',
    '{"mcpServers":{}}',
    '--setting-sources',
    'user',
    '--settings',
    settings,
    '--tools=Bash,Read,Edit,Write,Glob,Grep',
  );
  if (!sandboxed) args.push('--allowedTools=Bash');
  const child = spawn(CLAUDE_CLI, args, { cwd, env, stdio: ['pipe', 'ignore', 'ignore'] });
  child.stdin.end(`${ScriptedModel.marker(name)} go`);
  await new Promise((resolve) => child.once('close', resolve));
  if (arrivals.length !== CALLS + 1) throw new Error(`sandbox bench: ${arrivals.length - 1} of ${CALLS} Bash calls came back (sandboxed: ${sandboxed})`);
  return { times: arrivals.slice(1).map((at, i) => at - (arrivals[i] ?? at)), bytes: model.requestsFor(name)[0]?.bytes ?? Number.NaN };
}

export async function sandboxBench(): Promise<BudgetRow[]> {
  const available = await probeSandbox();
  if (!available.available) {
    return [
      {
        budget: 'sandbox: what it adds to a Bash call, median and p99 ≤ 50 ms',
        measured: `skipped: ${available.reason}`,
        baseline: '—',
        ratio: Number.NaN,
        value: 0,
        limit: LIMIT_MS,
      },
    ];
  }
  const fake = new FakeOpenRouter();
  fake.addKey(KEY);
  await fake.start();
  const model = new ScriptedModel(fake, { apiKey: KEY });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ord-bench-sandbox-'));
  await mkdir(path.join(dir, 'config'));
  const inside: number[] = [];
  const outside: number[] = [];
  const bytes = { inside: 0, outside: 0 };
  try {
    // Interleaved, so that load on the machine falls on both alike.
    for (let run = 0; run < RUNS; run++) {
      const plain = await callTimes(fake, model, dir, false);
      const sandboxed = await callTimes(fake, model, dir, true);
      outside.push(...plain.times);
      inside.push(...sandboxed.times);
      Object.assign(bytes, { inside: sandboxed.bytes, outside: plain.bytes });
    }
  } finally {
    model.stop();
    await fake.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const row = (what: string, p: number): BudgetRow => {
    const sandboxed = percentile(inside, p);
    const plain = percentile(outside, p);
    return {
      budget: `sandbox: what it adds to a Bash call (${what}, ${inside.length} calls), ≤ ${LIMIT_MS} ms`,
      measured: `${ms(sandboxed)} a call, ${sandboxed >= plain ? '+' : '−'}${ms(Math.abs(sandboxed - plain))}`,
      baseline: `the same call unsandboxed ${ms(plain)}`,
      ratio: sandboxed / plain,
      value: sandboxed - plain,
      limit: LIMIT_MS,
    };
  };
  // No budget was set for it; shown so that it is seen: Claude Code describes the sandbox to the model on every request.
  const added = bytes.inside - bytes.outside;
  const prompt: BudgetRow = {
    budget: "sandbox: Claude Code's description of it, bytes on every request of a lean delegate (no budget set)",
    measured: `${bytes.inside} bytes, +${added}`,
    baseline: `the same request unsandboxed ${bytes.outside} bytes`,
    ratio: bytes.inside / bytes.outside,
    value: 0,
    limit: 0,
  };
  return [row('median', 50), row('p99', 99), prompt];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await sandboxBench();
  for (const r of rows) console.log(`${r.budget}: ${r.measured} (${r.baseline}); ${median([r.value]).toFixed(1)} ms`);
}
