import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/slow-first-sequencer.ts';

export default defineConfig({
  test: {
    // Every test file, the browser tests (test/dashboard/*.browser.test.ts) included: they run
    // beside the others on the two workers, started first (the slowest file, test/slow-first-
    // sequencer.ts). They log each dashboard page's first render; those figures mean something
    // only when the browser tests run alone (`npx vitest run test/dashboard/`, README "The
    // dashboard"): beside a busy test file the same page measured up to 2 s instead of 0.8 s.
    // They used to run after the rest on their own, which kept one of the two cores idle for their
    // 80-100 s on every `npm test`.
    include: ['test/**/*.test.ts', 'pipeline/**/*.test.ts', 'api/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
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
