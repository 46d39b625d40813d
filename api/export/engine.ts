/**
 * The export engine: DuckDB `COPY (<export query>) TO '<temp file>' (<encoder options>)` with
 * bound parameters, a concurrency cap, in-flight tracking, and cancellation.
 *
 * DuckDB: the engine has its own in-memory DuckDB instance, opened on first use, reading the
 * pinned snapshot's Parquet files directly. The snapshot reader keeps its instance and pool private
 * (no connection can be borrowed, interrupted or given temp tables through it), and a separate
 * instance gives exports their own memory limit and spill directory, so a 5-million-row export
 * never competes with the API's pooled queries. Each export runs on a fresh connection of that
 * instance (closed afterwards), so `connection.interrupt()` cancels exactly that export and its
 * temp views/tables vanish with it.
 *
 * Parameters are always bound (COPY (SELECT ... $param ...) works with prepared statements in
 * DuckDB 1.5; tested). Only the temp file path and the snapshot's Parquet paths (both built by the
 * server, never from input) are quoted into SQL text.
 *
 * COPY either completes or throws: there is no row stream that could end early, so a failed
 * query can never be streamed as a success (DESIGN §7).
 */
import { sqlFilePath, sqlIdent } from '../../pipeline/warehouse/duckdb.ts';
import { stat } from 'node:fs/promises';
import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from 'pino';
import { rawRelation } from '../../pipeline/warehouse/raw-views.ts';
import { prepareBound, type SqlParams } from '../db/query.ts';
import { loadSql } from '../db/sql-files.ts';
import { ENCODERS, type ExportFormat } from './formats.ts';
import { newExportFile, removeExportFile } from './temp-files.ts';
import type { ExportTableSpec } from './tables.ts';

export interface ExportEngineOptions {
  logger: Logger;
  /** Where export files (and DuckDB's spill directory) go. */
  tempDir: string;
  /** Exports running at once (default 2). */
  maxConcurrent?: number;
  /**
   * DuckDB `memory_limit` of the export instance (default "256MB"); larger sorts spill to the
   * spill directory. An order-preserving parallel COPY buffers formatted batches up to this much
   * (measured standalone on 5 M rows: 128MB → ~350 MB RSS, 256MB → ~475 MB); unlimited exports
   * do not preserve insertion order and stay far below.
   */
  memoryLimit?: string;
  /** DuckDB `threads` of the export instance (default: the machine's parallelism). */
  threads?: number;
}

export interface ExportJob {
  table: ExportTableSpec;
  format: ExportFormat;
  /** The warehouse root (raw/ and snapshots/ live below it). */
  dataDir: string;
  /** The pinned snapshot's id (its Parquet files are `<dataDir>/snapshots/<id>/<table>.parquet`). */
  snapshotId: string;
  /** Bound parameters of the table's SQL file, except `limit`. */
  params: SqlParams;
  /** The caller's limit (null: all rows). */
  limit: number | null;
  /** The plan's row cap (null: none). */
  cap: number | null;
}

export interface ProducedExport {
  file: string;
  bytes: number;
  rows: number;
  /** True when the plan's cap cut rows the query would otherwise have returned. */
  truncated: boolean;
}

/** Thrown when the export was cancelled (client gone); nothing is to be sent. */
export class ExportCancelled extends Error {
  constructor() {
    super('export cancelled');
    this.name = 'ExportCancelled';
  }
}

export interface ExportStats {
  started: number;
  completed: number;
  failed: number;
  /** Cancelled while COPY ran (the DuckDB connection was interrupted). */
  cancelledDuringCopy: number;
  /** Cancelled while the file was streamed (the read stream was destroyed). */
  cancelledDuringStream: number;
  rejectedBusy: number;
}


async function runBound(conn: DuckDBConnection, sql: string, params: SqlParams): Promise<number> {
  const stmt = await prepareBound(conn, sql, params);
  try {
    const result = await stmt.run();
    return Number(result.rowsChanged);
  } finally {
    stmt.destroySync();
  }
}

/** `select` limited to `$limit` rows, keeping its order. */
function limited(select: string): string {
  return `SELECT * FROM (${select}\n) AS export_query LIMIT $limit`;
}

/** The export query of a SQL file: its text without a trailing `;` (it is wrapped in COPY). */
function exportSelect(file: string): string {
  return loadSql(file).trim().replace(/;\s*$/, '');
}

export class ExportEngine {
  readonly #logger: Logger;
  readonly tempDir: string;
  readonly maxConcurrent: number;
  readonly #memoryLimit: string;
  readonly #threads: number;
  readonly #spillDir: string;
  #instance: Promise<DuckDBInstance> | null = null;
  #inFlight = 0;
  #idleWaiters: Array<() => void> = [];
  #closed = false;
  readonly stats: ExportStats = {
    started: 0,
    completed: 0,
    failed: 0,
    cancelledDuringCopy: 0,
    cancelledDuringStream: 0,
    rejectedBusy: 0,
  };

  constructor(opts: ExportEngineOptions) {
    this.#logger = opts.logger;
    this.tempDir = path.resolve(opts.tempDir);
    this.maxConcurrent = opts.maxConcurrent ?? 2;
    if (!Number.isInteger(this.maxConcurrent) || this.maxConcurrent < 1) {
      throw new RangeError(`maxConcurrent must be a positive integer, got ${opts.maxConcurrent}`);
    }
    this.#memoryLimit = opts.memoryLimit ?? '256MB';
    this.#threads = opts.threads ?? availableParallelism();
    this.#spillDir = path.join(this.tempDir, `quorum-duckdb-spill-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  }

  /** Exports running now (from slot acquisition to the last byte streamed and the file deleted). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Resolves when no export is running. */
  drain(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Takes one of the `maxConcurrent` slots, or returns null when all are taken (the caller
   * answers 429). The returned function releases the slot (idempotent).
   */
  tryAcquire(): (() => void) | null {
    if (this.#closed || this.#inFlight >= this.maxConcurrent) {
      this.stats.rejectedBusy++;
      return null;
    }
    this.#inFlight++;
    this.stats.started++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight--;
      if (this.#inFlight === 0) for (const w of this.#idleWaiters.splice(0)) w();
    };
  }

  /**
   * Runs `job` with COPY into a fresh temp file, hands the produced file to `send`, and deletes
   * the file afterwards whatever happens. `signal` aborts: during COPY the DuckDB connection is
   * interrupted (ExportCancelled is thrown); during `send` the caller's stream is expected to stop.
   */
  async run<T>(job: ExportJob, signal: AbortSignal, send: (produced: ProducedExport) => Promise<T>): Promise<T> {
    const file = newExportFile(this.tempDir, ENCODERS[job.format].extension);
    try {
      const produced = await this.#produce(job, file, signal);
      return await send(produced);
    } finally {
      await removeExportFile(file, this.#logger);
    }
  }

  /** Stops taking exports, waits for the running ones, closes DuckDB and removes its spill dir. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.drain();
    const instance = this.#instance;
    this.#instance = null;
    if (instance) {
      try {
        (await instance).closeSync();
      } catch {
        // never opened or already closed
      }
    }
    try {
      rmSync(this.#spillDir, { recursive: true, force: true });
    } catch (err) {
      this.#logger.warn({ err, dir: this.#spillDir }, 'could not remove the export spill directory');
    }
  }

  #open(): Promise<DuckDBInstance> {
    if (this.#closed) return Promise.reject(new Error('export engine is closed'));
    if (!this.#instance) {
      mkdirSync(this.#spillDir, { recursive: true });
      this.#instance = DuckDBInstance.create(':memory:', {
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
        memory_limit: this.#memoryLimit,
        threads: String(this.#threads),
        temp_directory: this.#spillDir,
        preserve_insertion_order: 'true',
      });
      this.#instance.catch(() => {
        this.#instance = null;
      });
    }
    return this.#instance;
  }

  async #produce(job: ExportJob, file: string, signal: AbortSignal): Promise<ProducedExport> {
    if (signal.aborted) throw new ExportCancelled();
    const instance = await this.#open();
    const conn = await instance.connect();
    const onAbort = (): void => {
      try {
        conn.interrupt();
      } catch {
        // the connection may be closing
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const checkpoint = (): void => {
      if (signal.aborted) throw new ExportCancelled();
    };
    try {
      // The pinned snapshot's tables (and the raw forecasts) as temp views of this connection.
      const snapDir = path.join(job.dataDir, 'snapshots', job.snapshotId);
      for (const table of job.table.snapshotTables) {
        await conn.run(
          `CREATE TEMP VIEW ${sqlIdent(table)} AS SELECT * FROM read_parquet(${sqlFilePath(path.join(snapDir, `${table}.parquet`))})`,
        );
      }
      if (job.table.rawForecasts) {
        await conn.run(`CREATE TEMP VIEW raw_forecasts AS ${rawRelation(job.dataDir, 'forecasts')}`);
      }
      checkpoint();

      const select = exportSelect(job.table.sqlFile);
      const options = ENCODERS[job.format].copyOptions;
      const target = sqlFilePath(file);
      let rows: number;
      let truncated = false;
      if (job.cap !== null && (job.limit === null || job.limit > job.cap)) {
        // The cap binds: materialise cap + 1 rows (parameters bound) to learn whether it cut
        // anything, then COPY the first `cap` of them, in order.
        const cap = job.cap;
        await runBound(conn, `CREATE TEMP TABLE export_rows AS ${limited(select)}`, { ...job.params, limit: cap + 1 });
        checkpoint();
        const counted = await conn.runAndReadAll('SELECT count(*) AS n FROM export_rows');
        truncated = Number(counted.getRows()[0]?.[0] ?? 0) > cap;
        checkpoint();
        rows = await runBound(conn, `COPY (${limited('SELECT * FROM export_rows')}) TO ${target} (${options})`, { limit: cap });
      } else if (job.limit !== null) {
        rows = await runBound(conn, `COPY (${limited(select)}) TO ${target} (${options})`, { ...job.params, limit: job.limit });
      } else {
        // No limit: no LIMIT clause (even LIMIT NULL is a streaming limit that makes the pipeline
        // single-threaded), and no insertion-order preservation: the COPY runs fully parallel
        // without buffering formatted batches to put them back in order (the memory and most of
        // the time of a multi-million-row export). ORDER BY queries (predictions, forecasts)
        // stay sorted; resolved/scores come in no guaranteed order.
        await conn.run('SET preserve_insertion_order = false');
        rows = await runBound(conn, `COPY (${select}\n) TO ${target} (${options})`, job.params);
      }
      checkpoint();
      const st = await stat(file);
      return { file, bytes: st.size, rows, truncated };
    } catch (err) {
      if (signal.aborted) {
        this.stats.cancelledDuringCopy++;
        throw new ExportCancelled();
      }
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
      try {
        conn.closeSync();
      } catch {
        // already closed
      }
    }
  }
}
