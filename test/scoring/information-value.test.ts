/**
 * `information_value` (54_information_value.sql): a hand-computed pair, and the 45-question analysis
 * fixture recomputed by an independent TypeScript implementation (paired by question, bootstrap from
 * the published draws).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { insertAnalysisFixture } from './analysis-fixture.ts';
import { derive, forecast, insert, one, openDb, question, resolution, rows } from './fixture.ts';
import { interval, loadDraws, pairedDiff, weightedMean } from './reference.ts';

describe('information value: hand-computed', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('A'), question('B'), question('C')]);
    await insert(conn, 'forecasts', [
      // A (outcome 1): blind 0.5, informed 0.7, augmented 0.9
      forecast('A', 'm1', 'blind', 'r1', '2025-03-01', 0.5),
      forecast('A', 'm1', 'informed', 'r1', '2025-03-01', 0.7),
      forecast('A', 'm1', 'augmented', 'r1', '2025-03-01', 0.9),
      // B (outcome 0): blind 0.4, informed 0.2; no augmented
      forecast('B', 'm1', 'blind', 'r1', '2025-03-01', 0.4),
      forecast('B', 'm1', 'informed', 'r1', '2025-03-01', 0.2),
      // C (outcome 1): informed 0.6, augmented 0.5; no blind
      forecast('C', 'm1', 'informed', 'r1', '2025-03-01', 0.6),
      forecast('C', 'm1', 'augmented', 'r1', '2025-03-01', 0.5),
    ]);
    await insert(conn, 'resolutions', [resolution('A', 1, '2025-03-20'), resolution('B', 0, '2025-03-20'), resolution('C', 1, '2025-03-20')]);
    await derive(conn);
  });
  afterAll(() => close());

  it('pairs by question over the questions scored in both modes', async () => {
    const bi = await one(conn, `SELECT * FROM information_value WHERE rounds = 'latest' AND dimension = 'overall'
                                AND forecaster = 'm1' AND comparison = 'blind_to_informed'`);
    // A and B: blind (0.25 + 0.16) / 2 = 0.205, informed (0.09 + 0.04) / 2 = 0.065 → value 0.14
    expect(bi.n).toBe(2);
    expect(bi.brier_from).toBeCloseTo(0.205, 12);
    expect(bi.brier_to).toBeCloseTo(0.065, 12);
    expect(bi.value).toBeCloseTo(0.14, 12);
    const ia = await one(conn, `SELECT * FROM information_value WHERE rounds = 'latest' AND dimension = 'overall'
                                AND forecaster = 'm1' AND comparison = 'informed_to_augmented'`);
    // A and C: informed (0.09 + 0.16) / 2 = 0.125, augmented (0.01 + 0.25) / 2 = 0.13 → value −0.005
    expect(ia.n).toBe(2);
    expect(ia.value).toBeCloseTo(-0.005, 12);
    expect(ia.kind).toBe('model');
  });
});

// One question has no sampling variability: every bootstrap replicate that draws it is that
// question, so the interval read [v, v], a certainty (a category with one question scored in both
// modes). As the leaderboard's and ai_vs_market's, an interval over fewer than two questions is null.
describe('information value: no interval from one question', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('A')]);
    await insert(conn, 'forecasts', [
      forecast('A', 'm1', 'blind', 'r1', '2025-03-01', 0.5),
      forecast('A', 'm1', 'informed', 'r1', '2025-03-01', 0.7),
    ]);
    await insert(conn, 'resolutions', [resolution('A', 1, '2025-03-20')]);
    await derive(conn);
  });
  afterAll(() => close());

  it('n = 1: the value, and a null interval', async () => {
    const bi = await one(conn, `SELECT * FROM information_value WHERE rounds = 'latest' AND dimension = 'overall'
                                AND forecaster = 'm1' AND comparison = 'blind_to_informed'`);
    expect(bi.n).toBe(1);
    expect(bi.value).toBeCloseTo(0.16, 12); // 0.25 − 0.09
    expect([bi.value_ci95_lo, bi.value_ci95_hi]).toEqual([null, null]);
  });
});

describe('information value: independent implementation', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insertAnalysisFixture(conn);
    await derive(conn);
  });
  afterAll(() => close());

  it('every forecaster, comparison and cell (rounds latest)', async () => {
    const draws = await loadDraws(conn);
    const sf = await rows(conn, `SELECT model AS f, mode, question_id AS q, brier, category FROM scored_forecasts`);
    const sc = await rows(conn, `SELECT 'consensus_mean' AS f, mode, question_id AS q, brier, category FROM scored_consensus`);
    const all = [...sf, ...sc];
    const got = await rows(conn, `SELECT * FROM information_value WHERE rounds = 'latest' AND forecaster IN ('m1', 'm3', 'consensus_mean')`);
    expect(got.length).toBe(3 * 2 * 4); // 3 forecasters × 2 comparisons × (overall + 3 categories)
    for (const g of got) {
      const [from, to] = g.comparison === 'blind_to_informed' ? ['blind', 'informed'] : ['informed', 'augmented'];
      const inCell = (r: Record<string, unknown>) => r.f === g.forecaster && (g.dimension === 'overall' || r.category === g.key);
      const a = new Map(all.filter((r) => inCell(r) && r.mode === from).map((r) => [String(r.q), Number(r.brier)]));
      const b = new Map(all.filter((r) => inCell(r) && r.mode === to).map((r) => [String(r.q), Number(r.brier)]));
      const d = pairedDiff(a, b);
      const ctx = `${g.forecaster}/${g.comparison}/${g.key}`;
      expect(g.n, ctx).toBe(d.size);
      expect(g.value as number, ctx).toBeCloseTo([...d.values()].reduce((x, y) => x + y, 0) / d.size, 12);
      const ci = interval(draws, (rep) => weightedMean(draws, rep, d))!;
      expect(g.value_ci95_lo as number, ctx).toBeCloseTo(ci[0], 10);
      expect(g.value_ci95_hi as number, ctx).toBeCloseTo(ci[1], 10);
    }
  });
});
