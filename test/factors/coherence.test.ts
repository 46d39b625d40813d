/**
 * Coherence across the book (issue 13 pt 5) on a hand-made warehouse: each model's and the
 * consensus's violations of the laws of probability over linked pairs (implies, excludes, a
 * negated same_event that must sum to 1) and a scenario's joint (P(A ∧ B) ≤ min(P(A), P(B)),
 * implied marginals within [0, 1]); published as coherence_checks and coherence, and shown by the
 * service stats and the factors health view.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { get, serve } from '../api/helpers.ts';
import { fixture, forecasts, publish, question, resolution, snapshotRows, writeRaw, type Fixture } from '../structure/helpers.ts';

const T1 = new Date('2026-01-10T00:00:00Z');

const LINKS = [
  'links:',
  '  - { a: "manifold:c1", b: "manifold:c2", kind: implies }',
  '  - { a: "manifold:c1", b: "manifold:c3", kind: excludes }',
  '  - { a: "manifold:c3", b: "polymarket:c4", kind: same_event, sign: -1 }',
  '',
].join('\n');

const SCENARIO = [
  'scenarios:',
  '  - id: chain',
  '    title: One then two',
  '    description: c1, then c2',
  '    components:',
  '      - { question: "manifold:c1" }',
  '      - { question: "manifold:c2" }',
  '',
].join('\n');

/** A model's conditional forecasts of c2 given c1 (the rows a scenario's conditional calls leave). */
function conditional(outcome: 0 | 1, probabilities: number[]) {
  return forecasts('r-coh', 'manifold:c2', T1, probabilities).map((f) => ({ ...f, condition: `chain:2:${outcome}` }));
}

describe('coherence across the book', () => {
  let f: Fixture;
  let run: string;
  let server: ServerHandle;
  beforeAll(async () => {
    f = fixture({ 'links/l.yaml': LINKS, 'scenarios/s.yaml': SCENARIO });
    await writeRaw(f.dataDir, {
      questions: [
        question('manifold:c1', 'zebra crossing built'),
        question('manifold:c2', 'yak herd counted'),
        question('manifold:c3', 'walrus census done'),
        question('polymarket:c4', 'otter survey skipped'),
      ],
      forecasts: [
        ...forecasts('r-coh', 'manifold:c1', T1, [0.6, 0.6, 0.3, 0.3]),
        ...forecasts('r-coh', 'manifold:c2', T1, [0.5, 0.7, 0.5, 0.7]),
        ...forecasts('r-coh', 'manifold:c3', T1, [0.5, 0.3, 0.8, 0.6]),
        ...forecasts('r-coh', 'polymarket:c4', T1, [0.5, 0.7, 0.3, 0.35]),
        ...conditional(1, [0.9, 0.9, 0.9, 0.9]),
        ...conditional(0, [0.2, 0.2, 0.2, 0.2]),
      ],
    });
    run = await publish(f, T1);
    server = await serve(f.dataDir);
  });
  afterAll(async () => {
    await server?.close();
    f.cleanup();
  });

  const rate = async (forecaster: string, check: string) =>
    (await snapshotRows(f.dataDir, run, `SELECT * FROM {coherence} WHERE forecaster = '${forecaster}' AND "check" = '${check}'`))[0];

  it('linked pairs: implies, excludes and the negated same_event, per model and for the consensus', async () => {
    const checks = await snapshotRows(f.dataDir, run, `SELECT * FROM {coherence_checks} WHERE "check" IN ('implies', 'excludes', 'complement') AND violated ORDER BY "check", forecaster`);
    expect(checks.map((c) => [c.check, c.forecaster])).toEqual([
      ['complement', 'm3'], // 0.8 + 0.3 = 1.1, past the 0.05 tolerance (m4's 0.95 is within it)
      ['excludes', 'm1'], // 0.6 + 0.5 > 1
      ['excludes', 'm3'], // 0.3 + 0.8 > 1
      ['implies', 'm1'], // 0.6 > 0.5
    ]);
    expect(checks.find((c) => c.check === 'implies')!.violation).toBeCloseTo(0.1, 12);
    expect(await rate('consensus', 'excludes')).toMatchObject({ n: 1, n_violated: 0 }); // 0.45 + 0.55 = 1 is not past it
    expect(await rate('m1', 'implies')).toMatchObject({ n: 1, n_violated: 1, rate: 1 });
  });

  it('the scenario joint: P(c1 ∧ c2) against min(P(c1), P(c2)), and the implied marginals', async () => {
    // m1: P(11) = 0.6 · 0.9 = 0.54 > min(0.6, 0.5); m2: 0.54 ≤ 0.6; m3, m4: 0.27 ≤ 0.3;
    // consensus: the mean joint's 0.405 ≤ min(0.45, 0.6)
    const conj = await snapshotRows(f.dataDir, run, `SELECT * FROM {coherence_checks} WHERE "check" = 'conjunction' ORDER BY forecaster`);
    expect(conj.map((c) => [c.forecaster, c.violated])).toEqual([['consensus', false], ['m1', true], ['m2', false], ['m3', false], ['m4', false]]);
    expect(conj[1]!.value).toBeCloseTo(0.54, 12);
    expect(conj[1]!.violation).toBeCloseTo(0.04, 12);
    expect(conj[0]!.value).toBeCloseTo(0.405, 12);
    const marg = await snapshotRows(f.dataDir, run, `SELECT count(*) AS n, count(*) FILTER (WHERE violated) AS bad FROM {coherence_checks} WHERE "check" = 'marginal'`);
    expect(marg[0]).toEqual({ n: 10, bad: 0 });
    // every check of m1: implies, excludes, complement (ok), conjunction, two marginals
    expect(await rate('m1', 'all')).toMatchObject({ n: 6, n_violated: 3, rate: 0.5 });
  });

  it('service stats and the factors health view publish the rates', async () => {
    const stats = await get(server, '/api/events/service_stats/');
    expect(stats.res.status).toBe(200);
    const m1 = stats.body.coherence.find((c: { forecaster: string; check: string }) => c.forecaster === 'm1' && c.check === 'all');
    expect(m1).toMatchObject({ n: 6, n_violated: 3, rate: 0.5 });
    const health = await get(server, '/api/factors/health/');
    expect(health.body.coherence).toEqual(stats.body.coherence);
  });

  it('a scenario\'s resolved component is no longer checked, as a linked pair with a resolved question is not', async () => {
    // QA: the linked pairs are checked on what the models say now, about active questions, but
    // every scenario joint was checked for ever: a scenario resolved months ago kept adding its
    // frozen conjunctions and marginals to the book's rates (on the bundled sample, 16 of the
    // consensus's 48 scenario checks on 2026-09-01 were of two scenarios resolved in March).
    await writeRaw(f.dataDir, { resolutions: [resolution('manifold:c1', 1, new Date('2026-01-20T00:00:00Z'))] }, new Date('2026-01-20T00:00:00Z'));
    const later = await publish(f, new Date('2026-01-25T00:00:00Z'));
    const scenarioChecks = await snapshotRows(f.dataDir, later, `SELECT "check", subject, count(*) AS n FROM {coherence_checks} WHERE mode IS NULL GROUP BY ALL ORDER BY 1, 2`);
    // c1 resolved: no conjunction of c1 and c2 any more, only c2's implied marginal (5 forecasters)
    expect(scenarioChecks).toEqual([{ check: 'marginal', subject: 'chain:2', n: 5 }]);
    const pairs = await snapshotRows(f.dataDir, later, `SELECT count(*) AS n FROM {coherence_checks} WHERE subject LIKE '%manifold:c1%'`);
    expect(pairs[0]).toEqual({ n: 0 });
    expect((await snapshotRows(f.dataDir, later, `SELECT * FROM {coherence} WHERE forecaster = 'm1' AND "check" = 'all'`))[0]).toMatchObject({ n: 2, n_violated: 0 });
  });
});
