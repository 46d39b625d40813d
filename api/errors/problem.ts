/**
 * The API's one error type, rendered as RFC 9457 `application/problem+json`.
 *
 * Every error the API answers with is an `ApiError` built by a named constructor; anything else
 * that reaches the error handler becomes `ApiError.internal()` (logged with its stack, answered
 * without it). The body is `{ type, title, status, code, detail, instance, ...extras }`:
 * - `type`: `urn:quorum:problem:<code>` (stable, one per code; not a dereferenceable page),
 * - `code`: the stable snake_case slug clients switch on,
 * - `instance`: the request path,
 * - extras: e.g. `parameter` and `allowed` for invalid_parameter, `allowed` for not_found.
 */

import { redactDeep } from '../logging/redact.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * Every problem code with its title: the one list the error type, the OpenAPI `Problem` schema
 * and the docs read.
 */
const TITLES = {
  invalid_parameter: 'Invalid parameter',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  invalid_body: 'Invalid request body',
  payload_too_large: 'Payload too large',
  malformed_request: 'Malformed request',
  headers_too_large: 'Request headers too large',
  request_timeout: 'Request timeout',
  expectation_failed: 'Expectation failed',
  unauthorized: 'Unauthorized',
  plan_required: 'Plan required',
  rate_limited: 'Rate limited',
  not_ready: 'Not ready',
  models_unavailable: 'Models unavailable',
  evidence_unavailable: 'Evidence unavailable',
  idempotency_conflict: 'Idempotency key reused',
  subscription_disabled: 'Subscription disabled',
  subscription_limit: 'Subscription limit reached',
  cursor_expired: 'Cursor expired',
  internal: 'Internal error',
} as const;

export type ProblemCode = keyof typeof TITLES;
export const PROBLEM_CODES = Object.keys(TITLES) as [ProblemCode, ...ProblemCode[]];

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: ProblemCode;
  detail: string;
  instance?: string;
  [extra: string]: unknown;
}

/** Extras must not shadow the standard members. */
const RESERVED = new Set(['type', 'title', 'status', 'code', 'detail', 'instance']);

export class ApiError extends Error {
  readonly status: number;
  readonly code: ProblemCode;
  readonly detail: string;
  readonly extras: Record<string, unknown>;
  /** Response headers that belong to this problem (e.g. `Allow`, `Retry-After`). */
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: ProblemCode,
    detail: string,
    extras: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.extras = extras;
    this.headers = headers;
  }

  /** 400: a query or path parameter is malformed or out of range. */
  static invalidParameter(parameter: string, detail: string, allowed?: unknown): ApiError {
    const extras: Record<string, unknown> = { parameter };
    if (allowed !== undefined) extras.allowed = allowed;
    return new ApiError(400, 'invalid_parameter', detail, extras);
  }

  /** 404: no such route or resource. */
  static notFound(detail = 'No resource at this path.', extras: Record<string, unknown> = {}): ApiError {
    return new ApiError(404, 'not_found', detail, extras);
  }

  /** 405: the path exists but not for this method. */
  static methodNotAllowed(method: string, allow: readonly string[]): ApiError {
    return new ApiError(
      405,
      'method_not_allowed',
      `Method ${method} is not allowed here; allowed: ${allow.join(', ')}.`,
      { allowed: [...allow] },
      { Allow: allow.join(', ') },
    );
  }

  /** 400: the request body is not what the endpoint accepts (e.g. malformed JSON). */
  static invalidBody(detail = 'The request body is malformed.'): ApiError {
    return new ApiError(400, 'invalid_body', detail);
  }

  /** 413: the request body exceeds the size limit. */
  static payloadTooLarge(limitBytes: number): ApiError {
    return new ApiError(413, 'payload_too_large', `The request body exceeds the limit of ${limitBytes} bytes.`, {
      limit_bytes: limitBytes,
    });
  }

  /** 400: the request could not be parsed as HTTP (answered below Express, see api/http/client-error.ts). */
  static malformedRequest(detail = 'The request is not well-formed HTTP/1.1.'): ApiError {
    return new ApiError(400, 'malformed_request', detail);
  }

  /** 431: the request line and headers together exceed the server's limit. */
  static headersTooLarge(limitBytes: number): ApiError {
    return new ApiError(
      431,
      'headers_too_large',
      `The request line and headers exceed the limit of ${limitBytes} bytes; send long filters in fewer or shorter parameters.`,
      { limit_bytes: limitBytes },
    );
  }

  /** 408: the request's headers or body did not arrive within the server's request timeout. */
  static requestTimeout(): ApiError {
    return new ApiError(408, 'request_timeout', 'The request did not arrive completely in time.');
  }

  /** 417: an `Expect` header this server cannot meet (it meets `100-continue` only). */
  static expectationFailed(): ApiError {
    return new ApiError(417, 'expectation_failed', 'The Expect header asks for something this server does not do; send Expect: 100-continue or none.');
  }

  /** 401: a key is required or the key is not valid. */
  static unauthorized(detail = 'A valid API key is required.'): ApiError {
    return new ApiError(401, 'unauthorized', detail, {}, { 'WWW-Authenticate': 'Bearer' });
  }

  /** 403: the caller's plan (or scopes) does not include this endpoint; `plan` names the plan it needs. */
  static planRequired(
    plan: string,
    detail = `This endpoint requires the ${plan} plan or higher.`,
    extras: Record<string, unknown> = {},
  ): ApiError {
    return new ApiError(403, 'plan_required', detail, { plan, ...extras });
  }

  /** 429: too many requests; `retryAfterSeconds` goes to `Retry-After`. */
  static rateLimited(
    retryAfterSeconds: number,
    detail = 'Rate limit exceeded.',
    extras: Record<string, unknown> = {},
  ): ApiError {
    const s = Math.max(0, Math.ceil(retryAfterSeconds));
    return new ApiError(429, 'rate_limited', detail, { retry_after: s, ...extras }, { 'Retry-After': String(s) });
  }

  /** 503: no snapshot is published yet (or the published one lacks what this endpoint reads). */
  static notReady(detail = 'No data snapshot has been published yet; retry later.'): ApiError {
    return new ApiError(503, 'not_ready', detail, {}, { 'Retry-After': '5' });
  }

  /**
   * 503: the probability endpoint was asked for the augmented mode and its evidence providers
   * failed (an outage, a rate limit, the evidence deadline), so whether evidence exists is unknown;
   * `Retry-After`. Not a 400: nothing is wrong with the request.
   */
  static evidenceUnavailable(detail: string, retryAfterSeconds: number, extras: Record<string, unknown> = {}): ApiError {
    return new ApiError(503, 'evidence_unavailable', detail, extras, { 'Retry-After': String(Math.ceil(retryAfterSeconds)) });
  }

  /** 503: fewer than two models answered the probability endpoint (issue 14); `Retry-After`. */
  static modelsUnavailable(detail: string, retryAfterSeconds: number, extras: Record<string, unknown> = {}): ApiError {
    return new ApiError(503, 'models_unavailable', detail, extras, { 'Retry-After': String(Math.ceil(retryAfterSeconds)) });
  }

  /** 422: an Idempotency-Key already used with another request body. */
  static idempotencyConflict(detail = 'This Idempotency-Key was used with another request body.'): ApiError {
    return new ApiError(422, 'idempotency_conflict', detail);
  }

  /** 409: the webhook subscription is disabled, so what was asked of it cannot happen (e.g. a replay). */
  static subscriptionDisabled(detail: string, extras: Record<string, unknown> = {}): ApiError {
    return new ApiError(409, 'subscription_disabled', detail, extras);
  }

  /** 409: the key has as many webhook subscriptions as it may have; `limit` says how many. */
  static subscriptionLimit(limit: number): ApiError {
    return new ApiError(
      409,
      'subscription_limit',
      `This key has ${limit} webhook subscriptions, as many as a key may have (QUORUM_WEBHOOKS_MAX_PER_KEY): delete one it no longer needs first (one subscription can take several event types).`,
      { limit },
    );
  }

  /**
   * 410: a cursor of a list whose order each run changes (its key is a value a run rewrites: the
   * time of the latest consensus, an edge, a track record's metric) was issued on another snapshot
   * than the one served now: its position means nothing in the new order, and continuing from it
   * would skip or repeat items without a word. The caller starts again from the first page.
   */
  static cursorExpired(parameter: string, issuedOn: string | null, served: string): ApiError {
    const on = issuedOn === null ? 'an earlier snapshot' : `snapshot ${issuedOn}`;
    return new ApiError(
      410,
      'cursor_expired',
      `Query parameter '${parameter}' is a position in the order of ${on}; snapshot ${served} has been published since, and this list's order changes with each snapshot. Start again from the first page (without '${parameter}').`,
      { parameter },
    );
  }

  /** 500: anything unexpected. The cause is logged, never sent. */
  static internal(detail = 'An internal error occurred.'): ApiError {
    return new ApiError(500, 'internal', detail);
  }

  /**
   * The problem+json body for this error at `instance` (the request path). Every body passes
   * through the key redaction (api/logging/redact.ts): a detail or instance built from what the
   * caller sent never echoes anything shaped like an API key.
   */
  toProblem(instance?: string): ProblemBody {
    const body: ProblemBody = {
      type: `urn:quorum:problem:${this.code}`,
      title: TITLES[this.code],
      status: this.status,
      code: this.code,
      detail: this.detail,
    };
    if (instance !== undefined) body.instance = instance;
    for (const [k, v] of Object.entries(this.extras)) if (!RESERVED.has(k)) body[k] = v;
    return redactDeep(body);
  }
}

/**
 * Maps anything thrown to an ApiError: ApiErrors as they are; client errors raised by Express or
 * its parsers (status 4xx, e.g. a malformed percent-encoding in the path) to a 400/404 problem
 * with a generic detail; everything else to `internal`.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // body-parser (express.json) errors carry a `type`.
  const type = (err as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') {
    const limit = (err as { limit?: unknown }).limit;
    return ApiError.payloadTooLarge(typeof limit === 'number' ? limit : 0);
  }
  // strict express.json: malformed JSON, or valid JSON that is not an object or array (null, "x", 1)
  if (type === 'entity.parse.failed') {
    return ApiError.invalidBody('The request body is not a JSON object: malformed JSON, or a bare value such as null, a string or a number.');
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return ApiError.invalidBody('The request body encoding or charset is not supported.');
  }
  const status = (err as { status?: unknown; statusCode?: unknown } | null)?.status ??
    (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 404) return ApiError.notFound();
    return new ApiError(400, 'invalid_parameter', 'The request path or query is malformed.', { parameter: 'path' });
  }
  return ApiError.internal();
}
