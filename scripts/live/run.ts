/**
 * `npm run test:live`: the product against the real OpenRouter, in one step, for at most a few cents
 * (docs/DEVELOPMENT.md, "Against the real OpenRouter"). Without OPENROUTER_API_KEY it says so and exits 0.
 *
 * In a temporary home, with the whole run capped by the service's own daily budget (printed before anything is
 * spent): /key and /models read through the product; one delegated job on a cheap tool-capable model, driven by the
 * real Claude Code as the parent MCP client (start, status, result, follow-up), its billed cost from /generation
 * beside the estimate; a job whose tiny cap stops it before its request; the follow-up sent with the provider policy
 * ZDR on, and accepted; afterwards, the key in no file of the temporary home. It prints a short report and exits
 * 1 when a check failed.
 *
 * The parent's own model is a local script (tests/support/fake-anthropic.ts), so the parent costs nothing and makes
 * the same calls every time: everything that reaches OpenRouter goes through the service and its cap. A recording
 * relay sits between the service and OpenRouter (relay.ts), so the run sees what went over the wire; with
 * `--capture <folder>` it writes what OpenRouter answered as fixtures (capture.ts), and, in the same folder,
 * claude-requests.json: what the delegates' Claude Code sent to the gateway (header names, values and shapes, the
 * longest string at each body path), recorded at the gateway's door (claude-door.ts, request-record.ts) as
 * scripts/capture-claude-requests.ts records it against the fake — here with the ids and signatures of real models.
 * OPENROUTER_BASE_URL points the run elsewhere: CI runs it against the fake (tests/e2e/live-script.test.ts). Against
 * the real OpenRouter it runs only by hand, never in CI; the recording itself is unit-tested on canned requests
 * (tests/contract/claude-requests-capture.test.ts).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ServiceError } from '../../src-main/contract/index.js';
import type { GatewayRequest, JobRecord } from '../../src-main/contract/index.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import type { Locations } from '../../src-main/platform/locations.js';
import { DEFAULT_BASE_URL, baseUrlFrom } from '../../src-main/core/openrouter/endpoint.js';
import { BRIDGE, CLI, runCli } from '../../tests/support/built.js';
import { CLAUDE_CLI, ScriptedModel, toolResults } from '../../tests/support/fake-anthropic.js';
import type { ModelRequest, TextStep, ToolUseStep } from '../../tests/support/fake-anthropic.js';
import { FakeOpenRouter } from '../../tests/support/fake-openrouter.js';
import { runOuterClaude } from '../../tests/support/outer-claude.js';
import { CLAUDE_REQUESTS_FILE, captureFiles, claudeRequestsFile, writeCapture } from './capture.js';
import { ClaudeDoor } from './claude-door.js';
import type { SentRequest } from './request-record.js';
import type { RelayedExchange } from './relay.js';
import { RecordingRelay } from './relay.js';
import { compareCaptureFolder, describeDifference } from './compare-captures.js';
import { fakeMessagesStream } from './fake-stream.js';

export const SKIP_LINE = 'test:live: skipped — set OPENROUTER_API_KEY to run against the real OpenRouter (costs at most $0.05)';
const DEFAULT_CAP_USD = 0.05;
/**
 * The tiny job's cap: $0.0001, or half of what 1,024 tokens of answer cost on the model when that is less. The
 * gateway lets no request through that cannot pay for 1,024 tokens of answer, so this job's first is refused.
 */
function tinyCapUsd(outputPerM: number): number {
  return Number(Math.min(0.0001, (1024 * outputPerM) / 1e6 / 2).toPrecision(2));
}
const WORD = 'pineapple';
const FIRST_PROMPT = `Reply with exactly one word, the name of the fruit "${WORD}", in lower case, and nothing else.`;
const FOLLOWUP_PROMPT = 'Now reply with the same word again, in capital letters, and nothing else.';
const TINY_PROMPT = 'Reply with the word "ok".';
const JOB_ID = /job_\d{8}T\d{6}Z_[a-z0-9]+/g;
const SERVER = 'openrouter';

interface Options {
  maxUsd: number;
  model: string | null;
  capture: string | null;
  /** Put before the first prompt: the fake's script marker in CI (a real model never sees one). */
  promptPrefix: string;
  keepHome: boolean;
}

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

class Run {
  readonly checks: Check[] = [];
  check(name: string, ok: boolean, detail: string): boolean {
    this.checks.push({ name, ok, detail });
    console.log(`${ok ? '✓' : '✗'} ${name}: ${detail}`);
    return ok;
  }
  get failed(): Check[] {
    return this.checks.filter((check) => !check.ok);
  }
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      'max-usd': { type: 'string' },
      model: { type: 'string' },
      capture: { type: 'string' },
      'prompt-prefix': { type: 'string' },
      'keep-home': { type: 'boolean', default: false },
    },
  });
  const maxUsd = values['max-usd'] === undefined ? DEFAULT_CAP_USD : Number(values['max-usd']);
  if (!Number.isFinite(maxUsd) || maxUsd <= 0) throw new Error(`--max-usd must be a positive number of dollars (got "${values['max-usd']}").`);
  return {
    maxUsd,
    model: values.model ?? null,
    capture: values.capture ? path.resolve(values.capture) : null,
    promptPrefix: values['prompt-prefix'] ?? '',
    keepHome: values['keep-home'],
  };
}

const usd = (value: number | null | undefined) =>
  value === null || value === undefined ? 'n/a' : `$${value === 0 ? '0' : value < 0.001 ? value.toFixed(7) : value.toFixed(4)}`;
const ms = (value: number | null | undefined) =>
  value === null || value === undefined ? 'n/a' : value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(1)} s`;
const tokens = (value: number) => (value >= 1000 ? `${(value / 1000).toFixed(1)}k` : String(value));
const median = (values: number[]) => (values.length === 0 ? null : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]);

interface Home {
  root: string;
  home: string;
  user: string;
  tmp: string;
  project: string;
  locations: Locations;
  /** The environment of every process of the run but the service (which alone gets the key). */
  env: NodeJS.ProcessEnv;
}

async function makeHome(relayBaseUrl: string, options: Options): Promise<Home> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'ord-live-'));
  const [home, user, tmp, project] = ['home', 'user', 'tmp', 'project'].map((name) => path.join(root, name)) as [string, string, string, string];
  for (const dir of [home, user, tmp, project]) await mkdir(dir, { recursive: true, mode: 0o700 });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: user,
    TMPDIR: tmp,
    OPENROUTER_DELEGATE_HOME: home,
    OPENROUTER_BASE_URL: relayBaseUrl,
    OPENROUTER_DELEGATE_CLAUDE: CLAUDE_CLI,
  };
  for (const name of ['DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR', 'LANG']) if (process.env[name] !== undefined) env[name] = process.env[name];
  const locations = resolveLocations(env);
  await mkdir(path.dirname(locations.settingsFile), { recursive: true, mode: 0o700 });
  // The cap is the day's budget of a home that has spent nothing; a job may use a third of it (at least $0.01).
  const settings = {
    budgets: { perJobUsd: Math.max(0.01, Number((options.maxUsd / 3).toFixed(4))), perDayUsd: options.maxUsd, reserveUsd: 0 },
    delegateProfile: 'minimal',
    isolation: 'none',
    delegateMaxRetries: 1,
  };
  await writeFile(locations.settingsFile, JSON.stringify(settings, null, 2), { mode: 0o600 });
  return { root, home, user, tmp, project, locations, env };
}

/** The headless service, the only process given the key (in its environment, never in a file). */
async function startService(home: Home, key: string): Promise<{ child: ChildProcess; client: IpcClient }> {
  const child = spawn(process.execPath, [CLI, 'serve'], { env: { ...home.env, OPENROUTER_API_KEY: key }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return { child, client: await IpcClient.connect({ locations: home.locations, clientName: 'test-live' }) };
    } catch (error) {
      if (!(error instanceof ServiceError) || Date.now() > deadline || child.exitCode !== null) {
        throw new Error(`The service did not start: ${(error as Error).message}\n${stderr.slice(-2000)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Every file under `dir` that holds `secret`. */
async function filesHolding(dir: string, secret: string): Promise<{ scanned: number; holding: string[] }> {
  let scanned = 0;
  const holding: string[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) {
        scanned += 1;
        const bytes = await readFile(full).catch(() => null);
        if (bytes?.includes(secret)) holding.push(full);
      }
    }
  };
  await walk(dir);
  return { scanned, holding };
}

interface ParentRun {
  code: number | null;
  stderr: string;
  /** The text of each tool result the parent's model was handed, in order. */
  toolTexts: Array<{ text: string; isError: boolean }>;
}

/**
 * The real Claude Code as the parent MCP client, the built bridge registered through --mcp-config. Its model is a
 * local script: start, status, result, follow-up (with ZDR switched on just before it), result, the tiny job.
 */
async function runParent(home: Home, client: IpcClient, model: string, tinyCap: number, options: Options): Promise<ParentRun> {
  const brain = new FakeOpenRouter();
  const scripted = new ScriptedModel(brain);
  await brain.start();
  const seen: string[] = [];
  let zdr: Promise<unknown> | null = null;
  let zdrApplied = false;
  const lastResult = (request: ModelRequest) => toolResults(request).at(-1)?.text ?? '';
  const newJobIn = (request: ModelRequest) => {
    for (const id of lastResult(request).match(JOB_ID) ?? []) if (!seen.includes(id)) seen.push(id);
    return seen.at(-1) ?? 'no-job-id-seen';
  };
  const tool = (name: string, input: Record<string, unknown>, delayMs = 0): ToolUseStep => ({ toolUse: { name: `mcp__${SERVER}__${name}`, input }, delayMs });
  const steps: Array<(request: ModelRequest) => TextStep | ToolUseStep> = [
    () => tool('delegate_start', { prompt: `${options.promptPrefix}${FIRST_PROMPT}`, model, wait_seconds: 0 }),
    (request) => tool('delegate_status', { job_id: newJobIn(request), wait_seconds: 180 }),
    () => {
      zdr = client.call('settings.update', { patch: { provider: { zdr: true } } }).then(() => (zdrApplied = true));
      return tool('delegate_result', { job_id: seen[0], wait_seconds: 180 });
    },
    () => tool('delegate_followup', { job_id: seen[0], prompt: FOLLOWUP_PROMPT, wait_seconds: 0 }, zdrApplied ? 0 : 2_000),
    (request) => tool('delegate_result', { job_id: newJobIn(request), wait_seconds: 180 }),
    () => tool('delegate_start', { prompt: TINY_PROMPT, model, max_cost_usd: tinyCap, wait_seconds: 120 }),
    () => ({ text: 'All steps done.' }),
  ];
  scripted.script(
    'parent',
    steps.map((step) => ({ dynamic: step })),
  );
  try {
    const outer = await runOuterClaude({
      cwd: home.project,
      home: home.user,
      tmp: home.tmp,
      baseUrl: brain.baseUrl,
      serverName: SERVER,
      server: { command: process.execPath, args: [BRIDGE], env: home.env as Record<string, string> },
      tools: ['delegate_start', 'delegate_status', 'delegate_result', 'delegate_followup'],
      input: `${ScriptedModel.marker('parent')} Delegate a one-word task to ${model}, follow it up, then try a job with a tiny cap.`,
    });
    await zdr;
    const last = scripted.requestsFor('parent').at(-1);
    const toolTexts = last ? toolResults(last).map(({ text, isError }) => ({ text, isError })) : [];
    return { code: outer.code, stderr: outer.stderr, toolTexts };
  } finally {
    scripted.stop();
    await brain.stop();
  }
}

interface ModelChoice {
  id: string;
  inputPerM: number;
  outputPerM: number;
}

async function pickModel(client: IpcClient, run: Run, wanted: string | null): Promise<{ choice: ModelChoice | null; latencyMs: number }> {
  const started = performance.now();
  const report = await client.call('models.list', { limit: 500, sort: 'price', refresh: true });
  const latencyMs = performance.now() - started;
  const priced = report.models.filter(
    (m) => m.tools && m.allowed && !m.variablePricing && (m.priceInputPerM ?? 0) > 0 && (m.priceOutputPerM ?? 0) > 0 && (m.contextLength ?? 0) >= 32_000,
  );
  run.check(
    '/models read through the service',
    report.totalToolModels > 0 && priced.length > 0,
    `${report.totalToolModels} tool-capable models, ${priced.length} allowed with prices and ≥ 32k context (${ms(latencyMs)})`,
  );
  // A delegate's request is mostly prompt (Claude Code's system prompt and tools): price a typical one.
  const typical = (m: (typeof priced)[number]) => (m.priceInputPerM ?? 0) * 12 + (m.priceOutputPerM ?? 0) * 0.2;
  const row = wanted ? report.models.find((m) => m.id === wanted) : [...priced].sort((a, b) => typical(a) - typical(b))[0];
  if (!row) {
    run.check('model', false, wanted ? `${wanted} is not a tool-capable model in /models` : 'no model to pick');
    return { choice: null, latencyMs };
  }
  const choice = { id: row.id, inputPerM: row.priceInputPerM ?? 0, outputPerM: row.priceOutputPerM ?? 0 };
  console.log(`  model: ${choice.id} ($${choice.inputPerM}/M in, $${choice.outputPerM}/M out)${wanted ? ' (--model)' : ', the cheapest that fits'}`);
  return { choice, latencyMs };
}

/** Waits until the service has asked /generation for the job's billed cost (or given up). */
async function billed(client: IpcClient, jobId: string, timeoutMs: number): Promise<JobRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { job } = await client.call('jobs.status', { jobId, waitSeconds: 0, progressLimit: 1 });
    if (job.billing !== 'pending' || Date.now() > deadline) return job;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/** The message requests the delegates' Claude Code made (at the door), with the jobs' sessions to shape away. */
function sentToGateway(door: ClaudeDoor | null, jobs: JobRecord[]): SentRequest[] {
  const sessionIds = jobs.map((job) => job.sessionId);
  return (door?.requests ?? [])
    .filter((r) => r.method === 'POST' && (r.path === '/v1/messages' || r.path === '/v1/messages/count_tokens'))
    .map((r) => ({ scenario: 'test:live', path: r.path, headers: r.headers, body: parseJson(r.body), sessionIds }));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** Reads OpenRouter's error answers on purpose (free), so a capture holds their shapes. */
async function readErrorShapes(relay: RecordingRelay, key: string, labels: Map<RelayedExchange, string>): Promise<void> {
  const wrongKey = `sk-or-v1-${'0'.repeat(64)}`;
  const reads: Array<{ label: string | null; path: string; key: string; init?: RequestInit }> = [
    { label: 'unknown key', path: '/v1/key', key: wrongKey },
    { label: null, path: '/v1/credits', key },
    { label: 'unknown id', path: '/v1/generation?id=gen-1700000000-AAAAAAAAAAAAAAAAAAAA', key },
    {
      label: 'unknown key',
      path: '/v1/messages',
      key: wrongKey,
      init: { method: 'POST', body: JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }) },
    },
  ];
  for (const read of reads) {
    const before = relay.exchanges.length;
    await fetch(`${relay.baseUrl}${read.path}`, {
      ...read.init,
      headers: { authorization: `Bearer ${read.key}`, 'content-type': 'application/json' },
    })
      .then((answer) => answer.text())
      .catch(() => '');
    const exchange = relay.exchanges[before];
    if (exchange && read.label) labels.set(exchange, read.label);
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const key = process.env.OPENROUTER_API_KEY?.trim() ?? '';
  if (key === '') {
    console.log(SKIP_LINE);
    return 0;
  }
  const upstream = baseUrlFrom(process.env);
  const relay = new RecordingRelay(upstream);
  await relay.start();
  // With --capture, the delegates' Claude Code reaches the gateway through a recording door: what it sent, not what went on.
  const door = options.capture ? new ClaudeDoor() : null;
  await door?.start();
  const home = await makeHome(relay.baseUrl, options);
  if (door) home.env.OPENROUTER_DELEGATE_CLAUDE = await door.writeLauncher(home.root, CLAUDE_CLI);
  console.log(`test:live against ${upstream}${upstream === DEFAULT_BASE_URL ? ' (the real OpenRouter)' : ''}, in a temporary home ${home.root}`);
  console.log(
    `Cap: ${usd(options.maxUsd)} for the whole run, enforced by the service's own daily budget (budgets.perDayUsd ${options.maxUsd}, perJobUsd ${Math.max(0.01, Number((options.maxUsd / 3).toFixed(4)))}); nothing is spent before this line. The parent Claude Code's model is a local script: it costs nothing.`,
  );
  const run = new Run();
  let service: { child: ChildProcess; client: IpcClient } | null = null;
  const started = performance.now();
  try {
    const doctor = await runCli(['doctor', '--json'], { ...home.env, OPENROUTER_API_KEY: key });
    const checks = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; summary: string }> }).checks;
    const reachable = checks.find((c) => c.id === 'openrouter');
    run.check('OpenRouter answers `openrouter-delegate doctor`', reachable?.status === 'ok', reachable?.summary ?? 'no OpenRouter check');

    service = await startService(home, key);
    const { client } = service;
    const keyStarted = performance.now();
    const balance = await client.call('balance.get', { refresh: true });
    const keyLatency = performance.now() - keyStarted;
    run.check(
      '/key read through the service',
      balance.key !== null && relay.to('/v1/key').some((e) => e.status === 200),
      `limit ${balance.key?.limitUsd == null ? 'none' : usd(balance.key.limitUsd)}, remaining ${usd(balance.key?.remainingUsd)}, used ${usd(balance.key?.usageUsd)} (${ms(keyLatency)})`,
    );
    const { choice, latencyMs: modelsLatency } = await pickModel(client, run, options.model);
    if (!choice) return 1;

    const tinyCap = tinyCapUsd(choice.outputPerM);
    const parent = await runParent(home, client, choice.id, tinyCap, options);
    run.check(
      'the real Claude Code drove the bridge (start, status, result, follow-up, result, tiny job)',
      parent.code === 0 && parent.toolTexts.length === 6,
      `exit ${parent.code}, ${parent.toolTexts.length} tool results${parent.code === 0 ? '' : `; ${parent.stderr.slice(-500)}`}`,
    );
    const errors = parent.toolTexts.filter((t) => t.isError);
    if (errors.length > 0) run.check('tool calls', false, errors.map((t) => t.text.split('\n')[0]).join(' | '));

    const list = await client.call('jobs.list', { limit: 20 });
    const jobs = list.conversations.flatMap((c) => c.jobs);
    const first = jobs.find((j) => j.turn === 1 && j.maxCostUsd !== tinyCap);
    const followup = jobs.find((j) => j.turn === 2);
    const tiny = jobs.find((j) => j.maxCostUsd === tinyCap);
    const answer = async (job: JobRecord | undefined) =>
      job ? ((await client.call('jobs.result', { jobId: job.id, waitSeconds: 0, maxChars: 1000 })).resultText ?? '') : '';
    const firstAnswer = await answer(first);
    run.check(
      'delegated job',
      first?.state === 'succeeded' && firstAnswer.toLowerCase().includes(WORD),
      `${first?.state ?? 'not found'}, answered "${firstAnswer.trim().slice(0, 80)}"`,
    );
    const followupAnswer = await answer(followup);
    run.check(
      'follow-up in the same session (it remembers the word)',
      followup?.state === 'succeeded' && followup.sessionId === first?.sessionId && followupAnswer.toLowerCase().includes(WORD),
      `${followup?.state ?? 'not found'}, answered "${followupAnswer.trim().slice(0, 80)}"`,
    );

    const requestLogs = new Map<string, GatewayRequest[]>();
    for (const job of jobs) requestLogs.set(job.id, (await client.call('jobs.requests', { jobId: job.id })).requests);
    const tinyLog = tiny ? (requestLogs.get(tiny.id) ?? []) : [];
    run.check(
      `a job capped at ${usd(tinyCap)} is stopped before its request`,
      tiny?.state === 'budget_exceeded' && tinyLog.length > 0 && tinyLog.every((r) => r.outcome === 'refused' && r.generationId === null),
      `${tiny?.state ?? 'not found'}; its requests: ${tinyLog.map((r) => `${r.status} ${r.outcome}`).join(', ') || 'none'}`,
    );
    const allRequests = [...requestLogs.values()].flat();
    const upstreamMessages = relay.to('/v1/messages').filter((e) => e.requestBody !== null);
    const forwarded = allRequests.filter((r) => r.outcome !== 'refused');
    run.check(
      'only what the gateway let through reached OpenRouter',
      upstreamMessages.length === forwarded.length,
      `${upstreamMessages.length} message requests upstream, ${forwarded.length} let through, ${allRequests.length - forwarded.length} refused`,
    );
    const zdrRequests = upstreamMessages.filter((e) => (e.requestBody as { provider?: { zdr?: unknown } }).provider?.zdr === true);
    const followupLog = followup ? (requestLogs.get(followup.id) ?? []) : [];
    run.check(
      'provider policy ZDR on: the follow-up sent it, OpenRouter accepted it',
      zdrRequests.length > 0 && zdrRequests.every((e) => e.status === 200) && followupLog.length > 0 && followupLog.every((r) => r.outcome === 'ok'),
      `${zdrRequests.length} request(s) with provider.zdr, answered ${[...new Set(zdrRequests.map((e) => e.status))].join('/') || 'nothing'}${
        followupLog.some((r) => r.provider) ? `; served by ${[...new Set(followupLog.map((r) => r.provider ?? '?'))].join(', ')}` : ''
      }`,
    );

    const billedJobs: JobRecord[] = [];
    for (const job of [first, followup]) if (job) billedJobs.push(await billed(client, job.id, 90_000));
    const billedTotal = billedJobs.reduce((sum, j) => sum + (j.billedCostUsd ?? 0), 0);
    const estimatedTotal = jobs.reduce((sum, j) => sum + j.estimatedCostUsd, 0);
    run.check(
      'billed cost from /generation, beside the estimate',
      billedJobs.length === 2 && billedJobs.every((j) => j.billing === 'complete' && j.billedCostUsd !== null),
      billedJobs.map((j) => `turn ${j.turn}: estimated ${usd(j.estimatedCostUsd)}, billed ${usd(j.billedCostUsd)} (${j.billing})`).join('; '),
    );
    const spent = (await client.call('jobs.list', { limit: 20 })).spentTodayUsd;
    run.check(
      'within the cap',
      spent <= options.maxUsd && billedTotal <= options.maxUsd,
      `spent today per the service ${usd(spent)}, billed ${usd(billedTotal)}, cap ${usd(options.maxUsd)}`,
    );

    const labels = new Map<RelayedExchange, string>();
    if (options.capture) {
      await readErrorShapes(relay, key, labels);
      const source = `npm run test:live -- --capture, ${new Date().toISOString().slice(0, 10)}, ${new URL(upstream).host}`;
      const files = captureFiles({ exchanges: relay.exchanges, labels, key, source });
      files.set(CLAUDE_REQUESTS_FILE, claudeRequestsFile(sentToGateway(door, jobs), `${source}, model ${choice.id}`));
      const readme = `# A capture of OpenRouter's answers\n\nMade by \`npm run test:live -- --capture\` on ${new Date().toISOString()} against ${upstream}, model ${choice.id}; keys and ids scrubbed.\nCompare: \`npx tsx scripts/compare-openrouter-captures.ts ${options.capture}\`; copy over the fixtures: add \`--refresh-fixtures\`.\n`;
      await writeCapture(options.capture, files, readme);
      console.log(`  capture: ${[...files.keys()].join(', ')} in ${options.capture}`);
      console.log(`  what Claude Code sent: ${path.join(options.capture, CLAUDE_REQUESTS_FILE)} (${sentToGateway(door, jobs).length} requests)`);
      const differences = await compareCaptureFolder(options.capture, fileURLToPath(new URL('../../tests/fixtures/openrouter/', import.meta.url)), {
        fakeStream: fakeMessagesStream,
      });
      console.log(`  against the fixtures: ${differences.length === 0 ? 'no differences' : `${differences.length} difference(s)`}`);
      for (const difference of differences.slice(0, 40)) console.log(`    - ${describeDifference(difference)}`);
      if (differences.length > 40) console.log(`    … and ${differences.length - 40} more (scripts/compare-openrouter-captures.ts lists them all)`);
    }

    printReport({
      jobs,
      requestLogs,
      choice,
      tinyCap,
      keyLatency,
      modelsLatency,
      estimatedTotal,
      billedTotal,
      cap: options.maxUsd,
      elapsedMs: performance.now() - started,
    });
  } catch (error) {
    run.check('run', false, (error as Error).message);
  } finally {
    service?.client.close();
    await runCli(['stop', '--kill-jobs'], home.env).catch(() => undefined);
    if (service && service.child.exitCode === null) await new Promise((resolve) => service?.child.once('exit', resolve));
    await relay.stop();
    await door?.stop();
    const scan = await filesHolding(home.root, key);
    const captureScan = options.capture ? await filesHolding(options.capture, key) : { scanned: 0, holding: [] };
    run.check(
      'the key in no file of the temporary home',
      scan.holding.length === 0 && captureScan.holding.length === 0,
      `${scan.scanned + captureScan.scanned} files scanned${[...scan.holding, ...captureScan.holding].map((f) => `; FOUND in ${f}`).join('')}`,
    );
    if (options.keepHome) console.log(`  kept: ${home.root}`);
    else await rm(home.root, { recursive: true, force: true });
  }
  const failed = run.failed;
  console.log(
    failed.length === 0
      ? `test:live: all ${run.checks.length} checks passed`
      : `test:live: ${failed.length} of ${run.checks.length} checks FAILED: ${failed.map((c) => c.name).join('; ')}`,
  );
  return failed.length === 0 ? 0 : 1;
}

function printReport(facts: {
  jobs: JobRecord[];
  requestLogs: Map<string, GatewayRequest[]>;
  choice: ModelChoice;
  tinyCap: number;
  keyLatency: number | null;
  modelsLatency: number;
  estimatedTotal: number;
  billedTotal: number;
  cap: number;
  elapsedMs: number;
}): void {
  const requests = [...facts.requestLogs.values()].flat();
  const served = requests.filter((r) => r.outcome === 'ok');
  const usage = served.reduce(
    (sum, r) => ({
      input: sum.input + r.usage.inputTokens + r.usage.cacheReadTokens + r.usage.cacheWriteTokens,
      output: sum.output + r.usage.outputTokens,
      read: sum.read + r.usage.cacheReadTokens,
      written: sum.written + r.usage.cacheWriteTokens,
    }),
    { input: 0, output: 0, read: 0, written: 0 },
  );
  const models = [...new Set(served.map((r) => `${r.model}${r.provider ? ` via ${r.provider}` : ''}`))];
  const jobTimes = facts.jobs
    .filter((j) => j.startedAt && j.endedAt)
    .map((j) => `turn ${j.turn}${j.maxCostUsd === facts.tinyCap ? ' (tiny cap)' : ''} ${ms(Date.parse(j.endedAt ?? '') - Date.parse(j.startedAt ?? ''))}`);
  console.log('Report');
  console.log(`  models: ${models.join(', ') || facts.choice.id}`);
  console.log(
    `  requests: ${requests.length} through the gateway (${served.length} ok, ${requests.filter((r) => r.outcome === 'refused').length} refused, ${requests.length - served.length - requests.filter((r) => r.outcome === 'refused').length} other)`,
  );
  console.log(
    `  tokens: ${tokens(usage.input)} in / ${tokens(usage.output)} out; cache ${usage.input === 0 ? 0 : Math.round((usage.read / usage.input) * 100)}% of input (${tokens(usage.read)} read, ${tokens(usage.written)} written)`,
  );
  console.log(`  cost: estimated ${usd(facts.estimatedTotal)}, billed ${usd(facts.billedTotal)} (cap ${usd(facts.cap)})`);
  console.log(
    `  latencies: /key ${ms(facts.keyLatency)}, /models ${ms(facts.modelsLatency)}, first byte median ${ms(median(served.flatMap((r) => (r.firstByteMs === null ? [] : [r.firstByteMs]))))}, request median ${ms(median(served.map((r) => r.durationMs)))}; jobs ${jobTimes.join(', ')}; whole run ${ms(facts.elapsedMs)}`,
  );
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(`test:live: ${(error as Error).message}`);
  process.exitCode = 2;
}
