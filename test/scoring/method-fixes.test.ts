/**
 * Issue 10 method fixes, on hand-built fixtures with hand-computed expectations:
 * direction on the 9-decimal rounded probability, the market comparator's maximum age (stale
 * pairs counted), AI versus market on the same questions with n and excluded counts by reason,
 * rounds=all averages per question, and the ECE bootstrap interval and noise floor (recomputed by an
 * independent TypeScript implementation from the published bootstrap tables).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { deriveTables } from '../../pipeline/warehouse/derive.ts';
import { derive, forecast, insert, one, openDb, question, resolution, rows, ts } from './fixture.ts';
import { quantile } from './reference.ts';


describe('method fixes', () => {
  let conn: DuckDBConnection;
  let close: () => void;

  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', ['D', 'P1', 'P2', 'S', 'N', 'X', 'R'].map((id) => question(id)));
    await insert(conn, 'forecasts', [
      // D: consensus of 0.3, 0.3, 0.7, 0.7 = 0.49999999999999994 in floating point: no direction.
      forecast('D', 'm1', 'augmented', 'r1', '2025-03-06', 0.3),
      forecast('D', 'm2', 'augmented', 'r1', '2025-03-06', 0.3),
      forecast('D', 'm3', 'augmented', 'r1', '2025-03-06', 0.7),
      forecast('D', 'm4', 'augmented', 'r1', '2025-03-06', 0.7),
      // P1: paired, both directional (AI 0.8 correct, market 0.6 correct; outcome 1).
      forecast('P1', 'm1', 'augmented', 'r1', '2025-03-06', 0.8),
      // P2: paired, market exactly 7 days old (fresh), market at 0.5: no direction.
      forecast('P2', 'm1', 'augmented', 'r1', '2025-03-06', 0.3),
      // S: market price 2025-02-01, 33 days before the forecast: stale.
      forecast('S', 'm1', 'augmented', 'r1', '2025-03-06', 0.9),
      // N: no market price at all.
      forecast('N', 'm1', 'augmented', 'r1', '2025-03-06', 0.2),
      // X: paired, AI wrong (0.7, outcome 0), market right (0.1).
      forecast('X', 'm1', 'augmented', 'r1', '2025-03-06', 0.7),
      // R: three rounds before the cutoff (and one after it): rounds=all averages the three.
      forecast('R', 'm1', 'augmented', 'r1', '2025-02-01', 0.2),
      forecast('R', 'm1', 'augmented', 'r2', '2025-02-15', 0.6),
      forecast('R', 'm1', 'augmented', 'r3', '2025-03-01', 0.9),
      forecast('R', 'm1', 'augmented', 'r4', '2025-04-01', 0.1),
    ]);
    await insert(conn, 'market_prices', [
      { question_id: 'D', observed_at: '2025-03-05', probability: 0.4 },
      { question_id: 'P1', observed_at: '2025-03-05', probability: 0.6 },
      { question_id: 'P2', observed_at: '2025-02-27', probability: 0.5 },
      { question_id: 'S', observed_at: '2025-02-01', probability: 0.7 },
      { question_id: 'X', observed_at: '2025-03-06', probability: 0.1 },
      // R: fresh for r2 (2025-02-14 → 1 day) and r3 (2025-02-28 → 1 day), none before r1.
      { question_id: 'R', observed_at: '2025-02-14', probability: 0.5 },
      { question_id: 'R', observed_at: '2025-02-28', probability: 0.8 },
    ]);
    await insert(conn, 'resolutions', [
      resolution('D', 1, '2025-03-20'),
      resolution('P1', 1, '2025-03-20'),
      resolution('P2', 0, '2025-03-20'),
      resolution('S', 1, '2025-03-20'),
      resolution('N', 0, '2025-03-20'),
      resolution('X', 0, '2025-03-20'),
      resolution('R', 1, '2025-03-20'),
    ]);
    await derive(conn);
  });
  afterAll(() => close());

  it('direction uses the probability rounded to 9 decimals', async () => {
    const d = await one(conn, `SELECT probability, direction, tier FROM scored_consensus WHERE question_id = 'D'`);
    expect(d.probability).not.toBe(0.5); // 0.49999999999999994 as stored
    expect(d.probability).toBeCloseTo(0.5, 12);
    expect(d).toMatchObject({ direction: 'none', tier: 'low' });
    const acc = await one(
      conn,
      `SELECT n_no_direction FROM accuracy WHERE scope = 'all' AND forecaster = 'consensus' AND mode = 'headline' AND dimension = 'overall'`,
    );
    // D (consensus 0.5) and no other: the market at 0.5 (P2) is the market's, not the consensus's.
    expect(acc.n_no_direction).toBe(1);
  });

  it('a market price older than the maximum age (7 days) is no comparator, and says so', async () => {
    const r = await rows(
      conn,
      `SELECT question_id, market_status, market_probability, market_brier, market_age_days
       FROM scored_consensus WHERE mode = 'augmented' ORDER BY question_id`,
    );
    const by = Object.fromEntries(r.map((x) => [x.question_id, x]));
    expect(by.S).toMatchObject({ market_status: 'stale', market_probability: null, market_brier: null, market_age_days: 33 });
    expect(by.P2).toMatchObject({ market_status: 'ok', market_probability: 0.5, market_age_days: 7 }); // exactly 7 days: kept
    expect(by.N).toMatchObject({ market_status: 'none', market_probability: null, market_age_days: null });
    expect(by.X).toMatchObject({ market_status: 'ok', market_age_days: 0 });
    const sf = await one(conn, `SELECT market_status, market_probability FROM scored_forecasts WHERE question_id = 'S'`);
    expect(sf).toEqual({ market_status: 'stale', market_probability: null });
    // the resolved list tells the stale comparator from no price at all
    const rp = await rows(conn, `SELECT question_id, market_status, market_age_days, market_probability FROM resolved_predictions WHERE question_id IN ('S', 'N') ORDER BY question_id`);
    expect(rp).toEqual([
      { question_id: 'N', market_status: 'none', market_age_days: null, market_probability: null },
      { question_id: 'S', market_status: 'stale', market_age_days: 33, market_probability: null },
    ]);
  });

  it('a longer maximum age (run option) keeps the older price', async () => {
    await deriveTables(conn, { asOf: ts('2025-06-01'), maxComparatorAgeDays: 60 });
    const s = await one(conn, `SELECT market_status, market_probability FROM scored_consensus WHERE question_id = 'S'`);
    expect(s).toEqual({ market_status: 'ok', market_probability: 0.7 });
    await derive(conn);
  });

  it('AI versus market: same questions for both sides, n and excluded counts by reason', async () => {
    const a = await one(conn, `SELECT * FROM ai_vs_market WHERE scope = 'all'`);
    // Headline consensus on D, P1, P2, S, N, X, R = 7. Paired (fresh comparator): D (1 day),
    // P1, P2, X, R (r3 at 2025-03-01, price 2025-02-28) = 5; stale: S; none: N.
    expect(a).toMatchObject({ n_consensus: 7, n: 5, excluded_stale_market: 1, excluded_no_market: 1 });
    // Directional on both sides: P1, X, R (D: AI none; P2: market none) → 3, 2 excluded.
    expect(a).toMatchObject({ n_directional: 3, excluded_no_direction: 2 });
    // AI: P1 correct (0.8), X wrong (0.7 vs 0), R correct (0.9) → 2/3; market: P1 (0.6) correct,
    // X (0.1) correct, R (0.8) correct → 3/3.
    expect(a.ai_accuracy_pct).toBeCloseTo(200 / 3, 10);
    expect(a.market_accuracy_pct).toBe(100);
    // Brier over the 5 pairs. AI: D 0.25, P1 0.04, P2 0.09, X 0.49, R 0.01 → 0.88 / 5 = 0.176.
    // Market: D 0.36, P1 0.16, P2 0.25, X 0.01, R 0.04 → 0.82 / 5 = 0.164.
    expect(a.ai_brier).toBeCloseTo(0.176, 12);
    expect(a.market_brier).toBeCloseTo(0.164, 12);
    expect(a.skill).toBeCloseTo(1 - 0.176 / 0.164, 12);
    expect(a.diff_mean).toBeCloseTo(0.012, 12);
  });

  it('AI versus market per bucket (category, domain, horizon, mode): the same questions, the ai_vs_market figures', async () => {
    const b = await rows(
      conn,
      `SELECT dimension, key, n, n_consensus, ai_brier, market_brier, n_directional, excluded_stale_market, excluded_no_market
       FROM ai_vs_market_breakdown WHERE scope = 'all' ORDER BY dimension, key`,
    );
    // Every question shares one category, domain, horizon bucket (14 and 19 days: 8-30) and the
    // one mode, so each bucket is the overall comparison above: 5 pairs of 7, the same Briers.
    expect(b.map((r) => r.dimension)).toEqual(['category', 'domain', 'horizon', 'mode']);
    expect(b.find((r) => r.dimension === 'horizon')!.key).toBe('8-30');
    expect(b.find((r) => r.dimension === 'mode')!.key).toBe('augmented');
    for (const r of b) {
      expect(r).toMatchObject({ n: 5, n_consensus: 7, n_directional: 3, excluded_stale_market: 1, excluded_no_market: 1 });
      expect(r.ai_brier).toBeCloseTo(0.176, 12);
      expect(r.market_brier).toBeCloseTo(0.164, 12);
    }
  });

  it('the headline leaderboard ranks every forecaster on the same questions', async () => {
    const l = await rows(conn, `SELECT forecaster, n, brier, ece, rank FROM headline_leaderboard ORDER BY rank, forecaster`);
    // m1..m4 all have headline forecasts; only D has all four (and a fresh comparator), so every
    // forecaster is scored on D alone (m1 forecast seven questions: not its n here).
    // D, outcome 1: m3 = m4 = 0.7 → 0.09; consensus 0.5 → 0.25; market 0.4 → 0.36; m1 = m2 = 0.3 → 0.49.
    expect(l.map((r) => [r.rank, r.forecaster, r.n])).toEqual([
      [1, 'm3', 1], [1, 'm4', 1], [3, 'consensus', 1], [4, 'market', 1], [5, 'm1', 1], [5, 'm2', 1],
    ]);
    const by = Object.fromEntries(l.map((r) => [r.forecaster, r]));
    expect(by.m3.brier).toBeCloseTo(0.09, 12);
    expect(by.consensus.brier).toBeCloseTo(0.25, 12);
    expect(by.market.brier).toBeCloseTo(0.36, 12);
    expect(by.m1.brier).toBeCloseTo(0.49, 12);
    // one forecast per forecaster: ECE = |o − p|
    expect(by.consensus.ece).toBeCloseTo(0.5, 12);
    expect(by.market.ece).toBeCloseTo(0.6, 12);
  });

  it('rounds=all averages every round before the cutoff per question', async () => {
    const r = await one(
      conn,
      `SELECT n_rounds, brier, brier_all_rounds, correct_all_rounds, market_n_rounds, market_brier_all_rounds,
              mean_all_rounds, market_probability_all_rounds
       FROM scored_consensus WHERE question_id = 'R'`,
    );
    // r1 0.2, r2 0.6, r3 0.9; r4 (2025-04-01) is after the 2025-03-20 resolution.
    expect(r.n_rounds).toBe(3);
    expect(r.brier).toBeCloseTo(0.01, 12); // latest round: (0.9 − 1)²
    expect(r.brier_all_rounds).toBeCloseTo((0.64 + 0.16 + 0.01) / 3, 12);
    expect(r.correct_all_rounds).toBeCloseTo(2 / 3, 12); // r1 wrong, r2 and r3 correct
    // market: r2 0.5 → 0.25, r3 0.8 → 0.04 (r1 has no price)
    expect(r.market_n_rounds).toBe(2);
    expect(r.market_brier_all_rounds).toBeCloseTo((0.25 + 0.04) / 2, 12);
    // the mean probabilities behind the rounds=all calibration (ECE)
    expect(r.mean_all_rounds).toBeCloseTo((0.2 + 0.6 + 0.9) / 3, 12);
    expect(r.market_probability_all_rounds).toBeCloseTo((0.5 + 0.8) / 2, 12);
    const f = await one(conn, `SELECT n_rounds, brier_all_rounds, log_loss_all_rounds, probability_all_rounds FROM scored_forecasts WHERE question_id = 'R'`);
    expect(f.probability_all_rounds).toBeCloseTo((0.2 + 0.6 + 0.9) / 3, 12);
    expect(f.n_rounds).toBe(3);
    expect(f.brier_all_rounds).toBeCloseTo((0.64 + 0.16 + 0.01) / 3, 12);
    expect(f.log_loss_all_rounds).toBeCloseTo(-(Math.log(0.2) + Math.log(0.6) + Math.log(0.9)) / 3, 12);
  });

  it('bootstrap draws: 1000 replicates of 200 group draws, deterministic', async () => {
    const w = await rows(conn, `SELECT replicate, sum(w)::BIGINT AS s FROM bootstrap_weights GROUP BY replicate`);
    expect(w).toHaveLength(1000);
    expect(w.every((x) => x.s === 200)).toBe(true);
    const g = await rows(conn, `SELECT grp, count(*)::BIGINT AS n FROM bootstrap_groups GROUP BY grp`);
    expect(g).toHaveLength(7); // 7 resolved questions, each in its own group
    const before = await rows(conn, `SELECT * FROM bootstrap_weights ORDER BY replicate, grp LIMIT 50`);
    await derive(conn);
    expect(await rows(conn, `SELECT * FROM bootstrap_weights ORDER BY replicate, grp LIMIT 50`)).toEqual(before);
  });

  it('bootstrap_weights and questions are stored in a fixed order (by replicate and group; by question id), the order their snapshot files are written in', async () => {
    // A GROUP BY's and a parallel join's rows come out in another order at each run: two publishes
    // of the same data wrote both files in two orders.
    const stored = await rows(conn, 'SELECT replicate, grp FROM bootstrap_weights');
    const sorted = [...stored].sort((a, b) => Number(a.replicate) - Number(b.replicate) || Number(a.grp) - Number(b.grp));
    expect(stored.length).toBeGreaterThan(1000);
    expect(stored).toEqual(sorted);
    const ids = (await rows(conn, 'SELECT question_id FROM questions')).map((r) => String(r.question_id));
    expect(ids).toEqual([...ids].sort());
  });

  it('bootstrap draws are the formula sql/README gives, so an analyst can rebuild them', async () => {
    // The README's words, written out here (not the derive's SQL): seed 20260101; a question's
    // group is its 0-based rank by hash(question_id, seed), then question_id, mod 200; replicate r's
    // draw j (0..199) picks group hash(seed, r, j) mod 200, and w counts the picks of a group.
    const documentedGroups = await rows(conn, `
      SELECT question_id, ((row_number() OVER (ORDER BY hash(question_id, 20260101::BIGINT), question_id) - 1) % 200)::INTEGER AS grp
      FROM bootstrap_groups ORDER BY question_id`);
    expect(documentedGroups.map((g) => Number(g.grp)).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(await rows(conn, 'SELECT question_id, grp FROM bootstrap_groups ORDER BY question_id')).toEqual(documentedGroups);
    const differing = await one(conn, `
      WITH documented AS (
        SELECT r AS replicate, (hash(20260101::BIGINT, r, j) % 200)::INTEGER AS grp, count(*)::INTEGER AS w
        FROM range(1000) AS rr(r), range(200) AS jj(j) GROUP BY ALL)
      SELECT count(*)::BIGINT AS n FROM documented AS d
      FULL JOIN bootstrap_weights AS p USING (replicate, grp)
      WHERE d.w IS DISTINCT FROM p.w`);
    expect(differing.n).toBe(0);
  });

  it('ECE interval and noise floor agree with an independent implementation', async () => {
    const s = await one(
      conn,
      `SELECT ece, ece_ci95_lo, ece_ci95_hi, ece_noise_floor, n FROM calibration_summary
       WHERE forecaster = 'm1' AND mode = 'augmented'`,
    );
    const obs = (await rows(
      conn,
      `SELECT sf.probability AS p, sf.outcome AS o, g.grp FROM scored_forecasts AS sf
       JOIN bootstrap_groups AS g USING (question_id) WHERE sf.model = 'm1' AND sf.mode = 'augmented'`,
    )) as { p: number; o: number; grp: number }[];
    const bin = (p: number) => Math.min(Math.floor(Math.round(p * 10 * 1e9) / 1e9), 9);
    const ece = (weight: (grp: number) => number): number | null => {
      const n = new Map<number, number>();
      const err = new Map<number, number>();
      let total = 0;
      for (const x of obs) {
        const w = weight(x.grp);
        n.set(bin(x.p), (n.get(bin(x.p)) ?? 0) + w);
        err.set(bin(x.p), (err.get(bin(x.p)) ?? 0) + w * (x.o - x.p));
        total += w;
      }
      if (total === 0) return null;
      let sum = 0;
      for (const e of err.values()) sum += Math.abs(e);
      return sum / total;
    };
    expect(s.ece).toBeCloseTo(ece(() => 1)!, 12);
    const weights = (await rows(conn, `SELECT replicate, grp, w FROM bootstrap_weights`)) as {
      replicate: number;
      grp: number;
      w: number;
    }[];
    const byRep = new Map<number, Map<number, number>>();
    for (const x of weights) {
      if (!byRep.has(x.replicate)) byRep.set(x.replicate, new Map());
      byRep.get(x.replicate)!.set(x.grp, x.w);
    }
    const reps = [...byRep.values()].map((m) => ece((g) => m.get(g) ?? 0)).filter((v): v is number => v !== null);
    expect(s.ece_ci95_lo).toBeCloseTo(quantile(reps, 0.025), 12);
    expect(s.ece_ci95_hi).toBeCloseTo(quantile(reps, 0.975), 12);
    expect(s.ece_ci95_lo as number).toBeLessThanOrEqual(s.ece_ci95_hi as number);
    // Noise floor: Σ_bins sqrt(2/π · Σ p(1−p)) / N.
    const pq = new Map<number, number>();
    for (const x of obs) pq.set(bin(x.p), (pq.get(bin(x.p)) ?? 0) + x.p * (1 - x.p));
    let floor = 0;
    for (const v of pq.values()) floor += Math.sqrt((2 / Math.PI) * v);
    expect(s.ece_noise_floor).toBeCloseTo(floor / obs.length, 12);
  });
});
