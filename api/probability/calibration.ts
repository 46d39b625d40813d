/**
 * The recalibration of the probability endpoint, read from the snapshot's `calibration_models`
 * (fitted by the pipeline: sql/derive/95_calibration_models.sql) and applied to live answers.
 *
 * For a mode: each model's probability p becomes sigmoid(a_m + b_m·logit(p)) with its Platt fit (a
 * model the table does not know, e.g. a newly configured one, has no resolved question: the
 * identity, as every cell under 50, issue 14); the calibrated log-odds of the models that answered are averaged and
 * multiplied by the extremizing factor d: probability = sigmoid(d · mean(calibrated log-odds)), log-odds
 * taken of p clipped to [0.001, 0.999]. `calibrateAnswers` decides what applies (`appliedCalibration`).
 */
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { count, isoTime, zProb } from '../openapi/common.ts';

const LOGIT_CLIP = 0.001;

export const logit = (p: number): number => {
  const q = Math.min(1 - LOGIT_CLIP, Math.max(LOGIT_CLIP, p));
  return Math.log(q / (1 - q));
};
export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/** One Platt fit: calibrated log-odds = intercept + slope · log-odds. */
export interface PlattFit {
  intercept: number;
  slope: number;
  method: string;
  n_questions: number;
}

/** A mode's calibration: the pool, the extremizing factor, the models' fits, the out-of-sample check. */
export interface ModeCalibration {
  mode: string;
  method: string;
  pool: PlattFit;
  extremize: number;
  extremize_method: string;
  models: Map<string, PlattFit>;
  n_questions: number;
  fitted_through: string | null;
  as_of: string | null;
  out_of_sample: { brier_raw: number | null; brier_calibrated: number | null; n: number; folds: number };
}

const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Groups the rows of sql/api/calibration-models.sql by mode. */
export function calibrationsFromRows(rows: readonly JsonRow[]): Map<string, ModeCalibration> {
  const out = new Map<string, ModeCalibration>();
  for (const r of rows) {
    if (r.kind !== 'pool') continue;
    const mode = String(r.mode);
    out.set(mode, {
      mode,
      method: String(r.method),
      pool: { intercept: num(r.intercept, 0), slope: num(r.slope, 1), method: String(r.method), n_questions: num(r.n_questions, 0) },
      extremize: num(r.extremize, 1),
      extremize_method: String(r.extremize_method ?? 'identity_insufficient_data'),
      models: new Map(),
      n_questions: num(r.n_questions, 0),
      fitted_through: str(r.fitted_through),
      as_of: str(r.as_of),
      out_of_sample: {
        brier_raw: typeof r.oos_brier_raw === 'number' ? r.oos_brier_raw : null,
        brier_calibrated: typeof r.oos_brier_calibrated === 'number' ? r.oos_brier_calibrated : null,
        n: num(r.oos_n, 0),
        folds: num(r.oos_folds, 0),
      },
    });
  }
  for (const r of rows) {
    if (r.kind !== 'model') continue;
    const c = out.get(String(r.mode));
    if (!c) continue;
    c.models.set(String(r.model), {
      intercept: num(r.intercept, 0),
      slope: num(r.slope, 1),
      method: String(r.method),
      n_questions: num(r.n_questions, 0),
    });
  }
  return out;
}

/** The identity calibration (no snapshot fit for the mode). */
export function identityCalibration(mode: string): ModeCalibration {
  return {
    mode,
    method: 'identity_no_fit',
    pool: { intercept: 0, slope: 1, method: 'identity_no_fit', n_questions: 0 },
    extremize: 1,
    extremize_method: 'identity_no_fit',
    models: new Map(),
    n_questions: 0,
    fitted_through: null,
    as_of: null,
    out_of_sample: { brier_raw: null, brier_calibrated: null, n: 0, folds: 0 },
  };
}

/**
 * A model with no resolved question in the mode (not in the table): the identity, as any cell with
 * fewer than 50 (issue 14). It got the mode's pooled fit, so a model with no history was calibrated
 * while one with 49 questions was not.
 */
const NO_HISTORY: PlattFit = { intercept: 0, slope: 1, method: 'identity_insufficient_data', n_questions: 0 };

/** The fit used for a model: its own, else the identity (a model the history does not know). */
export function fitFor(c: ModeCalibration, model: string): PlattFit {
  return c.models.get(model) ?? NO_HISTORY;
}

/** Whether a fit is the identity (a = 0, b = 1): every identity_* method, a model with no history included. */
export const isIdentity = (f: PlattFit): boolean => f.intercept === 0 && f.slope === 1;

/**
 * One model's calibrated probability: sigmoid(a + b·logit(p)), p clipped to [0.001, 0.999] in the
 * log-odds as the fit was fitted (sql/derive/95_calibration_models.sql). The identity is the answer
 * as given: the clip exists only to take log-odds (QA: an answer of 0.0002 under the identity was
 * published as a calibrated 0.001, which no formula of the document gives).
 */
export function calibrateOne(c: ModeCalibration, model: string, p: number): number {
  const f = fitFor(c, model);
  return isIdentity(f) ? p : sigmoid(f.intercept + f.slope * logit(p));
}

/** The pooled probability of the models' raw answers: sigmoid(d · mean(a_m + b_m · logit(p_m))). */
export function pooledProbability(c: ModeCalibration, answers: readonly { model: string; probability: number }[], extremize = c.extremize): number {
  if (answers.length === 0) throw new Error('pooledProbability: no answers');
  let s = 0;
  for (const a of answers) {
    const f = fitFor(c, a.model);
    s += f.intercept + f.slope * logit(a.probability);
  }
  return sigmoid(extremize * (s / answers.length));
}

/** What an answer's probability is (`calibration.applied`): see `appliedCalibration`. */
export const CALIBRATIONS_APPLIED = ['platt', 'raw_mean', 'identity'] as const;
export type CalibrationApplied = (typeof CALIBRATIONS_APPLIED)[number];

/** What gave one model's `calibrated_probability` (`models[].calibration_applied`). */
export const MODEL_CALIBRATIONS_APPLIED = ['platt', 'identity'] as const;
export type ModelCalibrationApplied = (typeof MODEL_CALIBRATIONS_APPLIED)[number];

/**
 * Whether any of `models` is in the fit's history for the mode (a row of its own in
 * calibration_models: its shrunk Platt fit, or the identity of a cell under 50 questions).
 */
export function anyInHistory(c: ModeCalibration, models: readonly string[]): boolean {
  return models.some((m) => c.models.has(m));
}

/**
 * Which calibration an answer of `models` applies: the fit when it earns its place, else what beat
 * it. A fit whose own out-of-sample check is worse than the raw consensus (the mean, on the same
 * held-out questions) would make answers worse by the pipeline's own measure, so the raw mean is
 * used instead (`raw_mean`); a fit without a check yet is applied (nothing says it is worse). No
 * fit (method identity_*): `identity`. Nor when none of the answering models is in the fit's
 * history: each gets the identity (fitFor), and the extremizing factor was fitted on the pooled
 * log-odds of other models, correcting their joint over- or underconfidence, which says nothing of
 * these; applied to them it moved raw answers by a factor no forecast of theirs was ever scored
 * against, for the reason a model without history gets the identity rather than the pool's fit (QA:
 * real models after a first start on the simulated sample were extremized by the simulator's d, and
 * the answer said `platt`).
 */
export function appliedCalibration(c: ModeCalibration, models: readonly string[]): CalibrationApplied {
  if (c.method !== 'platt' || !anyInHistory(c, models)) return 'identity';
  const { brier_raw: raw, brier_calibrated: cal } = c.out_of_sample;
  return raw !== null && cal !== null && cal > raw ? 'raw_mean' : 'platt';
}

/** The calibration applied to an answer: its probability and each model's calibrated probability. */
export interface CalibratedAnswer {
  applied: CalibrationApplied;
  probability: number;
  models: { model: string; calibrated_probability: number; calibration_applied: ModelCalibrationApplied }[];
}

/**
 * Applies `c` to the models' raw answers as `appliedCalibration` decides: `platt` each model's own
 * fit (the identity for a model without one), pooled in log-odds and extremized; `raw_mean` the raw
 * mean, nothing calibrated; `identity` the raw answers pooled in log-odds, d = 1.
 */
export function calibrateAnswers(c: ModeCalibration, answers: readonly { model: string; probability: number }[]): CalibratedAnswer {
  const applied = appliedCalibration(c, answers.map((a) => a.model));
  const models = answers.map((a) => {
    const own = applied === 'platt' && !isIdentity(fitFor(c, a.model));
    return { model: a.model, calibrated_probability: own ? calibrateOne(c, a.model, a.probability) : a.probability, calibration_applied: own ? ('platt' as const) : ('identity' as const) };
  });
  const probability =
    applied === 'raw_mean'
      ? answers.reduce((s, a) => s + a.probability, 0) / answers.length
      : pooledProbability(c, answers, applied === 'platt' ? c.extremize : 1);
  return { applied, probability, models };
}

/** The out-of-sample check of a mode's fit (one shape: the accuracy report and the probability answer). */
export const OutOfSample = z
  .object({
    brier_raw: zProb.meta({ description: 'Brier of the raw consensus (mean) on the held-out questions.' }),
    brier_calibrated: zProb.meta({ description: 'Brier of the calibrated, pooled, extremized probability on the same questions.' }),
    n: count.meta({ description: 'Held-out questions (folds 2..K of the time-ordered folds).' }),
    folds: count.meta({ description: 'K: the resolved questions, sorted by resolved_at, are cut into this many folds (5); fold k is predicted by fits on folds 1..k−1.' }),
  })
  .meta({ description: 'The fit checked out of sample against the raw consensus, on the same held-out questions.' });

/** The out-of-sample check as published beside the raw consensus (GET /api/events/accuracy/). */
export const RecalibrationCheck = z
  .object({
    mode: z.string().meta({ description: 'The information mode the fit is for (blind, informed, augmented).' }),
    method: z.string().meta({ description: '`platt` (fitted) or `identity_insufficient_data` (fewer than 50 resolved questions).' }),
    n_questions: count.meta({ description: 'Resolved questions the published fit used.' }),
    extremize: z.number().meta({ description: 'Extremizing factor d in [0.7, 2.0] (1: none).' }),
    extremize_method: z.string().meta({
      description: '`cv`: d chosen by the out-of-fold Brier; `identity_insufficient_data`: d = 1 (fewer than 50 out-of-fold questions).',
    }),
    fitted_through: isoTime.nullable().meta({ description: 'Latest resolution the fit used (all known at the run\'s as_of).' }),
    out_of_sample: OutOfSample,
  })
  .meta({ id: 'RecalibrationCheck', description: 'Whether the probability endpoint\'s recalibration earns its place, out of sample.' });

/** The checks of every mode of a snapshot, for the accuracy report. */
export function recalibrationChecks(rows: readonly JsonRow[]): z.input<typeof RecalibrationCheck>[] {
  return [...calibrationsFromRows(rows).values()].map((c) => ({
    mode: c.mode,
    method: c.method,
    n_questions: c.n_questions,
    extremize: c.extremize,
    extremize_method: c.extremize_method,
    fitted_through: c.fitted_through,
    out_of_sample: c.out_of_sample,
  }));
}

