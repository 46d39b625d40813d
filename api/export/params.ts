/**
 * The export's query parameters, validated with zod. Every failure is a 400 `invalid_parameter`
 * problem naming the parameter (and what is allowed). Conventions of api/http/params.ts: unknown
 * parameters are ignored, an empty value is the same as leaving the parameter out, a parameter
 * given more than once is an error; enumerated values match case-insensitively.
 *
 * - `output`: csv (default) | json | jsonl | parquet
 * - `limit`: positive integer ≤ 1,000,000,000; absent: every row the plan allows
 * - `status` (predictions): active | closed | resolved | annulled (the question's status) |
 *   all (default)
 * - time filters, each named for the column it compares (`<column>_since` keeps rows whose
 *   `<column>_at` is at or after it): `updated_since`, `resolved_since`, `created_since`. Which
 *   apply to which table is in tables.ts; `since` is the documented alias of the table's main one.
 *   Values: ISO 8601 date (`2025-03-01`, midnight UTC) or date-time (`2025-03-01T12:00:00Z`, with
 *   an optional offset; none means UTC), through THE strict timestamp parser of api/http/params.ts
 * - `category`: one of the nine categories
 *
 * Unknown parameters are ignored, except the filters (and `sort`, `cursor`) of the exported tables'
 * own list endpoints that no export applies (LIST_ONLY_FILTERS), and every other filter name of the
 * API (api/http/params.ts FILTER_NAMES: `model`, `source_slug`, …; routes.ts): an export that dropped
 * `source=` or `made_since=` in silence returned every row of the table, read as filtered (QA);
 * and except these names (EXPORT_PARAMS, the filters) written in another case or with `-` for `_`
 * (`LIMIT`, `Resolved_Since`): a 400 naming the one meant (routes.ts rejectMisspeltParams).
 */
import type { Request } from 'express';
import { z } from 'zod';
import { CATEGORIES, type Category } from '../../pipeline/warehouse/tables.ts';
import { ApiError } from '../errors/problem.ts';
import { parseTimestampValue, shown, timestampDetail, TIMESTAMP_MAX, TIMESTAMP_MIN } from '../http/params.ts';
import { EXPORT_FORMATS, type ExportFormat } from './formats.ts';

export const EXPORT_STATUSES = ['active', 'closed', 'resolved', 'annulled', 'all'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];
export const MAX_EXPORT_LIMIT = 1_000_000_000;

/** The time filters, each named for the column it compares; also the SQL files' parameter names. */
export const TIME_FILTERS = ['updated_since', 'resolved_since', 'created_since'] as const;
export type TimeFilter = (typeof TIME_FILTERS)[number];

/** Every query parameter an export reads (parseExportParams). */
export const EXPORT_PARAMS = ['output', 'limit', 'status', 'since', ...TIME_FILTERS, 'category'] as const;

export interface ExportParams {
  output: ExportFormat;
  limit: number | null;
  status: ExportStatus;
  /** `since` (the alias): UTC, `YYYY-MM-DD HH:MM:SS.ffffff` (DuckDB TIMESTAMP literal form), or null. */
  since: string | null;
  /** The named time filters given, same form. */
  timeFilters: Partial<Record<TimeFilter, string>>;
  category: Category | null;
}

const lower = (s: string): string => s.toLowerCase();

/**
 * Parses an ISO 8601 date or date-time into a UTC DuckDB TIMESTAMP literal (microseconds kept),
 * or null when it is not one, names an impossible date such as 2025-02-30, or falls outside the
 * range DuckDB and our data accept once converted to UTC (THE timestamp parser, api/http/params.ts).
 */
export function parseSince(value: string): string | null {
  return parseTimestampValue(value)?.sql ?? null;
}

/**
 * Parameters of the exported tables' JSON list endpoints (GET /api/claims/, /api/track-records/,
 * /api/predictions/resolved, the keyset-paginated lists) that the export does not take: given to an
 * export, each is a 400 naming it (the route adds the table's own filters), with what to use instead.
 */
export const LIST_ONLY_FILTERS: Readonly<Record<string, string>> = {
  source: 'the export has no source filter',
  kind: 'the export has no kind filter',
  resolved: 'the export has no resolved filter; resolved_since keeps the rows resolved at or after a time',
  made_since: 'the claims export names it created_since (made_at)',
  question_id: 'the export has no question_id filter',
  min_resolved: 'the export has no min_resolved filter',
  venue: 'the export has no venue filter',
  // the prediction lists' and the leaderboard's filters
  mode: 'the export has no mode filter (predictions: the headline mode; forecasts and scores: every mode, in column mode)',
  domain: 'the export has no domain filter; category filters by category',
  horizon: 'the export has no horizon filter',
  lang: 'the export has no language filter',
  min_edge: 'the export has no edge filter',
  origin: 'the export has no origin filter',
  rounds: 'the export has no rounds filter',
  sort: 'an export has one fixed row order (README "Exports")',
  cursor: 'an export is not paginated; use limit and a time filter',
  // the format's name in other APIs (datasette's _format among them): ignored, it exported CSV to a
  // client that asked for JSONL (outside test: /api/export/claims/?format=jsonl)
  format: 'the format is the output parameter: output=csv|json|jsonl|parquet',
  _format: 'the format is the output parameter: output=csv|json|jsonl|parquet',
};

interface ParamRule<T> {
  schema: z.ZodType<T>;
  maxLength: number;
  /** The 400 detail for the value received (shown back, as every endpoint's parameters do). */
  detail: (raw: string) => string;
  allowed?: unknown;
}

/** A time filter: THE strict timestamp parser, UTC literal out. */
function timeRule(name: string): ParamRule<string> {
  return {
    schema: z.string().transform((s, ctx) => {
      const parsed = parseSince(s);
      if (parsed === null) {
        ctx.addIssue({ code: 'custom', message: 'not an ISO 8601 date or date-time' });
        return z.NEVER;
      }
      return parsed;
    }),
    maxLength: 40,
    detail: (raw) => timestampDetail(raw, name),
    allowed: { min: TIMESTAMP_MIN, max: TIMESTAMP_MAX },
  };
}

const RULES = {
  output: {
    schema: z.string().transform(lower).pipe(z.enum(EXPORT_FORMATS)),
    maxLength: 16,
    detail: (raw) => `Query parameter 'output' must be one of: ${EXPORT_FORMATS.join(', ')}; got ${shown(raw)}.`,
    allowed: [...EXPORT_FORMATS],
  },
  limit: {
    schema: z
      .string()
      .regex(/^[0-9]{1,10}$/)
      .transform(Number)
      .pipe(z.number().int().min(1).max(MAX_EXPORT_LIMIT)),
    maxLength: 16,
    detail: (raw) => `Query parameter 'limit' must be a positive integer up to ${MAX_EXPORT_LIMIT}; got ${shown(raw)}.`,
    allowed: { min: 1, max: MAX_EXPORT_LIMIT },
  },
  status: {
    schema: z.string().transform(lower).pipe(z.enum(EXPORT_STATUSES)),
    maxLength: 16,
    detail: (raw) => `Query parameter 'status' must be one of: ${EXPORT_STATUSES.join(', ')}; got ${shown(raw)}.`,
    allowed: [...EXPORT_STATUSES],
  },
  since: timeRule('since'),
  updated_since: timeRule('updated_since'),
  resolved_since: timeRule('resolved_since'),
  created_since: timeRule('created_since'),
  category: {
    schema: z.string().transform(lower).pipe(z.enum(CATEGORIES)),
    maxLength: 64,
    detail: (raw) => `Query parameter 'category' must be one of the ${CATEGORIES.length} categories: ${CATEGORIES.join(', ')}; got ${shown(raw)}.`,
    allowed: [...CATEGORIES],
  },
} satisfies Record<string, ParamRule<unknown>>;

function parseOne<T>(req: Request, name: string, rule: ParamRule<T>): T | undefined {
  const raw: unknown = (req.query as Record<string, unknown>)[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') {
    throw ApiError.invalidParameter(name, `Query parameter '${name}' must be given once, as a plain value.`, rule.allowed);
  }
  if (raw === '') return undefined;
  if (raw.length > rule.maxLength) throw ApiError.invalidParameter(name, rule.detail(raw), rule.allowed);
  const parsed = rule.schema.safeParse(raw);
  if (!parsed.success) throw ApiError.invalidParameter(name, rule.detail(raw), rule.allowed);
  return parsed.data;
}

/** The export parameters of `req`, or a 400 invalid_parameter ApiError. */
export function parseExportParams(req: Request): ExportParams {
  return {
    output: parseOne(req, 'output', RULES.output) ?? 'csv',
    limit: parseOne(req, 'limit', RULES.limit) ?? null,
    status: parseOne(req, 'status', RULES.status) ?? 'all',
    since: parseOne(req, 'since', RULES.since) ?? null,
    timeFilters: Object.fromEntries(
      TIME_FILTERS.flatMap((name) => {
        const v = parseOne(req, name, RULES[name]);
        return v === undefined ? [] : [[name, v]];
      }),
    ),
    category: parseOne(req, 'category', RULES.category) ?? null,
  };
}
