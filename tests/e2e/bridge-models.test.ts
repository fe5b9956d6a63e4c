/**
 * The whole chain as Claude Code runs it: an MCP SDK client spawns the built bridge over stdio;
 * the bridge starts the service; the service asks the fake OpenRouter.
 */
import { mkdir, readFile, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { ModelsReportSchema } from '../../src-main/contract/index.js';
import type { ModelsReport } from '../../src-main/contract/index.js';
import { BRIDGE, pidAlive, runCli } from '../support/built.js';
import { useE2eHomes } from '../support/e2e-homes.js';
import { readJsonFixture } from '../support/fake-openrouter.js';

interface RawModel {
  id: string;
  name: string;
  pricing: Record<string, unknown>;
  supported_parameters?: string[];
}
const fixtureToolModels = (readJsonFixture('models-2026-08.json') as { data: RawModel[] }).data.filter((m) => m.supported_parameters?.includes('tools'));

const { fake, newHome, connectBridge } = useE2eHomes();

async function callModels(client: Client, args: Record<string, unknown>): Promise<{ report: ModelsReport; text: string }> {
  const result = await client.callTool({ name: 'openrouter_models', arguments: { detail: true, ...args } });
  expect(result.isError ?? false).toBe(false);
  const text = (result.content as Array<{ type: string; text: string }>)[0]?.text ?? '';
  return { report: ModelsReportSchema.parse(result.structuredContent), text };
}

describe('openrouter_models through bridge → service → OpenRouter', () => {
  it('lists the seven tools, none with an output schema (Claude Code would show the model JSON), each with honest annotations', async () => {
    const { env } = await newHome();
    const { client } = await connectBridge(env);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual(
      ['openrouter_models', 'delegate_start', 'delegate_followup', 'delegate_status', 'delegate_result', 'delegate_cancel', 'delegate_list'].sort(),
    );
    for (const tool of tools) expect(tool.outputSchema, tool.name).toBeUndefined();
    for (const name of ['openrouter_models', 'delegate_status', 'delegate_result', 'delegate_list']) {
      expect(byName.get(name)?.annotations, name).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    }
    expect(byName.get('delegate_cancel')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('delegate_start')?.annotations).toMatchObject({ readOnlyHint: false });
    expect(byName.get('openrouter_models')?.description).toContain('ON EXPLICIT REQUEST ONLY');
    // The policy rides on the tool that starts spending (and on every request, in the server instructions); a turn
    // more says what it costs; the tools that only look at a job already started spend nothing (issue 23).
    expect(byName.get('delegate_start')?.description).toContain('ON EXPLICIT REQUEST ONLY');
    for (const name of ['delegate_start', 'delegate_followup']) expect(byName.get(name)?.description, name).toContain('real money');
  });

  it('counts the 347 tool-capable models of the fixture and says how many more exist beyond the limit', async () => {
    const { env } = await newHome();
    const { client } = await connectBridge(env);
    const { report, text } = await callModels(client, {});
    expect(report.totalToolModels).toBe(347);
    expect(report.matched).toBe(347);
    expect(report.models).toHaveLength(25);
    expect(text).toContain('322 more');
  });

  it('filters by words over id and name, and reports the fixture prices in $/M tokens', async () => {
    const { env } = await newHome();
    const { client } = await connectBridge(env);
    const { report, text } = await callModels(client, { filter: 'deepseek', limit: 500 });
    const expected = fixtureToolModels.filter((m) => `${m.id} ${m.name}`.toLowerCase().includes('deepseek'));
    expect(report.matched).toBe(expected.length);
    expect(report.models.map((m) => m.id).sort()).toEqual(expected.map((m) => m.id).sort());
    for (const row of report.models) {
      const raw = expected.find((m) => m.id === row.id);
      const prompt = Number(raw?.pricing.prompt ?? 0);
      expect(row.priceInputPerM).toBeCloseTo(prompt * 1e6, 6);
      expect(row.priceOutputPerM).toBeCloseTo(Number(raw?.pricing.completion ?? 0) * 1e6, 6);
    }
    const flash = report.models.find((m) => m.id === 'deepseek/deepseek-v4-flash-0731');
    expect(flash).toMatchObject({ priceInputPerM: 0.14, priceOutputPerM: 0.28, contextLength: 1310720, allowed: true });
    expect(text).toContain('deepseek/deepseek-v4-flash-0731');
  });

  it('honours limit and sort', async () => {
    const { env } = await newHome();
    const { client } = await connectBridge(env);
    const { report } = await callModels(client, { limit: 5, sort: 'context' });
    expect(report.models).toHaveLength(5);
    const contexts = report.models.map((m) => m.contextLength ?? 0);
    expect([...contexts].sort((a, b) => b - a)).toEqual(contexts);
    expect(contexts[0]).toBe(Math.max(...fixtureToolModels.map((m) => (m as unknown as { context_length: number }).context_length ?? 0)));
  });

  it("shows the policy and the delegate environment without any of the caller's Anthropic variables", async () => {
    const { env } = await newHome();
    const { client } = await connectBridge({ ...env, ANTHROPIC_API_KEY: 'sk-ant-parent-secret', CLAUDE_CODE_OAUTH_TOKEN: 'oauth-parent' });
    const { report, text } = await callModels(client, { limit: 1 });
    expect(report.policy).toMatchObject({ mode: 'ondemand', defaultModel: 'deepseek/deepseek-v4-flash-0731', delegateProfile: 'lean' });
    expect(text).toContain('delegate profile: lean, the default and the most a delegation may ask for (minimal < lean < full)');
    const envByName = new Map(report.environment.map((e) => [e.name, e]));
    // The service's metering gateway, not OpenRouter: a delegate never holds the key (SECURITY.md §2).
    expect(envByName.get('ANTHROPIC_BASE_URL')?.value).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(envByName.get('ANTHROPIC_AUTH_TOKEN')?.value).toBe("hidden (the job's own gateway token; the OpenRouter key stays in the service)");
    expect(envByName.get('ANTHROPIC_API_KEY')?.value).toBe('');
    expect(envByName.get('ANTHROPIC_AUTH_TOKEN')?.secret).toBe(true);
    expect(envByName.has('CLAUDE_CODE_OAUTH_TOKEN')).toBe(false);
    expect(text).not.toContain('sk-ant-parent-secret');
    expect(text).not.toContain('oauth-parent');
    expect(report.balance.keySource).toBe('none');
    expect(text).toContain('No OpenRouter key');
  });

  it('serves the cached model list, saying how old it is, when OpenRouter fails', async () => {
    const { env } = await newHome();
    const { client } = await connectBridge(env);
    await callModels(client, { limit: 1 });
    fake.failNext('/api/v1/models', { status: 503 });
    const { report, text } = await callModels(client, { limit: 1, refresh: true });
    expect(report.catalog.stale).toBe(true);
    expect(report.totalToolModels).toBe(347);
    expect(text).toMatch(/Could not refresh the model list.*; showing the copy fetched just now\./);
  });

  it('explains an OpenRouter outage when there is no cached list', async () => {
    const { env } = await newHome();
    const { client } = await connectBridge(env);
    fake.failNext('/api/v1/models', { status: 502 });
    const result = await client.callTool({ name: 'openrouter_models', arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/OpenRouter.*(502|server error)/i);
  });

  it('rejects out-of-range arguments with a clear error and keeps serving', async () => {
    const { env } = await newHome();
    const { client } = await connectBridge(env);
    const bad = await client.callTool({ name: 'openrouter_models', arguments: { limit: 0 } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toMatch(/limit/);
    const { report } = await callModels(client, { limit: 2 });
    expect(report.models).toHaveLength(2);
  });
});

describe('the bridge and the service', () => {
  it('starts the service when none runs, and two bridges started at once share one service', async () => {
    const { env } = await newHome();
    const [a, b] = await Promise.all([connectBridge(env), connectBridge(env)]);
    await Promise.all([a.client.listTools(), b.client.listTools()]);
    const status = async () => {
      const run = await runCli(['status', '--json'], env);
      expect(run.code).toBe(0);
      return (JSON.parse(run.stdout) as { service: { pid: number; clients: number } }).service;
    };
    expect(pidAlive((await status()).pid)).toBe(true);
    // Both bridges and the status command itself are connected to the one service. Polled: the bridge that
    // lost the race to start the service may still be closing its first connection.
    await expect.poll(async () => (await status()).clients, { timeout: 10_000, interval: 200 }).toBe(3);
  });

  it('exits cleanly when stdin closes', async () => {
    const { env } = await newHome();
    const transport = new StdioClientTransport({ command: process.execPath, args: [BRIDGE], env: env as Record<string, string>, stderr: 'pipe' });
    const client = new Client({ name: 'e2e-test', version: '1.0.0' });
    await client.connect(transport);
    const pid = transport.pid;
    expect(pid).not.toBeNull();
    await client.close();
    await expect.poll(() => pidAlive(pid ?? 0), { timeout: 5000 }).toBe(false);
  });

  it('keeps serving after the service restarts', async () => {
    const { env } = await newHome();
    const { client } = await connectBridge(env);
    await callModels(client, { limit: 1 });
    expect((await runCli(['stop'], env)).code).toBe(0);
    // The next call finds no service, starts a new one and answers.
    const { report } = await callModels(client, { limit: 1 });
    expect(report.models).toHaveLength(1);
  });

  it('keeps a private V8 code cache for its start-up, and shrugs off a corrupt one', async () => {
    const { home, env } = await newHome();
    const cacheDir = path.join(home, 'cache', 'v8');
    const first = await connectBridge(env);
    await first.client.listTools();
    // The cache is written to a temporary name and renamed: wait for the cache itself, not a write under way.
    const caches = async () => (await readdir(cacheDir).catch(() => [])).filter((entry) => entry.endsWith('.bin'));
    await expect.poll(caches, { timeout: 5000 }).toHaveLength(1);
    const [name] = await caches();
    const file = path.join(cacheDir, name ?? '');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await writeFile(file, 'not a code cache');
    const second = await connectBridge(env);
    expect((await second.client.listTools()).tools.map((t) => t.name)).toContain('openrouter_models');
    // The rejected cache is replaced by a good one.
    await expect.poll(async () => (await readFile(file)).length > 1000, { timeout: 5000 }).toBe(true);
  });

  it("lets old versions' caches go when it writes its own, and keeps recent ones", async () => {
    const { home, env } = await newHome();
    const cacheDir = path.join(home, 'cache', 'v8');
    await mkdir(cacheDir, { recursive: true, mode: 0o700 });
    const old = path.join(cacheDir, `bridge-${'a'.repeat(24)}.bin`);
    const recent = path.join(cacheDir, `bridge-${'b'.repeat(24)}.bin`);
    const notOurs = path.join(cacheDir, 'notes.bin');
    for (const file of [old, recent, notOurs]) await writeFile(file, 'an older version of the bridge');
    const longAgo = new Date(Date.now() - 30 * 24 * 60 * 60 * 1000);
    await utimes(old, longAgo, longAgo);
    await utimes(notOurs, longAgo, longAgo);
    const bridge = await connectBridge(env);
    await bridge.client.listTools();
    const names = async () => (await readdir(cacheDir)).filter((entry) => !entry.endsWith('.tmp')).sort();
    // Its own cache is written, and only then is the old one removed.
    await expect.poll(async () => (await names()).length === 3 && !(await names()).includes(path.basename(old)), { timeout: 5000 }).toBe(true);
    expect(await names()).toEqual(expect.arrayContaining([path.basename(recent), 'notes.bin']));
  });

  it('refuses to run inside a delegated session', async () => {
    const { env } = await newHome();
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      import('node:child_process').then(({ spawn }) => {
        const child = spawn(process.execPath, [BRIDGE], { env: { ...env, OPENROUTER_DELEGATE_DEPTH: '1' } });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stderr }));
        child.stdin.end();
      });
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('delegated session');
  });
});
