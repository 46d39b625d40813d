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
