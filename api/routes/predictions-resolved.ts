/**
 * `GET /api/predictions/resolved`: resolved predictions from resolved_predictions, newest
 * resolution first, keyset-paginated by (resolved_at DESC, question_id ASC).
 *
 * Query: `limit` (1..500, default 50), `cursor` (the previous page's next_cursor), `category`
 * (one of the nine, case-insensitive), `venue` (one of the known venues, case-insensitive; anything
 * else is a 400 listing them, like an unknown category). Unknown parameters are ignored.
 * Body: { predictions: [item], count (items on this page), total (items matching the filters
 * in this snapshot), next_cursor (null on the last page), as_of }.
 * Item: question_id, venue, venue_market_id, title, category, domain, mode, consensus,
 * consensus_median, consensus_logit_mean, n_models, disagreement {sd, range, sd_logit}, market_probability
 * (the comparator: the latest price at or before forecast_at), market_observed_at, market_stale (the
 * comparator was observed more than QUORUM_MAX_PRICE_AGE_HOURS before forecast_at: a stale
 * comparison; null without a comparator), market_status (ok | stale | none: a stale comparator is
 * told apart from no price) and market_age_days, outcome, ai_error, market_error, forecast_at, resolved_at, horizon_bucket,
 * source {slug, name, url, excerpt, retrieved_at}, providers (array of provider names).
 */
import { z } from 'zod';
import type { JsonRow, JsonValue } from '../db/convert.ts';
import { decodeResolvedCursor, encodeResolvedCursor } from '../http/cursor.ts';
import { queryCategory, queryInt, queryString } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { providerList } from './predictions-edges.ts';
import { queryVenue, venueParam } from './prediction-params.ts';
import { categoryParam, count, DOC, isoTime, marketStale, published, zDays, zLogit, zNum, zProb } from '../openapi/common.ts';

export const RESOLVED_LIMIT = { min: 1, max: 500, default: 50 } as const;


function item(r: JsonRow): Record<string, unknown> {
  return {
    question_id: r.question_id,
    venue: r.venue,
    venue_market_id: r.venue_market_id,
    title: r.title,
    category: r.category,
    domain: r.domain,
    mode: r.mode,
    consensus: r.consensus,
    consensus_median: r.consensus_median,
    consensus_logit_mean: r.consensus_logit_mean,
    n_models: r.n_models,
    disagreement: { sd: r.disagreement_sd, range: r.disagreement_range, sd_logit: r.disagreement_sd_logit },
    market_probability: r.market_probability,
    market_observed_at: r.market_observed_at ?? null,
    market_stale: typeof r.market_stale === 'boolean' ? r.market_stale : null,
    market_status: r.market_status ?? null,
    market_age_days: r.market_age_days ?? null,
    outcome: r.outcome,
    ai_error: r.ai_error,
    market_error: r.market_error,
    forecast_at: r.forecast_at,
    resolved_at: r.resolved_at,
    horizon_bucket: r.horizon_bucket,
    source: {
      slug: r.source_slug,
      name: r.source_name,
      url: r.source_url,
      excerpt: r.evidence_excerpt,
      retrieved_at: r.retrieved_at,
    },
    providers: providerList(r.providers),
  };
}

function cursorKey(v: JsonValue | undefined): bigint | null {
  // epoch_us BIGINT arrives as a number when safe, else as a decimal string.
  if (typeof v === 'number') return BigInt(v);
  if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return BigInt(v);
  return null;
}

export const ResolvedPrediction = z
  .object({
    question_id: z.string().meta({ description: DOC.question_id }),
    venue: z.string().nullable().meta({ description: DOC.venue }),
    venue_market_id: z.string().nullable().meta({ description: DOC.venue_market_id }),
    title: z.string().nullable().meta({ description: DOC.title }),
    category: z.string().nullable().meta({ description: DOC.category }),
    domain: z.string().nullable().meta({ description: DOC.domain }),
    mode: z.string().nullable().meta({ description: DOC.headline_mode }),
    consensus: zProb.meta({
      description: 'The scored headline consensus: the mean of the models\' probabilities in the latest run before both close_time and resolved_at.',
    }),
    consensus_median: zProb.meta({ description: 'The median of the same models\' probabilities.' }),
    consensus_logit_mean: zProb.meta({ description: 'Inverse logit of the mean log-odds of the same probabilities (p clipped to [0.001, 0.999]).' }),
    n_models: zNum.meta({ description: DOC.n_models }),
    disagreement: z
      .object({
        sd: zProb.meta({ description: 'Population standard deviation of the model probabilities.' }),
        range: zProb.meta({ description: 'max − min of the model probabilities.' }),
        sd_logit: zLogit.meta({
          description: 'Population standard deviation of the models\' log-odds (p clipped to [0.001, 0.999]).',
        }),
      })
      .meta({ description: 'Cross-model disagreement of the scored consensus.' }),
    market_probability: zProb.meta({ description: 'The market comparator: the latest price at or before forecast_at.' }),
    market_observed_at: isoTime.nullable().meta({ description: 'When the comparator price was observed (null: no price).' }),
    market_stale: marketStale,
    market_status: z.enum(['ok', 'stale', 'none']).nullable().meta({
      description: 'The comparator: ok (fresh), stale (a price existed but was older than QUORUM_MAX_COMPARATOR_AGE_DAYS at the forecast: ' +
        'no comparison, market_probability and market_error null, counted apart in ai_vs_market) or none (no price at all).',
    }),
    market_age_days: zDays.meta({ description: 'Age in days of the latest price at the forecast (ok and stale), null without one.' }),
    outcome: zNum.meta({ description: '1 when the question resolved YES, 0 when NO.' }),
    ai_error: zProb.meta({ description: 'Brier score of the consensus.' }),
    market_error: zProb.meta({ description: 'Brier score of the market (null without a comparator).' }),
    forecast_at: isoTime.nullable().meta({ description: 'When the scored consensus was made (its created_at).' }),
    resolved_at: isoTime.nullable().meta({ description: 'When the question resolved.' }),
    horizon_bucket: z.string().nullable().meta({
      description: 'Days from forecast_at to resolved_at, bucketed: 0-7, 8-30, 31-90, 91-365 or >365 (inclusive upper bounds).',
    }),
    source: z
      .object({
        slug: z.string().nullable().meta({ description: DOC.source_slug }),
        name: z.string().nullable().meta({ description: DOC.source_name }),
        url: z.string().nullable().meta({ description: DOC.source_url }),
        excerpt: z.string().nullable().meta({ description: DOC.evidence_excerpt }),
        retrieved_at: isoTime.nullable().meta({ description: DOC.retrieved_at }),
      })
      .meta({ description: 'The authoritative source the outcome was read from.' }),
    providers: z.array(z.string()).meta({ description: DOC.providers }),
  })
  .meta({ id: 'ResolvedPrediction' });

export const ResolvedPage = z
  .object({
    predictions: z.array(ResolvedPrediction).meta({ description: 'This page of resolved predictions, newest resolution first (ties by question_id).' }),
    count: count.meta({ description: DOC.count }),
    total: count.meta({ description: 'Resolved predictions matching the filters, on every page.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'ResolvedPage' });

export const predictionsResolvedRoute = jsonRoute({
  id: 'predictions.resolved',
  path: '/api/predictions/resolved',
  summary: 'Resolved predictions',
  description:
    'Resolved predictions with AI consensus, market probability, outcome and error metrics, newest resolution ' +
    'first, keyset-paginated.',
  tags: ['predictions'],
  query: z.object({
    limit: z.int().min(RESOLVED_LIMIT.min).max(RESOLVED_LIMIT.max).default(RESOLVED_LIMIT.default).optional(),
    cursor: z.string().max(1024).optional().meta({ description: 'The previous page\'s next_cursor.' }),
    category: categoryParam.optional(),
    venue: venueParam.optional(),
  }),
  response: ResolvedPage,
  errors: [400],
  cache: true,
  input: (req) => {
    const limit = queryInt(req, 'limit', RESOLVED_LIMIT);
    const cursor = queryString(req, 'cursor', 1024) ?? null;
    const after = cursor === null ? null : decodeResolvedCursor(cursor);
    const category = queryCategory(req) ?? null;
    const venue = queryVenue(req);
    return { limit, cursor, after, category, venue };
  },
  data: async (snap, { limit, after, category, venue }) => {
    snap.require('resolved_predictions', 'resolved_predictions.market_observed_at');
    const filters = { category, venue };
    const [rows, counted] = await Promise.all([
      snap.query('resolved-page', {
        ...filters,
        max_price_age_hours: snap.maxPriceAgeHours,
        after: after !== null,
        after_resolved_us: after?.resolvedUs ?? null,
        after_question_id: after?.questionId ?? null,
        limit: limit + 1,
      }),
      snap.query('resolved-count', filters),
    ]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nextCursor =
      rows.length > limit && last
        ? encodeResolvedCursor({ resolvedUs: cursorKey(last.cursor_resolved_us), questionId: String(last.question_id) })
        : null;
    const predictions = page.map(item);
    return published(ResolvedPage, {
      predictions,
      count: predictions.length,
      total: typeof counted[0]?.total === 'number' ? counted[0].total : 0,
      next_cursor: nextCursor,
    });
  },
});
