/** Shared by the forecast-stage tests: a warehouse with the sample imported once, copied per test. */
import { cpSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { DuckDBInstance } from '@duckdb/node-api';
import { duckdb } from '../../pipeline/warehouse/duckdb.ts';
import { rawGlob } from '../../pipeline/warehouse/layout.ts';
import type { RawTableName } from '../../pipeline/warehouse/tables.ts';

/**
 * Creates the process's DuckDB instance (withConnection's) with one thread; call it first in
 * beforeAll, before the import. The runs' derives are small statements on the sample, where a
 * second thread only adds scheduling on a loaded 2-core machine; nothing the forecast tests check
 * depends on the thread count.
 */
export async function oneDuckdbThread(): Promise<void> {
  await duckdb({ threads: 1 });
}

/** The same for a child process (`quorum run`, `quorum start`): its environment's setting. */
export const ONE_DUCKDB_THREAD = { QUORUM_DUCKDB_THREADS: '1' } as const;

/** Copies a prepared warehouse into a fresh directory. */
export function copyWarehouse(from: string, root: string, name: string): string {
  const to = join(root, name);
  cpSync(from, to, { recursive: true });
  return to;
}

export function scratch(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Rows of `SELECT ... FROM t` where `t` is one raw table of `root` (no parts: []). */
export async function rawQuery(root: string, table: RawTableName, select: string): Promise<Record<string, any>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const r = await conn.runAndReadAll(
      `WITH t AS (SELECT * FROM read_parquet($1, hive_partitioning = false, union_by_name = true)) ${select}`,
      [rawGlob(root, table)],
    );
    return r.getRowObjectsJS().map((row) =>
      Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])),
    );
  } catch (err) {
    if (/No files found/i.test((err as Error).message)) return [];
    throw err;
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}
