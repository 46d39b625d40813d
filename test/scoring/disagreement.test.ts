/**
 * `disagreement` and `disagreement_quintiles` (53_disagreement.sql): a hand-computed four-question
 * case, and the 45-question analysis fixture recomputed by an independent TypeScript implementation
 * (average ranks, Spearman, the AUROC by counting pairs, quintiles by sorting, the bootstrap from the
 * published draws). The verdict follows from the interval.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { insertAnalysisFixture } from './analysis-fixture.ts';
import { derive, forecast, insert, one, openDb, question, resolution, rows } from './fixture.ts';
import { interval, loadDraws, pearson, ranks } from './reference.ts';

describe('disagreement: hand-computed', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    // Four questions, outcome 1, two models each: sd = |a − b| / 2, error = 1 − mean.
    //   A: 0.9, 0.9 → sd 0,    error 0.1, correct
    //   B: 0.8, 0.6 → sd 0.1,  error 0.3, correct
    //   C: 0.7, 0.1 → sd 0.3,  error 0.6, wrong
    //   D: 0.6, 0.0 → sd 0.3,  error 0.7, wrong
    const p: Record<string, [number, number]> = { A: [0.9, 0.9], B: [0.8, 0.6], C: [0.7, 0.1], D: [0.6, 0.0] };
    await insert(conn, 'questions', Object.keys(p).map((id) => question(id)));
    await insert(conn, 'forecasts', Object.entries(p).flatMap(([id, [a, b]]) => [
      forecast(id, 'm1', 'augmented', 'r1', '2025-03-01', a),
      forecast(id, 'm2', 'augmented', 'r1', '2025-03-01', b),
    ]));
    await insert(conn, 'resolutions', Object.keys(p).map((id) => resolution(id, 1, '2025-03-20')));
    await derive(conn);
  });
  afterAll(() => close());

  it('Spearman, AUROC and quintiles', async () => {
    const d = await one(conn, `SELECT * FROM disagreement WHERE mode = 'headline' AND rounds = 'latest'`);
    // ranks of sd: A 1, B 2, C and D tie at 3.5; ranks of error: 1, 2, 3, 4.
    // centred: x = −1.5, −0.5, 1, 1; y = −1.5, −0.5, 0.5, 1.5 → Σxy = 2.25 + 0.25 + 0.5 + 1.5 = 4.5,
    // Σx² = 2.25 + 0.25 + 1 + 1 = 4.5, Σy² = 5 → ρ = 4.5 / sqrt(22.5) = 0.948683
    expect(d.n).toBe(4);
    expect(d.spearman).toBeCloseTo(4.5 / Math.sqrt(22.5), 12);
    // AUROC: wrong {C, D} have sd 0.3, correct {A, B} 0, 0.1: all four pairs wrong > correct → 1
    expect(d).toMatchObject({ n_directional: 4, n_wrong: 2, auroc_wrong_direction: 1 });
    // rounds=all has a direction per round, so no AUROC and none of its counts (not zeros)
    const all = await one(conn, `SELECT * FROM disagreement WHERE mode = 'headline' AND rounds = 'all'`);
    expect(all).toMatchObject({ n: 4, n_directional: null, n_wrong: null, auroc_wrong_direction: null });
    const q = await rows(conn, `SELECT quintile, n, sd_min, brier FROM disagreement_quintiles
                                 WHERE mode = 'headline' AND rounds = 'latest' ORDER BY quintile`);
    // ntile(5) of 4 questions: one each in quintiles 1..4
    expect(q.map((r) => r.n)).toEqual([1, 1, 1, 1]);
    expect(q[3]!.brier).toBeCloseTo(0.49, 12); // D: (0.3 − 1)²
  });
});

/** x rounded to 9 decimals (the ranking precision of 53_disagreement.sql). */
const r9 = (x: number) => Math.round(x * 1e9) / 1e9;

describe('disagreement: independent implementation', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insertAnalysisFixture(conn);
    await derive(conn);
  });
  afterAll(() => close());

  it('matches for every mode and the headline (rounds latest and all)', async () => {
    const draws = await loadDraws(conn);
    for (const mode of ['blind', 'informed', 'augmented', 'headline']) {
      for (const rounds of ['latest', 'all'] as const) {
        const sc = await rows(
          conn,
          `SELECT question_id, sd, probability, outcome, brier, direction, sd_all_rounds, abs_error_all_rounds,
                  brier_all_rounds FROM scored_consensus
           WHERE n_models >= 2 AND ${mode === 'headline' ? 'is_headline' : `mode = '${mode}'`}`,
        );
        const obs = sc.map((r) => ({
          q: String(r.question_id),
          sd: Number(rounds === 'latest' ? r.sd : r.sd_all_rounds),
          err: rounds === 'latest' ? Math.abs(Number(r.probability) - Number(r.outcome)) : Number(r.abs_error_all_rounds),
          brier: Number(rounds === 'latest' ? r.brier : r.brier_all_rounds),
          wrong: rounds === 'latest' && r.direction !== 'none' ? (r.direction === 'wrong' ? 1 : 0) : null,
        }));
        // ranked rounded to 9 decimals, as the SQL does: equal sds and errors tie whatever their
        // last floating bits (which follow the order the aggregates summed in)
        const rx = ranks(obs.map((o) => r9(o.sd)));
        const ry = ranks(obs.map((o) => r9(o.err)));
        const rho = pearson(rx, ry);
        const ci = interval(draws, (rep) => {
          const x: number[] = [];
          const y: number[] = [];
          obs.forEach((o, i) => {
            for (let k = 0; k < draws.weight(rep, o.q); k++) {
              x.push(rx[i]!);
              y.push(ry[i]!);
            }
          });
          return x.length ? pearson(x, y) : null;
        });
        const got = await one(conn, `SELECT * FROM disagreement WHERE mode = '${mode}' AND rounds = '${rounds}'`);
        const ctx = `${mode}/${rounds}`;
        expect(got.n, ctx).toBe(obs.length);
        expect(got.spearman as number, ctx).toBeCloseTo(rho!, 10);
        expect(got.spearman_ci95_lo as number, ctx).toBeCloseTo(ci![0], 10);
        expect(got.spearman_ci95_hi as number, ctx).toBeCloseTo(ci![1], 10);
        // the verdict reads the interval as published (6 decimals), as tied_with_best does
        const lo6 = Math.round(ci![0] * 1e6) / 1e6;
        const hi6 = Math.round(ci![1] * 1e6) / 1e6;
        expect(got.predicts_error, ctx).toBe(lo6 > 0 ? 'true' : hi6 < 0 ? 'false' : 'inconclusive');
        if (rounds === 'latest') {
          const wrong = obs.filter((o) => o.wrong === 1);
          const right = obs.filter((o) => o.wrong === 0);
          let u = 0;
          for (const w of wrong) for (const c of right) u += r9(w.sd) > r9(c.sd) ? 1 : r9(w.sd) === r9(c.sd) ? 0.5 : 0;
          expect(got.auroc_wrong_direction as number, ctx).toBeCloseTo(u / (wrong.length * right.length), 12);
        } else expect(got.auroc_wrong_direction, ctx).toBeNull();
        // quintiles: sorted by (sd, question_id), ntile(5)
        const sorted = [...obs].sort((a, b) => r9(a.sd) - r9(b.sd) || (a.q < b.q ? -1 : 1));
        const n = sorted.length;
        const big = n % 5;
        const size = Math.floor(n / 5);
        const qs = await rows(
          conn,
          `SELECT * FROM disagreement_quintiles WHERE mode = '${mode}' AND rounds = '${rounds}' ORDER BY quintile`,
        );
        let start = 0;
        for (let k = 0; k < 5; k++) {
          const len = size + (k < big ? 1 : 0);
          const part = sorted.slice(start, start + len);
          start += len;
          const briers = new Map(part.map((o) => [o.q, o.brier]));
          const qci = interval(draws, (rep) => {
            let s = 0;
            let w = 0;
            for (const [q, b] of briers) {
              s += draws.weight(rep, q) * b;
              w += draws.weight(rep, q);
            }
            return w ? s / w : null;
          });
          expect(qs[k]!.n, `${ctx} q${k + 1}`).toBe(len);
          expect(qs[k]!.brier as number, `${ctx} q${k + 1}`).toBeCloseTo(part.reduce((a, o) => a + o.brier, 0) / len, 12);
          expect(qs[k]!.sd_max as number).toBeCloseTo(part[len - 1]!.sd, 12);
          expect(qs[k]!.brier_ci95_lo as number, `${ctx} q${k + 1}`).toBeCloseTo(qci![0], 10);
          expect(qs[k]!.brier_ci95_hi as number, `${ctx} q${k + 1}`).toBeCloseTo(qci![1], 10);
        }
      }
    }
  });

  // The interval is published to 6 decimals (GET /api/analysis/disagreement/ `spearman_ci95`), and the
  // verdict beside it says "the interval contains 0" or not: a lower bound of 3e-7 reads [0, …] and
  // must not be called `true` (nor an upper bound of −3e-7, read [… , 0] or [… , -0], `false`), the
  // rule `tied_with_best` follows (52_leaderboard.sql). The rule is the macro 53_disagreement.sql
  // derives `predicts_error` with, checked here on the bounds a bootstrap cannot be steered to.
  it('a bound that rounds to 0 at 6 decimals is inconclusive; one that does not decides', async () => {
    const verdict = async (lo: number | null, hi: number | null) =>
      (await one(conn, `SELECT _predicts_error(${lo ?? 'NULL'}::DOUBLE, ${hi ?? 'NULL'}::DOUBLE) AS v`)).v;
    expect(await verdict(3e-7, 0.2)).toBe('inconclusive');
    expect(await verdict(1e-17, 0.2)).toBe('inconclusive');
    expect(await verdict(-0.2, -3e-7)).toBe('inconclusive');
    expect(await verdict(5e-7, 0.2)).toBe('true'); // published 0.000001
    expect(await verdict(-0.2, -5e-7)).toBe('false');
    expect(await verdict(-0.1, 0.1)).toBe('inconclusive');
    expect(await verdict(null, null)).toBeNull();
  });
});
