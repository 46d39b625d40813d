/**
 * A thesis vintage's market comparison is paired: `market_brier` and `brier_vs_market` cover the
 * resolved members that had both a consensus and a market price in the vintage (`n_market`), as
 * the leaderboard's and the factor health's comparisons do. Before, `brier` was the mean over every
 * resolved member and `market_brier` over those with a price, and a reader comparing the two
 * compared different questions (here: 0.41 against 0.04, the consensus looking ten times worse
 * than the market although it beat the market on the only question both had: 0.01 against 0.04).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, forecasts, publish, question, snapshotRows, writeRaw, type Fixture, resolution } from './helpers.ts';

describe('thesis vintage: market comparison over the members with a price', () => {
  let f: Fixture;
  let run2: string;
  const T1 = new Date('2026-01-10T00:00:00Z');
  const T2 = new Date('2026-02-01T00:00:00Z');
  const T3 = new Date('2026-02-10T00:00:00Z');
  beforeAll(async () => {
    f = fixture({
      'theses/t.yaml': [
        'theses:',
        '  - id: paired',
        '    statement: Three members, one without a market price, one still open',
        '    members:',
        '      - { question: "manifold:p1", sign: 1 }',
        '      - { question: "kalshi:p2", sign: 1 }',
        '      - { question: "polymarket:p3", sign: 1 }',
        '',
      ].join('\n'),
    });
    await writeRaw(f.dataDir, {
      questions: [question('manifold:p1', 'first unrelated zebra'), question('kalshi:p2', 'second unrelated yak'), question('polymarket:p3', 'third unrelated walrus')],
      forecasts: [
        ...forecasts('r-p-1', 'manifold:p1', T1, [0.9, 0.9, 0.9, 0.9]),
        ...forecasts('r-p-1', 'kalshi:p2', T1, [0.1, 0.1, 0.1, 0.1]),
        ...forecasts('r-p-1', 'polymarket:p3', T1, [0.5, 0.5, 0.5, 0.5]),
      ],
      // p2 has no price (its venue was not synced); p3 stays open
      market_prices: [
        { question_id: 'manifold:p1', venue: 'manifold', observed_at: T1, probability: 0.8 },
        { question_id: 'polymarket:p3', venue: 'polymarket', observed_at: T1, probability: 0.5 },
      ],
    });
    await publish(f, T1);
    await writeRaw(f.dataDir, { resolutions: [resolution('manifold:p1', 1, T2), resolution('kalshi:p2', 1, T2)] }, T2);
    run2 = await publish(f, T3);
  });
  afterAll(() => f.cleanup());

  it('brier over the resolved members; market_brier and brier_vs_market over those with a price too', async () => {
    const [s] = await snapshotRows(f.dataDir, run2, `SELECT * FROM {thesis_vintage_scores} WHERE thesis_id = 'paired' ORDER BY as_of LIMIT 1`);
    // p1: consensus 0.9, price 0.8, YES; p2: consensus 0.1, no price, YES; p3 open.
    expect(s).toMatchObject({ n_members: 3, n_resolved: 2, n_market: 1 });
    expect(s!.brier).toBeCloseTo((0.01 + 0.81) / 2, 12);
    expect(s!.market_brier).toBeCloseTo(0.04, 12);
    expect(s!.brier_vs_market).toBeCloseTo(0.01 - 0.04, 12);
  });
});
