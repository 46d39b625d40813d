/**
 * Determinism (QA): the same raw rows give the same published values whatever order they reach
 * the derive's aggregates in. A consensus is a mean of doubles whose last bits follow the order
 * of summation (threads, raw part order), so whatever is hashed, rendered as text or ranked from
 * it must not see those bits. Each case derives one fixture twice on a single thread, its
 * forecasts inserted in opposite orders, and compares.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { createRawTables } from '../../pipeline/warehouse/derive.ts';
import { prepareStructure } from '../../pipeline/structure/stage.ts';
import { derive, forecast, insert, question, resolution, rows, ts, type Row } from './fixture.ts';

const MODELS = ['m-a', 'm-b', 'm-c', 'm-d'];
// Four probabilities whose mean is 0.35 summed one way and 0.35000000000000003 the other
// ((0.1 + 0.2) + 0.4) + 0.7 vs ((0.7 + 0.4) + 0.2) + 0.1), and other sets without that property.
const SETS: Record<string, number[]> = {
  q1: [0.1, 0.2, 0.4, 0.7],
  q2: [0.1, 0.2, 0.4, 0.7],
  q3: [0.5, 0.6, 0.6, 0.9],
  q4: [0.2, 0.3, 0.3, 0.5],
  q5: [0.05, 0.1, 0.3, 0.35],
  q6: [0.6, 0.8, 0.85, 0.9],
  // open questions: a thesis vintage freezes the headline consensus of active ones
  q7: [0.1, 0.2, 0.4, 0.7],
  q8: [0.5, 0.6, 0.6, 0.9],
  q9: [0.2, 0.3, 0.3, 0.5],
  // edges: q7 and q10 are both 0.05 above a market at 0.30 (q10's 0.35 − 0.30 is
  // 0.04999999999999999 in floating point, q7's that or 0.050000000000000044 by summation order);
  // q11's consensus is its market price
  q10: [0.35, 0.35, 0.35, 0.35],
  q11: [0.1, 0.2, 0.4, 0.7],
  // q12's market is the other summation's mean: the edge is 0 one way and −5.6e-17 the other,
  // which rounded to −0.0 and was written so to the Parquet and the CSV export (QA)
  q12: [0.1, 0.2, 0.4, 0.7],
};
const MARKET: Record<string, number> = { q7: 0.3, q10: 0.3, q11: 0.35, q12: 0.35000000000000003 };
const OUTCOME: Record<string, number> = { q1: 1, q2: 1, q3: 0, q4: 0, q5: 1, q6: 0 };

/** One warehouse derived on one thread, its forecasts inserted in `order`. */
async function deriveWith(order: 'forward' | 'reverse'): Promise<{ conn: DuckDBConnection; close: () => void }> {
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  await createRawTables(conn);
  const ids = Object.keys(SETS);
  await insert(conn, 'questions', ids.map((id) => question(id)));
  await insert(conn, 'resolutions', Object.keys(OUTCOME).map((id) => resolution(id, OUTCOME[id]!, '2025-05-01')));
  const fc: Row[] = ids.flatMap((id) => SETS[id]!.map((p, i) => forecast(id, MODELS[i]!, 'blind', 'r1', '2025-03-01', p)));
  await insert(conn, 'forecasts', order === 'forward' ? fc : fc.reverse());
  await insert(conn, 'market_prices', Object.entries(MARKET).map(([question_id, probability]) => (
    { question_id, venue: 'polymarket', observed_at: '2025-05-30', probability, origin: 'test', ingested_at: '2025-05-30' })));
  await prepareStructure(conn, {
    runId: 'r-vintage',
    definitions: {
      links: [],
      theses: [{ file: 'test.yaml', id: 't1', statement: 'Thesis one', members: ['q7', 'q8', 'q9'].map((q) => ({ question: q, sign: 1, weight: 1 })) }],
    },
  });
  await derive(conn, ts('2025-06-01'));
  return { conn, close: () => { conn.closeSync(); db.closeSync(); } };
}

describe('derive determinism over the order rows reach the aggregates', () => {
  let a: Awaited<ReturnType<typeof deriveWith>>;
  let b: Awaited<ReturnType<typeof deriveWith>>;
  beforeAll(async () => {
    a = await deriveWith('forward');
    b = await deriveWith('reverse');
  });
  afterAll(() => {
    a.close();
    b.close();
  });

  it('the fixture does reach the consensus mean in different orders (its last bits differ)', async () => {
    const sql = `SELECT mean::VARCHAR AS mean FROM consensus WHERE question_id = 'q1'`;
    // If this ever fails, DuckDB sums in another order and the cases below prove nothing.
    expect(await rows(a.conn, sql)).not.toEqual(await rows(b.conn, sql));
  });

  it('thesis vintage content_hash (98_thesis_vintages.sql) is the same for the same content', async () => {
    const sql = `SELECT DISTINCT thesis_id, content_hash FROM _thesis_vintage_new ORDER BY thesis_id`;
    const ha = await rows(a.conn, sql);
    expect(ha).toHaveLength(1);
    const members = await rows(a.conn, `SELECT count(member_consensus) AS n FROM _thesis_vintage_new`);
    expect(members).toEqual([{ n: 3 }]);
    expect(await rows(b.conn, sql)).toEqual(ha);
  });

  it('the consensus claim text (90_claims.sql) is the same, without float noise', async () => {
    const sql = `SELECT claim_id, claim_text FROM claims WHERE source_slug = 'quorum-consensus' ORDER BY claim_id`;
    const ca = await rows(a.conn, sql);
    expect(ca.length).toBeGreaterThanOrEqual(6);
    expect(await rows(b.conn, sql)).toEqual(ca);
    expect(ca.find((r) => r.claim_id === 'consensus:q1:blind')?.claim_text).toBe('Quorum consensus (blind mode): 0.35');
  });

  it('disagreement spearman and quintiles (53_disagreement.sql) rank equal sds and errors as ties', async () => {
    const sql = `SELECT mode, rounds, spearman::VARCHAR AS s, spearman_ci95_lo::VARCHAR AS lo, spearman_ci95_hi::VARCHAR AS hi,
                        auroc_wrong_direction::VARCHAR AS auroc
                 FROM disagreement ORDER BY mode, rounds`;
    const da = await rows(a.conn, sql);
    expect(da.length).toBeGreaterThan(0);
    expect(await rows(b.conn, sql)).toEqual(da);
    const q = `SELECT mode, rounds, quintile, n FROM disagreement_quintiles ORDER BY ALL`;
    expect(await rows(b.conn, q)).toEqual(await rows(a.conn, q));
  });

  it('edges (85_edges.sql): equal edges tie and are listed by question_id; a consensus at the market price has no direction', async () => {
    // the API's order (sql/api/edges-page.sql)
    const sql = `SELECT question_id, edge::VARCHAR AS edge, direction FROM edges ORDER BY abs_edge DESC, question_id`;
    const ea = await rows(a.conn, sql);
    expect(await rows(b.conn, sql)).toEqual(ea);
    expect(ea).toEqual([
      { question_id: 'q10', edge: '0.05', direction: 'ai_above_market' },
      { question_id: 'q7', edge: '0.05', direction: 'ai_above_market' },
      { question_id: 'q11', edge: '0.0', direction: 'none' },
      { question_id: 'q12', edge: '0.0', direction: 'none' },
    ]);
  });
});
