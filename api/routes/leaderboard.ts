/**
 * `GET /api/leaderboard/` (api plan): every forecaster — each model, the consensus as mean, median
 * and logit-mean, and the market — per information mode, with Brier and its 95% bootstrap
 * interval, the difficulty-adjusted Brier, log loss, accuracy, ECE, and paired differences against
 * the market and against the best forecaster (with intervals and `tied_with_best`).
 * Source: the `leaderboard` table of the snapshot (sql/derive/52_leaderboard.sql; definitions in
 * sql/README.md). Query: mode, rounds, since, and at most one of category, domain, horizon. With
 * `since`, the cell is computed at request time over the questions resolved at or after it, from the
 * snapshot's `leaderboard_observations` (sql/api/leaderboard-since.sql, the same definitions).
 * Body: { rounds, dimension, key, mode, since, total, items: [LeaderboardEntry], as_of }.
 */
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { queryTimestamp } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { count, isoTime, isoTimeParam, published, zPct, zProb } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import {
  analysisQuery,
  ci95,
  interval,
  numOrNull,
  queryCell,
  queryMode,
  queryRounds,
  type Cell,
  type Rounds,
} from './analysis-params.ts';

export const LeaderboardEntry = z
  .object({
    mode: z.string().meta({ description: 'Information mode: blind, informed or augmented.' }),
    rank: count.meta({ description: 'Rank by difficulty-adjusted Brier within the mode (1 = best; ties share a rank).' }),
    forecaster: z.string().meta({
      description: 'A model id, `consensus_mean`, `consensus_median`, `consensus_logit_mean` or `market`.',
    }),
    kind: z.enum(['model', 'consensus', 'market']).meta({ description: 'model: one AI model; consensus: an aggregate of the models (mean, median or logit-mean); market: the venue price.' }),
    is_best: z.boolean().meta({ description: 'This forecaster has the lowest difficulty-adjusted Brier of the mode.' }),
    n: count.meta({ description: 'Questions scored for this forecaster.' }),
    brier: zProb.meta({ description: 'Mean Brier score (p − o)² over the questions (rounds=all: of the per-question means).' }),
    brier_ci95: ci95,
    brier_adjusted: zProb.meta({
      description:
        'Difficulty-adjusted Brier (question fixed effects, as ForecastBench): the mean over the forecaster\'s ' +
        'questions of (Brier − the question\'s mean Brier over every forecaster of this leaderboard) plus the mean ' +
        'Brier of all (forecaster, question) pairs of the cell. One-step estimate, not the iterated two-way fit.',
    }),
    log_loss: zProb.meta({ description: 'Mean log loss, p clipped to [0.001, 0.999].' }),
    n_directional: count.meta({ description: 'Questions with a direction (p rounded to 9 decimals ≠ 0.5).' }),
    accuracy_pct: zPct.meta({
      description: '100 × correct / directional (rounds=all: mean of each question\'s share of correct rounds).',
    }),
    ece: zProb.meta({
      description:
        'Expected calibration error Σ_k (n_k/N)·|ō_k − p̄_k| over 10 equal-width bins (rounds=all: of each question\'s ' +
        'mean probability over its rounds, so questions weigh equally).',
    }),
    ece_noise_floor: zProb.meta({
      description:
        'The ECE a perfectly calibrated forecaster making the same forecasts would show from sampling noise alone: ' +
        'Σ_k sqrt(2/π · Σ p(1 − p)) / N over the same bins (normal approximation). An ece near it is indistinguishable ' +
        'from noise; the overall interval of the ECE is in the calibration summary (service stats).',
    }),
    vs_market: z
      .object({
        n: count.meta({ description: 'Questions scored for both this forecaster and the market.' }),
        diff: zProb.meta({ description: 'Mean of (Brier − market Brier) over those questions (negative: better than the market).' }),
        ci95,
      })
      .meta({ description: 'Paired difference against the market (fresh comparator, same questions).' }),
    vs_best: z
      .object({
        forecaster: z.string().meta({ description: 'The best forecaster of the mode (lowest difficulty-adjusted Brier).' }),
        n: count.meta({ description: 'Questions scored for both.' }),
        diff: zProb.meta({ description: 'Mean of (Brier − best\'s Brier) over those questions.' }),
        ci95,
        tied_with_best: z.boolean().nullable().meta({
          description: 'The 95% interval of the paired difference against the best, as published (6 decimals), contains 0 (null: no interval).',
        }),
      })
      .meta({ description: 'Paired difference against the best forecaster.' }),
    n_questions: count.meta({ description: 'Questions of the cell (any forecaster) in this mode.' }),
    sufficient: z.boolean().meta({ description: 'The cell has at least 20 questions.' }),
  })
  .meta({ id: 'LeaderboardEntry' });

export const Leaderboard = z
  .object({
    rounds: z.enum(['latest', 'all']).meta({ description: "Which forecasts were scored: latest = each forecaster's latest forecast before the cutoff; all = every round's forecast (runs dated at the same time count once), averaged per question first." }),
    dimension: z.enum(['overall', 'category', 'domain', 'horizon']).meta({ description: 'The cell\'s dimension.' }),
    key: z.string().meta({ description: 'The cell\'s key (`all` for overall).' }),
    mode: z.string().nullable().meta({ description: 'The mode asked for (null: every mode).' }),
    since: z.string().nullable().meta({
      description: 'Only questions resolved at or after this time: the time asked, in UTC to the microsecond (`since=2026-07-27` is 2026-07-27T00:00:00.000000Z, the precision the filter compares at); null: every resolved question.',
    }),
    total: count.meta({ description: 'Entries in `items`.' }),
    items: z.array(LeaderboardEntry).meta({ description: 'One entry per forecaster and mode of the cell, best first within a mode.' }),
  })
  .meta({ id: 'Leaderboard' });

/** One leaderboard table row → its published entry. */
export function leaderboardEntry(r: JsonRow): z.input<typeof LeaderboardEntry> {
  return {
    mode: String(r.mode),
    rank: Number(r.rank),
    forecaster: String(r.forecaster),
    kind: r.kind as 'model' | 'consensus' | 'market',
    is_best: r.is_best === true,
    n: Number(r.n),
    brier: numOrNull(r.brier),
    brier_ci95: interval(r.brier_ci95_lo, r.brier_ci95_hi),
    brier_adjusted: numOrNull(r.brier_adjusted),
    log_loss: numOrNull(r.log_loss),
    n_directional: Number(r.n_directional ?? 0),
    accuracy_pct: numOrNull(r.accuracy_pct),
    ece: numOrNull(r.ece),
    ece_noise_floor: numOrNull(r.ece_noise_floor),
    vs_market: {
      n: Number(r.vs_market_n ?? 0),
      diff: numOrNull(r.vs_market_diff),
      ci95: interval(r.vs_market_ci95_lo, r.vs_market_ci95_hi),
    },
    vs_best: {
      forecaster: String(r.best),
      n: Number(r.vs_best_n ?? 0),
      diff: numOrNull(r.vs_best_diff),
      ci95: interval(r.vs_best_ci95_lo, r.vs_best_ci95_hi),
      tied_with_best: typeof r.tied_with_best === 'boolean' ? r.tied_with_best : null,
    },
    n_questions: Number(r.n_questions ?? 0),
    sufficient: r.sufficient === true,
  };
}

interface LeaderboardInput {
  mode: string | null;
  rounds: Rounds;
  cell: Cell;
  /** `since` as given (ISO) and in epoch µs (a string: inputs are cache keys), or null. */
  since: { iso: string; us: string } | null;
}

async function leaderboardBody(snap: PinnedSnapshot, input: LeaderboardInput): Promise<Record<string, unknown>> {
  const params = { rounds: input.rounds, dimension: input.cell.dimension, key: input.cell.key, mode: input.mode };
  let r;
  if (input.since === null) {
    snap.require('leaderboard');
    r = await snap.query('leaderboard', params);
  } else {
    snap.require('leaderboard_observations');
    snap.require('bootstrap_weights');
    r = await snap.query('leaderboard-since', { ...params, since_us: BigInt(input.since.us) });
  }
  const items = r.map(leaderboardEntry);
  return published(Leaderboard, {
    rounds: input.rounds,
    dimension: input.cell.dimension,
    key: input.cell.key,
    mode: input.mode,
    since: input.since?.iso ?? null,
    total: items.length,
    items,
  });
}

export const leaderboardRoute = jsonRoute({
  id: 'leaderboard',
  path: '/api/leaderboard/',
  summary: 'Leaderboard of every forecaster per information mode, with intervals',
  description:
    'Each model, the consensus (mean, median, logit-mean) and the market, per mode: n, Brier with its 95% ' +
    'bootstrap interval (questions resampled, 1,000 replicates, fixed seed), difficulty-adjusted Brier (question ' +
    'fixed effects), log loss, accuracy, ECE, and the paired Brier difference against the market and against the ' +
    'best forecaster with intervals; `tied_with_best` when the latter contains 0. Filters: mode, rounds, since ' +
    '(questions resolved at or after it: the whole leaderboard, rank, best and intervals, recomputed over them), and ' +
    'one of category, domain, horizon.',
  tags: ['scoring'],
  query: z.object({
    ...analysisQuery,
    since: isoTimeParam.optional().meta({
      description: 'Only questions resolved at or after this ISO 8601 date or date-time (UTC); the figures are recomputed over them.',
    }),
  }),
  response: Leaderboard,
  errors: [400],
  cache: true,
  input: (req): LeaderboardInput => {
    const since = queryTimestamp(req, 'since');
    return {
      mode: queryMode(req) ?? null,
      rounds: queryRounds(req),
      cell: queryCell(req),
      since: since ? { iso: since.iso, us: since.epochUs.toString() } : null,
    };
  },
  data: (snap, input) => leaderboardBody(snap, input),
});
