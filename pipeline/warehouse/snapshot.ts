/**
 * Snapshots: the derived tables of one run, published atomically.
 *
 * A run builds `snapshots/<run_id>.tmp-<pid>/`, fsyncs every file, renames the directory to
 * `snapshots/<run_id>/`, then replaces `CURRENT` by writing `CURRENT.tmp`, fsyncing and renaming.
 * Readers follow `CURRENT`, so they see the previous snapshot or the new one, never half of one;
 * a run killed before the final rename leaves the previous snapshot served.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncPath } from '../fs/durable.ts';
import { currentFile, RUN_ID_PATTERN, snapshotDir, snapshotsDir } from './layout.ts';

/** One column of a published table's Parquet file, typed as DuckDB reads it back. */
export interface SnapshotColumn {
  name: string;
  type: string;
}

export interface SnapshotManifest {
  run_id: string;
  as_of: string;
  created_at: string;
  tables: string[];
  headline_modes: string[];
  /**
   * The schema of every published table (columns in file order) and its fingerprint, sha256 of
   * the JSON of `columns` (tables in name order): two snapshots with the same schema_hash have
   * the same tables and columns, so a reader can tell a shape change from new data without
   * opening a file. Absent from snapshots published before they existed.
   */
  columns?: Record<string, SnapshotColumn[]>;
  schema_hash?: string;
  /** The fingerprint of the sql/derive files that derived it (derive.ts `deriveSqlHash`). */
  derive_sql_hash?: string;
}

/** What a snapshot's build returns: the published tables and, when known, their columns. */
export interface SnapshotBuild {
  tables: string[];
  columns?: Record<string, SnapshotColumn[]>;
}


/** The id of the published snapshot, or null when none has been published. */
export function readCurrent(root: string): string | null {
  const file = currentFile(root);
  if (!existsSync(file)) return null;
  const id = readFileSync(file, 'utf8').trim();
  return RUN_ID_PATTERN.test(id) && existsSync(snapshotDir(root, id)) ? id : null;
}

export function readManifest(root: string, id: string): SnapshotManifest {
  return JSON.parse(readFileSync(join(snapshotDir(root, id), 'manifest.json'), 'utf8')) as SnapshotManifest;
}

/** Removes directories left behind by runs that died before publishing. Call with the run lock held. */
export function removeAbandonedSnapshots(root: string): string[] {
  const dir = snapshotsDir(root);
  if (!existsSync(dir)) return [];
  const abandoned = readdirSync(dir).filter((name) => name.includes('.tmp-'));
  for (const name of abandoned) rmSync(join(dir, name), { recursive: true, force: true });
  return abandoned;
}

/**
 * Builds and publishes a snapshot. `build` writes the derived Parquet files into the directory it
 * is given and returns the published table names (and their columns); the manifest is written here.
 */
export async function publishSnapshot(
  root: string,
  runId: string,
  meta: { asOf: Date; headlineModes: readonly string[]; deriveSqlHash?: string },
  build: (dir: string) => Promise<SnapshotBuild>,
): Promise<SnapshotManifest> {
  if (!RUN_ID_PATTERN.test(runId)) throw new Error(`invalid run id: ${runId}`);
  const finalDir = snapshotDir(root, runId);
  const tmpDir = `${finalDir}.tmp-${process.pid}`;
  mkdirSync(snapshotsDir(root), { recursive: true });
  rmSync(tmpDir, { recursive: true, force: true });
  mkdirSync(tmpDir);
  try {
    const built = await build(tmpDir);
    const tables = [...built.tables].sort();
    const manifest: SnapshotManifest = {
      run_id: runId,
      as_of: meta.asOf.toISOString(),
      created_at: new Date().toISOString(),
      tables,
      headline_modes: [...meta.headlineModes],
    };
    if (meta.deriveSqlHash !== undefined) manifest.derive_sql_hash = meta.deriveSqlHash;
    if (built.columns) {
      const columns = Object.fromEntries(tables.map((t) => [t, built.columns![t] ?? []]));
      manifest.columns = columns;
      manifest.schema_hash = createHash('sha256').update(JSON.stringify(columns)).digest('hex');
    }
    writeFileSync(join(tmpDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const name of readdirSync(tmpDir)) fsyncPath(join(tmpDir, name));
    fsyncPath(tmpDir);
    rmSync(finalDir, { recursive: true, force: true });
    renameSync(tmpDir, finalDir);
    fsyncPath(snapshotsDir(root));

    const current = currentFile(root);
    writeFileSync(`${current}.tmp`, `${runId}\n`);
    fsyncPath(`${current}.tmp`);
    renameSync(`${current}.tmp`, current);
    fsyncPath(root);
    return manifest;
  } catch (err) {
    rmSync(tmpDir, { recursive: true, force: true });
    throw err;
  }
}

/** Deletes all but the newest `keep` snapshots (never the published one). */
export function pruneSnapshots(root: string, keep: number): string[] {
  const dir = snapshotsDir(root);
  if (!existsSync(dir)) return [];
  const current = readCurrent(root);
  const ids = readdirSync(dir)
    .filter((name) => RUN_ID_PATTERN.test(name))
    .sort((a, b) => (readManifestTime(root, b) ?? '').localeCompare(readManifestTime(root, a) ?? ''));
  const removed = ids.slice(Math.max(keep, 1)).filter((id) => id !== current);
  for (const id of removed) rmSync(snapshotDir(root, id), { recursive: true, force: true });
  return removed;
}

function readManifestTime(root: string, id: string): string | null {
  try {
    return readManifest(root, id).created_at;
  } catch {
    return null;
  }
}
