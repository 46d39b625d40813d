/**
 * Track records of named sources (issue 11): pollsters, forecasters, institutions, the venues, the
 * AI models and the consensus, from the derived tables of sql/derive/90-94 (see sql/README.md).
 *
 * - `GET /api/track-records/` (track_records.overview): every source, ranked by the shrunk
 *   accuracy score (rank null under 10 resolved directional claims: shown, not ranked); filters `kind`,
 *   `min_resolved`, `category`; `sort` rank (default) | accuracy | n_resolved | brier | mae | slug;
 *   keyset-paginated (`limit`, `cursor`).
 * - `GET /api/track-records/sources/{source_slug}/` (track_records.source): `{ source: {...,
 *   calibration, horizons} }`.
 * - `GET /api/track-records/sources/{source_slug}/trends/` (track_records.trends): the metrics per year.
 * An unknown slug is a 404 problem naming the closest slugs (`closest`, by edit distance).
 */
import type { Request } from 'express';
import { z } from 'zod';
import { SOURCE_KINDS } from '../../pipeline/claims/formats.ts';
import type { JsonRow } from '../db/convert.ts';
import { notFoundClosest } from '../http/closest.ts';
import { assertCursorSnapshot, decodeSnapshotKeyset, encodeSnapshotKeyset, sortedKind } from '../http/cursor.ts';
import { queryCategory, queryEnum, queryInt, queryString } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { categoryParam, count, DOC, isoTime, published, zFine, zPct, zProb } from '../openapi/common.ts';
import { roundPercent } from '../http/precision.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { snapshotSourceSlugs, sourceGiven, sourceNameError, SOURCE_SLUG, type SourceGiven } from './source-param.ts';

export const TRACK_LIMIT = { min: 1, max: 500, default: 50 } as const;
/** `min_resolved`: one range for the parser and the OpenAPI document. */
const MIN_RESOLVED = { min: 0, max: 1_000_000_000, default: 0 } as const;
export const TRACK_SORTS = ['rank', 'accuracy', 'n_resolved', 'brier', 'mae', 'slug'] as const;

const CURSOR_KIND = 'track_records';

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v !== '' && Number.isFinite(Number(v)) ? Number(v) : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const int = (v: unknown): number => num(v) ?? 0;

/** Definitions of the metrics a track record, its horizons and its years share (sql/derive/91-94). */
const TR = {
  n_resolved: 'Resolved claims (an outcome or a realized value known at as_of).',
  n_directional: 'Resolved claims with a direction (direction and probability claims).',
  accuracy_score: 'Percent of resolved directional claims that came true; a tie counts half (null: none).',
  accuracy_ci95: 'Wilson 95% interval of accuracy_score, percent (null: no directional claim).',
  n_probability: 'Resolved claims with a probability and a YES/NO outcome (the Brier and log loss sample).',
  brier: 'Mean Brier score (p − o)² of those probability claims (null: none).',
  log_loss: 'Mean log loss of those probability claims, p clipped to [0.001, 0.999] (null: none).',
  n_value: 'Resolved value claims (a claimed and a realized value).',
  value_unit: 'The unit the value claims name when they name exactly one (e.g. points, usd_bn; null: none named, or several).',
  value_units: 'Distinct units the value claims name (compared exactly; a claim naming none does not count). Above 1, mae and bias are null: errors in different units are not averaged.',
  mae: 'Mean absolute error |value − realized|, in value_unit (null: no value claim, or value claims in more than one unit).',
  bias: 'Mean signed error (claimed − realized), in value_unit (null: no value claim, or value claims in more than one unit).',
  share_within: 'Share of the value claims within tolerance: |value − realized| ≤ the claim\'s tolerance, else 5% of |realized| (null: none).',
} as const;

export const TrackRecord = z
  .object({
    slug: z.string().meta({ description: 'The source\'s slug: its kebab-cased name (`ai-<model>` for a model, `quorum-consensus`, the venue for a market).' }),
    name: z.string().nullable().meta({ description: 'The source\'s name.' }),
    kind: z.string().meta({ description: `One of ${SOURCE_KINDS.join(', ')}.` }),
    url: z.string().nullable().meta({ description: 'The source\'s web address (null: none recorded).' }),
    description: z.string().nullable().meta({ description: 'What the source is (null: none recorded).' }),
    attribution: z.string().nullable().meta({ description: 'The credit line of the data behind this track record.' }),
    categories: z.array(z.string()).meta({ description: 'The categories of the source\'s claims, sorted.' }),
    n_claims: count.meta({ description: 'Claims the source made, visible at as_of (resolved or not).' }),
    n_resolved: count.meta({ description: TR.n_resolved }),
    n_directional: count.meta({ description: TR.n_directional }),
    accuracy_score: zPct.meta({ description: 'Percent of resolved directional claims that came true; a tie counts half.' }),
    accuracy_ci95: z.tuple([z.number(), z.number()]).nullable().meta({ description: 'Wilson 95% interval of accuracy_score, percent.' }),
    shrunk_score: zPct.meta({ description: 'accuracy_score shrunk toward prior_score with prior_weight pseudo-claims (the ranking score).' }),
    prior_score: zPct.meta({ description: 'The pooled accuracy of every source\'s directional claims, percent: the score shrunk_score is pulled toward.' }),
    prior_weight: z.number().meta({ description: 'Pseudo-claims of the prior in shrunk_score (20).' }),
    ranked: z.boolean().meta({ description: 'False under 10 resolved directional claims (the claims accuracy_score counts): shown, not ranked.' }),
    rank: z.number().int().nullable().meta({
      description: 'Position by shrunk_score among ranked sources (1 = best; ties: more directional claims, then slug); null when not ranked.',
    }),
    probability: z
      .object({
        n: count.meta({ description: TR.n_probability }),
        brier: zProb.meta({ description: TR.brier }),
        log_loss: zProb.meta({ description: TR.log_loss }),
      })
      .meta({ description: 'Scores of the source\'s resolved probability claims.' }),
    value: z.object({
      n: count.meta({ description: TR.n_value }),
      unit: z.string().nullable().meta({ description: TR.value_unit }),
      units: count.meta({ description: TR.value_units }),
      mae: zFine.meta({ description: TR.mae }),
      bias: zFine.meta({ description: TR.bias }),
      share_within: zProb.meta({ description: 'Share within the claim\'s tolerance (documented per import format).' }),
    }).meta({ description: 'Errors of the source\'s resolved value claims.' }),
    relative_skill: z.object({
      brier_skill: zProb.meta({ description: 'Mean (reference Brier − own Brier) against the market comparator; positive = better.' }),
      n_probability: count.meta({ description: 'Resolved probability claims with a reference probability (AI models and the consensus: the market comparator).' }),
      value_skill: zFine.meta({ description: 'Mean (|reference − realized| − |value − realized|) against the other claims of the same race and window; positive = better (null: none, or value claims in more than one unit).' }),
      n_value: count.meta({ description: 'Resolved value claims with a reference value (other claims of the same subject_key in the same 14-day window).' }),
    }).meta({ description: 'Skill against a reference, positive = better than it.' }),
    first_claim_at: isoTime.nullable().meta({ description: 'When the source\'s earliest claim was made.' }),
    last_claim_at: isoTime.nullable().meta({ description: 'When the source\'s latest claim was made.' }),
  })
  .meta({ id: 'TrackRecord' });

const CalibrationBin = z.object({
  bin: z.number().int().meta({ description: 'Bin index 0..9 of the claimed probability: floor(10p), p = 1 in bin 9.' }),
  n: count.meta({ description: 'Resolved probability claims (YES/NO outcome) in the bin.' }),
  mean_probability: zProb.meta({ description: 'Mean claimed probability in the bin.' }),
  observed: zProb.meta({ description: 'Share of the bin\'s claims that came true.' }),
});
/**
 * The metrics of a set of resolved claims (one horizon bucket, one year): one shape, one mapping,
 * for both breakdowns.
 */
const resolvedMetricFields = {
  n_resolved: count.meta({ description: TR.n_resolved }),
  n_directional: count.meta({ description: TR.n_directional }),
  accuracy_score: zPct.meta({ description: TR.accuracy_score }),
  n_probability: count.meta({ description: TR.n_probability }),
  brier: zProb.meta({ description: TR.brier }),
  n_value: count.meta({ description: TR.n_value }),
  value_unit: z.string().nullable().meta({ description: TR.value_unit }),
  value_units: count.meta({ description: TR.value_units }),
  mae: zFine.meta({ description: TR.mae }),
  bias: zFine.meta({ description: TR.bias }),
  share_within: zProb.meta({ description: TR.share_within }),
};

/** A row of track_record_horizons or track_record_trends as resolvedMetricFields. */
function resolvedMetrics(r: Record<string, unknown>) {
  return {
    n_resolved: int(r.n_resolved),
    n_directional: int(r.n_directional),
    accuracy_score: num(r.accuracy_score),
    n_probability: int(r.n_probability),
    brier: num(r.brier),
    n_value: int(r.n_value),
    value_unit: str(r.value_unit),
    value_units: int(r.value_units),
    mae: num(r.mae),
    bias: num(r.bias),
    share_within: num(r.share_within),
  };
}

const HorizonRow = z.object({
  horizon_bucket: z.string().meta({
    description: 'Days from the claim to the event: 0-7, 8-30, 31-90, 91-365, then whole years rounded up (2y, 3y, …).',
  }),
  ...resolvedMetricFields,
});

export const TrackRecordDetail = z
  .object({
    source: TrackRecord.extend({
      calibration: z.array(CalibrationBin).meta({ description: 'Calibration bins of the resolved probability claims (bins without claims are absent).' }),
      horizons: z.array(HorizonRow).meta({ description: 'The metrics of the resolved claims per horizon bucket, shortest first.' }),
    }).meta({ description: 'The source\'s track record with its calibration and horizons.' }),
  })
  .meta({ id: 'TrackRecordDetail' });

export const TrackRecordPage = z
  .object({
    sources: z.array(TrackRecord).meta({ description: 'This page of sources, in the `sort` order (default rank: ranked sources by rank, then the unranked by n_resolved, most first).' }),
    count: count.meta({ description: DOC.count }),
    total: count.meta({ description: 'Sources matching the filters, on every page.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'TrackRecordPage' });

const TrendRow = z.object({
  year: z.number().int().meta({ description: 'The UTC year the claims were made.' }),
  ...resolvedMetricFields,
  accuracy_ci95: z.tuple([z.number(), z.number()]).nullable().meta({ description: TR.accuracy_ci95 }),
  log_loss: zProb.meta({ description: TR.log_loss }),
});

export const TrackRecordTrends = z
  .object({
    source_slug: z.string().meta({ description: 'The source asked for.' }),
    trends: z.array(TrendRow).meta({ description: 'The metrics of the source\'s resolved claims per year made, oldest first.' }),
    count: count.meta({ description: 'Entries in `trends`.' }),
    total: count.meta({ description: 'Entries in all (one page: equals count).' }),
    next_cursor: z.null().meta({ description: 'Always null: the whole list is one page.' }),
  })
  .meta({ id: 'TrackRecordTrends' });

function ci(lo: unknown, hi: unknown): [number, number] | null {
  const [a, b] = [num(lo), num(hi)];
  return a === null || b === null ? null : [roundPercent(a), roundPercent(b)];
}

function record(r: JsonRow): z.input<typeof TrackRecord> {
  return {
    slug: String(r.source_slug),
    name: str(r.name),
    kind: String(r.kind),
    url: str(r.url),
    description: str(r.description),
    attribution: str(r.attribution),
    categories: Array.isArray(r.categories) ? r.categories.map(String) : [],
    n_claims: int(r.n_claims),
    n_resolved: int(r.n_resolved),
    n_directional: int(r.n_directional),
    accuracy_score: num(r.accuracy_score),
    accuracy_ci95: ci(r.accuracy_ci95_lo, r.accuracy_ci95_hi),
    shrunk_score: num(r.shrunk_score),
    prior_score: num(r.prior_score),
    prior_weight: int(r.prior_weight),
    ranked: r.ranked === true,
    rank: num(r.rank),
    probability: { n: int(r.n_probability), brier: num(r.brier), log_loss: num(r.log_loss) },
    value: {
      n: int(r.n_value),
      unit: str(r.value_unit),
      units: int(r.value_units),
      mae: num(r.mae),
      bias: num(r.bias),
      share_within: num(r.share_within),
    },
    relative_skill: {
      brier_skill: num(r.brier_skill),
      n_probability: int(r.n_reference_probability),
      value_skill: num(r.value_skill),
      n_value: int(r.n_reference_value),
    },
    first_claim_at: str(r.first_claim_at),
    last_claim_at: str(r.last_claim_at),
  };
}

/**
 * The `source_slug` path parameter as given: a slug (capitals A-Z read as lower case: a reader
 * typing /sources/SurveyUSA/ means surveyusa), or a name typed for one, refused by findSource.
 */
function pathSource(req: Request): SourceGiven {
  const raw: unknown = (req.params as Record<string, unknown>).source_slug;
  return sourceGiven(typeof raw === 'string' ? raw : '');
}

/**
 * The track record row of the source `given`, or a 404 naming the closest slugs of this snapshot
 * (a 400 naming them for a name given instead of a slug).
 */
async function findSource(snap: PinnedSnapshot, given: SourceGiven): Promise<JsonRow> {
  snap.require('track_records');
  if (given.name !== null) throw await sourceNameError(snap, 'source_slug', "Path parameter 'source_slug'", given.name);
  const [row] = await snap.query('track-records-source', { slug: given.slug });
  if (row) return row;
  throw notFoundClosest('source', given.slug, 'source_slug', await snapshotSourceSlugs(snap));
}

const slugParams = z.object({ source_slug: z.string().regex(SOURCE_SLUG).meta({ description: 'A source slug, e.g. surveyusa.' }) });

export const trackRecordsOverviewRoute = jsonRoute({
  id: 'track_records.overview',
  path: '/api/track-records/',
  summary: 'Track records of every source, ranked',
  description:
    'Every named source with claims (pollsters, forecasters, institutions, venues, AI models, the consensus): accuracy ' +
    'with its Wilson interval, the shrunk score used for ranking (sources under 10 resolved directional claims are shown but not ' +
    'ranked), Brier and log loss, value errors and skill against a reference. Keyset-paginated.',
  tags: ['track-records'],
  query: z.object({
    limit: z.int().min(TRACK_LIMIT.min).max(TRACK_LIMIT.max).default(TRACK_LIMIT.default).optional(),
    cursor: z.string().max(1024).optional().meta({ description: 'The previous page\'s next_cursor, with the same sort (a cursor of another sort is a 400). Sorted by anything but slug, the order changes with each run: after a newer snapshot such a cursor is a 410 cursor_expired (start again).' }),
    kind: z.enum(SOURCE_KINDS).optional(),
    min_resolved: z.int().min(MIN_RESOLVED.min).max(MIN_RESOLVED.max).optional().meta({ description: 'Only sources with at least this many resolved claims.' }),
    category: categoryParam.optional().meta({
      description: 'Only sources with at least one claim in this category. Their figures and ranks stay those of all their claims (a track record is per source, not per category).',
    }),
    sort: z.enum(TRACK_SORTS).optional().meta({ description: 'rank (default), accuracy, n_resolved, brier, mae or slug.' }),
  }),
  response: TrackRecordPage,
  errors: [400, 410],
  cache: true,
  input: (req) => {
    const limit = queryInt(req, 'limit', TRACK_LIMIT);
    const sort = queryEnum(req, 'sort', TRACK_SORTS) ?? 'rank';
    const kind = queryEnum(req, 'kind', SOURCE_KINDS) ?? null;
    const minResolved = queryInt(req, 'min_resolved', MIN_RESOLVED);
    const category = queryCategory(req) ?? null;
    const raw = queryString(req, 'cursor', 1024);
    const after = raw === undefined ? null : decodeSnapshotKeyset(raw, sortedKind(CURSOR_KIND, sort), z.tuple([z.number(), z.string().regex(SOURCE_SLUG)]));
    return { limit, sort, kind, minResolved, category, after };
  },
  data: async (snap, { limit, sort, kind, minResolved, category, after }) => {
    snap.require('track_records');
    // every sort but slug orders by a metric a run can change (the AI models' and venues' records
    // move with each run): their cursors are positions in one snapshot's order
    if (after !== null && sort !== 'slug') assertCursorSnapshot(after.snapshot, snap.id);
    const filters = { kind, min_resolved: minResolved, category };
    const [rows, counted] = await Promise.all([
      snap.query('track-records-page', {
        ...filters,
        sort,
        after: after !== null,
        after_key: after?.key[0] ?? null,
        after_slug: after?.key[1] ?? null,
        limit: limit + 1,
      }),
      snap.query('track-records-count', filters),
    ]);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const next = rows.length > limit && last ? encodeSnapshotKeyset(sortedKind(CURSOR_KIND, sort), [Number(last.sort_key), String(last.source_slug)], snap.id) : null;
    return published(TrackRecordPage, { sources: page.map(record), count: page.length, total: int(counted[0]?.total), next_cursor: next });
  },
});

export const trackRecordsSourceRoute = jsonRoute({
  id: 'track_records.source',
  path: '/api/track-records/sources/{source_slug}/',
  summary: 'One source\'s track record',
  description:
    'The source\'s accuracy_score (percent of resolved directional claims that came true, a tie counting half) with ' +
    'its Wilson 95% interval and n, the shrunk score and rank, and the metrics its claims allow: Brier, log loss and ' +
    'calibration bins, value errors by horizon, skill against a reference; with the attribution of the data.',
  tags: ['track-records'],
  params: slugParams,
  response: TrackRecordDetail,
  errors: [400, 404],
  cache: true,
  input: (req) => ({ given: pathSource(req) }),
  data: async (snap, { given }) => {
    snap.require('track_records', 'track_record_calibration', 'track_record_horizons');
    const row = await findSource(snap, given);
    const slug = String(row.source_slug);
    const [bins, horizons] = await Promise.all([
      snap.query('track-records-calibration', { slug }),
      snap.query('track-records-horizons', { slug }),
    ]);
    return published(TrackRecordDetail, {
      source: {
        ...record(row),
        calibration: bins.map((b) => ({ bin: int(b.bin), n: int(b.n), mean_probability: num(b.mean_probability), observed: num(b.observed) })),
        horizons: horizons.map((h) => ({ horizon_bucket: String(h.horizon_bucket), ...resolvedMetrics(h) })),
      },
    });
  },
});

export const trackRecordsTrendsRoute = jsonRoute({
  id: 'track_records.trends',
  path: '/api/track-records/sources/{source_slug}/trends/',
  summary: 'One source\'s track record per year',
  description: 'The metrics of the source\'s resolved claims per year the claims were made, oldest first.',
  tags: ['track-records'],
  params: slugParams,
  response: TrackRecordTrends,
  errors: [400, 404],
  cache: true,
  input: (req) => ({ given: pathSource(req) }),
  data: async (snap, { given }) => {
    snap.require('track_records', 'track_record_trends');
    const slug = String((await findSource(snap, given)).source_slug);
    const rows = await snap.query('track-records-trends', { slug });
    const trends = rows.map((t) => ({
      year: int(t.year),
      ...resolvedMetrics(t),
      accuracy_ci95: ci(t.accuracy_ci95_lo, t.accuracy_ci95_hi),
      log_loss: num(t.log_loss),
    }));
    return published(TrackRecordTrends, { source_slug: slug, trends, count: trends.length, total: trends.length, next_cursor: null });
  },
});
