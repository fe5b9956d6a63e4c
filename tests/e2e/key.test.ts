/**
 * The key as a user handles it: stored through the CLI in the real OS keychain (with and without a
 * running service), overridden by OPENROUTER_API_KEY, and never written anywhere else.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ModelsReportSchema } from '../../src-main/contract/index.js';
import { BRIDGE, assertBuilt, runCli, testEnv } from '../support/built.js';
import type { RunResult } from '../support/built.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { filesContaining, makeTempHome } from '../support/temp-home.js';

const KEY = `sk-or-v1-${'a1b2c3d4'.repeat(8)}`;
const ENV_KEY = `sk-or-v1-${'e5f6a7b8'.repeat(8)}`;
const REFUSED_KEY = `sk-or-v1-${'0bad0bad'.repeat(8)}`;

const fake = new FakeOpenRouter();
beforeAll(async () => {
  assertBuilt();
  await fake.start();
  fake.addKey(KEY, { limit: 10, limitRemaining: 7.5, usage: 2.5, usageDaily: 0.25 });
  fake.addKey(ENV_KEY, { limit: 1, limitRemaining: 0.82, usage: 0.18 });
});
afterAll(() => fake.stop());

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

const outputs: RunResult[] = [];
async function cli(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<RunResult> {
  const result = await runCli(args, env, input);
  outputs.push(result);
  return result;
}

async function newHome(): Promise<{ home: string; env: NodeJS.ProcessEnv }> {
  const { home, cleanup } = await makeTempHome();
  const env = testEnv(home, fake.baseUrl);
  cleanups.push(async () => {
    await runCli(['stop'], env);
    await runCli(['key', 'remove'], env);
    await cleanup();
  });
  return { home, env };
}

async function bridgeReport(env: NodeJS.ProcessEnv) {
  const client = new Client({ name: 'key-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BRIDGE], env: env as Record<string, string>, stderr: 'pipe' }));
  try {
    const result = await client.callTool({ name: 'openrouter_models', arguments: { limit: 3, refresh: true, detail: true } });
    const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';
    return { report: ModelsReportSchema.parse(result.structuredContent), text };
  } finally {
    await client.close();
  }
}

describe('the OpenRouter key', () => {
  it('round-trips through the real keychain without a service, and the balance names the source', async () => {
    const { home, env } = await newHome();
    const set = await cli(['key', 'set'], env, KEY);
    expect(set.code).toBe(0);
    expect(set.stderr).toContain('stored in the OS keychain');
    const status = await cli(['key', 'status', '--json'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ apiKey: { present: true, source: 'keychain' }, keychain: { available: true } });

    const { report, text } = await bridgeReport(env);
    expect(report.balance.keySource).toBe('keychain');
    expect(report.balance.key).toMatchObject({ limitUsd: 10, remainingUsd: 7.5, usageDailyUsd: 0.25 });
    expect(text).toContain('key from OS keychain');
    expect(text).toContain('$7.50 remaining');
    // OpenRouter saw the key as a bearer token: that is where it belongs.
    expect(fake.requestsTo('/api/v1/key').some((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);

    expect(await filesContaining(home, KEY)).toEqual([]);
    expect(text).not.toContain(KEY);
    expect(JSON.stringify(report)).not.toContain(KEY);
  });

  it('is stored through the running service too', async () => {
    const { home, env } = await newHome();
    await bridgeReport(env); // starts the service
    const set = await cli(['key', 'set'], env, KEY);
    expect(set.code).toBe(0);
    const status = await cli(['status', '--json'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, secrets: { apiKey: { present: true, source: 'keychain' } } });
    const { report } = await bridgeReport(env);
    expect(report.balance.key?.remainingUsd).toBe(7.5);
    expect(await filesContaining(home, KEY)).toEqual([]);
  });

  it('is overridden by OPENROUTER_API_KEY, and the output says so', async () => {
    const { home, env } = await newHome();
    expect((await cli(['key', 'set'], env, KEY)).code).toBe(0);
    const overridden = { ...env, OPENROUTER_API_KEY: ENV_KEY };
    const status = await cli(['key', 'status'], overridden);
    expect(status.stdout).toContain('from OPENROUTER_API_KEY');
    const { report, text } = await bridgeReport(overridden);
    expect(report.balance.keySource).toBe('environment');
    expect(report.balance.key?.remainingUsd).toBe(0.82);
    expect(text).toContain('key from OPENROUTER_API_KEY');
    expect(await filesContaining(home, ENV_KEY)).toEqual([]);
    expect(text).not.toContain(ENV_KEY);
  });

  it('refuses a key OpenRouter rejects, and stores nothing', async () => {
    const { env } = await newHome();
    const set = await cli(['key', 'set'], env, REFUSED_KEY);
    expect(set.code).toBe(1);
    expect(set.stderr).toContain('OpenRouter rejected the key (401)');
    const status = await cli(['key', 'status', '--json'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ apiKey: { present: false, source: 'none' } });
  });

  it('never appears in any output of the commands above', () => {
    expect(outputs.length).toBeGreaterThan(5);
    for (const { stdout, stderr } of outputs) {
      for (const secret of [KEY, ENV_KEY, REFUSED_KEY]) {
        expect(stdout).not.toContain(secret);
        expect(stderr).not.toContain(secret);
      }
    }
  });
});
