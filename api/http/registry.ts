/**
 * THE ROUTE REGISTRY — every HTTP route of the API is declared here once, as data, and both the
 * Express routes and the OpenAPI 3.1 document (`/api/openapi.json`) are generated from it.
 *
 * HOW TO ADD A ROUTE
 * 1. Pick a route id and make sure it has a row in api/auth/entitlements.ts (ENTITLEMENTS): that
 *    row is its access rule (open / public read / minimum plan / scope). `mountRoutes` refuses ids
 *    without a row.
 * 2. In a file under api/routes/, export a definition built with `jsonRoute({...})` (snapshot data
 *    answered as JSON; optionally cached per snapshot with ETag/304) or `rawRoute({...})` (you
 *    write the response yourself: streams, text, HTML, non-snapshot JSON):
 *      export const fooRoute = jsonRoute({
 *        id: 'predictions.edges',                 // ENTITLEMENTS key, also the OpenAPI operationId
 *        path: '/api/predictions/edges/',          // as the spec writes it, `{name}` for path params
 *        summary: 'Divergence signals', tags: ['predictions'],
 *        query: z.object({ min_edge: z.number().optional() }),   // documentation of the inputs
 *        response: EdgesResponse,                  // zod schema of the 200 body (tests check bodies)
 *        errors: [400],                            // documented statuses beyond the common ones
 *        cache: true,                              // per-snapshot cache + ETag + Cache-Control
 *        input: (req) => ({ minEdge: ... }),       // parse/validate with api/http/params.ts; throws 400/404
 *        data: async (snap, input) => ({ edges: await snap.query('edges', {...}) }),
 *      });
 * 3. Add it to ROUTES in api/routes/index.ts. That is all: auth, entitlement, quota, CORS, metrics,
 *    logging, caching, 405/OPTIONS handling and the OpenAPI entry follow from the definition.
 *    test/api/openapi.test.ts fails if an Express route is missing from the document.
 * 4. Parse every input with THE parsers (api/http/params.ts: integer, number, boolean, enum,
 *    timestamp; api/http/cursor.ts: keyset cursors bound to the route by kind), never with ad-hoc
 *    Number()/BigInt()/Date: test/api/fuzz.test.ts fuzzes every path and query parameter the
 *    definition documents (`params`, `query`) and fails on any 5xx, and test/api/public-beta.test.ts
 *    checks the route's access against its entitlement row with the beta on and off.
 *
 * Conventions: paths are matched with an optional trailing slash; GET routes answer HEAD and
 * OPTIONS (with `Allow`), other methods get a 405 problem. `input` runs before the snapshot is
 * pinned; its result (JSON-stringified) is the cache key, so return the normalized request.
 */
import cors from 'cors';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { foreignFilterCheck, rejectBracketedParams } from './params.ts';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from 'zod-openapi';
import type { Logger } from 'pino';
import {
  ENTITLEMENTS,
  assertEntitled,
  isPublic,
  isRouteId,
  requiredPlan,
  type Entitlement,
  type RouteId,
} from '../auth/entitlements.ts';
import { authOf } from '../auth/middleware.ts';
import type { KeyStore } from '../auth/keys.ts';
import { GZIP_MIN_BYTES, ResponseCache, gzipEtag, gzipped, ifNoneMatch, type CachedBody, type EncodedBody } from '../cache/response-cache.ts';
import { ApiError, PROBLEM_CODES } from '../errors/problem.ts';
import type { QuotaKeeper } from '../limits/quota.ts';
import type { UsageStore } from '../limits/usage-store.ts';
import type { PinnedSnapshot, SnapshotReader } from '../snapshot/reader.ts';
import { throwBodyError } from './body-error.ts';
import { API_VERSION } from './respond.ts';
import { STREAM_SCHEMAS, webhooksDocument } from '../events/payloads.ts';

/** What route handlers can use. */
export interface ApiServices {
  snapshots: SnapshotReader;
  /** The probability endpoint's service (api/probability/); absent: the endpoint answers 503. */
  probability?: import('../probability/service.ts').ProbabilityService;
  cache: ResponseCache;
  quotas: QuotaKeeper;
  usage: UsageStore;
  keys: KeyStore;
  logger: Logger;
  publicBeta: boolean;
  corsOrigins: '*' | string[];
  /** When the next pipeline run is scheduled (Cache-Control max-age); null: unknown. */
  nextRunAt: () => Date | null;
  /** The generated OpenAPI document (set after all routes are mounted). */
  openapi: () => Record<string, unknown>;
  /** Prometheus text exposition. */
  metricsText: () => Promise<{ contentType: string; body: string }>;
}

export type Method = 'get' | 'post' | 'delete';
export type ZodObj = z.ZodObject<z.ZodRawShape>;

interface RouteBase {
  id: RouteId;
  method?: Method;
  /** OpenAPI form as the spec writes it, e.g. `/api/predictions/accuracy/{category}`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Path parameters (documentation; names must match the `{name}` segments). */
  params?: ZodObj;
  /**
   * Query parameters (documentation, and the route's own: a filter another route reads given here
   * is refused, foreignFilterCheck).
   */
  query?: ZodObj;
  /** Where the figures a refused filter asks for are, added to its 400 (foreignFilterCheck). */
  filterHint?: string;
  /** Request body (POST routes). */
  body?: z.ZodType;
  /** Request headers the route reads beyond the key (documentation, e.g. Idempotency-Key). */
  headers?: ZodObj;
  /** Error statuses documented beyond the common ones (401, 403, 429, 500, 503 where relevant). */
  errors?: readonly number[];
  /** Leave out of the OpenAPI document (e.g. /docs, which is not part of the API). */
  hidden?: boolean;
  /** A raw route whose body carries an ETag and that answers a matching If-None-Match with a 304 (documented). */
  conditional?: boolean;
  /** Authenticated but not charged to the quota nor counted in usage (the caller's own usage). */
  uncharged?: boolean;
  /** Documented here but mounted by its own module (e.g. api/export/routes.ts). */
  mountedElsewhere?: boolean;
}

export interface JsonRoute<I> extends RouteBase {
  kind: 'json';
  /** Zod schema of the 200 body (without `as_of`, which is added to every snapshot body). */
  response: ZodObj;
  /** Serve from the per-snapshot cache with a strong ETag, 304 and Cache-Control. */
  cache?: boolean;
  /** Parses and validates the request (throws ApiError 400/404); the result is the cache key. */
  input?: (req: Request) => I;
  data: (snap: PinnedSnapshot, input: I, ctx: RouteContext) => Promise<Record<string, unknown>>;
}

export interface RawRoute extends RouteBase {
  kind: 'raw';
  /** The success status the handler answers with (documentation; default 200; 204 has no body). */
  status?: 200 | 201 | 202 | 204;
  /** Documented success responses by media type (zod schema or a plain OpenAPI schema). */
  responses: Record<string, { schema: z.ZodType | Record<string, unknown> }>;
  responseDescription?: string;
  /** Headers of the success response beyond the common ones: name → description (documentation). */
  responseHeaders?: Record<string, string>;
  /** Headers of an error response beyond the common ones, by status: name → description (documentation). */
  errorHeaders?: Partial<Record<number, Record<string, string>>>;
  handle: (req: Request, res: Response, ctx: RouteContext) => void | Promise<void>;
}

export type RouteDef = JsonRoute<any> | RawRoute;

export interface RouteContext {
  req: Request;
  res: Response;
  services: ApiServices;
}

export function jsonRoute<I>(def: Omit<JsonRoute<I>, 'kind'>): JsonRoute<I> {
  return { kind: 'json', ...def };
}

export function rawRoute(def: Omit<RawRoute, 'kind'>): RawRoute {
  return { kind: 'raw', ...def };
}

/**
 * A fixed document: `GET path` answers `body` as `type`, publicly cacheable for `maxAgeSeconds`;
 * an operations route left out of the OpenAPI document (the docs page, the front door's icons).
 */
export function staticRoute(def: {
  id: RouteId;
  path: string;
  summary: string;
  type: string;
  body: string | Buffer;
  maxAgeSeconds: number;
}): RawRoute {
  const { type, body, maxAgeSeconds, ...rest } = def;
  const cache = `public, max-age=${maxAgeSeconds}`;
  return rawRoute({
    ...rest,
    tags: ['operations'],
    hidden: true,
    responses: { [type]: { schema: z.string() } },
    handle: (_req, res) => {
      res.setHeader('Cache-Control', cache);
      res.status(200).type(type).send(body);
    },
  });
}

/** `/a/{b}/` → `/a/:b` (trailing slash optional: the app's router is not strict). */
export function expressPath(openapiPath: string): string {
  const p = openapiPath.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

function stableKey(input: unknown): string {
  return JSON.stringify(input ?? null, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? '';
}

const EXPOSED_HEADERS = [
  'ETag', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-RateLimit-Remaining', 'X-Request-Id', 'X-Snapshot',
  'API-Version',
];

const EXPOSED_HEADERS_VALUE = EXPOSED_HEADERS.join(',');

/**
 * How long a cached answer may be reused without asking again, at most: a snapshot is published
 * whenever a run finishes (minutes after the schedule's tick, and at any time from a manual run,
 * a backfill or an upgrade's rescore), not at the tick, so a max-age up to the next tick kept the
 * old snapshot in caches for hours after a publish (QA). Past it a cache revalidates with the ETag
 * (a 304 while the snapshot is the same).
 */
export const MAX_FRESH_SECONDS = 60;

/** `shared`: a shared cache may keep the answer (a public read asked without a key). */
function cacheControl(services: ApiServices, shared: boolean): string {
  const next = services.nextRunAt();
  if (!next) return `${shared ? 'public' : 'private'}, no-cache`;
  const s = Math.min(MAX_FRESH_SECONDS, Math.max(0, Math.floor((next.getTime() - Date.now()) / 1000)));
  return `${shared ? 'public' : 'private'}, max-age=${s}`;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function sendCached(req: Request, res: Response, entry: CachedBody, cc: string): void {
  res.setHeader('X-Snapshot', entry.snapshotId);
  sendBody(req, res, entry, { type: JSON_TYPE, cacheControl: cc });
}

/**
 * A body with its strong ETag (a 304 on If-None-Match), gzipped when the request accepts it and
 * the body is `gzipFrom` bytes or more (default GZIP_MIN_BYTES): each coding its own ETag
 * (gzipEtag), `Vary: Accept-Encoding`. The one way cached JSON, the OpenAPI document and the
 * dashboard's files go out (QA: no JSON answer was compressed; a page of predictions is 140 kB,
 * the OpenAPI document 500 kB).
 */
export function sendBody(
  req: Request,
  res: Response,
  entry: EncodedBody,
  opts: { type: string; cacheControl: string; gzipFrom?: number },
): void {
  const worth = entry.body.length >= (opts.gzipFrom ?? GZIP_MIN_BYTES);
  const gzip = worth && acceptsGzip(req);
  const etag = gzip ? gzipEtag(entry.etag) : entry.etag;
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', opts.cacheControl);
  if (worth) res.vary('Accept-Encoding'); // added to CORS's `Vary: Origin`, never replacing it
  // The 304 names the representation negotiated for this request: a tag of the other coding
  // does not match it.
  if (ifNoneMatch(req.headers['if-none-match'], etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const body = gzip ? gzipped(entry) : entry.body;
  res.statusCode = 200;
  res.setHeader('Content-Type', opts.type);
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

/** sendBody of a JSON body. */
export function sendJsonBody(req: Request, res: Response, entry: EncodedBody, cacheControl: string): void {
  sendBody(req, res, entry, { type: JSON_TYPE, cacheControl });
}

/**
 * Whether to send the gzip coding: Accept-Encoding negotiated by Express (`accepts`/`negotiator`),
 * q-values included, so `gzip;q=0` or `identity;q=1, gzip;q=0.5` get the plain body. Nothing
 * acceptable at all (`*;q=0`): the plain body too (RFC 9110 §12.5.3 lets an identity body through).
 * A request without the header (most API clients) skips the negotiation.
 */
export function acceptsGzip(req: Request): boolean {
  return req.headers['accept-encoding'] !== undefined && req.acceptsEncodings('gzip', 'identity') === 'gzip';
}

function jsonHandler(def: JsonRoute<unknown>, services: ApiServices): RequestHandler {
  const publicRead = isPublic(def.id, services.publicBeta);
  const refuseForeignFilters = foreignFilterCheck(def.path, def.query ? Object.keys(def.query.shape) : [], def.filterHint, 'next_cursor' in def.response.shape);
  return async (req, res) => {
    const ctx: RouteContext = { req, res, services };
    refuseForeignFilters(req);
    const input = def.input ? def.input(req) : ({} as unknown);
    if (!def.cache) {
      await services.snapshots.withSnapshot(async (snap) => {
        const body = await def.data(snap, input, ctx);
        res.setHeader('X-Snapshot', snap.id);
        res.status(200).json({ ...body, as_of: snap.asOf });
      });
      return;
    }
    const reqKey = stableKey(input);
    // A keyed answer carries that key's quota headers (RateLimit): private to caches, though its
    // body is everyone's (QA: public, so a shared cache could hand one key's quota to every reader).
    const shared = publicRead && authOf(res).keyId === null;
    // A public read's answer depends on the key headers (quota headers, or a 401 for a bad key):
    // a shared cache must not hand the anonymous copy to a keyed request (outside test).
    if (publicRead) {
      res.vary('Authorization');
      res.vary('X-API-Key');
    }
    const current = services.snapshots.currentId;
    if (current !== null) {
      const hit = services.cache.get(ResponseCache.key(current, def.id, reqKey));
      if (hit) return sendCached(req, res, hit, cacheControl(services, shared));
    }
    await services.snapshots.withSnapshot(async (snap) => {
      sendCached(req, res, await fillCache(def, snap, input, reqKey, ctx), cacheControl(services, shared));
    });
  };
}

/** A cached route's body for `input` from `snap`, rendered and stored under its cache key (a reader's request and priming alike). */
async function fillCache(def: JsonRoute<unknown>, snap: PinnedSnapshot, input: unknown, reqKey: string, ctx: RouteContext): Promise<CachedBody> {
  const body = await def.data(snap, input, ctx);
  const buf = Buffer.from(JSON.stringify({ ...body, as_of: snap.asOf }), 'utf8');
  return ctx.services.cache.set(ResponseCache.key(snap.id, def.id, reqKey), snap.id, buf);
}

/** A request the response cache is primed with: a cached JSON route, its path and query values. */
export interface PrimedRequest {
  id: RouteId;
  /** The path values, or how to read them from the snapshot (null: nothing to prime there). */
  params?: Record<string, string> | ((snap: PinnedSnapshot) => Promise<Record<string, string> | null>);
  query?: Record<string, string>;
}

/**
 * Fills the per-snapshot response cache for `requests` from the served snapshot, one after the
 * other, exactly as the first reader asking would (same input parsing, same cache key): the first
 * visit after a start or a publish (the dashboard's overview, say) is then answered from memory
 * instead of paying the new snapshot's cold queries. Bypasses quotas, usage and logs: nobody asked.
 * A request that fails is skipped (debug log); `stopped()` ends the pass early (shutdown).
 * Resolves to the number of responses cached.
 */
export async function primeCache(
  routes: readonly RouteDef[],
  services: ApiServices,
  requests: readonly PrimedRequest[],
  stopped: () => boolean,
): Promise<number> {
  let primed = 0;
  for (const r of requests) {
    if (stopped()) break;
    const def = routes.find((d): d is JsonRoute<unknown> => d.id === r.id && d.kind === 'json' && (d.method ?? 'get') === 'get');
    if (!def?.cache) continue;
    try {
      await services.snapshots.withSnapshot(async (snap) => {
        const params = typeof r.params === 'function' ? await r.params(snap) : (r.params ?? {});
        if (params === null) return;
        const req = { method: 'GET', params, query: r.query ?? {}, headers: {} } as unknown as Request;
        const input = def.input ? def.input(req) : ({} as unknown);
        const reqKey = stableKey(input);
        if (services.cache.get(ResponseCache.key(snap.id, def.id, reqKey)) || stopped()) return;
        await fillCache(def, snap, input, reqKey, { req, res: undefined as unknown as Response, services });
        primed++;
      });
    } catch (err) {
      services.logger.debug({ err, route: r.id }, 'cache priming skipped a request');
    }
  }
  return primed;
}

/** `{name}` segments of an OpenAPI path template as one path segment; the trailing slash optional. */
function templateRegExp(openapiPath: string): RegExp {
  const body = openapiPath
    .replace(/\/$/, '')
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}/?$`);
}

/**
 * The route id of a request a route never saw (a problem from the front door or the body parser),
 * so that metrics and logs count it under its route, not as unmatched. Undefined: no such route.
 */
export function routeIdMatcher(routes: readonly RouteDef[]): (method: string, path: string) => string | undefined {
  const table = routes.map((r) => ({ method: (r.method ?? 'get').toUpperCase(), re: templateRegExp(r.path), id: r.id }));
  return (method, path) => {
    const m = method === 'HEAD' ? 'GET' : method;
    return table.find((t) => t.method === m && t.re.test(path))?.id;
  };
}

/**
 * CORS for a problem answered before any route ran (the front door's 401 and 429): on the path of a
 * public read, the same Access-Control headers the route itself would have sent, so that a browser
 * can read the problem and its Retry-After. `routeOf`: routeIdMatcher's lookup
 * (the GET route that would have answered the path). Returns the function app.ts's error handler calls.
 */
export function frontProblemCors(
  routeOf: (method: string, path: string) => string | undefined,
  services: Pick<ApiServices, 'publicBeta' | 'corsOrigins'>,
) {
  return (req: Request, res: Response): void => {
    const origin = req.headers.origin;
    if (res.getHeader('Access-Control-Allow-Origin') !== undefined) return;
    // '*' goes on every answer (as on the routes); a listed origin only where one was sent
    if (origin === undefined && services.corsOrigins !== '*') return;
    const id = routeOf('GET', req.path);
    if (id === undefined || !isRouteId(id) || !isPublic(id, services.publicBeta)) return;
    if (services.corsOrigins === '*') res.setHeader('Access-Control-Allow-Origin', '*');
    else if (origin !== undefined && services.corsOrigins.includes(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.vary('Origin');
    } else return;
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS_VALUE);
  };
}

/**
 * A known path with another method: 405 (a kept body error first, as on an unknown path). Charged
 * like any request of the key, so it is counted, as `unmatched` (no route of that method), and the
 * key's routes add up to the requests charged (`uncharged`: the path is never charged, nor counted).
 */
const OTHER_METHODS_ERROR = (allow: readonly string[], services: ApiServices, uncharged: boolean) => (req: Request, res: Response) => {
  const keyId = authOf(res).keyId;
  if (keyId !== null && !uncharged) services.usage.countRoute(keyId, 'unmatched');
  throwBodyError(res);
  throw ApiError.methodNotAllowed(req.method, allow);
};

/**
 * Mounts every route: per route, `res.locals.routeId`, CORS (public reads only), the entitlement
 * check, per-route usage, then the handler. Routes sharing a path share one 405/OPTIONS handler.
 */
export function mountRoutes(app: Express, routes: readonly RouteDef[], services: ApiServices): void {
  const seen = new Set<string>();
  const byPath = new Map<string, RouteDef[]>();
  for (const r of routes) {
    if (!isRouteId(r.id)) throw new Error(`route ${r.path}: id ${String(r.id)} has no row in ENTITLEMENTS`);
    if (r.mountedElsewhere) continue;
    const sig = `${r.method ?? 'get'} ${expressPath(r.path)}`;
    if (seen.has(sig)) throw new Error(`route ${sig} is registered twice`);
    seen.add(sig);
    const p = expressPath(r.path);
    const list = byPath.get(p);
    if (list) list.push(r);
    else byPath.set(p, [r]);
  }

  for (const [p, defs] of byPath) {
    const methods = defs.map((d) => (d.method ?? 'get').toUpperCase());
    const allow = [...new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'])];
    const allowHeader = allow.join(', ');
    const anyPublic = defs.some((d) => isPublic(d.id, services.publicBeta));
    const corsMw = anyPublic
      ? cors({
          origin: services.corsOrigins === '*' ? '*' : services.corsOrigins,
          methods: allow,
          exposedHeaders: EXPOSED_HEADERS,
          maxAge: 600,
        })
      : null;
    const route = app.route(p);
    for (const def of defs) {
      const handler = def.kind === 'json' ? jsonHandler(def, services) : rawHandler(def, services);
      const publicRoute = isPublic(def.id, services.publicBeta);
      const id = def.id;
      const chain: RequestHandler[] = [];
      const staticCors = publicRoute && services.corsOrigins === '*';
      if (publicRoute && corsMw && !staticCors) chain.push(corsMw);
      // route id (metrics, logs), CORS for public reads, entitlement (403), per-route usage
      chain.push((req, res, next) => {
        res.locals.routeId = id;
        // On every answer, with an Origin or not: the header is then the same for all, so a
        // shared cache that stored an answer to a request without Origin still serves a browser's
        // cross-origin read one it accepts (QA: sent only with an Origin, and no Vary).
        if (staticCors) {
          res.setHeader('Access-Control-Allow-Origin', '*');
          res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS_VALUE);
        }
        const auth = authOf(res);
        // counted before the entitlement check: a 403 was charged to the quota too, so the routes
        // add up to the requests charged
        if (auth.keyId !== null && !def.uncharged) services.usage.countRoute(auth.keyId, id);
        assertEntitled(id, auth, services.publicBeta);
        throwBodyError(res); // an unparsable body, once the caller may use the route
        rejectBracketedParams(req);
        next();
      });
      chain.push(handler);
      route[def.method ?? 'get'](...chain);
    }
    route.options((req, res, next) => {
      res.locals.routeId = defs[0]!.id;
      res.setHeader('Allow', allowHeader);
      if (corsMw && req.headers.origin !== undefined) return corsMw(req, res, next);
      res.status(204).end();
    });
    route.all(OTHER_METHODS_ERROR(allow, services, defs.every((d) => d.uncharged === true)));
  }
}

function rawHandler(def: RawRoute, services: ApiServices): RequestHandler {
  // The API's own raw routes (the stream, webhooks, usage, probability) refuse a filter they do not
  // read, as the JSON routes do (QA: /api/stream/?venue=polymarket streamed every venue's events and
  // /api/webhooks/?status=active listed disabled subscriptions, each with 200 as if filtered); the
  // operations routes (health, metrics, docs, the front door and its files) take no filters.
  const refuseForeignFilters = def.path.startsWith('/api/') && !def.tags.includes('operations')
    ? foreignFilterCheck(def.path, def.query ? Object.keys(def.query.shape) : [], def.filterHint)
    : null;
  return async (req, res) => {
    refuseForeignFilters?.(req);
    await def.handle(req, res, { req, res, services });
  };
}

// ---------------------------------------------------------------------------------------------
// OpenAPI

export const ProblemSchema = z
  .object({
    type: z.string().meta({ description: '`urn:quorum:problem:<code>`', example: 'urn:quorum:problem:not_found' }),
    title: z.string().meta({ description: 'A short, fixed title of the code.' }),
    status: z.number().int().meta({ description: 'The HTTP status.' }),
    code: z
      .enum(PROBLEM_CODES)
      .meta({ description: 'Stable error code clients switch on.' }),
    detail: z.string().meta({ description: 'What went wrong with this request, and how to fix it.' }),
    instance: z.string().optional().meta({ description: 'The request path.' }),
    parameter: z.string().optional().meta({ description: 'invalid_parameter / not_found: the offending parameter.' }),
    allowed: z.unknown().optional().meta({ description: 'The allowed values or range, where known.' }),
    plan: z.string().optional().meta({ description: 'plan_required: the plan the endpoint needs.' }),
    scope: z.string().optional().meta({ description: 'plan_required: the scope the key lacks.' }),
    retry_after: z.number().int().optional().meta({ description: 'rate_limited: seconds until the quota resets.' }),
    policy: z.string().optional().meta({
      description: 'rate_limited: the limit that refused the request: the plan\'s quota, or the probability scope\'s, probability_in_flight, ' +
        'probability_budget_usd, exports, exports_per_key or streams_per_key.',
    }),
    limit: z.number().int().optional().meta({
      description: 'rate_limited: that policy\'s limit (requests per window of a quota; exports or streams open at once); ' +
        'subscription_limit: the webhook subscriptions a key may have.',
    }),
    limit_bytes: z.number().int().optional().meta({ description: 'payload_too_large / headers_too_large: the size limit in bytes.' }),
    budget_usd: z.number().optional().meta({ description: 'rate_limited by probability_budget_usd: the key\'s daily spending cap in USD.' }),
    spent_usd: z.number().optional().meta({ description: 'rate_limited by probability_budget_usd: what the key spent today in USD.' }),
    reserved_usd: z.number().nullable().optional().meta({
      description: 'rate_limited by probability_budget_usd while the key\'s other requests are in flight: what they may still spend (each in proportion to its languages and the length of its question and resolution criteria, at the dearest such rate of any request answered so far; null before any was answered, when a key with a cap has one request in flight at a time).',
    }),
    closest: z.array(z.string()).optional().meta({ description: 'not_found of an id typed in the path (a source slug, a factor, thesis or scenario id): the closest ids of the snapshot, nearest first (at most 5).' }),
    // QA: the 409 and the 503 models_unavailable carried these, and the document said that a
    // problem has no member beyond the ones above (additionalProperties: false)
    id: z.string().optional().meta({ description: 'subscription_disabled: the webhook subscription.' }),
    disabled_reason: z.string().nullable().optional().meta({ description: 'subscription_disabled: why it is disabled.' }),
    disabled_at: z.string().nullable().optional().meta({ format: 'date-time', description: 'subscription_disabled: when it was disabled (ISO 8601 UTC).' }),
    n_models: z.number().int().optional().meta({ description: 'models_unavailable: the models that answered.' }),
    failed: z
      .array(z.object({
        model: z.string().meta({ description: 'The model id.' }),
        error_kind: z.string().meta({ description: 'Why it gave no usable answer (rate_limited, server_error, timeout, invalid_json, schema_violation, truncated, truncated_body, network, budget_exhausted, quota_exhausted, refused or other).' }),
        latency_ms: z.number().meta({ description: 'Milliseconds until the call gave up, retries included.' }),
        cost_usd: z.number().nullable().meta({ description: 'What the call\'s replies cost in USD (null: no reply or tokens unknown).' }),
      }))
      .optional()
      .meta({ description: 'models_unavailable: the models asked that gave no usable answer.' }),
    cost_usd: z.number().optional().meta({ description: 'models_unavailable: what the calls cost in USD.' }),
    evidence_errors: z
      .array(z.object({
        provider: z.string().meta({ description: 'The evidence provider.' }),
        kind: z.string().meta({ description: 'How it failed (e.g. rate_limited, server_error, timeout, network).' }),
      }))
      .optional()
      .meta({ description: 'evidence_unavailable: the evidence providers that failed for the question.' }),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details (application/problem+json).' });

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid parameter (`invalid_parameter`) or body (`invalid_body`).',
  401: 'Missing, malformed, unknown or revoked API key (`unauthorized`).',
  403: 'The caller\'s plan does not include this endpoint (`plan_required`, naming the plan).',
  404: 'Unknown resource (`not_found`).',
  405: 'Method not allowed (`method_not_allowed`).',
  409: 'The resource is in a state that does not allow this (`subscription_disabled`: re-enable it first).',
  410: 'The cursor was issued on an earlier snapshot, and this list\'s order changes with each snapshot (`cursor_expired`): start again from the first page.',
  413: 'Request body larger than 64 kB (`payload_too_large`).',
  417: 'An `Expect` header other than `100-continue` alone (`expectation_failed`): answered before authentication and the quota (only a missing or repeated Host header is a 400 first).',
  422: 'Idempotency-Key reused with another body (`idempotency_conflict`).',
  429: 'Quota used up (`rate_limited`); see `Retry-After`.',
  500: 'Internal error (`internal`); never carries a stack trace.',
  503: 'Not ready (`not_ready`): no snapshot loaded yet, or the feature is not enabled on this server (the event stream, webhooks, the probability endpoint); or too few models answered (`models_unavailable`, the probability endpoint), or the evidence providers failed for a request asking for the augmented mode (`evidence_unavailable`, the probability endpoint); see `Retry-After`.',
};

const h = (description: string) => z.string().meta({ description });
// An unlimited plan (enterprise) has no quota to describe: its responses carry only
// `X-RateLimit-Remaining: unlimited`, so the two IETF headers are optional.
const QUOTA_HEADERS = {
  RateLimit: h('IETF RateLimit: `"<policy>";r=<remaining>;t=<seconds to reset>`. Absent for an unlimited plan.').optional(),
  'RateLimit-Policy': h('IETF RateLimit-Policy: `"<policy>";q=<quota>;w=<window seconds>`. Absent for an unlimited plan.').optional(),
  'X-RateLimit-Remaining': h('Requests left in the window, or `unlimited`.'),
};
// A refused request whose quota was counted (a 400, 403, 404, 405 … after authentication; not an open
// route) carries the quota headers too (QA: documented on the 200 and the 429 only).
const ERROR_QUOTA_HEADERS = {
  ...QUOTA_HEADERS,
  'X-RateLimit-Remaining': h('Requests left in the window, or `unlimited` (a refused request carries it too once its quota was counted).').optional(),
};
const COMMON_HEADERS = {
  'X-Request-Id': h('The request id (echoes a sane X-Request-Id).'),
  'API-Version': h('The API version (1).'),
  // set by the front door (api/http/front.ts) on every answer, errors included (QA: documented on
  // the JSON 200s and the export only); a data answer's own says which snapshot it read
  'X-Snapshot': h('The id of the snapshot the server has loaded (absent before the first is published).').optional(),
  // set by the front door on every answer too (api/http/front.ts); a cached summary, the document
  // and an answer that is one key's own say their own (QA: declared on the cached answers only, so
  // a generated client or a shared cache in front could not tell an error or a keyed answer from
  // one it may keep)
  'Cache-Control': h(
    '`no-cache`; `private, no-cache` when a key was sent; `private, no-store` on an answer that is one key\'s own or carries a secret; `no-store` on the metrics.',
  ),
};

/**
 * The 401 and 403 descriptions of a route: an anonymous caller of a route that takes any key or
 * needs a scope (api/auth/entitlements.ts assertEntitled), or of an export (api/export/routes.ts),
 * is a 401; of any other route that needs a plan a 403 `plan_required` naming it. So only the
 * first kind says "missing key" under 401.
 */
function authErrorDescription(status: 401 | 403, def: RouteDef): string {
  const e: Entitlement = ENTITLEMENTS[def.id];
  const missingIs401 = def.id.startsWith('export.') || (e.kind === 'plan' && (e.keyRequired === true || e.scope !== undefined));
  if (status === 401) {
    return missingIs401
      ? ERROR_DESCRIPTIONS[401]!
      : 'Malformed, unknown or revoked API key (`unauthorized`). A request without a key, where this endpoint needs one, is a 403 `plan_required`.';
  }
  return missingIs401
    ? ERROR_DESCRIPTIONS[403]!
    : 'The caller\'s plan does not include this endpoint, or no key was sent (`plan_required`, naming the plan).';
}

function describeAccess(e: Entitlement, publicBeta: boolean): string {
  if (e.kind === 'open') return 'Access: open (no key, not rate limited).';
  if (e.keyRequired) return 'Access: any API key.';
  if (e.scope) return `Access: a key with the \`${e.scope}\` scope (plan ${e.plan} or higher).`;
  if (e.publicBeta) {
    return publicBeta
      ? `Access: public during the beta (anonymous callers allowed); otherwise the ${e.plan} plan.`
      : `Access: the ${e.plan} plan or higher (public beta is off).`;
  }
  return `Access: the ${e.plan} plan or higher.`;
}

/** The validators of a cached JSON answer, on its 200 and its 304. */
const CACHED_HEADERS = {
  ETag: h('Strong validator of the body.'),
  'Cache-Control': h('`public|private, max-age=<seconds until the next scheduled run, 60 at most>` (then revalidate with the ETag).'),
};

/**
 * The 304 of a conditional GET: no body, and the headers its 200 would have had that describe the
 * answer (RFC 9110 §15.4.5: ETag and Cache-Control; the front door's X-Request-Id, API-Version and
 * X-Snapshot; the quota headers of a charged request). QA: the document listed none, so a generated
 * client could not read the ETag it should keep, nor the quota it had left, from a 304.
 */
function notModified(open: boolean, validators: Record<string, z.ZodString>): ZodOpenApiResponseObject {
  return {
    description: 'Not modified (If-None-Match matched the ETag).',
    headers: z.object({ ...COMMON_HEADERS, ...(open ? {} : QUOTA_HEADERS), ...validators }),
  };
}

function operation(def: RouteDef, publicBeta: boolean): ZodOpenApiOperationObject {
  const e: Entitlement = ENTITLEMENTS[def.id];
  const open = e.kind === 'open';
  const needPlan = requiredPlan(def.id, publicBeta);
  const statuses = new Set<number>(def.errors ?? []);
  if (!open) {
    statuses.add(401);
    statuses.add(429);
    // A 403 where a caller can get one. A route any key may call (the caller's own usage) refuses
    // only a keyless caller, with a 401 (QA: GET /api/usage/ documented a 403 no key gets).
    const anyKey = e.kind === 'plan' && e.keyRequired === true && !e.scope && e.plan === 'pro';
    if ((needPlan !== null && !anyKey) || ('scope' in e && e.scope)) statuses.add(403);
  }
  statuses.add(405);
  statuses.add(500);
  if (def.kind === 'json') statuses.add(503);
  // a body declared over 64 kB is refused on any method but GET, HEAD and OPTIONS (api/app.ts):
  // a DELETE's too (outside review: undocumented there)
  if ((def.method ?? 'get') !== 'get') {
    statuses.add(400);
    statuses.add(413);
  }
  // an Expect header other than 100-continue alone, on every path (api/http/front.ts)
  statuses.add(417);
  // 400 invalid_parameter on every route: a query parameter in bracket form (`x[]=1`; mountRoutes,
  // rejectBracketedParams) and on a route with a path parameter a malformed one (`%ZZ`, a bad id)
  // (QA: nine routes without a parameter of their own documented no 400)
  statuses.add(400);

  const responses: Record<string, ZodOpenApiResponseObject> = {};
  if (def.kind === 'json') {
    responses['200'] = {
      description: def.summary,
      headers: z.object({
        ...COMMON_HEADERS,
        ...(open ? {} : QUOTA_HEADERS),
        'X-Snapshot': h('The id of the snapshot the data comes from.'),
        ...(def.cache ? CACHED_HEADERS : {}),
      }),
      content: {
        'application/json': {
          schema: def.response.extend({
            as_of: z.string().meta({ format: 'date-time', description: 'ISO 8601 time the snapshot\'s run saw.' }),
          }),
        },
      },
    };
    if (def.cache) responses['304'] = notModified(open, CACHED_HEADERS);
  } else {
    const status = def.status ?? 200;
    const extra = Object.fromEntries(Object.entries(def.responseHeaders ?? {}).map(([name, d]) => [name, h(d).optional()]));
    responses[String(status)] = {
      description: def.responseDescription ?? def.summary,
      headers: z.object({ ...COMMON_HEADERS, ...(open ? {} : QUOTA_HEADERS), ...extra }),
      ...(status === 204
        ? {}
        : {
            content: Object.fromEntries(
              Object.entries(def.responses).map(([type, { schema }]) => [type, { schema: schema as z.ZodType }]),
            ),
          }),
    };
    // the 304 carries the validators its 200 declares
    if (def.conditional) {
      const validators = Object.entries(def.responseHeaders ?? {}).filter(([name]) => name === 'ETag' || name === 'Cache-Control');
      responses['304'] = notModified(open, Object.fromEntries(validators.map(([name, d]) => [name, h(d)])));
    }
  }
  for (const s of [...statuses].sort()) {
    responses[String(s)] = {
      description: s === 401 || s === 403 ? authErrorDescription(s, def) : (ERROR_DESCRIPTIONS[s] ?? 'Error.'),
      headers: z.object({
        ...COMMON_HEADERS,
        ...(s === 429 ? { 'Retry-After': h('Seconds until the quota resets.'), ...QUOTA_HEADERS } : open ? {} : ERROR_QUOTA_HEADERS),
        ...(s === 503 ? { 'Retry-After': h('Seconds to wait before retrying.') } : {}),
        ...(s === 405 ? { Allow: h('The allowed methods.') } : {}),
        ...(s === 401 ? { 'WWW-Authenticate': h('`Bearer`.') } : {}),
        ...(def.kind === 'raw'
          ? Object.fromEntries(Object.entries(def.errorHeaders?.[s] ?? {}).map(([name, d]) => [name, h(d).optional()]))
          : {}),
      }),
      content: { 'application/problem+json': { schema: ProblemSchema } },
    };
  }

  const security: Array<Record<string, string[]>> = open
    ? []
    : needPlan === null
      ? [{}, { ApiKeyHeader: [] }, { BearerAuth: [] }]
      : [{ ApiKeyHeader: [] }, { BearerAuth: [] }];

  const op: ZodOpenApiOperationObject = {
    operationId: def.id,
    summary: def.summary,
    description: [def.description, describeAccess(e, publicBeta)].filter(Boolean).join('\n\n'),
    tags: def.tags,
    security,
    responses: responses as ZodOpenApiOperationObject['responses'],
  };
  if (def.params || def.query || def.headers) {
    op.requestParams = {};
    if (def.params) op.requestParams.path = def.params;
    if (def.query) op.requestParams.query = def.query;
    if (def.headers) op.requestParams.header = def.headers;
  }
  if (def.body) op.requestBody = { content: { 'application/json': { schema: def.body } } };
  return op;
}

/** The OpenAPI 3.1 document of `routes`. */
export function openApiDocument(routes: readonly RouteDef[], opts: { publicBeta: boolean }): Record<string, unknown> {
  const paths: ZodOpenApiPathsObject = {};
  for (const def of routes) {
    if (def.hidden) continue;
    const item = (paths[def.path] ??= {});
    (item as Record<string, ZodOpenApiOperationObject>)[def.method ?? 'get'] = operation(def, opts.publicBeta);
  }
  const doc = createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Quorum API',
      version: API_VERSION,
      description:
        'Read-only forecasting data: four-model AI consensus beside market prices, Brier-scored against ' +
        'authoritative resolutions. Every data response names its snapshot (`as_of`, `X-Snapshot`). ' +
        'Errors are RFC 9457 problems. Send a key as `X-API-Key: <key>` or `Authorization: Bearer <key>`.',
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'predictions' }, { name: 'events' }, { name: 'account' }, { name: 'operations' },
    ],
    components: {
      schemas: STREAM_SCHEMAS,
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        BearerAuth: { type: 'http', scheme: 'bearer', description: 'The API key as a bearer token.' },
      },
    },
    paths,
    webhooks: webhooksDocument(),
  });
  return doc as unknown as Record<string, unknown>;
}
