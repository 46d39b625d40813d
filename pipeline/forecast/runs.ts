/**
 * Which run a `quorum run --resume` (or a scheduled run after a restart) continues.
 *
 * A run is resumable while it has no `completed` state row and either its journal file is still
 * there (calls made that never reached the raw tables, a failed run's too) or it has no `failed`
 * row and got as far as forecasting (model calls stored for it, or stopped by SIGTERM: state
 * `interrupted`). A run killed before its first call has nothing to resume: the next run starts
 * afresh. The schedule continues only runs that did not fail (findRunToResume 'auto').
 */
import { existsSync } from 'node:fs';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { createRawViews } from '../warehouse/raw-views.ts';
import { queryFile } from '../warehouse/sql-files.ts';
import { journalPath } from './journal.ts';

/** Runs `sql/pipeline/<name>` with bound parameters (plain JS rows). */
export function querySql<T>(conn: DuckDBConnection, name: string, params: Record<string, DuckDBValue> = {}): Promise<T[]> {
  return queryFile<T>(conn, `pipeline/${name}`, params);
}

export interface RunState {
  run_id: string;
  as_of: string;
  started_at: string | null;
  completed: boolean;
  failed: boolean;
  interrupted: boolean;
  snapshot: string | null;
  calls: number;
  /** A journal file exists for it. */
  journal: boolean;
}

export async function listRuns(conn: DuckDBConnection, dataDir: string): Promise<RunState[]> {
  await createRawViews(conn, dataDir);
  const rows = await querySql<Omit<RunState, 'journal'>>(conn, 'runs.sql');
  return rows.map((r) => ({ ...r, journal: existsSync(journalPath(dataDir, r.run_id)) }));
}

/**
 * Not completed, and either its journal is still there (calls made that never reached the raw
 * tables: a run that failed writing them, e.g. on a full disk, too, or `--resume` made them again,
 * paid twice: QA) or it stopped without failing after it got as far as forecasting.
 */
export function isResumable(r: RunState): boolean {
  return !r.completed && (r.journal || (!r.failed && (r.calls > 0 || r.interrupted)));
}

/** The run made model calls, or began to (a journal), or was stopped while it could have. */
function reachedForecasting(r: RunState): boolean {
  return r.calls > 0 || r.journal || r.interrupted;
}

export class ResumeError extends Error {
  override name = 'ResumeError';
}

/**
 * The run to continue:
 * - `resume` a run id: that run (a completed one too: re-running it makes no model call);
 * - `resume` true: the newest resumable run (null when there is none);
 * - `'auto'`: the newest run that got as far as forecasting, if it is resumable (an older
 *   interrupted run is left alone once a newer run has forecast; resume it by id). A run that
 *   made no call (a score-only rescore, such as the one `quorum start` makes after an upgrade; a
 *   run that failed or was killed before its first call) does not count: after an upgrade's
 *   rescore the interrupted run was never continued, its paid calls left in its journal (QA).
 */
export async function findRunToResume(
  conn: DuckDBConnection,
  dataDir: string,
  resume: true | 'auto' | string,
): Promise<RunState | null> {
  const runs = await listRuns(conn, dataDir);
  if (resume === true) return runs.find(isResumable) ?? null;
  if (resume === 'auto') {
    // A failed run is not continued unasked: whatever failed it may fail every continuation, and
    // the schedule would then never start a new run (each new run warns that it waits instead).
    const newest = runs.find(reachedForecasting);
    return newest && !newest.failed && isResumable(newest) ? newest : null;
  }
  const r = runs.find((x) => x.run_id === resume);
  if (!r) throw new ResumeError(`no run with id ${resume} in ${dataDir}`);
  return r;
}
