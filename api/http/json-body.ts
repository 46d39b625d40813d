/**
 * The JSON body of a POST route. express.json parses only a body sent as `application/json`; any
 * other (or no) Content-Type leaves `req.body` undefined, which a schema would report as "expected
 * object, received undefined". Say what to send instead.
 */
import type { Request } from 'express';
import type { z } from 'zod';
import { ApiError } from '../errors/problem.ts';

/** `req.body`, or a 400 invalid_body naming the Content-Type when no JSON body was parsed. */
export function jsonBody(req: Request): unknown {
  if (req.body === undefined) {
    // No body at all (neither Content-Length nor Transfer-Encoding: curl -X POST without -d): say
    // so, rather than ask for the Content-Type the request may well have sent (QA: "Send the request
    // body as a JSON object with Content-Type: application/json (got \"application/json\")").
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      throw ApiError.invalidBody('The request has no body; send a JSON object with Content-Type: application/json.');
    }
    const type = req.headers['content-type'];
    throw ApiError.invalidBody(
      type === undefined
        ? 'Send the request body as a JSON object with Content-Type: application/json (no Content-Type was given).'
        : `Send the request body as a JSON object with Content-Type: application/json (got ${JSON.stringify(type.slice(0, 100))}).`,
    );
  }
  return req.body;
}

/** The value at `path` in a parsed JSON body, or undefined when any step of it is absent. */
function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let value = body;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * The problem for a body its schema refused, the same on every POST route: a body that is not a
 * JSON object (null, an array, a number) is a 400 invalid_body; a field that is missing, unknown or
 * wrong is a 400 invalid_parameter naming it (`parameter`: its dotted path, e.g. `types.0`), like
 * a query parameter. `body`, the body the schema read, tells a missing field from a wrong one:
 * outside test, a probability request without its required `close_date` was "close_date: Invalid
 * input: expected string, received undefined", zod's words for a field the client never sent.
 */
export function bodyError(error: z.ZodError, body?: unknown): ApiError {
  const i = error.issues[0]!;
  const keys = (i as { keys?: string[] }).keys;
  if (i.path.length === 0 && i.code !== 'unrecognized_keys') return ApiError.invalidBody(`The body must be a JSON object: ${i.message}`);
  // An unknown key's issue has the path of the object that holds it: the key is named under it
  // (outside test: `market: {venue, market_id, price}` was "Unknown field \"market\"", a known field).
  const field = (i.code === 'unrecognized_keys' ? [...i.path, keys![0]!] : i.path).join('.');
  const missing = i.code === 'invalid_type' && body !== undefined && valueAt(body, i.path) === undefined;
  const detail =
    i.code === 'unrecognized_keys' ? `Unknown field "${field}".`
    : missing ? `${field} is required (${/^[aeiou]/.test(String(i.expected)) ? 'an' : 'a'} ${i.expected}), and the body has none.`
    : `${field}: ${i.message}`;
  return ApiError.invalidParameter(field, detail);
}
