import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/slow-first-sequencer.ts';

/**
 * Test files that run in a fresh process each (vitest's isolation): the pipeline's own processes
 * and runs (test/pipeline, test/forecast), the browser tests, and every file that changes the
 * process itself (process.env, module mocks, fake timers) or leaves it changed. Every other file
 * shares its worker's process with the files that ran before it (`isolate: false`, the "shared"
 * project below): their modules are loaded once per worker, not once per file, which took 0.7 s
 * of each of 170 files and left a worker idle while a new one started (test/api and test/scoring
 * alone: 265 s → 129 s here). A file in the shared project must close what it opens (servers,
 * DuckDB connections, timers) and leave process.env as it found it; one that cannot is listed here.
 */
const ISOLATED = [
  'test/pipeline/**/*.test.ts',
  'test/forecast/**/*.test.ts',
  'test/dashboard/**/*.test.ts',
  'test/claims/killed-import.test.ts',
  'test/warehouse/duckdb-settings.test.ts',
  'test/evidence/local.test.ts',
  'test/scenarios/hand-computed.test.ts',
  'test/scenarios/joint-properties.test.ts',
  'test/structure/hand-computed.test.ts',
  'test/structure/run-preflight.test.ts',
];
const ALL = ['test/**/*.test.ts', 'pipeline/**/*.test.ts', 'api/**/*.test.ts'];

export default defineConfig({
  test: {
    // Every test file, the browser tests (test/dashboard/*.browser.test.ts) included: they run
    // beside the others on the two workers, started first (the slowest file, test/slow-first-
    // sequencer.ts). They log each dashboard page's first render; those figures mean something
    // only when the browser tests run alone (`npx vitest run test/dashboard/`, README "The
    // dashboard"): beside a busy test file the same page measured up to 2 s instead of 0.8 s.
    // They used to run after the rest on their own, which kept one of the two cores idle for their
    // 80-100 s on every `npm test`.
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
    projects: [
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
      { extends: true, test: { name: 'shared', include: ALL, exclude: ['**/node_modules/**', ...ISOLATED], isolate: false } },
    ],
  },
});
