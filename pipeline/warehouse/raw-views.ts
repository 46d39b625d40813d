/**
 * Exposes every raw table as a `raw_<table>` view over its Parquet parts, so the sql/ files read
 * the lake exactly as an analyst's engine would. A table with no parts yet is an empty, typed view.
 */
import { existsSync, readdirSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { rawGlob, rawTableDir } from './layout.ts';
import { sqlIdent, sqlPath } from './duckdb.ts';
import { RAW_TABLES, type RawTableName } from './tables.ts';

/**
 * The committed Parquet parts below `dir` (a part being written ends in `.tmp`), in path order;
 * the walk stops once `limit` are found (1: is there any part at all?).
 */
function parquetParts(dir: string, limit = Infinity): string[] {
  const parts: string[] = [];
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (parts.length >= limit) return;
      const path = `${d}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.parquet')) parts.push(path);
    }
  };
  walk(dir);
  return parts.sort();
}

export interface RawViewOptions {
  /**
   * Read the parts present now, not every part present when a query runs: a view over a glob
   * sees a part that an import (which does not take the run lock) commits half-way through a
   * derive, so two tables of one snapshot could be computed from different raw data. Scoring
   * pins its views; the stages that read back what they just wrote do not.
   */
  pinned?: boolean;
  /**
   * These files (absolute paths) and no other for the named tables: a view of the raw parts a
   * snapshot was derived from (its manifest's `raw_forecast_parts`), whatever was written since.
   */
  parts?: Partial<Record<RawTableName, readonly string[]>>;
}

/** The Parquet parts of raw `table` present now (absolute paths, sorted). */
export function rawParts(root: string, table: RawTableName): string[] {
  return parquetParts(rawTableDir(root, table));
}

/** The SELECT list that casts a raw table's columns to their declared types. */
export function typedColumns(table: RawTableName, fromNulls = false): string {
  return Object.entries(RAW_TABLES[table].columns)
    .map(([col, type]) => `CAST(${fromNulls ? 'NULL' : sqlIdent(col)} AS ${type}) AS ${sqlIdent(col)}`)
    .join(', ');
}

/** The SQL relation for one raw table: its Parquet parts, or an empty typed relation. */
export function rawRelation(root: string, table: RawTableName, opts: RawViewOptions = {}): string {
  // given parts: those; pinned: every part, listed; else one part is enough to know the glob matches
  const given = opts.parts?.[table];
  const listed = given !== undefined || opts.pinned === true;
  const parts = given ?? parquetParts(rawTableDir(root, table), opts.pinned ? Infinity : 1);
  if (parts.length === 0) return `SELECT ${typedColumns(table, true)} WHERE false`;
  const files = listed ? `[${parts.map(sqlPath).join(', ')}]` : sqlPath(rawGlob(root, table));
  // The partition directories are for other engines' pruning; here every column comes from the
  // file itself (a Hive partition value would otherwise override a file column of the same name).
  const source = `read_parquet(${files}, hive_partitioning = false, union_by_name = true)`;
  // UNION ALL BY NAME with an empty typed relation: a column added to the schema after older
  // parts were written reads as NULL from them instead of failing the whole view.
  return `SELECT ${typedColumns(table)} FROM (SELECT * FROM ${source} UNION ALL BY NAME SELECT ${typedColumns(table, true)} WHERE false)`;
}

/** Creates (or replaces) `raw_<table>` views for every raw table on this connection. */
export async function createRawViews(conn: DuckDBConnection, root: string, opts: RawViewOptions = {}): Promise<void> {
  for (const table of Object.keys(RAW_TABLES) as RawTableName[]) {
    await conn.run(`CREATE OR REPLACE TEMP VIEW ${sqlIdent(`raw_${table}`)} AS ${rawRelation(root, table, opts)}`);
  }
}
