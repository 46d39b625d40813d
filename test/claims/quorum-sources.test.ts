/**
 * Venues, AI models and the consensus as sources (issue 11 point 3): their forecasts and prices on
 * resolved questions are claims through sql/derive/90_claims.sql's view over scored_forecasts,
 * scored_consensus and questions (nothing copied into raw_claims), with a track record each and
 * the model-vs-market skill worked out by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, openDb, question, resolution, rows, ts } from '../scoring/fixture.ts';

describe('venues, models and the consensus have track records', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('polymarket:q1'), question('manifold:q2', { venue: 'manifold', category: 'science' })]);
    await insert(conn, 'market_prices', [
      { question_id: 'polymarket:q1', venue: 'polymarket', observed_at: '2025-02-28', probability: 0.6 },
      { question_id: 'manifold:q2', venue: 'manifold', observed_at: '2025-02-28', probability: 0.5 },
    ]);
    await insert(conn, 'forecasts', [
      forecast('polymarket:q1', 'm-a', 'blind', 'r1', '2025-03-01', 0.8),
      forecast('polymarket:q1', 'm-b', 'blind', 'r1', '2025-03-01', 0.6),
      forecast('manifold:q2', 'm-a', 'blind', 'r1', '2025-03-01', 0.3),
      forecast('manifold:q2', 'm-b', 'blind', 'r1', '2025-03-01', 0.1),
    ]);
    await insert(conn, 'resolutions', [resolution('polymarket:q1', 1, '2025-04-01'), resolution('manifold:q2', 0, '2025-04-01')]);
    // one imported claim about a tracked question, beside them
    await insert(conn, 'claims', [
      { claim_id: 'x1', source_slug: 'pundit', question_id: 'polymarket:q1', claimed_at: '2025-02-01', kind: 'probability', probability: 0.9, outcome: 1, resolved_at: '2025-04-01' },
    ]);
    await insert(conn, 'sources', [{ source_slug: 'pundit', name: 'A Pundit', kind: 'media' }]);
    await derive(conn, ts('2025-06-01'));
  });
  afterAll(() => close());

  it('scores each as a source, with skill against the market comparator', async () => {
    const got = await rows(conn, 'SELECT source_slug, kind, n_claims, accuracy_score, brier, brier_skill, n_reference_probability FROM track_records ORDER BY source_slug');
    const by = Object.fromEntries(got.map((r) => [r.source_slug, r]));
    expect(Object.keys(by)).toEqual(['ai-m-a', 'ai-m-b', 'manifold', 'polymarket', 'pundit', 'quorum-consensus']);
    // m-a: 0.8 on a YES, 0.3 on a NO: Brier (0.04 + 0.09)/2; market (0.16 + 0.25)/2; skill mean(0.12, 0.16)
    expect(by['ai-m-a']).toMatchObject({ kind: 'ai_model', n_claims: 2, accuracy_score: 100, n_reference_probability: 2 });
    expect(by['ai-m-a']!.brier).toBeCloseTo(0.065, 9);
    expect(by['ai-m-a']!.brier_skill).toBeCloseTo(0.14, 9);
    // m-b: 0.6 and 0.1: Brier (0.16 + 0.01)/2; skill mean(0, 0.24)
    expect(by['ai-m-b']!.brier).toBeCloseTo(0.085, 9);
    expect(by['ai-m-b']!.brier_skill).toBeCloseTo(0.12, 9);
    // consensus mean 0.7 and 0.2: Brier (0.09 + 0.04)/2; skill mean(0.07, 0.21)
    expect(by['quorum-consensus']).toMatchObject({ kind: 'consensus', n_claims: 2 });
    expect(by['quorum-consensus']!.brier).toBeCloseTo(0.065, 9);
    expect(by['quorum-consensus']!.brier_skill).toBeCloseTo(0.14, 9);
    // venues: their comparator prices, no reference: 0.6 on a YES; 0.5 on a NO (a tie: half)
    expect(by.polymarket).toMatchObject({ kind: 'market', n_claims: 1, accuracy_score: 100, brier_skill: null });
    expect(by.polymarket!.brier).toBeCloseTo(0.16, 9);
    expect(by.manifold).toMatchObject({ kind: 'market', accuracy_score: 50 });
    expect(by.pundit).toMatchObject({ kind: 'media', n_claims: 1 });
    // nothing is copied into the raw claims
    expect(await rows(conn, 'SELECT count(*) AS n FROM raw_claims')).toEqual([{ n: 1 }]);
    const ids = await rows(conn, "SELECT claim_id, origin FROM claims WHERE question_id = 'polymarket:q1' ORDER BY claim_id");
    expect(ids.map((r) => r.origin)).toEqual(['quorum', 'quorum', 'quorum', 'quorum', 'import']);
  });

  it('a claim made after the run\'s as-of time, or resolved after it, is not scored as known', async () => {
    await derive(conn, ts('2025-03-15'));
    const got = await rows(conn, "SELECT claim_id, resolved FROM claims WHERE origin = 'import'");
    expect(got).toEqual([{ claim_id: 'x1', resolved: false }]);
  });
});
