/**
 * Live policy (issue 4): how long from a settings change to a connected bridge's client receiving
 * notifications/tools/list_changed — through the service (what openrouter-mcp-config and the window do),
 * by a hand edit of the settings file (watched), and by the user's own command, `openrouter-mcp-config
 * --mode off`, from the moment it is started (its start-up included; baseline: the same command asked
 * only to `--show --json`, run to its end). Budget: within a second.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { IpcClient } from '../src-main/ipc/client.js';
import { resolveLocations } from '../src-main/platform/locations.js';
import { FakeOpenRouter } from '../tests/support/fake-openrouter.js';
import { median, ms } from './lib/stats.js';
import type { BudgetRow } from './lib/stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'dist/cli/openrouter-delegate.js');
const BRIDGE = path.join(ROOT, 'dist/bridge/openrouter-delegate-mcp.js');
const CONFIG_CLI = path.join(ROOT, 'dist/cli/openrouter-mcp-config.js');

/** Runs the config CLI to its end; rejects on a non-zero exit, with what it said. */
function runConfigCli(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CONFIG_CLI, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`openrouter-mcp-config ${args.join(' ')} exited with ${code}: ${stderr.trim()}`))));
  });
}

export async function policyLatencyBench(rounds = 10): Promise<BudgetRow[]> {
  const fake = new FakeOpenRouter();
  await fake.start();
  const home = await mkdtemp(path.join(os.tmpdir(), 'ord-bench-policy-'));
  await mkdir(path.join(home, 'config'), { recursive: true, mode: 0o700 });
  const settingsFile = path.join(home, 'config', 'settings.json');
  await writeFile(settingsFile, JSON.stringify({ mode: 'ondemand' }));
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', OPENROUTER_DELEGATE_HOME: home, OPENROUTER_BASE_URL: fake.baseUrl };
  const service = spawn(process.execPath, [CLI, 'serve', '--notify-ready'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve) => service.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BRIDGE], env, stderr: 'ignore' }));
  const ipc = await IpcClient.connect({ locations: resolveLocations(env), clientName: 'bench' });
  let notify: (() => void) | null = null;
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => notify?.());
  const next = () => new Promise<void>((resolve) => (notify = resolve));
  const viaService: number[] = [];
  const viaFile: number[] = [];
  const viaCommand: number[] = [];
  const showCommand: number[] = [];
  const pings: number[] = [];
  try {
    for (let i = 0; i < rounds; i++) {
      // Each round changes the mode twice: to off through the service, back to auto by hand.
      let arrived = next();
      let t = performance.now();
      await ipc.call('settings.update', { patch: { mode: 'off' } });
      await arrived;
      viaService.push(performance.now() - t);
      const text = JSON.parse(await readFile(settingsFile, 'utf8')) as Record<string, unknown>;
      arrived = next();
      t = performance.now();
      await writeFile(settingsFile, JSON.stringify({ ...text, mode: 'auto' }));
      await arrived;
      viaFile.push(performance.now() - t);
      // The user's command: started now, the notification is what counts (the process may still be exiting).
      arrived = next();
      t = performance.now();
      const command = runConfigCli(['--mode', 'off'], env);
      await arrived;
      viaCommand.push(performance.now() - t);
      await command;
      arrived = next();
      await ipc.call('settings.update', { patch: { mode: 'auto' } });
      await arrived;
      t = performance.now();
      await runConfigCli(['--show', '--json'], env);
      showCommand.push(performance.now() - t);
      t = performance.now();
      await client.ping();
      pings.push(performance.now() - t);
    }
  } finally {
    ipc.close();
    await client.close();
    await new Promise((resolve) => {
      service.once('exit', resolve);
      service.kill('SIGTERM');
    });
    await fake.stop();
    await rm(home, { recursive: true, force: true });
  }
  const base = `MCP ping through the bridge ${ms(median(pings))}`;
  return [
    {
      budget: 'settings change via the service → tools/list_changed at the client ≤ 1 s',
      measured: ms(median(viaService)),
      baseline: base,
      ratio: median(viaService) / median(pings),
      value: median(viaService),
      limit: 1000,
    },
    {
      budget: 'hand edit of settings.json → tools/list_changed at the client ≤ 1 s',
      measured: ms(median(viaFile)),
      baseline: base,
      ratio: median(viaFile) / median(pings),
      value: median(viaFile),
      limit: 1000,
    },
    {
      budget: '`openrouter-mcp-config --mode off` started → tools/list_changed at the client ≤ 1 s',
      measured: ms(median(viaCommand)),
      baseline: `\`openrouter-mcp-config --show --json\`, start to exit ${ms(median(showCommand))}`,
      ratio: median(viaCommand) / median(showCommand),
      value: median(viaCommand),
      limit: 1000,
    },
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { printTable } = await import('./lib/stats.js');
  printTable(await policyLatencyBench());
}
