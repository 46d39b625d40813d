/**
 * `calibration_models` (sql/derive/95_calibration_models.sql) on synthetic data with known truth:
 * each question has a true probability; two overconfident forecasters report its log-odds times 2
 * and times 1.5, outcomes are drawn from the truth (seeded). The fit must recover the truth (slopes
 * near 1/2 and 1/1.5, calibrated probabilities near the true ones) and say so out of sample; a cell
 * with fewer than 50 questions stays the identity; outcomes after as_of are never used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { JsonRow } from '../../api/db/convert.ts';
import { calibrateOne, calibrationsFromRows, fitFor } from '../../api/probability/calibration.ts';
import { derive, forecast, insert, openDb, question, resolution, rows, ts } from '../scoring/fixture.ts';

/** mulberry32: a small seeded PRNG (reproducible outcomes). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));
const logit = (p: number) => Math.log(p / (1 - p));

const N = 600;
interface Q { id: string; truth: number; y: number; day: number }

function makeQuestions(): Q[] {
  const truths = prng(2);
  const draws = prng(2017);
  return Array.from({ length: N }, (_, i) => {
    const truth = 0.05 + 0.9 * truths();
    return { id: `syn:${i}`, truth, y: draws() < truth ? 1 : 0, day: i };
  });
}

describe('calibration_models: a synthetic overconfident forecaster with known truth', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  const qs = makeQuestions();
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    const day = (d: number) => new Date(Date.UTC(2024, 0, 1) + d * 3600_000 * 6).toISOString().slice(0, 19);
    await insert(conn, 'questions', qs.map((q) => question(q.id, { created_at: '2023-12-01' })));
    await insert(conn, 'forecasts', qs.flatMap((q) => [
      forecast(q.id, 'over2', 'informed', 'r1', '2023-12-15', sigmoid(2 * logit(q.truth))),
      forecast(q.id, 'over15', 'informed', 'r1', '2023-12-15', sigmoid(1.5 * logit(q.truth))),
      // a blind-mode cell with only 40 questions: identity
      ...(Number(q.id.slice(4)) < 40 ? [forecast(q.id, 'over2', 'blind', 'r1', '2023-12-15', sigmoid(2 * logit(q.truth)))] : []),
      // the augmented mode: a simulated history (the first start's) beside a real provider's
      ...(Number(q.id.slice(4)) < 200 ? [forecast(q.id, 'over2', 'augmented', 'r1', '2023-12-15', sigmoid(2 * logit(q.truth)))] : []),
      ...(Number(q.id.slice(4)) < 60 ? [forecast(q.id, 'real-model', 'augmented', 'r1', '2023-12-15', sigmoid(logit(q.truth)), { provider: 'openai' })] : []),
    ]));
    // The last 100 questions resolve after as_of: invisible to the fit.
    await insert(conn, 'resolutions', qs.map((q, i) => resolution(q.id, q.y, i < N - 100 ? day(q.day) : '2030-01-01')));
    await derive(conn, ts('2025-06-01'));
  }, 120_000);
  afterAll(() => close());

  it('recovers the truth: slopes near 1/2 and 2/3, calibrated probabilities near the true ones', async () => {
    const m = await rows(conn, `SELECT * FROM calibration_models WHERE kind = 'model' AND mode = 'informed' ORDER BY model`);
    expect(m.map((r) => r.model)).toEqual(['over15', 'over2']);
    const over2 = m.find((r) => r.model === 'over2')!;
    const over15 = m.find((r) => r.model === 'over15')!;
    expect(over2.method).toBe('platt_shrunk');
    expect(over2.n_questions).toBe(N - 100); // outcomes known at as_of only
    expect(Number(over2.slope)).toBeGreaterThan(0.38);
    expect(Number(over2.slope)).toBeLessThan(0.62);
    expect(Number(over15.slope)).toBeGreaterThan(0.5);
    expect(Number(over15.slope)).toBeLessThan(0.83);
    expect(Math.abs(Number(over2.intercept))).toBeLessThan(0.25);
    expect(over2.converged).toBe(true);
    // Calibrated probability against the truth: much closer than the raw overconfident one.
    let rawErr = 0;
    let calErr = 0;
    for (const q of qs) {
      const raw = sigmoid(2 * logit(q.truth));
      const cal = sigmoid(Number(over2.intercept) + Number(over2.slope) * logit(raw));
      rawErr += Math.abs(raw - q.truth);
      calErr += Math.abs(cal - q.truth);
    }
    expect(calErr / N).toBeLessThan(0.03);
    expect(calErr).toBeLessThan(rawErr / 3);
  });

  it('the pool: extremizing factor within [0.7, 2.0], out of sample better than the raw consensus', async () => {
    const [pool] = await rows(conn, `SELECT * FROM calibration_models WHERE kind = 'pool' AND mode = 'informed'`);
    expect(pool!.method).toBe('platt');
    expect(Number(pool!.extremize)).toBeGreaterThanOrEqual(0.7);
    expect(Number(pool!.extremize)).toBeLessThanOrEqual(2.0);
    expect(pool!.extremize_method).toBe('cv');
    expect(pool!.oos_folds).toBe(5);
    // folds 2..5 of 500 questions (ntile: 100 each)
    expect(pool!.oos_n).toBe(400);
    expect(Number(pool!.oos_brier_calibrated)).toBeLessThan(Number(pool!.oos_brier_raw));
    // Independent check of brier_raw: the mean of both models' raw p on the questions of folds 2..5.
    const visible = qs.slice(0, N - 100).slice(100);
    const expected = visible.reduce((s, q) => {
      const p = (sigmoid(2 * logit(q.truth)) + sigmoid(1.5 * logit(q.truth))) / 2;
      return s + (p - q.y) ** 2;
    }, 0) / visible.length;
    expect(Number(pool!.oos_brier_raw)).toBeCloseTo(expected, 9);
  });

  it('fewer than 50 resolved questions: the identity, and the method says so', async () => {
    const b = await rows(conn, `SELECT * FROM calibration_models WHERE mode = 'blind' ORDER BY kind`);
    expect(b).toHaveLength(2);
    for (const r of b) {
      expect(r.method).toBe('identity_insufficient_data');
      expect(Number(r.intercept)).toBe(0);
      expect(Number(r.slope)).toBe(1);
      expect(r.n_questions).toBe(40);
    }
    expect(b.find((r) => r.kind === 'pool')!.extremize).toBe(1);
  });

  it('a mode with a real provider\'s history is fitted on it alone, not on the simulator\'s beside it (a deployment first started on the simulated sample)', async () => {
    // The augmented cell's 200 simulated forecasts of over2 made its pool (and so every real
    // model's prior and the extremizing factor) a fit of the simulator, without a word.
    const a = await rows(conn, `SELECT kind, model, n_questions, n_forecasts FROM calibration_models WHERE mode = 'augmented' ORDER BY kind DESC, model`);
    expect(a).toEqual([
      { kind: 'pool', model: null, n_questions: 60, n_forecasts: 60 },
      { kind: 'model', model: 'real-model', n_questions: 60, n_forecasts: 60 },
    ]);
    // a mode with the simulator's history alone (a demo) is fitted on it
    expect((await rows(conn, `SELECT n_questions FROM calibration_models WHERE mode = 'informed' AND kind = 'pool'`))[0]!.n_questions).toBe(N - 100);
  });

  it('a model with no resolved question (newly configured, so not in the table) is the identity too, not the pool (issue 14: under 50 resolved questions a cell is the identity)', async () => {
    // The endpoint gave such a model the mode's pooled fit, while one with 49 questions got the
    // identity: a model with less history was calibrated more.
    const informed = calibrationsFromRows((await rows(conn, `SELECT * FROM calibration_models ORDER BY kind DESC`)) as JsonRow[]).get('informed')!;
    expect(informed.pool.method).toBe('platt');
    expect(fitFor(informed, 'over2')).toMatchObject({ method: 'platt_shrunk' });
    expect(fitFor(informed, 'newly-configured')).toEqual({ intercept: 0, slope: 1, method: 'identity_insufficient_data', n_questions: 0 });
    expect(calibrateOne(informed, 'newly-configured', 0.83)).toBeCloseTo(0.83, 12);
    // the identity is the answer as given, at the edges of the scale too (it was clipped to [0.001, 0.999])
    expect([calibrateOne(informed, 'newly-configured', 0.0002), calibrateOne(informed, 'newly-configured', 1)]).toEqual([0.0002, 1]);
  });
});
