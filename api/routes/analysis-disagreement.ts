/**
 * `GET /api/analysis/disagreement/` (api plan): does the models' disagreement predict the
 * consensus's error? Per scope (headline, blind, informed, augmented): the Spearman correlation
 * between the disagreement (sd of the model probabilities) and the consensus's absolute error with
 * its 95% bootstrap interval, the verdict derived from that interval, the AUROC of the disagreement
 * for "the consensus points the wrong way", and the consensus Brier by disagreement quintile.
 * Sources: `disagreement`, `disagreement_quintiles` (sql/derive/53_disagreement.sql).
 */
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { roundTo } from '../http/precision.ts';
import { jsonRoute } from '../http/registry.ts';
import { count, published, zPct, zProb } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { analysisQuery, ci95, interval, numOrNull, queryRounds, type Rounds } from './analysis-params.ts';
import { MODES } from '../../pipeline/warehouse/tables.ts';
import { queryString } from '../http/params.ts';
import { ApiError } from '../errors/problem.ts';

const SCOPES = ['headline', ...MODES] as const;

const Quintile = z
  .object({
    quintile: z.number().int().min(1).max(5).meta({ description: '1 = least disagreement … 5 = most.' }),
    n: count.meta({ description: 'Questions in this quintile.' }),
    sd_min: zProb.meta({ description: 'Smallest disagreement (sd) of the quintile.' }),
    sd_max: zProb.meta({ description: 'Largest disagreement (sd) of the quintile.' }),
    mean_abs_error: zProb.meta({ description: 'Mean |consensus − outcome|.' }),
    brier: zProb.meta({ description: 'Mean consensus Brier of the quintile.' }),
    brier_ci95: ci95,
    accuracy_pct: zPct.meta({ description: '100 × correct / directional consensus directions.' }),
  })
  .meta({ id: 'DisagreementQuintile' });

export const DisagreementSignal = z
  .object({
    mode: z.enum(SCOPES).meta({ description: '`headline` (each question\'s headline consensus) or a mode.' }),
    n: count.meta({ description: 'Questions: scored consensus with at least two models.' }),
    spearman: zProb.meta({
      description: 'Spearman rank correlation between disagreement (sd) and the consensus\'s absolute error (average ranks for ties).',
    }),
    spearman_ci95: ci95,
    predicts_error: z.enum(['true', 'false', 'inconclusive']).nullable().meta({
      description:
        'Derived from spearman_ci95, never set by hand: `true` when its lower bound is above 0 (more disagreement, more ' +
        'error), `false` when its upper bound is below 0 (more disagreement, less error), `inconclusive` when it contains 0 ' +
        '(the bounds as published, to 6 decimals: an interval that reads [0, …] contains 0).',
    }),
    verdict: z.string().meta({ description: 'The verdict in one line, with the figures it rests on.' }),
    auroc_wrong_direction: zProb.meta({
      description:
        'Probability that a question where the consensus points the wrong way has more disagreement than one where it ' +
        'points the right way (ties count one half); 0.5 = no signal. rounds=latest only.',
    }),
    n_directional: count.nullable().meta({
      description: 'Questions with a direction (used by the AUROC). rounds=latest only: null for rounds=all, where a question has a direction per round.',
    }),
    n_wrong: count.nullable().meta({
      description: 'Of those, questions where the consensus pointed the wrong way. rounds=latest only (null for rounds=all).',
    }),
    quintiles: z.array(Quintile).meta({ description: 'The questions cut into five equal groups by disagreement (sd), least first.' }),
  })
  .meta({ id: 'DisagreementSignal' });

export const DisagreementAnalysis = z
  .object({
    rounds: z.enum(['latest', 'all']).meta({ description: "Which forecasts were scored: latest = each forecaster's latest forecast before the cutoff; all = every round's forecast (runs dated at the same time count once), averaged per question first." }),
    mode: z.string().nullable().meta({ description: 'The scope asked for (null: every scope).' }),
    total: count.meta({ description: 'Entries in `items`.' }),
    items: z.array(DisagreementSignal).meta({ description: 'One entry per scope: headline, then blind, informed, augmented.' }),
  })
  .meta({ id: 'DisagreementAnalysis' });

/** The one-line verdict of a row. */
export function verdictLine(r: JsonRow): string {
  const rho = numOrNull(r.spearman);
  const ci = interval(r.spearman_ci95_lo, r.spearman_ci95_hi);
  if (rho === null || ci === null) return `Not enough questions to tell (n = ${Number(r.n)}).`;
  // 3 decimals, rounded half away from zero on the decimal value as every published figure is
  // (toFixed rounds the binary value: 0.6455 printed 0.645)
  const f = (v: number) => roundTo(v, 3).toFixed(3);
  const figures = `Spearman ${f(rho)}, 95% interval [${f(ci[0])}, ${f(ci[1])}], n = ${Number(r.n)}`;
  switch (r.predicts_error) {
    case 'true':
      return `Disagreement predicts error: more disagreement, larger errors (${figures}).`;
    case 'false':
      return `Disagreement predicts smaller errors, not larger ones (${figures}).`;
    default:
      return `Inconclusive: the interval contains 0 (${figures}).`;
  }
}

interface Input {
  rounds: Rounds;
  mode: string | null;
}

async function body(snap: PinnedSnapshot, input: Input): Promise<Record<string, unknown>> {
  snap.require('disagreement', 'disagreement_quintiles');
  const params = { rounds: input.rounds, mode: input.mode };
  const [main, quint] = await Promise.all([
    snap.query('analysis-disagreement', params),
    snap.query('analysis-disagreement-quintiles', params),
  ]);
  const items = main.map((r) => ({
    mode: r.mode,
    n: Number(r.n),
    spearman: numOrNull(r.spearman),
    spearman_ci95: interval(r.spearman_ci95_lo, r.spearman_ci95_hi),
    predicts_error: r.predicts_error ?? null,
    verdict: verdictLine(r),
    auroc_wrong_direction: numOrNull(r.auroc_wrong_direction),
    n_directional: numOrNull(r.n_directional),
    n_wrong: numOrNull(r.n_wrong),
    quintiles: quint
      .filter((q) => q.mode === r.mode)
      .map((q) => ({
        quintile: Number(q.quintile),
        n: Number(q.n),
        sd_min: numOrNull(q.sd_min),
        sd_max: numOrNull(q.sd_max),
        mean_abs_error: numOrNull(q.mean_abs_error),
        brier: numOrNull(q.brier),
        brier_ci95: interval(q.brier_ci95_lo, q.brier_ci95_hi),
        accuracy_pct: numOrNull(q.accuracy_pct),
      })),
  }));
  return published(DisagreementAnalysis, { rounds: input.rounds, mode: input.mode, total: items.length, items });
}

export const analysisDisagreementRoute = jsonRoute({
  id: 'analysis.disagreement',
  path: '/api/analysis/disagreement/',
  summary: 'Whether the models\' disagreement predicts the consensus\'s error',
  description:
    'Spearman correlation between disagreement (sd) and the consensus\'s absolute error with a 95% bootstrap ' +
    'interval and the verdict derived from it (`predicts_error`), the AUROC of disagreement for a wrong direction, ' +
    'and the consensus Brier by disagreement quintile with intervals; per scope (headline and each mode).',
  tags: ['scoring'],
  query: z.object({
    mode: z.enum(SCOPES).optional().meta({ description: '`headline` or a mode (default: every scope).' }),
    rounds: analysisQuery.rounds,
  }),
  response: DisagreementAnalysis,
  errors: [400],
  cache: true,
  input: (req): Input => {
    const raw = queryString(req, 'mode', 64);
    const mode = raw === undefined ? null : SCOPES.find((s) => s === raw.toLowerCase());
    if (mode === undefined) {
      throw ApiError.invalidParameter('mode', `Query parameter 'mode' must be one of: ${SCOPES.join(', ')}.`, [...SCOPES]);
    }
    return { rounds: queryRounds(req), mode };
  },
  data: (snap, input) => body(snap, input),
});
