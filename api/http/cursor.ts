/**
 * THE cursor parser: every keyset cursor of the API is base64url (no padding) of a small JSON
 * object, decoded here and nowhere else.
 *
 * - Keyset cursors of the feeds (`encodeKeyset`/`decodeKeyset`): `{"v":1,"k":<kind>,"a":[...]}`,
 *   `k` naming the route (its kind) and `a` the last row's key, typed by a zod tuple per route.
 * - The resolved-predictions cursor (`encodeResolvedCursor`/`decodeResolvedCursor`):
 *   `{"v":1,"r":<epoch µs as a decimal string>|null,"q":<question id>}`.
 *
 * A list with several orders (`sort`) names the order in its cursors' kind, `<kind>:<sort>`
 * (`sortedKind`): a key of one order means nothing in another (a rank read as an accuracy), so a
 * cursor of the same list in another sort is the 400, whose detail says so. A cursor carries no
 * filter: every list has one order whatever its filters (and language), which only narrow the set,
 * so a cursor reused with other filters is the same position in that order (README, "API").
 *
 * A cursor that is not canonical base64url, not JSON, of another route's kind (or sort), or whose key has
 * other element types than the route's schema is a 400 `invalid_parameter` naming the parameter;
 * nothing a caller sends in a cursor can raise anything else (a schema check that throws, e.g.
 * `BigInt()` of a non-number, is caught and answered as the same 400). The detail never echoes the
 * cursor. Cursors are not signed: tampering can only move the page start, and every key value is
 * bound as a SQL parameter, never spliced.
 */
import { z } from 'zod';
import { ApiError } from '../errors/problem.ts';

/** Longest cursor accepted (characters of base64url). */
export const MAX_CURSOR_LENGTH = 1024;

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT64_TEXT = /^-?[0-9]{1,19}$/;
/** A snapshot id as a cursor may carry it (a run id, pipeline/warehouse/layout.ts, within a looser alphabet). */
const SNAPSHOT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The 400 of a bad cursor, naming the answer's field that carries a good one (`cursor` ← next_cursor, `vintages_cursor` ← next_vintages_cursor). */
function badCursor(parameter: string): ApiError {
  return ApiError.invalidParameter(
    parameter,
    `Query parameter '${parameter}' is not a cursor this endpoint issued; use next_${parameter} as returned.`,
  );
}

/** The 400 of a cursor of this list issued in another order (`sortedKind`): the cursor is this endpoint's, the sort is not. */
function otherSort(parameter: string): ApiError {
  return ApiError.invalidParameter(
    parameter,
    `Query parameter '${parameter}' was issued for another sort of this list: a cursor continues the order that issued it; pass the sort of the request that returned it, or leave out ${parameter} to start from the first page.`,
  );
}

/** base64url (no padding) of the JSON of `payload`. */
export function encodeCursorJson(payload: unknown): string {
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor into `schema`'s output, or throws the 400. The one decoding path: length and
 * alphabet, canonical base64url (so one key has one spelling), JSON, then the schema, whose
 * exceptions are also a 400.
 */
export function decodeCursorJson<S extends z.ZodType>(raw: string, schema: S, parameter = 'cursor'): z.output<S> {
  if (raw.length === 0 || raw.length > MAX_CURSOR_LENGTH || !BASE64URL.test(raw)) throw badCursor(parameter);
  const buf = Buffer.from(raw, 'base64url');
  if (buf.toString('base64url') !== raw) throw badCursor(parameter);
  let json: unknown;
  try {
    json = JSON.parse(buf.toString('utf8'));
  } catch {
    throw badCursor(parameter);
  }
  return parseOrBad(schema, json, parameter);
}

/** `value` parsed by `schema`, or the 400 (a schema check that throws is the same 400). */
function parseOrBad<S extends z.ZodType>(schema: S, value: unknown, parameter: string): z.output<S> {
  let parsed: ReturnType<S['safeParse']>;
  try {
    parsed = schema.safeParse(value) as ReturnType<S['safeParse']>;
  } catch {
    throw badCursor(parameter);
  }
  if (!parsed.success) throw badCursor(parameter);
  return parsed.data as z.output<S>;
}

/** True when `s` is a decimal int64 (total: never throws, whatever the string). */
export function isInt64Text(s: string): boolean {
  if (!INT64_TEXT.test(s)) return false;
  const n = BigInt(s);
  return n >= INT64_MIN && n <= INT64_MAX;
}

/** A BIGINT key carried as a decimal string (exact beyond 2^53), range-checked to int64. */
export const int64String = z.string().refine(isInt64Text);

/**
 * A text key inside a cursor (a question id, a claim id): any non-empty string, as the warehouse
 * holds it. A key names the row a page ended on, so the cursor must take back every value a list
 * can issue, not a grammar of what ids ought to look like; it is bound as a SQL parameter.
 */
export const cursorKeyText = z.string().min(1).max(512);

/** A question id inside a cursor. */
export const cursorQuestionId = cursorKeyText;

// ---------------------------------------------------------------------------------------------
// Keyset cursors of the feeds: bound to their route by kind.

type KeyValue = string | number | null;

export function encodeKeyset(kind: string, key: readonly KeyValue[]): string {
  return encodeCursorJson({ v: 1, k: kind, a: key });
}

/** The envelope, checked before the key so that another route's key never reaches this route's schema. */
const keysetEnvelope = z.strictObject({ v: z.literal(1), k: z.string(), a: z.array(z.unknown()) });

/**
 * Cursors of a list whose order each run changes (its key is a value a run rewrites) carry the
 * snapshot they were issued on after the key: `a` = [...key, snapshot id]. encodeSnapshotKeyset
 * writes one; decodeSnapshotKeyset reads the key (a 400 as decodeKeyset) and answers a 410
 * `cursor_expired` when the snapshot served now is another one (a cursor without one, issued by
 * an earlier version, too): README, "API".
 */
export function encodeSnapshotKeyset(kind: string, key: readonly KeyValue[], snapshotId: string): string {
  return encodeKeyset(kind, [...key, snapshotId]);
}

export function decodeSnapshotKeyset<T extends z.ZodTuple>(
  raw: string,
  kind: string,
  shape: T,
  parameter = 'cursor',
): { key: z.output<T>; snapshot: string | null } {
  const a = keysetValues(raw, kind, parameter);
  const n = shape.def.items.length;
  const tail = a.slice(n);
  if (tail.length > 1 || (tail.length === 1 && (typeof tail[0] !== 'string' || !SNAPSHOT_ID.test(tail[0])))) throw badCursor(parameter);
  return { key: parseOrBad(shape, a.slice(0, n), parameter), snapshot: (tail[0] as string | undefined) ?? null };
}

/** Throws the 410 when a snapshot-bound cursor (decodeSnapshotKeyset) was issued on another snapshot than `servedId`. */
export function assertCursorSnapshot(issuedOn: string | null, servedId: string, parameter = 'cursor'): void {
  if (issuedOn !== servedId) throw ApiError.cursorExpired(parameter, issuedOn, servedId);
}

/** Decodes a cursor of `kind` whose key matches `shape` (a zod tuple); throws 400 otherwise. */
export function decodeKeyset<T extends z.ZodTuple>(raw: string, kind: string, shape: T, parameter = 'cursor'): z.output<T> {
  return parseOrBad(shape, keysetValues(raw, kind, parameter), parameter);
}

/**
 * The kind of the cursors of list `kind` in order `sort`: `<kind>:<sort>`, the spelling the
 * track records' cursors have always had, so that the cursors issued before it stay valid.
 */
export function sortedKind(kind: string, sort: string): string {
  return `${kind}:${sort}`;
}

/** The key values of a keyset cursor of `kind` (the envelope checked first: another route's, or another sort's, cursor is a 400). */
function keysetValues(raw: string, kind: string, parameter: string): unknown[] {
  const envelope = decodeCursorJson(raw, keysetEnvelope, parameter);
  if (envelope.k !== kind) {
    const list = kind.indexOf(':');
    if (list > 0 && envelope.k.startsWith(kind.slice(0, list + 1))) throw otherSort(parameter);
    throw badCursor(parameter);
  }
  return envelope.a;
}

/** A BIGINT column value (number when safe, decimal string beyond) → decimal string, or null. */
export function bigintKey(v: unknown): string | null {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  if (typeof v === 'string' && isInt64Text(v)) return v;
  return null;
}

// ---------------------------------------------------------------------------------------------
// The resolved-predictions cursor: (resolved_at DESC, question_id ASC).

const resolvedKey = z.strictObject({
  v: z.literal(1),
  /** resolved_at as epoch microseconds (decimal string, exact), or null. */
  r: int64String.nullable(),
  q: cursorQuestionId,
});

export type ResolvedCursor = { resolvedUs: bigint | null; questionId: string };

export function encodeResolvedCursor(c: ResolvedCursor): string {
  return encodeCursorJson({ v: 1, r: c.resolvedUs === null ? null : c.resolvedUs.toString(), q: c.questionId });
}

export function decodeResolvedCursor(raw: string, parameter = 'cursor'): ResolvedCursor {
  const c = decodeCursorJson(raw, resolvedKey, parameter);
  return { resolvedUs: c.r === null ? null : BigInt(c.r), questionId: c.q };
}
