/**
 * Keyset cursors of the prediction feeds (edges, predictions by language, events by language):
 * base64url (no padding) of `{"v":1,"k":<kind>,"a":[...the last row's key...]}`. A cursor is bound
 * to its endpoint by `kind`; one that does not decode to exactly its kind and key shape is a 400
 * `invalid_parameter` naming `cursor`. Cursors are not signed: tampering can only move the page
 * start, and every key value is bound as a SQL parameter, never spliced.
 */
import { z } from 'zod';
import { ApiError } from '../errors/problem.ts';

const MAX_CURSOR = 1024;

export function encodeKeyset(kind: string, key: readonly (string | number | null)[]): string {
  return Buffer.from(JSON.stringify({ v: 1, k: kind, a: key }), 'utf8').toString('base64url');
}

/** Decodes a cursor of `kind` whose key matches `shape` (a zod tuple); throws 400 otherwise. */
export function decodeKeyset<T extends z.ZodTuple>(raw: string, kind: string, shape: T, parameter = 'cursor'): z.infer<T> {
  const bad = () =>
    ApiError.invalidParameter(parameter, `Query parameter '${parameter}' is not a cursor this endpoint issued; use next_cursor as returned.`);
  if (raw.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(raw)) throw bad();
  const buf = Buffer.from(raw, 'base64url');
  if (buf.toString('base64url') !== raw) throw bad(); // non-canonical encoding
  let json: unknown;
  try {
    json = JSON.parse(buf.toString('utf8'));
  } catch {
    throw bad();
  }
  const parsed = z.strictObject({ v: z.literal(1), k: z.literal(kind), a: shape }).safeParse(json);
  if (!parsed.success) throw bad();
  return (parsed.data as { a: unknown }).a as z.infer<T>;
}

/** A BIGINT key carried as a decimal string (exact beyond 2^53), range-checked to int64. */
export const int64String = z
  .string()
  .regex(/^-?[0-9]{1,19}$/)
  .refine((s) => {
    const n = BigInt(s);
    return n >= -(2n ** 63n) && n <= 2n ** 63n - 1n;
  });

/** A question id inside a cursor. */
export const cursorQuestionId = z.string().min(1).max(512);

/** A BIGINT column value (number when safe, decimal string beyond) → decimal string, or null. */
export function bigintKey(v: unknown): string | null {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return v;
  return null;
}
