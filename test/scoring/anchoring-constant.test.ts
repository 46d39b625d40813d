/**
 * `anchoring.corr_market` when p or the market is constant (55_anchoring.sql, sql/README.md): the
 * correlation is undefined and is published NULL, as the file's header says, never NaN (a NaN in the
 * Parquet turns an analyst's avg() over the column into NaN; the API already maps it to null).
 *
 * Fixture: models m1, m2 forecast Q1 and Q2 (both resolve YES on 03-01) in blind mode on 02-01;
 * the market traded at 0.4 on 01-31 (fresh) on both questions.
 *   m1: 0.3 and 0.7 — p varies, the market does not → corr undefined, NULL
 *   m2: 0.5 and 0.5 — both constant → NULL
 *   consensus_mean: 0.4 and 0.6, the market constant → NULL
 * mean |p − m|: m1 (0.1 + 0.3) / 2 = 0.2; m2 0.1; consensus (0 + 0.2) / 2 = 0.1.
 * A third question Q3 has a price only for m1's one-question cell of the informed mode: n_market 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, openDb, question, resolution, rows } from './fixture.ts';

describe('anchoring: a constant p or market has no correlation (NULL, not NaN)', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('Q1'), question('Q2'), question('Q3')]);
    await insert(conn, 'resolutions', [resolution('Q1', 1, '2025-03-01'), resolution('Q2', 1, '2025-03-01'), resolution('Q3', 0, '2025-03-01')]);
    await insert(conn, 'market_prices', ['Q1', 'Q2', 'Q3'].map((q) => ({ question_id: q, venue: 'polymarket', observed_at: '2025-01-31', probability: 0.4, ingested_at: '2025-01-31' })));
    await insert(conn, 'forecasts', [
      forecast('Q1', 'm1', 'blind', 'r1', '2025-02-01', 0.3), forecast('Q2', 'm1', 'blind', 'r1', '2025-02-01', 0.7),
      forecast('Q1', 'm2', 'blind', 'r1', '2025-02-01', 0.5), forecast('Q2', 'm2', 'blind', 'r1', '2025-02-01', 0.5),
      forecast('Q3', 'm1', 'informed', 'r1', '2025-02-01', 0.2),
    ]);
    await derive(conn);
  });
  afterAll(() => close());

  it('corr_market is NULL for a constant side, mean |p − m| as computed by hand', async () => {
    const got = await rows(conn, `SELECT forecaster, mode, n_market, corr_market, isnan(corr_market) AS nan, mean_abs_diff_market
      FROM anchoring WHERE rounds = 'latest' ORDER BY forecaster, mode`);
    const by = Object.fromEntries(got.map((r) => [`${r.forecaster}/${r.mode}`, r]));
    expect(by['m1/blind']).toMatchObject({ n_market: 2, corr_market: null });
    expect(by['m2/blind']).toMatchObject({ n_market: 2, corr_market: null });
    expect(by['consensus_mean/blind']).toMatchObject({ n_market: 2, corr_market: null });
    expect(by['m1/informed']).toMatchObject({ n_market: 1, corr_market: null });
    expect(by['m1/blind']!.mean_abs_diff_market).toBeCloseTo(0.2, 12);
    expect(by['m2/blind']!.mean_abs_diff_market).toBeCloseTo(0.1, 12);
    expect(by['consensus_mean/blind']!.mean_abs_diff_market).toBeCloseTo(0.1, 12);
    for (const rounds of ['latest', 'all']) {
      const nan = await rows(conn, `SELECT count(*) AS n FROM anchoring WHERE rounds = '${rounds}' AND isnan(corr_market)`);
      expect(nan[0]!.n).toBe(0);
    }
  });
});
