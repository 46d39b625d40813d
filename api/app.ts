/**
 * The HTTP API over the published warehouse snapshot.
 *
 * `createApp({ dataDir, ... })` opens the snapshot reader (one DuckDB instance, pooled connections,
 * CURRENT polled every `pollMs`), the key store and the usage store, and builds the Express app:
 *
 *   front (one layer, api/http/front.ts): request id, pino request log + Prometheus metrics hook,
 *   helmet headers, API-Version/X-Snapshot, authenticate (res.locals.auth, 401), quota (429)
 *   → JSON body parser for methods with a body (64 kB, 413; its error is raised after the route's
 *     entitlement check, or as the answer of an unknown path or method: bodyErrorOf)
 *   → /docs assets → registry routes (CORS on public reads, entitlement 403, per-route usage,
 *     handler; summary endpoints from the per-snapshot cache with ETag/304) → 404 → problem handler
 *
 * Conventions (DESIGN §7): every data response names its snapshot (`as_of`, `X-Snapshot`);
 * `API-Version: 1`; errors are RFC 9457 `application/problem+json` with a stable `code`, never a
 * stack trace; trailing slash optional; unknown query parameters ignored; unknown route → 404;
 * a known path with another method → 405 with `Allow`; before a snapshot is loaded, data
 * endpoints answer 503 `not_ready`. Routes are declared in api/routes/index.ts (registry: api/http/registry.ts).
 */
import { createRequire } from 'node:module';
import { parse as parseQuery } from 'node:querystring';
import type { Duplex } from 'node:stream';
import express, { type ErrorRequestHandler, type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import { ENTITLEMENTS } from './auth/entitlements.ts';
import { KeyStore } from './auth/keys.ts';
import { authOf } from './auth/middleware.ts';
import { DEFAULT_LIMITS, type PlanLimits } from './auth/plans.ts';
import { ResponseCache } from './cache/response-cache.ts';
import { registerExportRoutes, type ExportDeps, type ExportService } from './export/routes.ts';
import { exportRouteId } from './export/tables.ts';
import { ApiError, PROBLEM_CONTENT_TYPE, toApiError } from './errors/problem.ts';
import { BODY_LIMIT_BYTES, declaresOversizeBody, setBodyError, throwBodyError } from './http/body-error.ts';
import { answerClientError } from './http/client-error.ts';
import { expressPath, frontProblemCors, mountRoutes, routeIdMatcher, openApiDocument, primeCache, type ApiServices, type PrimedRequest, type RouteDef } from './http/registry.ts';
import { asksContinue, captureHeaders, front } from './http/front.ts';
import { QuotaKeeper, clientIp } from './limits/quota.ts';
import { UsageStore } from './limits/usage-store.ts';
import { createLogger, withKeyRedaction } from './logging/logger.ts';
import { createMetrics } from './metrics.ts';
import { DOCS_ASSETS, DOCS_ASSETS_ROUTE_ID, DOCS_INIT_JS } from './routes/docs.ts';
import { ROUTES } from './routes/index.ts';
import { warmFrontDoor } from './routes/front-door.ts';
import { reasoningLanguages } from './routes/prediction-feed.ts';
import { OVERVIEW_RESOLVED_LIMIT, PREDICTIONS_PAGE_LIMIT } from '../dashboard/src/first-reads.ts';
import { SnapshotReader, type PinnedSnapshot } from './snapshot/reader.ts';
import { defaultProbabilityOptions } from './probability/setup.ts';
import { ProbabilityService, type ProbabilityOptions } from './probability/service.ts';
import { loadEventsConfig, type EventsConfig, type WebhooksConfig } from '../pipeline/events/config.ts';
import { WebhookDispatcher } from './events/webhooks/dispatcher.ts';
import { EventFeed } from './events/feed.ts';
import { StreamHub } from './events/stream-hub.ts';

/** The largest JSON body any POST route reads (64 KiB; api/http/body-error.ts says why). */
export { BODY_LIMIT_BYTES };

export interface CreateAppOptions {
  /** The warehouse root holding CURRENT and snapshots/ (QUORUM_DATA_DIR, default data/warehouse).
   *  Keys and usage live under `<dataDir>/state/`. */
  dataDir: string;
  logger?: Logger;
  /** How often CURRENT is checked for a new snapshot, in ms (default 2000; 0: only reload()). */
  pollMs?: number;
  /** DuckDB connections in the pool (default 4). */
  poolSize?: number;
  /** Hours after which a shown market price is flagged stale (QUORUM_MAX_PRICE_AGE_HOURS; default 48). */
  maxPriceAgeHours?: number;
  /** Public reads open to anonymous callers (QUORUM_PUBLIC_BETA; default true). */
  publicBeta?: boolean;
  /** Request limits (defaults: the spec's). */
  limits?: Partial<PlanLimits>;
  /** Origins allowed to read public endpoints cross-origin (default '*'). */
  corsOrigins?: '*' | string[];
  /** Express `trust proxy` (default false: the client IP is the socket's). */
  trustProxy?: boolean | number;
  /** When the next scheduled pipeline run is (Cache-Control max-age); default: unknown (no-cache). */
  nextRunAt?: () => Date | null;
  /** How often the key file is checked for changes, in ms (default 1000). */
  keyRecheckMs?: number;
  /** How often usage counters are flushed, in ms (default 1000). */
  usageFlushMs?: number;
  /** Bounds of the response cache. */
  cache?: { maxEntries?: number; maxBytes?: number };
  /** Extra routes (same registry mechanism), mounted after the built-in ones. */
  extraRoutes?: readonly RouteDef[];
  /** The export module's options (api/export), or false to leave `/api/export/` out. */
  exports?: false | Omit<ExportDeps, 'logger'>;
  /** The probability endpoint's models and limits (api/probability/); default: from the environment
   *  (QUORUM_MODELS_FILE, else the bundled simulator started on first use); false: not offered (503). */
  probability?: false | ProbabilityOptions;
  /** Events (api/events/: the SSE stream): settings over the environment's (QUORUM_EVENTS_*,
   *  QUORUM_STREAM_*), or false to leave the stream out (503). */
  events?: false | (Partial<Omit<EventsConfig, 'webhooks'>> & { webhooks?: Partial<WebhooksConfig> });
  /** Responses cached as soon as a snapshot is loaded (default FIRST_READS), or false for none. */
  primeCache?: false | readonly PrimedRequest[];
}

/**
 * What a first visit reads: the dashboard overview's requests (dashboard/src/pages/overview.ts;
 * the query values come from dashboard/src/first-reads.ts, so the cache keys match) and the
 * predictions page's first page.
 * Primed after each snapshot load, so the first reader after a start or a publish does not wait
 * for the new snapshot's cold queries.
 */
export const FIRST_READS: readonly PrimedRequest[] = [
  { id: 'predictions.accuracy' },
  { id: 'events.accuracy' },
  { id: 'events.service_stats' },
  { id: 'predictions.resolved', query: { limit: OVERVIEW_RESOLVED_LIMIT } },
  { id: 'leaderboard' },
  { id: 'analysis.information_value' },
  { id: 'analysis.disagreement' },
  // in the snapshot's main reasoning language, as the predictions page asks for it (service_stats
  // `languages`, first); it was `en`, a 404 on a service run without English (outside test)
  { id: 'predictions.lang', params: mainLanguage, query: { limit: PREDICTIONS_PAGE_LIMIT } },
];

/** The path values of the main language's feed: the first of the snapshot's reasoning languages; null when it has none. */
async function mainLanguage(snap: PinnedSnapshot): Promise<{ lang: string } | null> {
  const main = (await reasoningLanguages(snap))[0];
  return main === undefined ? null : { lang: main.lang };
}

export interface AppHandle {
  app: Express;
  snapshots: SnapshotReader;
  services: ApiServices;
  routes: readonly RouteDef[];
  /**
   * The server's `clientError` listener: answers a request Node's HTTP parser refused with a
   * problem (api/http/client-error.ts), and logs and counts it like every other request (route
   * `unparsed`): before, a flood of malformed requests left no trace in the log or the metrics.
   */
  clientError(err: Error, socket: Duplex): void;
  /** From now on responses carry `Connection: close` (graceful shutdown). */
  beginShutdown(): void;
  /** Resolves once the cache priming under way (after the last snapshot load) is done. */
  primed(): Promise<void>;
  /** Flushes usage, stops polling and closes the DuckDB instance. */
  close(): Promise<void>;
}

/** Paths outside authentication and quotas: operational endpoints, the front door (the dashboard and
 *  its bundle under /dashboard/), docs and their assets. Compared in lower case, as the router
 *  matches paths (QA: `/HEALTHZ` and `/Docs` were served, but authenticated and charged: a bad key
 *  made them a 401 and a used-up anonymous quota a 429). */
export function isExemptPath(path: string): boolean {
  const p = path.toLowerCase();
  return (
    p === '/' || p === '/favicon.ico' || p === '/favicon.svg' || p.startsWith('/dashboard/') ||
    p === '/healthz' || p === '/healthz/' || p === '/readyz' || p === '/readyz/' || p === '/metrics' ||
    p === '/metrics/' || p === '/api/openapi.json' || p === '/docs' || p.startsWith('/docs/')
  );
}

export async function createApp(opts: CreateAppOptions): Promise<AppHandle> {
  // Every line the API writes has key-shaped text redacted, whichever logger it was given.
  const logger = withKeyRedaction(opts.logger ?? createLogger());
  const limits: PlanLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const publicBeta = opts.publicBeta ?? true;
  const routes = [...ROUTES, ...(opts.extraRoutes ?? [])];
  // Fail fast (before opening anything) on a route without an entitlement row.
  for (const r of routes) {
    if (!Object.hasOwn(ENTITLEMENTS, r.id)) throw new Error(`route ${r.path}: id ${r.id} has no row in ENTITLEMENTS`);
  }

  const keys = new KeyStore(opts.dataDir, {
    recheckMs: opts.keyRecheckMs,
    onError: (err) => logger.error({ err }, 'key file unreadable; keeping the previous keys'),
  });
  const usage = new UsageStore(opts.dataDir, { logger, flushMs: opts.usageFlushMs });
  const snapshots = await SnapshotReader.open({
    dataDir: opts.dataDir,
    logger,
    pollMs: opts.pollMs,
    poolSize: opts.poolSize,
    maxPriceAgeHours: opts.maxPriceAgeHours,
  });
  const envEvents = opts.events === false ? null : loadEventsConfig();
  const eventsConfig =
    envEvents && opts.events !== false
      ? { ...envEvents, ...opts.events, webhooks: { ...envEvents.webhooks, ...opts.events?.webhooks } }
      : null;
  const eventFeed = eventsConfig
    ? await EventFeed.open({ dataDir: opts.dataDir, logger, pollMs: eventsConfig.pollMs, retentionMs: eventsConfig.retentionMs })
    : null;
  const eventStream = eventFeed && eventsConfig ? new StreamHub(eventFeed, { ...eventsConfig, logger }) : null;
  // Webhook deliveries (api/events/webhooks/): the durable queue picks up where the last server stopped.
  const webhooks = eventFeed && eventsConfig ? new WebhookDispatcher(opts.dataDir, eventFeed, eventsConfig.webhooks, logger) : null;
  await webhooks?.start();
  const metrics = createMetrics();
  const quotas = new QuotaKeeper(limits, usage);
  let document: Record<string, unknown> | null = null;
  const probabilityOptions = opts.probability === undefined ? defaultProbabilityOptions(logger) : opts.probability;
  const probability = probabilityOptions ? new ProbabilityService(opts.dataDir, snapshots, logger, probabilityOptions) : undefined;
  const services: ApiServices = {
    probability,
    snapshots,
    cache: new ResponseCache(opts.cache),
    quotas,
    usage,
    keys,
    logger,
    publicBeta,
    corsOrigins: opts.corsOrigins ?? '*',
    nextRunAt: opts.nextRunAt ?? (() => null),
    openapi: () => (document ??= openApiDocument(routes, { publicBeta })),
    metricsText: async () => ({ contentType: metrics.registry.contentType, body: await metrics.registry.metrics() }),
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // querystring, as Express's 'simple' parser, but with no cap on the number of parameters: its
  // default maxKeys (1000) dropped every parameter after the thousandth, so a filter or a limit
  // placed there was silently not applied and a repeated one not refused (QA). The request line's
  // 16 KiB bounds the count.
  app.set('query parser', (text: string) => parseQuery(text, '&', '=', { maxKeys: 0 }));
  app.set('strict routing', false);
  app.set('trust proxy', opts.trustProxy ?? false);
  // The SSE hub for GET /api/stream/ (api/routes/stream.ts reads it from here).
  if (eventStream) app.locals.eventStream = eventStream;
  if (webhooks) app.locals.webhooks = webhooks;

  let shuttingDown = false;
  const helmetHeaders = captureHeaders(
    helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:'],
          fontSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          objectSrc: ["'none'"],
          baseUri: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
        },
      },
      crossOriginResourcePolicy: { policy: 'cross-origin' },
    }),
  );
  // lower case, as the router matches paths (QA: `/API/USAGE/` was charged, yet not counted)
  const unchargedPaths = new Set(routes.filter((r) => r.uncharged).map((r) => (r.path.endsWith('/') ? r.path : `${r.path}/`).toLowerCase()));
  const frontMw = front({
    logger,
    metrics,
    staticHeaders: helmetHeaders,
    snapshots,
    quotas,
    isExempt: isExemptPath,
    // routes flagged uncharged (the caller's own usage: readable when, above all when, the quota
    // is used up)
    isUncharged: (p) => unchargedPaths.has((p.endsWith('/') ? p : `${p}/`).toLowerCase()),
    shuttingDown: () => shuttingDown,
    auth: {
      keys,
      isExempt: isExemptPath,
      onFailure: (req, res) => quotas.chargeFailedAuth(res, clientIp(req)),
    },
  });
  // Bodies are only read for methods that carry one. A body that cannot be parsed (over 64 kB:
  // 413; not JSON: 400) is kept, not raised, until the route has checked the caller's plan and
  // scope: a caller who may not use the route gets its 403 whatever the body (QA: an api key's
  // malformed POST to an enterprise route was a 400, the same request with a valid body a 403).
  // An unknown path or method answers it before its 404 or 405, so an oversize body is a 413 everywhere.
  const json = express.json({ limit: BODY_LIMIT_BYTES });
  app.use((req, res, next) => {
    frontMw(req, res, (err?: unknown) => {
      if (err) return next(err);
      if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return next();
      // A body declared over the limit is refused as its headers arrive: express.json reads a body
      // it refuses to the end before it answers (outside test: a 413 for 200 MB came after all of it
      // was read). One that was not invited (Expect: 100-continue, api/server.ts) closes the
      // connection after the answer, so the body is never expected; any other is read and thrown
      // away by Node behind the answer, the connection kept.
      if (declaresOversizeBody(req)) {
        setBodyError(res, ApiError.payloadTooLarge(BODY_LIMIT_BYTES));
        if (asksContinue(req)) res.setHeader('Connection', 'close');
        return next();
      }
      json(req, res, (bodyErr?: unknown) => {
        if (bodyErr) setBodyError(res, bodyErr);
        next();
      });
    });
  });

  // absolute-path.js only: the package's index loads the whole UI bundle into the process.
  const swaggerDir = (createRequire(import.meta.url)('swagger-ui-dist/absolute-path.js') as () => string)();
  // The docs page's assets are no registry route: labelled `docs.assets` in the request log and
  // the metrics' `route` (QA: they were `unmatched`, a 200 counted as a path no route answers).
  app.get('/docs/quorum-init.js', (_req, res) => {
    res.locals.routeId = DOCS_ASSETS_ROUTE_ID;
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('application/javascript').send(DOCS_INIT_JS);
  });
  // Only the three files the /docs page loads: the package also ships its own stock index.html and
  // swagger-initializer.js, which point at the public Petstore example, not at this API.
  const docsAssets = express.static(swaggerDir, { index: false, redirect: false, maxAge: '1h', fallthrough: true });
  app.use('/docs', (req, res, next) => {
    if (!DOCS_ASSETS.has(req.path) || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    res.locals.routeId = DOCS_ASSETS_ROUTE_ID;
    docsAssets(req, res, next);
  });
  // Another method on one of them: 405 with Allow (OPTIONS: 204), as on every known path (QA: a
  // 404 not_found, counted `unmatched`, for a file the GET serves).
  app.use('/docs', (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || !(DOCS_ASSETS.has(req.path) || req.path === '/quorum-init.js')) return next();
    res.locals.routeId = DOCS_ASSETS_ROUTE_ID;
    const allow = ['GET', 'HEAD', 'OPTIONS'];
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', allow.join(', '));
      res.status(204).end();
      return;
    }
    throwBodyError(res);
    throw ApiError.methodNotAllowed(req.method, allow);
  });

  mountRoutes(app, routes, services);

  // The export module mounts `GET /api/export/:table` itself (documented by routes/export-doc.ts).
  let exportService: ExportService | null = null;
  if (opts.exports !== false) {
    // The registry counts its routes' usage per key; the export module labels its requests
    // `export.<table>` itself and counts them through this.
    const countRoute = (keyId: string, routeId: string): void => usage.countRoute(keyId, routeId);
    exportService = registerExportRoutes(app, snapshots, { logger, ...(opts.exports ?? {}), countRoute });
  }
  const exportStats = exportService?.stats ?? null;
  metrics.watch({
    exportStats: exportStats ? () => exportStats : undefined,
    streamClients: eventStream ? () => eventStream.clients : undefined,
    snapshotAsOf: () => snapshots.current?.asOf ?? null,
    webhooks: webhooks ? () => ({ attempts: webhooks.attempts, ...webhooks.queue.backlog() }) : undefined,
  });
  if (snapshots.current) metrics.snapshotLoaded();
  snapshots.onLoaded(() => metrics.snapshotLoaded());

  app.use((req, res) => {
    // charged like any request of the key: counted as `unmatched`, so the routes add up
    const keyId = authOf(res).keyId;
    if (keyId !== null && !isExemptPath(req.path)) usage.countRoute(keyId, 'unmatched');
    throwBodyError(res);
    throw ApiError.notFound(`No endpoint at ${req.method} ${req.path}.`);
  });

  // The front door's 401/429 come before any route's CORS: public reads get it here.
  const routeIdOf = routeIdMatcher(routes);
  // An export path by its table, as the export module labels every method of it (export.<table>,
  // export.unknown): the one documented export route's id named every table's (QA: a 401 on
  // /api/export/resolved/ was logged and counted in the metrics as export.predictions).
  const routeOf = (method: string, path: string): string | undefined => {
    const table = /^\/api\/export\/([^/]+)\/?$/i.exec(path)?.[1];
    if (table === undefined) return routeIdOf(method, path);
    let name = '';
    try {
      name = decodeURIComponent(table).toLowerCase();
    } catch {
      // not decodable: no table
    }
    return exportRouteId(name);
  };
  const problemCors = frontProblemCors(routeOf, services);
  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    const problem = toApiError(err);
    if (problem.status >= 500 && problem.code === 'internal') {
      logger.error({ err, req_id: req.id, path: req.path }, 'unhandled error');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // A 429 of a route's own limit (export slots, streams per key) after the front door charged the
    // key: refused requests are not charged, only recorded as rejected, as the plan's own 429 and the
    // probability scope's are (QA: a stream refused for streams_per_key was charged, rejected 0).
    if (problem.status === 429 && res.locals.charged === true) quotas.refuseCharged(res, authOf(res));
    for (const [k, v] of Object.entries(problem.headers)) res.setHeader(k, v);
    if (problem.status === 401 || problem.status === 429) problemCors(req, res);
    // a problem raised before the route (front door, body parser) still counts under its route
    if (res.locals.routeId === undefined) {
      const id = routeOf(req.method, req.path);
      if (id !== undefined) res.locals.routeId = id;
      // A path parameter that does not decode (`%FF`) is refused by the router before the route's
      // handlers run, after the front door charged the key: counted here, so the key's routes add
      // up to the requests charged (QA: 7 such requests were charged and in no route of /api/usage/).
      const keyId = authOf(res).keyId;
      if (err instanceof URIError && keyId !== null && req.method !== 'OPTIONS' && !isExemptPath(req.path)) usage.countRoute(keyId, id ?? 'unmatched');
    }
    res
      .status(problem.status)
      .type(PROBLEM_CONTENT_TYPE)
      .send(JSON.stringify(problem.toProblem(req.originalUrl.split('?')[0])));
  };
  app.use(onError);

  let closed = false;
  // One priming pass at a time, after each snapshot load; close() waits for the one under way.
  let priming: Promise<unknown> = Promise.resolve();
  const firstReads = opts.primeCache === false ? [] : (opts.primeCache ?? FIRST_READS);
  const prime = (): void => {
    if (firstReads.length === 0 || closed) return;
    priming = priming
      .then(async () => {
        const t0 = performance.now();
        const responses = await primeCache(routes, services, firstReads, () => closed || shuttingDown);
        logger.info({ snapshot: snapshots.currentId, responses, ms: Math.round(performance.now() - t0) }, 'first reads cached');
      })
      .catch(() => undefined);
  };
  // an older snapshot's cached answers are never served again: freed at once, before priming
  snapshots.onLoaded((id) => {
    services.cache.retainOnly(id);
    prime();
  });
  if (firstReads.length > 0) {
    // The shell, the OpenAPI document and the compressed dashboard files, once, after start-up
    // (a turn later, so the caller gets its app first).
    priming = priming.then(() => new Promise((r) => setImmediate(r))).then(() => {
      if (!closed) warmFrontDoor(services);
    }).catch((err: unknown) => logger.debug({ err }, 'front door warm-up skipped'));
  }
  if (snapshots.currentId !== null) prime();
  return {
    app,
    snapshots,
    services,
    routes,
    clientError(err, socket) {
      const answer = answerClientError(err, socket);
      if (!answer) return;
      metrics.unparsed(answer.method, answer.status);
      logger.info({ method: answer.method, path: answer.path ?? null, status: answer.status, code: answer.code, route: 'unparsed' }, 'request');
    },
    async primed() {
      await priming;
    },
    beginShutdown() {
      shuttingDown = true;
      eventStream?.closeAll(); // open streams would otherwise hold the shutdown until its timeout
    },
    async close() {
      if (closed) return;
      closed = true;
      await priming;
      eventStream?.close();
      await webhooks?.close();
      await eventFeed?.close();
      await exportService?.close();
      await usage.close();
      await probability?.close();
      await snapshots.close();
    },
  };
}

export { expressPath };
