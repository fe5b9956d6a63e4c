import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * Two projects (docs/ARCHITECTURE.md §8):
 * - unit: pure code and in-process servers. No dist/, no D-Bus or keychain, no `claude` run, no browser;
 *   the inner loop, seconds (`npm run test:unit`).
 * - integration: everything else — the built bundles, the real keychain, the real Claude Code CLI,
 *   Chromium, fault and fuzz suites (`npm run test:integration`, inside scripts/with-keyring.sh).
 * `npm test` runs both.
 */
const UNIT = [
  'tests/bridge/**/*.test.ts',
  'tests/cli/**/*.test.ts',
  'tests/common/**/*.test.ts',
  'tests/contract/**/*.test.ts',
  'tests/core/catalog/**/*.test.ts',
  'tests/core/fs/**/*.test.ts',
  'tests/core/gateway/**/*.test.ts',
  'tests/core/jobs/**/*.test.ts',
  'tests/core/verify/**/*.test.ts',
  'tests/core/layers.test.ts',
  'tests/core/openrouter/**/*.test.ts',
  'tests/core/secrets/redact.test.ts',
  'tests/core/secrets/secret-cache.test.ts',
  'tests/core/service/**/*.test.ts',
  'tests/core/settings/**/*.test.ts',
  'tests/core/setup/claude-registration.test.ts',
  'tests/core/setup/doctor.test.ts',
  'tests/core/setup/present.test.ts',
  'tests/electron/ipc-main.test.ts',
  'tests/electron/menu-template.test.ts',
  'tests/electron/page-protocol.test.ts',
  'tests/electron/present/**/*.test.ts',
  'tests/host/**/*.test.ts',
  'tests/ipc/**/*.test.ts',
  'tests/platform/**/*.test.ts',
  'tests/renderer/format.test.ts',
  'tests/renderer/saved-verify.test.ts',
  'tests/renderer/scoreboard.test.ts',
  'tests/renderer/verify.test.ts',
  'tests/resources/**/*.test.ts',
  'tests/support/prompt-cache.test.ts',
];

/**
 * What `npm test` (scripts/test.mjs) asked on the IPC channel it opens, and whether this process listens to it yet. On
 * the global object: Vite loads this file more than once (the root and each project), each load with its own module.
 */
const stop = ((globalThis as Record<symbol, unknown>)[Symbol.for('openrouter-delegate.tests.stop')] ??= { asked: false, listening: false }) as {
  asked: boolean;
  listening: boolean;
};

/**
 * The unit files first, then the rest, each as Vitest would order them (the longest first). The unit tests mostly wait
 * on real git, processes and sockets, so `npm test` runs the static checks beside them (scripts/test.mjs); and a
 * worker freed by the last unit file takes an integration file at once, with no wait between the two projects.
 * A stop asked before the run began (a check can fail in a second, before Vitest starts its files) is made here, where
 * the run can take it: Vitest clears a cancel that comes before its run.
 */
class UnitFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    if (stop.asked) void this.ctx.cancelCurrentRun('test-failure');
    const sorted = await super.sort(files);
    return [...sorted.filter((file) => file.project.name === 'unit'), ...sorted.filter((file) => file.project.name !== 'unit')];
  }
}

/**
 * On "stop", the run is cancelled as Vitest's own bail cancels it: files not started are skipped; those running end as
 * they would, their hooks included. Every project's server calls this hook; one listener is enough. The channel keeps
 * nothing alive.
 */
const stopWhenAsked: Plugin = {
  name: 'openrouter-delegate:stop-when-asked',
  configureVitest({ vitest }) {
    if (!process.channel || stop.listening) return;
    stop.listening = true;
    process.channel.unref();
    process.on('message', (message) => {
      if (message !== 'stop') return;
      stop.asked = true;
      void vitest.cancelCurrentRun('test-failure');
    });
  },
};

export default defineConfig({
  plugins: [stopWhenAsked],
  test: {
    // Real processes, sockets and a real keychain: give them room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    restoreMocks: true,
    reporters: ['default', './tests/support/summary-reporter.ts'],
    sequence: { sequencer: UnitFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          // Unit files share their worker's module cache: a quarter of the loop was importing the same modules
          // again for every file. Mocks are restored after each test (restoreMocks), and no unit test keeps state in
          // a module; the integration project keeps each file apart.
          isolate: false,
          // A unit test that reaches for the keychain fails here at once instead of passing by luck on a desktop.
          env: { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/unit-tests-use-no-keychain' },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['tests/**/*.test.ts'],
          exclude: UNIT,
          setupFiles: ['tests/support/keyring-guard.ts'],
          // These files too share their worker's modules: each file in a fresh process cost some 0.5 s to start and
          // 0.5 s to import the same support modules again, about 25 s of an `npm test`. What a file starts (services,
          // browsers, homes) it stops itself; no file mocks a module (vi.spyOn on an object instead), since a module
          // mock would not reach code another file has already loaded.
          isolate: false,
          // Pages, services and real CLIs answer in well under a second on an idle machine, in seconds on a loaded one:
          // a poll gives up after 10 s, not 1 (it returns as soon as it holds; a CI run failed on a page's first load).
          expect: { poll: { timeout: 10_000 } },
        },
      },
    ],
  },
});
