/**
 * Opaque keyset cursors: base64url (no padding) of a small JSON object holding the last row's
 * key. A cursor that does not decode to exactly that shape is a 400 `invalid_parameter`.
 * Cursors are not signed: tampering can only move the page start, and every value in them is
 * bound as a SQL parameter, never spliced.
 */
import { z } from 'zod';
import { ApiError } from '../errors/problem.ts';

/** The key of the resolved-predictions ordering: (resolved_at DESC, question_id ASC). */
const resolvedKey = z.strictObject({
  v: z.literal(1),
  /** resolved_at as epoch microseconds (decimal string, exact), or null. */
  r: z.string().regex(/^-?[0-9]{1,19}$/).nullable(),
  q: z.string().min(1).max(512),
});

export type ResolvedCursor = { resolvedUs: bigint | null; questionId: string };

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function encodeResolvedCursor(c: ResolvedCursor): string {
  const payload = { v: 1, r: c.resolvedUs === null ? null : c.resolvedUs.toString(), q: c.questionId };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

export function decodeResolvedCursor(raw: string, parameter = 'cursor'): ResolvedCursor {
  const bad = () =>
    ApiError.invalidParameter(parameter, `Query parameter '${parameter}' is not a cursor this endpoint issued; use next_cursor as returned.`);
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(raw)) throw bad();
  const buf = Buffer.from(raw, 'base64url');
  if (buf.toString('base64url') !== raw) throw bad(); // non-canonical encoding
  let json: unknown;
  try {
    json = JSON.parse(buf.toString('utf8'));
  } catch {
    throw bad();
  }
  const parsed = resolvedKey.safeParse(json);
  if (!parsed.success) throw bad();
  const r = parsed.data.r === null ? null : BigInt(parsed.data.r);
  if (r !== null && (r < INT64_MIN || r > INT64_MAX)) throw bad();
  return { resolvedUs: r, questionId: parsed.data.q };
}
