/**
 * The export engine: DuckDB `COPY (<export query>) TO '<temp file>' (<encoder options>)` with
 * bound parameters, a concurrency cap (overall and per key), in-flight tracking, and cancellation.
 *
 * DuckDB: the engine has its own in-memory DuckDB instances (one for whole-file exports with every
 * thread, one for sliced exports with one thread per COPY: see `sliceThreads`), opened on first
 * use, reading the pinned snapshot's Parquet files directly. The snapshot reader keeps its instance and pool private
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
 *
 * Two paths:
 * - whole file (`run`): one COPY into one file, handed to `send` once complete (Parquet, capped
 *   plans, and tables whose query sorts globally; see tables.ts);
 * - ordered slices (`stream`, first byte fast): the table's slice source (a snapshot table) is
 *   cut into consecutive ranges of its Parquet file's row numbers (`file_row_number`, which
 *   DuckDB prunes to the row groups concerned); the export query runs as one COPY per range, each
 *   into its own file, and each complete file is handed to `sink` in order while the next range
 *   is being COPYed. Slice k's rows precede slice k + 1's in the file, so the body is the rows in
 *   file order with nothing lost or repeated: the same rows, in the same order, as one COPY of
 *   the query with insertion order preserved (tested). The first slice is small (first byte fast),
 *   later ones double up to `maxSliceRows` (about one row group) and end on row-group boundaries;
 *   up to `sliceConcurrency` slices are COPYed at once on separate connections (one row group is
 *   one scan task, so one slice alone would use one core) and sent strictly in order. A slice
 *   that fails throws from `stream` after earlier slices were sent: the caller must end the
 *   response as a failure, never cleanly.
 *
 * Every connection runs with TimeZone UTC (TIMESTAMP → TIMESTAMPTZ casts and TIMESTAMPTZ formatting
 * are UTC whatever the machine's zone): the instances are opened by openUtcInstance.
 */
import { externalFileCacheBytes, openUtcInstance, sqlFilePath, sqlIdent } from '../../pipeline/warehouse/duckdb.ts';
import { stat } from 'node:fs/promises';
import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { DuckDBTypeId, type DuckDBConnection, type DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from 'pino';
import { rawRelation, type RawViewOptions } from '../../pipeline/warehouse/raw-views.ts';
import { readManifest } from '../../pipeline/warehouse/snapshot.ts';
import { prepareBound, type SqlParams } from '../db/query.ts';
import { loadSql } from '../db/sql-files.ts';
import { ENCODERS, type ExportEncoder, type ExportFormat } from './formats.ts';
import { newExportFile, removeExportFile } from './temp-files.ts';
import type { ExportTableSpec } from './tables.ts';

export interface ExportEngineOptions {
  logger: Logger;
  /** Where export files (and DuckDB's spill directory) go. */
  tempDir: string;
  /** Exports running at once (default 2). */
  maxConcurrent?: number;
  /**
   * Exports one key may run at once (default 1): without it one key could hold every slot (two
   * slow downloads of one pro key kept every other customer's exports at 429 for minutes).
   */
  maxPerKey?: number;
  /**
   * DuckDB `memory_limit` of the export instance (default "256MB"); larger sorts spill to the
   * spill directory. An order-preserving parallel COPY buffers formatted batches up to this much
   * (measured standalone on 5 M rows: 128MB → ~350 MB RSS, 256MB → ~475 MB). Insertion order is
   * always preserved (a GLOBAL setting: it cannot be turned off for one export only).
   */
  memoryLimit?: string;
  /** DuckDB `threads` of the instance running whole-file exports (default: the machine's parallelism). */
  threads?: number;
  /**
   * DuckDB `threads` of the instance running sliced exports (default 1). Slices are already run
   * `sliceConcurrency` at once, each on its own connection; with more than one DuckDB thread each
   * slice's COPY would also fan out to the scheduler, so 2 cores ran 4+ busy threads and the
   * order-preserving COPYs buffered batches for each (measured on 2 M rows, 2 cores: threads 2 →
   * 0.57 of one COPY's throughput, 632 MB RSS; threads 1 → 0.77, 249 MB).
   */
  sliceThreads?: number;
  /** Rows of the first slice of a sliced export (default 16,384: its COPY takes well under a second). */
  firstSliceRows?: number;
  /** Most rows of one slice (default 131,072: about one Parquet row group of DuckDB's writer). */
  maxSliceRows?: number;
  /** Slices COPYed at once by one unlimited sliced export (default: threads). */
  sliceConcurrency?: number;
}

/** One slice of a sliced export, complete on disk. */
export interface ExportSlice {
  /** 0, 1, 2… in order. */
  index: number;
  file: string;
  bytes: number;
  rows: number;
}

/** Receives the complete slices of a sliced export, one at a time and in order. */
export type SliceSink = (slice: ExportSlice) => Promise<void>;

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
  /** Cancelled before any byte was sent: while COPY ran (the DuckDB connection was interrupted), or between it and the send. */
  cancelledDuringCopy: number;
  /** Cancelled while the file was streamed (the read stream was destroyed). */
  cancelledDuringStream: number;
  /** Refused: every slot was taken. */
  rejectedBusy: number;
  /** Refused: the caller's key already ran `maxPerKey` exports. */
  rejectedKeyBusy: number;
  /** Aborted by the route's send-progress timeout (the client stopped reading; also counted as cancelled). */
  stalled: number;
}

/**
 * A slot, or why none was free: every slot taken (`busy`) or the key's share taken (`key_busy`).
 * `release` frees the slot wholly (the export has ended: its temp file deleted); `releaseShare`
 * gives back the key's share and the slot's place among the `maxConcurrent` before that, once the
 * last byte is handed to the socket (both idempotent; `release` includes `releaseShare`).
 */
export type SlotResult =
  | { ok: true; release: () => void; releaseShare: () => void }
  | { ok: false; reason: 'busy' | 'key_busy' };


async function runBound(conn: DuckDBConnection, sql: string, params: SqlParams): Promise<number> {
  const stmt = await prepareBound(conn, sql, params);
  try {
    const result = await stmt.run();
    return Number(result.rowsChanged);
  } finally {
    stmt.destroySync();
  }
}

/**
 * Cuts `total` rows, stored in row groups of `rowGroupRows` rows each, into consecutive
 * [from, to) ranges: the first `first` rows, then ranges doubling up to `max` rows, each ending on
 * the row-group boundary nearest its target size (within twice that size; none: mid-group), so
 * that a row group is rarely decoded by two slices. No rows: one empty range (the CSV header
 * still needs a slice).
 */
export function planSlices(rowGroupRows: readonly number[], first: number, max: number): Array<[number, number]> {
  const total = rowGroupRows.reduce((a, b) => a + b, 0);
  if (total === 0) return [[0, 0]];
  const boundaries: number[] = [];
  let acc = 0;
  for (const n of rowGroupRows) boundaries.push((acc += n));
  const out: Array<[number, number]> = [];
  let from = 0;
  let size = Math.max(1, Math.min(first, max));
  while (from < total) {
    const target = from + size;
    let to = Math.min(total, target);
    let best = Infinity;
    for (const b of boundaries) {
      if (b <= from || b > from + 2 * size) continue;
      const d = Math.abs(b - target);
      if (d < best || (d === best && b > to)) {
        best = d;
        to = b;
      }
    }
    out.push([from, to]);
    from = to;
    size = Math.min(max, size * 2);
  }
  return out;
}

/** A safe non-negative integer, or throws (the slice bounds are computed here, never input). */
function sliceBound(n: number): bigint {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`bad slice bound ${n}`);
  return BigInt(n);
}

const NAIVE_TIMESTAMPS = new Set<DuckDBTypeId>([
  DuckDBTypeId.TIMESTAMP,
  DuckDBTypeId.TIMESTAMP_S,
  DuckDBTypeId.TIMESTAMP_MS,
  DuckDBTypeId.TIMESTAMP_NS,
]);

const NESTED = new Set<DuckDBTypeId>([
  DuckDBTypeId.LIST,
  DuckDBTypeId.ARRAY,
  DuckDBTypeId.STRUCT,
  DuckDBTypeId.MAP,
  DuckDBTypeId.UNION,
]);

/**
 * `select` with the columns `encoder` writes in another type than the query's (formats.ts):
 * - `castTimestamps` (Parquet): every naive TIMESTAMP column cast to TIMESTAMPTZ (the values are
 *   UTC by the warehouse's convention; the connection's TimeZone is UTC);
 * - `nestedAsJson` (CSV): every LIST, ARRAY, STRUCT, MAP or UNION column as its JSON text
 *   (`to_json`, the very text the JSON export writes for the value). DuckDB's CSV writer prints a
 *   list in its own notation (`[a, 'b c', NULL]`: quotes only where needed, backslash escapes),
 *   which no CSV reader can parse back.
 * - `formulaSafe` (CSV): every VARCHAR column through `formulaSafeSql` (formats.ts: text a
 *   spreadsheet would run as a formula gets a leading apostrophe).
 * Column names come from DuckDB's own description of the query's result, quoted. Returns the
 * wrapper to put around `select` or a LIMITed `select` (`typed(limited(select))`: the LIMIT
 * inside, so that rows past it are never typed: a row past the limit whose value fails the
 * export query then fails nothing, as without a wrapper). An encoder that changes nothing gets
 * the identity without a query.
 */
async function encoderSelect(
  conn: DuckDBConnection,
  select: string,
  params: SqlParams,
  encoder: ExportEncoder,
): Promise<(inner: string) => string> {
  if (!encoder.castTimestamps && !encoder.nestedAsJson && !encoder.formulaSafe) return (inner) => inner;
  // A prepared statement with parameters does not describe its result before it runs: run it
  // with LIMIT 0 (nothing is read) and take the result's columns.
  const stmt = await prepareBound(conn, `SELECT * FROM (${select}\n) AS export_described LIMIT 0`, params);
  try {
    const result = await stmt.run();
    const replaced: string[] = [];
    for (let i = 0; i < result.columnCount; i++) {
      const type = result.columnTypeId(i);
      const col = sqlIdent(result.columnName(i));
      if (encoder.castTimestamps && NAIVE_TIMESTAMPS.has(type)) replaced.push(`CAST(${col} AS TIMESTAMPTZ) AS ${col}`);
      else if (encoder.nestedAsJson && NESTED.has(type)) replaced.push(`CAST(to_json(${col}) AS VARCHAR) AS ${col}`);
      else if (encoder.formulaSafe && type === DuckDBTypeId.VARCHAR) replaced.push(`${formulaSafeSql(col)} AS ${col}`);
    }
    return replaced.length === 0 ? (inner) => inner : (inner) => `SELECT * REPLACE (${replaced.join(', ')}) FROM (${inner}\n) AS export_typed`;
  } finally {
    stmt.destroySync();
  }
}

/**
 * A number as a spreadsheet reads one, the whole cell: a plain decimal with an optional sign,
 * fraction and exponent (`-2.5`, `+1`, `-.5`, `1e5`). Not DuckDB's DOUBLE cast, which also takes
 * `-inf`, `+Infinity`, `-nan`, `-1_000` and surrounding whitespace (a leading tab): a spreadsheet
 * runs those as formulas (`=-inf`), so they were written bare (outside test).
 */
const SPREADSHEET_NUMBER = '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?';

/**
 * `col` (a VARCHAR column) with a leading apostrophe when a spreadsheet would evaluate it: it
 * begins with `=`, `+`, `-`, `@`, a tab or a carriage return and is not a number
 * (SPREADSHEET_NUMBER: `-2.5` and `+1` stay as they are).
 */
export function formulaSafeSql(col: string): string {
  return `CASE WHEN left(${col}, 1) IN ('=', '+', '-', '@', chr(9), chr(13)) AND NOT regexp_full_match(${col}, '${SPREADSHEET_NUMBER}') ` +
    `THEN '''' || ${col} ELSE ${col} END`;
}

/**
 * The raw forecasts parts the job's snapshot was derived from (its manifest's
 * `raw_forecast_parts`), so the export holds the forecasts as the snapshot saw them: not those of a
 * run that was killed before publishing, nor of one still running (QA: 2,412 rows of a killed run
 * dated in the past were in the current snapshot's export). A snapshot published before the
 * manifest named them: every part (the query's as_of filter still applies).
 */
function snapshotForecastParts(job: ExportJob): RawViewOptions {
  const manifest = readManifest(job.dataDir, job.snapshotId);
  if (manifest.raw_forecast_parts === undefined) return {};
  for (const p of manifest.raw_forecast_parts) {
    // checked before it reaches a file path, as every manifest field (api/snapshot/manifest.ts)
    if (!RAW_FORECAST_PART.test(p) || p.includes('..')) throw new Error(`snapshot ${job.snapshotId}: invalid raw_forecast_parts entry ${JSON.stringify(p)}`);
  }
  return { parts: { forecasts: manifest.raw_forecast_parts.map((p) => path.join(job.dataDir, p)) } };
}

/** A raw forecasts part as a manifest names it: `raw/forecasts/<partition dirs>/<file>.parquet`. */
const RAW_FORECAST_PART = /^raw\/forecasts\/[A-Za-z0-9=._\/-]+\.parquet$/;

/** A `$limit` no table reaches: a LIMIT kept only for the order it preserves. */
const UNLIMITED = BigInt(Number.MAX_SAFE_INTEGER);

/** `select` limited to `$limit` rows, keeping its order. */
function limited(select: string): string {
  return `SELECT * FROM (${select}\n) AS export_query LIMIT $limit`;
}

/** The export query of a SQL file: its text without a trailing `;` (it is wrapped in COPY). */
function exportSelect(file: string): string {
  return loadSql(file).trim().replace(/;\s*$/, '');
}

/** Whole-file exports (one COPY, all threads) and sliced ones (many single-threaded COPYs). */
type ExportKind = 'whole' | 'slices';

export class ExportEngine {
  readonly #logger: Logger;
  readonly tempDir: string;
  readonly maxConcurrent: number;
  readonly maxPerKey: number;
  readonly #memoryLimit: string;
  readonly #threads: number;
  readonly #sliceThreads: number;
  readonly #spillDir: string;
  readonly firstSliceRows: number;
  readonly maxSliceRows: number;
  readonly sliceConcurrency: number;
  /** One instance per kind of export (whole file, slices), opened on first use. */
  readonly #instances = new Map<ExportKind, Promise<DuckDBInstance>>();
  #inFlight = 0;
  /**
   * Exports holding one of the `maxConcurrent` places: from the slot's acquisition to the last byte
   * handed to the socket (releaseShare). `#inFlight` counts on until the temp file is deleted, which
   * `drain` waits for; new exports are admitted by this count. Soak: two keys exporting one table
   * after another, never more than two downloads at once, had 2,515 of ~6,900 requests refused
   * "every slot is taken": each met its own finished export still deleting its file.
   */
  #admitted = 0;
  /** Exports running per key (entries removed at 0). */
  readonly #perKey = new Map<string, number>();
  /** Requests of a key waiting for its share (acquire), woken when one of its exports ends. */
  readonly #keyWaiters = new Map<string, Set<() => void>>();
  #idleWaiters: Array<() => void> = [];
  #closed = false;
  readonly stats: ExportStats = {
    started: 0,
    completed: 0,
    failed: 0,
    cancelledDuringCopy: 0,
    cancelledDuringStream: 0,
    rejectedBusy: 0,
    rejectedKeyBusy: 0,
    stalled: 0,
  };

  constructor(opts: ExportEngineOptions) {
    this.#logger = opts.logger;
    this.tempDir = path.resolve(opts.tempDir);
    this.maxConcurrent = opts.maxConcurrent ?? 2;
    if (!Number.isInteger(this.maxConcurrent) || this.maxConcurrent < 1) {
      throw new RangeError(`maxConcurrent must be a positive integer, got ${opts.maxConcurrent}`);
    }
    this.maxPerKey = opts.maxPerKey ?? 1;
    if (!Number.isInteger(this.maxPerKey) || this.maxPerKey < 1) {
      throw new RangeError(`maxPerKey must be a positive integer, got ${opts.maxPerKey}`);
    }
    this.#memoryLimit = opts.memoryLimit ?? '256MB';
    this.#threads = opts.threads ?? availableParallelism();
    this.#sliceThreads = opts.sliceThreads ?? 1;
    this.firstSliceRows = opts.firstSliceRows ?? 16_384;
    this.maxSliceRows = opts.maxSliceRows ?? 131_072;
    this.sliceConcurrency = opts.sliceConcurrency ?? this.#threads;
    for (const [k, v] of [
      ['threads', this.#threads],
      ['sliceThreads', this.#sliceThreads],
      ['firstSliceRows', this.firstSliceRows],
      ['maxSliceRows', this.maxSliceRows],
      ['sliceConcurrency', this.sliceConcurrency],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${k} must be a positive integer, got ${v}`);
    }
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
   * Takes one of the `maxConcurrent` slots for `key` (the caller's key id), or says why not: every
   * slot is taken (`busy`), or `key` already holds `maxPerKey` of them (`key_busy`); the caller
   * answers 429 either way. `release` frees the slot (idempotent); `releaseShare` gives the key its
   * share and the slot's place back early (the route does so once the response has finished).
   */
  tryAcquire(key: string): SlotResult {
    return this.#count(this.#take(key));
  }

  /**
   * As `tryAcquire`, but when only the key's share is taken, waits up to `waitMs` for one of the
   * key's exports to end first. A client that has read its whole file can ask for the next one
   * before the server has seen the end of the first (the last bytes reach it before the socket's
   * write callback runs, and the temp file is deleted after that): without the wait, a script
   * exporting one table after another would meet its own finished export as a 429.
   */
  async acquire(key: string, waitMs: number): Promise<SlotResult> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const slot = this.#take(key);
      const left = deadline - Date.now();
      if (slot.ok || slot.reason !== 'key_busy' || left <= 0) return this.#count(slot);
      await new Promise<void>((resolve) => {
        const waiters = this.#keyWaiters.get(key) ?? new Set<() => void>();
        this.#keyWaiters.set(key, waiters);
        const wake = (): void => {
          clearTimeout(timer);
          waiters.delete(wake);
          if (waiters.size === 0 && this.#keyWaiters.get(key) === waiters) this.#keyWaiters.delete(key);
          resolve();
        };
        const timer = setTimeout(wake, left);
        waiters.add(wake);
      });
    }
  }

  /** Counts the outcome of an acquisition in the stats. */
  #count(slot: SlotResult): SlotResult {
    if (slot.ok) this.stats.started++;
    else if (slot.reason === 'key_busy') this.stats.rejectedKeyBusy++;
    else this.stats.rejectedBusy++;
    return slot;
  }

  /** The slot itself: no stats, no waiting. */
  #take(key: string): SlotResult {
    const mine = this.#perKey.get(key) ?? 0;
    if (!this.#closed && mine >= this.maxPerKey) return { ok: false, reason: 'key_busy' };
    if (this.#closed || this.#admitted >= this.maxConcurrent) return { ok: false, reason: 'busy' };
    this.#inFlight++;
    this.#admitted++;
    this.#perKey.set(key, mine + 1);
    let shareReleased = false;
    const releaseShare = (): void => {
      if (shareReleased) return;
      shareReleased = true;
      this.#admitted--;
      const left = (this.#perKey.get(key) ?? 1) - 1;
      if (left > 0) this.#perKey.set(key, left);
      else this.#perKey.delete(key);
      for (const wake of [...(this.#keyWaiters.get(key) ?? [])]) wake();
    };
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      releaseShare();
      this.#inFlight--;
      if (this.#inFlight === 0) for (const w of this.#idleWaiters.splice(0)) w();
    };
    return { ok: true, release, releaseShare };
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
      if (signal.aborted) {
        // Gone between the COPY's last check and the send: nothing was sent, a cancellation all
        // the same (QA soak: one in about 80 such exports was counted started and nothing else).
        this.stats.cancelledDuringCopy++;
        throw new ExportCancelled();
      }
      return await send(produced);
    } finally {
      await removeExportFile(file, this.#logger);
    }
  }

  /** Bytes the open instances hold of the files they read (DuckDB's external file cache): 0 while it is off. */
  async cachedFileBytes(): Promise<number> {
    let total = 0;
    for (const pending of this.#instances.values()) {
      const conn = await (await pending).connect();
      try {
        total += await externalFileCacheBytes(conn);
      } finally {
        conn.closeSync();
      }
    }
    return total;
  }

  /** Stops taking exports, waits for the running ones, closes DuckDB and removes its spill dir. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.drain();
    const instances = [...this.#instances.values()];
    this.#instances.clear();
    for (const instance of instances) {
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

  /** The instance for `kind` (each with its own thread count and spill subdirectory). */
  #open(kind: ExportKind): Promise<DuckDBInstance> {
    if (this.#closed) return Promise.reject(new Error('export engine is closed'));
    let instance = this.#instances.get(kind);
    if (!instance) {
      const spill = path.join(this.#spillDir, kind);
      mkdirSync(spill, { recursive: true });
      instance = openUtcInstance({
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
        memory_limit: this.#memoryLimit,
        threads: String(kind === 'slices' ? this.#sliceThreads : this.#threads),
        temp_directory: spill,
        preserve_insertion_order: 'true',
        // No external file cache: it kept blocks of every snapshot file this long-lived instance
        // read, up to its memory limit, each instance (the soak's RSS 150-350 MB above a fresh
        // start after exports, not freed by publishes); the files stay in the OS page cache, as
        // the API's reader and the pipeline's instance read them (api/snapshot/reader.ts).
        enable_external_file_cache: 'false',
      });
      instance.catch(() => {
        if (this.#instances.get(kind) === instance) this.#instances.delete(kind);
      });
      this.#instances.set(kind, instance);
    }
    return instance;
  }

  /**
   * A fresh connection of the export instance for `job` (TimeZone UTC, the pinned snapshot's
   * tables as temp views, the raw forecasts if needed; with `slicedSource`, that table's view is
   * restricted to the file rows [export_slice_from, export_slice_to), set per slice), whose
   * `interrupt()` is wired to `signal`. `done()` unwires and closes it.
   */
  async #connect(
    job: ExportJob,
    signal: AbortSignal,
    slicedSource: string | null = null,
  ): Promise<{ conn: DuckDBConnection; done: () => void }> {
    if (signal.aborted) throw new ExportCancelled();
    const instance = await this.#open(slicedSource === null ? 'whole' : 'slices');
    const conn = await instance.connect();
    const onAbort = (): void => {
      try {
        conn.interrupt();
      } catch {
        // the connection may be closing
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const done = (): void => {
      signal.removeEventListener('abort', onAbort);
      try {
        conn.closeSync();
      } catch {
        // already closed
      }
    };
    try {
      const snapDir = path.join(job.dataDir, 'snapshots', job.snapshotId);
      for (const table of job.table.snapshotTables) {
        const file = sqlFilePath(path.join(snapDir, `${table}.parquet`));
        await conn.run(
          table === slicedSource
            ? `CREATE TEMP VIEW ${sqlIdent(table)} AS SELECT * EXCLUDE (file_row_number) FROM read_parquet(${file}, file_row_number = true) ` +
                `WHERE file_row_number >= getvariable('export_slice_from') AND file_row_number < getvariable('export_slice_to')`
            : `CREATE TEMP VIEW ${sqlIdent(table)} AS SELECT * FROM read_parquet(${file})`,
        );
      }
      if (job.table.rawForecasts) {
        await conn.run(`CREATE TEMP VIEW raw_forecasts AS ${rawRelation(job.dataDir, 'forecasts', snapshotForecastParts(job))}`);
      }
      if (signal.aborted) throw new ExportCancelled();
      return { conn, done };
    } catch (err) {
      done();
      throw err;
    }
  }

  /**
   * Runs `job` as ordered slices (see the file comment): each slice is COPYed into its own temp
   * file and handed to `sink` once complete, in order; the next slices are COPYed while `sink`
   * streams earlier ones: each connection starts its next slice as soon as its last one is
   * complete, so at most `sliceConcurrency` COPYs run and at most that many + 2 slice files exist
   * at once (the one going out, the next one waiting for it, and those being COPYed). Every slice file is deleted after `sink` returns, or in any case at the end.
   * Resolves to the rows sent. Throws on failure (a COPY error, `sink` failing) or ExportCancelled
   * when `signal` aborts, possibly after slices were handed to `sink`.
   * Needs `job.table.sliceSource`, a sliceable format and no cap.
   */
  async stream(job: ExportJob, signal: AbortSignal, sink: SliceSink): Promise<{ rows: number; slices: number }> {
    const source = job.table.sliceSource;
    const join = ENCODERS[job.format].slices;
    if (source === null || join === null || job.cap !== null) throw new Error(`export ${job.table.name}/${job.format} cannot be sliced`);
    const files = new Set<string>();
    const conns: Array<{ conn: DuckDBConnection; done: () => void }> = [];
    const copies: Array<Promise<{ file: string; rows: number }>> = [];
    let pending: Promise<void> | null = null;
    let sent = 0;
    try {
      conns.push(await this.#connect(job, signal, source));
      const parquet = path.join(job.dataDir, 'snapshots', job.snapshotId, `${source}.parquet`);
      const groups = await conns[0]!.conn.runAndReadAll(
        `SELECT row_group_id, any_value(row_group_num_rows) FROM parquet_metadata(${sqlFilePath(parquet)}) GROUP BY row_group_id ORDER BY row_group_id`,
      );
      const ranges = planSlices(groups.getRows().map((r) => Number(r[1])), this.firstSliceRows, this.maxSliceRows);
      // Typed once for every slice (CSV: nested columns as JSON text).
      const base = exportSelect(job.table.sqlFile);
      const typed = await encoderSelect(conns[0]!.conn, base, job.params, ENCODERS[job.format]);
      // Without a limit, up to `width` slices are COPYed at once, each on its own connection (a
      // slice of about one row group is one scan task: one core; several keep every core busy).
      // With a limit, one at a time: each slice's LIMIT is what the earlier ones left.
      const width = job.limit === null ? Math.max(1, Math.min(this.sliceConcurrency, ranges.length)) : 1;
      while (conns.length < width) conns.push(await this.#connect(job, signal, source));

      /** COPYs slice k on connection k mod width (free: slice k - width was awaited before). */
      const copySlice = async (k: number, remaining: number | null): Promise<{ file: string; rows: number }> => {
        const { conn } = conns[k % width]!;
        const [from, to] = ranges[k]!;
        await runBound(conn, 'SET VARIABLE export_slice_from = $v', { v: sliceBound(from) });
        await runBound(conn, 'SET VARIABLE export_slice_to = $v', { v: sliceBound(to) });
        const file = newExportFile(this.tempDir, ENCODERS[job.format].extension);
        files.add(file);
        const options = join.kind === 'concat' ? (k === 0 ? join.first : join.rest) : join.options;
        const copy = `COPY (${typed(remaining === null ? base : limited(base))}\n) TO ${sqlFilePath(file)} (${options})`;
        const n = await runBound(conn, copy, remaining === null ? job.params : { ...job.params, limit: remaining });
        return { file, rows: n };
      };

      let rows = 0;
      let launched = 0;
      /** Launches the COPYs of slices [launched, end) (without a limit: each on its own connection). */
      const launchUpTo = (end: number): void => {
        while (launched < Math.min(end, ranges.length)) {
          const copy = copySlice(launched++, null);
          copy.catch(() => undefined); // observed; rethrown where awaited, in order
          copies.push(copy);
        }
      };
      for (let k = 0; k < ranges.length; k++) {
        let done: { file: string; rows: number };
        if (job.limit === null) {
          launchUpTo(k + width);
          done = await copies[k]!;
          // Slice k's connection is free: start slice k + width now, while slice k - 1 may still be
          // going out, so that no core waits for the client.
          launchUpTo(k + 1 + width);
        } else {
          const remaining = job.limit - rows;
          if (remaining <= 0) break;
          const copy = copySlice(k, remaining);
          copies.push(copy);
          done = await copy;
        }
        if (signal.aborted) throw new ExportCancelled();
        // The previous slice must be out before this one goes (order).
        if (pending) await pending;
        pending = null;
        rows += done.rows;
        const { file } = done;
        const bytes = (await stat(file)).size;
        if (bytes === 0) {
          await removeExportFile(file, this.#logger);
          files.delete(file);
          continue;
        }
        const slice: ExportSlice = { index: sent++, file, bytes, rows: done.rows };
        pending = sink(slice).finally(async () => {
          await removeExportFile(file, this.#logger);
          files.delete(file);
        });
        pending.catch(() => undefined); // observed; rethrown where awaited
      }
      if (pending) await pending;
      pending = null;
      return { rows, slices: sent };
    } catch (err) {
      if (signal.aborted) {
        // Once a slice was handed over the body is being streamed: a cancellation then counts as
        // one during streaming (whether a COPY or the write noticed first).
        if (sent === 0) this.stats.cancelledDuringCopy++;
        else this.stats.cancelledDuringStream++;
        throw new ExportCancelled();
      }
      throw err;
    } finally {
      // On failure, stop the COPYs still running and let everything settle before closing the
      // connections and deleting the files (a sink may still be reading its slice).
      for (const { conn } of conns) {
        try {
          conn.interrupt();
        } catch {
          // closing
        }
      }
      await Promise.allSettled(copies);
      if (pending) await (pending as Promise<void>).catch(() => undefined);
      for (const { done } of conns) done();
      for (const file of files) await removeExportFile(file, this.#logger);
    }
  }

  async #produce(job: ExportJob, file: string, signal: AbortSignal): Promise<ProducedExport> {
    const checkpoint = (): void => {
      if (signal.aborted) throw new ExportCancelled();
    };
    // The connection is set up inside the try: a client gone while its views were being created
    // interrupted DuckDB there, and that was counted a failed export and logged as a 500 (QA).
    let done: (() => void) | undefined;
    try {
      const connected = await this.#connect(job, signal);
      done = connected.done;
      const conn = connected.conn;
      const encoder = ENCODERS[job.format];
      const base = exportSelect(job.table.sqlFile);
      const typed = await encoderSelect(conn, base, job.params, encoder);
      const options = encoder.copyOptions;
      const target = sqlFilePath(file);
      let rows: number;
      let truncated = false;
      if (job.cap !== null && (job.limit === null || job.limit > job.cap)) {
        // The cap binds: materialise cap + 1 rows (parameters bound) to learn whether it cut
        // anything, then COPY the first `cap` of them, in order.
        const cap = job.cap;
        await runBound(conn, `CREATE TEMP TABLE export_rows AS ${typed(limited(base))}`, { ...job.params, limit: cap + 1 });
        checkpoint();
        const counted = await conn.runAndReadAll('SELECT count(*) AS n FROM export_rows');
        truncated = Number(counted.getRows()[0]?.[0] ?? 0) > cap;
        checkpoint();
        rows = await runBound(conn, `COPY (${limited('SELECT * FROM export_rows')}) TO ${target} (${options})`, { limit: cap });
      } else if (job.limit !== null) {
        rows = await runBound(conn, `COPY (${typed(limited(base))}) TO ${target} (${options})`, { ...job.params, limit: job.limit });
      } else if (job.table.sliceSource !== null && encoder.formulaSafe) {
        // An unsorted query, read in file order (its published order), written as CSV: a
        // multi-threaded COPY through the formula-safe wrapper loses that order (DuckDB 1.5.5, checked:
        // 12,000 of 12,000 rows moved at 4 threads, none without the wrapper or under a LIMIT). The
        // order-preserving LIMIT keeps it. Only a client that cannot take a sliced (chunked) body gets
        // here (routes.ts); it is single-threaded, as the slices are.
        rows = await runBound(conn, `COPY (${typed(limited(base))}) TO ${target} (${options})`, { ...job.params, limit: UNLIMITED });
      } else {
        // No limit: no LIMIT clause (even LIMIT NULL is a streaming limit that makes the pipeline
        // single-threaded). Insertion order stays preserved: `preserve_insertion_order` is a
        // GLOBAL DuckDB setting (SET on one connection changes every connection of the instance,
        // checked), so turning it off here once made every later limited export and every slice
        // of the instance lose its order.
        rows = await runBound(conn, `COPY (${typed(base)}\n) TO ${target} (${options})`, job.params);
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
      done?.();
    }
  }
}
