import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'pipeline/**/*.test.ts', 'api/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // DuckDB and child processes: forks isolate native state per test file.
    pool: 'forks',
    maxWorkers: 2,
  },
});
