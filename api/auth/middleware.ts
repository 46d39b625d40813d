/**
 * Authentication: reads `X-API-Key: <key>` or `Authorization: Bearer <key>` and sets
 * `res.locals.auth = { plan, keyId, scopes }` (the contract other modules read) before routes.
 *
 * - No key header: anonymous.
 * - A key header that is empty, malformed (prefix/length/charset), unknown or revoked, an
 *   Authorization scheme other than Bearer, either header sent twice, or both headers with
 *   different keys: 401 `unauthorized`. So is a key in the query string (keyInUrl). A key in
 *   quotes, or after "Bearer " in X-API-Key, is a 401 saying so (not "malformed").
 *   A failed attempt is charged to the client IP's anonymous quota (brute force is rate limited).
 * - The key is never logged; errors do not echo it.
 */
import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors/problem.ts';
import type { AuthContext } from './entitlements.ts';
import { KEY_PREFIX, KEY_RANDOM_LENGTH, type KeyStore } from './keys.ts';

export const ANONYMOUS: Readonly<AuthContext> = Object.freeze({ plan: 'anonymous', keyId: null, scopes: [] as string[] });

/** The presented key, or undefined when no key header is given. Throws 401 for unusable headers. */
export function presentedKey(xApiKey: string | string[] | undefined, authorization: string | undefined): string | undefined {
  let fromHeader: string | undefined;
  if (xApiKey !== undefined) {
    // The whole JSON line `quorum keys create` prints, pasted as the key (QA: `KEY=$(quorum keys
    // create ...)` then `X-API-Key: $KEY` was told to send the header once, which it had).
    if (typeof xApiKey === 'string' && xApiKey.trimStart().startsWith('{')) {
      throw ApiError.unauthorized(
        'The X-API-Key header holds JSON, not a key: send the "key" field of what quorum keys create printed (e.g. quorum keys create ... | jq -r .key).',
      );
    }
    // Node joins a repeated X-API-Key into one value with ', ' (a key never holds a comma).
    if (Array.isArray(xApiKey) || xApiKey.includes(',')) throw ApiError.unauthorized('Send the X-API-Key header once.');
    fromHeader = xApiKey.trim();
    if (fromHeader === '') throw ApiError.unauthorized('The X-API-Key header is empty.');
  }
  let fromBearer: string | undefined;
  if (authorization !== undefined) {
    const m = /^\s*(\S+)(?:\s+(.*))?$/.exec(authorization);
    if (!m || m[1]!.toLowerCase() !== 'bearer') {
      throw ApiError.unauthorized('Only the Bearer scheme is accepted in the Authorization header.');
    }
    fromBearer = (m[2] ?? '').trim();
    if (fromBearer === '') throw ApiError.unauthorized('The Authorization header has no key after Bearer.');
  }
  for (const v of [fromHeader, fromBearer]) {
    // `jq .key` (without -r) prints the key in quotes (QA: answered "The API key is malformed.")
    if (v !== undefined && QUOTED_KEY.test(v)) {
      throw ApiError.unauthorized('The API key is in quotes: send it without them (quorum keys create ... | jq -r .key prints it bare).');
    }
  }
  if (fromHeader !== undefined && /^bearer\s/i.test(fromHeader)) {
    throw ApiError.unauthorized('X-API-Key takes the key alone, without "Bearer " (or send Authorization: Bearer <key>).');
  }
  if (fromHeader !== undefined && fromBearer !== undefined && fromHeader !== fromBearer) {
    throw ApiError.unauthorized('X-API-Key and Authorization carry different keys.');
  }
  return fromHeader ?? fromBearer;
}

/** A key-shaped value between double or single quotes. */
const QUOTED_KEY = new RegExp(`^(["'])${KEY_PREFIX}[0-9A-Za-z]*\\1$`);

export function authOf(res: Response): AuthContext {
  return (res.locals.auth as AuthContext | undefined) ?? ANONYMOUS;
}

export interface AuthenticateOptions {
  keys: KeyStore;
  /** Paths that skip authentication (health, metrics, docs): they are always anonymous. */
  isExempt: (path: string) => boolean;
  /** Called for a failed attempt before the 401 is thrown (charges the IP's quota; may throw 429). */
  onFailure?: (req: Request, res: Response) => void;
}

/** Sets `res.locals.auth` for one request; throws the 401 (or the 429 of onFailure). */
export function authenticateRequest(opts: AuthenticateOptions, req: Request, res: Response, exempt: boolean): void {
  res.locals.auth = ANONYMOUS;
  if (exempt) {
    // Paths outside authentication take no key, but a key in their URL has left the client all the
    // same: the same 401, uncharged as these paths are (QA: `/api/openapi.json?api_key=<key>`, as
    // OpenAPI tooling sends it, was a 200 without a word).
    const inUrl = keyInUrl(req);
    if (inUrl !== null) throw inUrl;
    return;
  }
  const failure = keyInUrl(req) ?? keyHeaderFailure(opts, req, res);
  if (failure === null) return;
  opts.onFailure?.(req, res); // may throw a 429 instead
  throw failure;
}

/**
 * Authenticates by the key headers (sets `res.locals.auth` for a valid key): the 401 to answer, or
 * null (no key header: anonymous; or authenticated).
 */
function keyHeaderFailure(opts: AuthenticateOptions, req: Request, res: Response): ApiError | null {
  const xKey = req.headers['x-api-key'];
  const authz = req.headers.authorization;
  if (xKey === undefined && authz === undefined) return null;
  try {
    // Node keeps only the first of repeated Authorization headers (it joins repeated X-API-Key
    // ones, refused in presentedKey): a second one was silently ignored, so the request was
    // answered for the first key whatever the second said, and a proxy reading the last one saw
    // another caller (QA). Refused like a repeated X-API-Key.
    if ((req.headersDistinct?.authorization?.length ?? 0) > 1) throw ApiError.unauthorized('Send the Authorization header once.');
    const key = presentedKey(xKey, authz);
    if (key === undefined) return null;
    const found = opts.keys.lookup(key);
    if (found.ok) {
      res.locals.auth = { plan: found.record.plan, keyId: found.record.id, scopes: found.record.scopes };
      return null;
    }
    return ApiError.unauthorized(
      found.reason === 'revoked'
        ? 'This API key has been revoked.'
        : found.reason === 'malformed'
          ? 'The API key is malformed.'
          : 'The API key is not valid.',
    );
  } catch (err) {
    return err instanceof ApiError ? err : ApiError.unauthorized();
  }
}

/** Query parameters a client may put a key in by mistake (any case); their values are never logged (api/logging/request-log.ts). */
export const KEY_PARAMS = new Set(['api_key', 'apikey', 'api-key']);

/** A key in a query parameter's value or name (RFC 6750's `?access_token=`, `?x-api-key=`, `?api_key[]=`...). */
const KEY_IN_VALUE = new RegExp(`${KEY_PREFIX}[0-9A-Za-z]{${KEY_RANDOM_LENGTH}}(?![0-9A-Za-z])`);

function holdsKey(value: unknown): boolean {
  return typeof value === 'string' ? KEY_IN_VALUE.test(value) : Array.isArray(value) && value.some(holdsKey);
}

/**
 * A 401 when the query holds a key parameter (`?api_key=`), or a key under any other name: the
 * key would be served anonymously without a word (unknown parameters are ignored), while the URL
 * has put it in proxies' logs and the browser's history already. Keys go in the X-API-Key or
 * Authorization header. QA: `?access_token=<key>` (the URI form of RFC 6750, the Bearer scheme this
 * API accepts), `?x-api-key=` and `?api_key[]=` were answered anonymously, as if no key was sent.
 */
function keyInUrl(req: Request): ApiError | null {
  const q = req.query as Record<string, unknown>;
  for (const name of Object.keys(q)) {
    if (KEY_PARAMS.has(name.toLowerCase()) || holdsKey(name) || holdsKey(q[name])) {
      return ApiError.unauthorized(
        `An API key goes in the X-API-Key header (or Authorization: Bearer), never in the URL (query parameter '${name}'): URLs are kept in logs and history; revoke a key sent this way.`,
      );
    }
  }
  return null;
}

/** The same as a standalone middleware. */
export function authenticate(opts: AuthenticateOptions): RequestHandler {
  return (req, res, next) => {
    authenticateRequest(opts, req, res, opts.isExempt(req.path));
    next();
  };
}
