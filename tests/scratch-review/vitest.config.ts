import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { include: ['tests/scratch-review/**/*.test.ts'], testTimeout: 120_000, pool: 'forks' } });
