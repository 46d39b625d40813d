/**
 * Quorum's DuckDB sessions read the warehouse's times in UTC whatever the host's time zone
 * (README "The warehouse": timestamps are UTC; a plain `t::TIMESTAMPTZ` reads `t` in the
 * session's TimeZone). DuckDB's TimeZone starts as the process's TZ, and ICU reads it once per
 * process, so each zone is a child process of its own, started with TZ set as an operator's
 * laptop or server would have it.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/cli.ts';

/**
 * What the sessions of the pipeline's instance (pipeline/warehouse/duckdb.ts `withConnection`) and
 * of a fresh `openUtcInstance` (the API's snapshot reader and export engine) say of 14:30 UTC on
 * 2026-04-04, a naive warehouse TIMESTAMP, once cast to TIMESTAMPTZ: its zone, date, hour and text.
 */
const PROBE = `
import { closeDuckdb, openUtcInstance, withConnection } from ${JSON.stringify(pathToFileURL(join(REPO, 'pipeline', 'warehouse', 'duckdb.ts')).href)};
const sql = "SELECT current_setting('TimeZone') AS zone, CAST(CAST(t AS TIMESTAMPTZ) AS DATE)::VARCHAR AS day, " +
  "date_part('hour', CAST(t AS TIMESTAMPTZ))::INTEGER AS hour, strftime(CAST(t AS TIMESTAMPTZ), '%Y-%m-%d %H:%M %z') AS text, " +
  "epoch(CAST('2026-04-04 14:30:00' AS TIMESTAMPTZ))::INTEGER AS epoch_s FROM (SELECT TIMESTAMP '2026-04-04 14:30:00' AS t)";
const pipeline = await withConnection(async (c) => (await c.runAndReadAll(sql)).getRowObjectsJS()[0]);
const instance = await openUtcInstance();
const conn = await instance.connect();
const reader = (await conn.runAndReadAll(sql)).getRowObjectsJS()[0];
conn.closeSync();
instance.closeSync();
await closeDuckdb();
process.stdout.write(JSON.stringify({ pipeline, reader }));
`;

function sessionsIn(tz: string): unknown {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROBE], {
    cwd: REPO,
    env: { ...process.env, TZ: tz, LANG: 'tr_TR.UTF-8', LC_ALL: 'tr_TR.UTF-8' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe("Quorum's DuckDB sessions are in UTC whatever the host's time zone", () => {
  // 14:30 UTC on 2026-04-04 is 03:15 on the 5th in Chatham (+12:45: its DST, +13:45, ended at 14:00 UTC),
  // 20:15 in Kathmandu (+05:45) and 10:30 in New York (-04:00): a session in the host's zone gave
  // those days and hours, and read a time string without an offset as the host's local time.
  const utc = { zone: 'UTC', day: '2026-04-04', hour: 14, text: '2026-04-04 14:30 +00', epoch_s: 1_775_313_000 };
  for (const tz of ['Pacific/Chatham', 'Asia/Kathmandu', 'America/New_York']) {
    it(`TZ=${tz}`, () => {
      expect(sessionsIn(tz)).toEqual({ pipeline: utc, reader: utc });
    });
  }
});

describe('every DuckDB instance Quorum opens is opened by openUtcInstance', () => {
  /** The TypeScript files under `dir`, tests and node_modules aside. */
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = join(dir, e.name);
      if (e.isDirectory()) return e.name === 'node_modules' ? [] : sources(p);
      return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [p] : [];
    });
  it('the pipeline, the API, the benchmarks and the scripts create none of their own (review: bench/ ran the scoring, structure and scenario SQL in the host\'s zone)', () => {
    const own = ['pipeline', 'api', 'bench', 'scripts']
      .flatMap((d) => sources(join(REPO, d)))
      .filter((f) => /DuckDBInstance\s*\.\s*(create|fromCache)\s*\(|new\s+DuckDBInstance\s*\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(REPO, f));
    expect(own).toEqual(['pipeline/warehouse/duckdb.ts']);
  });
});
