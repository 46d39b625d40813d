/**
 * Appends rows to a raw table, idempotently and atomically.
 *
 * Rows are staged in a temporary DuckDB table, deduplicated on the table's natural key (within the
 * batch, and against what is already stored), written to `part-<id>.parquet.tmp`, fsynced and
 * renamed into place. A process killed at any point leaves either the whole part or nothing
 * visible (readers only glob `*.parquet`), and re-sending the same rows writes nothing new.
 */
import { mkdirSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { commitTempFile } from '../fs/durable.ts';
import { join, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { rawPartitionDir, rawTableDir } from './layout.ts';
import { rawRelation } from './raw-views.ts';
import { sqlIdent, sqlPath } from './duckdb.ts';
import { RAW_TABLES, type RawTableName } from './tables.ts';
import { appendRow } from './values.ts';

export interface AppendResult {
  table: RawTableName;
  received: number;
  written: number;
  file: string | null;
}

/** A part written to its temp file, to be renamed into place with the other parts of a batch. */
export interface PendingPart {
  tmp: string;
  file: string;
}

/**
 * Puts a batch's parts in place, after every one of them was written: a batch that fails half-way
 * (a full disk on its fourth table) then leaves nothing visible instead of its first tables
 * (QA). Each rename is atomic; the renames need no space.
 */
export function commitParts(parts: readonly PendingPart[]): void {
  for (const p of parts) commitTempFile(p.tmp, p.file);
}

/** Removes the temp files of parts that will not be committed. */
export function dropParts(parts: readonly PendingPart[]): void {
  for (const p of parts) rmSync(p.tmp, { force: true });
}

/** How old an uncommitted part must be before a run removes it (see removeAbandonedParts). */
export const ABANDONED_PART_AGE_MS = 3_600_000;

/**
 * Removes the temp files of raw parts older than `maxAgeMs`: a process killed while writing (an
 * import, a run) leaves them, never read and never removed (QA). Imports write without the run
 * lock, so a younger temp file may belong to one in progress and is left. Returns the paths removed.
 */
export function removeAbandonedParts(root: string, now = Date.now(), maxAgeMs = ABANDONED_PART_AGE_MS): string[] {
  const raw = join(root, 'raw');
  if (!existsSync(raw)) return [];
  const stale = readdirSync(raw, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.parquet.tmp'))
    .map((f) => join(raw, f))
    .filter((f) => (statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? now) < now - maxAgeMs);
  for (const f of stale) rmSync(f, { force: true });
  return stale;
}

/**
 * Writes the rows of one raw table for one run. Returns how many were new.
 * `rows` are plain objects keyed by the table's column names (see tables.ts). `parts`: the part is
 * left in its temp file and added there, for commitParts with the other parts of a batch.
 */
export async function appendRaw(
  conn: DuckDBConnection,
  root: string,
  table: RawTableName,
  rows: readonly object[],
  partition: { runId: string; runDate: string },
  opts: { parts?: PendingPart[]; key?: readonly string[] } = {},
): Promise<AppendResult> {
  if (rows.length === 0) return { table, received: 0, written: 0, file: null };
  const { columns } = RAW_TABLES[table];
  const key = opts.key ?? RAW_TABLES[table].key;
  const stage = sqlIdent(`_stage_${table}`);
  const columnDefs = Object.entries(columns)
    .map(([c, t]) => `${sqlIdent(c)} ${t}`)
    .join(', ');
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${stage} (${columnDefs}, _ord BIGINT)`);
  const appender = await conn.createAppender(`_stage_${table}`, 'main', 'temp');
  try {
    rows.forEach((row, i) => appendRow(appender, { ...columns, _ord: 'BIGINT' }, { ...(row as Record<string, unknown>), _ord: i }));
    appender.flushSync();
  } finally {
    appender.closeSync();
  }

  const keyCols = key.map(sqlIdent).join(', ');
  const keyMatch = key.map((k) => `s.${sqlIdent(k)} IS NOT DISTINCT FROM e.${sqlIdent(k)}`).join(' AND ');
  const colList = Object.keys(columns).map(sqlIdent).join(', ');
  // First row of each key within the batch wins; keys already stored are skipped, and so are keys
  // this batch already wrote to the table in a part not yet in place (a second append of the same
  // table, as an import's question versions after its questions).
  const dir = rawTableDir(root, table) + sep;
  const pending = (opts.parts ?? []).filter((p) => p.file.startsWith(dir)).map((p) => p.tmp);
  const stored = pending.length
    ? `${rawRelation(root, table)} UNION ALL BY NAME ${rawRelation(root, table, { parts: { [table]: pending } })}`
    : rawRelation(root, table);
  const newRows =
    `SELECT ${colList} FROM (` +
    `SELECT * FROM ${stage} QUALIFY row_number() OVER (PARTITION BY ${keyCols} ORDER BY _ord) = 1) s ` +
    `WHERE NOT EXISTS (SELECT 1 FROM (${stored}) e WHERE ${keyMatch}) ORDER BY _ord`;
  const count = await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM (${newRows})`);
  const written = Number(count.getRowObjectsJS()[0]!.n);
  if (written === 0) {
    await conn.run(`DROP TABLE ${stage}`);
    return { table, received: rows.length, written: 0, file: null };
  }

  const partDir = rawPartitionDir(root, table, partition.runDate, partition.runId);
  mkdirSync(partDir, { recursive: true });
  const file = join(partDir, `part-${Date.now()}-${randomBytes(4).toString('hex')}.parquet`);
  const tmp = `${file}.tmp`;
  try {
    await conn.run(`COPY (${newRows}) TO ${sqlPath(tmp)} (FORMAT parquet, COMPRESSION zstd)`);
    if (opts.parts) opts.parts.push({ tmp, file });
    else commitTempFile(tmp, file);
  } catch (err) {
    if (existsSync(tmp)) rmSync(tmp, { force: true });
    throw err;
  } finally {
    await conn.run(`DROP TABLE IF EXISTS ${stage}`);
  }
  return { table, received: rows.length, written, file };
}
