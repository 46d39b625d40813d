/**
 * `GET /api/rankings/` (api plan): which forecaster is best where — the leaderboard of every
 * category, domain and horizon cell per mode, with n and intervals. A cell with fewer than 20
 * questions says `insufficient` and publishes no ranking. Source: the `leaderboard` table
 * (sql/derive/52_leaderboard.sql; cells of dimension category, domain and horizon).
 */
import { z } from 'zod';
import { ApiError } from '../errors/problem.ts';
import { queryString } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { count, published, zProb } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import type { JsonRow } from '../db/convert.ts';
import { analysisQuery, ci95, interval, numOrNull, queryMode, queryRounds, type Rounds } from './analysis-params.ts';

/** Questions a cell needs before its ranking is published. */
export const MIN_CELL_QUESTIONS = 20;
const DIMENSIONS = ['category', 'domain', 'horizon'] as const;

const RankedForecaster = z
  .object({
    rank: count.meta({ description: 'Rank by difficulty-adjusted Brier in the cell (1 = best; ties share a rank).' }),
    forecaster: z.string().meta({ description: 'A model id, consensus_mean / consensus_median / consensus_logit_mean, or market.' }),
    kind: z.enum(['model', 'consensus', 'market']).meta({ description: 'model: one AI model; consensus: an aggregate of the models (mean, median or logit-mean); market: the venue price.' }),
    n: count.meta({ description: 'Questions of the cell scored for this forecaster.' }),
    brier: zProb.meta({ description: 'Mean Brier score in the cell.' }),
    brier_ci95: ci95,
    brier_adjusted: zProb.meta({ description: 'Difficulty-adjusted Brier (question fixed effects; see the leaderboard).' }),
    vs_best_diff: zProb.meta({ description: 'Mean paired Brier difference against the cell\'s best forecaster.' }),
    vs_best_ci95: ci95,
    tied_with_best: z.boolean().nullable().meta({ description: 'The paired interval against the best contains 0.' }),
  })
  .meta({ id: 'RankedForecaster' });

export const RankingCell = z
  .object({
    dimension: z.enum(DIMENSIONS).meta({ description: 'The dimension the cell belongs to.' }),
    key: z.string().meta({ description: 'The category, domain or horizon bucket (`unknown` when not recorded).' }),
    mode: z.string().meta({ description: 'Information mode: blind, informed or augmented.' }),
    n_questions: count.meta({ description: 'Questions of the cell in this mode (any forecaster).' }),
    status: z.enum(['ranked', 'insufficient']).meta({
      description: `\`insufficient\` when the cell has fewer than ${MIN_CELL_QUESTIONS} questions: no ranking is published.`,
    }),
    best: z.string().nullable().meta({ description: 'The best forecaster (lowest difficulty-adjusted Brier); null when insufficient.' }),
    ranking: z.array(RankedForecaster).nullable().meta({ description: 'Best first; null when insufficient.' }),
  })
  .meta({ id: 'RankingCell' });

export const Rankings = z
  .object({
    rounds: z.enum(['latest', 'all']).meta({ description: "Which forecasts were scored: latest = each forecaster's latest forecast before the cutoff; all = every round's forecast (runs dated at the same time count once), averaged per question first." }),
    mode: z.string().nullable().meta({ description: 'The mode asked for (null: every mode).' }),
    dimension: z.string().nullable().meta({ description: 'The dimension asked for (null: every dimension).' }),
    min_questions: count.meta({ description: 'Questions a cell needs to be ranked.' }),
    total: count.meta({ description: 'Cells in `items`.' }),
    items: z.array(RankingCell).meta({ description: 'One cell per (dimension, key, mode).' }),
  })
  .meta({ id: 'Rankings' });

function ranked(r: JsonRow) {
  return {
    rank: Number(r.rank),
    forecaster: String(r.forecaster),
    kind: r.kind,
    n: Number(r.n),
    brier: numOrNull(r.brier),
    brier_ci95: interval(r.brier_ci95_lo, r.brier_ci95_hi),
    brier_adjusted: numOrNull(r.brier_adjusted),
    vs_best_diff: numOrNull(r.vs_best_diff),
    vs_best_ci95: interval(r.vs_best_ci95_lo, r.vs_best_ci95_hi),
    tied_with_best: typeof r.tied_with_best === 'boolean' ? r.tied_with_best : null,
  };
}

interface Input {
  rounds: Rounds;
  mode: string | null;
  dimension: string | null;
}

async function body(snap: PinnedSnapshot, input: Input): Promise<Record<string, unknown>> {
  snap.require('leaderboard');
  const r = await snap.query('rankings', { rounds: input.rounds, mode: input.mode, dimension: input.dimension });
  const cells = new Map<string, JsonRow[]>();
  for (const x of r) {
    const k = `${x.dimension}\u0000${x.key}\u0000${x.mode}`;
    cells.set(k, [...(cells.get(k) ?? []), x]);
  }
  const items = [...cells.values()].map((rs) => {
    const first = rs[0]!;
    const n = Number(first.n_questions ?? 0);
    const ok = n >= MIN_CELL_QUESTIONS;
    return {
      dimension: first.dimension,
      key: first.key,
      mode: first.mode,
      n_questions: n,
      status: ok ? 'ranked' : 'insufficient',
      best: ok ? first.best : null,
      ranking: ok ? rs.map(ranked) : null,
    };
  });
  return published(Rankings, {
    rounds: input.rounds,
    mode: input.mode,
    dimension: input.dimension,
    min_questions: MIN_CELL_QUESTIONS,
    total: items.length,
    items,
  });
}

export const rankingsRoute = jsonRoute({
  id: 'rankings',
  path: '/api/rankings/',
  summary: 'Which forecaster is best where: rankings per category, domain and horizon',
  description:
    'The leaderboard of every category, domain and horizon cell per mode (rank by difficulty-adjusted Brier, Brier ' +
    'with its 95% bootstrap interval, paired difference against the cell\'s best and `tied_with_best`). Cells with ' +
    `fewer than ${MIN_CELL_QUESTIONS} questions say \`insufficient\` and publish no ranking.`,
  tags: ['scoring'],
  query: z.object({
    mode: analysisQuery.mode,
    rounds: analysisQuery.rounds,
    dimension: z.enum(DIMENSIONS).optional().meta({ description: 'Only cells of this dimension (default: all three).' }),
  }),
  response: Rankings,
  errors: [400],
  cache: true,
  input: (req): Input => {
    const raw = queryString(req, 'dimension', 32);
    const dimension = raw === undefined ? null : DIMENSIONS.find((d) => d === raw.toLowerCase());
    if (dimension === undefined) {
      throw ApiError.invalidParameter('dimension', `Query parameter 'dimension' must be one of: ${DIMENSIONS.join(', ')}.`, [
        ...DIMENSIONS,
      ]);
    }
    return { rounds: queryRounds(req), mode: queryMode(req) ?? null, dimension };
  },
  data: (snap, input) => body(snap, input),
});
