/**
 * Two runs dated at the same time (`quorum run --as-of T` twice: the README allows it; a first
 * start killed and started again dates its runs at the same freeze times): their forecasts tie on
 * created_at. Every "latest" the snapshot picks (the scored forecast, the scored consensus, the
 * active prediction, its model-by-model forecasts and edge, the API's latest consensus) takes the
 * same run, the one with the greater run id, so the published figures do not depend on the order
 * in which DuckDB met the rows and a consensus is always the mean of the forecasts published
 * beside it.
 *
 * Fixture: R resolves YES on 2025-03-01, A stays active with a market price of 0.5. Runs
 * r20250201-a and r20250201-b (the greater), both created at 2025-02-01: every model 0.2 in the
 * first, 0.8 in the second; written in either order.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, openDb, question, resolution, rows } from './fixture.ts';

const FIRST = 'r20250201T000000Z-aaaaaa';
const SECOND = 'r20250201T000000Z-bbbbbb';
const MODELS = ['m1', 'm2', 'm3', 'm4'];

describe.each([
  ['the lesser run id written first', [[FIRST, 0.2], [SECOND, 0.8]]],
  ['the greater run id written first', [[SECOND, 0.8], [FIRST, 0.2]]],
] as const)('runs dated at the same time, %s: every latest is the greater run id\'s', (_order, runs) => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('R'), question('A')]);
    await insert(conn, 'resolutions', [resolution('R', 1, '2025-03-01')]);
    await insert(conn, 'market_prices', [
      { question_id: 'R', observed_at: '2025-01-31', probability: 0.5 },
      { question_id: 'A', observed_at: '2025-01-31', probability: 0.5 },
    ]);
    for (const [run, p] of runs) {
      await insert(conn, 'forecasts', ['R', 'A'].flatMap((q) => MODELS.map((m) => forecast(q, m, 'blind', run, '2025-02-01', p))));
    }
    await derive(conn, new Date('2025-03-10T00:00:00Z'));
  });
  afterAll(() => close());

  it('the scored forecasts and the scored consensus', async () => {
    const f = await rows(conn, `SELECT DISTINCT run_id, probability FROM scored_forecasts WHERE question_id = 'R'`);
    expect(f).toEqual([{ run_id: SECOND, probability: 0.8 }]);
    const c = await rows(conn, `SELECT run_id, round(probability, 12) AS consensus FROM scored_consensus WHERE question_id = 'R'`);
    expect(c).toEqual([{ run_id: SECOND, consensus: 0.8 }]);
  });

  it('the active prediction, its forecasts and its edge', async () => {
    const a = await rows(conn, `SELECT run_id, round(consensus, 12) AS consensus FROM active_predictions WHERE question_id = 'A'`);
    expect(a).toEqual([{ run_id: SECOND, consensus: 0.8 }]);
    const l = await rows(conn, `SELECT DISTINCT run_id, probability FROM latest_forecasts WHERE question_id = 'A'`);
    expect(l).toEqual([{ run_id: SECOND, probability: 0.8 }]);
    const e = await rows(conn, `SELECT round(edge, 12) AS edge FROM edges WHERE question_id = 'A'`);
    expect(e).toEqual([{ edge: 0.3 }]);
  });

  it("the API's latest consensus of a question (sql/api/prediction-latest-consensus.sql)", async () => {
    const sql = readFileSync(new URL('../../sql/api/prediction-latest-consensus.sql', import.meta.url), 'utf8');
    const got = (await conn.runAndReadAll(sql, { question_id: 'A' })).getRowObjectsJson();
    expect(got.map((r) => [r.run_id, Math.round(Number(r.mean) * 1e12) / 1e12])).toEqual([[SECOND, 0.8]]);
  });

  it("the API's history of a question lists the greater run id first, the latest (sql/api/prediction-history.sql)", async () => {
    const sql = readFileSync(new URL('../../sql/api/prediction-history.sql', import.meta.url), 'utf8');
    const got = (await conn.runAndReadAll(sql, { question_id: 'A', limit: 10 })).getRowObjectsJson();
    expect(got.map((r) => [r.run_id, Math.round(Number(r.mean) * 1e12) / 1e12])).toEqual([[SECOND, 0.8], [FIRST, 0.2]]);
  });
});

/** A database with R (resolves YES on 2025-03-01; market price 0.5 observed 2025-01-31). */
async function openWithR(): Promise<{ conn: DuckDBConnection; close: () => void }> {
  const db = await openDb();
  await insert(db.conn, 'questions', [question('R')]);
  await insert(db.conn, 'resolutions', [resolution('R', 1, '2025-03-01')]);
  await insert(db.conn, 'market_prices', [{ question_id: 'R', observed_at: '2025-01-31', probability: 0.5 }]);
  return db;
}

/**
 * R's database (openWithR) with `forecasts` of every model, derived on 2025-03-10, open for the
 * enclosing describe block (its `conn` once beforeAll has run).
 */
function derivedWithR(forecasts: (model: string) => ReturnType<typeof forecast>[]): { readonly conn: DuckDBConnection } {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openWithR());
    await insert(conn, 'forecasts', MODELS.flatMap(forecasts));
    await derive(conn, new Date('2025-03-10T00:00:00Z'));
  });
  afterAll(() => close());
  return { get conn() { return conn; } };
}

/**
 * rounds=all with two runs dated at the same time: they are one round (one point in time), not
 * two, so the all-rounds figures take that round once, the greater run id's forecast, as every
 * latest does. Otherwise repeating `quorum run --as-of T` would change every rounds=all figure
 * (the round at T weighed twice) with no new information.
 *
 * Fixture (hand-computed): R resolves YES on 2025-03-01, market price 0.5 observed 2025-01-31.
 * Round 2025-01-15 (one run, E): every model blind 0.4, informed 0.45 (market then: none, so no
 * comparator for this round). Round 2025-02-01, runs FIRST (blind 0.2, informed 0.3) and SECOND
 * (blind 0.8, informed 0.65). Two rounds per model and mode: 2025-01-15 and 2025-02-01 (SECOND's).
 *   blind:    brier_all = ((0.4 − 1)² + (0.8 − 1)²) / 2 = (0.36 + 0.04) / 2 = 0.2
 *   informed: brier_all = ((0.45 − 1)² + (0.65 − 1)²) / 2 = (0.3025 + 0.1225) / 2 = 0.2125
 *   market (consensus rounds with a fresh comparator: 2025-02-01 only): 1 round, (0.5 − 1)² = 0.25
 *   anchoring informed, rounds all (rounds with a comparator: 2025-02-01 only, SECOND's):
 *     x = 0.5 − 0.8 = −0.3, y = 0.65 − 0.8 = −0.15, slope = xy / x² = 0.045 / 0.09 = 0.5;
 *     mean |p − m| = |0.65 − 0.5| = 0.15.
 */
describe('runs dated at the same time are one round for rounds=all', () => {
  const EARLY = 'r20250115T000000Z-eeeeee';
  const runs: [string, string, number, number][] = [
    [EARLY, '2025-01-15', 0.4, 0.45],
    [FIRST, '2025-02-01', 0.2, 0.3],
    [SECOND, '2025-02-01', 0.8, 0.65],
  ];
  const db = derivedWithR((m) => runs.flatMap(([run, at, blind, informed]) => [
    forecast('R', m, 'blind', run, at, blind),
    forecast('R', m, 'informed', run, at, informed),
  ]));

  it('scored_forecasts: two rounds, the later one the greater run id\'s', async () => {
    const f = await rows(db.conn, `SELECT DISTINCT mode, n_rounds, round(brier_all_rounds, 12) AS b, round(probability_all_rounds, 12) AS p
      FROM scored_forecasts ORDER BY mode`);
    expect(f).toEqual([
      { mode: 'blind', n_rounds: 2, b: 0.2, p: 0.6 },
      { mode: 'informed', n_rounds: 2, b: 0.2125, p: 0.55 },
    ]);
  });

  it('scored_consensus: two rounds of the consensus, one of them with a fresh comparator', async () => {
    const c = await rows(db.conn, `SELECT mode, n_rounds, round(brier_all_rounds, 12) AS b, round(mean_all_rounds, 12) AS p,
        round(sd_all_rounds, 12) AS sd, market_n_rounds, round(market_brier_all_rounds, 12) AS mb
      FROM scored_consensus ORDER BY mode`);
    expect(c).toEqual([
      { mode: 'blind', n_rounds: 2, b: 0.2, p: 0.6, sd: 0, market_n_rounds: 1, mb: 0.25 },
      { mode: 'informed', n_rounds: 2, b: 0.2125, p: 0.55, sd: 0, market_n_rounds: 1, mb: 0.25 },
    ]);
  });

  it('the leaderboard (rounds all) and anchoring (rounds all)', async () => {
    const l = await rows(db.conn, `SELECT DISTINCT mode, round(brier, 12) AS b FROM leaderboard
      WHERE rounds = 'all' AND dimension = 'overall' AND kind <> 'market' ORDER BY mode`);
    expect(l).toEqual([{ mode: 'blind', b: 0.2 }, { mode: 'informed', b: 0.2125 }]);
    const a = await rows(db.conn, `SELECT DISTINCT n_slope, round(slope, 12) AS slope, round(mean_abs_diff_market, 12) AS d
      FROM anchoring WHERE rounds = 'all' AND mode = 'informed'`);
    expect(a).toEqual([{ n_slope: 1, slope: 0.5, d: 0.15 }]);
  });
});

/**
 * rounds=all anchoring pairs a round's forecast with the blind forecast of the same run, as
 * 55_anchoring's header says, also when runs dated at the same time asked different modes (the
 * second `quorum run --as-of T` with QUORUM_MODES=informed). Fixture (hand-computed): R resolves
 * YES on 2025-03-01, market price 0.5 observed 2025-01-31. At 2025-02-01, FIRST forecast blind
 * 0.2 and informed 0.3, SECOND (the greater run id) informed 0.65 only. The round's informed
 * forecast is SECOND's 0.65 and its blind one FIRST's 0.2, but SECOND has no blind forecast of its
 * own, so the round gives no slope pair (paired across the runs it would: x = 0.5 − 0.2 = 0.3,
 * y = 0.65 − 0.2 = 0.45, slope 1.5); mean |p − m| = |0.65 − 0.5| = 0.15 still counts.
 */
describe('rounds=all anchoring: a round pairs each forecast with its own run\'s blind forecast', () => {
  const db = derivedWithR((m) => [
    forecast('R', m, 'blind', FIRST, '2025-02-01', 0.2),
    forecast('R', m, 'informed', FIRST, '2025-02-01', 0.3),
    forecast('R', m, 'informed', SECOND, '2025-02-01', 0.65),
  ]);

  it('no slope pair from the informed run without a blind forecast; its distance to the market counts', async () => {
    const a = await rows(db.conn, `SELECT DISTINCT n_market, n_slope, slope, round(mean_abs_diff_market, 12) AS d
      FROM anchoring WHERE rounds = 'all' AND mode = 'informed'`);
    expect(a).toEqual([{ n_market: 1, n_slope: 0, slope: null, d: 0.15 }]);
    const b = await rows(db.conn, `SELECT DISTINCT n_market, round(mean_abs_diff_market, 12) AS d
      FROM anchoring WHERE rounds = 'all' AND mode = 'blind'`);
    expect(b).toEqual([{ n_market: 1, d: 0.3 }]);
  });
});

/**
 * The other way round (found by an independent recomputation of anchoring from the README's
 * definitions): the greater run id at T asked the blind mode only, so the round's informed forecast
 * is the lesser run's, and that run has a blind forecast of its own, which the README pairs it
 * with ("each round r paired with the same run's blind forecast b_r"). Fixture (hand-computed): R
 * resolves YES on 2025-03-01, market price 0.5 observed 2025-01-31. At 2025-02-01, FIRST forecast
 * blind 0.2 and informed 0.3, SECOND (the greater run id) blind 0.8 only. The informed round:
 * FIRST's 0.3 with FIRST's blind 0.2: x = 0.5 − 0.2 = 0.3, y = 0.3 − 0.2 = 0.1, slope = 0.03 / 0.09
 * = 1/3; mean |p − m| = |0.3 − 0.5| = 0.2. The blind round is SECOND's 0.8: |0.8 − 0.5| = 0.3.
 */
describe('rounds=all anchoring: a round whose greater run asked the blind mode only', () => {
  const db = derivedWithR((m) => [
    forecast('R', m, 'blind', FIRST, '2025-02-01', 0.2),
    forecast('R', m, 'informed', FIRST, '2025-02-01', 0.3),
    forecast('R', m, 'blind', SECOND, '2025-02-01', 0.8),
  ]);

  it('pairs the informed forecast with the blind forecast of its own run, not with none', async () => {
    const a = await rows(db.conn, `SELECT DISTINCT n_market, n_slope, round(slope, 12) AS slope, round(mean_abs_diff_market, 12) AS d
      FROM anchoring WHERE rounds = 'all' AND mode = 'informed'`);
    expect(a).toEqual([{ n_market: 1, n_slope: 1, slope: Math.round(1e12 / 3) / 1e12, d: 0.2 }]);
    const b = await rows(db.conn, `SELECT DISTINCT n_market, round(mean_abs_diff_market, 12) AS d
      FROM anchoring WHERE rounds = 'all' AND mode = 'blind'`);
    expect(b).toEqual([{ n_market: 1, d: 0.3 }]);
  });
});
