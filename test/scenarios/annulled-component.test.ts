/**
 * A scenario whose components are all settled, one of them annulled (QA): nothing is left open, so
 * no run archives a record of it (README: a record "for every scenario with a consensus joint and a
 * component still open"); before, every run archived another copy of the same joint. Its status is
 * `annulled` (it can never resolve, nothing of it is still open), not `active` forever: before, a
 * client's `status=active` listed it among the scenarios still moving.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, serve } from '../api/helpers.ts';
import { fixture, forecasts, publish, question, rawRows, snapshotRows, writeRaw, resolution, type Fixture } from '../structure/helpers.ts';

const Q1 = 'manifold:a1';
const Q2 = 'polymarket:a2';
const Q3 = 'kalshi:a3';
const SCENARIO = ['scenarios:', '  - id: settled', '    title: Settled with an annulment', '    description: Three questions, one annulled', '    components:',
  ...[Q1, Q2, Q3].map((q) => `      - { question: "${q}" }`), ''].join('\n');

describe('a scenario with an annulled component and the others resolved', () => {
  let f: Fixture;
  const T1 = new Date('2026-01-10T00:00:00Z');
  const T2 = new Date('2026-02-01T00:00:00Z');
  const runs: string[] = [];
  beforeAll(async () => {
    f = fixture();
    mkdirSync(join(f.structureDir, 'scenarios'), { recursive: true });
    writeFileSync(join(f.structureDir, 'scenarios', 'settled.yaml'), SCENARIO);
    await writeRaw(f.dataDir, {
      questions: [question(Q1, 'first unrelated zebra'), question(Q2, 'second unrelated yak'), question(Q3, 'third unrelated walrus')],
      forecasts: [...forecasts('r-a-1', Q1, T1, [0.6, 0.8, 0.5, 0.7]), ...forecasts('r-a-1', Q2, T1, [0.5, 0.4, 0.3, 0.9]), ...forecasts('r-a-1', Q3, T1, [0.2, 0.2, 0.6, 0.1])],
    });
    runs.push(await publish(f, T1)); // all open: a record
    await writeRaw(f.dataDir, { resolutions: [resolution(Q1, 1, T2), { ...resolution(Q2, 0, T2), outcome: null }, resolution(Q3, 0, T2)] }, T2);
    for (const d of ['2026-02-10', '2026-02-11', '2026-02-12']) runs.push(await publish(f, new Date(`${d}T00:00:00Z`)));
  }, 120_000);
  afterAll(() => f.cleanup());

  it('archives its record while a component is open, and none once every component is resolved or annulled', async () => {
    const raw = await rawRows(f.dataDir, 'scenario_archive', `scenario_id = 'settled'`);
    expect(raw.map((r) => r.run_id)).toEqual([runs[0]]);
    const comps = await snapshotRows(f.dataDir, runs[3]!, `SELECT ord, status FROM {scenario_components} ORDER BY ord`);
    expect(comps.map((c) => c.status)).toEqual(['resolved', 'annulled', 'resolved']);
    const s = await snapshotRows(f.dataDir, runs[3]!, `SELECT n_records FROM {scenarios} WHERE scenario_id = 'settled'`);
    expect(s[0]!.n_records).toBe(1);
  });

  it('is annulled once nothing is open, active while a component is, and status filters by it', async () => {
    const status = async (run: string) =>
      (await snapshotRows(f.dataDir, run, `SELECT status, n_resolved FROM {scenarios} WHERE scenario_id = 'settled'`))[0];
    expect(await status(runs[0]!)).toEqual({ status: 'active', n_resolved: 0 });
    expect(await status(runs[3]!)).toEqual({ status: 'annulled', n_resolved: 2 });
    const server = await serve(f.dataDir);
    try {
      const ids = async (q: string) => {
        const got = await get(server, `/api/scenarios/${q}`);
        expect(got.res.status, got.text).toBe(200);
        return got.body.scenarios.map((s: any) => [s.scenario_id, s.status]);
      };
      expect(await ids('')).toEqual([['settled', 'annulled']]);
      expect(await ids('?status=annulled')).toEqual([['settled', 'annulled']]);
      expect(await ids('?status=active')).toEqual([]);
      expect(await ids('?status=resolved')).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
