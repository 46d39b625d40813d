/**
 * The item of the language feeds (`GET /api/predictions/lang/{lang}`, `GET /api/events/lang/{lang}/`):
 * one active prediction (active_predictions) with its headline consensus, disagreement, market
 * probability and each model's forecast of the headline run in the requested language
 * (latest_forecasts).
 *
 * Item: question_id, venue, venue_market_id, title, url, category, domain, tags, close_time,
 * mode (headline), run_id, forecast_at (the consensus created_at), consensus {mean, median,
 * logit_mean}, n_models, disagreement {sd, range, sd_logit}, providers, market_probability,
 * market_observed_at, market_stale (older than QUORUM_MAX_PRICE_AGE_HOURS at as_of; null without a
 * price), models: [{ model, provider, probability, reasoning, key_factors, created_at }].
 *
 * Languages: those of the active predictions' headline runs in the snapshot (`feed-langs.sql`),
 * each code a run stored counted with the other codes of its language (storedLanguages). A
 * language tag that is well-formed but not among them is a 404 listing them.
 */
import { z } from 'zod';
import type { JsonRow, JsonValue } from '../db/convert.ts';
import { count, DOC, isoTime, marketStale, zNum, zProb } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { Disagreement, providerList } from './predictions-edges.ts';
import { stringList } from './predictions-lifecycle.ts';
import { matchLang, storedLanguages, type StoredLanguage } from './prediction-params.ts';

const str = (v: JsonValue | undefined): string | null => (typeof v === 'string' ? v : null);
const num = (v: JsonValue | undefined): number | null => (typeof v === 'number' ? v : null);

function modelItem(v: JsonValue): Record<string, unknown> {
  const m = (v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {}) as Record<string, JsonValue>;
  return {
    model: str(m.model) ?? '',
    provider: str(m.provider),
    probability: num(m.probability),
    reasoning: str(m.reasoning),
    key_factors: stringList(m.key_factors),
    created_at: str(m.created_at),
  };
}

export function feedItem(r: JsonRow): Record<string, unknown> {
  return {
    question_id: r.question_id,
    venue: str(r.venue),
    venue_market_id: str(r.venue_market_id),
    title: str(r.title),
    url: str(r.url),
    category: str(r.category),
    domain: str(r.domain),
    tags: stringList(r.tags),
    close_time: str(r.close_time),
    mode: str(r.mode),
    run_id: str(r.run_id),
    forecast_at: str(r.forecast_at),
    consensus: { mean: num(r.consensus), median: num(r.consensus_median), logit_mean: num(r.consensus_logit_mean) },
    n_models: num(r.n_models),
    disagreement: { sd: num(r.disagreement_sd), range: num(r.disagreement_range), sd_logit: num(r.disagreement_sd_logit) },
    providers: providerList(r.providers),
    market_probability: num(r.market_probability),
    market_observed_at: str(r.market_observed_at),
    market_stale: typeof r.market_stale === 'boolean' ? r.market_stale : null,
    models: Array.isArray(r.models) ? r.models.map(modelItem) : [],
  };
}

/**
 * The language `lang` names among the snapshot's (feed-langs.sql): the code it is answered under and
 * every code its runs stored it as (`codes`, which the feed queries match), or a 404 listing them.
 */
export async function resolveLang(snap: PinnedSnapshot, lang: string): Promise<StoredLanguage> {
  const rows = await snap.query('feed-langs');
  const available = rows.map((r) => r.lang).filter((l): l is string => typeof l === 'string');
  return matchLang(lang, available);
}

export const ReasoningLanguage = z
  .object({
    lang: z.string().meta({ description: 'The language as the feeds answer it (`GET /api/predictions/lang/{lang}`): the first of `codes`.' }),
    codes: z.array(z.string()).meta({ description: 'Every code the runs stored it under, sorted (another case or another code of the language: `he` and `iw`).' }),
    predictions: count.meta({ description: 'Active predictions with reasoning in the language (its feed\'s `total`).' }),
    main_predictions: count.meta({ description: 'Those of them answered in it first (the run\'s main language, the first of QUORUM_LANGS); the others carry a translation.' }),
  })
  .meta({ id: 'ReasoningLanguage', description: 'A reasoning language of the snapshot\'s active predictions.' });

/**
 * The reasoning languages of the snapshot's active predictions (feed-languages.sql), each once with
 * every code it is stored under (storedLanguages), the main one first: the language most of them
 * were answered in first, then the one most have reasoning in, then by code. A client needs no
 * guess (QA: the dashboard asked for `en` on a service run with QUORUM_LANGS=pt-BR,zh-Hant: a 404).
 */
export async function reasoningLanguages(snap: PinnedSnapshot): Promise<z.infer<typeof ReasoningLanguage>[]> {
  const rows = await snap.query('feed-languages');
  const byCode = new Map(rows.filter((r) => typeof r.lang === 'string').map((r) => [r.lang as string, r]));
  const sum = (codes: string[], column: string) => codes.reduce((a, c) => a + (num(byCode.get(c)?.[column]) ?? 0), 0);
  return storedLanguages([...byCode.keys()])
    .map((l) => ({ lang: l.lang, codes: l.codes, predictions: sum(l.codes, 'predictions'), main_predictions: sum(l.codes, 'main_predictions') }))
    .sort((a, b) => b.main_predictions - a.main_predictions || b.predictions - a.predictions || (a.lang < b.lang ? -1 : a.lang > b.lang ? 1 : 0));
}

export const ConsensusStats = z
  .object({
    mean: zProb.meta({ description: 'Mean of the model probabilities (the headline statistic).' }),
    median: zProb.meta({ description: 'Median of the model probabilities.' }),
    logit_mean: zProb.meta({ description: 'Inverse logit of the mean log-odds (p clipped to [0.001, 0.999]).' }),
  })
  .meta({ id: 'ConsensusStats', description: 'The consensus of the models\' probabilities of YES, as three statistics.' });

export const ModelForecast = z
  .object({
    model: z.string().meta({ description: 'The model id (as configured).' }),
    provider: z.string().nullable().meta({ description: '`simulated` for the bundled model simulator.' }),
    probability: zProb.meta({ description: 'The model\'s probability of YES.' }),
    reasoning: z.string().nullable().meta({ description: 'The model\'s reasoning (a few sentences), in the requested language.' }),
    key_factors: z.array(z.string()).meta({ description: 'The key factors the model named (2 to 5 short phrases), in the requested language.' }),
    created_at: isoTime.nullable().meta({ description: 'When the model\'s forecast was made.' }),
  })
  .meta({ id: 'ModelForecast', description: 'One model\'s forecast of the run, in the requested language.' });

export const FeedPrediction = z
  .object({
    question_id: z.string().meta({ description: DOC.question_id }),
    venue: z.string().nullable().meta({ description: DOC.venue }),
    venue_market_id: z.string().nullable().meta({ description: DOC.venue_market_id }),
    title: z.string().nullable().meta({ description: DOC.title }),
    url: z.string().nullable().meta({ description: DOC.url }),
    category: z.string().nullable().meta({ description: DOC.category }),
    domain: z.string().nullable().meta({ description: DOC.domain }),
    tags: z.array(z.string()).meta({ description: DOC.tags }),
    close_time: isoTime.nullable().meta({ description: DOC.close_time }),
    mode: z.string().nullable().meta({ description: DOC.headline_mode }),
    run_id: z.string().nullable().meta({ description: DOC.run_id }),
    forecast_at: isoTime.nullable().meta({ description: 'When the consensus was made (its latest forecast).' }),
    consensus: ConsensusStats,
    n_models: zNum.meta({ description: DOC.n_models }),
    disagreement: Disagreement,
    providers: z.array(z.string()).meta({ description: DOC.providers }),
    market_probability: zProb.meta({ description: 'Latest market probability at or before as_of (null: no price).' }),
    market_observed_at: isoTime.nullable().meta({ description: DOC.market_observed_at }),
    market_stale: marketStale,
    models: z.array(ModelForecast).meta({
      description: 'Each model\'s forecast in the consensus\'s run and mode that has reasoning in the requested language, by model id.',
    }),
  })
  .meta({ id: 'FeedPrediction', description: 'An active prediction with the models\' reasoning in one language.' });
