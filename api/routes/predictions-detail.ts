/**
 * `GET /api/predictions/{market_id}`: one prediction in detail, with model-by-model analysis.
 *
 * `market_id`: the venue-qualified question id (`polymarket:0xc5e3…`, `metaculus%3A1554` works too),
 * or the bare venue market id when exactly one question of the snapshot has it (several: 400
 * listing the matching question ids in `allowed`). Malformed: 400. Unknown: 404.
 * This route is registered after every fixed `/api/predictions/...` path, so `accuracy`,
 * `resolved` and `edges` keep their own endpoints.
 *
 * Body:
 * { question: { question_id, venue, venue_market_id, title, description, resolution_criteria, url,
 *     category, domain, tags, created_at, close_time, status, lang },
 *   headline: null | ModeConsensus of the first of headline_modes with a consensus,
 *   market: { probability, observed_at, stale } (latest at or before as_of; stale: older than
 *       QUORUM_MAX_PRICE_AGE_HOURS at as_of; nulls without a price),
 *   edge: headline mean − market probability (null when either is missing),
 *   modes: [ModeConsensus & { scores, models: [{ model, provider, probability, created_at, run_id,
 *       evidence_ids, scores, texts: [{ lang, translation_of, reasoning, key_factors }] }] }]  (the
 *       answer as given first, then its translations; modes in blind, informed, augmented
 *       order; only modes with a consensus),
 *   langs: the reasoning languages present among the models,
 *   history: [{ run_id, mode, created_at, consensus {mean, median, logit_mean}, n_models,
 *       disagreement {sd, range, sd_logit}, providers }]  oldest first (same time: blind, informed,
 *       augmented), the latest 1000 at most (`consensus` rows of the question, one per run and mode),
 *   history_truncated,
 *   evidence: [{ evidence_id, title, url, published_at, retrieved_at, snippet,
 *       source: { slug, name, kind }, n_forecasts, modes }],
 *   resolution: null | Resolution (as in the lifecycle endpoint),
 *   as_of }
 * ModeConsensus: { mode, run_id, forecast_at, consensus {mean, median, logit_mean}, n_models,
 *   disagreement {sd, range, sd_logit}, providers }.
 * Scores: { outcome, brier, log_loss, direction, market_probability, market_observed_at,
 *   market_stale, market_brier, market_log_loss } — the market is the comparator at the forecast's
 *   time, stale when observed more than QUORUM_MAX_PRICE_AGE_HOURS before it.
 *
 * Which forecasts: an active question shows the latest run of each mode (latest_forecasts, scores
 * null). A resolved question shows what was scored: per mode its scored consensus (scored_consensus,
 * the latest run before close and resolution; `headline` is its headline scored consensus) with its
 * scores, and every model's scored forecast (scored_forecasts: each model's latest forecast before
 * close and resolution, so a model that missed the last run shows its earlier forecast) with its
 * scores and its texts in every language (scored_forecast_texts). `evidence` is what those forecasts
 * cite (evidence_used). A closed or annulled question has nothing scored and no latest forecasts:
 * its consensus per mode and its history are given, `models` and `evidence` are empty.
 */
import { z } from 'zod';
import { MODES } from '../../pipeline/warehouse/tables.ts';
import type { JsonRow, JsonValue } from '../db/convert.ts';
import { jsonRoute } from '../http/registry.ts';
import { DOC, isoTime, marketStale, published, zNum, zProb } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { orderByKnown } from './order.ts';
import { ConsensusStats } from './prediction-feed.ts';
import { Disagreement, providerList } from './predictions-edges.ts';
import { Resolution, resolutionOf, stringList } from './predictions-lifecycle.ts';
import { findQuestion, marketIdParam, pathMarketRef } from './prediction-params.ts';
import { SameEventPrice, sameEventPrices } from './same-event.ts';

/** `{ other_venues }` of one question, or nothing for a snapshot without same_event_prices. */
async function otherVenues(snap: PinnedSnapshot, id: string): Promise<{ other_venues?: unknown[] }> {
  const prices = await sameEventPrices(snap, [id]);
  return prices ? { other_venues: prices.get(id) ?? [] } : {};
}

export const HISTORY_MAX = 1000;

const str = (v: JsonValue | undefined): string | null => (typeof v === 'string' ? v : null);
const num = (v: JsonValue | undefined): number | null => (typeof v === 'number' ? v : null);

function consensusOf(r: JsonRow): Record<string, unknown> {
  return {
    consensus: { mean: num(r.mean), median: num(r.median), logit_mean: num(r.logit_mean) },
    n_models: num(r.n_models),
    disagreement: { sd: num(r.sd), range: num(r.range), sd_logit: num(r.sd_logit) },
    providers: providerList(r.providers),
  };
}

function modeConsensus(r: JsonRow): Record<string, unknown> {
  return { mode: r.mode, run_id: str(r.run_id), forecast_at: str(r.created_at), ...consensusOf(r) };
}

/** The scores of a scored_consensus / scored_forecasts row (null for an unscored row). */
function scoresOf(r: JsonRow, scored: boolean): Record<string, unknown> | null {
  if (!scored) return null;
  return {
    outcome: num(r.outcome),
    brier: num(r.brier),
    log_loss: num(r.log_loss),
    direction: str(r.direction),
    market_probability: num(r.market_probability),
    market_observed_at: str(r.market_observed_at),
    market_stale: typeof r.market_stale === 'boolean' ? r.market_stale : null,
    market_brier: num(r.market_brier),
    market_log_loss: num(r.market_log_loss),
  };
}

/**
 * Forecast rows of one mode (latest_forecasts, or scored forecasts with their texts) → one entry per
 * model with its texts per language; `scored` adds each model's scores.
 */
function modelsOf(rows: JsonRow[], scored: boolean): Record<string, unknown>[] {
  const byModel = new Map<string, { first: JsonRow; texts: Record<string, unknown>[] }>();
  for (const r of rows) {
    const model = String(r.model);
    let e = byModel.get(model);
    if (!e) byModel.set(model, (e = { first: r, texts: [] }));
    if (r.has_text === false) continue; // a scored forecast without text rows
    e.texts.push({
      lang: str(r.lang),
      translation_of: str(r.translation_of),
      reasoning: str(r.reasoning),
      key_factors: stringList(r.key_factors),
    });
  }
  return [...byModel.entries()].map(([model, { first, texts }]) => ({
    model,
    provider: str(first.provider),
    probability: num(first.probability),
    created_at: str(first.created_at),
    run_id: str(first.run_id),
    evidence_ids: stringList(first.evidence_ids),
    scores: scoresOf(first, scored),
    texts,
  }));
}

const Scores = z
  .object({
    outcome: zNum.meta({ description: '1 (YES) or 0 (NO).' }),
    brier: zProb.meta({ description: 'Brier score (p − o)².' }),
    log_loss: zProb.meta({ description: 'Log loss −(o·ln p + (1−o)·ln(1−p)), p clipped to [0.001, 0.999].' }),
    direction: z.string().nullable().meta({ description: 'correct, wrong, or none (p = 0.5).' }),
    market_probability: zProb.meta({ description: 'The market comparator: the latest price at or before the forecast.' }),
    market_observed_at: isoTime.nullable().meta({ description: 'When the comparator price was observed (null: no price).' }),
    market_stale: marketStale,
    market_brier: zProb.meta({ description: 'Brier score of the market comparator (null: no fresh comparator).' }),
    market_log_loss: zProb.meta({ description: 'Log loss of the market comparator (null: no fresh comparator).' }),
  })
  .meta({ id: 'ForecastScores', description: 'The scores of a scored forecast or consensus (resolved questions).' });

const ModeConsensus = z.object({
  mode: z.string().meta({ description: DOC.mode }),
  run_id: z.string().nullable().meta({ description: DOC.run_id }),
  forecast_at: isoTime.nullable().meta({ description: DOC.forecast_at }),
  consensus: ConsensusStats,
  n_models: zNum.meta({ description: DOC.n_models }),
  disagreement: Disagreement,
  providers: z.array(z.string()).meta({ description: DOC.providers }),
});

export const ModelDetail = z
  .object({
    model: z.string().meta({ description: 'The model id (as configured).' }),
    provider: z.string().nullable().meta({ description: '`simulated` for the bundled model simulator.' }),
    probability: zProb.meta({ description: 'The model\'s probability of YES.' }),
    created_at: isoTime.nullable().meta({ description: 'When the forecast was made (its run\'s as-of time).' }),
    run_id: z.string().nullable().meta({ description: 'The run of the forecast (resolved questions: may be earlier than the consensus\'s if the model missed the last run).' }),
    evidence_ids: z.array(z.string()).meta({ description: 'The evidence items shown to the model in its prompt (augmented mode only; empty otherwise).' }),
    scores: Scores.nullable().meta({ description: 'Resolved questions: the scores of this scored forecast; otherwise null.' }),
    texts: z.array(
      z.object({
        lang: z.string().nullable().meta({ description: 'BCP 47 tag (null: not recorded).' }),
        translation_of: z.string().nullable().meta({
          description: 'null: the model\'s answer as given; otherwise the language of the answer this text translates.',
        }),
        reasoning: z.string().nullable().meta({ description: 'The model\'s reasoning (a few sentences) in this language.' }),
        key_factors: z.array(z.string()).meta({ description: 'The key factors the model named (2 to 5 short phrases) in this language.' }),
      }),
    ).meta({ description: 'The reasoning and key factors per language: the answer as given first, then its translations.' }),
  })
  .meta({
    id: 'ModelDetail',
    description:
      'One model\'s forecast in a mode, with its reasoning per language: the latest run (active questions) or its ' +
      'scored forecast with the scores (resolved questions).',
  });

export const PredictionDetail = z
  .object({
    question: z.object({
      question_id: z.string().meta({ description: DOC.question_id }),
      venue: z.string().nullable().meta({ description: DOC.venue }),
      venue_market_id: z.string().nullable().meta({ description: DOC.venue_market_id }),
      title: z.string().nullable().meta({ description: DOC.title }),
      description: z.string().nullable().meta({ description: DOC.description }),
      resolution_criteria: z.string().nullable().meta({ description: DOC.resolution_criteria }),
      url: z.string().nullable().meta({ description: DOC.url }),
      category: z.string().nullable().meta({ description: DOC.category }),
      domain: z.string().nullable().meta({ description: DOC.domain }),
      tags: z.array(z.string()).meta({ description: DOC.tags }),
      created_at: isoTime.nullable().meta({ description: DOC.created_at }),
      close_time: isoTime.nullable().meta({ description: DOC.close_time }),
      status: z.string().meta({ description: DOC.status }),
      lang: z.string().nullable().meta({ description: 'The language of the question\'s text (BCP 47; null: not recorded).' }),
    }).meta({ description: 'The question as the snapshot knows it.' }),
    headline: ModeConsensus.nullable().meta({ description: 'The consensus in the first headline mode that has one.' }),
    market: z.object({
      probability: zProb.meta({ description: DOC.market_probability }),
      observed_at: isoTime.nullable().meta({ description: DOC.market_observed_at }),
      stale: marketStale.meta({
        description: 'true when the latest price is older than QUORUM_MAX_PRICE_AGE_HOURS (default 48) at as_of; null without a price.',
      }),
    }).meta({ description: 'The market\'s latest price at as_of.' }),
    edge: zProb.meta({ description: 'headline consensus − market probability (probability points).' }),
    modes: z.array(
      ModeConsensus.extend({
        scores: Scores.nullable().meta({ description: 'Resolved questions: the scores of this scored consensus; otherwise null.' }),
        models: z.array(ModelDetail).meta({ description: 'One entry per model, by model id.' }),
      }),
    ).meta({
      description:
        'Per mode with a consensus (blind, informed, augmented order): active questions, the latest run\'s consensus ' +
        'and models; resolved questions, the scored consensus and each model\'s scored forecast.',
    }),
    langs: z.array(z.string()).meta({ description: 'The reasoning languages present among the models\' texts, sorted.' }),
    history: z
      .array(ModeConsensus.omit({ forecast_at: true }).extend({
        created_at: isoTime.nullable().meta({ description: 'When that run\'s consensus was made.' }),
      }))
      .meta({ description: 'The question\'s consensus in every run and mode, oldest first (same time: blind, informed, augmented); the latest 1000 at most.' }),
    history_truncated: z.boolean().meta({ description: 'true when the question has more than 1000 consensus rows and only the latest 1000 are in history.' }),
    evidence: z.array(
      z.object({
        evidence_id: z.string().meta({ description: 'The evidence item\'s id.' }),
        title: z.string().nullable().meta({ description: 'The item\'s title (an article headline, a data release).' }),
        url: z.string().nullable().meta({ description: 'Where the item was found.' }),
        published_at: isoTime.nullable().meta({ description: 'When the item was published (null: unknown).' }),
        retrieved_at: isoTime.nullable().meta({ description: 'When Quorum retrieved it.' }),
        snippet: z.string().nullable().meta({ description: 'An excerpt of the item, shown (possibly shortened) in the augmented prompt.' }),
        source: z.object({
          slug: z.string().nullable().meta({ description: 'The slug of the source that provided the item.' }),
          name: z.string().nullable().meta({ description: 'The source\'s name (null: not in the sources registry).' }),
          kind: z.string().nullable().meta({ description: 'government, central_bank, regulatory, primary_financial, secondary_reporting, market or analyst (null: not in the registry).' }),
        }).meta({ description: 'Who published the item.' }),
        n_forecasts: zNum.meta({ description: 'How many of the shown forecasts (models × modes) cite it; a forecast shown in several languages counts once.' }),
        modes: z.array(z.string()).meta({ description: 'The modes whose forecasts cite it, in ladder order (blind, informed, augmented).' }),
      }),
    ).meta({ description: 'The evidence in the shown forecasts\' evidence_ids that was visible at as_of, newest publication first.' }),
    resolution: Resolution.nullable().meta({ description: 'The resolution and its provenance; null unless resolved or annulled.' }),
    other_venues: z.array(SameEventPrice).optional().meta({ description: 'The same event on other venues, with their prices and the cross-venue gap (issue 12; absent from snapshots published before it).' }),
  })
  .meta({ id: 'PredictionDetail' });

export const predictionsDetailRoute = jsonRoute({
  id: 'predictions.detail',
  path: '/api/predictions/{market_id}',
  summary: 'One prediction in detail, model by model',
  description:
    'Every model\'s probability, reasoning and key factors in every mode (active questions: the latest run; resolved ' +
    'questions: the scored forecasts with their scores), the consensus and disagreement per mode, the market ' +
    'probability (flagged when stale), the consensus history across runs and the evidence the forecasts cite.',
  tags: ['predictions'],
  params: z.object({ market_id: marketIdParam }),
  response: PredictionDetail,
  errors: [400, 404],
  cache: true,
  input: (req) => pathMarketRef(req),
  data: async (snap, ref) => {
    snap.require('questions', 'consensus', 'latest_forecasts', 'evidence_used');
    const q = await findQuestion(snap, ref, 'market_id');
    const id = String(q.question_id);
    const scored = q.status === 'resolved';
    if (scored) snap.require('scored_consensus', 'scored_forecasts', 'scored_forecast_texts');
    const maxAge = { max_price_age_hours: snap.maxPriceAgeHours };
    const [latest, history, forecasts, evidence] = await Promise.all([
      scored
        ? snap.query('prediction-scored-consensus', { question_id: id, ...maxAge })
        : snap.query('prediction-latest-consensus', { question_id: id }),
      snap.query('prediction-history', { question_id: id, limit: HISTORY_MAX + 1 }),
      scored
        ? snap.query('prediction-scored-forecasts', { question_id: id, ...maxAge })
        : snap.query('prediction-forecasts', { question_id: id }),
      snap.query('prediction-evidence', { question_id: id }),
    ]);

    // Active: the models of the mode's latest run. Resolved: every model's scored forecast of the mode.
    const modes = orderByKnown(latest, (r) => String(r.mode), MODES).map((r) => ({
      ...modeConsensus(r),
      scores: scoresOf(r, scored),
      models: modelsOf(forecasts.filter((f) => f.mode === r.mode && (scored || f.run_id === r.run_id)), scored),
    }));
    const headlineRow =
      (scored ? latest.find((r) => r.is_headline === true) : undefined) ??
      snap.headlineModes.map((m) => latest.find((r) => r.mode === m)).find((r) => r !== undefined);
    const headline = headlineRow ? modeConsensus(headlineRow) : null;
    const mean = num(headlineRow?.mean);
    const market = num(q.latest_market_probability);
    const langs = [...new Set(forecasts.map((f) => str(f.lang)).filter((l): l is string => l !== null))].sort();
    // Oldest first; runs at the same time in ladder order (blind, informed, augmented).
    const modeRank = (m: JsonValue | undefined) => {
      const i = (MODES as readonly string[]).indexOf(String(m));
      return i < 0 ? MODES.length : i;
    };
    const shownHistory = history
      .slice(0, HISTORY_MAX)
      .reverse()
      .sort((x, y) => String(x.created_at ?? '').localeCompare(String(y.created_at ?? '')) || modeRank(x.mode) - modeRank(y.mode));

    return published(PredictionDetail, {
      question: {
        question_id: id,
        venue: str(q.venue),
        venue_market_id: str(q.venue_market_id),
        title: str(q.title),
        description: str(q.description),
        resolution_criteria: str(q.resolution_criteria),
        url: str(q.url),
        category: str(q.category),
        domain: str(q.domain),
        tags: stringList(q.tags),
        created_at: str(q.created_at),
        close_time: str(q.close_time),
        status: String(q.status),
        lang: str(q.lang),
      },
      headline,
      market: {
        probability: market,
        observed_at: str(q.latest_market_observed_at),
        stale: typeof q.market_stale === 'boolean' ? q.market_stale : null,
      },
      edge: mean !== null && market !== null ? mean - market : null,
      modes,
      langs,
      history: shownHistory.map((r) => ({ run_id: str(r.run_id), mode: r.mode, created_at: str(r.created_at), ...consensusOf(r) })),
      history_truncated: history.length > HISTORY_MAX,
      evidence: evidence.map((e) => ({
        evidence_id: String(e.evidence_id),
        title: str(e.title),
        url: str(e.url),
        published_at: str(e.published_at),
        retrieved_at: str(e.retrieved_at),
        snippet: str(e.snippet),
        source: { slug: str(e.source_slug), name: str(e.source_name), kind: str(e.source_kind) },
        n_forecasts: num(e.n_forecasts),
        modes: stringList(e.modes),
      })),
      resolution: resolutionOf(q),
      ...(await otherVenues(snap, id)),
    });
  },
});
