/**
 * Path and query parameters of the prediction endpoints (lifecycle, detail, language feeds, edges).
 * Every failure is a 400 `invalid_parameter` problem naming the parameter and what is allowed;
 * a well-formed value that the snapshot does not know is the route's 404.
 *
 * - question_id: venue-qualified, `<venue>:<venue market id>` — the venue in lower case
 *   (`[a-z][a-z0-9_-]{0,31}`), the market id of letters, digits, `_`, `.` and `-` (1..200 chars):
 *   `metaculus:1554`, `polymarket:0xc5e3…`, `manifold:hkmwaaZrisxgrs5Q3zGz`, `kalshi:KXFED-25DEC`,
 *   `quorum:cpi-yoy-above-3`. A URL-encoded colon (`%3A`) is decoded by the router first.
 * - market_id (detail and lifecycle): a question_id as above, or a bare venue market id (no venue
 *   prefix), served when exactly one question of the snapshot has that venue market id.
 * - lang: a BCP 47 language tag as the pipeline records it (`en`, `fr`, `pt-BR`), matched
 *   case-insensitively.
 * - min_edge: a plain decimal number from 0 to 1 (probability points), no sign or exponent.
 * - include_stale: `true` or `false` (default false).
 * - venue: one of VENUES (case-insensitive, answered in lower case); anything else is a 400 listing them.
 *
 * The detail and lifecycle endpoints resolve their path id with `findQuestion`: a venue-qualified id,
 * or a bare venue market id that exactly one question has; several → 400 listing the candidates.
 */
import type { Request } from 'express';
import { z } from 'zod';
import { languageKey, matchLanguage } from '../../dashboard/src/languages.ts';
import { MARKET_ID, MARKET_ID_CHARS, MAX_MARKET_ID_LENGTH } from '../../pipeline/questions/market-id.ts';
import { KNOWN_VENUES } from '../../pipeline/venues/known.ts';
import type { JsonRow } from '../db/convert.ts';
import { ApiError } from '../errors/problem.ts';
import { parseNumber, queryBoolean, queryEnum, queryString, shown } from '../http/params.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';

/** The market id after the venue: the grammar the import and the sync store (pipeline/questions/market-id.ts). */
const MARKET_PART = `[${MARKET_ID_CHARS}]{1,${MAX_MARKET_ID_LENGTH}}`;
export const QUESTION_ID = new RegExp(`^[a-z][a-z0-9_-]{0,31}:${MARKET_PART}$`);
/** A question id whose venue prefix may have capitals (venues match case-insensitively). */
const QUESTION_ID_ANY_CASE = new RegExp(`^[A-Za-z][A-Za-z0-9_-]{0,31}:${MARKET_PART}$`);

/**
 * `raw` as a question id with its venue lower-cased (`INFER:1717` → `infer:1717`; the market part
 * keeps its case: venues' ids are case-sensitive), or null when it is no question id.
 */
export function foldQuestionId(raw: string): string | null {
  if (!QUESTION_ID_ANY_CASE.test(raw)) return null;
  const colon = raw.indexOf(':');
  return raw.slice(0, colon).toLowerCase() + raw.slice(colon);
}
export const BARE_MARKET_ID = MARKET_ID;
export const LANG = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,3}$/;

function pathParam(req: Request, name: string): string {
  const v: unknown = (req.params as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : '';
}

export type MarketRef = { questionId: string; marketId: null } | { questionId: null; marketId: string };

/**
 * The sibling routes under /api/predictions/ that take a parameter: requested without it
 * (`/api/predictions/lifecycle/`), their name reaches the detail route as a market id.
 */
const SIBLING_ROUTES: Readonly<Record<string, string>> = {
  lifecycle: '/api/predictions/lifecycle/{question_id}/',
  lang: '/api/predictions/lang/{lang}',
};

/** The `market_id` path parameter: a question_id, or a bare venue market id. */
export function pathMarketRef(req: Request, name = 'market_id'): MarketRef {
  const raw = pathParam(req, name);
  const sibling = SIBLING_ROUTES[raw];
  if (sibling !== undefined) throw ApiError.notFound(`No endpoint at ${req.method} ${req.path}: did you mean ${sibling}?`);
  const questionId = foldQuestionId(raw);
  if (questionId !== null) return { questionId, marketId: null };
  if (BARE_MARKET_ID.test(raw)) return { questionId: null, marketId: raw };
  throw ApiError.invalidParameter(
    name,
    `Path parameter '${name}' must be a venue-qualified question id such as metaculus:1554, or a venue ` +
      `market id (letters, digits, '_', '.', '-'; at most 200 characters); got ${shown(raw)}.`,
    { pattern: QUESTION_ID.source },
  );
}

/** A `question_id` query filter: a question id (its venue in any case, as on the paths), null when absent, else a 400. */
export function queryQuestionId(req: Request, name = 'question_id'): string | null {
  const raw = queryString(req, name, 400);
  if (raw === undefined) return null;
  const id = foldQuestionId(raw);
  if (id === null) {
    throw ApiError.invalidParameter(name, `Query parameter '${name}' must be a question id such as metaculus:1554.`, { pattern: QUESTION_ID.source });
  }
  return id;
}

/** The `lang` path parameter, lower-cased (the cache key; matching is case-insensitive). */
export function pathLang(req: Request, name = 'lang'): string {
  const raw = pathParam(req, name);
  if (!LANG.test(raw)) {
    throw ApiError.invalidParameter(
      name,
      `Path parameter '${name}' must be a language tag such as en, fr or pt-BR; got ${shown(raw)}.`,
      { pattern: LANG.source },
    );
  }
  return raw.toLowerCase();
}

/** One reasoning language of a snapshot: the code it is answered under, and every code runs stored it as. */
export interface StoredLanguage {
  /** The first of `codes` in sort order (`pt-BR` before `pt-br`, `he` before `iw`). */
  lang: string;
  /** Sorted. */
  codes: string[];
}

/**
 * The stored codes grouped by language: codes in another case or another code of one language
 * (languageKey: `pt-BR` and `pt-br`, `he` and `iw`, `en` and `eng`) are one language. A code is
 * stored as configured (pipeline/config.ts), so two runs configured with two codes of one language
 * store both; the feeds serve it whole under either (QA: `/api/predictions/lang/he` served only the
 * questions whose run wrote `he`, `/lang/iw` the others, and the 404 listed it twice).
 */
export function storedLanguages(codes: readonly string[]): StoredLanguage[] {
  const byKey = new Map<string, string[]>();
  for (const code of [...new Set(codes)].sort()) {
    const key = languageKey(code);
    byKey.set(key, [...(byKey.get(key) ?? []), code]);
  }
  return [...byKey.values()].map((group) => ({ lang: group[0]!, codes: group })).sort((a, b) => (a.lang < b.lang ? -1 : 1));
}

/**
 * The language of `available` (the snapshot's stored codes) that `lang` names, case-insensitively or
 * as another code of it (languageKey: `eng` is `en`, `iw` is `he`, as QUORUM_LANGS reads them), with
 * every code it is stored under; or a 404 listing the languages, each once.
 */
export function matchLang(lang: string, available: readonly string[], name = 'lang'): StoredLanguage {
  const languages = storedLanguages(available);
  // (the languages are grouped by languageKey: at most one has a code `lang` names)
  const hit = languages.find((l) => matchLanguage(l.codes, lang) !== undefined);
  if (hit !== undefined) return hit;
  const listed = languages.map((l) => l.lang);
  throw ApiError.notFound(
    listed.length === 0
      ? `No predictions in language ${shown(lang)}: this snapshot has no active prediction with reasoning in any language.`
      : `No predictions in language ${shown(lang)}. Languages available in this snapshot: ${listed.join(', ')}.`,
    { parameter: name, allowed: listed },
  );
}

export const MIN_EDGE = { min: 0, max: 1, default: 0.05 } as const;

/**
 * `min_edge`: probability points in [0, 1]; absent or empty → 0.05. Plain decimals only, in the
 * grammar of every number parameter (parseNumber: `0.1`, `.1`, `1`, `00001`, `0.125`); a sign,
 * exponent, `NaN`, `Infinity` or a value outside [0, 1] is a 400. (It had a grammar of its own:
 * `00001` was refused and `01` accepted.)
 */
export function queryMinEdge(req: Request, name = 'min_edge'): number {
  const raw = queryString(req, name, 40);
  return raw === undefined ? MIN_EDGE.default : parseNumber(raw, name, MIN_EDGE, 'Query', 'probability points, e.g. 0.1 for 10 points');
}

// OpenAPI documentation of the parameters.
export const marketIdParam = z
  .string()
  .max(233)
  .meta({
    description:
      'The venue-qualified question id (`polymarket:0xc5e3…`), or the bare venue market id when exactly one ' +
      'question has it (several: 400 listing the matching question ids).',
    example: 'metaculus:1554',
  });

/** The path parameters of a route about one question (`{question_id}`: lifecycle, taxonomy history). */
export const questionPathParams = z.object({
  question_id: marketIdParam.meta({
    description:
      'The venue-qualified question id (`metaculus:1554`), or the bare venue market id when exactly one question ' +
      'has it (several: 400 listing the matching question ids).',
  }),
});

export const langParam = z
  .string()
  .regex(LANG)
  .meta({ description: 'Reasoning language (BCP 47 tag, case-insensitive; another code of the same language, eng or iw, is that language), e.g. en, fr, pt-BR. An unavailable one is a 404 listing the available languages.', example: 'en' });

/**
 * Every venue a question can come from: the synced venues, the ForecastBench import's sources and
 * the operators' question files (`quorum`). Sorted.
 */
export const VENUES: readonly string[] = KNOWN_VENUES;

/** The `venue` query parameter as documented (parsed by queryVenue). */
export const venueParam = z
  .enum(VENUES as [string, ...string[]])
  .meta({ description: `Only this venue's questions, one of (case-insensitive): ${VENUES.join(', ')}. Anything else is a 400.` });

/** The `venue` query filter: one of VENUES, case-insensitive (lower case out); absent or empty → null. */
export function queryVenue(req: Request, name = 'venue'): string | null {
  return queryEnum(req, name, VENUES) ?? null;
}

/** `include_stale`: `true` or `false` (case-insensitive); absent or empty → false. */
export function queryIncludeStale(req: Request, name = 'include_stale'): boolean {
  return queryBoolean(req, name, false);
}

/** The bound parameters of the market-staleness rule: the snapshot's as_of and the configured bound. */
export function staleParams(snap: PinnedSnapshot): { as_of_s: number; max_price_age_hours: number } {
  return { as_of_s: Date.parse(snap.asOf) / 1000, max_price_age_hours: snap.maxPriceAgeHours };
}

/**
 * The `questions` row a path id names (`question-lookup.sql`, with its market staleness): 404 when
 * none; 400 `invalid_parameter` listing the candidate question ids (at most 5) when a bare venue
 * market id belongs to several questions.
 */
export async function findQuestion(snap: PinnedSnapshot, ref: MarketRef, name: string): Promise<JsonRow> {
  const found = await snap.query('question-lookup', {
    question_id: ref.questionId,
    market_id: ref.marketId,
    ...staleParams(snap),
  });
  const raw = ref.questionId ?? ref.marketId;
  if (found.length === 0) {
    throw ApiError.notFound(`No question ${shown(raw)} in this snapshot.`, { parameter: name });
  }
  if (found.length > 1) {
    const ids = found.slice(0, 5).map((r) => String(r.question_id));
    throw ApiError.invalidParameter(
      name,
      `Market id ${shown(raw)} is ambiguous: ${found.length > 5 ? 'more than 5' : found.length} questions have it ` +
        `(${ids.join(', ')}). Use the venue-qualified question id.`,
      ids,
    );
  }
  return found[0]!;
}
