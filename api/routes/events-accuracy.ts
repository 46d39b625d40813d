/**
 * `GET /api/events/accuracy/`: the resolved-event calibration summary, one entry per
 * (forecaster, mode) — each model, the consensus and the market, in each mode and the headline.
 * Read from calibration_summary, calibration and accuracy (scope 'all').
 *
 * Body:
 * { forecasters: [ { forecaster, kind: 'consensus'|'model'|'market', mode, n, brier, log_loss,
 *     accuracy_pct, n_directional, n_correct, n_no_direction, ece, reliability, resolution,
 *     uncertainty, base_rate,
 *     by_tier: [{ tier, key, n, brier, log_loss, accuracy_pct, n_directional, n_correct, n_no_direction }],
 *     by_domain: [{ domain, key, ... }],
 *     bins: [{ bin, bin_lo, bin_hi, n, mean_p, observed, wilson_lo, wilson_hi }] } ],
 *   count, total (= count: one page), next_cursor: null, headline_modes, providers, simulated
 *   (where the scored forecasts came from), as_of }
 * Order: consensus, then models by id, then market; within each, modes headline, blind,
 * informed, augmented.
 */
import { z } from 'zod';
import { DOMAINS, MODES, TIERS } from '../../pipeline/warehouse/tables.ts';
import type { JsonRow, JsonValue } from '../db/convert.ts';
import { jsonRoute } from '../http/registry.ts';
import { bucketMetrics, calibrationMetrics, count, scoreMetrics, headlineModes, provenance, provenanceOf, published, zNum, zProb } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { RecalibrationCheck, recalibrationChecks } from '../probability/calibration.ts';
import { orderByKnown } from './order.ts';

const MODE_ORDER = ['headline', ...MODES] as const;
const KIND_ORDER = { consensus: 0, model: 1, market: 2 } as const;
type Kind = keyof typeof KIND_ORDER;

function num(v: JsonValue | undefined): number | null {
  return typeof v === 'number' ? v : null;
}

function kindOf(forecaster: string): Kind {
  return forecaster === 'consensus' ? 'consensus' : forecaster === 'market' ? 'market' : 'model';
}

function bucket(name: string, r: JsonRow): Record<string, unknown> {
  return {
    [name]: r.key,
    key: r.key,
    n: num(r.n) ?? 0,
    brier: num(r.brier),
    log_loss: num(r.log_loss),
    accuracy_pct: num(r.accuracy_pct),
    n_directional: num(r.n_directional) ?? 0,
    n_correct: num(r.n_correct) ?? 0,
    n_no_direction: num(r.n_no_direction) ?? 0,
  };
}

export async function calibrationReport(snap: PinnedSnapshot): Promise<Record<string, unknown>> {
  snap.require('calibration', 'calibration_summary', 'accuracy', 'scored_forecasts');
  const [summary, bins, acc, providers] = await Promise.all([
    snap.query('calibration-summary'),
    snap.query('calibration-bins'),
    snap.query('accuracy-by-forecaster', { scope: 'all' }),
    snap.query('providers-scored', { category: null }),
  ]);
  // The probability endpoint's recalibration, out of sample, beside the raw consensus (issue 14);
  // snapshots from before sql/derive/95 have none.
  const recalibration = snap.tables.has('calibration_models') ? recalibrationChecks(await snap.query('calibration-models')) : [];

  const id = (r: JsonRow) => `${String(r.forecaster)}\u0000${String(r.mode)}`;
  const keys = new Map<string, { forecaster: string; mode: string }>();
  for (const r of [...summary, ...acc.filter((a) => a.dimension === 'overall')]) {
    if (!keys.has(id(r))) keys.set(id(r), { forecaster: String(r.forecaster), mode: String(r.mode) });
  }
  const group = (rows: JsonRow[]) => {
    const m = new Map<string, JsonRow[]>();
    for (const r of rows) {
      const k = id(r);
      const list = m.get(k);
      if (list) list.push(r);
      else m.set(k, [r]);
    }
    return m;
  };
  const summaryBy = group(summary);
  const binsBy = group(bins);
  const accBy = group(acc);

  const modeRank = (m: string) => {
    const i = (MODE_ORDER as readonly string[]).indexOf(m);
    return i < 0 ? MODE_ORDER.length : i;
  };
  const ordered = [...keys.entries()].sort(([, a], [, b]) => {
    const ka = KIND_ORDER[kindOf(a.forecaster)];
    const kb = KIND_ORDER[kindOf(b.forecaster)];
    if (ka !== kb) return ka - kb;
    if (a.forecaster !== b.forecaster) return a.forecaster < b.forecaster ? -1 : 1;
    const ma = modeRank(a.mode);
    const mb = modeRank(b.mode);
    if (ma !== mb) return ma - mb;
    return a.mode < b.mode ? -1 : a.mode > b.mode ? 1 : 0;
  });

  const forecasters = ordered.map(([k, { forecaster, mode }]) => {
    const s = summaryBy.get(k)?.[0];
    const rows = accBy.get(k) ?? [];
    const overall = rows.find((r) => r.dimension === 'overall');
    return {
      forecaster,
      kind: kindOf(forecaster),
      mode,
      n: num(s?.n) ?? num(overall?.n) ?? 0,
      brier: num(s?.brier) ?? num(overall?.brier),
      log_loss: num(s?.log_loss) ?? num(overall?.log_loss),
      accuracy_pct: num(s?.accuracy_pct) ?? num(overall?.accuracy_pct),
      n_directional: num(overall?.n_directional) ?? 0,
      n_correct: num(overall?.n_correct) ?? 0,
      n_no_direction: num(overall?.n_no_direction) ?? 0,
      ece: num(s?.ece),
      reliability: num(s?.reliability),
      resolution: num(s?.resolution),
      uncertainty: num(s?.uncertainty),
      base_rate: num(s?.base_rate),
      by_tier: orderByKnown(
        rows.filter((r) => r.dimension === 'tier'),
        (r) => String(r.key),
        TIERS,
      ).map((r) => bucket('tier', r)),
      by_domain: orderByKnown(
        rows.filter((r) => r.dimension === 'domain'),
        (r) => String(r.key),
        DOMAINS,
      ).map((r) => bucket('domain', r)),
      bins: (binsBy.get(k) ?? []).map((b) => ({
        bin: num(b.bin),
        bin_lo: num(b.bin_lo),
        bin_hi: num(b.bin_hi),
        n: num(b.n) ?? 0,
        mean_p: num(b.mean_p),
        observed: num(b.observed),
        wilson_lo: num(b.wilson_lo),
        wilson_hi: num(b.wilson_hi),
      })),
    };
  });

  return published(CalibrationReport, {
    forecasters,
    count: forecasters.length,
    total: forecasters.length,
    next_cursor: null,
    headline_modes: snap.headlineModes,
    recalibration,
    ...provenanceOf(providers),
  });
}

const Bin = z.object({
  bin: zNum.meta({ description: 'Bin index 0..9: floor(p · 10), p · 10 rounded to 9 decimals first; p = 1 falls in bin 9.' }),
  bin_lo: zProb.meta({ description: 'Lower bound of the bin (bin / 10).' }),
  bin_hi: zProb.meta({ description: 'Upper bound of the bin ((bin + 1) / 10).' }),
  n: count.meta({ description: 'Scored forecasts in the bin (0: an empty bin, its figures null).' }),
  mean_p: zProb.meta({ description: 'Mean forecast probability of the bin (null when empty).' }),
  observed: zProb.meta({ description: 'Observed frequency of YES among the bin\'s forecasts (null when empty).' }),
  wilson_lo: zProb.meta({ description: 'Lower bound of the Wilson 95% interval (z = 1.96) of `observed` (null when empty).' }),
  wilson_hi: zProb.meta({ description: 'Upper bound of the Wilson 95% interval (z = 1.96) of `observed` (null when empty).' }),
});

export const CalibrationReport = z
  .object({
    forecasters: z.array(
      z.object({
        forecaster: z.string().meta({ description: '`consensus`, `market` or a model id.' }),
        kind: z.enum(['consensus', 'model', 'market']).meta({
          description: 'consensus: the models\' consensus (mean); model: one AI model; market: the market comparator.',
        }),
        mode: z.string().meta({
          description:
            'blind, informed, augmented, or headline (each question\'s headline mode). For the market: its comparators ' +
            'paired with the consensus of that mode (same questions).',
        }),
        n: count.meta({ description: 'Scored forecasts (one per resolved, non-annulled question).' }),
        ...scoreMetrics,
        ...calibrationMetrics,
        base_rate: zProb.meta({ description: 'ō: the share of the n forecasts whose question resolved YES.' }),
        by_tier: z.array(z.object({
          tier: z.string().meta({ description: 'Confidence tier by |p − 0.5| of the forecaster\'s own p: low < 0.15, medium 0.15–0.35, high ≥ 0.35.' }),
          ...bucketMetrics,
        })).meta({ description: 'The same figures per confidence tier.' }),
        by_domain: z.array(z.object({
          domain: z.string().meta({ description: 'The question\'s domain (`unknown`: none recorded).' }),
          ...bucketMetrics,
        })).meta({ description: 'The same figures per domain.' }),
        bins: z.array(Bin).meta({ description: 'The 10 equal-width calibration bins of p, empty ones included.' }),
      }),
    ).meta({ description: 'One entry per (forecaster, mode): consensus, then models by id, then market; modes headline, blind, informed, augmented.' }),
    count: count.meta({ description: 'Entries in `forecasters`.' }),
    total: count.meta({ description: 'Entries in all (one page: equals count).' }),
    next_cursor: z.null().meta({ description: 'Always null: the whole list is one page.' }),
    headline_modes: headlineModes,
    recalibration: z.array(RecalibrationCheck).meta({
      description: 'Per mode, the probability endpoint\'s recalibration checked out of sample (time-ordered folds): ' +
        'Brier of the raw consensus and of the calibrated probability on the same held-out questions.',
    }),
    ...provenance,
  })
  .meta({ id: 'CalibrationReport' });

export const eventsAccuracyRoute = jsonRoute({
  id: 'events.accuracy',
  path: '/api/events/accuracy/',
  summary: 'Resolved-event calibration summary',
  description:
    'Brier scores, directional accuracy, accuracy by confidence tier, per-domain breakdown and reliability bins, ' +
    'per forecaster (consensus, each model, market) and mode.',
  tags: ['events'],
  response: CalibrationReport,
  cache: true,
  // No filter (a filter is refused, foreignFilterCheck): every (forecaster, mode) is an entry.
  filterHint:
    'It lists every forecaster in every mode (each entry names its forecaster and mode, by_domain per domain). ' +
    'Filtered figures: /api/leaderboard/ (mode, category, domain, horizon, since, rounds), /api/predictions/accuracy/{category}.',
  data: (snap) => calibrationReport(snap),
});
