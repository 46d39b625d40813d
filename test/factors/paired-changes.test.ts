/**
 * A factor's `change` and `gap_vs_market` compare like with like: the change over the leaves that
 * have a previous consensus (both sides the same leaves), the gap over the leaves with both a
 * consensus and a market price. QA: both compared different sets of leaves, so a question newly
 * attached to a factor (its first forecast, no previous one) or one without a market moved them,
 * although their forecasts had not: below, a1 unchanged at 0.6 (market 0.6) and a3 moved toward
 * the statement (signed 0.7 → 0.8, market 0.75), beside a new unpriced leaf a2 at 0.1, read a
 * change of −10.7 points for +7.4 and a gap of −14.3 points for +3.8 (the thesis maps were fixed
 * the same way for their market consensus). Through the pipeline's score-and-publish and a real
 * HTTP server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { get, serve } from '../api/helpers.ts';
import { fixture, forecasts, invLogit, logit, publish, question, snapshotRows, writeRaw, type Fixture } from '../structure/helpers.ts';

const T1 = new Date('2026-01-10T00:00:00Z');
const T2 = new Date('2026-01-20T00:00:00Z');

const FACTORS = [
  'factors:',
  '  - id: widgets',
  '    name: Widgets',
  '    statement: Widgets win',
  '    drivers:',
  '      - id: d1',
  '        name: Driver one',
  '        questions:',
  '          - { question: "manifold:a1", sign: 1 }',
  '          - { question: "manifold:a2", sign: 1 }',
  '          - { question: "manifold:a3", sign: -1, weight: 2 }',
  '',
].join('\n');

describe('factor change and gap over the same leaves', () => {
  let f: Fixture;
  let run: string;
  let server: ServerHandle;
  beforeAll(async () => {
    f = fixture({ 'factors/f.yaml': FACTORS });
    await writeRaw(f.dataDir, {
      questions: [question('manifold:a1', 'alpha widget'), question('manifold:a2', 'beta widget'), question('manifold:a3', 'gamma widget')],
      runs: [{ run_id: 'r1', status: 'completed', as_of: T1, started_at: T1 }, { run_id: 'r2', status: 'completed', as_of: T2, started_at: T2 }],
      forecasts: [
        ...forecasts('r1', 'manifold:a1', T1, [0.6, 0.6, 0.6, 0.6]),
        ...forecasts('r1', 'manifold:a3', T1, [0.3, 0.3, 0.3, 0.3]),
        ...forecasts('r2', 'manifold:a1', T2, [0.6, 0.6, 0.6, 0.6]), // unchanged
        ...forecasts('r2', 'manifold:a2', T2, [0.1, 0.1, 0.1, 0.1]), // new leaf: first forecast, no market
        ...forecasts('r2', 'manifold:a3', T2, [0.2, 0.2, 0.2, 0.2]), // moved: signed 0.7 -> 0.8
      ],
      market_prices: [
        { question_id: 'manifold:a1', venue: 'manifold', observed_at: T2, probability: 0.6 },
        { question_id: 'manifold:a3', venue: 'manifold', observed_at: T2, probability: 0.25 },
      ],
    });
    run = await publish(f, T2);
    server = await serve(f.dataDir);
  });
  afterAll(async () => {
    await server?.close();
    f.cleanup();
  });

  const mean = (pairs: [number, number][]) => invLogit(pairs.reduce((s, [p, w]) => s + w * logit(p), 0) / pairs.reduce((s, [, w]) => s + w, 0));
  // signed: a1 0.6 (w 1), a2 0.1 (w 1, no previous, no price), a3 1 − 0.2 = 0.8 (w 2; previous 0.7; market 0.75)
  const level = mean([[0.6, 1], [0.1, 1], [0.8, 2]]);
  const change = mean([[0.6, 1], [0.8, 2]]) - mean([[0.6, 1], [0.7, 2]]);
  const gap = mean([[0.6, 1], [0.8, 2]]) - mean([[0.6, 1], [0.75, 2]]);

  it('change: the level now minus the previous level over the leaves with a previous consensus; gap: over the leaves with a price', async () => {
    const [root] = await snapshotRows(f.dataDir, run, `SELECT * FROM {factor_nodes} WHERE node_id = 'widgets'`);
    expect(root!.level).toBeCloseTo(level, 12);
    expect(root!.previous_level).toBeCloseTo(mean([[0.6, 1], [0.7, 2]]), 12);
    expect(root!.market_level).toBeCloseTo(mean([[0.6, 1], [0.75, 2]]), 12);
    expect(root!.change).toBeCloseTo(change, 12);
    expect(root!.gap_vs_market).toBeCloseTo(gap, 12);
    const [factor] = await snapshotRows(f.dataDir, run, `SELECT change, gap_vs_market FROM {factors}`);
    expect(factor!.change).toBeCloseTo(change, 12);
    expect(factor!.gap_vs_market).toBeCloseTo(gap, 12);
  });

  it('GET /api/factors/{id}/ publishes the same', async () => {
    const got = await get(server, '/api/factors/widgets/');
    expect(got.res.status).toBe(200);
    expect(got.body.factor.change).toBeCloseTo(change, 6);
    expect(got.body.factor.gap_vs_market).toBeCloseTo(gap, 6);
    expect(got.body.factor.drivers[0].change).toBeCloseTo(change, 6);
  });
});
