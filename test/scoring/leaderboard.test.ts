/**
 * `leaderboard` (52_leaderboard.sql): a six-question fixture with figures checked by hand, and every
 * row of every cell (overall, category, domain, horizon; rounds latest and all) recomputed by an
 * independent TypeScript implementation from the per-question rows and the published bootstrap draws.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, one, openDb, question, resolution, rows } from './fixture.ts';
import { interval, loadDraws, pairedDiff, weightedMean, type Draws } from './reference.ts';

interface Obs {
  f: string;
  q: string;
  brier: number;
  logLoss: number;
  correct: number | null;
  p: number | null;
  outcome: number;
  keys: Record<string, string>;
}

const brier = (p: number, o: number) => (p - o) ** 2;
const clip = (p: number) => Math.max(0.001, Math.min(0.999, p));
const logLoss = (p: number, o: number) => (o === 1 ? -Math.log(clip(p)) : -Math.log(1 - clip(p)));
const correct = (p: number | null, o: number) => {
  if (p === null) return null;
  const r = Math.round(p * 1e9) / 1e9;
  return r === 0.5 ? null : (r > 0.5) === (o === 1) ? 1 : 0;
};

/** Observations of one mode and rounds, from the published scored tables. */
async function observations(conn: DuckDBConnection, mode: string, rounds: 'latest' | 'all'): Promise<Obs[]> {
  const sc = await rows(conn, `SELECT * FROM scored_consensus WHERE mode = '${mode}'`);
  const keysOf = new Map<string, Record<string, string>>();
  const out: Obs[] = [];
  for (const r of sc) {
    const keys = {
      overall: 'all',
      category: String(r.category ?? 'unknown'),
      domain: String(r.domain ?? 'unknown'),
      horizon: String(r.horizon_bucket),
    };
    keysOf.set(String(r.question_id), keys);
    const o = Number(r.outcome);
    const q = String(r.question_id);
    const stats: [string, number, string, unknown][] = [
      ['consensus_mean', Number(r.probability), '', r.mean_all_rounds],
      ['consensus_median', Number(r.median), 'median_', r.median_all_rounds],
      ['consensus_logit_mean', Number(r.logit_mean), 'logit_mean_', r.logit_mean_all_rounds],
    ];
    for (const [f, p, prefix, pAll] of stats) {
      if (rounds === 'latest') out.push({ f, q, brier: brier(p, o), logLoss: logLoss(p, o), correct: correct(p, o), p, outcome: o, keys });
      else {
        out.push({
          f, q, outcome: o, keys, p: Number(pAll),
          brier: Number(r[`${prefix}brier_all_rounds`]),
          logLoss: Number(r[`${prefix}log_loss_all_rounds`]),
          correct: r[`${prefix}correct_all_rounds`] === null ? null : Number(r[`${prefix}correct_all_rounds`]),
        });
      }
    }
    if (rounds === 'latest' && r.market_probability !== null) {
      const p = Number(r.market_probability);
      out.push({ f: 'market', q, brier: brier(p, o), logLoss: logLoss(p, o), correct: correct(p, o), p, outcome: o, keys });
    }
    if (rounds === 'all' && r.market_brier_all_rounds !== null) {
      out.push({
        f: 'market', q, outcome: o, keys, p: Number(r.market_probability_all_rounds),
        brier: Number(r.market_brier_all_rounds),
        logLoss: Number(r.market_log_loss_all_rounds),
        correct: r.market_correct_all_rounds === null ? null : Number(r.market_correct_all_rounds),
      });
    }
  }
  for (const r of await rows(conn, `SELECT * FROM scored_forecasts WHERE mode = '${mode}'`)) {
    const q = String(r.question_id);
    const o = Number(r.outcome);
    const p = Number(r.probability);
    const keys = keysOf.get(q)!;
    if (rounds === 'latest') out.push({ f: String(r.model), q, brier: brier(p, o), logLoss: logLoss(p, o), correct: correct(p, o), p, outcome: o, keys });
    else {
      out.push({
        f: String(r.model), q, outcome: o, keys, p: Number(r.probability_all_rounds),
        brier: Number(r.brier_all_rounds),
        logLoss: Number(r.log_loss_all_rounds),
        correct: r.correct_all_rounds === null ? null : Number(r.correct_all_rounds),
      });
    }
  }
  return out;
}

/** The leaderboard rows of one cell, computed with plain loops. */
function referenceCell(all: Obs[], dimension: string, key: string, draws: Draws) {
  const qbar = new Map<string, number[]>();
  for (const o of all) qbar.set(o.q, [...(qbar.get(o.q) ?? []), o.brier]);
  const obs = all.filter((o) => o.keys[dimension] === key);
  const grand = obs.reduce((a, o) => a + o.brier, 0) / obs.length;
  const forecasters = [...new Set(obs.map((o) => o.f))].sort();
  const briers = new Map(forecasters.map((f) => [f, new Map(obs.filter((o) => o.f === f).map((o) => [o.q, o.brier]))]));
  const point = forecasters.map((f) => {
    const mine = obs.filter((o) => o.f === f);
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const dir = mine.filter((o) => o.correct !== null);
    const withP = mine.filter((o) => o.p !== null);
    let ece: number | null = null;
    let eceNoiseFloor: number | null = null;
    if (withP.length > 0) {
      const err = new Map<number, number>();
      const pq = new Map<number, number>();
      for (const o of withP) {
        const bin = Math.min(Math.floor(Math.round(o.p! * 10 * 1e9) / 1e9), 9);
        err.set(bin, (err.get(bin) ?? 0) + o.outcome - o.p!);
        pq.set(bin, (pq.get(bin) ?? 0) + o.p! * (1 - o.p!));
      }
      ece = [...err.values()].reduce((a, e) => a + Math.abs(e), 0) / withP.length;
      // a calibrated forecaster's expected |Σ (o − p)| per bin: sqrt(2/π · Σ p(1 − p))
      eceNoiseFloor = [...pq.values()].reduce((a, v) => a + Math.sqrt((2 / Math.PI) * v), 0) / withP.length;
    }
    return {
      forecaster: f,
      n: mine.length,
      brier: avg(mine.map((o) => o.brier)),
      log_loss: avg(mine.map((o) => o.logLoss)),
      n_directional: dir.length,
      accuracy_pct: dir.length ? (100 * dir.reduce((a, o) => a + o.correct!, 0)) / dir.length : null,
      ece,
      ece_noise_floor: eceNoiseFloor,
      brier_adjusted: avg(mine.map((o) => o.brier - avg(qbar.get(o.q)!))) + grand,
    };
  });
  const best = [...point].sort((a, b) => a.brier_adjusted - b.brier_adjusted || (a.forecaster < b.forecaster ? -1 : 1))[0]!.forecaster;
  return point.map((p) => {
    const mine = briers.get(p.forecaster)!;
    const vm = briers.has('market') ? pairedDiff(mine, briers.get('market')!) : new Map<string, number>();
    const vb = pairedDiff(mine, briers.get(best)!);
    // no interval over fewer than two questions (one question: every replicate would be [b, b])
    const ci = (m: Map<string, number>) => (m.size >= 2 ? interval(draws, (r) => weightedMean(draws, r, m)) : null);
    const mean = (m: Map<string, number>) => (m.size ? [...m.values()].reduce((a, b) => a + b, 0) / m.size : null);
    const b = ci(vb);
    return {
      ...p,
      rank: 1 + point.filter((o) => o.brier_adjusted < p.brier_adjusted).length,
      best,
      brier_ci95: ci(mine),
      vs_market_n: vm.size,
      vs_market_diff: mean(vm),
      vs_market_ci95: vm.size ? ci(vm) : null,
      vs_best_n: vb.size,
      vs_best_diff: mean(vb),
      vs_best_ci95: b,
      tied_with_best: b ? b[0] <= 0 && b[1] >= 0 : null,
      n_questions: new Set(obs.map((o) => o.q)).size,
    };
  });
}

describe('leaderboard', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  const ids = ['L1', 'L2', 'L3', 'L4', 'L5', 'L6'];
  const outcome: Record<string, number> = { L1: 1, L2: 0, L3: 1, L4: 0, L5: 1, L6: 0 };
  const m1: Record<string, number> = { L1: 0.9, L2: 0.2, L3: 0.6, L4: 0.3, L5: 0.7, L6: 0.4 };
  const m2: Record<string, number> = { L1: 0.6, L2: 0.5, L3: 0.4, L4: 0.6, L5: 0.5, L6: 0.5 };

  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', ids.map((id, i) => question(id, { category: i < 3 ? 'politics' : 'finance' })));
    await insert(conn, 'forecasts', [
      ...ids.flatMap((id) => [
        forecast(id, 'm1', 'augmented', 'r2', '2025-03-01', m1[id]!),
        forecast(id, 'm2', 'augmented', 'r2', '2025-03-01', m2[id]!),
        forecast(id, 'm1', 'augmented', 'r1', '2025-02-01', 0.5),
        forecast(id, 'm2', 'augmented', 'r1', '2025-02-01', 0.3),
      ]),
    ]);
    await insert(conn, 'market_prices', [
      { question_id: 'L1', observed_at: '2025-02-28', probability: 0.7 },
      { question_id: 'L2', observed_at: '2025-02-28', probability: 0.3 },
      { question_id: 'L3', observed_at: '2025-02-28', probability: 0.8 },
      { question_id: 'L4', observed_at: '2025-02-28', probability: 0.1 },
      // L5: a comparator for round r1 (2 days old) that is stale by round r2 (30 days > 7): the
      // market has L5 at rounds=all but not at latest, where it must not reach the ECE either
      { question_id: 'L5', observed_at: '2025-01-30', probability: 0.35 },
    ]);
    await insert(conn, 'resolutions', ids.map((id) => resolution(id, outcome[id]!, '2025-03-20')));
    await derive(conn);
  });
  afterAll(() => close());

  it('hand-computed figures (augmented, latest, overall)', async () => {
    const lb = await rows(
      conn,
      `SELECT * FROM leaderboard WHERE mode = 'augmented' AND rounds = 'latest' AND dimension = 'overall' ORDER BY rank`,
    );
    const by = Object.fromEntries(lb.map((r) => [r.forecaster, r]));
    // m1: (0.01 + 0.04 + 0.16 + 0.09 + 0.09 + 0.16) / 6 = 0.55 / 6
    expect(by.m1!.brier).toBeCloseTo(0.55 / 6, 12);
    // m2: (0.16 + 0.25 + 0.36 + 0.36 + 0.25 + 0.25) / 6 = 1.63 / 6
    expect(by.m2!.brier).toBeCloseTo(1.63 / 6, 12);
    // consensus mean: 0.75, 0.35, 0.5, 0.45, 0.6, 0.45 → 0.0625 + 0.1225 + 0.25 + 0.2025 + 0.16 + 0.2025 = 1.0
    expect(by.consensus_mean!.brier).toBeCloseTo(1 / 6, 12);
    // L3's consensus is exactly 0.5: no direction → 5 directional; correct: L1, L2, L4, L5, L6 = 5/5
    expect(by.consensus_mean).toMatchObject({ n_directional: 5, accuracy_pct: 100 });
    // market on L1–L4 only: 0.09 + 0.09 + 0.04 + 0.01 = 0.23 → 0.0575
    expect(by.market).toMatchObject({ n: 4, kind: 'market' });
    expect(by.market!.brier).toBeCloseTo(0.0575, 12);
    // m1 − market on L1–L4: (0.30 − 0.23) / 4 = 0.0175
    expect(by.m1!.vs_market_n).toBe(4);
    expect(by.m1!.vs_market_diff).toBeCloseTo(0.0175, 12);
    expect(by.m1).toMatchObject({ kind: 'model', n_questions: 6, sufficient: false });
    // the best (lowest difficulty-adjusted Brier) is tied with itself, difference 0
    const best = lb.find((r) => r.is_best)!;
    expect(best).toMatchObject({ rank: 1, vs_best_diff: 0, vs_best_ci95_lo: 0, vs_best_ci95_hi: 0, tied_with_best: true });
  });

  it('every cell matches the independent implementation (both rounds)', async () => {
    const draws = await loadDraws(conn);
    expect(draws.replicates).toBe(1000);
    for (const rounds of ['latest', 'all'] as const) {
      const obs = await observations(conn, 'augmented', rounds);
      const cells = await rows(
        conn,
        `SELECT DISTINCT dimension, key FROM leaderboard WHERE mode = 'augmented' AND rounds = '${rounds}'`,
      );
      expect(cells.length).toBe(1 + 2 + 1 + 1); // overall, 2 categories, 1 domain, 1 horizon
      for (const { dimension, key } of cells) {
        const ref = referenceCell(obs, String(dimension), String(key), draws);
        const got = await rows(
          conn,
          `SELECT * FROM leaderboard WHERE mode = 'augmented' AND rounds = '${rounds}'
           AND dimension = '${dimension}' AND key = '${key}' ORDER BY forecaster`,
        );
        expect(got.map((g) => g.forecaster)).toEqual(ref.map((r) => r.forecaster));
        for (const [i, r] of ref.entries()) {
          const g = got[i]!;
          const ctx = `${rounds}/${dimension}/${key}/${r.forecaster}`;
          expect(g.n, ctx).toBe(r.n);
          expect(g.rank, ctx).toBe(r.rank);
          expect(g.best, ctx).toBe(r.best);
          expect(g.n_questions, ctx).toBe(r.n_questions);
          for (const k of ['brier', 'log_loss', 'brier_adjusted', 'accuracy_pct', 'ece', 'ece_noise_floor', 'vs_market_diff', 'vs_best_diff'] as const) {
            if (r[k] === null) expect(g[k], `${ctx} ${k}`).toBeNull();
            else expect(g[k] as number, `${ctx} ${k}`).toBeCloseTo(r[k], 10);
          }
          expect(g.n_directional, ctx).toBe(r.n_directional);
          expect(g.vs_market_n ?? 0, ctx).toBe(r.vs_market_n);
          expect(g.vs_best_n, ctx).toBe(r.vs_best_n);
          expect(g.tied_with_best, ctx).toBe(r.tied_with_best);
          for (const [k, v] of [['brier_ci95', r.brier_ci95], ['vs_market_ci95', r.vs_market_ci95], ['vs_best_ci95', r.vs_best_ci95]] as const) {
            if (v === null) expect(g[`${k}_lo`], `${ctx} ${k}`).toBeNull();
            else {
              expect(g[`${k}_lo`] as number, `${ctx} ${k}`).toBeCloseTo(v[0], 10);
              expect(g[`${k}_hi`] as number, `${ctx} ${k}`).toBeCloseTo(v[1], 10);
            }
          }
        }
      }
    }
  });

  it('rounds=all averages the two rounds per question first', async () => {
    const m = await one(
      conn,
      `SELECT n, brier FROM leaderboard WHERE mode = 'augmented' AND rounds = 'all' AND dimension = 'overall' AND forecaster = 'm1'`,
    );
    // per question mean of r1 (0.5: 0.25 each) and r2: (0.25 + b_r2) / 2, then the mean over 6
    const r2 = [0.01, 0.04, 0.16, 0.09, 0.09, 0.16];
    expect(m.n).toBe(6);
    expect(m.brier).toBeCloseTo(r2.reduce((a, b) => a + (0.25 + b) / 2, 0) / 6, 12);
  });
});
