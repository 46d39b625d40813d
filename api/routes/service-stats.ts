/**
 * `GET /api/events/service_stats/`: platform statistics of the served snapshot.
 *
 * Body:
 * { questions: { total, active, closed, resolved, annulled }, active_count, resolved_count,
 *   scored_count (resolved questions with a scored headline consensus), headline_modes,
 *   languages (the active predictions' reasoning languages, main first: [{ lang, codes, predictions,
 *   main_predictions }], so a client asks a feed the snapshot has: prediction-feed.ts),
 *   providers, simulated (where the snapshot's forecasts came from: the distinct providers of every
 *   consensus, and whether any is the bundled simulator),
 *   calibration: [{ forecaster, kind, mode, n, brier, log_loss, accuracy_pct, ece, reliability,
 *                   resolution, uncertainty }],
 *   leaderboard: [{ rank, forecaster, kind, n, brier, log_loss, accuracy_pct, ece }]  (headline mode,
 *                 every forecaster on the same n questions: headline_leaderboard),
 *   by_category: [{ category, questions, active, resolved, n_scored, brier, accuracy_pct,
 *                   vs_market (the category's AI versus market on its paired questions) }],
 *   coverage: { models_expected: 4, questions, forecast, all_models, all_models_share,
 *               by_category: [...], by_venue: [...], by_category_venue: [...] }, as_of }
 * `all_models_share` = questions whose latest consensus had all four models answering ÷ questions
 * with a consensus (null when none). Sources: questions, consensus, calibration_summary, accuracy,
 * ai_vs_market_breakdown, headline_leaderboard.
 */
import { z } from 'zod';
import { CATEGORIES } from '../../pipeline/warehouse/tables.ts';
import type { JsonRow, JsonValue } from '../db/convert.ts';
import { jsonRoute } from '../http/registry.ts';
import { calibrationMetrics, count, headlineModes, scoreMetrics, provenance, provenanceOf, published, zPct, zProb } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { CoherenceRate, coherenceRates } from './factors.ts';
import { AiVsMarket, vsMarket } from './predictions-accuracy.ts';
import { orderByKnown } from './order.ts';
import { ReasoningLanguage, reasoningLanguages } from './prediction-feed.ts';

export const MODELS_EXPECTED = 4;

function n(v: JsonValue | undefined): number {
  return typeof v === 'number' ? v : 0;
}
function x(v: JsonValue | undefined): number | null {
  return typeof v === 'number' ? v : null;
}
function kindOf(f: string): 'consensus' | 'market' | 'model' {
  return f === 'consensus' ? 'consensus' : f === 'market' ? 'market' : 'model';
}

interface CoverageCell {
  questions: number;
  active: number;
  closed: number;
  resolved: number;
  annulled: number;
  forecast: number;
  all_models: number;
}
const zero = (): CoverageCell => ({ questions: 0, active: 0, closed: 0, resolved: 0, annulled: 0, forecast: 0, all_models: 0 });
function add(a: CoverageCell, r: JsonRow): void {
  a.questions += n(r.questions);
  a.active += n(r.active);
  a.closed += n(r.closed);
  a.resolved += n(r.resolved);
  a.annulled += n(r.annulled);
  a.forecast += n(r.forecast);
  a.all_models += n(r.all_models);
}
function share(c: CoverageCell): number | null {
  return c.forecast > 0 ? c.all_models / c.forecast : null;
}
function coverageItem(c: CoverageCell) {
  return { questions: c.questions, forecast: c.forecast, all_models: c.all_models, all_models_share: share(c) };
}

export async function serviceStats(snap: PinnedSnapshot): Promise<Record<string, unknown>> {
  snap.require('questions', 'consensus', 'calibration_summary', 'accuracy', 'ai_vs_market_breakdown', 'headline_leaderboard', 'active_predictions', 'latest_forecasts');
  const [cov, summary, leaders, acc, providers, coherence, languages] = await Promise.all([
    snap.query('service-stats-coverage'),
    snap.query('calibration-summary'),
    snap.query('service-stats-leaderboard'),
    snap.query('accuracy-headline', { scope: 'all' }),
    snap.query('providers-consensus'),
    coherenceRates(snap),
    reasoningLanguages(snap),
  ]);

  const total = zero();
  const byCategory = new Map<string, CoverageCell>();
  const byVenue = new Map<string, CoverageCell>();
  for (const r of cov) {
    add(total, r);
    const c = String(r.category);
    const v = String(r.venue);
    if (!byCategory.has(c)) byCategory.set(c, zero());
    if (!byVenue.has(v)) byVenue.set(v, zero());
    add(byCategory.get(c)!, r);
    add(byVenue.get(v)!, r);
  }
  const overall = acc.find((r) => r.dimension === 'overall');
  const accByCategory = new Map(acc.filter((r) => r.dimension === 'category').map((r) => [String(r.key), r]));
  const categories = orderByKnown(
    [...new Set([...byCategory.keys(), ...accByCategory.keys()])],
    (c) => c,
    CATEGORIES,
  );

  return published(ServiceStats, {
    questions: {
      total: total.questions,
      active: total.active,
      closed: total.closed,
      resolved: total.resolved,
      annulled: total.annulled,
    },
    active_count: total.active,
    resolved_count: total.resolved,
    scored_count: n(overall?.n),
    headline_modes: snap.headlineModes,
    languages,
    ...provenanceOf(providers),
    calibration: summary.map((r) => ({
      forecaster: String(r.forecaster),
      kind: kindOf(String(r.forecaster)),
      mode: String(r.mode),
      n: n(r.n),
      brier: x(r.brier),
      log_loss: x(r.log_loss),
      accuracy_pct: x(r.accuracy_pct),
      ece: x(r.ece),
      reliability: x(r.reliability),
      resolution: x(r.resolution),
      uncertainty: x(r.uncertainty),
    })),
    leaderboard: leaders.map((r) => ({
      rank: n(r.rank),
      forecaster: String(r.forecaster),
      kind: kindOf(String(r.forecaster)),
      n: n(r.n),
      brier: x(r.brier),
      log_loss: x(r.log_loss),
      accuracy_pct: x(r.accuracy_pct),
      ece: x(r.ece),
    })),
    by_category: categories.map((c) => {
      const cell = byCategory.get(c) ?? zero();
      const a = accByCategory.get(c);
      return {
        category: c,
        questions: cell.questions,
        active: cell.active,
        resolved: cell.resolved,
        n_scored: n(a?.n),
        brier: x(a?.brier),
        accuracy_pct: x(a?.accuracy_pct),
        vs_market: vsMarket(a?.vs_market),
      };
    }),
    coverage: {
      models_expected: MODELS_EXPECTED,
      ...coverageItem(total),
      by_category: orderByKnown([...byCategory.entries()], ([c]) => c, CATEGORIES).map(([category, cell]) => ({
        category,
        ...coverageItem(cell),
      })),
      by_venue: [...byVenue.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([venue, cell]) => ({ venue, ...coverageItem(cell) })),
      by_category_venue: cov.map((r) => {
        const cell = zero();
        add(cell, r);
        return { category: String(r.category), venue: String(r.venue), ...coverageItem(cell) };
      }),
    },
    coherence,
  });
}

const Coverage = z.object({
  questions: count.meta({ description: 'Questions of the snapshot (every status).' }),
  forecast: count.meta({ description: 'Questions with at least one consensus.' }),
  all_models: count.meta({ description: 'Questions whose latest consensus had all four models answering.' }),
  all_models_share: zProb.meta({ description: 'all_models ÷ forecast (null when no question has a consensus).' }),
});
const Forecaster = {
  forecaster: z.string().meta({ description: '`consensus`, `market` or a model id.' }),
  kind: z.enum(['consensus', 'model', 'market']).meta({
    description: 'consensus: the models\' consensus (mean); model: one AI model; market: the market comparator.',
  }),
};

export const ServiceStats = z
  .object({
    questions: z
      .object({
        total: count.meta({ description: 'Every question of the snapshot.' }),
        active: count.meta({ description: 'Questions neither resolved, annulled nor past their close_time at as_of.' }),
        closed: count.meta({ description: 'Questions past their close_time at as_of without a visible resolution.' }),
        resolved: count.meta({ description: 'Questions with an outcome (YES or NO) resolved by as_of.' }),
        annulled: count.meta({ description: 'Questions annulled by as_of (excluded from every score).' }),
      })
      .meta({ description: 'Questions of the snapshot by status as of as_of.' }),
    active_count: count.meta({ description: 'Active questions (= questions.active).' }),
    resolved_count: count.meta({ description: 'Resolved questions (= questions.resolved), scored or not.' }),
    scored_count: count.meta({ description: 'Resolved questions with a scored headline consensus.' }),
    headline_modes: headlineModes,
    languages: z.array(ReasoningLanguage).meta({
      description:
        'The reasoning languages of the active predictions, the main one first (the language most of them were answered in first, ' +
        'then the one most have reasoning in, then by code); each is a feed, `GET /api/predictions/lang/{lang}`. Empty: no active prediction has reasoning.',
    }),
    ...provenance,
    calibration: z.array(
      z.object({
        ...Forecaster,
        mode: z.string().meta({
          description:
            'blind, informed, augmented, or headline (each question\'s headline mode). For the market: its comparators ' +
            'paired with the consensus of that mode.',
        }),
        n: count.meta({ description: 'Scored forecasts of the forecaster in the mode (one per resolved, non-annulled question).' }),
        brier: scoreMetrics.brier,
        log_loss: scoreMetrics.log_loss,
        accuracy_pct: scoreMetrics.accuracy_pct,
        ...calibrationMetrics,
      }),
    ).meta({ description: 'The calibration summary of every (forecaster, mode), each over all of its own scored forecasts.' }),
    leaderboard: z.array(
      z.object({
        rank: z.number().int().min(1).meta({ description: 'Rank by brier (1 = lowest; ties share a rank).' }),
        ...Forecaster,
        n: count.meta({ description: 'The questions every listed forecaster scored (the same for every row): headline consensus with a fresh market comparator and a headline-mode forecast of every model.' }),
        brier: zProb.meta({ description: 'Mean Brier score over the n questions.' }),
        log_loss: zProb.meta({ description: 'Mean log loss over the n questions, p clipped to [0.001, 0.999].' }),
        accuracy_pct: zPct.meta({ description: '100 × correct / the forecaster\'s directional forecasts among the n questions.' }),
        ece: zProb.meta({ description: 'Expected calibration error over the n questions: Σ over the 10 bins of |Σ (o − p)| / n.' }),
      }),
    ).meta({ description: 'Headline-mode leaderboard: each model, the consensus and the market, every one on the same n questions, best first.' }),
    by_category: z.array(
      z.object({
        category: z.string().meta({ description: 'The category (`unknown`: none recorded).' }),
        questions: count.meta({ description: 'Questions of the category (every status).' }),
        active: count.meta({ description: 'Active questions of the category.' }),
        resolved: count.meta({ description: 'Resolved questions of the category.' }),
        n_scored: count.meta({ description: 'Resolved questions of the category with a scored headline consensus.' }),
        brier: zProb.meta({ description: 'Mean Brier of the headline consensus over the n_scored questions.' }),
        accuracy_pct: zPct.meta({ description: 'Directional accuracy of the headline consensus over those questions (100 × correct / directional).' }),
        vs_market: AiVsMarket.meta({ description: 'The category\'s AI-versus-market comparison on its paired questions.' }),
      }),
    ).meta({ description: 'Per category: question counts and the headline consensus\'s scores.' }),
    coverage: Coverage.extend({
      models_expected: z.literal(MODELS_EXPECTED).meta({ description: 'Models a full consensus has (4).' }),
      by_category: z
        .array(Coverage.extend({ category: z.string().meta({ description: 'The category (`unknown`: none recorded).' }) }))
        .meta({ description: 'The same counts per category.' }),
      by_venue: z
        .array(Coverage.extend({ venue: z.string().meta({ description: 'The venue (`unknown`: none recorded).' }) }))
        .meta({ description: 'The same counts per venue, by name.' }),
      by_category_venue: z
        .array(Coverage.extend({
          category: z.string().meta({ description: 'The category (`unknown`: none recorded).' }),
          venue: z.string().meta({ description: 'The venue (`unknown`: none recorded).' }),
        }))
        .meta({ description: 'The same counts per (category, venue).' }),
    }).meta({ description: 'How many questions have a consensus, and how many had all four models answering in their latest run.' }),
    coherence: z.array(CoherenceRate).meta({
      description: 'Coherence across the book (linked questions and scenarios): per model and the consensus, the rate of violations of the laws of probability, per check and in all.',
    }),
  })
  .meta({ id: 'ServiceStats' });

export const serviceStatsRoute = jsonRoute({
  id: 'events.service_stats',
  path: '/api/events/service_stats/',
  summary: 'Platform statistics',
  description:
    'Active and resolved counts, calibration metrics (Brier, ECE per forecaster and mode), the model leaderboard ' +
    '(headline mode, every forecaster on the same questions, ranked by Brier), the per-category breakdown and coverage (questions per category and venue, ' +
    'share with all four models answering).',
  tags: ['events'],
  response: ServiceStats,
  cache: true,
  data: (snap) => serviceStats(snap),
});
