/**
 * The read-only HTTP API over the published warehouse snapshot.
 *
 * `createApp({ dataDir })` opens the snapshot reader (one DuckDB instance, pooled connections,
 * CURRENT polled every `pollMs`) and builds the Express app. Conventions (DESIGN §7):
 * - every data response names its snapshot: `as_of` in the body, `X-Snapshot` header;
 * - `API-Version: 1` on every response; JSON as `application/json; charset=utf-8`;
 * - errors are RFC 9457 `application/problem+json` with a stable `code`, never a stack trace;
 * - trailing slash optional; unknown query parameters ignored; unknown route → 404 problem;
 *   a known path with a method other than GET/HEAD/OPTIONS → 405 problem with `Allow`;
 * - before a snapshot is loaded, data endpoints answer 503 `not_ready`.
 */
import express, { type ErrorRequestHandler, type Express } from 'express';
import type { Logger } from 'pino';
import { ApiError, PROBLEM_CONTENT_TYPE, toApiError } from './errors/problem.ts';
import { API_VERSION } from './http/respond.ts';
import { createLogger } from './logging/logger.ts';
import { requestLog } from './logging/request-log.ts';
import { registerEventsAccuracyRoutes } from './routes/events-accuracy.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerPredictionsAccuracyRoutes } from './routes/predictions-accuracy.ts';
import { registerPredictionsResolvedRoutes } from './routes/predictions-resolved.ts';
import { SnapshotReader } from './snapshot/reader.ts';

export interface CreateAppOptions {
  /** The warehouse root holding CURRENT and snapshots/ (QUORUM_DATA_DIR, default data/warehouse). */
  dataDir: string;
  logger?: Logger;
  /** How often CURRENT is checked for a new snapshot, in ms (default 2000; 0: only reload()). */
  pollMs?: number;
  /** DuckDB connections in the pool (default 4). */
  poolSize?: number;
}

export interface AppHandle {
  app: Express;
  snapshots: SnapshotReader;
  /** Stops polling and closes the DuckDB instance. */
  close(): Promise<void>;
}

export async function createApp(opts: CreateAppOptions): Promise<AppHandle> {
  const logger = opts.logger ?? createLogger();
  const snapshots = await SnapshotReader.open({
    dataDir: opts.dataDir,
    logger,
    pollMs: opts.pollMs,
    poolSize: opts.poolSize,
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('strict routing', false);

  app.use(requestLog(logger));
  app.use((_req, res, next) => {
    res.setHeader('API-Version', API_VERSION);
    res.setHeader('Cache-Control', 'no-cache');
    // Errors and non-data responses still name the snapshot being served, if any; data handlers
    // overwrite this with the snapshot they pinned.
    const current = snapshots.current;
    if (current) res.setHeader('X-Snapshot', current.id);
    next();
  });

  registerHealthRoutes(app, snapshots);
  registerPredictionsAccuracyRoutes(app, snapshots);
  registerEventsAccuracyRoutes(app, snapshots);
  registerPredictionsResolvedRoutes(app, snapshots);

  app.use((req) => {
    throw ApiError.notFound(`No endpoint at ${req.method} ${req.path}.`);
  });

  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    const problem = toApiError(err);
    if (problem.status >= 500 && problem.code === 'internal') {
      logger.error({ err, req_id: req.id, path: req.path }, 'unhandled error');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [k, v] of Object.entries(problem.headers)) res.setHeader(k, v);
    res
      .status(problem.status)
      .type(PROBLEM_CONTENT_TYPE)
      .send(JSON.stringify(problem.toProblem(req.originalUrl.split('?')[0])));
  };
  app.use(onError);

  let closed = false;
  return {
    app,
    snapshots,
    async close() {
      if (closed) return;
      closed = true;
      await snapshots.close();
    },
  };
}
