/**
 * Issue 13 on hand-made fixtures: the joints of a 3-component scenario (the independent product,
 * the chain rule from given conditionals, the maximum-entropy fit to marginals and some
 * conditionals, checked against the closed form and against a Newton solve of the dual), the
 * consensus and its disagreement, archived records (idempotent) and their scores as the components
 * resolve, wholly and in part. Everything goes through the pipeline's own stages and SQL over a
 * real warehouse in a temp dir.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareFactors } from '../../pipeline/factors/stage.ts';
import { freezeScenarioRecords, prepareScenarios, type ScenarioConditional } from '../../pipeline/scenarios/stage.ts';
import { prepareStructure } from '../../pipeline/structure/stage.ts';
import { deriveTables } from '../../pipeline/warehouse/derive.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { toPlain } from '../../pipeline/warehouse/values.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { fixture, forecasts, publish, question, rawRows, snapshotRows, writeRaw, type Fixture, resolution } from '../structure/helpers.ts';

/**
 * A DOUBLE as DuckDB prints it in the record hash: the shortest text that reads back as the same
 * number, which for the probabilities here (between 0.001 and 1) is also what JS prints.
 */
const numberText = (x: number): string => String(x);

const Q1 = 'manifold:s1';
const Q2 = 'polymarket:s2';
const Q3 = 'kalshi:s3';
const SCENARIO = [
  'scenarios:',
  '  - id: hand',
  '    title: A hand-made pathway',
  '    description: Three related questions in order',
  '    components:',
  `      - { question: "${Q1}", label: First }`,
  `      - { question: "${Q2}" }`,
  `      - { question: "${Q3}" }`,
  '',
].join('\n');

// The models' direct forecasts (m1..m4) of the three components.
const P = {
  [Q1]: [0.6, 0.8, 0.5, 0.7],
  [Q2]: [0.5, 0.4, 0.3, 0.9],
  [Q3]: [0.2, 0.2, 0.6, 0.1],
};
const WORLDS = ['000', '001', '010', '011', '100', '101', '110', '111'];

/** The product of the marginals `p` (in pathway order) at world `w`. */
const product = (p: number[], w: string) => p.reduce((acc, pk, k) => acc * (w[k] === '1' ? pk : 1 - pk), 1);
const marginals = (m: number) => [P[Q1][m]!, P[Q2][m]!, P[Q3][m]!];

/** A scenario fixture with the three questions forecast by four models at T1. */
async function scenarioFixture(T1: Date): Promise<Fixture> {
  const f = fixture();
  mkdirSync(join(f.structureDir, 'scenarios'), { recursive: true });
  writeFileSync(join(f.structureDir, 'scenarios', 'hand.yaml'), SCENARIO);
  await writeRaw(f.dataDir, {
    questions: [question(Q1, 'first unrelated zebra'), question(Q2, 'second unrelated yak'), question(Q3, 'third unrelated walrus')],
    forecasts: [
      ...forecasts('r-hand-1', Q1, T1, P[Q1]),
      ...forecasts('r-hand-1', Q2, T1, P[Q2]),
      ...forecasts('r-hand-1', Q3, T1, P[Q3]),
    ],
  });
  return f;
}

/** Runs the derive on one connection (as scoreAndPublish does) with the conditionals given. */
async function derive<T>(f: Fixture, asOf: Date, runId: string, conditionals: ScenarioConditional[], use: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  process.env.QUORUM_STRUCTURE_DIR = f.structureDir;
  try {
    return await withConnection(async (conn) => {
      await createRawViews(conn, f.dataDir);
      await prepareStructure(conn, { runId });
      await prepareFactors(conn, {});
      await prepareScenarios(conn, { runId, conditionals });
      await deriveTables(conn, { asOf });
      return use(conn);
    });
  } finally {
    delete process.env.QUORUM_STRUCTURE_DIR;
  }
}

async function rows(conn: DuckDBConnection, sql: string): Promise<Record<string, any>[]> {
  const reader = await conn.runAndReadAll(sql);
  return reader.getRowObjectsJS().map((r) => toPlain(r) as Record<string, any>);
}

/**
 * The maximum-entropy joint over the worlds under constraints P(c_k = 1 | S) = p, by Newton's
 * method on the convex dual: P(w) ∝ exp(Σ λ_j f_j(w)), f_j = 1_S (1_{c_k} − p); the gradient of
 * log Z is E[f], its Hessian Cov[f]. Independent of the SQL's cyclic projections.
 */
function maxEntropy(worlds: string[], constraints: { ord: number; condition: string; p: number }[]): Map<string, number> {
  const f = worlds.map((w) =>
    constraints.map((c) => {
      const inS = [...c.condition].every((ch, i) => ch === '-' || ch === w[i]);
      return inS ? (w[c.ord - 1] === '1' ? 1 : 0) - c.p : 0;
    }),
  );
  const n = constraints.length;
  let lambda = new Array<number>(n).fill(0);
  let probs: number[] = [];
  for (let iter = 0; iter < 100; iter++) {
    const e = f.map((fw) => Math.exp(fw.reduce((a, v, j) => a + v * lambda[j]!, 0)));
    const z = e.reduce((a, v) => a + v, 0);
    probs = e.map((v) => v / z);
    const mean = Array.from({ length: n }, (_, j) => probs.reduce((a, p, i) => a + p * f[i]![j]!, 0));
    const cov = Array.from({ length: n }, (_, j) =>
      Array.from({ length: n }, (_, k) => probs.reduce((a, p, i) => a + p * f[i]![j]! * f[i]![k]!, 0) - mean[j]! * mean[k]!),
    );
    // Solve cov · d = mean (Gaussian elimination), λ ← λ − d.
    const a = cov.map((row, j) => [...row, mean[j]!]);
    for (let c = 0; c < n; c++) {
      const piv = a.slice(c).reduce((best, row, i) => (Math.abs(row[c]!) > Math.abs(a[best]![c]!) ? i + c : best), c);
      [a[c], a[piv]] = [a[piv]!, a[c]!];
      for (let r = 0; r < n; r++) {
        if (r === c) continue;
        const factor = a[r]![c]! / a[c]![c]!;
        for (let k = c; k <= n; k++) a[r]![k]! -= factor * a[c]![k]!;
      }
    }
    const d = a.map((row, j) => row[n]! / row[j]!);
    lambda = lambda.map((l, j) => l - d[j]!);
    if (Math.max(...d.map(Math.abs)) < 1e-14) break;
  }
  return new Map(worlds.map((w, i) => [w, probs[i]!]));
}

describe('scenario joints: independent, chain rule, maximum-entropy fit; consensus', () => {
  let f: Fixture;
  const T1 = new Date('2026-01-10T00:00:00Z');
  let worlds: Record<string, any>[];
  let margs: Record<string, any>[];
  // m1 answers every conditional of the chain; m2 one pairwise conditional (component 3 given the
  // first YES); m3 one full conditional (component 3 given 11); m4 none.
  const chain = { '2|1': 0.9, '2|0': 0.2, '3|11': 0.7, '3|10': 0.4, '3|01': 0.3, '3|00': 0.05 };
  const conditionals: ScenarioConditional[] = [
    ...Object.entries(chain).map(([k, p]) => {
      const [ord, condition] = k.split('|');
      return { scenarioId: 'hand', model: 'm1', componentOrd: Number(ord), condition: condition!, probability: p };
    }),
    { scenarioId: 'hand', model: 'm2', componentOrd: 3, condition: '1-', probability: 0.1 },
    { scenarioId: 'hand', model: 'm3', componentOrd: 3, condition: '11', probability: 0.9 },
    // Ignored: a condition of the wrong length, a probability above 1, an unknown scenario.
    { scenarioId: 'hand', model: 'm4', componentOrd: 3, condition: '1', probability: 0.5 },
    { scenarioId: 'hand', model: 'm4', componentOrd: 2, condition: '1', probability: 1.5 },
    { scenarioId: 'nope', model: 'm4', componentOrd: 2, condition: '1', probability: 0.5 },
  ];
  beforeAll(async () => {
    f = await scenarioFixture(T1);
    [worlds, margs] = await derive(f, T1, 'r-joint', conditionals, async (conn) => [
      await rows(conn, `SELECT * FROM scenario_worlds WHERE scenario_id = 'hand'`),
      await rows(conn, `SELECT * FROM scenario_marginals WHERE scenario_id = 'hand'`),
    ]);
  });
  afterAll(() => f.cleanup());

  const joint = (model: string | null) => new Map(worlds.filter((w) => w.model === model).map((w) => [w.world as string, w]));

  // The chain rule by hand for m1: P(c1) = 0.6 (its direct forecast).
  const chainJoint = new Map(
    WORLDS.map((w) => {
      const p1 = w[0] === '1' ? 0.6 : 0.4;
      const c2 = chain[`2|${w[0]}` as keyof typeof chain];
      const c3 = chain[`3|${w.slice(0, 2)}` as keyof typeof chain];
      return [w, p1 * (w[1] === '1' ? c2 : 1 - c2) * (w[2] === '1' ? c3 : 1 - c3)];
    }),
  );
  // m2's maximum-entropy joint in closed form: the (c1, c3) table is fixed by P(c1) = 0.8,
  // P(c3) = 0.2 and P(c3 | c1) = 0.1 (P(11) = 0.08, P(10) = 0.72, P(01) = 0.12, P(00) = 0.08), and
  // c2 is independent of both (nothing ties it to them).
  const table13: Record<string, number> = { '11': 0.08, '10': 0.72, '01': 0.12, '00': 0.08 };
  const ipfClosed = new Map(WORLDS.map((w) => [w, table13[w[0]! + w[2]!]! * (w[1] === '1' ? 0.4 : 0.6)]));

  it('independent: the product of the model\'s latest direct forecasts (m4)', () => {
    const m4 = joint('m4');
    expect(m4.size).toBe(8);
    for (const w of WORLDS) {
      expect(m4.get(w)!.method).toBe('independent');
      expect(m4.get(w)!.probability).toBeCloseTo(product(marginals(3), w), 12);
    }
    // 0.7 · 0.9 · 0.9 = 0.567 is the most likely world '110'.
    expect(m4.get('110')!.rank).toBe(1);
    expect(m4.get('110')!.probability).toBeCloseTo(0.567, 12);
  });

  it('chain rule: P(c1) · P(c2 | c1) · P(c3 | c1 c2) from the given conditionals (m1), with the coherence gap', () => {
    const m1 = joint('m1');
    expect(chainJoint.get('110')).toBeCloseTo(0.6 * 0.9 * 0.3, 15);
    for (const w of WORLDS) {
      expect(m1.get(w)!.method).toBe('chain_rule');
      expect(m1.get(w)!.probability).toBeCloseTo(chainJoint.get(w)!, 12);
    }
    // Implied P(c2) = 0.6 · 0.9 + 0.4 · 0.2 = 0.62 against m1's direct 0.5: gap +0.12.
    const c2 = margs.find((m) => m.model === 'm1' && m.ord === 2)!;
    expect(c2.implied).toBeCloseTo(0.62, 12);
    expect(c2.direct).toBe(0.5);
    expect(c2.coherence_gap).toBeCloseTo(0.12, 12);
    // Implied P(c3) = Σ P(c1 c2) P(c3 | c1 c2) = .54·.7 + .06·.4 + .08·.3 + .32·.05 = 0.442.
    expect(margs.find((m) => m.model === 'm1' && m.ord === 3)!.implied).toBeCloseTo(0.442, 12);
  });

  it('max_entropy_ipf with one pairwise conditional (m2): the closed form, and the marginals held', () => {
    const m2 = joint('m2');
    for (const w of WORLDS) {
      expect(m2.get(w)!.method).toBe('max_entropy_ipf');
      expect(m2.get(w)!.probability).toBeCloseTo(ipfClosed.get(w)!, 9);
    }
    // The same from the Newton solve of the dual (an independent computation).
    const newton = maxEntropy(WORLDS, [
      { ord: 1, condition: '', p: 0.8 },
      { ord: 2, condition: '', p: 0.4 },
      { ord: 3, condition: '', p: 0.2 },
      { ord: 3, condition: '1-', p: 0.1 },
    ]);
    for (const w of WORLDS) expect(newton.get(w)!).toBeCloseTo(ipfClosed.get(w)!, 12);
    for (const m of margs.filter((x) => x.model === 'm2')) expect(Math.abs(m.coherence_gap)).toBeLessThan(1e-9);
  });

  it('max_entropy_ipf with one full conditional (m3): matches the Newton solve of the dual', () => {
    const m3 = joint('m3');
    const newton = maxEntropy(WORLDS, [
      { ord: 1, condition: '', p: 0.5 },
      { ord: 2, condition: '', p: 0.3 },
      { ord: 3, condition: '', p: 0.6 },
      { ord: 3, condition: '11', p: 0.9 },
    ]);
    // The fit is not the product: P(c3 | 11) was asked to be 0.9, not 0.6.
    expect(Math.abs(newton.get('111')! - 0.5 * 0.3 * 0.6)).toBeGreaterThan(0.01);
    for (const w of WORLDS) expect(m3.get(w)!.probability).toBeCloseTo(newton.get(w)!, 9);
    expect(m3.get('111')!.probability / (m3.get('111')!.probability + m3.get('110')!.probability)).toBeCloseTo(0.9, 9);
  });

  it('consensus: the mean of the four joints with the population sd per world, ranked', () => {
    const consensus = joint(null);
    const m = ['m1', 'm2', 'm3', 'm4'].map((x) => joint(x));
    for (const w of WORLDS) {
      const ps = m.map((j) => j.get(w)!.probability as number);
      const mean = ps.reduce((a, b) => a + b, 0) / 4;
      const sd = Math.sqrt(ps.reduce((a, b) => a + (b - mean) ** 2, 0) / 4);
      expect(consensus.get(w)!.source).toBe('consensus');
      expect(consensus.get(w)!.probability).toBeCloseTo(mean, 12);
      expect(consensus.get(w)!.disagreement_sd).toBeCloseTo(sd, 12);
      expect(consensus.get(w)!.n_models).toBe(4);
    }
    expect(consensus.get(WORLDS[0]!)!.method).toBe('chain_rule,independent,max_entropy_ipf');
    const ranked = [...consensus.values()].sort((a, b) => a.rank - b.rank);
    for (let i = 1; i < ranked.length; i++) expect(ranked[i - 1]!.probability).toBeGreaterThanOrEqual(ranked[i]!.probability);
    // Nothing resolved: every world is consistent and its conditional probability is itself.
    for (const w of ranked) expect(w.conditional_probability).toBeCloseTo(w.probability, 12);
  });
});

describe('scenario records: archived per run, idempotent, scored as components resolve', () => {
  let f: Fixture;
  let run1: string;
  let run2: string;
  let run3: string;
  const T1 = new Date('2026-01-10T00:00:00Z');
  const T2 = new Date('2026-02-01T00:00:00Z');
  const T3 = new Date('2026-02-10T00:00:00Z');
  const T4 = new Date('2026-03-01T00:00:00Z');
  const T5 = new Date('2026-03-10T00:00:00Z');
  // With no conditionals every model's joint is independent; the consensus is their mean.
  const consensus = new Map(WORLDS.map((w) => [w, [0, 1, 2, 3].reduce((a, m) => a + product(marginals(m), w), 0) / 4]));
  beforeAll(async () => {
    f = await scenarioFixture(T1);
    run1 = await publish(f, T1);
    // q1 resolves YES at T2: run 2 (T3) holds the first component resolved.
    await writeRaw(f.dataDir, { resolutions: [resolution(Q1, 1, T2)] }, T2);
    run2 = await publish(f, T3);
    // q2 NO and q3 YES at T4: the realized world is '101'.
    await writeRaw(f.dataDir, {
      resolutions: [
        resolution(Q2, 0, T4),
        resolution(Q3, 1, T4),
      ],
    }, T4);
    run3 = await publish(f, T5);
  });
  afterAll(() => f.cleanup());

  it('each run with a component open appends one hashed record per scenario, its worlds as a list; re-freezing adds nothing', async () => {
    const raw = await rawRows(f.dataDir, 'scenario_archive', `scenario_id = 'hand'`);
    expect(raw.filter((r) => r.run_id === run1)).toHaveLength(1);
    expect(raw.filter((r) => r.run_id === run2)).toHaveLength(1);
    // Run 3: every component resolved, nothing left to forecast, no record.
    expect(raw.filter((r) => r.run_id === run3)).toHaveLength(0);
    const r1 = raw.find((r) => r.run_id === run1)!;
    expect(r1.content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(r1).toMatchObject({ components: `${Q1},${Q2},${Q3}`, n_models: 4, methods: 'independent', title: 'A hand-made pathway' });
    // World i is the world whose digits read as a binary number give i: '000', '001', … '111'.
    expect(r1.probabilities).toHaveLength(8);
    WORLDS.forEach((w) => expect(r1.probabilities[parseInt(w, 2)]).toBeCloseTo(consensus.get(w)!, 12));
    const implied = [0, 1, 2].map((k) => WORLDS.filter((w) => w[k] === '1').reduce((a, w) => a + consensus.get(w)!, 0));
    implied.forEach((m, k) => expect(r1.marginals[k]).toBeCloseTo(m, 12));
    expect(r1.disagreement_sd).toHaveLength(8);
    // The hash covers the components and each world's probability as DuckDB prints it.
    const text = `${Q1},${Q2},${Q3}|` + WORLDS.map((w) => `${w}:${numberText(r1.probabilities[parseInt(w, 2)])};`).join('');
    expect(r1.content_hash).toBe(createHash('sha256').update(text).digest('hex'));
    // The same forecasts at run 2: the same content, the same hash.
    expect(raw.find((r) => r.run_id === run2)!.content_hash).toBe(r1.content_hash);
    const again = await derive(f, T3, run2, [], (conn) => freezeScenarioRecords(conn, f.dataDir, run2, T3));
    expect(again).toBe(0);
    expect(await rawRows(f.dataDir, 'scenario_archive', `scenario_id = 'hand'`)).toHaveLength(2);
  });

  it('a partly resolved record: the remaining worlds renormalized, the resolved component scored', async () => {
    const [s1] = await snapshotRows(f.dataDir, run2, `SELECT * FROM {scenario_record_scores} WHERE scenario_id = 'hand' AND run_id = '${run1}'`);
    const mass = WORLDS.filter((w) => w[0] === '1').reduce((a, w) => a + consensus.get(w)!, 0);
    expect(mass).toBeCloseTo(0.65, 12); // the mean of the direct P(c1): (0.6 + 0.8 + 0.5 + 0.7) / 4
    expect(s1).toMatchObject({ n_resolved: 1, resolved_pattern: '1--', complete: false, realized_world: null, log_score: null, brier: null });
    expect(s1!.consistent_mass).toBeCloseTo(mass, 12);
    expect(s1!.partial_log_score).toBeCloseTo(Math.log(mass), 12);
    expect(s1!.component_brier).toBeCloseTo((mass - 1) ** 2, 12);
    // The record as archived, in the snapshot (its worlds conditioned on the resolutions are
    // listed by the API: test/scenarios/api.test.ts).
    const [rec] = await snapshotRows(f.dataDir, run2, `SELECT * FROM {scenario_records} WHERE scenario_id = 'hand' AND run_id = '${run1}'`);
    expect(rec).toMatchObject({ n_components: 3, n_worlds: 8, components: `${Q1},${Q2},${Q3}` });
    WORLDS.forEach((w) => expect(rec!.probabilities[parseInt(w, 2)]).toBeCloseTo(consensus.get(w)!, 12));
    // The current joint is conditioned the same way.
    const current = await snapshotRows(f.dataDir, run2, `SELECT * FROM {scenario_worlds} WHERE scenario_id = 'hand' AND source = 'consensus' AND world = '110'`);
    expect(current[0]!.conditional_probability).toBeCloseTo(consensus.get('110')! / mass, 12);
  });

  it('a wholly resolved record: log score and multi-class Brier of the realized world, component Briers', async () => {
    const scores = await snapshotRows(f.dataDir, run3, `SELECT * FROM {scenario_record_scores} WHERE scenario_id = 'hand' ORDER BY as_of`);
    expect(scores.map((s) => s.run_id)).toEqual([run1, run2]);
    const s1 = scores[0]!;
    const p = consensus.get('101')!;
    const brier = WORLDS.reduce((a, w) => a + (consensus.get(w)! - (w === '101' ? 1 : 0)) ** 2, 0);
    const implied = [0, 1, 2].map((k) => WORLDS.filter((w) => w[k] === '1').reduce((a, w) => a + consensus.get(w)!, 0));
    expect(s1).toMatchObject({ complete: true, realized_world: '101', n_resolved: 3 });
    expect(s1.realized_probability).toBeCloseTo(p, 12);
    expect(s1.log_score).toBeCloseTo(Math.log(p), 12);
    expect(s1.brier).toBeCloseTo(brier, 12);
    expect(s1.component_brier).toBeCloseTo(((implied[0]! - 1) ** 2 + implied[1]! ** 2 + (implied[2]! - 1) ** 2) / 3, 12);
    const [scenario] = await snapshotRows(f.dataDir, run3, `SELECT * FROM {scenarios} WHERE scenario_id = 'hand'`);
    expect(scenario).toMatchObject({ status: 'resolved', n_resolved: 3, resolved_pattern: '101', n_records: 2, latest_run_id: run2 });
  });

  it('a run dated in the past sees only the records archived at or before its as-of time', async () => {
    const past = await publish(f, new Date('2026-01-20T00:00:00Z'));
    const scores = await snapshotRows(f.dataDir, past, `SELECT run_id FROM {scenario_record_scores} WHERE scenario_id = 'hand' ORDER BY as_of`);
    expect(scores.map((s) => s.run_id)).toEqual([run1, past]);
  });

  it('records of the first format (one raw row per world) are still read, folded into one record each and scored', async () => {
    // A record as runs archived them before scenario_archive: raw scenario_records, one row per
    // world, the record's values repeated. The same joint as run 1's, archived a day after it.
    const legacyRun = 'r20260111T000000Z-legacy01';
    const asOf = new Date('2026-01-11T00:00:00Z');
    const rows = WORLDS.map((w) => ({
      scenario_id: 'hand', run_id: legacyRun, as_of: asOf, title: 'A hand-made pathway', components: `${Q1},${Q2},${Q3}`,
      world: w, probability: consensus.get(w)!, disagreement_sd: 0, n_models: 4, methods: 'independent',
      content_hash: 'f'.repeat(64), recorded_at: asOf,
    }));
    await withConnection((conn) => appendRaw(conn, f.dataDir, 'scenario_records', rows, { runId: legacyRun, runDate: '2026-01-11' }));
    const now = await publish(f, T5);
    const scores = await snapshotRows(f.dataDir, now, `SELECT * FROM {scenario_record_scores} WHERE scenario_id = 'hand' ORDER BY as_of, run_id`);
    expect(scores.map((x) => x.run_id)).toContain(legacyRun);
    const legacy = scores.find((x) => x.run_id === legacyRun)!;
    const first = scores.find((x) => x.run_id === run1)!;
    expect(legacy).toMatchObject({ complete: true, realized_world: '101', n_resolved: 3 });
    for (const k of ['realized_probability', 'log_score', 'brier', 'component_brier'] as const) expect(legacy[k]).toBeCloseTo(first[k], 12);
    const [rec] = await snapshotRows(f.dataDir, now, `SELECT * FROM {scenario_records} WHERE run_id = '${legacyRun}'`);
    expect(rec).toMatchObject({ n_components: 3, n_worlds: 8, content_hash: 'f'.repeat(64) });
    WORLDS.forEach((w) => expect(rec!.probabilities[parseInt(w, 2)]).toBeCloseTo(consensus.get(w)!, 12));
    const implied = [0, 1, 2].map((k) => WORLDS.filter((w) => w[k] === '1').reduce((a, w) => a + consensus.get(w)!, 0));
    implied.forEach((m, k) => expect(rec!.marginals[k]).toBeCloseTo(m, 12));
    // Nothing is archived for the legacy run again, in either format.
    expect(await rawRows(f.dataDir, 'scenario_archive', `run_id = '${legacyRun}'`)).toHaveLength(0);
  });

  it('a stored record whose lists do not fit its components is left out of the scores, and the others are scored', async () => {
    // Not something the pipeline writes: another writer's record with 3 probabilities for 3
    // components (8 worlds), and a first-format record missing a world.
    const asOf = new Date('2026-01-12T00:00:00Z');
    const bad = {
      scenario_id: 'hand', run_id: 'r20260112T000000Z-badlist1', as_of: asOf, title: 'A hand-made pathway', components: `${Q1},${Q2},${Q3}`,
      probabilities: [0.2, 0.3, 0.5], disagreement_sd: [0, 0, 0], marginals: [0.5, 0.5, 0.5], n_models: 4, methods: 'independent',
      content_hash: 'e'.repeat(64), recorded_at: asOf,
    };
    await withConnection((conn) => appendRaw(conn, f.dataDir, 'scenario_archive', [bad], { runId: bad.run_id, runDate: '2026-01-12' }));
    const shortRun = 'r20260112T000000Z-short001';
    const rows = WORLDS.slice(1).map((w) => ({
      scenario_id: 'hand', run_id: shortRun, as_of: asOf, title: 'A hand-made pathway', components: `${Q1},${Q2},${Q3}`,
      world: w, probability: 1 / 7, disagreement_sd: 0, n_models: 4, methods: 'independent', content_hash: 'd'.repeat(64), recorded_at: asOf,
    }));
    await withConnection((conn) => appendRaw(conn, f.dataDir, 'scenario_records', rows, { runId: shortRun, runDate: '2026-01-12' }));
    const now = await publish(f, T5);
    const scores = await snapshotRows(f.dataDir, now, `SELECT run_id FROM {scenario_record_scores} WHERE scenario_id = 'hand'`);
    const ids = scores.map((x) => x.run_id);
    expect(ids).not.toContain(bad.run_id);
    expect(ids).not.toContain(shortRun);
    expect(ids).toEqual(expect.arrayContaining([run1, run2]));
    // Both stay stored as they were; the archived one is listed as archived, without scores.
    expect(await rawRows(f.dataDir, 'scenario_archive', `run_id = '${bad.run_id}'`)).toHaveLength(1);
    const listed = await snapshotRows(f.dataDir, now, `SELECT n_worlds FROM {scenario_records} WHERE run_id = '${bad.run_id}'`);
    expect(listed).toEqual([{ n_worlds: 3 }]);
    expect(await rawRows(f.dataDir, 'scenario_records', `run_id = '${shortRun}'`)).toHaveLength(7);
  });

  it('another run dated at a time already archived (the rescore quorum start makes after an upgrade) archives no copy, in either format', async () => {
    // QA upgrade pass: the rescore is dated at the replaced snapshot's as_of, whose run archived
    // its records; it archived each again under its own run id (same as_of, same content).
    const atT1 = await publish(f, T1);
    expect((await rawRows(f.dataDir, 'scenario_archive', `scenario_id = 'hand' AND as_of = TIMESTAMP '2026-01-10 00:00:00'`)).map((r) => r.run_id)).toEqual([run1]);
    expect(await rawRows(f.dataDir, 'scenario_archive', `run_id = '${atT1}'`)).toHaveLength(0);
    // the snapshot lists the one record of T1
    expect(await snapshotRows(f.dataDir, atT1, `SELECT run_id FROM {scenario_records} WHERE scenario_id = 'hand' AND as_of = TIMESTAMP '2026-01-10 00:00:00'`)).toEqual([{ run_id: run1 }]);
    // a record of the first format (an older version's snapshot time) counts the same way
    const legacyRun = 'r20260115T000000Z-legacy02';
    const asOf = new Date('2026-01-15T00:00:00Z');
    const rows = WORLDS.map((w) => ({
      scenario_id: 'hand', run_id: legacyRun, as_of: asOf, title: 'A hand-made pathway', components: `${Q1},${Q2},${Q3}`,
      world: w, probability: consensus.get(w)!, disagreement_sd: 0, n_models: 4, methods: 'independent', content_hash: 'c'.repeat(64), recorded_at: asOf,
    }));
    await withConnection((conn) => appendRaw(conn, f.dataDir, 'scenario_records', rows, { runId: legacyRun, runDate: '2026-01-15' }));
    const rescore = await publish(f, asOf);
    expect(await rawRows(f.dataDir, 'scenario_archive', `run_id = '${rescore}'`)).toHaveLength(0);
    // a time not archived yet still gets its record
    const later = await publish(f, new Date('2026-01-16T00:00:00Z'));
    expect(await rawRows(f.dataDir, 'scenario_archive', `run_id = '${later}'`)).toHaveLength(1);
  });
});

describe('contradictory conditionals: the fit stops at the sweep limit and the gap shows the contradiction', () => {
  let f: Fixture;
  const T1 = new Date('2026-01-10T00:00:00Z');
  afterAll(() => f.cleanup());

  it('P(c2 | c1) = 0.9 either way against a direct P(c2) = 0.5 (m1)', async () => {
    f = await scenarioFixture(T1);
    const conditionals: ScenarioConditional[] = ['1', '0'].map((c) => ({ scenarioId: 'hand', model: 'm1', componentOrd: 2, condition: c, probability: 0.9 }));
    const [worlds, margs] = await derive(f, T1, 'r-contra', conditionals, async (conn) => [
      await rows(conn, `SELECT * FROM scenario_worlds WHERE scenario_id = 'hand' AND model = 'm1'`),
      await rows(conn, `SELECT * FROM scenario_marginals WHERE scenario_id = 'hand' AND model = 'm1' ORDER BY ord`),
    ]);
    expect(worlds).toHaveLength(8);
    expect(new Set(worlds.map((w) => w.method))).toEqual(new Set(['max_entropy_ipf']));
    expect(worlds.reduce((a, w) => a + w.probability, 0)).toBeCloseTo(1, 12);
    // No joint has P(c2) = 0.5 and P(c2 | c1) = 0.9 both ways. The conditionals are fitted after
    // the marginals in each sweep, so they hold when the sweeps run out: P(c2) = 0.9, gap +0.4.
    expect(margs[1]!.implied).toBeCloseTo(0.9, 9);
    expect(margs[1]!.coherence_gap).toBeCloseTo(0.4, 9);
    // The marginals fitted before them in the last sweep and untouched by them still hold.
    expect(margs[0]!.coherence_gap).toBeCloseTo(0, 9);
    expect(margs[2]!.coherence_gap).toBeCloseTo(0, 9);
  });
});
