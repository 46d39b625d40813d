/**
 * The `Idempotency-Key` request header of the POST routes that create something (a probability
 * request, a webhook subscription): a client that retries after a lost answer sends the same key
 * and gets the first request's result instead of a second one. One definition of the header's
 * grammar, its window and how two bodies are compared.
 */
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { z } from 'zod';
import { ApiError } from '../errors/problem.ts';

/** How long a key is remembered after its first request. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/**
 * The header's schema in the OpenAPI document: the grammar `idempotencyKeyOf` applies (QA: the
 * routes documented any string of at most 200 characters, and the server refused an empty key,
 * a space or a non-ASCII character with a 400). A route adds its own description.
 */
export const idempotencyKeyHeader = z.string().regex(IDEMPOTENCY_KEY);

/** The request's Idempotency-Key (undefined: none); 400 naming the header when malformed. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const raw = req.headers['idempotency-key'];
  const key = typeof raw === 'string' ? raw : undefined;
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw ApiError.invalidParameter('Idempotency-Key', 'Idempotency-Key: 1-200 visible ASCII characters.');
  }
  return key;
}

/** sha256 of a canonical JSON (sorted keys) of the body: the same request in another key order is the same. */
export function bodyHash(body: unknown): string {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])]))
        : v;
  return createHash('sha256').update(JSON.stringify(canon(body))).digest('hex');
}
