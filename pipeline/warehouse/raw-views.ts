/**
 * Exposes every raw table as a `raw_<table>` view over its Parquet parts, so the sql/ files read
 * the lake exactly as an analyst's engine would. A table with no parts yet is an empty, typed view.
 */
import { existsSync, readdirSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { rawGlob, rawTableDir } from './layout.ts';
import { sqlIdent, sqlPath } from './duckdb.ts';
import { RAW_TABLES, type RawTableName } from './tables.ts';

/** True when at least one committed Parquet part exists below `dir`. */
function hasParquet(dir: string): boolean {
  if (!existsSync(dir)) return false;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && hasParquet(`${dir}/${entry.name}`)) return true;
    if (entry.isFile() && entry.name.endsWith('.parquet')) return true;
  }
  return false;
}

/** The SELECT list that casts a raw table's columns to their declared types. */
export function typedColumns(table: RawTableName, fromNulls = false): string {
  return Object.entries(RAW_TABLES[table].columns)
    .map(([col, type]) => `CAST(${fromNulls ? 'NULL' : sqlIdent(col)} AS ${type}) AS ${sqlIdent(col)}`)
    .join(', ');
}

/** The SQL relation for one raw table: its Parquet parts, or an empty typed relation. */
export function rawRelation(root: string, table: RawTableName): string {
  if (!hasParquet(rawTableDir(root, table))) {
    return `SELECT ${typedColumns(table, true)} WHERE false`;
  }
  // The partition directories are for other engines' pruning; here every column comes from the
  // file itself (a Hive partition value would otherwise override a file column of the same name).
  const source = `read_parquet(${sqlPath(rawGlob(root, table))}, hive_partitioning = false, union_by_name = true)`;
  // UNION ALL BY NAME with an empty typed relation: a column added to the schema after older
  // parts were written reads as NULL from them instead of failing the whole view.
  return `SELECT ${typedColumns(table)} FROM (SELECT * FROM ${source} UNION ALL BY NAME SELECT ${typedColumns(table, true)} WHERE false)`;
}

/** Creates (or replaces) `raw_<table>` views for every raw table on this connection. */
export async function createRawViews(conn: DuckDBConnection, root: string): Promise<void> {
  for (const table of Object.keys(RAW_TABLES) as RawTableName[]) {
    await conn.run(`CREATE OR REPLACE TEMP VIEW ${sqlIdent(`raw_${table}`)} AS ${rawRelation(root, table)}`);
  }
}
