/**
 * `GET /api/predictions/edges/`: divergence signals between the AI headline consensus and the
 * market, for active questions (the `edges` table), largest absolute edge first, keyset-paginated
 * by (abs_edge DESC, question_id ASC).
 *
 * Query: `min_edge` (probability points, 0..1, default 0.05: only |consensus − market| ≥ min_edge,
 * compared with abs_edge as published, rounded to 6 decimals; an empty value is the default), `include_stale`
 * (`true`|`false`, default false: an edge whose market price is older than
 * QUORUM_MAX_PRICE_AGE_HOURS at as_of is left out, being no current signal), `category` (one of
 * the nine, case-insensitive) and `venue` (one of VENUES, case-insensitive), which filter every page
 * and the total like those of the resolved and language lists, `limit` (1..500, default 50),
 * `cursor` (the previous page's next_cursor).
 * Body: { edges: [item], count (items on this page), total (edges reaching min_edge, same staleness
 * rule), min_edge, include_stale, max_price_age_hours, next_cursor (null on the last page), as_of }.
 * Item: question_id, title, venue, venue_market_id, url, category, domain, close_time, edge
 * (consensus − market), abs_edge, direction (ai_above_market | ai_below_market | none),
 * consensus, market_probability, market_observed_at, market_age_hours, market_stale,
 * disagreement {sd, range, sd_logit}, n_models, liquidity, volume, mode, run_id, forecast_at,
 * providers, other_venues (the same event on other venues, issue 12) and cross_venue_gap.
 */
import { z } from 'zod';
import type { JsonRow, JsonValue } from '../db/convert.ts';
import { queryCategory, queryInt, queryString } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { roundProbability } from '../http/precision.ts';
import { categoryParam, count, DOC, isoTime, marketStale, prob, published, snapshotCursorParam, zHours, zNum, zProb } from '../openapi/common.ts';
import { assertCursorSnapshot, cursorQuestionId, decodeSnapshotKeyset, encodeSnapshotKeyset } from '../http/cursor.ts';
import { MIN_EDGE, queryIncludeStale, queryMinEdge, queryVenue, venueParam } from './prediction-params.ts';
import { SameEventPrice, crossVenueGap, sameEventPrices } from './same-event.ts';

export const EDGES_LIMIT = { min: 1, max: 500, default: 50 } as const;
const CURSOR_KIND = 'edges';
const cursorShape = z.tuple([z.number().min(0).max(1), cursorQuestionId]);

/** Comma-joined providers (the tables' form) → sorted distinct names. */
export function providerList(v: JsonValue | undefined): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (typeof v === 'string') return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  return [];
}

function item(r: JsonRow): Record<string, unknown> {
  return {
    question_id: r.question_id,
    title: r.title,
    venue: r.venue,
    venue_market_id: r.venue_market_id,
    url: r.url,
    category: r.category,
    domain: r.domain,
    close_time: r.close_time,
    edge: r.edge,
    abs_edge: r.abs_edge,
    // as the figures beside it read: an edge published as 0 (under 5e-7, 'ai_above_market' in the
    // table, which keeps it to 12 decimals) is 'none', consensus and market being equal as published
    direction: typeof r.edge === 'number' && roundProbability(r.edge) === 0 ? 'none' : r.direction,
    consensus: r.consensus,
    market_probability: r.market_probability,
    market_observed_at: r.market_observed_at,
    market_age_hours: r.market_age_hours,
    market_stale: r.market_stale,
    disagreement: { sd: r.disagreement_sd, range: r.disagreement_range, sd_logit: r.disagreement_sd_logit },
    n_models: r.n_models,
    liquidity: r.liquidity,
    volume: r.volume,
    mode: r.mode,
    run_id: r.run_id,
    forecast_at: r.forecast_at,
    providers: providerList(r.providers),
  };
}

export const Disagreement = z
  .object({
    sd: zProb.meta({ description: 'Population standard deviation of the model probabilities.' }),
    range: zProb.meta({ description: 'max − min of the model probabilities.' }),
    sd_logit: zProb.meta({ description: 'Population standard deviation of the log-odds.' }),
  })
  .meta({ id: 'Disagreement', description: 'Cross-model disagreement of one consensus (an uncertainty signal).' });

export const Edge = z
  .object({
    question_id: z.string().meta({ description: DOC.question_id }),
    title: z.string().nullable().meta({ description: DOC.title }),
    venue: z.string().nullable().meta({ description: DOC.venue }),
    venue_market_id: z.string().nullable().meta({ description: DOC.venue_market_id }),
    url: z.string().nullable().meta({ description: DOC.url }),
    category: z.string().nullable().meta({ description: DOC.category }),
    domain: z.string().nullable().meta({ description: DOC.domain }),
    close_time: isoTime.nullable().meta({ description: DOC.close_time }),
    edge: prob.meta({ description: 'consensus − market_probability, in probability points.' }),
    abs_edge: prob.meta({ description: '|edge|: the list is sorted by it, largest first.' }),
    direction: z.enum(['ai_above_market', 'ai_below_market', 'none']).meta({
      description: 'ai_above_market: consensus > market_probability; ai_below_market: consensus < market_probability; none: equal (an edge published as 0).',
    }),
    consensus: prob.meta({ description: 'Headline consensus (mean of the models) of the latest run.' }),
    market_probability: prob.meta({ description: 'The market\'s latest price (probability of YES) observed at or before as_of.' }),
    market_observed_at: isoTime.nullable().meta({ description: 'When that market price was observed.' }),
    market_age_hours: zHours.meta({ description: 'Hours from market_observed_at to as_of (2 decimals).' }),
    market_stale: marketStale,
    disagreement: Disagreement,
    n_models: zNum.meta({ description: DOC.n_models }),
    liquidity: zNum.meta({ description: DOC.liquidity }),
    volume: zNum.meta({ description: DOC.volume }),
    mode: z.string().meta({ description: DOC.headline_mode }),
    run_id: z.string().nullable().meta({ description: DOC.run_id }),
    forecast_at: isoTime.nullable().meta({ description: DOC.forecast_at }),
    providers: z.array(z.string()).meta({ description: DOC.providers }),
    other_venues: z.array(SameEventPrice).optional().meta({ description: 'The same event on other venues with their prices (issue 12; absent from snapshots published before it).' }),
    cross_venue_gap: zProb.optional().meta({ description: 'market_probability − the other venue\'s implied price, the largest in magnitude (null: no other venue).' }),
  })
  .meta({ id: 'Edge' });

export const EdgesPage = z
  .object({
    edges: z.array(Edge).meta({ description: 'This page of edges, largest abs_edge first (ties by question_id).' }),
    count: count.meta({ description: DOC.count }),
    total: count.meta({ description: 'Edges reaching min_edge under the same staleness rule (and the category and venue, when asked), on every page.' }),
    min_edge: z.number().meta({ description: 'The min_edge applied.' }),
    include_stale: z.boolean().meta({ description: 'Whether edges on stale market prices are included.' }),
    max_price_age_hours: z.number().meta({ description: 'The staleness bound applied (QUORUM_MAX_PRICE_AGE_HOURS).' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'EdgesPage' });

export const predictionsEdgesRoute = jsonRoute({
  id: 'predictions.edges',
  path: '/api/predictions/edges/',
  summary: 'Divergence signals (edges) between the AI consensus and the market',
  description:
    'Active questions whose headline AI consensus differs from the latest market probability by at least ' +
    '`min_edge` probability points, largest absolute edge first (ties by question_id), keyset-paginated. A market ' +
    'price older than QUORUM_MAX_PRICE_AGE_HOURS (default 48) at as_of is stale: such edges are left out unless ' +
    '`include_stale=true`, and flagged `market_stale`.',
  tags: ['predictions'],
  query: z.object({
    min_edge: z
      .number()
      .min(MIN_EDGE.min)
      .max(MIN_EDGE.max)
      .default(MIN_EDGE.default)
      .optional()
      .meta({
        description:
          'Minimum |consensus − market| in probability points (0..1; default 0.05; an empty value is the default), ' +
          'compared with abs_edge as published (6 decimals): an edge shown as 0.0717 is listed by min_edge=0.0717. ' +
          'Plain decimals only: a sign, exponent, NaN, Infinity or a value outside 0..1 is a 400.',
        example: 0.1,
      }),
    include_stale: z
      .boolean()
      .default(false)
      .optional()
      .meta({ description: 'Include edges whose market price is stale (`true` or `false`; default false).' }),
    category: categoryParam.optional(),
    venue: venueParam.optional(),
    limit: z.int().min(EDGES_LIMIT.min).max(EDGES_LIMIT.max).default(EDGES_LIMIT.default).optional(),
    cursor: snapshotCursorParam.optional(),
  }),
  response: EdgesPage,
  errors: [400, 410],
  cache: true,
  input: (req) => {
    const minEdge = queryMinEdge(req);
    const includeStale = queryIncludeStale(req);
    const limit = queryInt(req, 'limit', EDGES_LIMIT);
    const cursor = queryString(req, 'cursor', 1024) ?? null;
    const after = cursor === null ? null : decodeSnapshotKeyset(cursor, CURSOR_KIND, cursorShape);
    const category = queryCategory(req) ?? null;
    const venue = queryVenue(req);
    return { minEdge, includeStale, limit, after, category, venue };
  },
  data: async (snap, { minEdge, includeStale, limit, after, category, venue }) => {
    snap.require('edges');
    // ordered by the edge, which every run's prices and forecasts move: a cursor is a position in one snapshot's order
    if (after !== null) assertCursorSnapshot(after.snapshot, snap.id);
    const filter = { min_edge: minEdge, include_stale: includeStale, max_price_age_hours: snap.maxPriceAgeHours, category, venue };
    const [rows, counted] = await Promise.all([
      snap.query('edges-page', {
        ...filter,
        after: after !== null,
        after_abs_edge: after?.key[0] ?? null,
        after_question_id: after?.key[1] ?? null,
        limit: limit + 1,
      }),
      snap.query('edges-count', filter),
    ]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nextCursor =
      rows.length > limit && last && typeof last.abs_edge === 'number'
        ? encodeSnapshotKeyset(CURSOR_KIND, [last.abs_edge, String(last.question_id)], snap.id)
        : null;
    const others = await sameEventPrices(snap, page.map((r) => String(r.question_id)));
    const edges = page.map((r) => {
      if (!others) return item(r);
      const otherVenues = others.get(String(r.question_id)) ?? [];
      return { ...item(r), other_venues: otherVenues, cross_venue_gap: crossVenueGap(otherVenues) };
    });
    return published(EdgesPage, {
      edges,
      count: edges.length,
      total: typeof counted[0]?.total === 'number' ? counted[0].total : 0,
      min_edge: minEdge,
      include_stale: includeStale,
      max_price_age_hours: snap.maxPriceAgeHours,
      next_cursor: nextCursor,
    });
  },
});
