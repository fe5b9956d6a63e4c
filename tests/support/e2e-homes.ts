/**
 * The set-up most end-to-end files share: one fake OpenRouter for the file, and a fresh home per test
 * whose service is stopped and whose folder is removed afterwards.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { assertBuilt, runCli, testEnv } from './built.js';
import { FakeOpenRouter } from './fake-openrouter.js';
import { makeTempHome } from './temp-home.js';

export interface E2eHomes {
  fake: FakeOpenRouter;
  /** A new OPENROUTER_DELEGATE_HOME and the environment that points our processes at it and at the fake. */
  newHome(extra?: NodeJS.ProcessEnv): Promise<{ home: string; env: NodeJS.ProcessEnv }>;
  /** Runs after this test, before its home is removed (LIFO with the others). */
  onCleanup(cleanup: () => Promise<unknown>): void;
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
