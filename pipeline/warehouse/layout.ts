/**
 * The warehouse's directory layout (DESIGN §4):
 *   raw/<table>/run_date=YYYY-MM-DD/run_id=<id>/part-*.parquet   append-only raw tables
 *   snapshots/<run_id>/<table>.parquet + manifest.json           derived tables of one run
 *   CURRENT                                                      id of the published snapshot
 *   run.lock                                                     held by the one running pipeline
 *   import.lock                                                  held by the one running import
 */
import { join } from 'node:path';
import type { RawTableName } from './tables.ts';

export const RUN_ID_PATTERN = /^r\d{8}T\d{6}Z-[a-z0-9]{6,}$/;

export function rawTableDir(root: string, table: RawTableName): string {
  return join(root, 'raw', table);
}

export function rawPartitionDir(root: string, table: RawTableName, runDate: string, runId: string): string {
  return join(rawTableDir(root, table), `run_date=${runDate}`, `run_id=${runId}`);
}

/** Glob over every committed part of a raw table (in-progress `*.parquet.tmp` files never match). */
export function rawGlob(root: string, table: RawTableName): string {
  return join(rawTableDir(root, table), '**', '*.parquet');
}

export function snapshotsDir(root: string): string {
  return join(root, 'snapshots');
}

export function snapshotDir(root: string, runId: string): string {
  return join(snapshotsDir(root), runId);
}

export function currentFile(root: string): string {
  return join(root, 'CURRENT');
}

export function lockFile(root: string): string {
  return join(root, 'run.lock');
}

/** The API server's lock: one server per data directory (`quorum serve`, `quorum start`). */
export function serverLockFile(root: string): string {
  return join(root, 'server.lock');
}

/** The imports' lock: one `quorum import` (or first-start import) at a time per data directory. */
export function importLockFile(root: string): string {
  return join(root, 'import.lock');
}

/**
 * A new run id: `r<as-of, compact UTC>-<made><random>`, sortable by as-of time and, among runs of
 * one as-of time, by when each was made: `made` is the creation time in milliseconds, base 36,
 * 8 digits (zero-padded: lexical order is time order until 2059), then 4 random base-36 digits.
 * The scoring breaks a tie on created_at by the greater run id (sql/README.md), so a run dated
 * like an earlier one (`quorum run --as-of T` again, after a fix) is the one that counts. QA: the
 * suffix was random alone, and the re-run that saw newer prices lost to the first half the time.
 */
export function newRunId(asOf: Date, madeAt: number = Date.now()): string {
  const compact = asOf.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const made = Math.max(0, Math.floor(madeAt)).toString(36).padStart(8, '0');
  const random = Math.random().toString(36).slice(2, 6).padEnd(4, '0');
  return `r${compact}-${made}${random}`;
}

/** The Hive partition date of a run: the UTC date of its as-of time. */
export function runDate(asOf: Date): string {
  return asOf.toISOString().slice(0, 10);
}
