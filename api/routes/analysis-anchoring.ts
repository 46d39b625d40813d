/**
 * `GET /api/analysis/anchoring/` (api plan): per model (and the consensus mean) and mode, how much
 * the forecast moves toward the market once the market is shown: the slope of (p_mode − p_blind) on
 * (market − p_blind) with its 95% bootstrap interval (1 = copies the market, 0 = ignores it), the
 * correlation with the market and the mean |p − market|. Source: `anchoring`
 * (sql/derive/55_anchoring.sql). rounds=all: each round pairs a run's forecast with the same run's
 * blind forecast and the market at that time, averaged per question first.
 */
import { z } from 'zod';
import { MODES } from '../../pipeline/warehouse/tables.ts';
import { jsonRoute } from '../http/registry.ts';
import { count, published, zProb } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { analysisQuery, ci95, interval, numOrNull, queryMode, queryRounds, ROUNDS, type Rounds } from './analysis-params.ts';

export const AnchoringEntry = z
  .object({
    forecaster: z.string().meta({ description: 'A model id, or consensus_mean.' }),
    kind: z.enum(['model', 'consensus']).meta({ description: 'model: one AI model; consensus: an aggregate of the models.' }),
    mode: z.enum(MODES).meta({
      description:
        'The mode of the forecasts: informed or augmented (the modes that show the market: with the slope against blind), ' +
        'or blind (the correlation and distance to the market only: n_slope 0, slope null).',
    }),
    n_market: count.meta({
      description: 'Questions whose scored forecast (rounds=all: at least one round) has a fresh market comparator at its time.',
    }),
    corr_market: zProb.meta({
      description: 'Pearson correlation between the forecast and the market probability (rounds=all: of each question\'s mean over its rounds).',
    }),
    mean_abs_diff_market: zProb.meta({ description: 'Mean |p − market| (rounds=all: of each question\'s mean over its rounds).' }),
    n_slope: count.meta({ description: 'Questions with this mode\'s forecast, the blind forecast and a market comparator.' }),
    slope: zProb.meta({
      description:
        'Least-squares slope through the origin of (p_mode − p_blind) on (market − p_blind): 1 = copies the market, ' +
        '0 = ignores it (stays at its blind answer), negative = moves away. Null for blind. rounds=all: Σ_q mean_r(x·y) / ' +
        'Σ_q mean_r(x²), each round paired with the same run\'s blind forecast and market, so questions weigh equally.',
    }),
    slope_ci95: ci95,
  })
  .meta({ id: 'AnchoringEntry' });

export const Anchoring = z
  .object({
    rounds: z.enum(ROUNDS).meta({ description: 'latest: the latest forecast before the cutoff; all: every round\'s (runs dated at the same time count once), averaged per question.' }),
    mode: z.string().nullable().meta({ description: 'The mode asked for (null: every mode).' }),
    total: count.meta({ description: 'Entries in `items`.' }),
    items: z.array(AnchoringEntry).meta({ description: 'One entry per forecaster and mode.' }),
  })
  .meta({ id: 'Anchoring' });

async function body(snap: PinnedSnapshot, mode: string | null, rounds: Rounds): Promise<Record<string, unknown>> {
  snap.require('anchoring');
  const r = await snap.query('analysis-anchoring', { mode, rounds });
  const items = r.map((x) => ({
    forecaster: x.forecaster,
    kind: x.kind,
    mode: x.mode,
    n_market: Number(x.n_market),
    corr_market: numOrNull(x.corr_market),
    mean_abs_diff_market: numOrNull(x.mean_abs_diff_market),
    n_slope: Number(x.n_slope),
    slope: numOrNull(x.slope),
    slope_ci95: interval(x.slope_ci95_lo, x.slope_ci95_hi),
  }));
  return published(Anchoring, { rounds, mode, total: items.length, items });
}

export const analysisAnchoringRoute = jsonRoute({
  id: 'analysis.anchoring',
  path: '/api/analysis/anchoring/',
  summary: 'How far each model moves toward the market once it is shown',
  description:
    'Per model and mode: the slope of (p_mode − p_blind) on (market − p_blind) with a 95% bootstrap interval ' +
    '(1 = copies the market, 0 = ignores it), the correlation with the market and the mean |p − market|. ' +
    '`rounds=all`: every run\'s forecast, each paired with the same run\'s blind forecast and market, averaged per question.',
  tags: ['scoring'],
  query: z.object({ mode: analysisQuery.mode, rounds: analysisQuery.rounds }),
  response: Anchoring,
  errors: [400],
  cache: true,
  input: (req) => {
    return { mode: queryMode(req) ?? null, rounds: queryRounds(req) };
  },
  data: (snap, { mode, rounds }) => body(snap, mode, rounds),
});
