/**
 * `GET /api/predictions/accuracy` and `GET /api/predictions/accuracy/{category}`: the accuracy
 * summary of the AI headline consensus (accuracy rows forecaster='consensus', mode='headline'),
 * overall or for one category, with breakdowns and the market comparison.
 *
 * Body:
 * { scope, headline_modes, providers, simulated (where the scored forecasts came from: their
 *   distinct providers, and whether any is the bundled simulator), accuracy_pct, total_resolved, n_directional, n_correct, n_no_direction,
 *   market_accuracy_pct, brier: {ai, market}, log_loss: {ai, market},
 *   ai_vs_market: {n, ai_brier, market_brier, skill, diff_mean, diff_sd, diff_ci95: [lo, hi] | null,
 *                  ai_log_loss, market_log_loss},
 *   by_category, by_domain, by_horizon, by_tier, by_model, by_mode: [
 *     { <dimension name>: key, key, n, brier, log_loss, accuracy_pct, n_directional, n_correct,
 *       n_no_direction, (market_n, market_brier, market_log_loss, market_accuracy_pct) } ],
 *   as_of }
 * Market figures appear on category, domain, horizon and mode items (same questions); not on tier
 * (the market's tier is computed from its own probability) nor on model items.
 * Buckets without resolved forecasts are absent. The category is matched case-insensitively;
 * an unknown one is a 404 problem listing the nine.
 */
import { z } from 'zod';
import {
  CATEGORIES,
  DOMAINS,
  HORIZON_BUCKETS,
  MODES,
  TIERS,
} from '../../pipeline/warehouse/tables.ts';
import type { JsonRow, JsonValue } from '../db/convert.ts';
import { ApiError } from '../errors/problem.ts';
import { matchCategory } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import {
  bucketMetrics, categoryParam, count, prob, provenance, provenanceOf, published, zProb, zPct,
} from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { orderByKnown } from './order.ts';

interface Dimension {
  list: string;
  dimension: string;
  name: string;
  order: readonly string[];
  market: boolean;
}

const DIMENSIONS: readonly Dimension[] = [
  { list: 'by_category', dimension: 'category', name: 'category', order: CATEGORIES, market: true },
  { list: 'by_domain', dimension: 'domain', name: 'domain', order: DOMAINS, market: true },
  { list: 'by_horizon', dimension: 'horizon', name: 'horizon', order: HORIZON_BUCKETS, market: true },
  { list: 'by_tier', dimension: 'tier', name: 'tier', order: TIERS, market: false },
  { list: 'by_model', dimension: 'model', name: 'model', order: [], market: false },
  { list: 'by_mode', dimension: 'mode', name: 'mode', order: MODES, market: true },
];

function num(v: JsonValue | undefined): number | null {
  return typeof v === 'number' ? v : null;
}

function breakdownItem(d: Dimension, r: JsonRow): Record<string, unknown> {
  const item: Record<string, unknown> = {
    [d.name]: r.key,
    key: r.key,
    n: num(r.n) ?? 0,
    brier: num(r.brier),
    log_loss: num(r.log_loss),
    accuracy_pct: num(r.accuracy_pct),
    n_directional: num(r.n_directional) ?? 0,
    n_correct: num(r.n_correct) ?? 0,
    n_no_direction: num(r.n_no_direction) ?? 0,
  };
  if (d.market) {
    item.market_n = num(r.market_n) ?? 0;
    item.market_brier = num(r.market_brier);
    item.market_log_loss = num(r.market_log_loss);
    item.market_accuracy_pct = num(r.market_accuracy_pct);
  }
  return item;
}

/** Builds the accuracy summary body of `scope` from the pinned snapshot. */
export async function accuracySummary(snap: PinnedSnapshot, scope: string): Promise<Record<string, unknown>> {
  snap.require('accuracy', 'ai_vs_market', 'scored_forecasts');
  const [rows, avm, providers] = await Promise.all([
    snap.query('accuracy-headline', { scope }),
    snap.query('ai-vs-market', { scope }),
    snap.query('providers-scored', { category: scope === 'all' ? null : scope }),
  ]);
  const overall = rows.find((r) => r.dimension === 'overall');
  const a = avm[0];
  const lo = num(a?.diff_ci95_lo);
  const hi = num(a?.diff_ci95_hi);

  const body: Record<string, unknown> = {
    scope,
    headline_modes: snap.headlineModes,
    ...provenanceOf(providers),
    accuracy_pct: num(overall?.accuracy_pct),
    total_resolved: num(overall?.n) ?? 0,
    n_directional: num(overall?.n_directional) ?? 0,
    n_correct: num(overall?.n_correct) ?? 0,
    n_no_direction: num(overall?.n_no_direction) ?? 0,
    market_accuracy_pct: num(overall?.market_accuracy_pct),
    brier: { ai: num(overall?.brier), market: num(overall?.market_brier) },
    log_loss: { ai: num(overall?.log_loss), market: num(overall?.market_log_loss) },
    ai_vs_market: {
      n: num(a?.n) ?? 0,
      ai_brier: num(a?.ai_brier),
      market_brier: num(a?.market_brier),
      skill: num(a?.skill),
      diff_mean: num(a?.diff_mean),
      diff_sd: num(a?.diff_sd),
      diff_ci95: lo === null || hi === null ? null : [lo, hi],
      ai_log_loss: num(a?.ai_log_loss),
      market_log_loss: num(a?.market_log_loss),
      n_consensus: num(a?.n_consensus) ?? 0,
      excluded: {
        no_market: num(a?.excluded_no_market) ?? 0,
        stale_market: num(a?.excluded_stale_market) ?? 0,
        no_direction: num(a?.excluded_no_direction) ?? 0,
      },
      n_directional: num(a?.n_directional) ?? 0,
      ai_accuracy_pct: num(a?.ai_accuracy_pct),
      market_accuracy_pct: num(a?.market_accuracy_pct),
    },
  };
  for (const d of DIMENSIONS) {
    const items = rows.filter((r) => r.dimension === d.dimension);
    body[d.list] = orderByKnown(items, (r) => String(r.key), d.order).map((r) => breakdownItem(d, r));
  }
  return published(AccuracySummary, body);
}

const BreakdownItem = z.object({
  category: z.string().optional(),
  domain: z.string().optional(),
  horizon: z.string().optional(),
  tier: z.string().optional(),
  model: z.string().optional(),
  mode: z.string().optional(),
  ...bucketMetrics,
  market_n: count.optional(),
  market_brier: zProb.optional(),
  market_log_loss: zProb.optional(),
  market_accuracy_pct: zPct.optional(),
}).meta({ id: 'AccuracyBucket', description: 'One bucket of a breakdown; the dimension\'s name carries the key.' });

export const AccuracySummary = z
  .object({
    scope: z.string().meta({ description: '`all` or the category.' }),
    headline_modes: z.array(z.string()),
    ...provenance,
    accuracy_pct: zPct,
    total_resolved: count,
    n_directional: count,
    n_correct: count,
    n_no_direction: count,
    market_accuracy_pct: zPct,
    brier: z.object({ ai: zProb, market: zProb }),
    log_loss: z.object({ ai: zProb, market: zProb }),
    ai_vs_market: z.object({
      n: count,
      ai_brier: zProb,
      market_brier: zProb,
      skill: zProb,
      diff_mean: zProb,
      diff_sd: zProb,
      diff_ci95: z.tuple([prob, prob]).nullable(),
      ai_log_loss: zProb,
      market_log_loss: zProb,
      n_consensus: count.meta({ description: 'Questions with a headline consensus: paired (`n`) or excluded.' }),
      excluded: z
        .object({
          no_market: count.meta({ description: 'No market price at or before the consensus.' }),
          stale_market: count.meta({
            description: 'The latest price is older than the maximum comparator age (QUORUM_MAX_COMPARATOR_AGE_DAYS, default 7).',
          }),
          no_direction: count.meta({ description: 'Paired, but the AI or the market is at 0.5: left out of the accuracy only.' }),
        })
        .meta({ description: 'Questions left out of the comparison, by reason.' }),
      n_directional: count.meta({ description: 'Pairs with a direction on both sides (the accuracy comparison).' }),
      ai_accuracy_pct: zPct.meta({ description: 'AI accuracy on the `n_directional` pairs.' }),
      market_accuracy_pct: zPct.meta({ description: 'Market accuracy on the same `n_directional` pairs.' }),
    }).meta({ description: 'AI versus market on the same questions: those with a headline consensus and a fresh market comparator.' }),
    by_category: z.array(BreakdownItem),
    by_domain: z.array(BreakdownItem),
    by_horizon: z.array(BreakdownItem),
    by_tier: z.array(BreakdownItem),
    by_model: z.array(BreakdownItem),
    by_mode: z.array(BreakdownItem),
  })
  .meta({ id: 'AccuracySummary' });

export const predictionsAccuracyRoute = jsonRoute({
  id: 'predictions.accuracy',
  path: '/api/predictions/accuracy',
  summary: 'Accuracy summary of the AI headline consensus',
  description:
    'Overall accuracy with breakdowns by category, domain, time horizon, confidence tier, model and mode, plus ' +
    'the AI versus market error comparison. Includes `accuracy_pct` and `total_resolved`.',
  tags: ['predictions'],
  response: AccuracySummary,
  cache: true,
  data: (snap) => accuracySummary(snap, 'all'),
});

export const predictionsAccuracyCategoryRoute = jsonRoute({
  id: 'predictions.accuracy.category',
  path: '/api/predictions/accuracy/{category}',
  summary: 'Accuracy summary of one category',
  tags: ['predictions'],
  params: z.object({ category: categoryParam }),
  response: AccuracySummary,
  errors: [404],
  cache: true,
  input: (req) => {
    const raw = String(req.params.category ?? '');
    const category = matchCategory(raw);
    if (!category) {
      const shown = raw.length > 64 ? `${raw.slice(0, 64)}…` : raw;
      throw ApiError.notFound(
        `Unknown category ${JSON.stringify(shown)}. The ${CATEGORIES.length} categories are: ${CATEGORIES.join(', ')}.`,
        { parameter: 'category', allowed: [...CATEGORIES] },
      );
    }
    return { category };
  },
  data: (snap, { category }) => accuracySummary(snap, category),
});
