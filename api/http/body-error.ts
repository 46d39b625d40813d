/**
 * A request body that could not be parsed (express.json: over the size limit, not JSON), kept on
 * the response until the route that would read it has authorized the caller (api/app.ts): the
 * plan and scope checks answer first, whatever the body.
 */
import type { IncomingMessage } from 'node:http';
import type { Response } from 'express';
import { ApiError, toApiError } from '../errors/problem.ts';

/**
 * The largest JSON body any POST route reads. The partners' endpoint allows a 1,000-character
 * question and 4,000-character resolution criteria, counted in characters: written with \uXXXX
 * escapes (Python's json.dumps does by default) an emoji is 12 bytes, so the fields the limits
 * allow take up to about 61 kB (QA: 16 kB refused 1,000 + 2,600 CJK characters with a 413).
 */
export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Whether the request declares a body over BODY_LIMIT_BYTES: a Content-Length over it, sent as is
 * (no Content-Encoding, or identity: the limit counts decoded bytes, so a compressed body is only
 * known too large once read, as express.json reads it). A chunked body has no declared length.
 */
export function declaresOversizeBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length === undefined || !/^\d+$/.test(length)) return false;
  const coding = req.headers['content-encoding']?.trim().toLowerCase();
  if (coding !== undefined && coding !== '' && coding !== 'identity') return false;
  return Number(length) > BODY_LIMIT_BYTES;
}

/**
 * The problem of a body express.json could not read: its own errors by type (413, malformed JSON,
 * an unsupported charset or coding: toApiError), and any other (a body whose Content-Encoding does
 * not decode: a corrupt gzip or deflate stream, brotli bytes sent as gzip) a 400 `invalid_body`
 * naming the coding. QA: those were a 400 `invalid_parameter` with `parameter: "path"` and "The
 * request path or query is malformed.", sending a client to look for a fault in its URL.
 */
export function bodyProblem(err: unknown, contentEncoding: string | undefined): ApiError {
  const problem = toApiError(err);
  if (problem.code !== 'invalid_parameter') return problem;
  const coding = contentEncoding?.trim();
  return ApiError.invalidBody(
    coding && coding.toLowerCase() !== 'identity'
      ? `The request body could not be decoded as Content-Encoding ${JSON.stringify(coding.slice(0, 40))}; send it encoded as that header says, or without the header.`
      : 'The request body could not be read.',
  );
}

/** Keeps the body parser's error (as its problem: bodyProblem) for the route (or the 404/405 answer) to raise. */
export function setBodyError(res: Response, err: unknown): void {
  res.locals.bodyError = bodyProblem(err, res.req.headers['content-encoding']);
}

/** Raises the kept body error, if any: after the route's entitlement check, or before a 404/405. */
export function throwBodyError(res: Response): void {
  const err: unknown = res.locals.bodyError;
  if (err !== undefined) {
    res.locals.bodyError = undefined;
    throw err;
  }
}
