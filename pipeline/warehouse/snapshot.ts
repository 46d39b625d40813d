/**
 * Snapshots: the derived tables of one run, published atomically.
 *
 * A run builds `snapshots/<run_id>.tmp-<pid>/`, fsyncs every file, renames the directory to
 * `snapshots/<run_id>/`, then replaces `CURRENT` atomically (a temp file beside it, fsynced, renamed).
 * Readers follow `CURRENT`, so they see the previous snapshot or the new one, never half of one;
 * a run killed before the final rename leaves the previous snapshot served. Superseded snapshots
 * are pruned only after a grace period (pruneSnapshots), as servers may still be reading them.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fsyncPath, writeFileAtomicSync } from '../fs/durable.ts';
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
  /**
   * The raw forecasts parts it was derived from (paths relative to the data dir, sorted): the
   * raw forecasts export reads these, so that it holds the forecasts "as the snapshot saw them",
   * never those a later run (or one killed before publishing) wrote since. Absent from snapshots
   * published before it existed (their export reads every part up to their as_of).
   */
  raw_forecast_parts?: string[];
}

/** What a snapshot's build returns: the published tables and, when known, their columns. */
export interface SnapshotBuild {
  tables: string[];
  columns?: Record<string, SnapshotColumn[]>;
}

/**
 * How often a serving process looks at CURRENT: the API for a new snapshot to load
 * (api/snapshot/reader.ts), `quorum start` for one of other SQL to rescore (pipeline/bootstrap.ts).
 */
export const CURRENT_POLL_MS = 2_000;

/** What CURRENT says, trimmed, whether or not it names a snapshot that exists; null without the file. */
export function currentName(root: string): string | null {
  const file = currentFile(root);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : null;
}

/**
 * The id of the published snapshot, or null when none has been published: CURRENT names no
 * snapshot, or one that was never published whole (its directory without its manifest, which a
 * publish writes before the directory is put in place: a copy or restore cut short). Such a
 * directory is no snapshot to rescore or compare with (outside upgrade test: quorum serve and
 * start stopped at its missing manifest.json with a bare ENOENT); a run compares itself with the
 * newest published one instead, as when CURRENT names nothing that exists.
 */
export function readCurrent(root: string): string | null {
  const id = currentName(root);
  return id !== null && isPublished(root, id) ? id : null;
}

/**
 * What is wrong with the snapshot CURRENT names, for a warning: its manifest missing or not a
 * manifest (a half-written copy); null when it reads, or when CURRENT names no snapshot directory.
 */
export function currentManifestProblem(root: string): string | null {
  const id = currentName(root);
  if (id === null || !RUN_ID_PATTERN.test(id) || !existsSync(snapshotDir(root, id))) return null;
  const file = join(snapshotDir(root, id), 'manifest.json');
  if (!existsSync(file)) return `CURRENT names snapshot ${id}, whose manifest.json is missing (a snapshot copied or restored in part)`;
  try {
    const manifest = readManifest(root, id) as Partial<SnapshotManifest> | null;
    if (typeof manifest?.as_of === 'string' && Array.isArray(manifest.tables)) return null;
  } catch {
    // not JSON: cut short
  }
  return `CURRENT names snapshot ${id}, whose manifest.json is not a snapshot manifest (cut short or damaged)`;
}

/**
 * Whether this data directory ever published a snapshot: CURRENT names one, whole or damaged since
 * (its directory there, its manifest missing or cut short: currentManifestProblem), or (CURRENT
 * missing or naming none that exists: removed by hand, a partial restore) one is still in
 * snapshots/. A damaged current snapshot counts: readCurrent takes it for none, and with no other
 * snapshot beside it a start took the directory for a first start, importing the bundled sample
 * into it and making its dated runs (outside review).
 */
export function publishedBefore(root: string): boolean {
  return readCurrent(root) !== null || currentManifestProblem(root) !== null || newestPublished(root) !== null;
}

/**
 * The newest published snapshot (by its manifest's created_at), or null when none is. What a run
 * compares itself with when CURRENT names no snapshot that exists (removed by hand, a partial
 * restore) although others were published: see pipeline/run.ts.
 */
export function newestPublished(root: string): string | null {
  const dir = snapshotsDir(root);
  if (!existsSync(dir)) return null;
  let newest: { id: string; created_at: string } | null = null;
  for (const id of readdirSync(dir)) {
    if (!isPublished(root, id)) continue;
    const created = readManifestTime(root, id);
    if (created !== null && (newest === null || created > newest.created_at)) newest = { id, created_at: created };
  }
  return newest?.id ?? null;
}

/**
 * Whether snapshot `id` was published (its directory is renamed into place only once complete,
 * manifest included), whether or not it is still the current one.
 */
export function isPublished(root: string, id: string): boolean {
  return RUN_ID_PATTERN.test(id) && existsSync(join(snapshotDir(root, id), 'manifest.json'));
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
  meta: {
    asOf: Date;
    headlineModes: readonly string[];
    deriveSqlHash?: string;
    rawForecastParts?: readonly string[];
    /** Called once the snapshot is built, before it is put in place: throws to publish nothing (a run that lost its lock). */
    beforePublish?: () => void;
  },
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
    if (meta.rawForecastParts !== undefined) manifest.raw_forecast_parts = meta.rawForecastParts.map((p) => relative(root, p)).sort();
    if (built.columns) {
      const columns = Object.fromEntries(tables.map((t) => [t, built.columns![t] ?? []]));
      manifest.columns = columns;
      manifest.schema_hash = createHash('sha256').update(JSON.stringify(columns)).digest('hex');
    }
    writeFileSync(join(tmpDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const name of readdirSync(tmpDir)) fsyncPath(join(tmpDir, name));
    fsyncPath(tmpDir);
    meta.beforePublish?.();
    rmSync(finalDir, { recursive: true, force: true });
    renameSync(tmpDir, finalDir);
    fsyncPath(snapshotsDir(root));
    makeCurrent(root, runId);
    return manifest;
  } catch (err) {
    rmSync(tmpDir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Points CURRENT at the published snapshot `id`, durably: temp file, fsync, rename, fsync the
 * data dir (durable.ts writeFileAtomicSync). The second half of a publish (publishSnapshot), and what a resumed run finishes when
 * it was stopped between the two (its directory in place, CURRENT still naming the one before).
 */
export function makeCurrent(root: string, id: string): void {
  writeFileAtomicSync(currentFile(root), `${id}\n`, 0o644);
}

/**
 * Finishes the publish of snapshot `id` whose directory is in place but which CURRENT does not
 * name (a run stopped between the two steps: QA, a full disk writing CURRENT), unless a later
 * snapshot (created after it) is current by now: true when it made `id` current.
 */
export function finishPublish(root: string, id: string): boolean {
  if (!isPublished(root, id)) return false;
  const current = readCurrent(root);
  if (current === id) return false;
  if (current !== null && isPublished(root, current) && readManifest(root, current).created_at > readManifest(root, id).created_at) return false;
  makeCurrent(root, id);
  return true;
}

/**
 * How long a superseded snapshot stays on disk at the least, counted from the first prune that
 * found it no longer CURRENT. A server re-reads CURRENT every 2 s (api/snapshot/reader.ts) and a
 * request keeps reading the snapshot it pinned until it finishes, so a snapshot is still read for
 * a while after a publish; an hour is far longer than the poll plus the longest response (an
 * export streamed to a slow client). Servers are not asked what they serve: none of them writes
 * to the data dir. (A server that cannot load the new snapshot keeps the old one and logs each
 * failure; after the grace, its queries of the old one fail too.)
 */
export const SUPERSEDED_GRACE_MS = 3_600_000;

/** The file, in a snapshot's directory, recording when a prune first found it superseded. */
const SUPERSEDED_FILE = 'superseded_at';

/**
 * Since when snapshot `id` is known superseded: the time its marker records, or, the first time
 * it is found superseded, `now` (written to the marker). `now` is never earlier than the actual
 * replacement, so the grace is never cut short, also for snapshots of runs that died before
 * pruning or of versions without markers.
 */
function supersededSince(root: string, id: string, now: Date): number {
  const file = join(snapshotDir(root, id), SUPERSEDED_FILE);
  try {
    const t = Date.parse(readFileSync(file, 'utf8').trim());
    if (Number.isFinite(t)) return t;
  } catch {
    // no marker yet
  }
  try {
    writeFileSync(file, `${now.toISOString()}\n`);
  } catch {
    // not writable: it is kept this time, and the next prune tries again
  }
  return now.getTime();
}

/**
 * Deletes superseded snapshots beyond the newest `keep`, each only once SUPERSEDED_GRACE_MS have
 * passed since it was found superseded (servers may still be reading it). Never the published
 * one. Call with the run lock held. Returns the ids deleted. The directories are removed off the
 * event loop: under `quorum start` the server shares the process (QA soak: eleven snapshots,
 * about 600 files, removed synchronously held every request for 2 s).
 */
export async function pruneSnapshots(root: string, keep: number, now: Date = new Date()): Promise<string[]> {
  const dir = snapshotsDir(root);
  if (!existsSync(dir)) return [];
  const current = readCurrent(root);
  const ids = readdirSync(dir)
    .filter((name) => RUN_ID_PATTERN.test(name))
    .sort((a, b) => (readManifestTime(root, b) ?? '').localeCompare(readManifestTime(root, a) ?? ''));
  const removed: string[] = [];
  for (const [rank, id] of ids.entries()) {
    if (id === current) {
      // Served again (CURRENT set back by hand): its old marker no longer says anything.
      rmSync(join(snapshotDir(root, id), SUPERSEDED_FILE), { force: true });
      continue;
    }
    // Marked even within `keep`, so its grace has run by the time it falls beyond `keep`.
    const since = supersededSince(root, id, now);
    if (rank >= Math.max(keep, 1) && now.getTime() - since >= SUPERSEDED_GRACE_MS) {
      // Renamed out of the snapshots' names first (one step), then removed: a process killed while
      // removing left a half-removed snapshot under its own name, maybe with its manifest, which
      // readers took for a published one (outside test). A `.tmp-` leftover is removed by the next
      // run (removeAbandonedSnapshots).
      const doomed = join(dir, `${id}.tmp-pruned`);
      renameSync(snapshotDir(root, id), doomed);
      await rm(doomed, { recursive: true, force: true });
      removed.push(id);
    }
  }
  return removed;
}

function readManifestTime(root: string, id: string): string | null {
  try {
    return readManifest(root, id).created_at;
  } catch {
    return null;
  }
}
