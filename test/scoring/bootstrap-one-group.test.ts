/**
 * An interval needs at least two bootstrap groups. The bootstrap resamples question groups
 * (51_bootstrap: 200 groups over every resolved question), so a cell whose questions all sit in
 * one group is either wholly drawn or wholly absent in every replicate: each replicate's figure is
 * the point figure, and the interval would read [v, v], a certainty no resampling supports (as over
 * a single question, which publishes no interval). Such a cell publishes no interval (and no
 * tie verdict) instead.
 *
 * Fixture: 201 resolved questions, so that exactly one bootstrap group holds two of them (groups
 * are ranks of hash(question_id, seed) modulo 200). A first derive finds those two; they are then
 * given their own category ('shared') and the only market prices, and the warehouse is derived
 * again. Models m1 and m2 forecast every question blind and informed, with different
 * probabilities, so every figure of the cells has spread across questions; m3 forecasts the two
 * questions alone.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, openDb, question, resolution, rows, type Row } from './fixture.ts';

const N = 201;
const id = (i: number) => `q${String(i).padStart(3, '0')}`;

/**
 * A database with the N resolved questions (outcomes alternate; `category` for every question),
 * `forecasts` inserted, derived once; returns it with the bootstrap groups' questions: `shared`,
 * the one group of two, and `alone`, the questions of the groups of one.
 */
async function groupedWarehouse(category: string, forecasts: (ids: string[]) => Row[]) {
  const { conn, close } = await openDb();
  const ids = Array.from({ length: N }, (_, i) => id(i));
  await insert(conn, 'questions', ids.map((q) => question(q, { category })));
  await insert(conn, 'resolutions', ids.map((q, i) => resolution(q, i % 2, '2025-03-01')));
  await insert(conn, 'forecasts', forecasts(ids));
  await derive(conn);
  const byGroup = new Map<number, string[]>();
  for (const r of await rows(conn, `SELECT question_id, grp FROM bootstrap_groups ORDER BY grp, question_id`)) {
    byGroup.set(Number(r.grp), [...(byGroup.get(Number(r.grp)) ?? []), String(r.question_id)]);
  }
  const shared = [...byGroup.values()].find((qs) => qs.length === 2)!;
  const alone = [...byGroup.values()].filter((qs) => qs.length === 1).map((qs) => qs[0]!);
  return { conn, close, shared, alone };
}

describe('a cell whose questions share one bootstrap group publishes no interval', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  let shared: string[];
  beforeAll(async () => {
    ({ conn, close, shared } = await groupedWarehouse('common', (ids) => ids.flatMap((q, i) => [
      forecast(q, 'm1', 'blind', 'r1', '2025-02-01', 0.2 + (i % 7) / 10),
      forecast(q, 'm1', 'informed', 'r1', '2025-02-01', 0.15 + (i % 5) / 10),
      forecast(q, 'm2', 'blind', 'r1', '2025-02-01', 0.3 + (i % 3) / 10),
      forecast(q, 'm2', 'informed', 'r1', '2025-02-01', 0.25 + (i % 6) / 10),
    ])));
    await conn.run(`UPDATE raw_questions SET category = 'shared' WHERE question_id IN ('${shared.join("','")}')`);
    await insert(conn, 'market_prices', shared.map((q) => ({ question_id: q, observed_at: '2025-01-31', probability: 0.5 })));
    // m3 forecasts those two questions alone
    await insert(conn, 'forecasts', shared.map((q, i) => forecast(q, 'm3', 'blind', 'r1', '2025-02-01', 0.3 + i / 2)));
    await derive(conn);
  });
  afterAll(() => close());

  it('the fixture: two questions share a group, and the cell has spread', async () => {
    expect(shared).toHaveLength(2);
    const c = await rows(conn, `SELECT DISTINCT n, brier FROM leaderboard
      WHERE dimension = 'category' AND key = 'shared' AND rounds = 'latest' AND forecaster = 'm1' AND mode = 'blind'`);
    expect(c).toHaveLength(1);
    expect(c[0]!.n).toBe(2);
  });

  it('leaderboard: no Brier, vs-market or vs-best interval and no tie verdict in the shared cell; the common cell keeps them', async () => {
    const shared = await rows(conn, `SELECT forecaster, brier_ci95_lo, brier_ci95_hi, vs_market_ci95_lo, vs_market_ci95_hi,
        vs_best_ci95_lo, vs_best_ci95_hi, tied_with_best
      FROM leaderboard WHERE dimension = 'category' AND key = 'shared' AND rounds = 'latest' AND mode = 'blind'
        AND forecaster IN ('m1', 'm2')`);
    expect(shared).toHaveLength(2);
    for (const r of shared) {
      expect(r).toMatchObject({ brier_ci95_lo: null, brier_ci95_hi: null, vs_market_ci95_lo: null, vs_market_ci95_hi: null,
        vs_best_ci95_lo: null, vs_best_ci95_hi: null, tied_with_best: null });
    }
    // Overall, the market was priced on those two questions alone: no vs-market interval there either.
    const overall = await rows(conn, `SELECT forecaster, vs_market_n, vs_market_ci95_lo, brier_ci95_lo FROM leaderboard
      WHERE dimension = 'overall' AND rounds = 'latest' AND mode = 'blind' AND forecaster = 'm1'`);
    expect(overall).toEqual([{ forecaster: 'm1', vs_market_n: 2, vs_market_ci95_lo: null, brier_ci95_lo: expect.any(Number) }]);
    const common = await rows(conn, `SELECT brier_ci95_lo, brier_ci95_hi FROM leaderboard
      WHERE dimension = 'category' AND key = 'common' AND rounds = 'latest' AND mode = 'blind' AND forecaster = 'm1'`);
    expect(common[0]!.brier_ci95_lo).toEqual(expect.any(Number));
    expect(Number(common[0]!.brier_ci95_lo)).toBeLessThan(Number(common[0]!.brier_ci95_hi));
  });

  it('information value: no interval in the shared category', async () => {
    const v = await rows(conn, `SELECT n, value_ci95_lo, value_ci95_hi FROM information_value
      WHERE dimension = 'category' AND key = 'shared' AND rounds = 'latest' AND forecaster = 'm1' AND comparison = 'blind_to_informed'`);
    expect(v).toEqual([{ n: 2, value_ci95_lo: null, value_ci95_hi: null }]);
    const c = await rows(conn, `SELECT value_ci95_lo FROM information_value
      WHERE dimension = 'category' AND key = 'common' AND rounds = 'latest' AND forecaster = 'm1' AND comparison = 'blind_to_informed'`);
    expect(c[0]!.value_ci95_lo).toEqual(expect.any(Number));
  });

  it('anchoring: the market was shown on the two questions only, so the slope has no interval', async () => {
    const a = await rows(conn, `SELECT n_slope, slope, slope_ci95_lo, slope_ci95_hi FROM anchoring
      WHERE rounds = 'latest' AND forecaster = 'm1' AND mode = 'informed'`);
    expect(a).toHaveLength(1);
    expect(a[0]).toMatchObject({ n_slope: 2, slope_ci95_lo: null, slope_ci95_hi: null });
    expect(a[0]!.slope).toEqual(expect.any(Number));
  });

  it('calibration: no ECE interval for a forecaster whose questions share one group; the others keep theirs', async () => {
    const c = await rows(conn, `SELECT forecaster, n, ece_ci95_lo, ece_ci95_hi FROM calibration_summary
      WHERE mode = 'blind' ORDER BY forecaster`);
    const m3 = c.find((r) => r.forecaster === 'm3');
    expect(m3).toMatchObject({ n: 2, ece_ci95_lo: null, ece_ci95_hi: null });
    const m1 = c.find((r) => r.forecaster === 'm1');
    expect(m1!.ece_ci95_lo).toEqual(expect.any(Number));
  });

  it("the leaderboard's since recomputation (sql/api/leaderboard-since.sql) says the same", async () => {
    const sql = readFileSync(new URL('../../sql/api/leaderboard-since.sql', import.meta.url), 'utf8');
    const cell = async (key: string) =>
      (await conn.runAndReadAll(sql, { rounds: 'latest', dimension: 'category', key, mode: 'blind', since_us: 0n }))
        .getRowObjectsJS()
        .find((r) => r.forecaster === 'm1')!;
    expect(await cell('shared')).toMatchObject({ n: 2n, brier_ci95_lo: null, brier_ci95_hi: null, vs_market_ci95_lo: null,
      vs_best_ci95_lo: null, tied_with_best: null });
    expect((await cell('common')).brier_ci95_lo).toEqual(expect.any(Number));
  });
});

/**
 * The disagreement analysis (53_disagreement.sql) under the same rule. The same 201 resolved
 * questions; the two that share a bootstrap group are the only ones forecast in the augmented
 * mode (its Spearman correlation is over those two), and in the informed mode they are the two
 * with the least disagreement among six (ntile(5) puts them together in quintile 1; the four
 * others sit in four other groups).
 */
describe('disagreement: no interval from questions that share one bootstrap group', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  let shared: string[];
  beforeAll(async () => {
    let alone: string[];
    ({ conn, close, shared, alone } = await groupedWarehouse('politics', () => []));
    const others = alone.slice(0, 4);
    const four = (q: string, mode: 'informed' | 'augmented', ps: number[]) =>
      ps.map((p, k) => forecast(q, `m${k + 1}`, mode, 'r1', '2025-02-01', p));
    await insert(conn, 'forecasts', [
      // augmented: the two shared questions only, one with more disagreement and a larger error
      ...four(shared[0]!, 'augmented', [0.4, 0.5, 0.6, 0.5]),
      ...four(shared[1]!, 'augmented', [0.1, 0.9, 0.3, 0.9]),
      // informed: the shared two with the least disagreement, then four others
      ...four(shared[0]!, 'informed', [0.5, 0.5, 0.51, 0.5]),
      ...four(shared[1]!, 'informed', [0.3, 0.31, 0.3, 0.3]),
      ...others.flatMap((q, i) => four(q, 'informed', [0.2, 0.4 + i / 10, 0.6, 0.9 - i / 20])),
    ]);
    await derive(conn);
  });
  afterAll(() => close());

  it('the Spearman correlation over two questions of one group has no interval and no verdict', async () => {
    const d = await rows(conn, `SELECT n, spearman, spearman_ci95_lo, spearman_ci95_hi, predicts_error FROM disagreement
      WHERE mode = 'augmented' AND rounds = 'latest'`);
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({ n: 2, spearman_ci95_lo: null, spearman_ci95_hi: null, predicts_error: null });
    expect(Math.abs(Number(d[0]!.spearman))).toBe(1);
  });

  it('a quintile holding the two questions of one group has no interval; the informed mode keeps its Spearman interval', async () => {
    const q = await rows(conn, `SELECT quintile, n, brier_ci95_lo, brier_ci95_hi FROM disagreement_quintiles
      WHERE mode = 'informed' AND rounds = 'latest' AND quintile = 1`);
    expect(q).toEqual([{ quintile: 1, n: 2, brier_ci95_lo: null, brier_ci95_hi: null }]);
    const d = await rows(conn, `SELECT n, spearman_ci95_lo FROM disagreement WHERE mode = 'informed' AND rounds = 'latest'`);
    expect(d[0]!.n).toBe(6);
    expect(d[0]!.spearman_ci95_lo).toEqual(expect.any(Number));
  });
});
