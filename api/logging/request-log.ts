/**
 * One log line per request: method, path, status, ms, request id. The id is the caller's
 * `X-Request-Id` when it is a sane token (≤ 128 chars of [A-Za-z0-9._:-]), else a new UUID; it
 * is echoed in the `X-Request-Id` response header.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    /** The request id (from X-Request-Id or generated). */
    id?: string;
  }
}

export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    const given = req.get('x-request-id');
    const id = given !== undefined && REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    let logged = false;
    const done = (aborted: boolean) => {
      if (logged) return;
      logged = true;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const line = {
        req_id: id,
        method: req.method,
        path: req.path,
        status: aborted && !res.writableFinished ? null : res.statusCode,
        ms: Math.round(ms * 100) / 100,
        snapshot: res.getHeader('X-Snapshot') ?? null,
        ...(aborted && !res.writableFinished ? { aborted: true } : {}),
      };
      if (res.statusCode >= 500) logger.error(line, 'request');
      else logger.info(line, 'request');
    };
    res.on('finish', () => done(false));
    res.on('close', () => done(true));
    next();
  };
}
