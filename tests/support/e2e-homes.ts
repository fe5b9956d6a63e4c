/**
 * The set-up most end-to-end files share: one fake OpenRouter for the file, and a fresh home per test
 * whose service is stopped and whose folder is removed afterwards.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { BRIDGE, assertBuilt, runCli, testEnv } from './built.js';
import { FakeOpenRouter } from './fake-openrouter.js';
import { makeTempHome } from './temp-home.js';

export interface E2eHomes {
  fake: FakeOpenRouter;
  /** A new OPENROUTER_DELEGATE_HOME and the environment that points our processes at it and at the fake. */
  newHome(extra?: NodeJS.ProcessEnv): Promise<{ home: string; env: NodeJS.ProcessEnv }>;
  /** Runs after this test, before its home is removed (LIFO with the others). */
  onCleanup(cleanup: () => Promise<unknown>): void;
  /** Starts a bridge as Claude Code does, connected once it is initialised; closed after the test. */
  connectBridge(env: NodeJS.ProcessEnv, bridge?: string): Promise<{ client: Client; stderr: () => string }>;
}

export function useE2eHomes(): E2eHomes {
  const fake = new FakeOpenRouter();
  const cleanups: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    assertBuilt();
    await fake.start();
  });
  afterAll(() => fake.stop());
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });
  return {
    fake,
    onCleanup: (cleanup) => cleanups.push(cleanup),
    async connectBridge(env, bridge = BRIDGE) {
      const transport = new StdioClientTransport({ command: process.execPath, args: [bridge], env: env as Record<string, string>, stderr: 'pipe' });
      let stderr = '';
      transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const client = new Client({ name: 'e2e-test', version: '1.0.0' });
      await client.connect(transport);
      cleanups.push(() => client.close());
      return { client, stderr: () => stderr };
    },
    async newHome(extra = {}) {
      const { home, cleanup } = await makeTempHome();
      const env = testEnv(home, fake.baseUrl, extra);
      cleanups.push(async () => {
        await runCli(['stop'], env);
        await cleanup();
      });
      return { home, env };
    },
  };
}
