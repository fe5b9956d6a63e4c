/**
 * `npm run bench`: one report — the machine, then one table with every performance budget of the
 * issues (bridge and catalog: #2; delegation: #3; live policy: #4; the bridge through npx: #15; the sandbox: #22), each measured against a baseline
 * taken in the same run, with the ratio and pass/short. Start-up times are medians of interleaved runs
 * (the machine is noisy). Exits 1 when a budget is short. Nothing else is printed unless a service fails.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseModelsBody } from '../src-main/core/catalog/parse.js';
import { queryModels } from '../src-main/core/catalog/query.js';
import { renderModelsTable } from '../src-bridge/render/models-table.js';
import { defaultSettings } from '../src-main/contract/index.js';
import { readJsonFixture } from '../tests/support/fake-openrouter.js';
import { startBridgeWorld } from './lib/bridge-world.js';
import { machineHeader } from './lib/machine.js';
import { coldStartMs, initialize, startStdioServer } from './lib/mcp-stdio.js';
import { median, ms, percentile, printTable } from './lib/stats.js';
import { startOverheadBench, streamingMemoryBench } from './delegation.js';
import { policyLatencyBench } from './policy-latency.js';
import { settingsPageBench } from './ui.js';
import { parentViewBench } from './parent-view.js';
import { delegateEconomyBench } from './delegate-economy.js';
import { streamReaderBench } from './stream-reader.js';
import { gatewayBench, gatewayKeychainBench } from './gateway.js';
import { npxStartBench } from './npx-start.js';
import { sandboxBench } from './sandbox.js';
import { toolDefinitionsBench } from './tool-definitions.js';
import type { BudgetRow } from './lib/stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BRIDGE = path.join(ROOT, 'dist/bridge/openrouter-delegate-mcp.js');
const BASELINE_SERVER = path.join(ROOT, 'node_modules/claude-ollama-delegate-mcp/dist/index.js');

const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 20);
const CALLS = Number(process.env.BENCH_CALLS ?? 500);

async function coldStart(env: NodeJS.ProcessEnv, baselineEnv: NodeJS.ProcessEnv): Promise<BudgetRow> {
  const ours: number[] = [];
  const theirs: number[] = [];
  const bare: number[] = [];
  // Interleaved so that load on the machine hits both alike.
  for (let i = 0; i < COLD_RUNS; i++) {
    ours.push(await coldStartMs(process.execPath, [BRIDGE], env));
    theirs.push(await coldStartMs(process.execPath, [BASELINE_SERVER], baselineEnv));
    const t = performance.now();
    await new Promise((r) => spawn(process.execPath, ['-e', ''], { stdio: 'ignore' }).once('exit', r));
    bare.push(performance.now() - t);
  }
  const ratio = median(ours) / median(theirs);
  return {
    budget: 'bridge cold start → tools/list (service up), median ≤ 0.5× baseline',
    measured: `${ms(median(ours))} (bare node ${ms(median(bare))})`,
    baseline: `claude-ollama-delegate-mcp@1.0.1 ${ms(median(theirs))}`,
    ratio,
    value: ratio,
    limit: 0.5,
  };
}

async function roundTrip(env: NodeJS.ProcessEnv): Promise<BudgetRow[]> {
  const server = startStdioServer(process.execPath, [BRIDGE], env);
  await initialize(server);
  const call = () => server.request('tools/call', { name: 'openrouter_models', arguments: { limit: 25 } });
  for (let i = 0; i < 50; i++) await call();
  const models: number[] = [];
  const pings: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    let t = performance.now();
    await call();
    models.push(performance.now() - t);
    t = performance.now();
    await server.request('ping', {});
    pings.push(performance.now() - t);
  }
  await server.close();
  const p50 = median(models);
  const p99 = percentile(models, 99);
  const base = `MCP ping through the same bridge p50 ${ms(median(pings))}, p99 ${ms(percentile(pings, 99))}`;
  return [
    {
      budget: 'openrouter_models round trip (warm, limit 25), p50 ≤ 5 ms',
      measured: ms(p50),
      baseline: base,
      ratio: p50 / median(pings),
      value: p50,
      limit: 5,
    },
    {
      budget: 'openrouter_models round trip (warm, limit 25), p99 ≤ 20 ms',
      measured: ms(p99),
      baseline: base,
      ratio: p99 / percentile(pings, 99),
      value: p99,
      limit: 20,
    },
  ];
}

function catalog(): BudgetRow {
  const body = readJsonFixture('models-2026-08.json') as { data: Array<{ id: string; name: string; supported_parameters?: string[] }> };
  const models = parseModelsBody(body);
  const settings = defaultSettings();
  const work = () => renderModelsTable(queryModels(models, { filter: 'deepseek flash', sort: 'price', limit: 25 }, settings).rows);
  // Baseline: the least anyone could do: a naive case-insensitive filter over the raw JSON objects.
  const naive = () =>
    body.data.filter((m) => m.supported_parameters?.includes('tools') && ['deepseek', 'flash'].every((w) => `${m.id} ${m.name}`.toLowerCase().includes(w)))
      .length;
  const time = (fn: () => unknown, n: number) => {
    const samples: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      fn();
      samples.push(performance.now() - t);
    }
    return samples;
  };
  time(work, 200);
  time(naive, 200);
  const ours = median(time(work, 2000));
  const theirs = median(time(naive, 2000));
  return {
    budget: `catalog filter + render over ${models.length} models (warm) ≤ 2 ms`,
    measured: ms(ours),
    baseline: `naive filter over the raw JSON ${ms(theirs)}`,
    ratio: ours / theirs,
    value: ours,
    limit: 2,
  };
}

async function main(): Promise<void> {
  const world = await startBridgeWorld('ord-bench');
  const { fake, env, baselineEnv } = world;
  try {
    console.log(`${machineHeader('OpenRouter Delegate bench')}\n`);
    const rows: BudgetRow[] = [
      // Issue 2: the bridge and the catalog; the side-by-side with the server it replaces is the first row.
      await coldStart(env, baselineEnv),
      ...(await roundTrip(env)),
      catalog(),
      // Issue 3: delegation.
      await streamReaderBench(),
      await startOverheadBench(),
      await streamingMemoryBench(),
      // Issue 4: live policy.
      ...(await policyLatencyBench()),
      // Issue 6: the settings page (bundle size, first paint in headless Chromium).
      ...(await settingsPageBench(fake.baseUrl)),
      // Issue 23: the tool definitions and server instructions every request may carry, against the server it replaces.
      ...(await toolDefinitionsBench(
        { command: process.execPath, args: [BRIDGE], env },
        { command: process.execPath, args: [BASELINE_SERVER], env: baselineEnv },
      )),
      // Issue 12: what the parent model reads, through the real CLI, against the server it replaces.
      ...(await parentViewBench()),
      // Issue 12: what a delegate's coding task sends the model, against the server it replaces.
      ...(await delegateEconomyBench()),
      // The metering gateway: what every delegate request pays for going through the service, against going straight to OpenRouter.
      ...(await gatewayBench()),
      await gatewayKeychainBench(),
      // Issue 15: the npm package's bridge started through npx, beside the repo build.
      ...(await npxStartBench()),
      // Issue 22: what the sandbox adds to a delegate's Bash call, beside the same call unsandboxed.
      ...(await sandboxBench()),
    ];
    printTable(rows);
    if (rows.some((r) => r.value > r.limit)) process.exitCode = 1;
  } finally {
    await world.stop();
  }
}

await main();
