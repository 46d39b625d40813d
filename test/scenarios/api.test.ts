/**
 * GET /api/scenarios/ and /api/scenarios/{scenario_id}/ over a real HTTP server on port 0, serving a
 * snapshot the pipeline published from a hand-made warehouse: two scenarios over four questions,
 * two runs; between them the first component of one scenario resolves, then all of the other's.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { auth, expectProblem, get, maxDecimals, newKey, serve } from '../api/helpers.ts';
import { fixture, forecasts, publish, question, writeRaw, type Fixture, resolution } from '../structure/helpers.ts';

const T1 = new Date('2026-01-10T00:00:00Z');
const T2 = new Date('2026-02-01T00:00:00Z');
const T3 = new Date('2026-02-10T00:00:00Z');

const SCENARIOS = [
  'scenarios:',
  '  - id: hand',
  '    title: A hand-made pathway',
  '    description: Three related questions in order',
  '    components:',
  '      - { question: "manifold:a1", label: First }',
  '      - { question: "polymarket:a2" }',
  '      - { question: "kalshi:a3" }',
  '  - id: pair',
  '    title: A pair',
  '    description: Two related questions',
  '    components:',
  '      - { question: "kalshi:a3" }',
  '      - { question: "manifold:a4" }',
  '',
].join('\n');

const P1 = [0.6, 0.8, 0.5, 0.7];
const P2 = [0.5, 0.4, 0.3, 0.9];
const P3 = [0.2, 0.2, 0.6, 0.1];
const P4 = [0.9, 0.9, 0.9, 0.9];
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
/** The consensus of independent joints: the mean over the models of the products. */
function consensus(ps: number[][], world: string): number {
  return [0, 1, 2, 3].reduce((acc, m) => acc + ps.reduce((a, p, k) => a * (world[k] === '1' ? p[m]! : 1 - p[m]!), 1), 0) / 4;
}

/** The scenarios' four component questions and the models' forecasts of them at T1 (P1-P4). */
function writeComponentQuestions(dataDir: string) {
  return writeRaw(dataDir, {
    questions: [
      question('manifold:a1', 'first unrelated zebra'),
      question('polymarket:a2', 'second unrelated yak'),
      question('kalshi:a3', 'third unrelated walrus'),
      question('manifold:a4', 'fourth unrelated heron', { category: 'science' }),
    ],
    forecasts: [
      ...forecasts('r-s-1', 'manifold:a1', T1, P1),
      ...forecasts('r-s-1', 'polymarket:a2', T1, P2),
      ...forecasts('r-s-1', 'kalshi:a3', T1, P3),
      ...forecasts('r-s-1', 'manifold:a4', T1, P4),
    ],
  });
}

describe('scenarios API', () => {
  let f: Fixture;
  let server: ServerHandle;
  let run1: string;
  let run2: string;
  beforeAll(async () => {
    f = fixture();
    mkdirSync(join(f.structureDir, 'scenarios'), { recursive: true });
    writeFileSync(join(f.structureDir, 'scenarios', 's.yaml'), SCENARIOS);
    await writeComponentQuestions(f.dataDir);
    run1 = await publish(f, T1);
    // a1 YES and a3 NO (hand: partly resolved, '1-0'); a4 YES (pair: resolved, realized '01').
    await writeRaw(f.dataDir, {
      resolutions: [
        resolution('manifold:a1', 1, T2),
        resolution('kalshi:a3', 0, T2),
        resolution('manifold:a4', 1, T2),
      ],
    }, T2);
    run2 = await publish(f, T3);
    server = await serve(f.dataDir);
  });
  afterAll(async () => {
    await server?.close();
    f.cleanup();
  });

  it('lists scenarios with components and the latest record\'s pathway, component distributions and scores', async () => {
    const got = await get(server, '/api/scenarios/');
    expect(got.res.status, got.text).toBe(200);
    expect(got.res.headers.get('x-snapshot')).toBe(run2);
    const { scenarios, count, total, next_cursor } = got.body;
    expect([count, total, next_cursor]).toEqual([2, 2, null]);
    expect(scenarios.map((s: any) => [s.scenario_id, s.status, s.n_resolved, s.n_records])).toEqual([
      ['hand', 'active', 2, 2],
      ['pair', 'resolved', 2, 1],
    ]);
    const hand = scenarios[0];
    expect(hand).toMatchObject({ n_components: 3, n_worlds: 8, resolved_pattern: '1-0', n_models: 4 });
    expect(hand.components.map((c: any) => [c.ord, c.question_id, c.label, c.outcome])).toEqual([
      [1, 'manifold:a1', 'First', 1],
      [2, 'polymarket:a2', 'second unrelated yak', null],
      [3, 'kalshi:a3', 'third unrelated walrus', 0],
    ]);
    // The latest record is run 2's: the worlds most likely first, conditioned on a1 YES and a3 NO.
    const rec = hand.latest_record;
    expect(rec.run_id).toBe(run2);
    expect(rec.methods).toEqual(['independent']);
    expect(rec.pathway).toHaveLength(8);
    expect(rec.pathway.map((w: any) => w.rank)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // By hand: '110' = (.24 + .256 + .06 + .567) / 4 = 0.28075 leads '100' = (.24 + .384 + .14 + .063) / 4.
    const top = rec.pathway[0];
    expect(top.world).toBe('110');
    expect(top.probability).toBeCloseTo(0.28075, 9);
    expect(rec.pathway[1].world).toBe('100');
    expect(rec.pathway[1].probability).toBeCloseTo(0.20675, 9);
    const mass = ['100', '110'].reduce((a, w) => a + consensus([P1, P2, P3], w), 0);
    expect(top.conditional_probability).toBeCloseTo(0.28075 / mass, 6);
    expect(rec.pathway.filter((w: any) => w.consistent).map((w: any) => w.world)).toEqual(['110', '100']);
    expect(rec.components.map((c: any) => c.ord)).toEqual([1, 2, 3]);
    expect(rec.components[0].implied).toBeCloseTo(0.65, 6);
    expect(rec).toMatchObject({ complete: false, resolved_pattern: '1-0', log_score: null });
    expect(rec.partial_log_score).toBeCloseTo(Math.log(mass), 6);
    // pair: every component resolved at run 2, so its only record is run 1's, scored on '01'.
    const pair = scenarios[1].latest_record;
    expect(pair).toMatchObject({ run_id: run1, complete: true, realized_world: '01' });
    expect(pair.log_score).toBeCloseTo(Math.log(consensus([P3, P4], '01')), 6);
  });

  it('filters: status, since; keyset paging by scenario_id', async () => {
    const active = await get(server, '/api/scenarios/?status=active');
    expect(active.body.scenarios.map((s: any) => s.scenario_id)).toEqual(['hand']);
    const resolved = await get(server, '/api/scenarios/?status=resolved');
    expect(resolved.body.scenarios.map((s: any) => s.scenario_id)).toEqual(['pair']);
    // Records since T2: only hand has one (run 2's); pair's last record is from T1.
    const since = await get(server, `/api/scenarios/?since=${T2.toISOString().slice(0, 10)}`);
    expect(since.res.status, since.text).toBe(200);
    expect(since.body.scenarios.map((s: any) => s.scenario_id)).toEqual(['hand']);
    expect(since.body.total).toBe(1);
    // (QA) every record here was archived today: `since` reads the records' as_of, and says so
    const doc = await get(server, '/api/openapi.json');
    const param = doc.body.paths['/api/scenarios/'].get.parameters.find((p: any) => p.name === 'since');
    expect(param.description).toMatch(/as_of/);
    expect(param.description).not.toMatch(/^Only scenarios with a record archived at or after/);
    const first = await get(server, '/api/scenarios/?limit=1');
    expect(first.body.scenarios.map((s: any) => s.scenario_id)).toEqual(['hand']);
    expect(first.body.total).toBe(2);
    const second = await get(server, `/api/scenarios/?limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.scenarios.map((s: any) => s.scenario_id)).toEqual(['pair']);
    expect(second.body.next_cursor).toBeNull();
  });

  it('one scenario: components, the current joint per model and consensus, the record history with scores', async () => {
    const got = await get(server, '/api/scenarios/pair/');
    expect(got.res.status, got.text).toBe(200);
    const s = got.body.scenario;
    expect(s).toMatchObject({ scenario_id: 'pair', title: 'A pair', status: 'resolved', n_records: 1 });
    expect(s.current.map((j: any) => j.model)).toEqual([null, 'm1', 'm2', 'm3', 'm4']);
    const cons = s.current[0];
    expect(cons).toMatchObject({ methods: ['independent'], n_models: 4 });
    expect(cons.pathway.map((w: any) => w.world)).toEqual(['01', '11', '00', '10']);
    const realized = cons.pathway.find((w: any) => w.world === '01');
    expect(realized).toMatchObject({ consistent: true });
    expect(realized.conditional_probability).toBeCloseTo(1, 9);
    for (const c of cons.components) expect(Math.abs(c.coherence_gap)).toBeLessThan(1e-9);
    // Published precision: probabilities, gaps, Brier and log scores to 6 decimals (a gap of
    // binary noise such as -5.5e-17 goes out as 0).
    expect(maxDecimals(got.body)).toBeLessThanOrEqual(6);
    expect(s.current[1].pathway.find((w: any) => w.world === '01').probability).toBeCloseTo(0.8 * 0.9, 6);
    expect(s.records).toHaveLength(1);
    const r = s.records[0];
    const brier = ['00', '01', '10', '11'].reduce((a, w) => a + (consensus([P3, P4], w) - (w === '01' ? 1 : 0)) ** 2, 0);
    expect(r.brier).toBeCloseTo(brier, 6);
    expect(r.content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.components.map((c: any) => [c.question_id, c.outcome])).toEqual([['kalshi:a3', 0], ['manifold:a4', 1]]);
    // Each component's Brier: (the record's implied marginal − the outcome)², P3 and P4 the mean
    // direct forecasts (independent joints: the implied marginal is the direct forecast).
    expect(r.components[0].implied).toBeCloseTo(mean(P3), 9);
    expect(r.components[0].brier).toBeCloseTo(mean(P3) ** 2, 9);
    expect(r.components[1].brier).toBeCloseTo((mean(P4) - 1) ** 2, 9);
    expect(s.latest_record.run_id).toBe(run1);
    const hand = await get(server, '/api/scenarios/hand/');
    expect(hand.body.scenario.records.map((x: any) => x.run_id)).toEqual([run2, run1]);
    expect(maxDecimals(hand.body)).toBeLessThanOrEqual(6);
  });

  it('the record history comes a page at a time, newest first (records_limit, records_cursor)', async () => {
    const whole = (await get(server, '/api/scenarios/hand/')).body.scenario;
    expect(whole.next_records_cursor).toBeNull();
    const first = await get(server, '/api/scenarios/hand/?records_limit=1');
    expect(first.res.status, first.text).toBe(200);
    const p1 = first.body.scenario;
    expect(p1.records.map((x: any) => x.run_id)).toEqual([run2]);
    expect(p1.next_records_cursor).toEqual(expect.any(String));
    const second = await get(server, `/api/scenarios/hand/?records_limit=1&records_cursor=${p1.next_records_cursor}`);
    const p2 = second.body.scenario;
    expect(p2.records.map((x: any) => x.run_id)).toEqual([run1]);
    expect(p2.next_records_cursor).toBeNull();
    // the pages are the whole history, item for item; the scenario itself is the same on each page
    expect([...p1.records, ...p2.records]).toEqual(whole.records);
    for (const p of [p1, p2]) {
      expect(p.n_records).toBe(2);
      expect(p.latest_record).toEqual(whole.latest_record);
      expect(p.current).toEqual(whole.current);
    }
    // an exact page: no cursor when nothing older is left
    expect((await get(server, '/api/scenarios/hand/?records_limit=2')).body.scenario.next_records_cursor).toBeNull();
    expectProblem(await get(server, '/api/scenarios/hand/?records_limit=0'), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/scenarios/hand/?records_limit=501'), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/scenarios/hand/?records_cursor=abc'), 400, 'invalid_parameter');
    // the list's paging names are refused here, naming this route's own, not ignored (QA: ?limit=1
    // answered every record)
    // and so is the nested list's own name, a count on the list route (outside test: ?records=5 answered every one)
    for (const [name, own] of [['limit', 'records_limit'], ['cursor', 'records_cursor'], ['records', 'records_limit']]) {
      const wrong = await get(server, `/api/scenarios/hand/?${name}=1`);
      expectProblem(wrong, 400, 'invalid_parameter');
      expect(wrong.body.parameter).toBe(name);
      expect(wrong.body.detail).toContain(own);
    }
    expect((await get(server, '/api/scenarios/hand/?limit=')).res.status).toBe(200); // empty: left out
    // a position beyond int64 is no cursor (QA: a 500 when DuckDB bound it)
    for (const us of ['99999999999999999999', '-99999999999999999999', '9223372036854775808']) {
      const crafted = Buffer.from(JSON.stringify({ v: 1, k: 'records-history', a: [us, 'r'] })).toString('base64url');
      expectProblem(await get(server, `/api/scenarios/hand/?records_cursor=${crafted}`), 400, 'invalid_parameter');
    }
    // another route's cursor is not a position in this history
    const listCursor = (await get(server, '/api/scenarios/?limit=1')).body.next_cursor;
    const wrong = await get(server, `/api/scenarios/hand/?records_cursor=${listCursor}`);
    expectProblem(wrong, 400, 'invalid_parameter');
    expect(wrong.body.parameter ?? wrong.text).toMatch(/records_cursor/);
  });

  it('errors: unknown scenario 404, bad id 400, bad cursor 400, bad status 400, bad since 400', async () => {
    expectProblem(await get(server, '/api/scenarios/no-such-scenario/'), 404, 'not_found');
    const typo = await get(server, '/api/scenarios/pairs/');
    expectProblem(typo, 404, 'not_found');
    expect(typo.body.closest).toEqual(['pair', 'hand']);
    expectProblem(await get(server, '/api/scenarios/BAD_ID/'), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/scenarios/?cursor=abc'), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/scenarios/?status=open'), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/scenarios/?since=yesterday'), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/scenarios/?limit=0'), 400, 'invalid_parameter');
  });

  it('the archived records export (scenario_records): every record with its scores, by scenario then as_of; filters; the same figures as the API', async () => {
    const { key } = newKey(f.dataDir, 'api');
    const exported = async (query = '') => {
      const r = await get(server, `/api/export/scenario_records/?output=json${query}`, auth.x(key));
      expect(r.res.status, r.text).toBe(200);
      return JSON.parse(r.text) as any[];
    };
    const rows = await exported();
    expect(rows.map((r) => [r.scenario_id, r.run_id])).toEqual([['hand', run1], ['hand', run2], ['pair', run1]]);
    // the API's record of each, to the API's 6 decimals (the export's values are exact: within half
    // a unit of the 6th decimal of the API's, 0.0990625 going out there as 0.099063)
    for (const row of rows) {
      const api = (await get(server, `/api/scenarios/${row.scenario_id}/`)).body.scenario.records.find((x: any) => x.run_id === row.run_id);
      expect(row.content_hash).toBe(api.content_hash);
      expect(row.complete).toBe(api.complete);
      for (const k of ['brier', 'log_score', 'partial_log_score', 'component_brier']) {
        if (api[k] === null) expect(row[k], k).toBeNull();
        else expect(Math.abs(row[k] - api[k]), k).toBeLessThanOrEqual(5e-7 + 1e-12);
      }
      expect(row.probabilities).toHaveLength(row.n_worlds);
      expect(row.probabilities.reduce((a: number, b: number) => a + b, 0)).toBeCloseTo(1, 12);
      expect(row.marginals).toHaveLength(row.n_components);
    }
    // pair, by hand: realized '01' (a3 NO, a4 YES), the consensus of independent joints
    const pair = rows[2];
    expect(pair).toMatchObject({ complete: true, realized_world: '01', resolved_pattern: '01', n_resolved: 2, components: 'kalshi:a3,manifold:a4' });
    expect(pair.realized_probability).toBeCloseTo(consensus([P3, P4], '01'), 12);
    expect(pair.log_score).toBeCloseTo(Math.log(consensus([P3, P4], '01')), 12);
    expect(pair.brier).toBeCloseTo(['00', '01', '10', '11'].reduce((a, w) => a + (consensus([P3, P4], w) - (w === '01' ? 1 : 0)) ** 2, 0), 12);
    expect(pair.component_brier).toBeCloseTo((mean(P3) ** 2 + (mean(P4) - 1) ** 2) / 2, 12);
    expect(pair.probabilities).toEqual(['00', '01', '10', '11'].map((w) => expect.closeTo(consensus([P3, P4], w), 12)));
    // created_since: the record's as_of; category: records with a component in it
    expect((await exported(`&created_since=${T3.toISOString()}`)).map((r) => [r.scenario_id, r.run_id])).toEqual([['hand', run2]]);
    expect((await exported(`&since=${T3.toISOString()}`)).map((r) => r.run_id)).toEqual([run2]);
    expect((await exported('&category=science')).map((r) => r.scenario_id)).toEqual(['pair']);
    expect(await exported('&category=finance')).toEqual([]);
    // CSV: the lists as their JSON text
    const csv = await get(server, '/api/export/scenario_records/?output=csv', auth.x(key));
    expect(csv.res.status, csv.text).toBe(200);
    const lines = csv.text.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]!.split(',').slice(0, 3)).toEqual(['scenario_id', 'run_id', 'as_of']);
    expect(lines[3]).toMatch(/^pair,/);
    expect(lines[3]).toContain('"[');
    // no such filter, a bad one, and no key: clear errors
    expectProblem(await get(server, '/api/export/scenario_records/?resolved_since=2026-01-01', auth.x(key)), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/export/scenario_records/?created_since=yesterday', auth.x(key)), 400, 'invalid_parameter');
    expect((await get(server, '/api/export/scenario_records/')).res.status).toBe(401);
  });

  it('is documented in the OpenAPI document from the same schemas', async () => {
    const got = await get(server, '/api/openapi.json');
    expect(got.body.paths['/api/scenarios/']).toBeDefined();
    expect(got.body.paths['/api/scenarios/{scenario_id}/']).toBeDefined();
    expect(Object.keys(got.body.components.schemas)).toEqual(expect.arrayContaining(['Scenario', 'ScenarioWorld', 'ScenarioRecord', 'ScenarioJoint']));
  });
});

describe('a retired scenario (taken out of its file since its records were archived)', () => {
  let f: Fixture;
  let server: ServerHandle;
  beforeAll(async () => {
    f = fixture({ 'scenarios/s.yaml': SCENARIOS });
    await writeComponentQuestions(f.dataDir);
    await publish(f, T1);
    await publish(f, T2);
    // `pair` is taken out of the file: its two records stay archived
    writeFileSync(join(f.structureDir, 'scenarios', 's.yaml'), SCENARIOS.split('  - id: pair')[0]!);
    await publish(f, T3);
    server = await serve(f.dataDir);
  });
  afterAll(async () => {
    await server?.close();
    f.cleanup();
  });

  it('is a 404 that says it is no longer defined and where its records are, not "No scenario" as for a typo (outside test)', async () => {
    // Outside test: russia-ukraine-endgame taken out of geopolitics.yaml after two runs archived
    // its records; GET /api/scenarios/russia-ukraine-endgame/ answered "No scenario
    // 'russia-ukraine-endgame' in this snapshot", as for a typo, though the snapshot's
    // scenario_records (and the export) held both records. A retired thesis says so (clusters).
    const gone = await get(server, '/api/scenarios/pair/');
    expectProblem(gone, 404, 'not_found');
    expect(gone.body.detail).toBe(
      "Scenario 'pair' is no longer defined in this snapshot (taken out of its file, or a component is a question the warehouse does not have: " +
        "the run's notes name it). Its 2 archived records, the newest of 2026-02-01, are in the snapshot's scenario_records and " +
        'scenario_record_scores tables (GET /api/export/scenario_records/).',
    );
    expect(gone.body).toMatchObject({ parameter: 'scenario_id', closest: ['hand'] });
    expect((await get(server, '/api/scenarios/hand/')).res.status).toBe(200);
    expect((await get(server, '/api/scenarios/never-was/')).body.detail).toMatch(/^No scenario 'never-was' in this snapshot\./);
  });

  it('its records stay in the export, and the export\'s category filter finds them by their own components (outside test)', async () => {
    // Outside test: ?category=world on the scenario_records export left out every record of the
    // retired russia-ukraine-endgame (its three components all in world): the filter read the
    // components of the scenarios defined now, not those each record archived.
    const { key } = newKey(f.dataDir, 'api');
    const exported = async (query: string) => {
      const r = await get(server, `/api/export/scenario_records/?output=json${query}`, auth.x(key));
      expect(r.res.status, r.text).toBe(200);
      return (JSON.parse(r.text) as any[]).map((x) => [x.scenario_id, x.as_of.slice(0, 10)]);
    };
    const pairRecords = [['pair', '2026-01-10'], ['pair', '2026-02-01']];
    expect(await exported('')).toEqual([['hand', '2026-01-10'], ['hand', '2026-02-01'], ['hand', '2026-02-10'], ...pairRecords]);
    // manifold:a4, a component of pair alone, is the one question in science
    expect(await exported('&category=science')).toEqual(pairRecords);
  });
});
