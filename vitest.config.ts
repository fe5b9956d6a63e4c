import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // Real processes, sockets and a real keychain: give them room, and keep files apart.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
    restoreMocks: true,
    reporters: ['default', './tests/support/summary-reporter.ts'],
  },
});
