/**
 * Consensus statistics, scored consensus, headline fallback, accuracy breakdowns and
 * resolved_predictions: hand-computed expectations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, one, openDb, question, resolution, rows } from './fixture.ts';

const logit = (p: number) => Math.log(p / (1 - p));

describe('consensus per (question, mode, run)', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('Q')]);
    await insert(conn, 'forecasts', [
      // r4: four models (even count)
      forecast('Q', 'm1', 'blind', 'r4', '2025-02-01', 0.2, { provider: 'openai' }),
      forecast('Q', 'm2', 'blind', 'r4', '2025-02-01', 0.4, { provider: 'anthropic' }),
      forecast('Q', 'm3', 'blind', 'r4', '2025-02-01T00:05:00', 0.6, { provider: 'openai' }),
      forecast('Q', 'm4', 'blind', 'r4', '2025-02-01', 0.9, { provider: 'google' }),
      // r3: three models (odd count)
      forecast('Q', 'm1', 'blind', 'r3', '2025-01-20', 0.1),
      forecast('Q', 'm2', 'blind', 'r3', '2025-01-20', 0.8),
      forecast('Q', 'm3', 'blind', 'r3', '2025-01-20', 0.3),
      // r1: one model, p = 1 (log-odds clipped at 0.999)
      forecast('Q', 'm1', 'blind', 'r1', '2025-01-10', 1.0),
      // r2: two models
      forecast('Q', 'm1', 'blind', 'r2', '2025-01-15', 0.3),
      forecast('Q', 'm2', 'blind', 'r2', '2025-01-15', 0.6),
      // r5: five models (exact fallback path) with five providers
      ...[0.9, 0.1, 0.5, 0.7, 0.2].map((p, i) =>
        forecast('Q', `m${i + 1}`, 'informed', 'r5', '2025-02-02', p, { provider: `p${5 - i}` }),
      ),
    ]);
    await derive(conn);
  });
  afterAll(() => close());

  it('four models: mean, median of an even count, logit-mean, sd, range, sd_logit, providers', async () => {
    const c = await one(conn, `SELECT * FROM consensus WHERE run_id = 'r4'`);
    expect(c.n_models).toBe(4);
    expect(c.created_at).toBe('2025-02-01 00:05:00'); // the latest forecast of the run
    expect(c.mean).toBeCloseTo(0.525, 12); // (0.2 + 0.4 + 0.6 + 0.9) / 4 = 2.1 / 4
    expect(c.median).toBeCloseTo(0.5, 12); // (0.4 + 0.6) / 2
    expect(c.range).toBeCloseTo(0.7, 12); // 0.9 − 0.2
    // population sd: deviations −0.325, −0.125, 0.075, 0.375; squares sum 0.2675; / 4 = 0.066875
    expect(c.sd).toBeCloseTo(Math.sqrt(0.066875), 12); // 0.258602…
    // log-odds: ln(0.2/0.8) = −1.386294, ln(0.4/0.6) = −0.405465, ln(0.6/0.4) = 0.405465,
    // ln(0.9/0.1) = 2.197225; mean = 0.810930 / 4 = 0.2027326; inverse logit → 0.550510
    const los = [0.2, 0.4, 0.6, 0.9].map(logit);
    const meanLo = (los[0]! + los[1]! + los[2]! + los[3]!) / 4;
    expect(meanLo).toBeCloseTo(0.2027326, 6);
    expect(c.logit_mean).toBeCloseTo(1 / (1 + Math.exp(-meanLo)), 12);
    expect(c.logit_mean).toBeCloseTo(0.55051, 5);
    // sd of log-odds: sqrt(mean of squared deviations from 0.2027326)
    const sdLo = Math.sqrt(los.reduce((s, x) => s + (x - meanLo) ** 2, 0) / 4);
    expect(c.sd_logit).toBeCloseTo(sdLo, 12);
    expect(c.providers).toBe('anthropic,google,openai'); // distinct, sorted
  });

  it('three models: median of an odd count', async () => {
    const c = await one(conn, `SELECT * FROM consensus WHERE run_id = 'r3'`);
    expect(c.n_models).toBe(3);
    expect(c.median).toBeCloseTo(0.3, 12); // sorted 0.1, 0.3, 0.8
    expect(c.mean).toBeCloseTo(0.4, 12); // 1.2 / 3
    expect(c.range).toBeCloseTo(0.7, 12);
    expect(c.providers).toBe('simulated');
  });

  it('one and two models; log-odds of p = 1 clipped at 0.999', async () => {
    const c1 = await one(conn, `SELECT * FROM consensus WHERE run_id = 'r1'`);
    expect(c1).toMatchObject({ n_models: 1, mean: 1, median: 1, sd: 0, range: 0, sd_logit: 0 });
    expect(c1.logit_mean).toBeCloseTo(0.999, 12); // inverse logit of ln(0.999/0.001)
    const c2 = await one(conn, `SELECT * FROM consensus WHERE run_id = 'r2'`);
    expect(c2.median).toBeCloseTo(0.45, 12); // (0.3 + 0.6) / 2
    expect(c2.sd).toBeCloseTo(0.15, 12); // |0.3 − 0.6| / 2
  });

  it('five models take the exact fallback: median and all providers', async () => {
    const c = await one(conn, `SELECT * FROM consensus WHERE run_id = 'r5'`);
    expect(c.n_models).toBe(5);
    expect(c.median).toBeCloseTo(0.5, 12); // sorted 0.1, 0.2, 0.5, 0.7, 0.9
    expect(c.mean).toBeCloseTo(0.48, 12); // 2.4 / 5
    expect(c.providers).toBe('p1,p2,p3,p4,p5');
  });
});

describe('scored consensus, headline fallback, accuracy and resolved_predictions', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [
      question('X', { category: 'politics', domain: 'policy', close_time: '2025-03-01' }),
      question('Y', { category: 'crypto', domain: 'crypto', close_time: '2025-03-01' }),
      question('Z', { category: 'crypto', domain: 'crypto', close_time: '2025-03-01' }), // annulled
    ]);
    await insert(conn, 'forecasts', [
      // X: augmented and informed. Latest augmented run before close is a2 (a3 after close).
      forecast('X', 'm1', 'augmented', 'a1', '2025-02-01', 0.5),
      forecast('X', 'm2', 'augmented', 'a1', '2025-02-01', 0.5),
      forecast('X', 'm1', 'augmented', 'a2', '2025-02-10', 0.7),
      forecast('X', 'm2', 'augmented', 'a2', '2025-02-10', 0.9),
      forecast('X', 'm1', 'augmented', 'a3', '2025-03-02', 0.1),
      forecast('X', 'm1', 'informed', 'a2', '2025-02-10', 0.6),
      forecast('X', 'm2', 'informed', 'a2', '2025-02-10', 0.2),
      // Y: no augmented → headline falls back to informed.
      forecast('Y', 'm1', 'informed', 'b1', '2025-02-10', 0.3),
      forecast('Y', 'm2', 'informed', 'b1', '2025-02-10', 0.5),
      forecast('Y', 'm1', 'blind', 'b1', '2025-02-10', 0.9),
      // Z: annulled, never scored.
      forecast('Z', 'm1', 'augmented', 'c1', '2025-02-10', 0.9),
    ]);
    await insert(conn, 'market_prices', [
      { question_id: 'X', observed_at: '2025-02-09', probability: 0.6 },
      { question_id: 'Y', observed_at: '2025-02-11', probability: 0.4 }, // after Y's forecast: no comparator
    ]);
    await insert(conn, 'resolutions', [
      resolution('X', 1, '2025-03-05', { evidence_excerpt: 'it happened' }),
      resolution('Y', 0, '2025-02-20'),
      resolution('Z', null, '2025-02-20'),
    ]);
    await insert(conn, 'sources', [{ source_slug: 'fred', name: 'FRED', kind: 'government' }]);
    await derive(conn);
  });
  afterAll(() => close());

  it('scores the latest run before close and resolution; headline augmented → informed', async () => {
    const sc = await rows(conn, `SELECT question_id, mode, run_id, probability, brier, direction,
                                        market_probability, market_brier, is_headline, tier
                                 FROM scored_consensus ORDER BY question_id, mode`);
    expect(sc).toHaveLength(4);
    const [xa, xi, yb, yi] = sc;
    // X augmented a2: mean (0.7 + 0.9)/2 = 0.8; Brier (0.8 − 1)² = 0.04; market 0.6 → 0.16
    expect(xa).toMatchObject({ mode: 'augmented', run_id: 'a2', direction: 'correct', is_headline: true, market_probability: 0.6, tier: 'medium' });
    expect(xa!.probability).toBeCloseTo(0.8, 12);
    expect(xa!.brier).toBeCloseTo(0.04, 12);
    expect(xa!.market_brier).toBeCloseTo(0.16, 12);
    // X informed: mean (0.6 + 0.2)/2 = 0.4; Brier 0.36; not headline
    expect(xi).toMatchObject({ mode: 'informed', is_headline: false, direction: 'wrong' });
    expect(xi!.brier).toBeCloseTo(0.36, 12);
    // Y: blind 0.9 (o = 0 → 0.81) and informed mean 0.4 (→ 0.16); headline = informed
    expect(yb).toMatchObject({ mode: 'blind', is_headline: false });
    expect(yi).toMatchObject({ mode: 'informed', is_headline: true, market_probability: null });
    expect(yi!.brier).toBeCloseTo(0.16, 12);
  });

  it('headline order is configurable', async () => {
    await derive(conn, undefined, ['blind', 'informed', 'augmented']);
    const h = await rows(conn, `SELECT question_id, mode FROM scored_consensus WHERE is_headline ORDER BY 1`);
    expect(h).toEqual([
      { question_id: 'X', mode: 'informed' }, // X has no blind consensus
      { question_id: 'Y', mode: 'blind' },
    ]);
    await derive(conn);
  });

  it('accuracy: headline overall, breakdowns, market pairs, model and mode dimensions', async () => {
    const acc = await rows(conn, 'SELECT * FROM accuracy');
    const find = (scope: string, forecaster: string, mode: string, dimension: string, key: string) =>
      acc.find((r) => r.scope === scope && r.forecaster === forecaster && r.mode === mode && r.dimension === dimension && r.key === key);
    // Headline: X augmented (0.8, o=1: Brier 0.04, correct), Y informed (0.4, o=0: 0.16, correct)
    const all = find('all', 'consensus', 'headline', 'overall', 'all');
    expect(all).toMatchObject({ n: 2, n_directional: 2, n_correct: 2, n_no_direction: 0, accuracy_pct: 100 });
    expect(all!.brier).toBeCloseTo(0.1, 12); // (0.04 + 0.16) / 2
    expect(all!.log_loss).toBeCloseTo((-Math.log(0.8) - Math.log(0.6)) / 2, 12); // (0.2231 + 0.5108) / 2
    // category breakdown and scope
    expect(find('all', 'consensus', 'headline', 'category', 'crypto')).toMatchObject({ n: 1 });
    expect(find('crypto', 'consensus', 'headline', 'overall', 'all')!.brier).toBeCloseTo(0.16, 12);
    expect(find('all', 'consensus', 'headline', 'domain', 'policy')).toMatchObject({ n: 1 });
    expect(find('all', 'consensus', 'headline', 'tier', 'medium')).toMatchObject({ n: 1 }); // |0.8−0.5| = 0.3
    expect(find('all', 'consensus', 'headline', 'tier', 'low')).toMatchObject({ n: 1 }); // |0.4−0.5| = 0.1
    // horizon: X a2 2025-02-10 → 2025-03-05 = 23 days; Y 2025-02-10 → 2025-02-20 = 10 days: both 8-30
    expect(find('all', 'consensus', 'headline', 'horizon', '8-30')).toMatchObject({ n: 2 });
    // market paired with the headline: only X has a comparator (0.6 → (0.6 − 1)² = 0.16)
    const mkt = find('all', 'market', 'headline', 'overall', 'all');
    expect(mkt).toMatchObject({ n: 1, n_correct: 1 });
    expect(mkt!.brier).toBeCloseTo(0.16, 12);
    // model dimension in the headline mode: m1 → X augmented 0.7 (0.09), Y informed 0.3 (0.09)
    const m1 = find('all', 'consensus', 'headline', 'model', 'm1');
    expect(m1).toMatchObject({ n: 2 });
    expect(m1!.brier).toBeCloseTo(0.09, 12);
    // m2 → X augmented 0.9 (0.01), Y informed 0.5 (0.25, no direction)
    const m2 = find('all', 'consensus', 'headline', 'model', 'm2');
    expect(m2).toMatchObject({ n: 2, n_directional: 1, n_correct: 1, n_no_direction: 1, accuracy_pct: 100 });
    expect(m2!.brier).toBeCloseTo(0.13, 12); // (0.01 + 0.25) / 2
    // mode dimension: informed consensus = X 0.4 (0.36, wrong) and Y 0.4 (0.16, correct)
    const inf = find('all', 'consensus', 'headline', 'mode', 'informed');
    expect(inf).toMatchObject({ n: 2, n_correct: 1, accuracy_pct: 50 });
    expect(inf!.brier).toBeCloseTo(0.26, 12);
    // the annulled Z appears nowhere
    expect(find('all', 'consensus', 'augmented', 'overall', 'all')).toMatchObject({ n: 1 });
  });

  it('resolved_predictions: one row per question with a headline consensus', async () => {
    const r = await rows(conn, 'SELECT * FROM resolved_predictions ORDER BY question_id');
    expect(r).toHaveLength(2);
    expect(r[0]).toMatchObject({
      question_id: 'X', mode: 'augmented', n_models: 2, outcome: 1, market_probability: 0.6,
      forecast_at: '2025-02-10 00:00:00', resolved_at: '2025-03-05 00:00:00', horizon_bucket: '8-30',
      source_slug: 'fred', source_name: 'FRED', evidence_excerpt: 'it happened', providers: 'simulated',
      category: 'politics',
    });
    expect(r[0]!.consensus).toBeCloseTo(0.8, 12);
    expect(r[0]!.consensus_median).toBeCloseTo(0.8, 12);
    expect(r[0]!.disagreement_range).toBeCloseTo(0.2, 12);
    expect(r[0]!.disagreement_sd).toBeCloseTo(0.1, 12);
    // DESIGN §5: the sd of log-odds is published beside every consensus, the resolved list's too
    // (it had only sd and range): population sd of logit(0.7), logit(0.9)
    expect(r[0]!.disagreement_sd_logit).toBeCloseTo((logit(0.9) - logit(0.7)) / 2, 12);
    expect(r[0]!.ai_error).toBeCloseTo(0.04, 12);
    expect(r[0]!.market_error).toBeCloseTo(0.16, 12);
    expect(r[1]).toMatchObject({ question_id: 'Y', mode: 'informed', market_error: null });
  });
});
