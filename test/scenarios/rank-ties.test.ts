/**
 * Issue 13: worlds of equal probability are ranked by world (sql/README.md, "Scenarios": `rank`
 * 1 = most likely, ties by world), also when floating point computes the two products of a tie
 * differently in their last bit. Hand-computed, two components, every model the same chain:
 * P(c1) = 0.4, P(c2 | c1 NO) = 0.6, P(c2 | c1 YES) = 0.1, so
 *   P('00') = 0.6 · 0.4 = 0.24, P('01') = 0.6 · 0.6 = 0.36, P('10') = 0.4 · 0.9 = 0.36,
 *   P('11') = 0.4 · 0.1 = 0.04,
 * a tie for the most likely world between '01' and '10', which floating point evaluates as
 * 0.36 and 0.36000000000000004. By the definition '01' is rank 1 and the top world, everywhere a
 * world is ranked or a top world named: scenario_worlds, scenarios, scenario_records and the API's
 * record pathway. (Found by an independent recomputation of the published figures: a joint of
 * the simulator's forecasts ranked '1001' before '0000', both 0.0071194464.)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { get, serve } from '../api/helpers.ts';
import { fixture, forecasts, publish, question, snapshotRows, writeRaw, type Fixture } from '../structure/helpers.ts';

const Q1 = 'manifold:t1';
const Q2 = 'kalshi:t2';
const T0 = new Date('2026-01-05T00:00:00Z');
const T1 = new Date('2026-01-10T00:00:00Z');
const MODELS = ['m1', 'm2', 'm3', 'm4'];

/** A stored conditional forecast of scenario `tie`: P(component k YES | earlier outcomes `o`). */
const conditional = (model: string, k: number, o: string, p: number) => ({
  run_id: 'r-tie-0', question_id: Q2, model, mode: 'augmented', created_at: T0, probability: p,
  lang: 'en', provider: 'simulated', translation_of: null, condition: `tie:${k}:${o}`,
});

describe('scenario worlds tied in probability are ranked by world', () => {
  let f: Fixture;
  let run: string;
  let server: ServerHandle;
  beforeAll(async () => {
    f = fixture();
    mkdirSync(join(f.structureDir, 'scenarios'), { recursive: true });
    writeFileSync(join(f.structureDir, 'scenarios', 'tie.yaml'), [
      'scenarios:', '  - id: tie', '    title: A tie', '    description: Two worlds of one probability', '    components:',
      `      - { question: "${Q1}" }`, `      - { question: "${Q2}" }`, ''].join('\n'));
    await writeRaw(f.dataDir, {
      questions: [question(Q1, 'first unrelated zebra'), question(Q2, 'second unrelated yak')],
      forecasts: [
        ...forecasts('r-tie-0', Q1, T0, [0.4, 0.4, 0.4, 0.4]),
        ...forecasts('r-tie-0', Q2, T0, [0.3, 0.3, 0.3, 0.3]),
        ...MODELS.flatMap((m) => [conditional(m, 2, '0', 0.6), conditional(m, 2, '1', 0.1)]),
      ],
    }, T0);
    run = await publish(f, T1);
    server = await serve(f.dataDir);
  });
  afterAll(async () => {
    await server?.close();
    f.cleanup();
  });

  const ORDER = ['01', '10', '00', '11'];

  it('scenario_worlds: every joint (the models\' chain rule and the consensus) ranks 01, 10, 00, 11', async () => {
    const rows = await snapshotRows(f.dataDir, run, `SELECT source, model, method, world, rank FROM {scenario_worlds} ORDER BY source, model, rank`);
    expect(rows.length).toBe(5 * 4);
    for (const m of [...MODELS, null]) {
      const joint = rows.filter((r) => r.model === m);
      expect(joint.map((r) => r.world), `model ${m}`).toEqual(ORDER);
      expect(joint.every((r) => r.method === 'chain_rule')).toBe(true);
    }
  });

  it('scenarios and scenario_records name 01 the top world, with its own probability', async () => {
    const [s] = await snapshotRows(f.dataDir, run, `SELECT top_world, top_probability FROM {scenarios}`);
    expect(s!.top_world).toBe('01');
    expect(s!.top_probability).toBeCloseTo(0.36, 12);
    const [r] = await snapshotRows(f.dataDir, run, `SELECT top_world, top_probability FROM {scenario_records}`);
    expect(r!.top_world).toBe('01');
    expect(r!.top_probability).toBeCloseTo(0.36, 12);
  });

  it('the API ranks the record\'s pathway and the current joint the same way', async () => {
    const res = await get(server, '/api/scenarios/tie/');
    expect(res.res.status).toBe(200);
    const sc = res.body.scenario;
    expect(sc.top_world).toBe('01');
    expect(sc.latest_record.top_world).toBe('01');
    expect(sc.latest_record.pathway.map((w: { world: string }) => w.world)).toEqual(ORDER);
    expect(sc.latest_record.pathway.map((w: { rank: number }) => w.rank)).toEqual([1, 2, 3, 4]);
    for (const j of sc.current) expect(j.pathway.map((w: { world: string }) => w.world)).toEqual(ORDER);
  });
});
