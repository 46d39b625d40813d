/**
 * `anchoring` (55_anchoring.sql): the 45-question analysis fixture moves each model toward the market
 * by a known share (informed 0.4 + 0.1 × model index, augmented 0.7), which the slope must recover;
 * slope, correlation, mean |p − market| and the interval are recomputed independently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { MODELS, insertAnalysisFixture } from './analysis-fixture.ts';
import { derive, forecast, insert, one, openDb, question, resolution, rows } from './fixture.ts';
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
    const a = await rows(conn, `SELECT forecaster, mode, slope, n_slope FROM anchoring WHERE kind = 'model' AND rounds = 'latest'`);
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
    const got = await rows(conn, `SELECT * FROM anchoring WHERE rounds = 'latest'`);
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

describe('anchoring, rounds=all (hand-computed)', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('A'), question('B')]);
    await insert(conn, 'forecasts', [
      // A, r1: blind 0.4, informed 0.5, market 0.6 (1 day old): x = 0.2, y = 0.1
      forecast('A', 'm1', 'blind', 'r1', '2025-02-01', 0.4),
      forecast('A', 'm1', 'informed', 'r1', '2025-02-01', 0.5),
      // A, r2: blind 0.5, informed 0.8, market 0.8: x = 0.3, y = 0.3
      forecast('A', 'm1', 'blind', 'r2', '2025-03-01', 0.5),
      forecast('A', 'm1', 'informed', 'r2', '2025-03-01', 0.8),
      // B, r1: no price yet (left out); r2: blind 0.6, informed 0.3, market 0.2: x = −0.4, y = −0.3
      forecast('B', 'm1', 'blind', 'r1', '2025-02-01', 0.5),
      forecast('B', 'm1', 'informed', 'r1', '2025-02-01', 0.5),
      forecast('B', 'm1', 'blind', 'r2', '2025-03-01', 0.6),
      forecast('B', 'm1', 'informed', 'r2', '2025-03-01', 0.3),
    ]);
    await insert(conn, 'market_prices', [
      { question_id: 'A', observed_at: '2025-01-31', probability: 0.6 },
      { question_id: 'A', observed_at: '2025-02-28', probability: 0.8 },
      { question_id: 'B', observed_at: '2025-02-28', probability: 0.2 },
    ]);
    await insert(conn, 'resolutions', [resolution('A', 1, '2025-04-20'), resolution('B', 0, '2025-04-20')]);
    await derive(conn);
  });
  afterAll(() => close());

  it('averages each question\'s rounds first, each paired with its own run\'s blind forecast and market', async () => {
    const all = await one(conn, `SELECT * FROM anchoring WHERE rounds = 'all' AND forecaster = 'm1' AND mode = 'informed'`);
    // per question: A x·y = (0.02 + 0.09) / 2, x² = (0.04 + 0.09) / 2; B 0.12 and 0.16 (one round)
    expect(all.n_slope).toBe(2);
    expect(all.slope as number).toBeCloseTo((0.055 + 0.12) / (0.065 + 0.16), 12);
    expect(all.n_market).toBe(2);
    // |p − m| per question: A (0.1 + 0) / 2, B 0.1
    expect(all.mean_abs_diff_market as number).toBeCloseTo((0.05 + 0.1) / 2, 12);
    // mean p (A 0.65, B 0.3) against mean m (A 0.7, B 0.2): two points on a rising line
    expect(all.corr_market as number).toBeCloseTo(1, 12);
    // the latest round alone: (0.09 + 0.12) / (0.09 + 0.16)
    const latest = await one(conn, `SELECT * FROM anchoring WHERE rounds = 'latest' AND forecaster = 'm1' AND mode = 'informed'`);
    expect(latest.slope as number).toBeCloseTo(0.21 / 0.25, 12);
    const blind = await one(conn, `SELECT * FROM anchoring WHERE rounds = 'all' AND forecaster = 'm1' AND mode = 'blind'`);
    expect(blind).toMatchObject({ n_market: 2, n_slope: 0, slope: null });
  });
});
