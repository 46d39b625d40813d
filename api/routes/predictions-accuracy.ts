/**
 * `GET /api/predictions/accuracy` and `GET /api/predictions/accuracy/{category}`: the accuracy
 * summary of the AI headline consensus (accuracy rows forecaster='consensus', mode='headline'),
 * overall or for one category, with breakdowns and the market comparison.
 *
 * Body:
 * { scope, headline_modes, providers, simulated (where the scored forecasts came from: their
 *   distinct providers, and whether any is the bundled simulator), accuracy_pct, total_resolved, n_directional, n_correct, n_no_direction,
 *   resolved_brier, resolved_log_loss (the AI over every resolved question),
 *   market_accuracy_pct, brier: {ai, market, n}, log_loss: {ai, market, n} (AI versus market on the
 *   same n questions),
 *   ai_vs_market: {n, ai_brier, market_brier, skill, diff_mean, diff_sd, diff_ci95: [lo, hi] | null,
 *                  ai_log_loss, market_log_loss, n_consensus, excluded, n_directional, ai_accuracy_pct,
 *                  market_accuracy_pct},
 *   by_category, by_domain, by_horizon, by_tier, by_model, by_mode: [
 *     { <dimension name>: key, key, n, brier, log_loss, accuracy_pct, n_directional, n_correct,
 *       n_no_direction, (vs_market: the ai_vs_market shape, for the bucket) } ],
 *   as_of }
 * Every AI-versus-market figure compares the same questions (those with a fresh market comparator):
 * the bucket's own brier and accuracy_pct cover all its n questions, its vs_market only the paired
 * ones. vs_market appears on category, domain, horizon and mode items; not on tier (the market's
 * tier is computed from its own probability) nor on model items.
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
  bucketMetrics, categoryParam, count, headlineModes, prob, provenance, provenanceOf, published, zProb, zPct,
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

/**
 * The AI-versus-market comparison (the AiVsMarket shape) from a row of ai_vs_market's columns (a
 * breakdown row carries its bucket's as the struct `vs_market`).
 */
export function vsMarket(r: JsonValue | undefined): Record<string, unknown> {
  const row = r !== null && typeof r === 'object' && !Array.isArray(r) ? (r as JsonRow) : undefined;
  const col = (name: string) => row?.[name];
  const lo = num(col('diff_ci95_lo'));
  const hi = num(col('diff_ci95_hi'));
  return {
    n: num(col('n')) ?? 0,
    ai_brier: num(col('ai_brier')),
    market_brier: num(col('market_brier')),
    skill: num(col('skill')),
    diff_mean: num(col('diff_mean')),
    diff_sd: num(col('diff_sd')),
    diff_ci95: lo === null || hi === null ? null : [lo, hi],
    ai_log_loss: num(col('ai_log_loss')),
    market_log_loss: num(col('market_log_loss')),
    n_consensus: num(col('n_consensus')) ?? 0,
    excluded: {
      no_market: num(col('excluded_no_market')) ?? 0,
      stale_market: num(col('excluded_stale_market')) ?? 0,
      no_direction: num(col('excluded_no_direction')) ?? 0,
    },
    n_directional: num(col('n_directional')) ?? 0,
    ai_accuracy_pct: num(col('ai_accuracy_pct')),
    market_accuracy_pct: num(col('market_accuracy_pct')),
  };
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
  if (d.market) item.vs_market = vsMarket(r.vs_market);
  return item;
}

/** Builds the accuracy summary body of `scope` from the pinned snapshot. */
export async function accuracySummary(snap: PinnedSnapshot, scope: string): Promise<Record<string, unknown>> {
  snap.require('accuracy', 'ai_vs_market', 'ai_vs_market_breakdown', 'scored_forecasts');
  const [rows, avm, providers] = await Promise.all([
    snap.query('accuracy-headline', { scope }),
    snap.query('ai-vs-market', { scope }),
    snap.query('providers-scored', { category: scope === 'all' ? null : scope }),
  ]);
  const overall = rows.find((r) => r.dimension === 'overall');
  const a = avm[0];
  const paired = num(a?.n) ?? 0;

  const body: Record<string, unknown> = {
    scope,
    headline_modes: snap.headlineModes,
    ...provenanceOf(providers),
    accuracy_pct: num(overall?.accuracy_pct),
    total_resolved: num(overall?.n) ?? 0,
    n_directional: num(overall?.n_directional) ?? 0,
    n_correct: num(overall?.n_correct) ?? 0,
    n_no_direction: num(overall?.n_no_direction) ?? 0,
    resolved_brier: num(overall?.brier),
    resolved_log_loss: num(overall?.log_loss),
    market_accuracy_pct: num(a?.market_accuracy_pct),
    brier: { ai: num(a?.ai_brier), market: num(a?.market_brier), n: paired },
    log_loss: { ai: num(a?.ai_log_loss), market: num(a?.market_log_loss), n: paired },
    ai_vs_market: vsMarket(a),
  };
  for (const d of DIMENSIONS) {
    const items = rows.filter((r) => r.dimension === d.dimension);
    body[d.list] = orderByKnown(items, (r) => String(r.key), d.order).map((r) => breakdownItem(d, r));
  }
  return published(AccuracySummary, body);
}

/** AI versus market on the same questions (ai_vs_market, or a bucket of ai_vs_market_breakdown). */
export const AiVsMarket = z
  .object({
    n: count.meta({ description: 'Questions compared: a consensus and a fresh market comparator.' }),
    ai_brier: zProb.meta({
      description: 'Mean Brier of the AI consensus over the n paired questions (the headline consensus; mode buckets: that mode\'s consensus).',
    }),
    market_brier: zProb.meta({ description: 'Mean Brier of the market comparator over the same n questions.' }),
    skill: zProb.meta({ description: 'Brier skill 1 − ai_brier / market_brier (null when market_brier = 0).' }),
    diff_mean: zProb.meta({ description: 'Mean of the per-question ai_brier − market_brier (negative: the AI did better).' }),
    diff_sd: zProb.meta({ description: 'Sample standard deviation of the per-question ai_brier − market_brier.' }),
    diff_ci95: z.tuple([prob, prob]).nullable().meta({ description: 'diff_mean ± 1.96 · diff_sd / √n (null when n < 2).' }),
    ai_log_loss: zProb.meta({ description: 'Mean log loss of the AI consensus over the n paired questions (p clipped to [0.001, 0.999]).' }),
    market_log_loss: zProb.meta({ description: 'Mean log loss of the market comparator over the same n questions.' }),
    n_consensus: count.meta({ description: 'Questions with a consensus: paired (`n`) or excluded.' }),
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
  })
  .meta({ id: 'AiVsMarket', description: 'AI versus market on the same questions: those with a consensus and a fresh market comparator.' });

const BreakdownItem = z.object({
  category: z.string().optional().meta({ description: 'by_category: the category (`unknown`: none recorded).' }),
  domain: z.string().optional().meta({ description: 'by_domain: the domain (`unknown`: none recorded).' }),
  horizon: z.string().optional().meta({
    description: 'by_horizon: days from forecast to resolution, bucketed 0-7, 8-30, 31-90, 91-365, >365.',
  }),
  tier: z.string().optional().meta({
    description: 'by_tier: confidence tier by |p − 0.5|: low < 0.15, medium 0.15–0.35, high ≥ 0.35.',
  }),
  model: z.string().optional().meta({
    description: 'by_model: the model id; its scored forecasts in each question\'s headline mode.',
  }),
  mode: z.string().optional().meta({
    description: 'by_mode: the information mode (blind, informed, augmented); the consensus of that mode, not only headline rows.',
  }),
  ...bucketMetrics,
  vs_market: AiVsMarket.optional().meta({
    description: 'The bucket\'s AI-versus-market comparison on its paired questions (category, domain, horizon and mode items only).',
  }),
}).meta({ id: 'AccuracyBucket', description: 'One bucket of a breakdown; the dimension\'s name carries the key. brier, log_loss and accuracy_pct cover all n questions of the bucket.' });

/** An AI-versus-market pair of one score on the same questions. */
const PairedScore = z.object({
  ai: zProb.meta({ description: 'The AI headline consensus\'s mean score (Brier or log loss, as the parent field names) on the n paired questions.' }),
  market: zProb.meta({ description: 'The market comparator\'s mean score on the same n questions.' }),
  n: count.meta({ description: 'The questions compared (ai_vs_market.n).' }) });

export const AccuracySummary = z
  .object({
    scope: z.string().meta({ description: '`all` or the category.' }),
    headline_modes: headlineModes,
    ...provenance,
    accuracy_pct: zPct.meta({ description: 'Directional accuracy of the AI headline consensus over every resolved question with a direction.' }),
    total_resolved: count.meta({
      description: 'Resolved, non-annulled questions of the scope with a scored headline consensus.',
    }),
    n_directional: count.meta({ description: 'Of total_resolved, the questions whose headline consensus has a direction (p ≠ 0.5).' }),
    n_correct: count.meta({ description: 'Of n_directional, the questions whose headline consensus was on the side that happened.' }),
    n_no_direction: count.meta({ description: 'Of total_resolved, the questions whose headline consensus is exactly 0.5 (no direction).' }),
    resolved_brier: zProb.meta({ description: 'Mean Brier of the AI headline consensus over every resolved question (total_resolved).' }),
    resolved_log_loss: zProb.meta({ description: 'Mean log loss of the AI headline consensus over every resolved question.' }),
    market_accuracy_pct: zPct.meta({ description: 'Market accuracy on the pairs with a direction on both sides (= ai_vs_market.market_accuracy_pct; the AI on the same pairs: ai_vs_market.ai_accuracy_pct).' }),
    brier: PairedScore.meta({ description: 'AI versus market Brier on the same questions (= ai_vs_market.ai_brier, market_brier).' }),
    log_loss: PairedScore.meta({ description: 'AI versus market log loss on the same questions.' }),
    ai_vs_market: AiVsMarket,
    by_category: z.array(BreakdownItem).meta({ description: 'The headline consensus per category.' }),
    by_domain: z.array(BreakdownItem).meta({ description: 'The headline consensus per domain.' }),
    by_horizon: z.array(BreakdownItem).meta({ description: 'The headline consensus per horizon bucket (days from forecast to resolution).' }),
    by_tier: z.array(BreakdownItem).meta({ description: 'The headline consensus per confidence tier (no vs_market: the market\'s tier comes from its own probability).' }),
    by_model: z.array(BreakdownItem).meta({ description: 'Each model\'s scored forecasts in each question\'s headline mode (no vs_market).' }),
    by_mode: z.array(BreakdownItem).meta({ description: 'The scored consensus of each information mode.' }),
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
  // `?category=` is the lists' filter (refused, foreignFilterCheck); here the category is a path
  // segment. Ignored, it answered the all-categories summary as if filtered (QA).
  filterHint:
    'One category\'s summary is /api/predictions/accuracy/{category} (e.g. /api/predictions/accuracy/politics), and every category\'s figures are in by_category.',
  input: () => 'all' as const,
  data: (snap, scope) => accuracySummary(snap, scope),
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
