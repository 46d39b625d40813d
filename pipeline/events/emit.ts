/**
 * Events from snapshots (issue 15): after each publish, the new snapshot is compared with the
 * previous one in SQL (sql/events/, one event type per file) and what changed is appended to the
 * raw `events` table, with the run.
 *
 * Never lost, never duplicated:
 * - ids come from (run, type, subject), and appendRaw skips ids already stored, so deriving the
 *   same run's events again writes nothing new (number.sql numbers only the new ones);
 * - before publishing, the run records a marker `<data dir>/events/pending.json` (run id and the
 *   snapshot it replaces, fsynced). A process killed between the publish and the events leaves it;
 *   the next run, under the run lock, derives the missing events first (`recoverPendingEvents`).
 *   A marker whose run never got published is simply removed.
 * Sequence numbers are assigned under the run lock (one writer), continuing from the stored maximum.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { writeFileAtomicSync } from '../fs/durable.ts';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlFilePath, sqlIdent } from '../warehouse/duckdb.ts';
import { snapshotDir } from '../warehouse/layout.ts';
import { createRawViews } from '../warehouse/raw-views.ts';
import { appendRaw } from '../warehouse/raw-writer.ts';
import { finishPublish, readCurrent, readManifest } from '../warehouse/snapshot.ts';
import { queryFile } from '../warehouse/sql-files.ts';
import { runDate } from '../warehouse/layout.ts';

export { EVENT_TYPES, type EventType } from './event-types.ts';
import { EVENT_TYPES, type EventType } from './event-types.ts';

/** The snapshot tables the comparison reads (views `ev_new_<t>` and `ev_prev_<t>`). */
const COMPARED_TABLES = ['questions', 'active_predictions', 'edges', 'scored_consensus', 'scored_forecasts'] as const;

/** The sql/events files that find candidates, in order, with the threshold each one binds. */
const CANDIDATE_FILES: readonly { file: string; threshold?: 'consensus' | 'edge' }[] = [
  { file: '00_candidates.sql' },
  { file: '10_consensus_updated.sql', threshold: 'consensus' },
  { file: '20_edge_opened.sql', threshold: 'edge' },
  { file: '21_edge_closed.sql', threshold: 'edge' },
  { file: '30_question_resolved.sql' },
  { file: '40_score_posted.sql' },
];

export interface EmitOptions {
  root: string;
  runId: string;
  /** The snapshot published before this run's (null: compare with an empty warehouse). */
  previous: string | null;
  consensusThreshold: number;
  edgeThreshold: number;
  /** What run.completed carries (the run summary). */
  summary: Record<string, unknown>;
  now?: Date;
}

export interface EmitResult {
  written: number;
  /** Events found by type (including ones already stored by an earlier attempt). */
  found: Record<string, number>;
}

function pendingFile(root: string): string {
  return join(root, 'events', 'pending.json');
}


interface Pending {
  run_id: string;
  previous: string | null;
  /** run.completed's summary (absent in markers written before it was kept). */
  summary?: Record<string, unknown>;
}

/**
 * Records, durably, that `runId` is about to replace `previous` (call before publishing), with the
 * summary its run.completed will carry: a recovery by the next run sends the same counts (it sent
 * only the run id, as of and status, and subscribers met a second shape of run.completed).
 */
export function markEventsPending(root: string, runId: string, previous: string | null, summary?: Record<string, unknown>): void {
  mkdirSync(join(root, 'events'), { recursive: true });
  writeFileAtomicSync(pendingFile(root), JSON.stringify({ run_id: runId, previous, summary } satisfies Pending));
}

function clearPending(root: string, runId: string): void {
  const pending = readPending(root);
  if (pending?.run_id === runId) rmSync(pendingFile(root), { force: true });
}

function readPending(root: string): Pending | null {
  const file = pendingFile(root);
  if (!existsSync(file)) return null;
  try {
    const p = JSON.parse(readFileSync(file, 'utf8')) as Pending;
    return typeof p.run_id === 'string' ? p : null;
  } catch {
    return null; // a torn write never happens (tmp + rename); an unreadable file is ignored
  }
}

async function snapshotView(conn: DuckDBConnection, root: string, view: string, id: string, table: string, empty: boolean): Promise<void> {
  const file = join(snapshotDir(root, id), `${table}.parquet`);
  if (!existsSync(file)) throw new Error(`snapshot ${id} has no table ${table}: events cannot be derived from it`);
  await conn.run(
    `CREATE OR REPLACE TEMP VIEW ${sqlIdent(view)} AS SELECT * FROM read_parquet(${sqlFilePath(file)})${empty ? ' WHERE false' : ''}`,
  );
}

/**
 * Derives the events of run `runId` (its snapshot must be published) against `previous` and
 * appends the new ones to raw `events`. Idempotent; clears the pending marker of this run.
 */
export async function emitRunEvents(conn: DuckDBConnection, opts: EmitOptions): Promise<EmitResult> {
  const { root, runId } = opts;
  const prevUsable = opts.previous !== null && opts.previous !== runId && existsSync(snapshotDir(root, opts.previous));
  for (const t of COMPARED_TABLES) {
    await snapshotView(conn, root, `ev_new_${t}`, runId, t, false);
    const prevHas = prevUsable && existsSync(join(snapshotDir(root, opts.previous!), `${t}.parquet`));
    // No previous snapshot (or one without this table): compare with an empty table of the new shape.
    await snapshotView(conn, root, `ev_prev_${t}`, prevHas ? opts.previous! : runId, t, !prevHas);
  }
  for (const { file, threshold } of CANDIDATE_FILES) {
    const params: Record<string, number> =
      threshold === undefined ? {} : { threshold: threshold === 'consensus' ? opts.consensusThreshold : opts.edgeThreshold };
    await queryFile(conn, `events/${file}`, params);
  }
  await queryFile(conn, 'events/90_run_completed.sql', { run_id: runId, summary: JSON.stringify(opts.summary) });
  const found = Object.fromEntries(
    (await conn.runAndReadAll('SELECT type, count(*)::INTEGER AS n FROM _event_candidates GROUP BY type'))
      .getRowObjectsJS()
      .map((r) => [String(r.type), Number(r.n)]),
  );

  await createRawViews(conn, root);
  const manifest = readManifest(root, runId);
  const rows = await queryFile(conn, 'events/number.sql', {
    run_id: runId,
    as_of: manifest.as_of,
    created_at: (opts.now ?? new Date()).toISOString(),
    snapshot: runId,
    previous: prevUsable ? opts.previous! : '',
  });
  const result = await appendRaw(conn, root, 'events', rows, { runId, runDate: runDate(new Date(manifest.as_of)) });
  await conn.run('DROP TABLE IF EXISTS _event_candidates');
  for (const t of COMPARED_TABLES) {
    await conn.run(`DROP VIEW IF EXISTS ${sqlIdent(`ev_new_${t}`)}`);
    await conn.run(`DROP VIEW IF EXISTS ${sqlIdent(`ev_prev_${t}`)}`);
  }
  clearPending(root, runId);
  return { written: result.written, found };
}

/**
 * Finishes the events of a run killed between its publish and its events (call under the run
 * lock, before a new run). Returns the run id recovered, or null when there was nothing to do.
 */
export async function recoverPendingEvents(
  conn: DuckDBConnection,
  root: string,
  thresholds: { consensusThreshold: number; edgeThreshold: number },
): Promise<{ runId: string; madeCurrent: boolean } | null> {
  const pending = readPending(root);
  if (!pending) return null;
  // Stopped between its publish's two steps (directory in place, CURRENT not moved): finished now.
  const madeCurrent = finishPublish(root, pending.run_id);
  if (readCurrent(root) !== pending.run_id) {
    // The run died before its snapshot was published: no events belong to it.
    rmSync(pendingFile(root), { force: true });
    return null;
  }
  const manifest = readManifest(root, pending.run_id);
  try {
    await emitRunEvents(conn, {
      root,
      runId: pending.run_id,
      previous: pending.previous,
      ...thresholds,
      summary: { ...(pending.summary ?? { run_id: pending.run_id, as_of: manifest.as_of, snapshot: pending.run_id, status: 'completed' }), recovered: true },
    });
  } catch (err) {
    // Every run stops here until they can be derived (QA: a damaged snapshot failed every later
    // run with a bare DuckDB error); the way out, and what it costs, is the operator's to choose.
    throw new Error(
      `the events of run ${pending.run_id} (published, then stopped before its events were written) could not be derived against snapshot ${pending.previous ?? '(none)'}: ${err instanceof Error ? err.message : String(err)}. ` +
        `Every run derives them first; if that snapshot is damaged, removing ${pendingFile(root)} lets runs go on without them (those events are then never announced)`,
      { cause: err },
    );
  }
  return { runId: pending.run_id, madeCurrent };
}
