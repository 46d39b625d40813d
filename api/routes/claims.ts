/**
 * The claims database (issue 11), from the derived `claims` table (sql/derive/90_claims.sql):
 * imported claims of named sources and Quorum's own scored forecasts and venue prices.
 *
 * - `GET /api/claims/` (claims): newest first, keyset-paginated by (made_at DESC, claim_id ASC);
 *   filters `source` (a slug), `kind` (probability | direction | value), `resolved` (true/false),
 *   `made_since` (ISO 8601), `question_id`.
 * - `GET /api/claims/{claim_id}` (claims.detail): one claim with its source; unknown: 404.
 */
import type { Request } from 'express';
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { cellNum as num, cellStr as str, fromColumns } from '../db/cells.ts';
import { ApiError } from '../errors/problem.ts';
import { bigintKey, decodeKeyset, encodeKeyset, int64String } from '../http/cursor.ts';
import { parseBoolean, pathId, queryEnum, queryInt, queryString, queryTimestamp } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { count, isoTime, published, zNum, zProb } from '../openapi/common.ts';

export const CLAIMS_LIMIT = { min: 1, max: 500, default: 50 } as const;
const CLAIM_KINDS = ['probability', 'direction', 'value'] as const;
const CLAIM_ID = /^[A-Za-z0-9][A-Za-z0-9:._-]{0,399}$/;
const SLUG = /^[a-z0-9][a-z0-9-]{0,199}$/;
const CURSOR_KIND = 'claims';


export const Claim = z
  .object({
    claim_id: z.string(),
    source_slug: z.string(),
    made_at: isoTime.nullable(),
    question_id: z.string().nullable().meta({ description: 'The tracked question the claim is about, if any.' }),
    subject: z.string().nullable().meta({ description: 'What the claim is about (a race, a fiscal year, a question title).' }),
    subject_key: z.string().nullable(),
    category: z.string().nullable(),
    kind: z.enum(CLAIM_KINDS),
    probability: zProb,
    side: z.string().nullable(),
    value: zNum,
    unit: z.string().nullable(),
    threshold: zNum,
    tolerance: zNum,
    horizon_days: zNum,
    resolved: z.boolean(),
    outcome: zNum.meta({ description: '1 came true, 0 did not, 0.5 a tie; null unresolved.' }),
    realized_value: zNum,
    resolved_at: isoTime.nullable(),
    hit: zNum.meta({ description: 'Directional score: 1, 0, or 0.5 for a tie (null for value claims and unresolved).' }),
    brier: zProb,
    error: zNum.meta({ description: 'value − realized_value.' }),
    within_tolerance: z.boolean().nullable(),
    reference_value: zNum,
    reference_probability: zProb,
    claim_text: z.string().nullable(),
    origin: z.enum(['import', 'quorum']),
    provenance: z.object({ dataset: z.string().nullable(), file: z.string().nullable(), line: z.number().int().nullable() }),
  })
  .meta({ id: 'Claim' });

export const ClaimPage = z
  .object({ claims: z.array(Claim), count, total: count, next_cursor: z.string().nullable() })
  .meta({ id: 'ClaimPage' });

export const ClaimDetail = z
  .object({
    claim: Claim.extend({ source: z.object({ slug: z.string(), name: z.string().nullable(), kind: z.string().nullable(), attribution: z.string().nullable() }) }),
  })
  .meta({ id: 'ClaimDetail' });

function round6(v: number | null): number | null {
  return v === null ? null : Math.round(v * 1e6) / 1e6;
}

function claim(r: JsonRow): z.input<typeof Claim> {
  return fromColumns(Claim, r, {
    kind: r.kind as (typeof CLAIM_KINDS)[number],
    tolerance: round6(num(r.tolerance)),
    horizon_days: round6(num(r.horizon_days)),
    error: round6(num(r.error)),
    reference_value: round6(num(r.reference_value)),
    origin: r.origin === 'quorum' ? 'quorum' : 'import',
    provenance: { dataset: str(r.provenance_dataset), file: str(r.provenance_file), line: num(r.provenance_line) },
  });
}

function queryPattern(req: Request, name: string, pattern: RegExp, what: string): string | null {
  const raw = queryString(req, name, 400);
  if (raw === undefined) return null;
  if (!pattern.test(raw)) throw ApiError.invalidParameter(name, `Query parameter '${name}' must be ${what}.`, { pattern: pattern.source });
  return raw;
}

export const claimsListRoute = jsonRoute({
  id: 'claims',
  path: '/api/claims/',
  summary: 'The claims database',
  description:
    'Dated claims of named sources about the future (probabilities, directions, values) with their resolution and ' +
    'provenance, newest first, keyset-paginated. Includes the AI models\', the consensus\' and the venues\' claims on ' +
    'resolved questions.',
  tags: ['track-records'],
  query: z.object({
    limit: z.int().min(CLAIMS_LIMIT.min).max(CLAIMS_LIMIT.max).default(CLAIMS_LIMIT.default).optional(),
    cursor: z.string().max(1024).optional(),
    source: z.string().regex(SLUG).optional().meta({ description: 'A source slug.' }),
    kind: z.enum(CLAIM_KINDS).optional(),
    resolved: z.boolean().optional(),
    made_since: isoTime.optional(),
    question_id: z.string().max(400).optional(),
  }),
  response: ClaimPage,
  errors: [400],
  cache: true,
  input: (req) => {
    const limit = queryInt(req, 'limit', CLAIMS_LIMIT);
    const source = queryPattern(req, 'source', SLUG, 'a source slug (a-z, 0-9, -)');
    const kind = queryEnum(req, 'kind', CLAIM_KINDS) ?? null;
    const resolvedRaw = queryString(req, 'resolved', 16);
    const resolved = resolvedRaw === undefined ? null : parseBoolean(resolvedRaw, 'resolved');
    const since = queryTimestamp(req, 'made_since');
    const questionId = queryPattern(req, 'question_id', /^\S{1,400}$/, 'a question id such as metaculus:1554');
    const raw = queryString(req, 'cursor', 1024);
    const after = raw === undefined ? null : decodeKeyset(raw, CURSOR_KIND, z.tuple([int64String, z.string().regex(CLAIM_ID)]));
    return { limit, source, kind, resolved, madeSinceUs: since ? since.epochUs.toString() : null, questionId, after };
  },
  data: async (snap, { limit, source, kind, resolved, madeSinceUs, questionId, after }) => {
    snap.require('claims');
    const filters = { source, kind, resolved, made_since_us: madeSinceUs === null ? null : BigInt(madeSinceUs), question_id: questionId };
    const [rows, counted] = await Promise.all([
      snap.query('claims-page', {
        ...filters,
        after: after !== null,
        after_made_us: after ? BigInt(after[0]) : null,
        after_claim_id: after?.[1] ?? null,
        limit: limit + 1,
      }),
      snap.query('claims-count', filters),
    ]);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const lastKey = last ? bigintKey(last.cursor_made_us) : null;
    const next = rows.length > limit && last && lastKey !== null ? encodeKeyset(CURSOR_KIND, [lastKey, String(last.claim_id)]) : null;
    return published(ClaimPage, { claims: page.map(claim), count: page.length, total: Number(counted[0]?.total ?? 0), next_cursor: next });
  },
});

export const claimsDetailRoute = jsonRoute({
  id: 'claims.detail',
  path: '/api/claims/{claim_id}',
  summary: 'One claim',
  description: 'One claim with its resolution, scores, reference and provenance, and its source.',
  tags: ['track-records'],
  params: z.object({ claim_id: z.string().regex(CLAIM_ID).meta({ description: 'e.g. fte-2018:deluxe:TX-S2' }) }),
  response: ClaimDetail,
  errors: [400, 404],
  cache: true,
  input: (req) => ({ id: pathId(req, 'claim_id', CLAIM_ID, 'a claim id (A-Z a-z 0-9 : . _ -)') }),
  data: async (snap, { id }) => {
    snap.require('claims', 'claim_sources');
    const [row] = await snap.query('claims-detail', { claim_id: id });
    if (!row) throw ApiError.notFound(`No claim '${id}' in this snapshot.`, { parameter: 'claim_id' });
    return published(ClaimDetail, {
      claim: { ...claim(row), source: { slug: String(row.source_slug), name: str(row.source_name), kind: str(row.source_kind), attribution: str(row.source_attribution) } },
    });
  },
});
