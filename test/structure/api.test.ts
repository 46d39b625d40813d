/**
 * GET /api/clusters/ and /api/clusters/{thesis_id}/ over a real HTTP server on port 0, serving a
 * snapshot the pipeline published from a hand-made warehouse (two runs: the second scores the
 * first run's vintage after two members resolved).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { expectProblem, get, maxDecimals, serve } from '../api/helpers.ts';
import { fixture, forecasts, publish, question, writeRaw, type Fixture, invLogit, logit, resolution } from './helpers.ts';

const T1 = new Date('2026-01-10T00:00:00Z');
const T2 = new Date('2026-02-01T00:00:00Z');
const T3 = new Date('2026-02-10T00:00:00Z');

const THESES = [
  'theses:',
  '  - id: hand',
  '    statement: A hand-made thesis',
  '    members:',
  '      - { question: "manifold:q1", sign: 1, weight: 2 }',
  '      - { question: "polymarket:q2", sign: -1 }',
  '      - { question: "kalshi:q3", sign: 1 }',
  '  - id: other',
  '    statement: Another thesis',
  '    members:',
  '      - { question: "kalshi:q3", sign: -1 }',
  '      - { question: "manifold:q4", sign: 1 }',
  '      - { question: "manifold:q5", sign: 1 }',
  '',
].join('\n');

/** The history cursor positioned just after vintage `v` (as api/routes/history-page.ts encodes it). */
function cursorAfter(v: { as_of: string; run_id: string }): string {
  const us = BigInt(Date.parse(v.as_of)) * 1000n;
  return Buffer.from(JSON.stringify({ v: 1, k: 'vintages-history', a: [String(us), v.run_id] })).toString('base64url');
}

describe('clusters API', () => {
  let f: Fixture;
  let server: ServerHandle;
  let run1: string;
  let run2: string;
  beforeAll(async () => {
    f = fixture({ 'theses/t.yaml': THESES });
    await writeRaw(f.dataDir, {
      questions: [
        question('manifold:q1', 'first unrelated zebra'),
        question('polymarket:q2', 'second unrelated yak'),
        question('kalshi:q3', 'third unrelated walrus'),
        // q4, q5, q7: one computed cluster (the same words); q6 negates them (same_event, sign -1)
        question('manifold:q4', 'orbital tether elevator completed'),
        question('manifold:q5', 'orbital tether elevator completed'),
        question('polymarket:q6', 'orbital tether elevator not completed'), // the negation of q4 on another venue
        question('kalshi:q7', 'orbital tether elevator completed'),
      ],
      forecasts: [
        ...forecasts('r-hand-1', 'manifold:q1', T1, [0.7, 0.9, 0.8, 0.8]),
        ...forecasts('r-hand-1', 'polymarket:q2', T1, [0.3, 0.3, 0.3, 0.3]),
        ...forecasts('r-hand-1', 'kalshi:q3', T1, [0.6, 0.6, 0.6, 0.6]),
      ],
      market_prices: [
        { question_id: 'manifold:q1', venue: 'manifold', observed_at: T1, probability: 0.75 },
        { question_id: 'polymarket:q2', venue: 'polymarket', observed_at: T1, probability: 0.4 },
        { question_id: 'kalshi:q3', venue: 'kalshi', observed_at: T1, probability: 0.5 },
        { question_id: 'manifold:q4', venue: 'manifold', observed_at: T1, probability: 0.2 },
        { question_id: 'polymarket:q6', venue: 'polymarket', observed_at: T1, probability: 0.3 },
      ],
    });
    run1 = await publish(f, T1);
    await writeRaw(f.dataDir, {
      resolutions: [
        resolution('manifold:q1', 1, T2),
        resolution('polymarket:q2', 1, T2),
      ],
      forecasts: forecasts('r-hand-2', 'manifold:q4', T2, [0.5, 0.5, 0.5, 0.5]),
    }, T2);
    run2 = await publish(f, T3);
    server = await serve(f.dataDir);
  });
  afterAll(async () => {
    await server?.close();
    f.cleanup();
  });

  it('lists theses with current consensus, members and recent vintages with scores', async () => {
    const got = await get(server, '/api/clusters/');
    expect(got.res.status, got.text).toBe(200);
    const { clusters, count, total, next_cursor, as_of } = got.body;
    expect(as_of).toBe(T3.toISOString());
    expect(got.res.headers.get('x-snapshot')).toBe(run2);
    expect(clusters.map((c: any) => c.origin)).toContain('computed');
    expect(count).toBe(clusters.length);
    expect(total).toBe(clusters.length);
    expect(next_cursor).toBeNull();
    const hand = clusters.find((c: any) => c.thesis_id === 'hand');
    expect(hand).toMatchObject({ origin: 'curated', statement: 'A hand-made thesis', n_members: 3, n_resolved: 2, n_vintages: 2 });
    // At run 2 only q3 (active, 0.6, sign +1) has a consensus.
    expect(hand.current.consensus).toBeCloseTo(0.6, 6);
    expect(hand.members.map((m: any) => [m.question_id, m.sign, m.weight])).toEqual([
      ['kalshi:q3', 1, 1],
      ['manifold:q1', 1, 2],
      ['polymarket:q2', -1, 1],
    ]);
    expect(hand.vintages.map((v: any) => v.run_id)).toEqual([run2, run1]);
    const v1 = hand.vintages[1];
    expect(v1.thesis_consensus).toBeCloseTo(invLogit((2 * logit(0.8) + logit(0.7) + logit(0.6)) / 4), 6);
    expect(v1).toMatchObject({ n_members: 3, n_resolved: 2, direction_held: true });
    expect(v1.brier).toBeCloseTo(0.265, 6);
    expect(v1.content_hash).toMatch(/^[0-9a-f]{64}$/);
    const auto = clusters.find((c: any) => c.origin === 'computed');
    expect(auto.thesis_id).toMatch(/^auto-[0-9a-f]{12}$/);
    expect(auto.members.map((m: any) => m.question_id).sort()).toEqual(['kalshi:q7', 'manifold:q4', 'manifold:q5']);
    expect(auto.label.split(', ')).toHaveLength(3);
    // gap_vs_market (a difference of probabilities) is published to 6 decimals like them
    expect(maxDecimals(clusters.map((c: any) => c.current.gap_vs_market))).toBeLessThanOrEqual(6);
    expect(maxDecimals(clusters.map((c: any) => [c.current.consensus_logit, c.current.market_consensus_logit]))).toBeLessThanOrEqual(6);
  });

  it('keyset paging by thesis_id with total; origin filter; vintages per thesis', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const got = await get(server, `/api/clusters/?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(got.res.status, got.text).toBe(200);
      expect(got.body.count).toBe(1);
      expect(got.body.total).toBe(3);
      seen.push(got.body.clusters[0].thesis_id);
      cursor = got.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(3);
    const curated = await get(server, '/api/clusters/?origin=curated&vintages=1');
    expect(curated.body.clusters.map((c: any) => c.thesis_id)).toEqual(['hand', 'other']);
    expect(curated.body.clusters[0].vintages).toHaveLength(1);
    expect(curated.body.clusters[0].n_vintages).toBe(2);
    const none = await get(server, '/api/clusters/?vintages=0');
    expect(none.body.clusters[0].vintages).toEqual([]);
    expect(none.body.clusters.find((c: any) => c.thesis_id === 'hand').n_vintages).toBe(2);
  });

  it('one thesis with its whole vintage history and the members each vintage held', async () => {
    const got = await get(server, '/api/clusters/hand/');
    expect(got.res.status, got.text).toBe(200);
    const c = got.body.cluster;
    expect(c.vintages.map((v: any) => v.run_id)).toEqual([run2, run1]);
    const held = c.vintages[1].members;
    expect(held.map((m: any) => [m.question_id, m.consensus, m.outcome])).toEqual([
      ['kalshi:q3', 0.6, null],
      ['manifold:q1', 0.8, 1],
      ['polymarket:q2', 0.3, 1],
    ]);
    expect(held[1].brier).toBeCloseTo(0.04, 9);
    expect(held[1].market_brier).toBeCloseTo(0.0625, 9);
  });

  it('the vintage history comes a page at a time, newest first, each vintage with its own members', async () => {
    const whole = (await get(server, '/api/clusters/hand/')).body.cluster;
    expect(whole.next_vintages_cursor).toBeNull();
    const first = await get(server, '/api/clusters/hand/?vintages_limit=1');
    expect(first.res.status, first.text).toBe(200);
    const p1 = first.body.cluster;
    expect(p1.vintages.map((v: any) => v.run_id)).toEqual([run2]);
    const p2 = (await get(server, `/api/clusters/hand/?vintages_limit=1&vintages_cursor=${p1.next_vintages_cursor}`)).body.cluster;
    expect(p2.vintages.map((v: any) => v.run_id)).toEqual([run1]);
    expect(p2.next_vintages_cursor).toBeNull();
    // item for item the whole history, members included; n_vintages counts all on every page
    expect([...p1.vintages, ...p2.vintages]).toEqual(whole.vintages);
    expect([p1.n_vintages, p2.n_vintages]).toEqual([2, 2]);
    // a page past the oldest vintage is empty and still counts them all
    const beyond = (await get(server, `/api/clusters/hand/?vintages_limit=1&vintages_cursor=${cursorAfter(p2.vintages[0])}`)).body.cluster;
    expect(beyond.vintages).toEqual([]);
    expect(beyond.n_vintages).toBe(2);
    expect(beyond.next_vintages_cursor).toBeNull();
    expectProblem(await get(server, '/api/clusters/hand/?vintages_limit=0'), 400, 'invalid_parameter');
    // the list's paging names are refused here, naming this route's own, not ignored (QA)
    // and so is the nested list's own name, a count on the list route (outside test: ?vintages=5 answered every one)
    for (const [name, own] of [['limit', 'vintages_limit'], ['cursor', 'vintages_cursor'], ['vintages', 'vintages_limit']]) {
      const wrong = await get(server, `/api/clusters/hand/?${name}=1`);
      expectProblem(wrong, 400, 'invalid_parameter');
      expect(wrong.body.parameter).toBe(name);
      expect(wrong.body.detail).toContain(own);
    }
    const bad = await get(server, '/api/clusters/hand/?vintages_cursor=abc');
    expectProblem(bad, 400, 'invalid_parameter');
    // QA: the detail said "use next_cursor as returned", a field this answer does not have
    expect(bad.body.detail).toContain('use next_vintages_cursor as returned');
    expect((await get(server, '/api/clusters/?cursor=abc')).body.detail).toContain('use next_cursor as returned');
    const listCursor = (await get(server, '/api/clusters/?limit=1')).body.next_cursor;
    expectProblem(await get(server, `/api/clusters/hand/?vintages_cursor=${listCursor}`), 400, 'invalid_parameter');
  });

  it('a member\'s market price is dated and flagged stale at as_of, as every market price shown beside a consensus (outside test)', async () => {
    // Every price of the fixture was observed at T1, 31 days before the snapshot's as_of (T3): older
    // than QUORUM_MAX_PRICE_AGE_HOURS (48), so stale. The members listed market_probability alone, and
    // a thesis' market_consensus over 101-day-old prices (the bundled sample) read as current.
    const members = (c: any) => Object.fromEntries(c.members.map((m: any) => [m.question_id, [m.market_observed_at, m.market_stale]]));
    const list = (await get(server, '/api/clusters/')).body.clusters;
    expect(members(list.find((c: any) => c.thesis_id === 'hand'))).toEqual({
      'kalshi:q3': [T1.toISOString(), true],
      'manifold:q1': [T1.toISOString(), true],
      'polymarket:q2': [T1.toISOString(), true],
    });
    // no price: neither a time nor a flag
    const auto = list.find((c: any) => c.origin === 'computed');
    expect(members(auto)).toEqual({ 'kalshi:q7': [null, null], 'manifold:q4': [T1.toISOString(), true], 'manifold:q5': [null, null] });
    const detail = (await get(server, '/api/clusters/hand/')).body.cluster;
    expect(members(detail)).toEqual(members(list.find((c: any) => c.thesis_id === 'hand')));
    // the bound is the server's setting, applied at query time (no run)
    const wide = await serve(f.dataDir, { maxPriceAgeHours: 24 * 40 });
    try {
      const hand = (await get(wide, '/api/clusters/hand/')).body.cluster;
      expect(members(hand)['kalshi:q3']).toEqual([T1.toISOString(), false]);
    } finally {
      await wide.close();
    }
  });

  it('errors: unknown thesis 404, bad id 400, bad cursor 400, bad origin 400', async () => {
    expectProblem(await get(server, '/api/clusters/no-such-thesis/'), 404, 'not_found');
    const typo = await get(server, '/api/clusters/hands/');
    expectProblem(typo, 404, 'not_found');
    expect(typo.body.closest[0]).toBe('hand');
    expectProblem(await get(server, '/api/clusters/BAD_ID/'), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/clusters/?cursor=abc'), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/clusters/?origin=mixed'), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/clusters/?vintages=51'), 400, 'invalid_parameter');
  });

  it('a thesis, factor or scenario id outside the grammar is a 400 that states the whole grammar, its length and case too (outside QA: "a" was refused as not "a-z, 0-9, -")', async () => {
    for (const [route, name] of [['clusters', 'thesis_id'], ['factors', 'factor_id'], ['scenarios', 'scenario_id']]) {
      // too short, too long, capitals, a leading dash: each refused by a detail that says why
      for (const id of ['a', 'a'.repeat(64), 'Hand', '-hand']) {
        const got = await get(server, `/api/${route}/${id}/`);
        expectProblem(got, 400, 'invalid_parameter');
        expect(got.body.parameter).toBe(name);
        expect(got.body.detail, `${route}/${id}`).toContain('2 to 63 characters');
        expect(got.body.detail, `${route}/${id}`).toContain('lower-case letters, digits and dashes');
        expect(got.body.detail, `${route}/${id}`).toContain('not beginning with a dash');
      }
    }
  });

  it('lifecycle, detail and edges show the other venues\' prices of the same event and the cross-venue gap', async () => {
    // each price dated and flagged stale at as_of, as every market price shown beside a consensus
    // (outside test: market_stale was missing; q6's price, 31 days old at T3, read as current)
    const expected = [
      {
        question_id: 'kalshi:q7', venue: 'kalshi', title: 'orbital tether elevator completed', url: null, sign: 1, strength: 1,
        origin: 'computed', market_probability: null, market_observed_at: null, market_stale: null, implied_probability: null, gap: null,
      },
      {
        question_id: 'polymarket:q6', venue: 'polymarket', title: 'orbital tether elevator not completed', url: null, sign: -1,
        strength: 1, origin: 'computed', market_probability: 0.3, market_observed_at: T1.toISOString(), market_stale: true,
        implied_probability: 0.7, gap: -0.5,
      },
    ];
    const life = await get(server, '/api/predictions/lifecycle/manifold:q4/');
    expect(life.res.status, life.text).toBe(200);
    expect(life.body.other_venues).toEqual(expected);
    const detail = await get(server, '/api/predictions/manifold:q4');
    expect(detail.res.status, detail.text).toBe(200);
    expect(detail.body.other_venues).toEqual(expected);
    const edges = await get(server, '/api/predictions/edges/?include_stale=true&min_edge=0');
    expect(edges.res.status, edges.text).toBe(200);
    const e = edges.body.edges.find((x: any) => x.question_id === 'manifold:q4');
    expect(e).toMatchObject({ edge: 0.3, market_probability: 0.2, cross_venue_gap: -0.5 });
    expect(e.other_venues).toEqual(expected);
    expect(edges.body.edges.find((x: any) => x.question_id === 'kalshi:q3')).toMatchObject({ other_venues: [], cross_venue_gap: null });
  });

  it('is documented in the OpenAPI document from the same schemas', async () => {
    const got = await get(server, '/api/openapi.json');
    expect(got.body.paths['/api/clusters/']).toBeDefined();
    expect(got.body.paths['/api/clusters/{thesis_id}/']).toBeDefined();
    expect(Object.keys(got.body.components.schemas)).toEqual(expect.arrayContaining(['Cluster', 'ClusterMember', 'ClusterConsensus', 'ClusterVintage', 'ClusterVintageMember']));
  });
});

describe('a retired thesis (removed from its file since its vintages were frozen)', () => {
  it('is a 404 that says it was retired and where its vintages are, not "No thesis" as for a typo (outside test)', async () => {
    const f = fixture({ 'theses/t.yaml': THESES });
    let server: ServerHandle | undefined;
    try {
      await writeRaw(f.dataDir, {
        questions: [question('manifold:q1', 'first unrelated zebra'), question('polymarket:q2', 'second unrelated yak'), question('kalshi:q3', 'third unrelated walrus')],
        forecasts: [...forecasts('r-1', 'manifold:q1', T1, [0.7, 0.9, 0.8, 0.8]), ...forecasts('r-1', 'kalshi:q3', T1, [0.6, 0.6, 0.6, 0.6])],
      });
      await publish(f, T1);
      // `other` is taken out of the file: its one vintage stays in the snapshot
      writeFileSync(join(f.structureDir, 'theses', 't.yaml'), THESES.split('  - id: other')[0]!);
      await publish(f, T3);
      server = await serve(f.dataDir);
      const gone = await get(server, '/api/clusters/other/');
      expectProblem(gone, 404, 'not_found');
      expect(gone.body.detail).toBe(
        "Thesis 'other' is no longer defined in this snapshot (retired: a computed cluster merged into another, or a curated thesis removed from its file). " +
          "Its one scored vintage, of 2026-01-10, is in the snapshot's thesis_vintage_scores and thesis_vintage_members tables.",
      );
      expect(gone.body).toMatchObject({ parameter: 'thesis_id', closest: expect.arrayContaining(['hand']) });
      expect((await get(server, '/api/clusters/hand/')).res.status).toBe(200);
      expect((await get(server, '/api/clusters/never-was/')).body.detail).toMatch(/^No thesis 'never-was' in this snapshot\./);
    } finally {
      await server?.close();
      f.cleanup();
    }
  });
});
