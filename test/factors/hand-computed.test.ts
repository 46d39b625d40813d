/**
 * Factors and health (issue 12) on a hand-made warehouse: leaves listed by hand and attached by
 * rules (category, whole-word terms, exclude, first rule wins), levels as the signed log-odds mean
 * with the change since each leaf's previous run, and the health view (coverage, stale leaves,
 * Brier against the market, disagreement, market share, contradictions, the system's checks),
 * through the pipeline's own score-and-publish and a real HTTP server on port 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { expectProblem, get, maxDecimals, serve } from '../api/helpers.ts';
import { fixture, forecasts, publish, question, snapshotRows, writeRaw, type Fixture, invLogit, logit, resolution } from '../structure/helpers.ts';

/** Weighted log-odds mean of [p, w] pairs. */
const level = (pairs: [number, number][]) => invLogit(pairs.reduce((s, [p, w]) => s + w * logit(p), 0) / pairs.reduce((s, [, w]) => s + w, 0));

const T1 = new Date('2026-01-10T00:00:00Z');
const T2 = new Date('2026-01-20T00:00:00Z');
const T3 = new Date('2026-02-01T00:00:00Z');

const FACTORS = [
  'factors:',
  '  - id: hand',
  '    name: Hand factor',
  '    statement: Widgets win',
  '    drivers:',
  '      - id: d1',
  '        name: Driver one',
  '        questions:',
  '          - { question: "manifold:a1", sign: 1 }',
  '          - { question: "manifold:a2", sign: -1, weight: 2 }',
  '        drivers:',
  '          - id: s1',
  '            name: Sub one',
  '            rules:',
  '              - { categories: [tech], match: [[gizmo, s&p 500]], exclude: [recall], sign: 1 }',
  '      - id: d2',
  '        name: Driver two',
  '        questions:',
  '          - { question: "manifold:a6", sign: 1 }',
  '        rules:',
  '          - { match: [[recall]], sign: -1 }',
  '  - id: other',
  '    name: Other factor',
  '    statement: Nothing here yet',
  '    drivers:',
  '      - { id: o1, name: Empty driver, rules: [{ match: [[zzzz]], sign: 1 }] }',
  '  - id: cold',
  '    name: Cold factor',
  '    statement: Nobody forecast this',
  '    drivers:',
  '      - { id: c1, name: Unforecast, questions: [{ question: "manifold:a8", sign: 1 }] }',
  '',
].join('\n');

// a1 ⇒ a4 is broken (0.8 > 0.4); a1 and a3 exclude each other and sum to 1.3.
const LINKS = [
  'links:',
  '  - { a: "manifold:a1", b: "manifold:a4", kind: implies }',
  '  - { a: "manifold:a1", b: "manifold:a3", kind: excludes }',
  '',
].join('\n');

describe('factors on a hand-made warehouse', () => {
  let f: Fixture;
  let run2: string;
  let server: ServerHandle;
  beforeAll(async () => {
    f = fixture({ 'factors/f.yaml': FACTORS, 'links/l.yaml': LINKS });
    await writeRaw(f.dataDir, {
      questions: [
        question('manifold:a1', 'alpha widget launch'),
        question('manifold:a2', 'beta widget launch'),
        question('manifold:a3', 'Gamma GIZMO shipped'), // rule of s1 (case-insensitive)
        question('manifold:a4', 'gizmo recall'), // s1 excludes "recall"; d2's rule takes it with sign −1
        question('manifold:a5', 'gizmo in parliament', { category: 'politics' }), // s1 is tech only, d2 does not match
        question('manifold:a6', 'delta widget done'),
        question('manifold:a7', 'gizmos galore'), // "gizmos" is not the whole word "gizmo"
        question('manifold:a8', 's&p 500 gizmo index'), // a literal "&" term
      ],
      runs: [
        { run_id: 'r-hand-1', status: 'completed', as_of: T1, started_at: T1 },
        {
          run_id: 'r-hand-2', status: 'completed', as_of: T3, started_at: T3,
          sync_report: JSON.stringify({ at: T3.toISOString(), status: 'partial', failed: ['kalshi'], sources: [] }),
        },
      ],
      model_calls: [
        ...Array.from({ length: 10 }, (_, i) => ({
          run_id: 'r-hand-2', question_id: 'manifold:a1', model: `m${i}`, mode: 'augmented', started_at: new Date(),
          status: i < 2 ? 'failed' : 'ok', error_kind: i < 2 ? 'timeout' : null, attempts: 1,
        })),
        // never sent (the run's budget was spent): neither a failure nor a success (QA: 2 failed of
        // 10 sent read "2 of 30", ok, with 20 such rows)
        ...Array.from({ length: 20 }, (_, i) => ({
          run_id: 'r-hand-2', question_id: 'manifold:a2', model: `m${i}`, mode: 'augmented', started_at: new Date(),
          status: 'skipped', error_kind: 'budget_exhausted', attempts: 0,
        })),
      ],
      forecasts: [
        ...forecasts('r-hand-1', 'manifold:a1', T1, [0.6, 0.6, 0.6, 0.6]),
        ...forecasts('r-hand-1', 'manifold:a2', T1, [0.3, 0.3, 0.3, 0.3]),
        ...forecasts('r-hand-1', 'manifold:a3', T1, [0.5, 0.5, 0.5, 0.5]),
        ...forecasts('r-hand-1', 'manifold:a6', T1, [0.7, 0.7, 0.7, 0.7]),
        ...forecasts('r-hand-2', 'manifold:a1', T3, [0.7, 0.9, 0.8, 0.8]),
        ...forecasts('r-hand-2', 'manifold:a2', T3, [0.2, 0.2, 0.2]), // three of the run's four models
        ...forecasts('r-hand-2', 'manifold:a4', T3, [0.4, 0.4, 0.4, 0.4]),
      ],
      market_prices: [
        { question_id: 'manifold:a1', venue: 'manifold', observed_at: T3, probability: 0.7 },
        { question_id: 'manifold:a2', venue: 'manifold', observed_at: T3, probability: 0.25 },
        { question_id: 'manifold:a3', venue: 'manifold', observed_at: T1, probability: 0.5 }, // stale at T3
        { question_id: 'manifold:a6', venue: 'manifold', observed_at: T1, probability: 0.65 },
      ],
    });
    await writeRaw(f.dataDir, {
      resolutions: [resolution('manifold:a6', 1, T2)],
    }, T2);
    run2 = await publish(f, T3);
    server = await serve(f.dataDir);
  });
  afterAll(async () => {
    await server?.close();
    f.cleanup();
  });

  const rows = (sql: string) => snapshotRows(f.dataDir, run2, sql);

  it('leaves: listed by hand, attached by the first matching rule, whole words, categories and excludes respected', async () => {
    const leaves = await rows(`SELECT question_id, node_id, sign, weight, origin FROM {factor_leaves} WHERE factor_id = 'hand' ORDER BY question_id`);
    expect(leaves).toEqual([
      { question_id: 'manifold:a1', node_id: 'hand/d1', sign: 1, weight: 1, origin: 'curated' },
      { question_id: 'manifold:a2', node_id: 'hand/d1', sign: -1, weight: 2, origin: 'curated' },
      { question_id: 'manifold:a3', node_id: 'hand/d1/s1', sign: 1, weight: 1, origin: 'rule' },
      { question_id: 'manifold:a4', node_id: 'hand/d2', sign: -1, weight: 1, origin: 'rule' },
      { question_id: 'manifold:a6', node_id: 'hand/d2', sign: 1, weight: 1, origin: 'curated' },
      { question_id: 'manifold:a8', node_id: 'hand/d1/s1', sign: 1, weight: 1, origin: 'rule' },
    ]);
  });

  // Signed headline consensus at T3: a1 0.8 (w 1, previous 0.6), a2 1 − 0.2 = 0.8 (w 2, previous
  // 0.7), a3 0.5 (run 1; no previous), a4 1 − 0.4 = 0.6 (no previous); a6 resolved, a8 unforecast.
  const hand = level([[0.8, 1], [0.8, 2], [0.5, 1], [0.6, 1]]);
  const previous = level([[0.6, 1], [0.7, 2]]);
  // the change over the leaves with a previous consensus, a1 and a2 (a3 and a4 have none)
  const change = level([[0.8, 1], [0.8, 2]]) - previous;

  it('levels: signed log-odds mean of the leaves\' consensus, with the change since each leaf\'s previous run', async () => {
    const nodes = await rows(`SELECT * FROM {factor_nodes} WHERE factor_id = 'hand' ORDER BY ord`);
    expect(nodes.map((n) => n.node_id)).toEqual(['hand', 'hand/d1', 'hand/d1/s1', 'hand/d2']);
    const [root, d1, s1, d2] = nodes;
    expect(root).toMatchObject({ n_leaves: 6, n_active: 5, n_resolved: 1, n_with_consensus: 4, n_with_previous: 2 });
    expect(root!.level).toBeCloseTo(hand, 12);
    expect(root!.previous_level).toBeCloseTo(previous, 12);
    expect(root!.change).toBeCloseTo(change, 12);
    // market level over the active leaves with a price: a1 0.7, a2 1 − 0.25, a3 0.5
    expect(root!.market_level).toBeCloseTo(level([[0.7, 1], [0.75, 2], [0.5, 1]]), 12);
    expect(d1!.level).toBeCloseTo(level([[0.8, 1], [0.8, 2], [0.5, 1]]), 12); // a sub-driver's leaves count for its parent
    expect(s1!.level).toBeCloseTo(0.5, 12);
    expect(s1!.previous_level).toBeNull();
    expect(d2!.level).toBeCloseTo(0.6, 12);
    const [factor] = await rows(`SELECT * FROM {factors} WHERE factor_id = 'hand'`);
    expect(factor).toMatchObject({ n_drivers: 3, n_levels: 3, n_attached_by_rules: 3, categories: ['tech'] });
    expect(factor!.level).toBeCloseTo(hand, 12);
    const [other] = await rows(`SELECT * FROM {factors} WHERE factor_id = 'other'`);
    expect(other).toMatchObject({ n_leaves: 0, level: null, change: null, n_levels: 2 });
  });

  it('health per factor: coverage, stale leaves, Brier against the market, disagreement, market share, contradictions', async () => {
    const [h] = await rows(`SELECT * FROM {factor_health} WHERE factor_id = 'hand'`);
    expect(h).toMatchObject({
      n_leaves: 6, n_active: 5, n_resolved: 1,
      n_covered: 2, coverage: 2 / 5, // a1 and a4 by all four models of run 2; a2 by three; a3, a8 by none
      latest_run_id: 'r-hand-2', latest_run_models: 4,
      newest_forecast_age_hours: 0, newest_price_age_hours: 0,
      n_scored: 1, n_contradictions: 2, market_share: 4 / 6,
    });
    expect(h!.stale_leaves).toEqual([
      { question_id: 'manifold:a3', reasons: ['no_forecast_in_latest_run', 'stale_price'] },
      { question_id: 'manifold:a8', reasons: ['no_forecast_in_latest_run'] },
    ]);
    // a6: consensus 0.7 of run 1 (T1), market 0.65 at T1, resolved YES
    expect(h!.brier).toBeCloseTo(0.09, 12);
    expect(h!.market_brier).toBeCloseTo(0.1225, 12);
    expect(h!.disagreement).toBeCloseTo(Math.sqrt(0.005) / 4, 12); // a1's sd; a2, a3, a4 agree
    const contra = await rows(`SELECT * FROM {factor_contradictions} ORDER BY kind`);
    expect(contra.map((c) => [c.kind, c.question_a, c.question_b])).toEqual([
      ['excludes', 'manifold:a1', 'manifold:a3'],
      ['implies', 'manifold:a1', 'manifold:a4'],
    ]);
    expect(contra[0]!.violation).toBeCloseTo(0.3, 12);
    expect(contra[1]!.violation).toBeCloseTo(0.4, 12);
  });

  it('system health from the data: model failures, the venue sync, stale prices', async () => {
    const checks = await rows(`SELECT "check", value, status, detail FROM {system_health}`);
    expect(checks.map((c) => [c.check, c.status])).toEqual([
      ['model_failures', 'degraded'], // 2 of 10
      ['venue_sync', 'degraded'], // partial
      ['stale_prices', 'degraded'], // a3 of a1, a2, a3
      ['snapshot_age', 'ok'],
    ]);
    expect(checks[0]!.value).toBeCloseTo(0.2, 12);
    expect(checks[0]!.detail).toBe("2 of 10 model calls failed in run r-hand-2 (timeout); 20 not sent (the run's budget was spent)");
    expect(checks[1]!.detail).toContain('failing kalshi');
    expect(checks[2]!.value).toBeCloseTo(1 / 3, 12);
  });

  it('thresholds are settings: a lower failing share makes stale prices fail', async () => {
    const run = await publish(f, T3, { QUORUM_HEALTH_STALE_SHARE_FAILING: '0.3' });
    const checks = await snapshotRows(f.dataDir, run, `SELECT "check", status FROM {system_health}`);
    expect(checks.find((c) => c.check === 'stale_prices')!.status).toBe('failing');
    await expect(publish(f, T3, { QUORUM_HEALTH_STALE_SHARE_DEGRADED: '0.9', QUORUM_HEALTH_STALE_SHARE_FAILING: '0.3' })).rejects.toThrow(/QUORUM_HEALTH_STALE_SHARE/);
    await expect(publish(f, T3, { QUORUM_HEALTH_STALE_PRICE_HOURS: 'soon' })).rejects.toThrow(/QUORUM_HEALTH_STALE_PRICE_HOURS/);
  });

  it('GET /api/factors/ and /api/factors/{id}/: the trees, paged by factor_id', async () => {
    const page1 = await get(server, '/api/factors/?limit=2');
    expect(page1.res.status).toBe(200);
    expect(page1.body).toMatchObject({ count: 2, total: 3 });
    expect(page1.body.factors.map((x: { factor_id: string }) => x.factor_id)).toEqual(['cold', 'hand']);
    const f1 = page1.body.factors[1];
    expect(f1).toMatchObject({ factor_id: 'hand', statement: 'Widgets win', n_levels: 3, n_leaves: 6 });
    expect(f1.level).toBeCloseTo(hand, 6);
    expect(f1.change).toBeCloseTo(change, 6);
    // differences of probabilities are published to 6 decimals like the probabilities themselves
    const diffs = [f1, ...f1.drivers].map((n: { change: number | null; gap_vs_market: number | null }) => [n.change, n.gap_vs_market]);
    expect(maxDecimals(diffs)).toBeLessThanOrEqual(6);
    // and the log-odds levels beside them
    expect(maxDecimals([f1, ...f1.drivers].map((n: { level_logit: number | null }) => n.level_logit))).toBeLessThanOrEqual(6);
    expect(f1.drivers.map((d: { node_id: string }) => d.node_id)).toEqual(['hand/d1', 'hand/d1/s1', 'hand/d2']);
    expect(f1.drivers[0]).toMatchObject({ depth: 1, leaves: ['manifold:a1', 'manifold:a2'], children: ['hand/d1/s1'] });
    expect(f1.leaves.find((l: { question_id: string }) => l.question_id === 'manifold:a2')).toMatchObject({ sign: -1, weight: 2, origin: 'curated', consensus: 0.2, previous_consensus: 0.3 });
    const page2 = await get(server, `/api/factors/?limit=2&cursor=${encodeURIComponent(page1.body.next_cursor)}`);
    expect(page2.body.factors.map((x: { factor_id: string }) => x.factor_id)).toEqual(['other']);
    expect(page2.body.next_cursor).toBeNull();
    const one = await get(server, '/api/factors/hand/');
    expect(one.res.status).toBe(200);
    expect(one.body.factor).toEqual(f1);
  });

  it('a leaf\'s market price is dated and flagged stale at as_of, as every market price shown beside a consensus (outside test)', async () => {
    // a1 and a2 priced at T3 (the as_of), a3 and a6 at T1 (22 days before: older than
    // QUORUM_MAX_PRICE_AGE_HOURS, 48), a4 and a8 never. The leaves listed market_probability alone, so a
    // factor's market_level over 101-day-old prices (the bundled sample) read as current.
    const leaves = (body: any) => Object.fromEntries(body.factor.leaves.map((l: any) => [l.question_id, [l.market_observed_at, l.market_stale]]));
    const expected = {
      'manifold:a1': [T3.toISOString(), false],
      'manifold:a2': [T3.toISOString(), false],
      'manifold:a3': [T1.toISOString(), true],
      'manifold:a4': [null, null],
      'manifold:a6': [T1.toISOString(), true],
      'manifold:a8': [null, null],
    };
    expect(leaves((await get(server, '/api/factors/hand/')).body)).toEqual(expected);
    const listed = (await get(server, '/api/factors/')).body.factors.find((x: { factor_id: string }) => x.factor_id === 'hand');
    expect(leaves({ factor: listed })).toEqual(expected);
    // the bound is the server's setting, applied at query time (no run)
    const wide = await serve(f.dataDir, { maxPriceAgeHours: 24 * 30 });
    try {
      expect(leaves((await get(wide, '/api/factors/hand/')).body)['manifold:a3']).toEqual([T1.toISOString(), false]);
    } finally {
      await wide.close();
    }
  });

  it('GET /api/factors/health/: status, reasons worst first, per-factor health, and the snapshot\'s age measured now', async () => {
    const r = await get(server, '/api/factors/health/');
    expect(r.res.status).toBe(200);
    expect(r.body.status).toBe('degraded');
    expect(r.body.reasons).toHaveLength(3);
    expect(r.body.reasons[0]).toMatch(/^model_failures degraded: 2 of 10 model calls failed/);
    const age = r.body.checks.find((c: { check: string }) => c.check === 'snapshot_age');
    expect(age.status).toBe('ok');
    expect(age.value).toBeGreaterThanOrEqual(0);
    expect(age.value).toBeLessThan(1);
    // under an hour in minutes, as the value rounds to (outside test: "0.0 h ago" beside 0.03 h)
    expect(age.detail).toBe(`the snapshot was published ${Math.round(age.value * 60)} min ago`);
    const hand = r.body.factors.find((x: { factor_id: string }) => x.factor_id === 'hand');
    expect(hand).toMatchObject({ coverage: 0.4, n_contradictions: 2, n_scored: 1, status: 'degraded' });
    expect(hand.reasons).toEqual([
      'coverage 40% (2 of 5 active leaves forecast by every model of the latest run)',
      '2 contradiction(s) among linked leaves',
      '2 of 5 active leaves stale',
    ]);
    const status = (id: string) => r.body.factors.find((x: { factor_id: string }) => x.factor_id === id);
    expect(status('cold')).toMatchObject({ status: 'failing' });
    expect(status('cold').reasons[0]).toBe('no active leaf has a consensus');
    expect(status('other')).toMatchObject({ status: 'degraded', reasons: ['no active leaf'] });
    expect(hand.contradictions.map((c: { kind: string }) => c.kind).sort()).toEqual(['excludes', 'implies']);
    expect(hand.stale_leaves).toHaveLength(2);
    expect(maxDecimals([hand.brier_vs_market, hand.contradictions.map((c: { violation: number }) => c.violation)])).toBeLessThanOrEqual(6);
    // ages in hours to 2 decimals (README, Precision), the snapshot's age among them: it is hours
    // too, and was published to 6 (0.000278 beside the factors' 2434.3)
    expect(maxDecimals(r.body.factors.map((x: { newest_price_age_hours: number | null; newest_forecast_age_hours: number | null }) => [x.newest_price_age_hours, x.newest_forecast_age_hours]))).toBeLessThanOrEqual(2);
    expect(maxDecimals([age.value])).toBeLessThanOrEqual(2);
    // the other checks' values are shares, to 6
    expect(maxDecimals(r.body.checks.filter((c: { check: string }) => c.check !== 'snapshot_age').map((c: { value: number | null }) => c.value))).toBeLessThanOrEqual(6);
  });

  it('errors: unknown factor 404, bad id 400, injection 400, bad cursor 400, huge limit 400', async () => {
    expectProblem(await get(server, '/api/factors/nope/'), 404, 'not_found');
    // a mistyped id: the 404 names the closest factor ids, as a source slug's does
    const typo = await get(server, '/api/factors/hnad/');
    expectProblem(typo, 404, 'not_found');
    expect(typo.body.closest[0]).toBe('hand');
    expect(typo.body.detail).toContain('Closest ids: hand');
    expectProblem(await get(server, '/api/factors/Bad%20Id/'), 400, 'invalid_parameter');
    expectProblem(await get(server, `/api/factors/hand'%20OR%201=1/`), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/factors/?cursor=abc'), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/factors/?limit=100000'), 400, 'invalid_parameter');
    // A filter these routes do not read is refused, naming the route's own parameters: ignored, it
    // answered every factor (or every factor's health, every thesis) with 200 as if filtered (QA).
    for (const [path, name] of [['/api/factors/?category=politics', 'category'], ['/api/factors/health/?factor_id=hand', 'factor_id'],
      ['/api/clusters/?status=active', 'status'], ['/api/factors/hand/?mode=blind', 'mode'], ['/api/events/service_stats/?category=crypto', 'category']]) {
      const r = await get(server, path);
      expectProblem(r, 400, 'invalid_parameter');
      expect(r.body.parameter, path).toBe(name);
      expect(r.body.detail, path).toContain(`has no '${name}' filter`);
    }
    expect((await get(server, '/api/factors/?category=')).res.status).toBe(200); // empty: left out
    expect((await get(server, '/api/factors/?limit=1&utm_source=mail')).res.status).toBe(200); // no filter's name: ignored
  });

  it('a snapshot older than the published thresholds makes the system fail, the reason first (measured when served)', async () => {
    await publish(f, T3, { QUORUM_HEALTH_SNAPSHOT_AGE_DEGRADED_HOURS: '0.000001', QUORUM_HEALTH_SNAPSHOT_AGE_FAILING_HOURS: '0.000002' });
    const fresh = await serve(f.dataDir);
    try {
      await new Promise((r) => setTimeout(r, 20)); // 0.000002 h = 7.2 ms
      const r = await get(fresh, '/api/factors/health/');
      expect(r.body.status).toBe('failing');
      expect(r.body.reasons[0]).toMatch(/^snapshot_age failing: the snapshot was published/);
      const age = r.body.checks.find((c: { check: string }) => c.check === 'snapshot_age');
      expect(age).toMatchObject({ status: 'failing', degraded_at: 0.000001, failing_at: 0.000002 });
    } finally {
      await fresh.close();
    }
  });
});
