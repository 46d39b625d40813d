import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/slow-first-sequencer.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'pipeline/**/*.test.ts', 'api/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // DuckDB and child processes: forks isolate native state per test file.
    pool: 'forks',
    maxWorkers: 2,
    // The slowest files start first, so neither worker is left with a long one at the end.
    sequence: { sequencer: SlowFirstSequencer },
    // Tests never reach outside hosts: venues off, no FRED key, unless a test points them at its
    // own loopback replay server.
    env: { QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '' },
  },
});
