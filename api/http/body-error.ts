/**
 * A request body that could not be parsed (express.json: over the size limit, not JSON), kept on
 * the response until the route that would read it has authorized the caller (api/app.ts): the
 * plan and scope checks answer first, whatever the body.
 */
import type { Response } from 'express';

/** Keeps the body parser's error for the route (or the 404/405 answer) to raise. */
export function setBodyError(res: Response, err: unknown): void {
  res.locals.bodyError = err;
}

/** Raises the kept body error, if any: after the route's entitlement check, or before a 404/405. */
export function throwBodyError(res: Response): void {
  const err: unknown = res.locals.bodyError;
  if (err !== undefined) {
    res.locals.bodyError = undefined;
    throw err;
  }
}
