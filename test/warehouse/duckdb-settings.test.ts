/**
 * QUORUM_DUCKDB_THREADS and QUORUM_DUCKDB_MEMORY_LIMIT: the operator's cap on the process's DuckDB
 * instance (a run may otherwise take DuckDB's default, 80% of the machine's memory, beside a
 * running server). Isolated (vitest.config.ts): it sets process.env before the instance exists.
 * Bad values are refused at start, naming the variable: pipeline/env.test.ts, and the CLI below.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closeDuckdb, externalFileCacheBytes, sqlPath, withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { quorumAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-duckdb-settings-');
afterAll(async () => {
  await closeDuckdb();
  tmp.cleanup();
});

describe('the DuckDB instance settings', () => {
  it('are the ones the operator set (threads, memory limit with its unit)', async () => {
    process.env.QUORUM_DUCKDB_THREADS = '1';
    process.env.QUORUM_DUCKDB_MEMORY_LIMIT = ' 1.5 GiB ';
    const got = await withConnection(async (c) =>
      (await c.runAndReadAll("SELECT current_setting('threads')::VARCHAR AS threads, current_setting('memory_limit')::VARCHAR AS memory_limit")).getRowObjectsJS()[0],
    );
    expect(got).toEqual({ threads: '1', memory_limit: '1.5 GiB' });
  });

  // `quorum start` keeps this one instance for months: every run reads the raw parts and the
  // snapshots the runs before it wrote, each a new file. DuckDB's external file cache kept blocks of
  // every Parquet file the instance ever read (outside soak: the server's RSS 305 -> 464 MB over 21
  // scheduled runs, the JS heap flat near 100 MB), evicted only under the memory limit, by default
  // 80% of the machine's memory. The files stay in the OS page cache.
  it('keeps no blocks of the Parquet files it has read (no external file cache)', async () => {
    const files = Array.from({ length: 12 }, (_, i) => join(tmp.dir, `part-${i}.parquet`));
    const cached = await withConnection(async (c) => {
      for (const [i, file] of files.entries()) {
        await c.run(`COPY (SELECT range + ${i} AS n, md5(range::VARCHAR) AS s FROM range(20000)) TO ${sqlPath(file)} (FORMAT parquet)`);
      }
      for (const file of files) await c.run(`SELECT sum(n), max(s) FROM read_parquet(${sqlPath(file)})`);
      return externalFileCacheBytes(c);
    });
    expect(cached).toBe(0);
  });

  it('a value the CLI cannot use is refused at its start, naming the variable, before anything is written', async () => {
    const cases = [
      ['QUORUM_DUCKDB_MEMORY_LIMIT', '4', /QUORUM_DUCKDB_MEMORY_LIMIT: expected a size with its unit/],
      ['QUORUM_DUCKDB_MEMORY_LIMIT', '80%', /QUORUM_DUCKDB_MEMORY_LIMIT: expected a size with its unit.*got "80%"/],
      ['QUORUM_DUCKDB_MEMORY_LIMIT', '0GB', /QUORUM_DUCKDB_MEMORY_LIMIT: a memory limit must be more than 0/],
      // DuckDB's "Memory value out of range" would come only when the instance is created
      ['QUORUM_DUCKDB_MEMORY_LIMIT', '99999999999999999999GB', /QUORUM_DUCKDB_MEMORY_LIMIT: a memory limit must be less than 8 EiB/],
      ['QUORUM_DUCKDB_MEMORY_LIMIT', '8388608TiB', /QUORUM_DUCKDB_MEMORY_LIMIT: a memory limit must be less than 8 EiB/],
      // and below a few KiB DuckDB fails as the command opens its first connection (outside test:
      // `import` with 1KB wrote FORMAT, then "Out of Memory Error: failed to allocate data of size 32.0 KiB")
      ['QUORUM_DUCKDB_MEMORY_LIMIT', '1KB', /QUORUM_DUCKDB_MEMORY_LIMIT: a memory limit must be at least 1MB.*got "1KB"/],
      ['QUORUM_DUCKDB_MEMORY_LIMIT', '0.5MiB', /QUORUM_DUCKDB_MEMORY_LIMIT: a memory limit must be at least 1MB/],
      ['QUORUM_DUCKDB_THREADS', '0', /QUORUM_DUCKDB_THREADS/],
    ] as const;
    const runs = await Promise.all(cases.map(([name, value]) => quorumAsync(['import', 'forecastbench', tmp.dir], { QUORUM_DATA_DIR: `${tmp.dir}/data`, [name]: value })));
    for (const [i, [name, value, why]] of cases.entries()) {
      expect(runs[i]!.status, `${name}=${value}`).toBe(1);
      expect(runs[i]!.stderr).toMatch(why);
    }
    expect(existsSync(`${tmp.dir}/data`)).toBe(false);
  });
});
