/**
 * `tied_with_best` (52_leaderboard.sql and sql/api/leaderboard-since.sql) when a forecaster's
 * Brier equals the best's on some questions: the consensus median of four models is derived from
 * count/sum/min/max (20_consensus.sql), exact only up to floating rounding, so a median equal to a
 * model's answer can differ from it in the last bit. The paired interval against the best must not
 * turn on that bit: an interval whose lower bound is 0 up to such noise contains 0 (the figures are
 * published to 6 decimals, where it reads [0, …]).
 *
 * Fixture (one mode, both questions resolve YES, no market):
 *   Q1: m1 0.2, m2 0.6, m3 0.6, m4 0.9 → median 0.6 (the middle two), Brier of m2, m3, median: 0.16
 *   Q2: m1 0.3, m2 0.99, m3 0.3, m4 0.1 → median 0.3; Brier m2 0.0001, m3 and median 0.49
 * m2 is best (Brier 0.08005 over the two). m3 and the median have the same forecasts on both
 * questions, so their differences against m2 are the same: 0 on Q1, 0.4899 on Q2. A bootstrap
 * replicate drawing Q1 and not Q2 (about e⁻¹(1 − e⁻¹) ≈ 23% of them with two questions) has a
 * difference of exactly 0, so the 2.5% percentile is 0 and both are tied with the best.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, openDb, question, resolution, rows } from './fixture.ts';

const P: Record<string, Record<string, number>> = {
  Q1: { m1: 0.2, m2: 0.6, m3: 0.6, m4: 0.9 },
  Q2: { m1: 0.3, m2: 0.99, m3: 0.3, m4: 0.1 },
};

describe('leaderboard: tied_with_best is not decided by floating-point noise', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('Q1'), question('Q2')]);
    await insert(conn, 'resolutions', [resolution('Q1', 1, '2025-03-01'), resolution('Q2', 1, '2025-03-02')]);
    await insert(conn, 'forecasts', Object.entries(P).flatMap(([q, ps]) =>
      Object.entries(ps).map(([m, p]) => forecast(q, m, 'blind', 'r1', '2025-02-01', p))));
    await derive(conn);
  });
  afterAll(() => close());

  it('the precomputed leaderboard: the median is tied with the best, as m3 with the same forecasts is', async () => {
    const got = await rows(conn, `SELECT forecaster, best, vs_best_diff, vs_best_ci95_lo, vs_best_ci95_hi, tied_with_best
      FROM leaderboard WHERE mode = 'blind' AND rounds = 'latest' AND dimension = 'overall' ORDER BY forecaster`);
    const by = Object.fromEntries(got.map((r) => [r.forecaster, r]));
    expect(by.m2).toMatchObject({ best: 'm2', tied_with_best: true });
    // same figures as m3 (to 12 decimals): difference (0 + 0.4899) / 2, interval [0, 0.4899]
    for (const f of ['m3', 'consensus_median']) {
      expect(by[f]!.vs_best_diff).toBeCloseTo(0.24495, 12);
      expect(by[f]!.vs_best_ci95_lo).toBeCloseTo(0, 12);
      expect(by[f]!.vs_best_ci95_hi).toBeCloseTo(0.4899, 12);
    }
    expect(by.m3!.tied_with_best).toBe(true);
    expect(by.consensus_median!.tied_with_best).toBe(true);
  });

  it('the since recomputation (sql/api/leaderboard-since.sql) says the same', async () => {
    const sql = readFileSync(new URL('../../sql/api/leaderboard-since.sql', import.meta.url), 'utf8');
    const reader = await conn.runAndReadAll(sql, { rounds: 'latest', dimension: 'overall', key: 'all', mode: 'blind', since_us: 0n });
    const got = reader.getRowObjectsJson();
    const by = Object.fromEntries(got.map((r) => [String(r.forecaster), r]));
    expect(by.m3!.tied_with_best).toBe(true);
    expect(by.consensus_median!.tied_with_best).toBe(true);
  });
});

/**
 * rank (rank(): ties share a rank) on a one-question cell where two consensus statistics equal two
 * models' answer: Q1 as above, m2 and m3 say 0.6, the median is 0.6 (the middle two) and so is the
 * logit-mean (logit 0.2 + logit 0.9 = ln 0.25 + ln 9 = ln 2.25 = 2 · logit 0.6, so the mean of the
 * four log-odds is logit 0.6). All four have Brier 0.16 (difficulty-adjusted 0.16 with one
 * question) and share rank 2 behind m4 (0.9: Brier 0.01); the mean (0.575) is 6th and m1 (0.2)
 * 7th. No floating-point bit of the median's count/sum/min/max or the logit-mean's exp/ln may put
 * one of them a rank apart.
 */
describe('leaderboard: equal difficulty-adjusted Briers share a rank', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('Q1')]);
    await insert(conn, 'resolutions', [resolution('Q1', 1, '2025-03-01')]);
    await insert(conn, 'forecasts', Object.entries(P.Q1!).map(([m, p]) => forecast('Q1', m, 'blind', 'r1', '2025-02-01', p)));
    await derive(conn);
  });
  afterAll(() => close());

  const expected = { m4: 1, m2: 2, m3: 2, consensus_median: 2, consensus_logit_mean: 2, consensus_mean: 6, m1: 7 };

  it('the precomputed leaderboard', async () => {
    const got = await rows(conn, `SELECT forecaster, rank FROM leaderboard
      WHERE mode = 'blind' AND rounds = 'latest' AND dimension = 'overall'`);
    expect(Object.fromEntries(got.map((r) => [r.forecaster, r.rank]))).toEqual(expected);
  });

  it('the since recomputation', async () => {
    const sql = readFileSync(new URL('../../sql/api/leaderboard-since.sql', import.meta.url), 'utf8');
    const got = (await conn.runAndReadAll(sql, { rounds: 'latest', dimension: 'overall', key: 'all', mode: 'blind', since_us: 0n })).getRowObjectsJson();
    expect(Object.fromEntries(got.map((r) => [String(r.forecaster), Number(r.rank)]))).toEqual(expected);
  });

  // One question has no sampling variability to measure: every bootstrap replicate that draws it
  // is that question, so the percentile interval was [b, b] and the paired difference against the
  // best [d, d], published as certain and `tied_with_best: false` on one question
  // (GET /api/leaderboard/?since=<the last resolution> on the bundled sample). As ai_vs_market's
  // interval (null when n < 2), an interval over fewer than two questions is null, and so is
  // tied_with_best without one.
  it('no interval and no tie verdict from one question (precomputed and since)', async () => {
    const sql = readFileSync(new URL('../../sql/api/leaderboard-since.sql', import.meta.url), 'utf8');
    const since = (await conn.runAndReadAll(sql, { rounds: 'latest', dimension: 'overall', key: 'all', mode: 'blind', since_us: 0n })).getRowObjectsJson();
    const pre = await rows(conn, `SELECT * FROM leaderboard WHERE mode = 'blind' AND rounds = 'latest' AND dimension = 'overall'`);
    for (const [what, got] of [['precomputed', pre], ['since', since]] as const) {
      expect(got.length, what).toBe(7);
      for (const r of got) {
        const ctx = `${what} ${String(r.forecaster)}`;
        expect(Number(r.n), ctx).toBe(1);
        expect([r.brier_ci95_lo, r.brier_ci95_hi, r.vs_best_ci95_lo, r.vs_best_ci95_hi, r.tied_with_best], ctx).toEqual([null, null, null, null, null]);
      }
    }
  });
});

/**
 * Service stats' short leaderboard (headline_leaderboard, 70_calibration.sql) ranks like the
 * leaderboard, at 9 decimals. One question, outcome NO: m1 = m2 = 0.3, m3 = m4 = 0.7, the market
 * 0.5 a day before. The consensus mean of 0.3, 0.3, 0.7, 0.7 is 0.49999999999999994 in floating
 * point (the issue's own example), so its Brier is 0.24999999999999994 against the market's 0.25:
 * the two share rank 3 behind m1 and m2 (0.09), and m3, m4 (0.49) are 5th.
 */
describe('headline leaderboard: equal Briers to 9 decimals share a rank', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('D')]);
    await insert(conn, 'forecasts', [0.3, 0.3, 0.7, 0.7].map((p, i) => forecast('D', `m${i + 1}`, 'augmented', 'r1', '2025-03-06', p)));
    await insert(conn, 'market_prices', [{ question_id: 'D', observed_at: '2025-03-05', probability: 0.5 }]);
    await insert(conn, 'resolutions', [resolution('D', 0, '2025-03-20')]);
    await derive(conn);
  });
  afterAll(() => close());

  it('the consensus a last bit off the market shares its rank (it came 4th, the market 3rd)', async () => {
    const got = await rows(conn, `SELECT forecaster, rank FROM headline_leaderboard ORDER BY rank, forecaster`);
    expect(got.map((r) => [r.forecaster, r.rank])).toEqual([
      ['m1', 1], ['m2', 1], ['consensus', 3], ['market', 3], ['m3', 5], ['m4', 5],
    ]);
  });
});

/**
 * tied_with_best is decided on the interval as published: bounds at 6 decimals, the API's
 * precision. m2 answers 1e-7 below m1 on both questions (both YES), so its Brier is worse by about
 * 8e-8 on each and its paired interval against m1 (the best) is [8e-8, 8e-8]: published [0, 0],
 * which contains 0. At 9 decimals it was "not tied" while the API showed `ci95: [0, 0]` beside
 * `tied_with_best: false` (QA, on the bundled sample: a median's [0, 0.06578], lower bound 6.3e-8).
 */
describe('leaderboard: tied_with_best on the interval as published (6 decimals)', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  const Q = { m1: 0.6, m2: 0.6 - 1e-7, m3: 0.3, m4: 0.2 };
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('Q1'), question('Q2')]);
    await insert(conn, 'resolutions', [resolution('Q1', 1, '2025-03-01'), resolution('Q2', 1, '2025-03-02')]);
    await insert(conn, 'forecasts', ['Q1', 'Q2'].flatMap((q) => Object.entries(Q).map(([m, p]) => forecast(q, m, 'blind', 'r1', '2025-02-01', p))));
    await derive(conn);
  });
  afterAll(() => close());

  it('the precomputed leaderboard and the since recomputation', async () => {
    const got = await rows(conn, `SELECT forecaster, best, vs_best_ci95_lo, vs_best_ci95_hi, tied_with_best
      FROM leaderboard WHERE mode = 'blind' AND rounds = 'latest' AND dimension = 'overall' ORDER BY forecaster`);
    const by = Object.fromEntries(got.map((r) => [r.forecaster, r]));
    expect(by.m1).toMatchObject({ best: 'm1', tied_with_best: true });
    expect(by.m2!.vs_best_ci95_lo).toBeGreaterThan(5e-8);
    expect(by.m2!.vs_best_ci95_hi).toBeLessThan(5e-7);
    expect(by.m2!.tied_with_best).toBe(true);
    expect(by.m3!.tied_with_best).toBe(false);
    const sql = readFileSync(new URL('../../sql/api/leaderboard-since.sql', import.meta.url), 'utf8');
    const since = (await conn.runAndReadAll(sql, { rounds: 'latest', dimension: 'overall', key: 'all', mode: 'blind', since_us: 0n })).getRowObjectsJson();
    const bySince = Object.fromEntries(since.map((r) => [String(r.forecaster), r]));
    expect(bySince.m2!.tied_with_best).toBe(true);
    expect(bySince.m3!.tied_with_best).toBe(false);
  });
});
