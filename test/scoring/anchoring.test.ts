/**
 * `anchoring` (55_anchoring.sql): the 45-question analysis fixture moves each model toward the market
 * by a known share (informed 0.4 + 0.1 × model index, augmented 0.7), which the slope must recover;
 * slope, correlation, mean |p − market| and the interval are recomputed independently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { MODELS, insertAnalysisFixture } from './analysis-fixture.ts';
import { derive, openDb, rows } from './fixture.ts';
import { interval, loadDraws, pearson } from './reference.ts';

describe('anchoring', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insertAnalysisFixture(conn);
    await derive(conn);
  });
  afterAll(() => close());

  it('recovers the known pull toward the market (1 = copies it, 0 = ignores it)', async () => {
    const a = await rows(conn, `SELECT forecaster, mode, slope, n_slope FROM anchoring WHERE kind = 'model'`);
    for (const [k, model] of MODELS.entries()) {
      const informed = a.find((r) => r.forecaster === model && r.mode === 'informed')!;
      const augmented = a.find((r) => r.forecaster === model && r.mode === 'augmented')!;
      expect(informed.n_slope).toBe(45);
      expect(informed.slope as number).toBeCloseTo(0.4 + 0.1 * k, 2); // forecasts rounded to 3 decimals
      expect(augmented.slope as number).toBeCloseTo(0.7, 2);
      const blind = a.find((r) => r.forecaster === model && r.mode === 'blind')!;
      expect(blind).toMatchObject({ slope: null, n_slope: 0 });
    }
  });

  it('every row matches the independent implementation', async () => {
    const draws = await loadDraws(conn);
    const src = [
      ...(await rows(conn, `SELECT model AS f, mode, question_id AS q, probability AS p, market_probability AS m FROM scored_forecasts`)),
      ...(await rows(conn, `SELECT 'consensus_mean' AS f, mode, question_id AS q, probability AS p, market_probability AS m FROM scored_consensus`)),
    ];
    const got = await rows(conn, 'SELECT * FROM anchoring');
    expect(got).toHaveLength(5 * 3);
    for (const g of got) {
      const ctx = `${g.forecaster}/${g.mode}`;
      const mine = src.filter((r) => r.f === g.forecaster && r.mode === g.mode && r.m !== null);
      expect(g.n_market, ctx).toBe(mine.length);
      expect(g.corr_market as number, ctx).toBeCloseTo(pearson(mine.map((r) => Number(r.p)), mine.map((r) => Number(r.m)))!, 10);
      expect(g.mean_abs_diff_market as number, ctx).toBeCloseTo(mine.reduce((s, r) => s + Math.abs(Number(r.p) - Number(r.m)), 0) / mine.length, 12);
      if (g.mode === 'blind') continue;
      const blind = new Map(src.filter((r) => r.f === g.forecaster && r.mode === 'blind').map((r) => [r.q, Number(r.p)]));
      const pairs = mine.filter((r) => blind.has(r.q)).map((r) => ({
        q: String(r.q),
        x: Number(r.m) - blind.get(r.q)!,
        y: Number(r.p) - blind.get(r.q)!,
      }));
      const slope = (w: (q: string) => number) => {
        let sxy = 0;
        let sxx = 0;
        for (const p of pairs) {
          sxy += w(p.q) * p.x * p.y;
          sxx += w(p.q) * p.x * p.x;
        }
        return sxx === 0 ? null : sxy / sxx;
      };
      expect(g.slope as number, ctx).toBeCloseTo(slope(() => 1)!, 12);
      const ci = interval(draws, (rep) => slope((q) => draws.weight(rep, q)))!;
      expect(g.slope_ci95_lo as number, ctx).toBeCloseTo(ci[0], 10);
      expect(g.slope_ci95_hi as number, ctx).toBeCloseTo(ci[1], 10);
    }
  });
});
