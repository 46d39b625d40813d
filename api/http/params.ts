/**
 * THE query and path parameter parsers: one strict parser per parameter type (string, integer,
 * number, boolean, enum, category, ISO 8601 timestamp; cursors are in api/http/cursor.ts). Every
 * failure is a 400 `invalid_parameter` problem naming the parameter and what is allowed, and no
 * input can raise anything else: a value is checked against its grammar before it is converted, so
 * nothing malformed reaches `Number()`, `BigInt()`, a Date or DuckDB.
 *
 * Conventions (documented in the README):
 * - unknown query parameters are ignored (as datasette does);
 * - an empty value (`?venue=`) is the same as leaving the parameter out;
 * - a parameter given more than once is an error;
 * - enumerated values (categories included) match case-insensitively and are answered in their
 *   canonical lower-case form.
 *
 * Each type has a `parseX(raw, name, ...)` working on one string (for path parameters and other
 * parsers) and a `queryX(req, name, ...)` reading the query parameter through `queryString`.
 */
import type { Request } from 'express';
import { CATEGORIES, type Category } from '../../pipeline/warehouse/tables.ts';
import { ApiError } from '../errors/problem.ts';

/** The value shown back in a problem detail: JSON-quoted and cut at 64 characters. */
export function shown(raw: string): string {
  return JSON.stringify(raw.length > 64 ? `${raw.slice(0, 64)}…` : raw);
}

// ---------------------------------------------------------------------------------------------
// string

/**
 * A 400 for a query parameter written in the bracket style of PHP, Rails or qs clients
 * (`mode[]=blind`, `filter[mode]=blind`): the parser keeps `mode[]` as a name of its own, which no
 * route reads, so the filter was ignored and the unfiltered answer read as filtered (QA). Parameters
 * here are single plain values; the detail names the plain form.
 */
export function rejectBracketedParams(req: Request): void {
  for (const name of Object.keys(req.query as Record<string, unknown>)) {
    const open = name.indexOf('[');
    if (open === -1 && !name.includes(']')) continue;
    const base = open > 0 ? name.slice(0, open) : name;
    const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
    throw ApiError.invalidParameter(
      shown,
      `Query parameter '${shown}' is in a bracket form this API does not read: parameters are single plain values, ` +
        `given once (${open > 0 ? `${base}=…` : 'name=value'}), never arrays or objects.`,
    );
  }
}

/**
 * The first of `names` the request gives a value (an empty value is a parameter left out), or
 * undefined: the check behind every "this route has no such filter" 400 (a filter another route
 * applies, ignored here as unknown parameters are, would answer unfiltered figures as if filtered).
 */
export function firstGiven(req: Request, names: Iterable<string>): string | undefined {
  const query = req.query as Record<string, unknown>;
  for (const name of names) if (query[name] !== undefined && query[name] !== '') return name;
  return undefined;
}

/**
 * The names by which the API filters (a list's query filters and the ids its paths take): one given
 * to a route that does not read it is refused (foreignFilterCheck), not ignored as unknown
 * parameters are. Paging and output parameters (limit, cursor, output, …) are not filters.
 */
export const FILTER_NAMES = [
  'category', 'venue', 'mode', 'rounds', 'domain', 'horizon', 'dimension', 'since', 'status', 'kind', 'source',
  'origin', 'resolved', 'min_edge', 'include_stale', 'made_since', 'min_resolved', 'sort', 'updated_since',
  'resolved_since', 'created_since', 'question_id', 'market_id', 'lang', 'model', 'forecaster', 'source_slug',
  'claim_id', 'thesis_id', 'factor_id', 'scenario_id',
] as const;

/**
 * Refuses a filter (FILTER_NAMES) the route does not read (`own`: its documented query parameters):
 * ignored as an unknown parameter, it answered unfiltered figures as if filtered (QA:
 * /api/factors/?category=politics listed every factor, /api/factors/health/?factor_id= every
 * factor's health, /api/clusters/?status=active every thesis, each with 200; the scoring routes
 * share their filters' names but each applies only some). An empty value is a parameter left out.
 * `hint`: the route's word on where such figures are (the accuracy summaries'), added to the 400.
 * `wholeList`: the route answers a list in the paged lists' shape (`next_cursor`) but whole: `limit`
 * and `cursor` it does not read are refused, not ignored (outside test: a source's trends with
 * `?limit=2` answered all 42 years).
 * Returns the check for one route (the names it does not read listed once, not on every request).
 */
export function foreignFilterCheck(path: string, own: readonly string[], hint?: string, wholeList = false): (req: Request) => void {
  const foreign = FILTER_NAMES.filter((f) => !own.includes(f));
  const tail = `Its query parameters: ${own.length > 0 ? own.join(', ') : 'none'}.${hint ? ` ${hint}` : ''}`;
  const renamedPaging = renamedPagingParameters(own);
  const unpaged = wholeList ? ['limit', 'cursor'].filter((p) => !own.includes(p)) : [];
  const misspelt = misspeltNames([...own, ...FILTER_NAMES]);
  return (req) => {
    const wrong = misspeltParameter(req, misspelt);
    if (wrong !== undefined) {
      throw ApiError.invalidParameter(wrong.given, `${path} has no '${wrong.given}' parameter: parameter names are lowercase, with '_' (did you mean '${wrong.meant}'?); '${wrong.given}' would be ignored. ${tail}`);
    }
    const name = firstGiven(req, foreign);
    if (name !== undefined) throw ApiError.invalidParameter(name, `${path} has no '${name}' filter: it would answer unfiltered figures as if filtered. ${tail}`);
    const whole = firstGiven(req, unpaged);
    if (whole !== undefined) throw ApiError.invalidParameter(whole, `${path} has no '${whole}' parameter: its list is answered whole, in one page (next_cursor is always null), and '${whole}' would be ignored. ${tail}`);
    const paging = firstGiven(req, renamedPaging.keys());
    if (paging !== undefined) {
      const names = renamedPaging.get(paging)!;
      throw ApiError.invalidParameter(paging, `${path} has no '${paging}' parameter: it pages its lists with ${names.join(' and ')}, and '${paging}' would be ignored. ${tail}`);
    }
  };
}

/**
 * The names a route reads and the API's filters, by their lowercase form: a parameter given as
 * `Kind`, `MIN_RESOLVED` or `made-since` is one of them written otherwise, which ignored as an
 * unknown parameter answered every row as if filtered (outside test: `/api/track-records/?Kind=pollster`
 * listed every source).
 */
export function misspeltNames(names: readonly string[]): Map<string, string> {
  return new Map(names.map((n) => [n.toLowerCase(), n]));
}

/**
 * The first query parameter of `req` that is one of `misspelt`'s names (misspeltNames) written in
 * another case or with `-` for `_` (`LIMIT`, `Resolved_Since`, `made-since`), with the name meant;
 * undefined when there is none. Ignored as an unknown parameter, it would answer as if unfiltered.
 */
export function misspeltParameter(req: Request, misspelt: ReadonlyMap<string, string>): { given: string; meant: string } | undefined {
  for (const given of Object.keys(req.query as object)) {
    const meant = misspelt.get(given.toLowerCase().replaceAll('-', '_'));
    if (meant !== undefined && meant !== given) return { given, meant };
  }
  return undefined;
}

/**
 * `limit` and `cursor` on a route that pages a nested list under its own names instead
 * (`records_limit`, `vintages_cursor`, … and no plain `limit`/`cursor`), each mapped to those
 * names: ignored as unknown parameters are, `?limit=5` answered up to 100 records (QA). So is the
 * nested list's own name (`vintages`, `records`), which a list route may take as a count
 * (`/api/clusters/?vintages=5`): on the detail route `?vintages=5` answered 100 vintages (outside test).
 */
function renamedPagingParameters(own: readonly string[]): Map<string, string[]> {
  const renamed = new Map<string, string[]>();
  for (const plain of ['limit', 'cursor']) {
    const names = own.filter((p) => p.endsWith(`_${plain}`));
    if (!own.includes(plain) && names.length > 0) renamed.set(plain, names);
  }
  for (const name of own) {
    const list = name.endsWith('_limit') ? name.slice(0, -'_limit'.length) : null;
    if (list && !own.includes(list)) renamed.set(list, own.filter((p) => p === `${list}_limit` || p === `${list}_cursor`));
  }
  return renamed;
}

/** The single string value of query parameter `name`, or undefined when absent or empty. */
export function queryString(req: Request, name: string, maxLength = 200): string | undefined {
  const query = req.query as Record<string, unknown>;
  if (!Object.hasOwn(query, name)) return undefined;
  const raw: unknown = query[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw ApiError.invalidParameter(name, `Query parameter '${name}' must be given once, as a plain value.`);
  if (raw === '') return undefined;
  if (raw.length > maxLength) {
    throw ApiError.invalidParameter(name, `Query parameter '${name}' is longer than ${maxLength} characters.`);
  }
  return raw;
}

/**
 * The grammar of the ids the structure files give theses, factors and scenarios (`^[a-z0-9][a-z0-9-]{1,62}$`,
 * as pipeline/structure checks them), in words for a 400's detail: its length and case said too
 * (QA: `/api/scenarios/a/` was refused as not "a-z, 0-9, -").
 */
export const STRUCTURE_ID_GRAMMAR = '2 to 63 characters: lower-case letters, digits and dashes, not beginning with a dash';

/**
 * Path parameter `name` matching `pattern` (an id: a thesis, factor, scenario, claim or source
 * slug), or a 400 saying it must be `what` and giving the pattern.
 */
export function pathId(req: Request, name: string, pattern: RegExp, what: string, normalize: (id: string) => string = (id) => id): string {
  const raw: unknown = (req.params as Record<string, unknown>)[name];
  const id = typeof raw === 'string' ? normalize(raw) : '';
  if (!pattern.test(id)) throw ApiError.invalidParameter(name, `Path parameter '${name}' must be ${what}.`, { pattern: pattern.source });
  return id;
}

// ---------------------------------------------------------------------------------------------
// integer

export interface IntRange {
  min: number;
  max: number;
  default: number;
}

const DIGITS = /^[0-9]{1,15}$/;

/** A decimal integer in [min, max]: digits only (no sign, exponent, spaces or fraction). */
export function parseInteger(raw: string, name: string, range: { min: number; max: number }, where = 'Query'): number {
  const n = DIGITS.test(raw) ? Number(raw) : NaN;
  if (!(n >= range.min && n <= range.max)) {
    throw ApiError.invalidParameter(
      name,
      `${where} parameter '${name}' must be an integer from ${range.min} to ${range.max}; got ${shown(raw)}.`,
      { min: range.min, max: range.max },
    );
  }
  return n;
}

/** Query parameter `name` as an integer in [min, max]; absent or empty → the default. */
export function queryInt(req: Request, name: string, range: IntRange): number {
  const raw = queryString(req, name, 32);
  return raw === undefined ? range.default : parseInteger(raw, name, range);
}

// ---------------------------------------------------------------------------------------------
// number

export interface NumberRange {
  min: number;
  max: number;
  default: number;
}

/** A plain decimal: optional minus, digits with an optional fraction (`1`, `0.25`, `.5`, `2.`). */
// Up to 20 fraction digits: a float printed in full (String(0.1 + 0.2) = '0.30000000000000004')
// is a number a client may well send.
const DECIMAL = /^-?(?:[0-9]{1,15}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})$/;

/**
 * A finite plain decimal number in [min, max]. No exponent, `NaN`, `Infinity`, hex, `+` or spaces
 * (a minus sign only when the range allows negatives). The problem says which it broke: the
 * grammar (more than 20 fraction digits, say) or the range. `hint`: what the number means, added
 * to the detail (`probability points, e.g. 0.1 for 10 points`).
 */
export function parseNumber(raw: string, name: string, range: { min: number; max: number }, where = 'Query', hint?: string): number {
  const plain = DECIMAL.test(raw) && (range.min < 0 || raw[0] !== '-');
  const n = plain ? Number(raw) : NaN;
  if (!(Number.isFinite(n) && n >= range.min && n <= range.max)) {
    const what = plain
      ? `a number from ${range.min} to ${range.max}`
      : `a plain decimal number from ${range.min} to ${range.max} (at most 15 integer and 20 fraction digits; ` +
        `no ${range.min < 0 ? '' : 'sign, '}exponent or spaces)`;
    throw ApiError.invalidParameter(
      name,
      `${where} parameter '${name}' must be ${what}${hint ? ` (${hint})` : ''}; got ${shown(raw)}.`,
      { min: range.min, max: range.max },
    );
  }
  return n;
}

/** Query parameter `name` as a number in [min, max]; absent or empty → the default. */
export function queryNumber(req: Request, name: string, range: NumberRange): number {
  const raw = queryString(req, name, 40);
  return raw === undefined ? range.default : parseNumber(raw, name, range);
}

// ---------------------------------------------------------------------------------------------
// boolean

/** `true` or `false` (case-insensitive). */
export function parseBoolean(raw: string, name: string, where = 'Query'): boolean {
  const v = raw.toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw ApiError.invalidParameter(name, `${where} parameter '${name}' must be true or false; got ${shown(raw)}.`, ['true', 'false']);
}

/** Query parameter `name` as a boolean; absent or empty → `fallback`. */
export function queryBoolean(req: Request, name: string, fallback = false): boolean {
  const raw = queryString(req, name, 16);
  return raw === undefined ? fallback : parseBoolean(raw, name);
}

// ---------------------------------------------------------------------------------------------
// enum

/** One of `allowed` (lower-case values), matched case-insensitively. */
export function parseEnum<T extends string>(raw: string, name: string, allowed: readonly T[], where = 'Query'): T {
  const lower = raw.toLowerCase();
  const v = allowed.find((a) => a === lower);
  if (v === undefined) {
    throw ApiError.invalidParameter(
      name,
      `${where} parameter '${name}' must be one of: ${allowed.join(', ')}; got ${shown(raw)}.`,
      [...allowed],
    );
  }
  return v;
}

/** Query parameter `name` as one of `allowed`; absent or empty → undefined. */
export function queryEnum<T extends string>(req: Request, name: string, allowed: readonly T[]): T | undefined {
  const raw = queryString(req, name, 64);
  return raw === undefined ? undefined : parseEnum(raw, name, allowed);
}

// ---------------------------------------------------------------------------------------------
// category

/** Canonical category for `value` (case-insensitive), or undefined. */
export function matchCategory(value: string): Category | undefined {
  const lower = value.toLowerCase();
  return CATEGORIES.find((c) => c === lower);
}

/** The `category` query filter, validated against the nine categories. */
export function queryCategory(req: Request, name = 'category'): Category | undefined {
  const raw = queryString(req, name, 64);
  if (raw === undefined) return undefined;
  const c = matchCategory(raw);
  if (!c) {
    throw ApiError.invalidParameter(
      name,
      `Query parameter '${name}' must be one of the ${CATEGORIES.length} categories: ${CATEGORIES.join(', ')}.`,
      [...CATEGORIES],
    );
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// timestamp

/** A point in time, normalized to UTC, in the forms its users need. */
export interface Timestamp {
  /** ISO 8601 UTC with microseconds: `2025-03-01T12:00:00.000123Z`. */
  iso: string;
  /** DuckDB TIMESTAMP literal form (UTC): `2025-03-01 12:00:00.000123`. */
  sql: string;
  /** Microseconds since the Unix epoch. */
  epochUs: bigint;
}

/** The accepted range, after conversion to UTC: what DuckDB TIMESTAMP holds and our data use. */
export const TIMESTAMP_MIN = '1970-01-01T00:00:00Z';
export const TIMESTAMP_MAX = '9999-12-31T23:59:59.999999Z';
const MAX_EPOCH_S = Date.UTC(9999, 11, 31, 23, 59, 59) / 1000;

/**
 * The grammar: `YYYY-MM-DD` (midnight UTC) or `YYYY-MM-DDThh:mm[:ss[.f{1,6}]]` with an optional
 * `Z` or `±hh:mm` / `±hhmm` offset (none: UTC); `T` may be `t` or a space, `Z` may be `z`. At most
 * microseconds, what the warehouse keeps: a finer instant cannot be honoured exactly (cut to
 * microseconds, `since=…00.1234567` would include a row at `…00.123456`), so it is a 400.
 */
const ISO_TIMESTAMP =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,6}))?)?(?:[Zz]|([+-])([0-9]{2}):?([0-9]{2}))?)?$/;

/**
 * Parses an ISO 8601 date or date-time, or returns null when it does not follow the grammar, names
 * an impossible date or time (2025-02-30, 24:00, :60, an offset beyond ±18:00) or falls outside
 * [TIMESTAMP_MIN, TIMESTAMP_MAX] once converted to UTC.
 */
export function parseTimestampValue(value: string): Timestamp | null {
  const m = ISO_TIMESTAMP.exec(value);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', sign, oh = '00', om = '00'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  // Years below 1969 can never land in range (offsets are at most 18 h), and Date.UTC would read
  // years 0-99 as 1900-1999.
  if (year < 1969 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const dayStart = Date.UTC(year, month - 1, day);
  const check = new Date(dayStart);
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  const offsetHours = Number(oh);
  const offsetMinutes = Number(om);
  if (offsetHours > 18 || offsetMinutes > 59 || (offsetHours === 18 && offsetMinutes > 0)) return null;
  const offsetS = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60);
  const epochS = dayStart / 1000 + hour * 3600 + minute * 60 + second - offsetS;
  if (epochS < 0 || epochS > MAX_EPOCH_S) return null;
  const micros = frac.padEnd(6, '0').slice(0, 6);
  const whole = new Date(epochS * 1000).toISOString().slice(0, 19); // YYYY-MM-DDTHH:MM:SS (in range: 4-digit year)
  return {
    iso: `${whole}.${micros}Z`,
    sql: `${whole.slice(0, 10)} ${whole.slice(11)}.${micros}`,
    epochUs: BigInt(epochS) * 1_000_000n + BigInt(micros),
  };
}

/** A date-time whose offset's `+` arrived as a space: an unencoded `+` in a query string is one. */
const PLUS_AS_SPACE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)? ([0-9]{2}:?[0-9]{2})$/;

/**
 * The 400 detail of timestamp parameter `name` whose value `raw` is not one: the grammar, the
 * value received, and, when an offset's `+` arrived as a space (`?since=2025-03-01T12:00:00+02:00`
 * typed as is), how to send it (`%2B`): without it the detail named `+02:00` as allowed while
 * rejecting exactly that (QA).
 */
export function timestampDetail(raw: string, name: string, where = 'Query'): string {
  const plus = PLUS_AS_SPACE.exec(raw);
  const hint = plus ? ` (a '+' in a URL's query string is read as a space: send the offset as %2B${plus[1]})` : '';
  return `${where} parameter '${name}' must be an ISO 8601 date (2025-03-01) or date-time (2025-03-01T12:00:00Z, ` +
    `optionally with an offset such as +02:00) from ${TIMESTAMP_MIN} to ${TIMESTAMP_MAX} in UTC; got ${shown(raw)}${hint}.`;
}

/** An ISO 8601 timestamp (see parseTimestampValue), or the 400 naming the parameter. */
export function parseTimestamp(raw: string, name: string, where = 'Query'): Timestamp {
  const t = raw.length <= 40 ? parseTimestampValue(raw) : null;
  if (t === null) {
    throw ApiError.invalidParameter(name, timestampDetail(raw, name, where), { min: TIMESTAMP_MIN, max: TIMESTAMP_MAX });
  }
  return t;
}

/** Query parameter `name` as a timestamp; absent or empty → undefined. */
export function queryTimestamp(req: Request, name: string): Timestamp | undefined {
  const raw = queryString(req, name, 40);
  return raw === undefined ? undefined : parseTimestamp(raw, name);
}
