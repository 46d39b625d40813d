import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/slow-first-sequencer.ts';

/** The browser tests: they measure each dashboard page's first render (issue 16). */
const BROWSER_TESTS = ['test/**/*.browser.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // DuckDB and child processes: forks isolate native state per test file.
    pool: 'forks',
    // The slowest files start first, so neither worker is left with a long one at the end.
    sequence: { sequencer: SlowFirstSequencer },
    // Tests never reach outside hosts: venues off, no FRED key, unless a test points them at its
    // own loopback replay server.
    env: { QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '' },
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts', 'pipeline/**/*.test.ts', 'api/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...BROWSER_TESTS],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // After the rest, on their own: a first render measured while another test file keeps
        // both cores busy measures that file, not the page (it read 0.8 s alone and up to 2 s
        // beside the pipeline's crash tests on the same two cores).
        extends: true,
        test: {
          name: 'browser',
          include: BROWSER_TESTS,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
