/**
 * The JSON body of a POST route. express.json parses only a body sent as `application/json`; any
 * other (or no) Content-Type leaves `req.body` undefined, which a schema would report as "expected
 * object, received undefined". Say what to send instead.
 */
import type { Request } from 'express';
import { ApiError } from '../errors/problem.ts';

/** `req.body`, or a 400 invalid_body naming the Content-Type when no JSON body was parsed. */
export function jsonBody(req: Request): unknown {
  if (req.body === undefined) {
    const type = req.headers['content-type'];
    throw ApiError.invalidBody(
      type === undefined
        ? 'Send the request body as a JSON object with Content-Type: application/json (no Content-Type was given).'
        : `Send the request body as a JSON object with Content-Type: application/json (got ${JSON.stringify(type.slice(0, 100))}).`,
    );
  }
  return req.body;
}
