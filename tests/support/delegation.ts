/**
 * Everything an end-to-end delegation test needs: a fake OpenRouter that also plays the model, a
 * home with settings, the real `claude` CLI, and the built bridge connected the way Claude Code
 * connects it.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'vitest';
import { resolveLocations } from '../../src-main/platform/locations.js';
import type { Locations } from '../../src-main/platform/locations.js';
import { BRIDGE, runCli, testEnv } from './built.js';
import { CLAUDE_CLI, ScriptedModel } from './fake-anthropic.js';
import type { ScriptedModelOptions } from './fake-anthropic.js';
import { FakeOpenRouter } from './fake-openrouter.js';
import type { FakeKey, FakeOpenRouterOptions } from './fake-openrouter.js';
import { makeTempHome } from './temp-home.js';

export const KEY = `sk-or-v1-${'5eed'.repeat(16)}`;
export const MODEL = 'deepseek/deepseek-v4-flash-0731';

export interface ToolAnswer<T = Record<string, unknown>> {
  isError: boolean;
  text: string;
  structured: T;
}

/**
 * A temp home for delegation tests: a project folder, a TMPDIR (Claude Code keeps task files there) and
 * settings.json with `settings` — no retries by default, so a scripted error ends a job at once.
 */
export async function makeDelegationHome(
  prefix: string,
  settings: Record<string, unknown>,
): Promise<{ home: string; project: string; tmp: string; cleanup: () => Promise<void> }> {
  const { home, cleanup } = await makeTempHome(prefix);
  const project = path.join(home, 'project');
  const tmp = path.join(home, 'tmp');
  await mkdir(project, { recursive: true });
  await mkdir(tmp, { recursive: true });
  await mkdir(path.join(home, 'user'), { recursive: true });
  await mkdir(path.join(home, 'config'), { recursive: true, mode: 0o700 });
  // The scripted models ask for Bash freely, so tests' users let callers pre-approve any tool; the policy on
  // allowed_tools has tests of its own (tests/security/delegate-permissions.test.ts), which set it themselves.
  const written = { delegateMaxRetries: 0, approvableTools: ['*'], ...settings };
  await writeFile(path.join(home, 'config', 'settings.json'), JSON.stringify(written, null, 2), { mode: 0o600 });
  return { home, project, tmp, cleanup };
}

/**
 * The environment our processes get in such a home: the fake OpenRouter, the key, the real claude, and
 * an empty HOME — a delegate's Bash sources ~/.bashrc, and the machine's own (pyenv's rehash lock, say)
 * must not decide whether a test passes.
 */
export function delegationEnv(home: string, baseUrl: string, tmp: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return testEnv(home, baseUrl, { HOME: path.join(home, 'user'), OPENROUTER_API_KEY: KEY, OPENROUTER_DELEGATE_CLAUDE: CLAUDE_CLI, TMPDIR: tmp, ...extra });
}

export interface WorldOptions {
  /** The temp home's name prefix. */
  prefix?: string;
  /** What the fake OpenRouter says of KEY (/v1/key). */
  balance?: Partial<FakeKey>;
  /** How the fake OpenRouter behaves (e.g. who may read a generation). */
  fake?: FakeOpenRouterOptions;
  /** More options for the scripted model (e.g. its prompt cache; the one key it answers, KEY unless said). */
  model?: ScriptedModelOptions;
}

/**
 * One home, one fake OpenRouter playing the model, the real `claude`: what every end-to-end world shares
 * (delegation, faults, the settings page). A variable given as undefined in `extraEnv` is left out.
 */
export class DelegationWorld {
  readonly fake: FakeOpenRouter;
  readonly model: ScriptedModel;
  home = '';
  project = '';
  env: NodeJS.ProcessEnv = {};
  locations!: Locations;
  protected readonly cleanups: Array<() => Promise<unknown>> = [];
  private readonly options: WorldOptions;

  constructor(options: WorldOptions = {}) {
    this.options = options;
    this.fake = new FakeOpenRouter(options.fake);
    this.model = new ScriptedModel(this.fake, { apiKey: KEY, ...options.model });
  }

  /** Starts the fake and makes a home whose settings.json holds `settings`. */
  async start(settings: Record<string, unknown> = {}, extraEnv: NodeJS.ProcessEnv = {}): Promise<void> {
    this.fake.addKey(KEY, this.options.balance ?? { limit: 100, limitRemaining: 90, usage: 10 });
    await this.fake.start();
    const { home, project, tmp, cleanup } = await makeDelegationHome(this.options.prefix ?? 'ord-deleg-', settings);
    this.home = home;
    this.project = project;
    this.env = delegationEnv(home, this.fake.baseUrl, tmp, extraEnv);
    for (const [name, value] of Object.entries(this.env)) if (value === undefined) delete this.env[name];
    this.locations = resolveLocations(this.env);
    this.cleanups.push(
      cleanup,
      () => this.fake.stop(),
      async () => this.model.stop(),
    );
  }

  /** Ends every job and the service, then removes the home. */
  async stop(): Promise<void> {
    await this.endService();
    while (this.cleanups.length) await this.cleanups.pop()?.();
  }

  /** Stops this home's service, killing its jobs (never another home's: nothing runs before start()). */
  protected async endService(): Promise<void> {
    if (this.env.OPENROUTER_DELEGATE_HOME) await runCli(['stop', '--kill-jobs'], this.env);
  }

  async bridge(extraEnv: NodeJS.ProcessEnv = {}): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BRIDGE],
      env: { ...this.env, ...extraEnv } as Record<string, string>,
      cwd: this.project,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'delegation-test', version: '1.0.0' });
    await client.connect(transport);
    this.cleanups.push(() => client.close());
    return client;
  }

  async serviceStatus(): Promise<{ pid: number }> {
    const result = await runCli(['status', '--json'], this.env);
    return (JSON.parse(result.stdout) as { service: { pid: number } }).service;
  }
}

/**
 * A tool call as a program makes it: with `detail: true`, so the record comes back as structuredContent (a model
 * reads the short text by default; tests/e2e/parent-view.test.ts checks that). Pass `detail: false` for the text alone.
 */
export async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer<T>> {
  const result = await client.callTool({ name, arguments: { detail: true, ...args } }, undefined, { timeout: 120_000 });
  const text = (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');
  return { isError: result.isError === true, text, structured: (result.structuredContent ?? {}) as T };
}

export async function callOk<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer<T>> {
  const answer = await call<T>(client, name, args);
  expect(answer.isError, answer.text).toBe(false);
  return answer;
}

export interface JobShape {
  id: string;
  sessionId: string;
  state: string;
  model: string;
  turn: number;
  pid: number | null;
  endReason: string | null;
  estimatedCostUsd: number;
  billedCostUsd: number | null;
  billing: string;
  toolCalls: number;
  usage: { inputTokens: number; outputTokens: number };
  generationIds: string[];
  maxCostUsd: number;
}

export interface ViewShape {
  job: JobShape;
  tail: Array<{ kind: string; tool?: string; text: string; isError?: boolean }>;
  files: { dir: string; stream: string; result: string };
  resultText?: string | null;
  stderrTail?: string;
}

/** Waits (through delegate_status) until the job has left queued/running. */
export async function waitForEnd(client: Client, jobId: string): Promise<ViewShape> {
  const { structured } = await callOk<ViewShape>(client, 'delegate_status', { job_id: jobId, wait_seconds: 90 });
  expect(['queued', 'running']).not.toContain(structured.job.state);
  return structured;
}

/** Processes whose command line is exactly these arguments (e.g. ['sleep', '317']). */
export async function processesRunning(argv: string[]): Promise<number[]> {
  const wanted = `${argv.join('\0')}\0`;
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const [cmdline, stat] = await Promise.all([
      readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => ''),
      readFile(`/proc/${entry}/stat`, 'utf8').catch(() => ''),
    ]);
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (cmdline === wanted && state !== 'Z') pids.push(Number(entry));
  }
  return pids;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie has ended; it only waits for its parent to notice.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
