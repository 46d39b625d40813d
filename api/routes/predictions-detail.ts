/**
 * `GET /api/predictions/{market_id}`: one prediction in detail, with model-by-model analysis.
 *
 * `market_id`: the venue-qualified question id (`polymarket:0xc5e3…`, `metaculus%3A1554` works too),
 * or the bare venue market id when exactly one question of the snapshot has it (several: 404
 * listing the matching question ids in `allowed`). Malformed: 400. Unknown: 404.
 * This route is registered after every fixed `/api/predictions/...` path, so `accuracy`,
 * `resolved` and `edges` keep their own endpoints.
 *
 * Body:
 * { question: { question_id, venue, venue_market_id, title, description, resolution_criteria, url,
 *     category, domain, tags, created_at, close_time, status, lang },
 *   headline: null | ModeConsensus of the first of headline_modes with a consensus,
 *   market: { probability, observed_at } (latest at or before as_of; nulls without a price),
 *   edge: headline mean − market probability (null when either is missing),
 *   modes: [ModeConsensus & { models: [{ model, provider, probability, created_at, run_id,
 *       evidence_ids, texts: [{ lang, translation_of, reasoning, key_factors }] }] }]  (the answer
 *       as given first, then its translations; modes in blind, informed, augmented
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
 * Per-model forecasts (`models`) and `evidence` come from latest_forecasts / evidence_used, which
 * the pipeline publishes for active questions only: for a closed, resolved or annulled question
 * they are empty (its consensus per mode and its history are still given).
 */
import { z } from 'zod';
import { MODES } from '../../pipeline/warehouse/tables.ts';
import type { JsonRow, JsonValue } from '../db/convert.ts';
import { ApiError } from '../errors/problem.ts';
import { jsonRoute } from '../http/registry.ts';
import { isoTime, zNum } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { orderByKnown } from './order.ts';
import { ConsensusStats } from './prediction-feed.ts';
import { Disagreement, providerList } from './predictions-edges.ts';
import { Resolution, resolutionOf, stringList } from './predictions-lifecycle.ts';
import { marketIdParam, pathMarketRef, shown, type MarketRef } from './prediction-params.ts';

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

/** latest_forecasts rows of one mode → one entry per model with its texts per language. */
function modelsOf(rows: JsonRow[]): Record<string, unknown>[] {
  const byModel = new Map<string, { first: JsonRow; texts: Record<string, unknown>[] }>();
  for (const r of rows) {
    const model = String(r.model);
    let e = byModel.get(model);
    if (!e) byModel.set(model, (e = { first: r, texts: [] }));
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
    texts,
  }));
}

async function findQuestion(snap: PinnedSnapshot, ref: MarketRef): Promise<JsonRow> {
  const found = await snap.query('question-lookup', { question_id: ref.questionId, market_id: ref.marketId });
  const raw = ref.questionId ?? ref.marketId;
  if (found.length === 0) {
    throw ApiError.notFound(`No prediction for market ${shown(raw)} in this snapshot.`, { parameter: 'market_id' });
  }
  if (found.length > 1) {
    const ids = found.slice(0, 5).map((r) => String(r.question_id));
    throw ApiError.notFound(
      `Market id ${shown(raw)} is ambiguous: ${found.length > 5 ? 'more than 5' : found.length} questions have it ` +
        `(${ids.join(', ')}). Use the venue-qualified question id.`,
      { parameter: 'market_id', allowed: ids },
    );
  }
  return found[0]!;
}

const ModeConsensus = z.object({
  mode: z.string(),
  run_id: z.string().nullable(),
  forecast_at: isoTime.nullable(),
  consensus: ConsensusStats,
  n_models: zNum,
  disagreement: Disagreement,
  providers: z.array(z.string()),
});

export const ModelDetail = z
  .object({
    model: z.string(),
    provider: z.string().nullable(),
    probability: zNum,
    created_at: isoTime.nullable(),
    run_id: z.string().nullable(),
    evidence_ids: z.array(z.string()),
    texts: z.array(
      z.object({
        lang: z.string().nullable().meta({ description: 'BCP 47 tag (null: not recorded).' }),
        translation_of: z.string().nullable().meta({
          description: 'null: the model\'s answer as given; otherwise the language of the answer this text translates.',
        }),
        reasoning: z.string().nullable(),
        key_factors: z.array(z.string()),
      }),
    ),
  })
  .meta({ id: 'ModelDetail', description: 'One model\'s forecast of the latest run of a mode, with its reasoning per language.' });

export const PredictionDetail = z
  .object({
    question: z.object({
      question_id: z.string(),
      venue: z.string().nullable(),
      venue_market_id: z.string().nullable(),
      title: z.string().nullable(),
      description: z.string().nullable(),
      resolution_criteria: z.string().nullable(),
      url: z.string().nullable(),
      category: z.string().nullable(),
      domain: z.string().nullable(),
      tags: z.array(z.string()),
      created_at: isoTime.nullable(),
      close_time: isoTime.nullable(),
      status: z.string(),
      lang: z.string().nullable(),
    }),
    headline: ModeConsensus.nullable().meta({ description: 'The consensus in the first headline mode that has one.' }),
    market: z.object({ probability: zNum, observed_at: isoTime.nullable() }),
    edge: zNum.meta({ description: 'headline consensus − market probability (probability points).' }),
    modes: z.array(ModeConsensus.extend({ models: z.array(ModelDetail) })),
    langs: z.array(z.string()),
    history: z.array(ModeConsensus.omit({ forecast_at: true }).extend({ created_at: isoTime.nullable() })),
    history_truncated: z.boolean(),
    evidence: z.array(
      z.object({
        evidence_id: z.string(),
        title: z.string().nullable(),
        url: z.string().nullable(),
        published_at: isoTime.nullable(),
        retrieved_at: isoTime.nullable(),
        snippet: z.string().nullable(),
        source: z.object({ slug: z.string().nullable(), name: z.string().nullable(), kind: z.string().nullable() }),
        n_forecasts: zNum.meta({ description: 'How many of the latest forecasts (models × modes × languages) cite it.' }),
        modes: z.array(z.string()),
      }),
    ),
    resolution: Resolution.nullable(),
  })
  .meta({ id: 'PredictionDetail' });

export const predictionsDetailRoute = jsonRoute({
  id: 'predictions.detail',
  path: '/api/predictions/{market_id}',
  summary: 'One prediction in detail, model by model',
  description:
    'Every model\'s probability, reasoning and key factors in every mode (latest run), the consensus and ' +
    'disagreement per mode, the market probability, the consensus history across runs and the evidence the latest ' +
    'forecasts cite.',
  tags: ['predictions'],
  params: z.object({ market_id: marketIdParam }),
  response: PredictionDetail,
  errors: [400, 404],
  cache: true,
  input: (req) => pathMarketRef(req),
  data: async (snap, ref) => {
    snap.require('questions', 'consensus', 'latest_forecasts', 'evidence_used');
    const q = await findQuestion(snap, ref);
    const id = String(q.question_id);
    const [latest, history, forecasts, evidence] = await Promise.all([
      snap.query('prediction-latest-consensus', { question_id: id }),
      snap.query('prediction-history', { question_id: id, limit: HISTORY_MAX + 1 }),
      snap.query('prediction-forecasts', { question_id: id }),
      snap.query('prediction-evidence', { question_id: id }),
    ]);

    const modes = orderByKnown(latest, (r) => String(r.mode), MODES).map((r) => ({
      ...modeConsensus(r),
      models: modelsOf(forecasts.filter((f) => f.mode === r.mode && f.run_id === r.run_id)),
    }));
    const headlineRow = snap.headlineModes.map((m) => latest.find((r) => r.mode === m)).find((r) => r !== undefined);
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

    return {
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
      market: { probability: market, observed_at: str(q.latest_market_observed_at) },
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
    };
  },
});
