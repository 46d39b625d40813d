/** sql/derive/85_edges.sql and 86_lifecycle.sql on small hand-built fixtures. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, openDb, question, resolution, rows, ts } from './fixture.ts';

describe('edges', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('q1'), question('q2'), question('q3'), question('q4'), question('q5', { close_time: '2025-05-01' })]);
    await insert(conn, 'forecasts', [
      // q1: informed consensus in two runs; the later run (0.7, 0.9 → mean 0.8) is the edge's.
      forecast('q1', 'a', 'informed', 'r1', '2025-05-01', 0.1),
      forecast('q1', 'b', 'informed', 'r1', '2025-05-01', 0.3),
      forecast('q1', 'a', 'informed', 'r2', '2025-05-20', 0.7),
      forecast('q1', 'b', 'informed', 'r2', '2025-05-20', 0.9),
      // q1 blind is lower in the headline order (augmented, informed, blind): not used.
      forecast('q1', 'a', 'blind', 'r2', '2025-05-20', 0.5),
      // q2: only blind, mean (0.2 + 0.4) / 2 = 0.3.
      forecast('q2', 'a', 'blind', 'r2', '2025-05-20', 0.2),
      forecast('q2', 'b', 'blind', 'r2', '2025-05-20', 0.4),
      // q3: a consensus but no market price → no edge. q4: resolved → not active. q5: closed.
      forecast('q3', 'a', 'blind', 'r2', '2025-05-20', 0.5),
      forecast('q4', 'a', 'blind', 'r2', '2025-05-20', 0.5),
      forecast('q5', 'a', 'blind', 'r2', '2025-04-20', 0.5),
      // A forecast after as_of is invisible.
      forecast('q2', 'a', 'augmented', 'r3', '2025-07-01', 0.99),
    ]);
    await insert(conn, 'market_prices', [
      { question_id: 'q1', venue: 'polymarket', observed_at: '2025-05-30T00:00:00', probability: 0.5, liquidity: 1000, volume: 5000 },
      { question_id: 'q1', venue: 'polymarket', observed_at: '2025-05-31T12:00:00', probability: 0.55, liquidity: 1200, volume: 5100 },
      { question_id: 'q1', venue: 'polymarket', observed_at: '2025-06-02T00:00:00', probability: 0.1 }, // after as_of
      { question_id: 'q2', venue: 'polymarket', observed_at: '2025-05-20T00:00:00', probability: 0.35 },
      { question_id: 'q4', venue: 'polymarket', observed_at: '2025-05-20T00:00:00', probability: 0.9 },
      { question_id: 'q5', venue: 'polymarket', observed_at: '2025-04-20T00:00:00', probability: 0.9 },
    ]);
    await insert(conn, 'resolutions', [resolution('q4', 1, '2025-05-25')]);
    await insert(conn, 'lifecycle_events', [
      { question_id: 'q4', state: 'active', at: '2025-01-01', reason: 'listed' },
      { question_id: 'q4', state: 'closed', at: '2025-05-26', reason: 'close time' }, // recorded after resolution
      { question_id: 'q4', state: 'resolved', at: '2025-05-25', reason: 'resolved YES' },
      { question_id: 'q4', state: 'resolved', at: '2025-05-25', reason: 'resolved YES' }, // duplicate
      { question_id: 'q4', state: 'annulled', at: '2025-07-01', reason: 'after as_of' },
      { question_id: 'nope', state: 'active', at: '2025-01-01', reason: 'unknown question' },
    ]);
    await derive(conn, ts('2025-06-01'));
  });
  afterAll(() => close());

  it('lists active questions with a consensus and a market price, sorted by absolute edge', async () => {
    const e = await rows(conn, `SELECT question_id, mode, run_id, consensus, market_probability, edge, abs_edge, direction, market_age_hours, liquidity, volume, n_models FROM edges`);
    expect(e.map((r) => r.question_id)).toEqual(['q1', 'q2']);
    const [q1, q2] = e as Record<string, number & string>[];
    // q1: consensus 0.8 (run r2, informed), market 0.55 observed 2025-05-31T12:00 → age 12 h.
    expect(q1).toMatchObject({ mode: 'informed', run_id: 'r2', market_probability: 0.55, direction: 'ai_above_market', market_age_hours: 12, liquidity: 1200, volume: 5100, n_models: 2 });
    expect(q1!.consensus).toBeCloseTo(0.8, 12);
    expect(q1!.edge).toBeCloseTo(0.25, 12);
    // q2: consensus 0.3 (blind), market 0.35 → edge −0.05, AI below the market; age 12 days = 288 h.
    expect(q2).toMatchObject({ mode: 'blind', direction: 'ai_below_market', market_age_hours: 288 });
    expect(q2!.edge).toBeCloseTo(-0.05, 12);
    expect(q2!.abs_edge).toBeCloseTo(0.05, 12);
  });

  it('orders lifecycle events by time then lifecycle stage, deduplicated and as of the run', async () => {
    const l = await rows(conn, `SELECT question_id, state, seq FROM lifecycle ORDER BY question_id, seq`);
    expect(l).toEqual([
      { question_id: 'q4', state: 'active', seq: 1 },
      { question_id: 'q4', state: 'resolved', seq: 2 },
      // its scheduled close after it resolved is no change of state (resolved is terminal)
    ]);
  });
});
