/**
 * QUORUM_DUCKDB_THREADS and QUORUM_DUCKDB_MEMORY_LIMIT: the operator's cap on the process's DuckDB
 * instance (a run may otherwise take DuckDB's default, 80% of the machine's memory, beside a
 * running server). Isolated (vitest.config.ts): it sets process.env before the instance exists.
 * Bad values are refused at start, naming the variable: pipeline/env.test.ts, and the CLI below.
 */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { closeDuckdb, withConnection } from '../../pipeline/warehouse/duckdb.ts';
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

  it('a value the CLI cannot use is refused at its start, naming the variable, before anything is written', async () => {
    const cases = [
      ['QUORUM_DUCKDB_MEMORY_LIMIT', '4', /QUORUM_DUCKDB_MEMORY_LIMIT: expected a size with its unit/],
      ['QUORUM_DUCKDB_MEMORY_LIMIT', '80%', /QUORUM_DUCKDB_MEMORY_LIMIT: expected a size with its unit.*got "80%"/],
      ['QUORUM_DUCKDB_MEMORY_LIMIT', '0GB', /QUORUM_DUCKDB_MEMORY_LIMIT: a memory limit must be more than 0/],
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
