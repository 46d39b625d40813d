/**
 * `GET /api/export/{table}/`: bulk export of `predictions`, `resolved`, `scores`, `forecasts`,
 * `claims` and `track_records` (DESIGN §7). Needs a key; what each plan may export is in plans.ts,
 * the parameters in params.ts, the tables in tables.ts, their columns in columns.ts, the formats in
 * formats.ts.
 *
 * A request: route id `export.<table>` (metrics, logs, usage) → auth (401) → table (404 listing
 * the tables) → parameters (400) → plan (403) → a free export slot (429 with Retry-After: at most
 * `maxConcurrent` at once, default 2, and at most `maxPerKey` of them per key, default 1, so that
 * one key cannot hold every slot) → pin the snapshot → then one of two paths (engine.ts):
 * - sliced (first byte fast; CSV, JSON, JSONL of a table with a slice source, uncapped plans, a client that takes chunked encoding):
 *   the first slice is COPYed, then the headers go (Content-Type, Content-Disposition,
 *   X-Snapshot, X-Export-Sliced: true, Trailer: X-Export-Rows; no Content-Length: chunked), then
 *   each slice's file as it completes while the next is COPYed; the trailer X-Export-Rows ends a
 *   complete body. A slice failing after the headers destroys the connection without the
 *   terminating chunk (stream.ts): the client sees a failed transfer, never a clean end.
 * - whole file (Parquet, capped plans, sorted tables): DuckDB COPY into
 *   `<tempDir>/quorum-export-<pid>-<uuid>.<ext>` → only then the headers (Content-Type, Content-Length,
 *   Content-Disposition, X-Snapshot, X-Export-Rows, and for capped plans X-Export-Row-Cap /
 *   X-Export-Truncated) → the file streamed with backpressure (4 MiB reads; ./stream.ts sendFile).
 * A COPY failing before the headers is a 500 problem and no body. A client that disconnects during
 * COPY interrupts the DuckDB connection; during streaming, the read stops. A client that stays
 * connected but stops reading is cut off once bytes have waited `idleTimeoutMs` (default 60 s,
 * QUORUM_EXPORT_IDLE_TIMEOUT_MS) without the socket taking any (stream.ts watchSendProgress): the
 * same cancellation, so its slot is freed and its temp files deleted instead of being held for as
 * long as the client lingers. Temp files are always deleted; the startup sweep removes stale ones
 * (older than an hour) left by a crashed process.
 */
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { Express, Request, Response } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ApiError } from '../errors/problem.ts';
import { FILTER_NAMES, firstGiven, misspeltNames, misspeltParameter, rejectBracketedParams } from '../http/params.ts';
import { getRoute } from '../http/route.ts';
import type { SnapshotReader } from '../snapshot/reader.ts';
import { ExportCancelled, ExportEngine, type ExportStats } from './engine.ts';
import { ENCODERS } from './formats.ts';
import { EXPORT_PARAMS, LIST_ONLY_FILTERS, parseExportParams, type ExportParams, type TimeFilter } from './params.ts';
import { endResponse, JsonArrayFramer, ResponseClosed, sendFile, watchSendProgress, writeChunk } from './stream.ts';
import {
  authOf,
  DEFAULT_PRO_ROW_CAP,
  leastPlanForFormat,
  planAtLeast,
  PLAN_EXPORT_RULES,
} from './plans.ts';
import { idleTimeoutFromEnv } from './settings.ts';
import { sweepStaleExports } from './temp-files.ts';
import { EXPORT_TABLES, exportRouteId, isExportTable, TABLE_SPECS, type ExportTableSpec } from './tables.ts';

/** The headers an export sets before its body, removed again when it ends as a problem instead. */
const EXPORT_HEADERS = [
  'Content-Type', 'Content-Length', 'Content-Disposition', 'X-Export-Sliced', 'Trailer', 'X-Export-Rows',
  'X-Export-Row-Cap', 'X-Export-Truncated',
] as const;

export interface ExportDeps {
  logger: Logger;
  /** Directory for export temp files (default: the OS temp dir). */
  tempDir?: string;
  /** Rows a pro export may hold (default 10,000). */
  proRowCap?: number;
  /** Exports running at once; more are answered 429 (default 2). */
  maxConcurrent?: number;
  /** Exports one key may run at once; more are answered 429 (default 1). */
  maxPerKey?: number;
  /**
   * How long a request whose key's share is taken waits for that key's export to end before the
   * 429 (default 1,000 ms): the previous export of a client asking one after another is often
   * still deleting its temp file.
   */
  keyWaitMs?: number;
  /**
   * Milliseconds a download may go without the client taking any of the bytes waiting for it
   * before it is aborted (default: QUORUM_EXPORT_IDLE_TIMEOUT_MS, else 60,000).
   */
  idleTimeoutMs?: number;
  /** Counts a keyed request under its route id (the app's per-key usage, api/limits/usage-store.ts). */
  countRoute?: (keyId: string, routeId: string) => void;
  /** Retry-After of that 429, in seconds (default 5). */
  retryAfterSeconds?: number;
  /** DuckDB memory_limit of the export instance (default "256MB"). */
  memoryLimit?: string;
  /** DuckDB threads of the instance running whole-file exports (default: all cores). */
  threads?: number;
  /** DuckDB threads of the instance running sliced exports (engine default 1). */
  sliceThreads?: number;
  /** Read size when streaming the file (default 4 MiB: fewer, larger socket writes; bench export 5 M rows, ratio 0.776 → 0.82). */
  highWaterMark?: number;
  /** Rows of a sliced export's first slice (engine default 16,384). */
  firstSliceRows?: number;
  /** Most rows of one slice (engine default 131,072). */
  maxSliceRows?: number;
  /** Slices COPYed at once by one export (engine default: threads). */
  sliceConcurrency?: number;
}

/**
 * The table's time filters as bound SQL parameters (every filter of the table, null when not
 * given): `since` stands for the table's main filter. A filter the table lacks, or `since` with
 * the filter it stands for, is a 400.
 */
function timeFilterParams(table: ExportTableSpec, params: ExportParams): Record<string, string | null> {
  const accepted = Object.keys(table.timeFilters) as TimeFilter[];
  const allowed = ['since', ...accepted];
  for (const name of Object.keys(params.timeFilters) as TimeFilter[]) {
    if (!accepted.includes(name)) {
      throw ApiError.invalidParameter(name, `Query parameter '${name}' does not apply to the ${table.name} export; it takes ${allowed.join(', ')}.`, allowed);
    }
  }
  const given: Partial<Record<TimeFilter, string>> = { ...params.timeFilters };
  if (params.since !== null) {
    if (given[table.sinceAlias] !== undefined) {
      throw ApiError.invalidParameter('since', `Query parameter 'since' is an alias of '${table.sinceAlias}' for the ${table.name} export; give one of them.`, allowed);
    }
    given[table.sinceAlias] = params.since;
  }
  return Object.fromEntries(accepted.map((name) => [name, given[name] ?? null]));
}

/** The export's parameters and the API's filters, by their lowercase form (misspeltParameter). */
const MISSPELT = misspeltNames([...EXPORT_PARAMS, ...Object.keys(LIST_ONLY_FILTERS), ...FILTER_NAMES]);

/**
 * A 400 for one of the export's parameters (or a filter's name) written in another case or with
 * `-` for `_`, as on every route (README "The API"): ignored as an unknown parameter, it exported
 * every row as if filtered or limited (outside test: `/api/export/resolved/?Resolved_Since=2030-01-01`
 * and `?LIMIT=1` sent the whole table; `?OUTPUT=json` a CSV file).
 */
function rejectMisspeltParams(req: Request, table: ExportTableSpec): void {
  const wrong = misspeltParameter(req, MISSPELT);
  if (wrong === undefined) return;
  // one the export does not read either (`Format`): what to use instead, not a name that is a 400 too
  const instead = LIST_ONLY_FILTERS[wrong.meant];
  throw ApiError.invalidParameter(
    wrong.given,
    `Query parameter '${wrong.given}' is not one of the ${table.name} export's: parameter names are lowercase, with '_' ` +
      `(did you mean '${wrong.meant}'?${instead === undefined ? '' : ` The export does not read it either: ${instead}.`}); '${wrong.given}' would be ignored.`,
  );
}

/**
 * The filters no export reads: the list endpoints' (params.ts LIST_ONLY_FILTERS, each with what to
 * use instead), then every other filter name of the API (FILTER_NAMES: `model`, `source_slug`,
 * `scenario_id`, …), as README "The API" says of any route given a filter it does not read.
 */
const FOREIGN_FILTERS: readonly string[] = [
  ...Object.keys(LIST_ONLY_FILTERS),
  ...FILTER_NAMES.filter((name) => !(EXPORT_PARAMS as readonly string[]).includes(name) && !(name in LIST_ONLY_FILTERS)),
];

/**
 * A 400 for a filter that the export does not apply (FOREIGN_FILTERS): ignored, it would return
 * every row as if filtered (outside test: `/api/export/scores/?model=sim-gpt` and
 * `/api/export/claims/?source_slug=…` answered every row). An empty value is a parameter left out.
 */
function rejectListOnlyFilters(req: Request, table: ExportTableSpec): void {
  const name = firstGiven(req, FOREIGN_FILTERS);
  if (name === undefined) return;
  const takes = ['since', ...Object.keys(table.timeFilters), 'category', ...(table.status ? ['status'] : []), 'limit', 'output'];
  const why = LIST_ONLY_FILTERS[name] ?? `the export has no ${name} filter`;
  throw ApiError.invalidParameter(
    name,
    `Query parameter '${name}' does not apply to the ${table.name} export (${why}); it takes ${takes.join(', ')}.`,
    takes,
  );
}

export { DEFAULT_EXPORT_IDLE_TIMEOUT_MS, idleTimeoutFromEnv } from './settings.ts';

export interface ExportService {
  /** Exports running now (slot taken, until the file is deleted). */
  inFlightExports(): number;
  /** Resolves when no export is running (graceful shutdown: stop the server, then await this). */
  drain(): Promise<void>;
  /** Refuses new exports (429), waits for the running ones, closes the export DuckDB instance. */
  close(): Promise<void>;
  /** Resolves when the startup sweep of stale temp files has finished. */
  readonly swept: Promise<number>;
  readonly stats: Readonly<ExportStats>;
  /** Bytes the export instances hold of the files they read (DuckDB's external file cache, kept off). */
  cachedFileBytes(): Promise<number>;
  readonly tempDir: string;
  readonly proRowCap: number;
}

const services = new Set<ExportService>();

/** Exports in flight across every registered export service of this process. */
export function inFlightExports(): number {
  let n = 0;
  for (const s of services) n += s.inFlightExports();
  return n;
}

/** Resolves when every registered export service is idle. */
export async function drainExports(): Promise<void> {
  await Promise.all([...services].map((s) => s.drain()));
}

/** Registers `GET /api/export/:table` and returns the service handle (in-flight tracking, close). */
export function registerExportRoutes(app: Express, snapshots: SnapshotReader, deps: ExportDeps): ExportService {
  const logger = deps.logger;
  const tempDir = deps.tempDir ?? tmpdir();
  const proRowCap = deps.proRowCap ?? DEFAULT_PRO_ROW_CAP;
  if (!Number.isInteger(proRowCap) || proRowCap < 1) throw new RangeError(`proRowCap must be a positive integer, got ${proRowCap}`);
  const retryAfter = deps.retryAfterSeconds ?? 5;
  const highWaterMark = deps.highWaterMark ?? 4 << 20;
  const keyWaitMs = deps.keyWaitMs ?? 1000;
  const idleTimeoutMs = deps.idleTimeoutMs ?? idleTimeoutFromEnv();
  if (!Number.isInteger(idleTimeoutMs) || idleTimeoutMs < 1) throw new RangeError(`idleTimeoutMs must be a positive integer, got ${idleTimeoutMs}`);
  const engine = new ExportEngine({
    logger,
    tempDir,
    maxConcurrent: deps.maxConcurrent,
    maxPerKey: deps.maxPerKey,
    memoryLimit: deps.memoryLimit,
    threads: deps.threads,
    sliceThreads: deps.sliceThreads,
    firstSliceRows: deps.firstSliceRows,
    maxSliceRows: deps.maxSliceRows,
    sliceConcurrency: deps.sliceConcurrency,
  });

  const swept = mkdir(engine.tempDir, { recursive: true })
    .then(() => sweepStaleExports(engine.tempDir, { logger }))
    .catch((err: unknown) => {
      logger.warn({ err, dir: engine.tempDir }, 'stale export sweep failed');
      return 0;
    });

  // Every method of the route (GET, HEAD, OPTIONS, the 405s) is labelled with its table's route id
  // before anything can fail; GET and HEAD of a keyed caller are counted in its usage (as the
  // registry counts its routes: once the caller is through the front door, refusals included).
  // Another method (a 405) is counted as `unmatched`, as on every route. Table names match
  // case-insensitively, as paths and enumerated values do everywhere (`/api/export/RESOLVED/`).
  app.all('/api/export/:table', (req, res, next) => {
    const id = exportRouteId(exportTableParam(req));
    res.locals.routeId = id;
    const keyId = authOf(res).keyId;
    if (keyId !== null && (req.method === 'GET' || req.method === 'HEAD')) deps.countRoute?.(keyId, id);
    else if (keyId !== null && req.method !== 'OPTIONS') deps.countRoute?.(keyId, 'unmatched');
    next();
  });

  getRoute(app, '/api/export/:table', async (req: Request, res: Response) => {
    const auth = authOf(res);
    // Every line of this export names its request and key, as the request log line does (QA: a
    // cancelled export's line could not be joined to its request).
    const logger = deps.logger.child({ req_id: (req as Request & { id?: string }).id, key_id: auth.keyId });
    if (auth.plan === 'anonymous') throw ApiError.unauthorized('Export needs an API key (X-API-Key or Authorization: Bearer).');

    const tableName = exportTableParam(req);
    if (!isExportTable(tableName)) {
      throw ApiError.notFound(`No exportable table; exportable tables: ${EXPORT_TABLES.join(', ')}.`, {
        allowed: [...EXPORT_TABLES],
      });
    }
    const table = TABLE_SPECS[tableName];
    rejectBracketedParams(req);
    rejectMisspeltParams(req, table);
    const params = parseExportParams(req);
    rejectListOnlyFilters(req, table);
    if (!table.status && params.status !== 'all') {
      throw ApiError.invalidParameter('status', `Query parameter 'status' applies only to the predictions export.`, ['all']);
    }
    const timeParams = timeFilterParams(table, params);

    if (!planAtLeast(auth.plan, table.minPlan)) {
      throw ApiError.planRequired(table.minPlan, `Exporting ${table.name} requires the ${table.minPlan} plan.`);
    }
    const rules = PLAN_EXPORT_RULES[auth.plan];
    if (!rules.formats.includes(params.output)) {
      const needed = leastPlanForFormat(params.output);
      throw ApiError.planRequired(needed, `Export as ${params.output} requires the ${needed} plan; your plan exports ${rules.formats.join(', ')}.`);
    }
    const cap = rules.capped ? proRowCap : null;

    const slot = await engine.acquire(auth.keyId ?? `plan:${auth.plan}`, keyWaitMs);
    if (!slot.ok) {
      const perKey = engine.maxPerKey === 1
        ? 'One export per key runs at once; retry when yours has finished.'
        : `At most ${engine.maxPerKey} exports per key run at once; retry when one of yours has finished.`;
      throw slot.reason === 'key_busy'
        ? ApiError.rateLimited(retryAfter, perKey, { policy: 'exports_per_key', limit: engine.maxPerKey })
        : ApiError.rateLimited(retryAfter, `At most ${engine.maxConcurrent} exports run at once; retry later.`, { policy: 'exports', limit: engine.maxConcurrent });
    }
    const release = slot.release;
    // The key's share and the slot's place are back as soon as the last byte is handed to the
    // socket: a client that has its whole file and asks for the next one at once must not meet its
    // own finished export, nor another key's (the export still counts for shutdown's drain until
    // its temp file is deleted).
    res.once('finish', slot.releaseShare);
    const abort = new AbortController();
    const onClose = (): void => {
      if (!res.writableFinished) abort.abort();
    };
    res.once('close', onClose);
    if (res.destroyed) abort.abort(); // gone while waiting for its key's share
    // A client that keeps the connection open without reading would hold the slot (and the temp
    // file) for as long as it lingers: cut it off; the cancellation path below cleans up.
    let stalled = false;
    const stopWatching = watchSendProgress(res, idleTimeoutMs, () => {
      stalled = true;
      abort.abort();
      res.destroy();
    });
    const started = Date.now();
    try {
      await snapshots.withSnapshot(async (snap) => {
        snap.require(...table.snapshotTables);
        const encoder = ENCODERS[params.output];
        const sqlParams: Record<string, string | null> = { ...timeParams, category: params.category };
        if (table.status) sqlParams.status = params.status;
        if (table.name === 'predictions') sqlParams.headline_modes = snap.headlineModes.join(',');
        if (table.name === 'forecasts') sqlParams.as_of = snap.asOf.replace('T', ' ').replace(/Z$/, '');
        const job = {
          table,
          format: params.output,
          dataDir: snapshots.dataDir,
          snapshotId: snap.id,
          params: sqlParams,
          limit: params.limit,
          cap,
        };
        const filename = `quorum-${table.name}-${snap.id}.${encoder.extension}`;

        // A sliced body needs chunked transfer encoding: its end (the terminating chunk and the
        // X-Export-Rows trailer) is what tells a complete body from a cut one. A client that cannot
        // take one (HTTP/1.0 without `TE: chunked`, such as nginx's default proxy_http_version) gets
        // the whole file with Content-Length instead (QA: the Trailer header threw there, and the
        // 500 problem written after it crashed the server).
        if (table.sliceSource !== null && encoder.slices !== null && cap === null && res.useChunkedEncodingByDefault) {
          // Sliced: headers with the first complete slice, then each slice as it completes.
          if (req.method === 'HEAD') {
            // The GET's headers without making the file: its length and rows are known only at
            // its end (a trailer, which Node refuses to announce on a bodiless answer).
            res.status(200);
            res.setHeader('Content-Type', encoder.contentType);
            res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
            res.setHeader('X-Snapshot', snap.id);
            res.setHeader('X-Export-Sliced', 'true');
            res.end();
            return;
          }
          const framer = encoder.slices.kind === 'json-array' ? new JsonArrayFramer() : null;
          const map = framer ? (chunk: Buffer) => framer.push(chunk) : undefined;
          let bytes = 0;
          let result: { rows: number; slices: number };
          try {
            result = await engine.stream(job, abort.signal, async (slice) => {
              if (slice.index === 0) {
                res.status(200);
                res.setHeader('Content-Type', encoder.contentType);
                res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
                res.setHeader('X-Snapshot', snap.id);
                res.setHeader('X-Export-Sliced', 'true');
                res.setHeader('Trailer', 'X-Export-Rows');
                res.flushHeaders();
              }
              await sendFile(res, slice.file, highWaterMark, map).catch((err: unknown) => {
                // A response found destroyed before its 'close' event has run (onClose) aborts the
                // export here, so the engine counts the cancellation as it does any other.
                if (err instanceof ResponseClosed) abort.abort();
                throw err;
              });
              bytes += slice.bytes;
            });
            if (!res.headersSent) {
              // Nothing at all to send (JSON lines of no row): an empty body of the format.
              res.status(200);
              res.setHeader('Content-Type', encoder.contentType);
              res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
              res.setHeader('X-Snapshot', snap.id);
              res.setHeader('X-Export-Sliced', 'true');
              res.setHeader('Trailer', 'X-Export-Rows');
            }
          } catch (err) {
            // The engine counted the cancellation (it knows whether streaming had begun).
            if (err instanceof ResponseClosed || abort.signal.aborted) throw new ExportCancelled();
            throw err;
          }
          // The JSON array's closing bracket goes after the engine has finished: a client gone by
          // then is a cancellation the engine never saw, counted here (QA soak: these exports were
          // counted started and never completed nor cancelled).
          if (framer) {
            await writeChunk(res, framer.end()).catch(() => {
              engine.stats.cancelledDuringStream++;
              throw new ExportCancelled();
            });
          }
          res.addTrailers({ 'X-Export-Rows': String(result.rows) });
          res.end();
          logger.info(
            {
              export: table.name, output: params.output, rows: result.rows, bytes, slices: result.slices,
              ms: Date.now() - started, plan: auth.plan, snapshot: snap.id,
            },
            'export sent',
          );
          return;
        }

        await engine.run(
          job,
          abort.signal,
          async (produced) => {
            res.status(200);
            res.setHeader('Content-Type', encoder.contentType);
            res.setHeader('Content-Length', String(produced.bytes));
            res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
            res.setHeader('X-Snapshot', snap.id);
            res.setHeader('X-Export-Rows', String(produced.rows));
            if (cap !== null) {
              res.setHeader('X-Export-Row-Cap', String(cap));
              if (produced.truncated) res.setHeader('X-Export-Truncated', 'true');
            }
            if (req.method === 'HEAD') {
              res.end();
              return;
            }
            const logSent = (): void => {
              logger.info(
                {
                  export: table.name, output: params.output, rows: produced.rows, bytes: produced.bytes,
                  truncated: produced.truncated, ms: Date.now() - started, plan: auth.plan,
                  snapshot: snap.id,
                },
                'export sent',
              );
            };
            // Bytes the socket has taken (write callbacks), not bytes read from the file: after a
            // destroy the buffers read empty, and a download abandoned after 128 kB of 10 MB was
            // logged "export sent" and counted completed (QA).
            let flushed = 0;
            try {
              await sendFile(res, produced.file, highWaterMark, undefined, (n) => (flushed += n), produced.bytes);
              await endResponse(res);
            } catch (err) {
              // A client that has its Content-Length closes at once, and its close can reach the
              // response before its 'finish' does: every byte taken by the socket is a sent export,
              // not a cancelled one (QA: 1 in 15 complete downloads was counted as cancelled).
              if (flushed === produced.bytes && !stalled) {
                logSent();
                return;
              }
              if (abort.signal.aborted || res.destroyed || err instanceof ResponseClosed) {
                engine.stats.cancelledDuringStream++;
                throw new ExportCancelled();
              }
              throw err;
            }
            logSent();
          },
        );
      });
      engine.stats.completed++;
    } catch (err) {
      if (err instanceof ExportCancelled) {
        if (stalled) {
          engine.stats.stalled++;
          logger.warn(
            { export: table.name, output: params.output, ms: Date.now() - started, idle_timeout_ms: idleTimeoutMs },
            'export aborted: the client took no bytes within the idle timeout',
          );
        } else {
          logger.info({ export: table.name, output: params.output, ms: Date.now() - started }, 'export cancelled: client disconnected');
        }
        res.destroy();
        return;
      }
      // A problem written after the export's own headers were set must not carry them (a Trailer
      // on a response that turns out not to be chunked makes Node throw while writing it).
      if (!res.headersSent) for (const h of EXPORT_HEADERS) res.removeHeader(h);
      // Every export here has its slot (counted started): a problem it ends with (503 not_ready, a
      // snapshot lacking the table or deleted from under the server) is its outcome too (QA soak:
      // counted started and nothing else).
      engine.stats.failed++;
      if (err instanceof ApiError) throw err;
      logger.error({ err, export: table.name, output: params.output }, 'export failed');
      if (res.headersSent) {
        // The file was produced and sending it failed midway: cut the connection so the client
        // sees a short body (Content-Length), never a complete-looking one.
        res.destroy();
        return;
      }
      throw ApiError.internal('The export failed; no data was sent.');
    } finally {
      stopWatching();
      res.off('close', onClose);
      res.off('finish', slot.releaseShare);
      release();
    }
  });

  const service: ExportService = {
    inFlightExports: () => engine.inFlight,
    drain: () => engine.drain(),
    async close() {
      services.delete(service);
      await engine.close();
    },
    swept,
    stats: engine.stats,
    cachedFileBytes: () => engine.cachedFileBytes(),
    tempDir: engine.tempDir,
    proRowCap,
  };
  services.add(service);
  return service;
}

/** The `:table` path parameter, lower-cased (table names are lower-case; paths match case-insensitively). */
function exportTableParam(req: Request): string {
  return String(req.params.table ?? '').toLowerCase();
}
