/**
 * Delegation budgets (issue 3): the service's overhead from a `jobs.start` call to the child being
 * spawned, against a bare spawn of the same program; and the service's memory with 20 jobs
 * streaming 10 MB each at once, against its idle size (tails are bounded, so it must stay flat).
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { IpcClient } from '../src-main/ipc/client.js';
import { resolveLocations } from '../src-main/platform/locations.js';
import { FakeOpenRouter } from '../tests/support/fake-openrouter.js';
import { median, ms } from './lib/stats.js';
import type { BudgetRow } from './lib/stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'dist/cli/openrouter-delegate.js');
const FAKE_CLAUDE = path.join(ROOT, 'bench/fixtures/fake-claude.mjs');
const KEY = `sk-or-v1-${'b3c4'.repeat(16)}`;

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** The prompt that has the bench's stand-in `claude` write `mb` megabytes of stream (fixtures/fake-claude.mjs). */
const streamPrompt = (mb: number): string => `stream [[fake-claude-mb:${mb}]]`;

async function withService<T>(settings: Record<string, unknown>, body: (client: IpcClient, pid: number, project: string) => Promise<T>): Promise<T> {
  const fake = new FakeOpenRouter();
  fake.addKey(KEY, { limit: 1000, limitRemaining: 1000 });
  await fake.start();
  const home = await mkdtemp(path.join(os.tmpdir(), 'ord-bench-deleg-'));
  const project = path.join(home, 'project');
  await mkdir(project, { recursive: true });
  await mkdir(path.join(home, 'config'), { recursive: true, mode: 0o700 });
  await writeFile(path.join(home, 'config', 'settings.json'), JSON.stringify(settings));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    OPENROUTER_DELEGATE_HOME: home,
    OPENROUTER_BASE_URL: fake.baseUrl,
    OPENROUTER_API_KEY: KEY,
    OPENROUTER_DELEGATE_CLAUDE: FAKE_CLAUDE,
  };
  const service = spawn(process.execPath, [CLI, 'serve', '--notify-ready'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    service.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    service.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
  const client = await IpcClient.connect({ locations: resolveLocations(env), clientName: 'bench' });
  try {
    return await body(client, service.pid ?? 0, project);
  } finally {
    client.close();
    await new Promise((resolve) => {
      service.once('exit', resolve);
      service.kill('SIGTERM');
    });
    await fake.stop();
    await rm(home, { recursive: true, force: true });
  }
}

async function waitForEnd(client: IpcClient, jobId: string): Promise<void> {
  for (;;) {
    const view = await client.call('jobs.status', { jobId, waitSeconds: 30 });
    if (view.job.state !== 'queued' && view.job.state !== 'running') return;
  }
}

export async function startOverheadBench(runs = 40): Promise<BudgetRow> {
  const ours = await withService({ concurrency: 4 }, async (client, _pid, project) => {
    const samples: number[] = [];
    for (let i = 0; i < runs + 5; i++) {
      const t0 = Date.now();
      const { job } = await client.call('jobs.start', { prompt: 'bench', caller: { cwd: project } });
      await waitForEnd(client, job.id);
      const record = (await client.call('jobs.status', { jobId: job.id })).job;
      if (i >= 5) samples.push(Date.parse(record.startedAt ?? '') - t0);
    }
    return samples;
  });
  const bare: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const child = spawn(FAKE_CLAUDE, [], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    await new Promise((resolve) => child.once('spawn', resolve));
    bare.push(performance.now() - t0);
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
  }
  const p50 = median(ours);
  return {
    budget: 'delegate_start call → child spawned (service overhead), p50 ≤ 20 ms',
    measured: ms(p50),
    baseline: `bare spawn of the same program ${ms(median(bare))}`,
    ratio: p50 / median(bare),
    value: p50,
    limit: 20,
  };
}

export async function streamingMemoryBench(jobs = 20, mb = 10): Promise<BudgetRow> {
  const { idle, peak } = await withService({ concurrency: jobs, budgets: { perJobUsd: 1, perDayUsd: 1000, reserveUsd: 0 } }, async (client, pid, project) => {
    // Warm: one small job first, so the baseline includes a parsed catalog and a used supervisor (the first
    // job's one-time cost, about 20 MB of compiled code and the catalog, is not what the row measures).
    const { job: warm } = await client.call('jobs.start', { prompt: streamPrompt(0.01), caller: { cwd: project } });
    await waitForEnd(client, warm.id);
    const idleBefore = await rssBytes(pid);
    const started = await Promise.all(Array.from({ length: jobs }, () => client.call('jobs.start', { prompt: streamPrompt(mb), caller: { cwd: project } })));
    let highest = idleBefore;
    let done = false;
    const sampler = (async () => {
      while (!done) {
        highest = Math.max(highest, await rssBytes(pid).catch(() => 0));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await Promise.all(started.map(({ job }) => waitForEnd(client, job.id)));
    done = true;
    await sampler;
    return { idle: idleBefore, peak: highest };
  });
  const growthMb = (peak - idle) / 1024 / 1024;
  return {
    budget: `service RSS growth, ${jobs} jobs streaming ${mb} MB each at once (after one small job), < 50 MB`,
    measured: `+${growthMb.toFixed(1)} MB (peak ${(peak / 1024 / 1024).toFixed(0)} MB)`,
    baseline: `idle service, one small job done ${(idle / 1024 / 1024).toFixed(0)} MB`,
    ratio: peak / idle,
    value: growthMb,
    limit: 50,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { printTable } = await import('./lib/stats.js');
  printTable([await startOverheadBench(), await streamingMemoryBench()]);
}
