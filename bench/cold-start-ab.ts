/**
 * The bench's cold-start row alone, for A/B work on the bridge's start-up: each named bridge launcher
 * (`name=path/to/openrouter-delegate-mcp.js`, default: this checkout's build), the baseline server and a bare
 * `node`, interleaved, against one service; medians, and ratios to the baseline. To compare two builds, copy
 * dist/bridge/ aside before rebuilding (the bundle needs nothing from node_modules):
 *   npx tsx bench/cold-start-ab.ts before=/tmp/before/openrouter-delegate-mcp.js after=dist/bridge/openrouter-delegate-mcp.js
 * `name=--a-node-flag path` passes node flags. BENCH_COLD_RUNS (default 40) rounds.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startBridgeWorld } from './lib/bridge-world.js';
import { coldStartMs } from './lib/mcp-stdio.js';
import { median } from './lib/stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BASELINE_SERVER = path.join(ROOT, 'node_modules/claude-ollama-delegate-mcp/dist/index.js');
const RUNS = Number(process.env.BENCH_COLD_RUNS ?? 40);

async function main(): Promise<void> {
  const variants = process.argv.slice(2).map((a) => {
    // `name=--flag path`: node flags before the launcher, for trying V8 options.
    const [name, rest] = a.split(/=(.*)/s) as [string, string];
    const words = rest.split(' ');
    return { name, args: [...words.slice(0, -1), path.resolve(words.at(-1)!)] };
  });
  if (variants.length === 0) variants.push({ name: 'ours', args: [path.join(ROOT, 'dist/bridge/openrouter-delegate-mcp.js')] });
  const world = await startBridgeWorld('ord-cold');
  const { env, baselineEnv } = world;
  try {
    // One start each first: it writes the code cache, as a user's first session does.
    for (const v of variants) await coldStartMs(process.execPath, v.args, env);
    const samples = new Map<string, number[]>([...variants.map((v) => [v.name, []] as [string, number[]]), ['baseline', []], ['bare node', []]]);
    for (let i = 0; i < RUNS; i++) {
      for (const v of variants) samples.get(v.name)!.push(await coldStartMs(process.execPath, v.args, env));
      samples.get('baseline')!.push(await coldStartMs(process.execPath, [BASELINE_SERVER], baselineEnv));
      const t = performance.now();
      await new Promise((r) => spawn(process.execPath, ['-e', ''], { stdio: 'ignore' }).once('exit', r));
      samples.get('bare node')!.push(performance.now() - t);
    }
    const base = median(samples.get('baseline')!);
    for (const [name, s] of samples)
      console.log(
        `${name.padEnd(12)} median ${median(s).toFixed(1)} ms  ratio ${(median(s) / base).toFixed(3)}×  (runs ${s.length}, load ${os.loadavg()[0]!.toFixed(2)})`,
      );
  } finally {
    await world.stop();
  }
}

await main();
