/**
 * The claims database (issue 11), from the derived `claims` table (sql/derive/90_claims.sql):
 * imported claims of named sources and Quorum's own scored forecasts and venue prices.
 *
 * - `GET /api/claims/` (claims): newest first, keyset-paginated by (made_at DESC, claim_id ASC);
 *   filters `source` (a slug), `kind` (probability | direction | value), `resolved` (true/false),
 *   `made_since` (ISO 8601), `question_id`.
 * - `GET /api/claims/{claim_id}` (claims.detail): one claim with its source; unknown: 404.
 */
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { cellNum as num, cellStr as str, fromColumns } from '../db/cells.ts';
import { ApiError } from '../errors/problem.ts';
import { closestNote } from '../http/closest.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { assertCursorSnapshot, bigintKey, cursorKeyText, decodeSnapshotKeyset, encodeSnapshotKeyset, int64String } from '../http/cursor.ts';
import { parseBoolean, pathId, queryEnum, queryInt, queryString, queryTimestamp } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { snapshotSourceSlugs, sourceGiven, sourceNameError, SOURCE_SLUG } from './source-param.ts';
import { queryQuestionId } from './prediction-params.ts';
import { count, DOC, isoTime, isoTimeParam, published, zDays, zFine, zNum, zProb } from '../openapi/common.ts';

export const CLAIMS_LIMIT = { min: 1, max: 500, default: 50 } as const;
const CLAIM_KINDS = ['probability', 'direction', 'value'] as const;
const CLAIM_ID = /^[A-Za-z0-9][A-Za-z0-9:._-]{0,399}$/;
const CURSOR_KIND = 'claims';


export const Claim = z
  .object({
    claim_id: z.string().meta({
      description: 'The claim\'s id: as imported, or for Quorum\'s claims `forecast:<question_id>:<model>:<mode>`, `consensus:<question_id>:<mode>`, `price:<question_id>:<observed time>`.',
    }),
    source_slug: z.string().meta({ description: 'The slug of the source that made the claim (see /api/track-records/).' }),
    made_at: isoTime.nullable().meta({ description: 'When the claim was made (a forecast\'s created_at, a price\'s observation time).' }),
    question_id: z.string().nullable().meta({ description: 'The tracked question the claim is about, if any.' }),
    subject: z.string().nullable().meta({ description: 'What the claim is about (a race, a fiscal year, a question title).' }),
    subject_key: z.string().nullable().meta({
      description: 'Groups the claims about the same target (a race; Quorum\'s claims: the question_id): the peers of reference_value.',
    }),
    category: z.string().nullable().meta({ description: 'The claim\'s category (for Quorum\'s claims, the question\'s taxonomy category).' }),
    kind: z.enum(CLAIM_KINDS).meta({
      description: 'probability: P(side happens); direction: side happens; value: a number about the subject.',
    }),
    probability: zProb.meta({ description: 'Probability claims: the probability that `side` happens (Quorum\'s claims: that the question resolves YES).' }),
    side: z.string().nullable().meta({ description: 'What the claim says happens (a candidate, "Democrat", "above"; Quorum\'s claims: `yes`).' }),
    value: zFine.meta({ description: 'The claimed value (a poll\'s margin, a projection), in `unit`.' }),
    unit: z.string().nullable().meta({ description: 'The unit of value and realized_value.' }),
    threshold: zFine.meta({ description: 'A value claim\'s threshold, where one applies.' }),
    tolerance: zFine.meta({ description: 'A value claim is within tolerance when |value − realized_value| ≤ this (null: 5% of |realized_value|).' }),
    horizon_days: zDays.meta({ description: 'Days from made_at to the event the claim is about.' }),
    resolved: z.boolean().meta({ description: 'true when an outcome or a realized value is known at as_of.' }),
    outcome: zNum.meta({ description: '1 came true, 0 did not, 0.5 a tie; null unresolved.' }),
    realized_value: zFine.meta({ description: 'The value that came to be, in `unit` (null: unresolved or not a value claim).' }),
    resolved_at: isoTime.nullable().meta({ description: 'When the claim resolved (null: unresolved at as_of).' }),
    hit: zNum.meta({ description: 'Directional score: 1, 0, or 0.5 for a tie (null for value claims and unresolved).' }),
    brier: zProb.meta({ description: 'Brier score (p − o)² of a probability claim with a YES/NO outcome (null otherwise).' }),
    log_loss: zProb.meta({
      description: 'Log loss −ln(p) when it happened, −ln(1 − p) when not, p clipped to [0.001, 0.999], of a probability claim with a YES/NO outcome (null otherwise).',
    }),
    reference_brier: zProb.meta({
      description: 'The Brier score of reference_probability on the same outcome (null without a reference or a YES/NO outcome).',
    }),
    error: zFine.meta({ description: 'value − realized_value.' }),
    within_tolerance: z.boolean().nullable().meta({ description: '|error| ≤ tolerance (null without a value and a realized value).' }),
    reference_value: zFine.meta({
      description: 'The mean value of the OTHER claims with the same subject_key in the same 14-day window of horizon_days (null: none).',
    }),
    reference_probability: zProb.meta({
      description: 'The market comparator the claim is measured against (AI model and consensus claims; null otherwise).',
    }),
    claim_text: z.string().nullable().meta({ description: 'The claim in words (imported claims without one: their subject).' }),
    origin: z.enum(['import', 'quorum']).meta({
      description: 'import: imported with `quorum import claims`; quorum: Quorum\'s own scored forecasts and the venues\' comparator prices.',
    }),
    provenance: z
      .object({
        dataset: z.string().nullable().meta({ description: 'The dataset the claim came from (`quorum` for Quorum\'s claims).' }),
        file: z.string().nullable().meta({ description: 'The file (Quorum\'s claims: the table) it was read from.' }),
        line: z.number().int().nullable().meta({ description: 'The line of that file (header = line 1; null for Quorum\'s claims).' }),
      })
      .meta({ description: 'Where the claim was read from.' }),
  })
  .meta({ id: 'Claim' });

export const ClaimPage = z
  .object({
    claims: z.array(Claim).meta({ description: 'This page of claims, newest first (ties by claim_id).' }),
    count: count.meta({ description: DOC.count }),
    total: count.meta({ description: 'Claims matching the filters, on every page.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'ClaimPage' });

export const ClaimDetail = z
  .object({
    claim: Claim.extend({
      source: z
        .object({
          slug: z.string().meta({ description: 'The source\'s slug (= source_slug).' }),
          name: z.string().nullable().meta({ description: 'The source\'s name.' }),
          kind: z.string().nullable().meta({
            description: 'pollster, forecaster, institution, market, ai_model, consensus, media or other.',
          }),
          attribution: z.string().nullable().meta({ description: 'The credit line of the data behind the source.' }),
        })
        .meta({ description: 'The source that made the claim.' }),
    }).meta({ description: 'The claim with its source.' }),
  })
  .meta({ id: 'ClaimDetail' });

function claim(r: JsonRow): z.input<typeof Claim> {
  return fromColumns(Claim, r, {
    kind: r.kind as (typeof CLAIM_KINDS)[number],
    origin: r.origin === 'quorum' ? 'quorum' : 'import',
    provenance: { dataset: str(r.provenance_dataset), file: str(r.provenance_file), line: num(r.provenance_line) },
  });
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
    cursor: z.string().max(1024).optional().meta({
      description: 'The previous page\'s next_cursor, on the snapshot that issued it: Quorum\'s own claims take the time of their latest forecast, which a run (a backfill above all) can change, so after a newer snapshot it is a 410 cursor_expired (start again).',
    }),
    source: z.string().regex(SOURCE_SLUG).optional().meta({ description: 'A source slug (capitals A-Z read as lower case: SurveyUSA is surveyusa).' }),
    kind: z.enum(CLAIM_KINDS).optional(),
    resolved: z.boolean().optional(),
    made_since: isoTimeParam.optional(),
    question_id: z.string().max(400).optional(),
  }),
  response: ClaimPage,
  errors: [400, 410],
  cache: true,
  input: (req) => {
    const limit = queryInt(req, 'limit', CLAIMS_LIMIT);
    // capitals A-Z read as lower case, as the track records' source_slug path parameter reads them;
    // a name given instead is refused in `data`, naming the closest slugs of the snapshot
    const sourceRaw = queryString(req, 'source', 400);
    const source = sourceRaw === undefined ? null : sourceGiven(sourceRaw);
    const kind = queryEnum(req, 'kind', CLAIM_KINDS) ?? null;
    const resolvedRaw = queryString(req, 'resolved', 16);
    const resolved = resolvedRaw === undefined ? null : parseBoolean(resolvedRaw, 'resolved');
    const since = queryTimestamp(req, 'made_since');
    const questionId = queryQuestionId(req);
    const raw = queryString(req, 'cursor', 1024);
    // the claim id as issued: Quorum's claims are named after their question, whose id is whatever its
    // source gave (a ForecastBench id '🚀rocket', 'with space'), not the grammar of imported claim ids
    const after = raw === undefined ? null : decodeSnapshotKeyset(raw, CURSOR_KIND, z.tuple([int64String, cursorKeyText]));
    return { limit, source, kind, resolved, madeSinceUs: since ? since.epochUs.toString() : null, questionId, after };
  },
  data: async (snap, { limit, source: given, kind, resolved, madeSinceUs, questionId, after }) => {
    snap.require('claims');
    if (given?.name != null) throw await sourceNameError(snap, 'source', "Query parameter 'source'", given.name);
    const source = given?.slug ?? null;
    // by made_at, which a run rewrites for Quorum's own claims (QA: a backfill moved 49 of them
    // ahead of a cursor, 42 skipped): a cursor is a position in one snapshot's order
    if (after !== null) assertCursorSnapshot(after.snapshot, snap.id);
    const filters = { source, kind, resolved, made_since_us: madeSinceUs === null ? null : BigInt(madeSinceUs), question_id: questionId };
    const [rows, counted] = await Promise.all([
      snap.query('claims-page', {
        ...filters,
        after: after !== null,
        after_made_us: after ? BigInt(after.key[0]) : null,
        after_claim_id: after?.key[1] ?? null,
        limit: limit + 1,
      }),
      snap.query('claims-count', filters),
    ]);
    if (rows.length === 0 && source != null) await assertKnownSource(snap, source);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const lastKey = last ? bigintKey(last.cursor_made_us) : null;
    const next = rows.length > limit && last && lastKey !== null ? encodeSnapshotKeyset(CURSOR_KIND, [lastKey, String(last.claim_id)], snap.id) : null;
    return published(ClaimPage, { claims: page.map(claim), count: page.length, total: Number(counted[0]?.total ?? 0), next_cursor: next });
  },
});

/**
 * An empty page filtered by a `source` no claim of the snapshot has (no track record: a typo, a
 * name instead of a slug) is a 400 naming the closest slugs: an empty list read as "this source
 * made no claims" (outside test: `?source=survey-usa` gave total 0, the slug being surveyusa).
 * A known source whose claims the other filters leave out is an empty list, as before.
 */
async function assertKnownSource(snap: PinnedSnapshot, source: string): Promise<void> {
  if (!snap.tables.has('track_records')) return;
  const slugs = await snapshotSourceSlugs(snap);
  if (slugs.includes(source)) return;
  const { closest, text } = closestNote(source, slugs, 'slugs');
  throw new ApiError(400, 'invalid_parameter', `No source '${source}' has claims in this snapshot.${text}`, { parameter: 'source', closest });
}

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
