/**
 * `GET /api/analysis/information-value/` (api plan): what each information mode is worth, per model
 * and for the consensus: Brier(blind) − Brier(informed) and Brier(informed) − Brier(augmented),
 * paired by question over the questions scored in both modes, with 95% bootstrap intervals,
 * overall or for one category. Source: `information_value` (sql/derive/54_information_value.sql).
 */
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { queryCategory } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { count, published, zProb } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { analysisQuery, ci95, interval, numOrNull, queryRounds, type Rounds } from './analysis-params.ts';

const Comparison = z
  .object({
    n: count.meta({ description: 'Questions scored in both modes (the pairs).' }),
    brier_from: zProb.meta({ description: 'Mean Brier in the less informed mode, on the pairs.' }),
    brier_to: zProb.meta({ description: 'Mean Brier in the more informed mode, on the same pairs.' }),
    value: zProb.meta({ description: 'brier_from − brier_to: positive when the extra information lowered the Brier score.' }),
    value_ci95: ci95,
  })
  .nullable()
  .meta({ id: 'InformationComparison' });

export const InformationValueEntry = z
  .object({
    forecaster: z.string().meta({ description: 'A model id, or consensus_mean / consensus_median / consensus_logit_mean.' }),
    kind: z.enum(['model', 'consensus']).meta({ description: 'model: one AI model; consensus: an aggregate of the models.' }),
    blind_to_informed: Comparison.meta({ description: 'Brier(blind) − Brier(informed), paired by question (null: no pair).' }),
    informed_to_augmented: Comparison.meta({
      description: 'Brier(informed) − Brier(augmented), paired by question (null: no pair).',
    }),
  })
  .meta({ id: 'InformationValueEntry' });

export const InformationValue = z
  .object({
    rounds: z.enum(['latest', 'all']).meta({ description: "Which forecasts were scored: latest = each forecaster's latest forecast before the cutoff; all = every round's forecast (runs dated at the same time count once), averaged per question first." }),
    dimension: z.enum(['overall', 'category']).meta({ description: 'overall, or category when a category was asked for.' }),
    key: z.string().meta({ description: '`all` or the category.' }),
    total: count.meta({ description: 'Entries in `items`.' }),
    items: z.array(InformationValueEntry).meta({ description: 'One entry per forecaster.' }),
  })
  .meta({ id: 'InformationValue' });

function comparison(r: JsonRow | undefined) {
  if (!r) return null;
  return {
    n: Number(r.n),
    brier_from: numOrNull(r.brier_from),
    brier_to: numOrNull(r.brier_to),
    value: numOrNull(r.value),
    value_ci95: interval(r.value_ci95_lo, r.value_ci95_hi),
  };
}

interface Input {
  rounds: Rounds;
  category: string | null;
}

async function body(snap: PinnedSnapshot, input: Input): Promise<Record<string, unknown>> {
  snap.require('information_value');
  const dimension = input.category === null ? 'overall' : 'category';
  const key = input.category ?? 'all';
  const r = await snap.query('analysis-information-value', { rounds: input.rounds, dimension, key });
  const forecasters = [...new Set(r.map((x) => String(x.forecaster)))];
  const items = forecasters.map((f) => {
    const mine = r.filter((x) => x.forecaster === f);
    return {
      forecaster: f,
      kind: mine[0]!.kind,
      blind_to_informed: comparison(mine.find((x) => x.comparison === 'blind_to_informed')),
      informed_to_augmented: comparison(mine.find((x) => x.comparison === 'informed_to_augmented')),
    };
  });
  return published(InformationValue, { rounds: input.rounds, dimension, key, total: items.length, items });
}

export const analysisInformationValueRoute = jsonRoute({
  id: 'analysis.information_value',
  path: '/api/analysis/information-value/',
  summary: 'Value of each information mode, per model and for the consensus',
  description:
    'Brier(blind) − Brier(informed) and Brier(informed) − Brier(augmented), paired by question over the questions ' +
    'scored in both modes, with 95% bootstrap intervals (questions resampled), overall or for one category.',
  tags: ['scoring'],
  query: z.object({ rounds: analysisQuery.rounds, category: analysisQuery.category }),
  response: InformationValue,
  errors: [400],
  cache: true,
  input: (req): Input => {
    return { rounds: queryRounds(req), category: queryCategory(req) ?? null };
  },
  data: (snap, input) => body(snap, input),
});
