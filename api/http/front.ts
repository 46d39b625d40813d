/**
 * The front of the middleware stack, as ONE Express layer (each layer costs router work on every
 * request; this is the hot path of every answer):
 *   1. request id (X-Request-Id: the caller's when sane, else a UUID);
 *   2. one `close` hook per response: the pino request line and the Prometheus metrics;
 *   3. static headers: helmet's (computed once at start), API-Version, Cache-Control: no-cache,
 *      X-Snapshot (the served snapshot), Connection: close while shutting down;
 *   4. a missing (HTTP/1.1) or repeated Host header: 400 `malformed_request` (hostProblem), and an
 *      Expect header other than 100-continue: 417 `expectation_failed`, on every path;
 *   5. authentication → `res.locals.auth` (api/auth/middleware.ts; 401 problems); a keyed
 *      request's answer is `Cache-Control: private, no-cache`;
 *   6. the quota charge (api/limits/quota.ts; 429 problems).
 * Exempt paths (health, metrics, docs, OpenAPI) skip 5 and 6; uncharged paths (the caller's own
 * usage) skip 6.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { authenticateRequest, authOf, type AuthenticateOptions } from '../auth/middleware.ts';
import { ApiError } from '../errors/problem.ts';
import type { QuotaKeeper } from '../limits/quota.ts';
import { clientIp } from '../limits/quota.ts';
import { withKeyRedaction } from '../logging/logger.ts';
import { requestId, logRequest } from '../logging/request-log.ts';
import type { Metrics } from '../metrics.ts';
import type { SnapshotReader } from '../snapshot/reader.ts';
import { API_VERSION } from './respond.ts';

/** The headers a helmet middleware sets, captured once by running it against a stub response. */
export function captureHeaders(mw: (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void): Array<[string, string]> {
  const headers = new Map<string, string>();
  const res = {
    setHeader(k: string, v: string | number | readonly string[]) {
      headers.set(k, Array.isArray(v) ? v.join(', ') : String(v));
      return this;
    },
    removeHeader(k: string) {
      headers.delete(k);
    },
    getHeader(k: string) {
      return headers.get(k);
    },
  } as unknown as ServerResponse;
  let failed: unknown = null;
  mw({ headers: {}, method: 'GET', url: '/' } as IncomingMessage, res, (err) => {
    failed = err ?? null;
  });
  if (failed) throw failed;
  return [...headers.entries()];
}

/**
 * The 400 for a request whose Host header HTTP/1.1 refuses (RFC 9112 §3.2): none in an HTTP/1.1
 * request, or more than one. The server does not let Node answer the first itself (a bare 400 with
 * no body, never logged nor counted: QA), and Node kept the first of two Host headers silently;
 * both are a problem here, logged and counted like any other answer. Null when the Host is fine.
 */
export function hostProblem(req: IncomingMessage): ApiError | null {
  const hosts = req.headersDistinct.host;
  if (hosts === undefined) {
    return req.httpVersion === '1.1' ? ApiError.malformedRequest('An HTTP/1.1 request needs a Host header.') : null;
  }
  return hosts.length > 1 ? ApiError.malformedRequest('Send the Host header once.') : null;
}

/**
 * Whether the request's Expect header is one this server meets: none, or `100-continue` alone.
 * Node hands `100-continue` beside another expectation (`100-continue, foo`) to the checkContinue
 * listener too (api/server.ts), which must not invite a body the answer then refuses with a 417.
 */
export function expectationMet(req: IncomingMessage): boolean {
  return req.headers.expect === undefined || asksContinue(req);
}

/** Whether the request's Expect header is `100-continue` alone: its body waits to be invited. */
export function asksContinue(req: IncomingMessage): boolean {
  return /^\s*100-continue\s*$/i.test(req.headers.expect ?? '');
}

export interface FrontOptions {
  logger: Logger;
  metrics: Metrics;
  staticHeaders: Array<[string, string]>;
  snapshots: SnapshotReader;
  auth: AuthenticateOptions;
  quotas: QuotaKeeper;
  isExempt: (path: string) => boolean;
  /** Authenticated but not charged (the caller's own usage). */
  isUncharged?: (path: string) => boolean;
  shuttingDown: () => boolean;
}

export function front(opts: FrontOptions): RequestHandler {
  const { metrics, staticHeaders, snapshots, quotas, isExempt, shuttingDown } = opts;
  // The request line is redacted whole by the logger (a no-op when it already redacts, as createApp's does).
  const logger = withKeyRedaction(opts.logger);
  return (req: Request, res: Response, next) => {
    const start = process.hrtime.bigint();
    const id = requestId(req.headers['x-request-id']);
    req.id = id;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      logRequest(logger, req, res, id, seconds);
      metrics.observe(req, res, seconds, !res.writableFinished);
    };
    // 'close' is emitted for every response (after 'finish' when it completed; alone when aborted).
    res.once('close', finish);

    for (let i = 0; i < staticHeaders.length; i++) res.setHeader(staticHeaders[i]![0], staticHeaders[i]![1]);
    res.setHeader('X-Request-Id', id);
    res.setHeader('API-Version', API_VERSION);
    res.setHeader('Cache-Control', 'no-cache');
    if (shuttingDown()) res.setHeader('Connection', 'close');
    const current = snapshots.currentId;
    if (current !== null) res.setHeader('X-Snapshot', current);

    const badHost = hostProblem(req);
    if (badHost) throw badHost;
    // Node hands a request with another Expect than 100-continue here (api/server.ts) instead of
    // its own bare 417: the same answer, as a problem.
    if (!expectationMet(req)) {
      // a body announced with 100-continue among the rest was not invited (api/server.ts): the
      // connection is closed after the answer rather than left waiting for a body that never comes
      if (/100-continue/i.test(req.headers.expect!)) res.setHeader('Connection', 'close');
      throw ApiError.expectationFailed();
    }
    const exempt = isExempt(req.path);
    authenticateRequest(opts.auth, req, res, exempt);
    // An answer to a keyed request may be that key's alone (its webhooks, an export capped by its
    // plan at the same URL): no shared cache may keep it (QA). Cached summaries set their own.
    if (authOf(res).keyId !== null) res.setHeader('Cache-Control', 'private, no-cache');
    if (!exempt && req.method !== 'OPTIONS') {
      // an uncharged path (the caller's own usage) still says what is left, charging nothing
      if (opts.isUncharged?.(req.path)) quotas.describe(res, res.locals.auth, clientIp(req));
      else {
        quotas.charge(res, res.locals.auth, clientIp(req));
        // a 429 of the route's own limits takes this charge back (api/app.ts, QuotaKeeper.refuseCharged)
        res.locals.charged = true;
      }
    }
    next();
  };
}
