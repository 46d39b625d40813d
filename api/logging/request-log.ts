/**
 * One log line per request: method, path, query string (when there is one; at most 512
 * characters), status, ms, request id, snapshot, route id and the key's id (never the key). The
 * value of a key parameter (`api_key`, `apikey`, `api-key`, any case or spelling: the 401 of
 * api/auth/middleware.ts keyInUrl) is logged as `[redacted]`, whatever it holds: a key without its
 * prefix or another service's secret has no shape redactKeys knows (QA: both were logged in clear). The
 * logger redacts the whole serialized line (withKeyRedaction, api/logging/logger.ts; front.ts
 * makes sure), path and query included, so a key pasted there is not logged and the fields are not
 * scanned a second time here. The id is the caller's `X-Request-Id` when it is a
 * sane token (≤ 128 chars of [A-Za-z0-9._:-]) that does not carry an API key in any spelling
 * redactKeys knows, base64 included (a caller who pastes its key there must not get it logged or
 * echoed), else a new UUID; it is echoed in the
 * `X-Request-Id` response header (api/http/front.ts). Its level: requestLevel below.
 */
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { KEY_PREFIX } from '../auth/keys.ts';
import { KEY_PARAMS } from '../auth/middleware.ts';
import { REDACTED_TOKEN, redactKeys } from './redact.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const MAX_LOGGED_QUERY = 512;

/** The raw query string of `url` (after `?`, key parameters' values redacted), or null. */
function rawQuery(url: string): string | null {
  const q = url.indexOf('?');
  return q === -1 || q === url.length - 1 ? null : redactKeyParams(url.slice(q + 1)).slice(0, MAX_LOGGED_QUERY);
}

/** `query` with the value of every key parameter (its name decoded as the query parser decodes it) replaced. */
export function redactKeyParams(query: string): string {
  if (!/api|%/i.test(query)) return query;
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const raw = eq === -1 ? pair : pair.slice(0, eq);
      let name = raw;
      try {
        name = decodeURIComponent(raw.replaceAll('+', ' '));
      } catch {
        // not decodable: compared as it is
      }
      return KEY_PARAMS.has(name.toLowerCase()) && eq !== -1 ? `${raw}=${REDACTED_TOKEN}` : pair;
    })
    .join('&');
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The request id (from X-Request-Id or generated). */
    id?: string;
  }
}

export function requestId(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID.test(given) && !given.toLowerCase().includes(KEY_PREFIX) && redactKeys(given) === given
    ? given
    : randomUUID();
}

export function logRequest(logger: Logger, req: Request, res: Response, id: string, seconds: number): void {
  const aborted = !res.writableFinished;
  const line = {
    req_id: id,
    method: req.method,
    path: req.path,
    status: aborted ? null : res.statusCode,
    ms: Math.round(seconds * 100_000) / 100,
    snapshot: res.getHeader('X-Snapshot') ?? null,
    route: typeof res.locals.routeId === 'string' ? res.locals.routeId : null,
    key_id: (res.locals.auth as { keyId?: string | null } | undefined)?.keyId ?? null,
    ...(aborted ? { aborted: true } : {}),
  };
  const query = rawQuery(req.originalUrl);
  if (query !== null) (line as Record<string, unknown>).query = query;
  logger[requestLevel(res.statusCode, aborted)](line, 'request');
}

/**
 * The request line's level: `error` for a server fault (a 5xx), `warn` for a 503 (the service
 * not ready, answered with Retry-After: no snapshot yet, the probability endpoint's models or
 * evidence providers down), `info` for the rest, an aborted response included. A 503 is no fault to page
 * anyone for (QA: every readiness probe of a server waiting for its first snapshot, `GET /readyz`
 * every few seconds, was an error line).
 */
export function requestLevel(status: number, aborted: boolean): 'error' | 'warn' | 'info' {
  if (aborted || status < 500) return 'info';
  return status === 503 ? 'warn' : 'error';
}
