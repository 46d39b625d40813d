/**
 * QA of operators' claims against what the API does with them: a claim's category must be one the
 * API's category filter can find, a claim's numbers must leave the track records finite (their
 * differences and sums included), `sort=mae` puts the sources without an MAE last whatever the
 * unit of the others, a source is ranked on its directional claims only when it has ten of
 * them, no imported claim takes the id of one of Quorum's own, and a claim's question_id is one the
 * API's question_id filter finds. Real files, the real importer, derive, snapshot and API; nothing mocked.
 */
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { ImportError } from '../../pipeline/import/import-error.ts';
import { auth, get, newKey, serve } from '../api/helpers.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { rawParts } from '../../pipeline/warehouse/raw-views.ts';
import { readCurrent } from '../../pipeline/warehouse/snapshot.ts';
import { claimParts, csvFolder, importAll, publishScores, rawQuery } from './helpers.ts';

const tmp = tempDir('quorum-claims-qa-values-');
afterAll(() => tmp.cleanup());
let n = 0;

const HEAD = 'claim_id,source,made_at,kind,subject,category,probability,side,value,realized_value,threshold,tolerance,outcome,resolved_at\n';

/** The ImportError an import of `files` (name → text) into a new warehouse throws (it must throw one). */
async function rejected(files: Record<string, string>): Promise<{ e: ImportError; dir: string; data: string }> {
  const dir = csvFolder(tmp.dir, files);
  const data = join(tmp.dir, `wh-${n++}`);
  const e = await importAll(data, [['csv', dir]]).then(() => null, (err: unknown) => err);
  expect(e).toBeInstanceOf(ImportError);
  return { e: e as ImportError, dir, data };
}

describe('a claim\'s category', () => {
  const data = join(tmp.dir, 'wh-category');
  let server: ServerHandle;
  let key: string;

  beforeAll(async () => {
    const dir = csvFolder(tmp.dir, {
      'a.csv':
        HEAD +
        'k1,Capital Pundit,2023-01-01,probability,Election X,Politics,0.8,yes,,,,,1,2023-11-08\n' +
        'k2,Shouting Desk,2023-01-01,value,GDP,ECONOMICS,,,3,2.5,,,,2024-01-30\n',
    });
    await importAll(data, [['csv', dir]]);
    await publishScores(data);
    server = await serve(data);
    key = newKey(data, 'pro').key;
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('is one of the nine categories in any case, stored lower case, and the filter finds it (QA: "Politics" was shown and never found)', async () => {
    expect(await rawQuery(data, 'SELECT claim_id, category FROM {claims} ORDER BY claim_id')).toEqual([
      { claim_id: 'k1', category: 'politics' },
      { claim_id: 'k2', category: 'economics' },
    ]);
    const one = await get(server, '/api/track-records/sources/capital-pundit/');
    expect(one.body.source.categories).toEqual(['politics']);
    for (const c of ['politics', 'Politics']) {
      const got = await get(server, `/api/track-records/?category=${c}`, auth.x(key));
      expect(got.res.status).toBe(200);
      expect(got.body.sources.map((s: { slug: string }) => s.slug), c).toEqual(['capital-pundit']);
    }
    const econ = await get(server, '/api/track-records/?category=economics', auth.x(key));
    expect(econ.body.sources.map((s: { slug: string }) => s.slug)).toEqual(['shouting-desk']);
  });

  it('a category stored in capitals by an older version (before the check) is found by the filter too', async () => {
    // QA: the check came with the lower-case rule, and the rows an older version had stored as
    // written ("Politics") stayed unfindable. The raw part is rewritten as that version left it.
    const wh = join(tmp.dir, 'wh-legacy-category');
    await importAll(wh, [['csv', csvFolder(tmp.dir, { 'a.csv': HEAD + 'k1,Old Pundit,2023-01-01,probability,Election X,politics,0.8,yes,,,,,1,2023-11-08\n' })]]);
    const parts = rawParts(wh, 'claims');
    await withConnection(async (conn) => {
      for (const part of parts) {
        await conn.run(`COPY (SELECT * REPLACE ('Politics' AS category) FROM read_parquet('${part}')) TO '${part}.tmp' (FORMAT parquet)`);
        renameSync(`${part}.tmp`, part);
      }
    });
    expect(await rawQuery(wh, 'SELECT category FROM {claims}')).toEqual([{ category: 'Politics' }]);
    await publishScores(wh);
    const old = await serve(wh);
    try {
      const k = newKey(wh, 'pro').key;
      const got = await get(old, '/api/track-records/?category=politics', auth.x(k));
      expect(got.body.sources.map((s: { slug: string }) => s.slug)).toEqual(['old-pundit']);
      expect((await get(old, '/api/track-records/sources/old-pundit/')).body.source.categories).toEqual(['politics']);
    } finally {
      await old.close();
    }
  });

  it('a claim an older version stored with its category in capitals is the same claim again in a later import: the file imported again adds nothing, and its resolution is recorded (QA review)', async () => {
    // The import compared the stored "Politics" with the record's category as written now
    // ("politics"): the same file imported again was refused, 'already stored with another category:
    // "Politics" here, "Politics" stored', and so was the claim's resolution, the documented way to
    // resolve a claim stored open.
    const wh = join(tmp.dir, 'wh-legacy-reimport');
    const open = HEAD + 'k1,Old Pundit,2023-01-01,probability,Election X,Politics,0.8,yes,,,,,,\n';
    await importAll(wh, [['csv', csvFolder(tmp.dir, { 'a.csv': open })]]);
    for (const part of rawParts(wh, 'claims')) {
      await withConnection(async (conn) => {
        await conn.run(`COPY (SELECT * REPLACE ('Politics' AS category) FROM read_parquet('${part}')) TO '${part}.tmp' (FORMAT parquet)`);
      });
      renameSync(`${part}.tmp`, part);
    }
    expect(await rawQuery(wh, 'SELECT category FROM {claims}')).toEqual([{ category: 'Politics' }]);
    const again = await importAll(wh, [['csv', csvFolder(tmp.dir, { 'a.csv': open })]]);
    expect(again[0]!.claims).toMatchObject({ received: 1, written: 0 });
    const resolved = HEAD + 'k1,Old Pundit,2023-01-01,probability,Election X,Politics,0.8,yes,,,,,1,2023-11-08\n';
    const res = await importAll(wh, [['csv', csvFolder(tmp.dir, { 'a.csv': resolved })]]);
    expect(res[0]!.resolutions).toEqual({ received: 1, written: 1 });
    expect(await rawQuery(wh, 'SELECT claim_id FROM {claims}')).toEqual([{ claim_id: 'k1' }]);
  });

  it('any other category is rejected at its line and field, nothing written (QA: "elections" was stored, and the filter refuses it)', async () => {
    const { e, dir, data: wh } = await rejected({
      'a.csv': HEAD + 'k1,Pundit,2023-01-01,probability,X,politics,0.8,yes,,,,,1,2023-11-08\nk2,Pundit,2023-01-01,probability,Y,elections,0.8,yes,,,,,1,2023-11-08\n',
    });
    expect([e.file, e.line, e.field]).toEqual([join(dir, 'a.csv'), 3, 'category']);
    expect(e.reason).toContain('politics, world, finance');
    expect(claimParts(wh)).toEqual([]);
  });
});

describe('a claim\'s numbers leave the track records finite', () => {
  it('generic CSV: a value, realized value, threshold or tolerance over 1e100 in magnitude is rejected at its line and field (QA: 1.5e308 and -1.5e308 made mae Infinity, and the JSON export unreadable)', async () => {
    const ok = 'c0,S,2024-01-01,value,x,,,,3,3.5,,,,2024-02-01\n';
    const cases: [string, string][] = [
      ['c1,S,2024-01-01,value,x,,,,1.5e308,-1.5e308,,,,2024-02-01\n', 'value'],
      ['c1,S,2024-01-01,value,x,,,,3,-1.5e308,,,,2024-02-01\n', 'realized_value'],
      ['c1,S,2024-01-01,value,x,,,,3,3,1e101,,,2024-02-01\n', 'threshold'],
      ['c1,S,2024-01-01,value,x,,,,3,3,,2e150,,2024-02-01\n', 'tolerance'],
    ];
    for (const [row, field] of cases) {
      const { e, dir, data } = await rejected({ 'a.csv': HEAD + ok + row });
      expect([e.file, e.line, e.field], row).toEqual([join(dir, 'a.csv'), 3, field]);
      expect(e.reason, row).toContain('magnitude at most 1e+100');
      expect(claimParts(data)).toEqual([]);
    }
    // The bound itself is accepted.
    const [res] = await importAll(join(tmp.dir, `wh-${n++}`), [['csv', csvFolder(tmp.dir, { 'a.csv': HEAD + ok + 'c1,S,2024-01-01,value,x,,,,1e100,-1e100,,,,2024-02-01\n' })]]);
    expect(res!.claims.written).toBe(2);
  });
});

/** The slugs of GET /api/track-records/?sort=`sort` walked one source a page, through its keyset cursors. */
async function slugsPaged(server: { url: string }, sort: string, key: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { sources: { slug: string }[]; next_cursor: string | null } } = await get(
      server,
      `/api/track-records/?sort=${sort}&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      auth.x(key),
    );
    seen.push(...page.body.sources.map((s) => s.slug));
    cursor = page.body.next_cursor;
  } while (cursor);
  return seen;
}

describe('GET /api/track-records/?sort=mae', () => {
  it('puts the sources without an MAE after every one with an MAE, in any unit (QA: an MAE over 1e15 sorted after them)', async () => {
    const data = join(tmp.dir, 'wh-mae');
    // Rupiah: an MAE of 5e15; a source with probability claims only (no MAE); a small MAE.
    const dir = csvFolder(tmp.dir, {
      'a.csv':
        HEAD +
        'r1,Aardvark Economics,2023-01-01,value,Indonesia GDP 2023,economics,,,2.5e16,2.0e16,,,,2024-03-01\n' +
        'r2,Small Co,2023-01-01,value,x,,,,10,12,,,,2024-03-01\n' +
        'r3,Prob Co,2023-01-01,probability,y,,0.7,yes,,,,,1,2024-03-01\n',
    });
    await importAll(data, [['csv', dir]]);
    await publishScores(data);
    const server = await serve(data);
    try {
      const key = newKey(data, 'pro').key;
      const all = await get(server, '/api/track-records/?sort=mae', auth.x(key));
      expect(all.body.sources.map((s: { slug: string }) => s.slug)).toEqual(['small-co', 'aardvark-economics', 'prob-co']);
      // the keyset pages give the same order, each source once
      expect(await slugsPaged(server, 'mae', key)).toEqual(['small-co', 'aardvark-economics', 'prob-co']);
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('GET /api/track-records/?sort=mae|brier|accuracy: ties', () => {
  it('sources whose figure is the same decimal tie, ordered by slug, whatever floating noise set a last bit apart (outside test: 1.89 and 1.89 listed against slug order)', async () => {
    const data = join(tmp.dir, 'wh-metric-ties');
    // |0.7 − 1| is 0.30000000000000004 and |0.3 − 0| 0.3: one MAE, 0.3, in two doubles; likewise
    // the Brier scores (0.7 − 1)² = 0.09000000000000002 and (0.3 − 0)² = 0.09. The Zeta sources have
    // the lower double, the Alpha sources the first slug.
    const dir = csvFolder(tmp.dir, {
      'a.csv':
        HEAD +
        'm1,Zeta Desk,2023-01-01,value,x,,,,0.3,0,,,,2024-03-01\n' +
        'm2,Alpha Desk,2023-01-01,value,x,,,,0.7,1,,,,2024-03-01\n' +
        'b1,Zeta Odds,2023-01-01,probability,y,,0.3,yes,,,,,0,2024-03-01\n' +
        'b2,Alpha Odds,2023-01-01,probability,y,,0.7,yes,,,,,1,2024-03-01\n',
    });
    await importAll(data, [['csv', dir]]);
    await publishScores(data);
    const server = await serve(data);
    try {
      const key = newKey(data, 'pro').key;
      const figures = await get(server, '/api/track-records/?sort=slug', auth.x(key));
      // the published figures are equal: a reader sees ties
      expect(
        Object.fromEntries(figures.body.sources.map((s: { slug: string; value: { mae: number | null }; probability: { brier: number | null } }) => [s.slug, [s.value.mae, s.probability.brier]])),
      ).toEqual({ 'alpha-desk': [0.3, null], 'alpha-odds': [null, 0.09], 'zeta-desk': [0.3, null], 'zeta-odds': [null, 0.09] });
      const orders: Record<string, string[]> = {
        mae: ['alpha-desk', 'zeta-desk', 'alpha-odds', 'zeta-odds'],
        brier: ['alpha-odds', 'zeta-odds', 'alpha-desk', 'zeta-desk'],
        // every source has an accuracy of 100 (the desks: none; the odds: right on their side)
        accuracy: ['alpha-odds', 'zeta-odds', 'alpha-desk', 'zeta-desk'],
      };
      for (const [sort, want] of Object.entries(orders)) {
        const all = await get(server, `/api/track-records/?sort=${sort}`, auth.x(key));
        expect(all.body.sources.map((s: { slug: string }) => s.slug), sort).toEqual(want);
        // the keyset pages give the same order, each source once
        expect(await slugsPaged(server, sort, key), sort).toEqual(want);
      }
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('value claims in more than one unit', () => {
  it('are not averaged: mae, bias and value_skill are null, value_units says how many, per source, horizon and year (QA: $bn deficits and % of GDP averaged into one MAE)', async () => {
    const data = join(tmp.dir, 'wh-units');
    const head = 'claim_id,source,made_at,kind,subject,subject_key,value,unit,tolerance,horizon_days,realized_value,resolved_at\n';
    const dir = csvFolder(tmp.dir, {
      'a.csv':
        head +
        // Delta: 2024 (100 days): $bn error 10 (tolerance 5: out) and % of GDP error −1 (0.5: out);
        // 2023 (400 days): $bn error 4 (in) and one naming no unit, error 2 (in)
        'd1,Delta Institute,2024-01-01,value,Deficit 2024,,110,usd_bn,5,100,100,2024-04-10\n' +
        'd2,Delta Institute,2024-01-01,value,Debt ratio 2024,,97,pct_gdp,0.5,100,98,2024-04-10\n' +
        'd3,Delta Institute,2023-01-01,value,Deficit 2024b,,104,usd_bn,5,400,100,2024-02-05\n' +
        'd4,Delta Institute,2023-01-01,value,Deficit 2024c,,102,,5,400,100,2024-02-05\n' +
        // Epsilon: two polls of one race in one unit, errors 1 and −3
        'e1,Epsilon Polls,2024-10-01,value,Race margin,race-e,3,points,,10,2,2024-11-05\n' +
        'e2,Epsilon Polls,2024-10-02,value,Race margin b,race-e,-1,points,,9,2,2024-11-05\n',
    });
    await importAll(data, [['csv', dir]]);
    await publishScores(data);
    const server = await serve(data);
    try {
      const key = newKey(data, 'api').key;
      const delta = (await get(server, '/api/track-records/sources/delta-institute/')).body.source;
      // share_within stays: each claim against its own tolerance, 2 of 4
      expect(delta.value).toEqual({ n: 4, unit: null, units: 2, mae: null, bias: null, share_within: 0.5 });
      expect(delta.relative_skill.value_skill).toBeNull();
      // 91-365 (d1, d2): two units; 2y (d3 in $bn, d4 naming none): $bn, errors 4 and 2
      const byBucket = Object.fromEntries(delta.horizons.map((h: Record<string, unknown>) => [h.horizon_bucket, [h.value_unit, h.value_units, h.mae, h.bias, h.n_value]]));
      expect(byBucket).toEqual({ '91-365': [null, 2, null, null, 2], '2y': ['usd_bn', 1, 3, 3, 2] });
      const trends = (await get(server, '/api/track-records/sources/delta-institute/trends/', auth.x(key))).body.trends;
      expect(trends.map((t: Record<string, unknown>) => [t.year, t.value_unit, t.value_units, t.mae])).toEqual([
        [2023, 'usd_bn', 1, 3],
        [2024, null, 2, null],
      ]);
      const eps = (await get(server, '/api/track-records/sources/epsilon-polls/')).body.source;
      expect(eps.value).toEqual({ n: 2, unit: 'points', units: 1, mae: 2, bias: -1, share_within: 0 });
      // (the Parquet snapshot's table says the same)
      const file = join(data, 'snapshots', readCurrent(data)!, 'track_records.parquet');
      const rows = await withConnection(async (conn) =>
        (await conn.runAndReadAll('SELECT source_slug, value_unit, value_units, mae FROM read_parquet($file) ORDER BY source_slug', { file })).getRowObjectsJS(),
      );
      expect(rows).toEqual([
        { source_slug: 'delta-institute', value_unit: null, value_units: 2, mae: null },
        { source_slug: 'epsilon-polls', value_unit: 'points', value_units: 1, mae: 2 },
      ]);
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('the ranking threshold', () => {
  it('counts the claims the ranking score counts: nine value claims and one lucky call are shown, not ranked (QA: ranked 81st of 522 on one call)', async () => {
    const data = join(tmp.dir, 'wh-rank');
    const rows = [HEAD.trimEnd()];
    for (let i = 0; i < 9; i++) rows.push(`ov${i},One Lucky Call,2022-01-01,value,GDP ${i},,,,${i},${i + 1},,,,2022-12-31`);
    rows.push('od1,One Lucky Call,2022-01-01,direction,Race,,,X,,,,,1,2022-11-08');
    // ten direction claims, seven right: ranked
    for (let i = 0; i < 10; i++) rows.push(`t${i},Ten Calls,2022-01-01,direction,Race ${i},,,X,,,,,${i < 7 ? 1 : 0},2022-11-08`);
    await importAll(data, [['csv', csvFolder(tmp.dir, { 'a.csv': rows.join('\n') + '\n' })]]);
    await publishScores(data);
    const server = await serve(data);
    try {
      const lucky = (await get(server, '/api/track-records/sources/one-lucky-call/')).body.source;
      expect(lucky).toMatchObject({ n_resolved: 10, n_directional: 1, accuracy_score: 100, ranked: false, rank: null });
      const ten = (await get(server, '/api/track-records/sources/ten-calls/')).body.source;
      expect(ten).toMatchObject({ n_resolved: 10, n_directional: 10, accuracy_score: 70, ranked: true, rank: 1 });
      const key = newKey(data, 'pro').key;
      const all = await get(server, '/api/track-records/', auth.x(key));
      expect(all.body.sources.map((s: { slug: string; rank: number | null }) => [s.slug, s.rank])).toEqual([['ten-calls', 1], ['one-lucky-call', null]]);
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('a claim id of Quorum\'s own claims', () => {
  it('forecast:, consensus: and price: ids are refused at claim_id, nothing written (QA: a pundit\'s consensus:polymarket:q1:blind was a second claim of the consensus\'s id)', async () => {
    for (const id of ['forecast:polymarket:q1:gpt:blind', 'consensus:polymarket:q1:blind', 'price:polymarket:q1:2025-02-28T00:00:00']) {
      const { e, dir, data } = await rejected({ 'a.csv': HEAD + 'ok1,Pundit,2025-02-01,probability,X,,0.6,yes,,,,,,\n' + `${id},Pundit,2025-02-01,probability,X,,0.1,yes,,,,,0,2025-04-01\n` });
      expect([e.file, e.line, e.field], id).toEqual([join(dir, 'a.csv'), 3, 'claim_id']);
      expect(e.reason).toContain("Quorum's own claims");
      expect(claimParts(data)).toEqual([]);
    }
    // other ids with colons are the operator's: accepted
    const [res] = await importAll(join(tmp.dir, `wh-${n++}`), [['csv', csvFolder(tmp.dir, { 'a.csv': HEAD + 'pundit:consensus:1,Pundit,2025-02-01,probability,X,,0.6,yes,,,,,,\n' })]]);
    expect(res!.claims.written).toBe(1);
  });
});

describe('a claim id of a bundled dataset', () => {
  it('fte-polls:, fte-2018:, fte-senate: and cbo: ids are refused at claim_id (QA: an operator\'s fte-polls:26013:87909 took the poll\'s id, and the bundled import then skipped the poll silently: written 1 of 2, changed 0)', async () => {
    for (const id of ['fte-polls:26013:87909', 'fte-2018:deluxe:TX-S2', 'fte-senate:2008:ak', 'cbo:deficit:1984-02:1984']) {
      const { e, dir, data } = await rejected({ 'a.csv': HEAD + 'ok1,Pundit,2025-02-01,probability,X,,0.6,yes,,,,,,\n' + `${id},Pundit,2025-02-01,probability,X,,0.1,yes,,,,,0,2025-04-01\n` });
      expect([e.file, e.line, e.field], id).toEqual([join(dir, 'a.csv'), 3, 'claim_id']);
      expect(e.reason).toContain('bundled datasets');
      expect(claimParts(data)).toEqual([]);
    }
  });
});

describe('a claim\'s question_id', () => {
  it('is a question id as the API takes it, its venue stored lower case, and the filter finds it (QA: "Fed cut 2023" and "POLYMARKET:abc" were stored and never found)', async () => {
    const { e, dir } = await rejected({ 'a.csv': HEAD.trimEnd() + ',question_id\nq1,Pundit,2023-01-01,probability,X,,0.8,yes,,,,,1,2023-11-08,Fed cut 2023\n' });
    expect([e.file, e.line, e.field]).toEqual([join(dir, 'a.csv'), 2, 'question_id']);
    expect(e.reason).toContain('metaculus:1554');
    const data = join(tmp.dir, 'wh-question');
    await importAll(data, [['csv', csvFolder(tmp.dir, { 'a.csv': HEAD.trimEnd() + ',question_id\nq2,Pundit,2023-01-01,probability,Y,,0.8,yes,,,,,1,2023-11-08,POLYMARKET:0xAbC\n' })]]);
    expect(await rawQuery(data, 'SELECT question_id FROM {claims}')).toEqual([{ question_id: 'polymarket:0xAbC' }]);
    await publishScores(data);
    const server = await serve(data);
    try {
      const key = newKey(data, 'api').key;
      for (const q of ['polymarket:0xAbC', 'POLYMARKET:0xAbC']) {
        const got = await get(server, `/api/claims/?question_id=${q}`, auth.x(key));
        expect(got.body.claims.map((c: { claim_id: string }) => c.claim_id), q).toEqual(['q2']);
      }
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('a negative zero', () => {
  it('is stored as zero (outside test: a probability written -0.0 was stored as -0 and exported as -0.0), and the same claim written 0 is no other claim', async () => {
    const wh = join(tmp.dir, 'wh-negative-zero');
    const rows = (p: string, v: string) =>
      HEAD + `z1,Zero Desk,2024-01-01,probability,Event Z,,${p},yes,,,,,1,2024-02-01\n` + `z2,Zero Desk,2024-01-01,value,Level Z,,,,${v},5,${v},${v},,2024-02-01\n`;
    const [first] = await importAll(wh, [['csv', csvFolder(tmp.dir, { 'a.csv': rows('-0.0', '-0') })]]);
    expect(first!.claims.written).toBe(2);
    // as text: a negative zero reads "-0.0", what the exports wrote
    expect(await rawQuery(wh, 'SELECT claim_id, probability::VARCHAR AS p, value::VARCHAR AS v, threshold::VARCHAR AS t, tolerance::VARCHAR AS tol FROM {claims} ORDER BY claim_id')).toEqual([
      { claim_id: 'z1', p: '0.0', v: null, t: null, tol: null },
      { claim_id: 'z2', p: null, v: '0.0', t: '0.0', tol: '0.0' },
    ]);
    const [again] = await importAll(wh, [['csv', csvFolder(tmp.dir, { 'a.csv': rows('0', '0') })]]);
    expect(again!.claims).toMatchObject({ received: 2, written: 0 });
  });
});
