/**
 * Scored forecasts, as-of visibility, question versions, market comparator, annulled exclusion,
 * tiers, horizons, direction: hand-built fixtures with expected figures computed by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, one, openDb, question, resolution, rows } from './fixture.ts';

describe('scored forecasts and as-of visibility (as_of 2025-06-01)', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  let published: string[];

  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [
      // A: two versions, the later ingested wins (title "A new", category finance).
      question('A', { title: 'A old', category: 'politics', close_time: '2025-03-01', ingested_at: '2025-01-01' }),
      question('A', { title: 'A new', category: 'finance', domain: 'macro', close_time: '2025-03-01', ingested_at: '2025-02-01' }),
      question('B', { close_time: null }),
      question('C', { close_time: '2025-05-01' }), // resolves after as_of: invisible resolution
      question('D', { close_time: '2025-03-01' }), // annulled
      question('E', { created_at: '2025-07-01' }), // created after as_of: invisible
      question('F', { created_at: null }), // null created_at: visible
      question('H', {}), // horizon boundaries
    ]);
    await insert(conn, 'forecasts', [
      // A (close 2025-03-01, resolved 2025-03-10): r2 is the latest before close; r3 is after close.
      forecast('A', 'm1', 'blind', 'r1', '2025-01-10', 0.6),
      forecast('A', 'm1', 'blind', 'r2', '2025-02-20', 0.8),
      forecast('A', 'm1', 'blind', 'r3', '2025-03-05', 0.9),
      // B (no close, resolved 2025-04-01 with outcome 0): p = 1 and p = 0 exercise the clipping;
      // the 2025-04-02 forecast is after resolution.
      forecast('B', 'm1', 'blind', 'r1', '2025-03-01', 1.0),
      forecast('B', 'm1', 'blind', 'r2', '2025-04-02', 0.1),
      forecast('B', 'm2', 'blind', 'r1', '2025-03-01', 0.0),
      forecast('B', 'm3', 'blind', 'r1', '2025-03-01', 0.5),
      forecast('C', 'm1', 'blind', 'r1', '2025-03-01', 0.7),
      forecast('D', 'm1', 'blind', 'r1', '2025-02-01', 0.7),
      // F: a forecast after as_of is invisible to the consensus.
      forecast('F', 'm1', 'blind', 'r1', '2025-05-01', 0.4),
      forecast('F', 'm1', 'blind', 'r9', '2025-06-02', 0.9),
      // H resolved 2025-04-08T00:00: exactly 7 days before → '0-7' (m1); 7 days + 1 s → '8-30' (m2);
      // 30 days → '8-30' (m3); 30 days + 1 s → '31-90' (m4).
      forecast('H', 'm1', 'blind', 'r1', '2025-04-01T00:00:00', 0.65),
      forecast('H', 'm2', 'blind', 'r0', '2025-03-31T23:59:59', 0.35),
      forecast('H', 'm3', 'blind', 'rx', '2025-03-09T00:00:00', 0.85),
      forecast('H', 'm4', 'blind', 'ry', '2025-03-08T23:59:59', 0.15),
    ]);
    await insert(conn, 'market_prices', [
      { question_id: 'A', observed_at: '2025-02-19', probability: 0.7 },
      { question_id: 'A', observed_at: '2025-02-20', probability: 0.75 }, // at the forecast's instant: used
      { question_id: 'A', observed_at: '2025-02-21', probability: 0.9 }, // after the forecast
      { question_id: 'F', observed_at: '2025-05-30', probability: 0.3 },
      { question_id: 'F', observed_at: '2025-06-02', probability: 0.99 }, // after as_of: invisible
    ]);
    await insert(conn, 'resolutions', [
      resolution('A', 1, '2025-03-10', { source_url: 'https://example.org/a' }),
      resolution('B', 0, '2025-04-01'),
      resolution('C', 1, '2025-07-01'),
      resolution('D', null, '2025-03-05', { annulled_reason: 'market voided' }),
      resolution('H', 1, '2025-04-08'),
    ]);
    await insert(conn, 'sources', [{ source_slug: 'fred', name: 'FRED', kind: 'government', url: 'https://fred' }]);
    published = await derive(conn);
  });
  afterAll(() => close());

  it('publishes the contract tables in file order', () => {
    expect(published).toEqual([
      'questions',
      'taxonomy_history',
      'consensus',
      'scored_forecasts',
      'scored_consensus',
      'accuracy',
      'bootstrap_groups',
      'bootstrap_weights',
      'leaderboard_observations',
      'leaderboard',
      'disagreement',
      'disagreement_quintiles',
      'information_value',
      'anchoring',
      'resolution_sources',
      'ai_vs_market',
      'ai_vs_market_breakdown',
      'calibration',
      'headline_leaderboard',
      'calibration_summary',
      'resolved_predictions',
      'scored_forecast_texts',
      'edges',
      'lifecycle',
      'latest_forecasts',
      'evidence_used',
      'active_predictions',
      'claims',
      'claim_sources',
      'track_records',
      'track_record_calibration',
      'track_record_horizons',
      'track_record_trends',
      'calibration_models',
      // 96–98: question links and theses (issue 12)
      'question_links',
      'same_event_prices',
      'thesis_members',
      'theses',
      'thesis_vintage_members',
      'thesis_vintage_scores',
      // 99: factors and health (issue 12)
      'factor_leaves',
      'factor_nodes',
      'factors',
      'factor_contradictions',
      'factor_health',
      'system_health',
      'scenario_worlds',
      'scenario_marginals',
      'scenario_components',
      'scenario_record_scores',
      'scenario_records',
      'scenarios',
      // coherence across the book (99_scenario_9_coherence.sql)
      'coherence_checks',
      'coherence',
    ]);
  });

  it('questions: latest ingested version wins, as-of visibility and status', async () => {
    const q = await rows(conn, 'SELECT question_id, title, category, status, outcome FROM questions ORDER BY 1');
    expect(q.map((r) => r.question_id)).toEqual(['A', 'B', 'C', 'D', 'F', 'H']); // E created after as_of
    expect(q[0]).toMatchObject({ title: 'A new', category: 'finance', status: 'resolved', outcome: 1 });
    expect(q[2]).toMatchObject({ status: 'closed', outcome: null }); // C: resolution after as_of unseen
    expect(q[3]).toMatchObject({ status: 'annulled', outcome: null });
    expect(q[4]).toMatchObject({ status: 'active' });
    const f = await one(conn, `SELECT latest_market_probability AS p FROM questions WHERE question_id = 'F'`);
    expect(f.p).toBe(0.3); // the 2025-06-02 price is after as_of
    const a = await one(conn, `SELECT source_name, source_kind, source_url FROM questions WHERE question_id = 'A'`);
    expect(a).toEqual({ source_name: 'FRED', source_kind: 'government', source_url: 'https://example.org/a' });
  });

  it('selects the latest forecast before close and resolution, with Brier and log loss', async () => {
    const a = await one(conn, `SELECT * FROM scored_forecasts WHERE question_id = 'A'`);
    expect(a.run_id).toBe('r2'); // r3 (2025-03-05) is after close_time 2025-03-01
    expect(a.probability).toBe(0.8);
    expect(a.brier).toBeCloseTo(0.04, 12); // (0.8 − 1)² = 0.04
    expect(a.log_loss).toBeCloseTo(0.22314355131, 10); // −ln 0.8
    expect(a.direction).toBe('correct');
    expect(a.tier).toBe('medium'); // |0.8 − 0.5| = 0.3
    expect(a.category).toBe('finance');
    expect(a.horizon_days).toBeCloseTo(18, 12); // 2025-02-20 → 2025-03-10
    expect(a.horizon_bucket).toBe('8-30');
    // ASOF comparator: the price observed exactly at created_at (0.75), not the later 0.9.
    expect(a.market_probability).toBe(0.75);
    expect(a.market_brier).toBeCloseTo(0.0625, 12); // (0.75 − 1)²
    expect(a.market_log_loss).toBeCloseTo(0.28768207245, 10); // −ln 0.75
  });

  it('clips log loss to [0.001, 0.999] and handles p = 0.5 as no direction', async () => {
    const b = await rows(conn, `SELECT model, run_id, brier, log_loss, direction, tier, market_probability
                                FROM scored_forecasts WHERE question_id = 'B' ORDER BY model`);
    // m1: p = 1, o = 0 → Brier 1; log loss −ln(1 − 0.999) = −ln 0.001 = 6.907755279
    expect(b[0]).toMatchObject({ run_id: 'r1', brier: 1, direction: 'wrong', tier: 'high', market_probability: null });
    expect(b[0]!.log_loss).toBeCloseTo(6.907755279, 8);
    // m2: p = 0, o = 0 → Brier 0; log loss −ln(1 − 0.001) = 0.0010005003
    expect(b[1]).toMatchObject({ brier: 0, direction: 'correct', tier: 'high' });
    expect(b[1]!.log_loss).toBeCloseTo(0.0010005003, 9);
    // m3: p = 0.5 → Brier 0.25, log loss ln 2, no direction
    expect(b[2]).toMatchObject({ brier: 0.25, direction: 'none', tier: 'low' });
    expect(b[2]!.log_loss).toBeCloseTo(0.69314718056, 10);
  });

  it('excludes annulled and not-yet-resolved questions from every score', async () => {
    const ids = await rows(conn, 'SELECT DISTINCT question_id FROM scored_forecasts ORDER BY 1');
    expect(ids.map((r) => r.question_id)).toEqual(['A', 'B', 'H']);
    const sc = await rows(conn, 'SELECT DISTINCT question_id FROM scored_consensus ORDER BY 1');
    expect(sc.map((r) => r.question_id)).toEqual(['A', 'B', 'H']);
    const rp = await rows(conn, 'SELECT question_id FROM resolved_predictions ORDER BY 1');
    expect(rp.map((r) => r.question_id)).toEqual(['A', 'B', 'H']);
  });

  it('buckets horizons on inclusive upper bounds (ceiling of fractional days) and tiers at boundaries', async () => {
    const h = await rows(conn, `SELECT model, horizon_days, horizon_bucket, tier FROM scored_forecasts
                                WHERE question_id = 'H' ORDER BY model`);
    expect(h[0]).toMatchObject({ horizon_days: 7, horizon_bucket: '0-7', tier: 'medium' }); // |0.65−0.5| = 0.15
    expect(h[1]!.horizon_days).toBeCloseTo(7 + 1 / 86400, 12);
    expect(h[1]).toMatchObject({ horizon_bucket: '8-30', tier: 'medium' }); // |0.35−0.5| = 0.15
    expect(h[2]).toMatchObject({ horizon_days: 30, horizon_bucket: '8-30', tier: 'high' }); // |0.85−0.5| = 0.35
    expect(h[3]).toMatchObject({ horizon_bucket: '31-90', tier: 'high' }); // |0.15−0.5| = 0.35
    const b = await one(
      conn,
      `SELECT _horizon_bucket(0) AS b0, _horizon_bucket(7) AS b7, _horizon_bucket(7.5) AS b75,
              _horizon_bucket(30) AS b30, _horizon_bucket(90) AS b90, _horizon_bucket(90.01) AS b9001,
              _horizon_bucket(365) AS b365, _horizon_bucket(365.5) AS b3655,
              _tier(0.5) AS t50, _tier(0.6499) AS t6499, _tier(0.65) AS t65, _tier(0.8499) AS t8499,
              _tier(0.85) AS t85, _tier(1) AS t1, _tier(0) AS t0`,
    );
    expect(b).toEqual({
      b0: '0-7', b7: '0-7', b75: '8-30', b30: '8-30', b90: '31-90', b9001: '91-365', b365: '91-365', b3655: '>365',
      t50: 'low', t6499: 'low', t65: 'medium', t8499: 'medium', t85: 'high', t1: 'high', t0: 'high',
    });
  });

  it('consensus sees only forecasts at or before as_of', async () => {
    const f = await rows(conn, `SELECT run_id FROM consensus WHERE question_id = 'F'`);
    expect(f.map((r) => r.run_id)).toEqual(['r1']); // r9 (2025-06-02) is after as_of
    const e = await rows(conn, `SELECT * FROM consensus WHERE question_id = 'E'`);
    expect(e).toHaveLength(0);
  });

  it('a later as_of sees the later resolution and price', async () => {
    await derive(conn, new Date('2025-08-01T00:00:00Z'));
    const c = await one(conn, `SELECT status, outcome FROM questions WHERE question_id = 'C'`);
    expect(c).toEqual({ status: 'resolved', outcome: 1 });
    const f = await one(conn, `SELECT latest_market_probability AS p FROM questions WHERE question_id = 'F'`);
    expect(f.p).toBe(0.99);
    const sc = await one(conn, `SELECT probability, brier FROM scored_forecasts WHERE question_id = 'C'`);
    expect(sc.probability).toBe(0.7);
    expect(sc.brier).toBeCloseTo(0.09, 12); // (0.7 − 1)²
    await derive(conn); // back to the fixture's as_of for the other tests
  });
});
