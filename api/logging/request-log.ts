/**
 * One log line per request: method, path (never the query), status, ms, request id, snapshot,
 * route id and the key's id (never the key). The id is the caller's `X-Request-Id` when it is a
 * sane token (≤ 128 chars of [A-Za-z0-9._:-]) that does not carry an API key (a caller who
 * pastes its key there must not get it logged), else a new UUID; it is echoed in the
 * `X-Request-Id` response header (api/http/front.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { KEY_PREFIX } from '../auth/keys.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    /** The request id (from X-Request-Id or generated). */
    id?: string;
  }
}

export function requestId(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID.test(given) && !given.toLowerCase().includes(KEY_PREFIX) ? given : randomUUID();
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
  if (res.statusCode >= 500 && !aborted) logger.error(line, 'request');
  else logger.info(line, 'request');
}
