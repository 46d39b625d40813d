/**
 * The issue-10 scoring routes over a REAL snapshot: the scoring fixture below is derived with the
 * project's own sql/derive, exported as Parquet, published, and served by the real server on
 * port 0. Bodies are compared with the snapshot's own tables (read back from the Parquet).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { exportTables } from '../../pipeline/warehouse/derive.ts';
import type { ServerHandle } from '../../api/server.ts';
import { insertAnalysisFixture } from '../scoring/analysis-fixture.ts';
import { derive, openDb, rows } from '../scoring/fixture.ts';
import { expectProblem, get, newKey, serve } from './helpers.ts';
import { publish, tempDataDir } from './fixtures.ts';

const SNAP = 'r20250601T000000Z-sa01';
const AS_OF = '2025-06-01T00:00:00.000Z';
describe('scoring analysis routes', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let server: ServerHandle;
  let apiKey: string;
  let proKey: string;
  let table: (sql: string) => Promise<Record<string, unknown>[]>;
  let closeTables: () => void;

  beforeAll(async () => {
    ({ dir, cleanup } = await tempDataDir());
    const { conn, close } = await openDb();
    await insertAnalysisFixture(conn);
    const tables = await derive(conn, new Date(AS_OF));
    const snapDir = path.join(dir, 'snapshots', SNAP);
    await mkdir(snapDir, { recursive: true });
    await exportTables(conn, tables, snapDir);
    close();
    await writeFile(
      path.join(snapDir, 'manifest.json'),
      JSON.stringify({ run_id: SNAP, as_of: AS_OF, created_at: AS_OF, tables, headline_modes: ['augmented', 'informed', 'blind'] }),
    );
    await publish(dir, SNAP);
    server = await serve(dir);
    apiKey = newKey(dir, 'api').key;
    proKey = newKey(dir, 'pro').key;
    const db = await DuckDBInstance.create(':memory:');
    const reader = await db.connect();
    table = async (sql: string) => rows(reader, sql.replaceAll(/\bFROM (\w+)/g, (_m, t: string) => `FROM read_parquet('${path.join(snapDir, `${t}.parquet`)}')`));
    closeTables = () => {
      reader.closeSync();
      db.closeSync();
    };
  });
  afterAll(async () => {
    closeTables();
    await server?.close();
    await cleanup();
  });

  const withKey = (key: string) => ({ headers: { 'X-API-Key': key } });

  // Issue 10: the definitions are in each field's description. Every property of the six routes'
  // 200 bodies, nested ones included, has one (on the property or on the schema it refers to).
  it('every field of the scoring routes is described in the OpenAPI document', async () => {
    const { body: doc } = await get(server, '/api/openapi.json');
    const schemas = doc.components.schemas as Record<string, any>;
    const resolve = (s: any) => (s?.$ref ? schemas[String(s.$ref).split('/').pop()!] : s);
    const undescribed: string[] = [];
    const walk = (s: any, at: string, depth: number): void => {
      const r = resolve(s);
      if (!r || depth > 8) return;
      for (const alt of [...(r.anyOf ?? []), ...(r.oneOf ?? [])]) walk(alt, at, depth + 1);
      if (r.items) walk(r.items, `${at}[]`, depth + 1);
      for (const [k, v] of Object.entries<any>(r.properties ?? {})) {
        const rv = resolve(v);
        const nullableRef = (rv?.anyOf ?? []).some((a: any) => resolve(a)?.description);
        if (!v.description && !rv?.description && !nullableRef) undescribed.push(`${at}.${k}`);
        walk(v, `${at}.${k}`, depth + 1);
      }
    };
    const paths = ['/api/leaderboard/', '/api/rankings/', '/api/analysis/information-value/', '/api/analysis/anchoring/',
      '/api/analysis/disagreement/', '/api/analysis/resolution-sources/'];
    for (const p of paths) walk(doc.paths[p].get.responses['200'].content['application/json'].schema, p, 0);
    expect(undescribed).toEqual([]);
  });

  describe('GET /api/leaderboard/', () => {
    it('needs the api plan (anonymous and pro callers are refused)', async () => {
      expectProblem(await get(server, '/api/leaderboard/'), 403, 'plan_required');
      expectProblem(await get(server, '/api/leaderboard/', withKey(proKey)), 403, 'plan_required');
    });

    it('answers every mode of the overall cell, as the snapshot table says, rounded', async () => {
      const got = await get(server, '/api/leaderboard/', withKey(apiKey));
      expect(got.res.status).toBe(200);
      const want = await table(`SELECT * FROM leaderboard WHERE rounds = 'latest' AND dimension = 'overall'`);
      expect(got.body).toMatchObject({ rounds: 'latest', dimension: 'overall', key: 'all', mode: null, total: want.length });
      expect(got.body.items).toHaveLength(want.length);
      expect(want.length).toBe(3 * 8); // 3 modes × (4 models, 3 consensus statistics, market)
      for (const item of got.body.items) {
        const w = want.find((r) => r.mode === item.mode && r.forecaster === item.forecaster)!;
        expect(item.rank).toBe(w.rank);
        expect(item.n).toBe(w.n);
        expect(item.brier).toBe(Math.round((w.brier as number) * 1e6) / 1e6);
        expect(item.brier_ci95[0]).toBeCloseTo(w.brier_ci95_lo as number, 6);
        expect(item.vs_best.tied_with_best).toBe(w.tied_with_best);
        expect(item.vs_market.n).toBe(w.vs_market_n);
        expect(item.sufficient).toBe(true); // 45 questions
      }
      // modes in ladder order, each best first
      expect(got.body.items[0]).toMatchObject({ mode: 'blind', rank: 1, is_best: true });
    });

    it('since: recomputed at request time; before every resolution it equals the precomputed leaderboard', async () => {
      for (const q of ['', 'rounds=all&category=finance', 'mode=informed&horizon=31-90']) {
        const all = await get(server, `/api/leaderboard/?${q}`, withKey(apiKey));
        const early = await get(server, `/api/leaderboard/?${q}&since=2000-01-01`, withKey(apiKey));
        expect(early.res.status).toBe(200);
        expect(all.body.since).toBeNull();
        expect(early.body.since).toBe('2000-01-01T00:00:00.000000Z');
        expect(early.body.items.length).toBeGreaterThan(0);
        expect(early.body.items).toEqual(all.body.items);
      }
      // the fixture resolves Q00, Q04, … (i % 4 = 0) on 2025-03-05 and the other 33 on 2025-04-20
      const got = await get(server, '/api/leaderboard/?mode=augmented&since=2025-04-01', withKey(apiKey));
      expect(got.res.status).toBe(200);
      const items = got.body.items as { forecaster: string; n: number; brier: number; rank: number; is_best: boolean; brier_adjusted: number; n_questions: number; brier_ci95: [number, number]; vs_market: { n: number; diff: number } }[];
      const models = await table(
        `SELECT model, count(*) AS n, avg(brier) AS brier, avg(brier - market_brier) AS dm, count(market_brier) AS nm
         FROM scored_forecasts WHERE mode = 'augmented' AND resolved_at >= TIMESTAMP '2025-04-01' GROUP BY model`,
      );
      expect(models).toHaveLength(4);
      for (const m of models) {
        const item = items.find((i) => i.forecaster === m.model)!;
        expect(item.n).toBe(33);
        expect(item.n_questions).toBe(33);
        expect(item.brier).toBeCloseTo(m.brier as number, 6);
        expect(item.vs_market.n).toBe(Number(m.nm));
        expect(item.vs_market.diff).toBeCloseTo(m.dm as number, 6);
        expect(item.brier_ci95[0]).toBeLessThanOrEqual(item.brier_ci95[1]);
      }
      // rank by difficulty-adjusted Brier, the best first
      const sorted = [...items].sort((x, y) => x.rank - y.rank);
      expect(sorted[0]!.is_best).toBe(true);
      for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.brier_adjusted).toBeGreaterThanOrEqual(sorted[i - 1]!.brier_adjusted);
      // after every resolution: an empty leaderboard, not an error
      const none = await get(server, '/api/leaderboard/?since=2030-01-01', withKey(apiKey));
      expect(none.res.status).toBe(200);
      expect(none.body).toMatchObject({ total: 0, items: [] });
      expectProblem(await get(server, '/api/leaderboard/?since=yesterday', withKey(apiKey)), 400, 'invalid_parameter');
      expectProblem(await get(server, "/api/leaderboard/?since=2025-01-01'%20OR%201=1", withKey(apiKey)), 400, 'invalid_parameter');
    });

    it('filters by mode, rounds and one cell; rejects two cells and unknown values', async () => {
      const got = await get(server, '/api/leaderboard/?mode=augmented&rounds=all&category=Finance', withKey(apiKey));
      expect(got.res.status).toBe(200);
      expect(got.body).toMatchObject({ rounds: 'all', dimension: 'category', key: 'finance', mode: 'augmented', total: 8 });
      const want = await table(
        `SELECT forecaster, n, ece FROM leaderboard WHERE rounds = 'all' AND dimension = 'category' AND key = 'finance' AND mode = 'augmented'`,
      );
      expect(got.body.items.map((i: { forecaster: string }) => i.forecaster).sort()).toEqual(want.map((w) => w.forecaster).sort());
      expect(got.body.items.every((i: { n: number }) => i.n === 15)).toBe(true);
      // rounds=all has an ECE too (of each question's mean probability over its rounds)
      for (const i of got.body.items as { forecaster: string; ece: number }[]) {
        const w = want.find((x) => x.forecaster === i.forecaster)!;
        expect(typeof i.ece).toBe('number');
        expect(i.ece).toBeCloseTo(w.ece as number, 6);
      }
      expect(got.body.items[0].sufficient).toBe(false); // 15 questions < 20
      expectProblem(await get(server, '/api/leaderboard/?category=finance&horizon=8-30', withKey(apiKey)), 400, 'invalid_parameter');
      expectProblem(await get(server, '/api/leaderboard/?rounds=some', withKey(apiKey)), 400, 'invalid_parameter');
      expectProblem(await get(server, '/api/leaderboard/?mode=psychic', withKey(apiKey)), 400, 'invalid_parameter');
    });
  });

  describe('GET /api/analysis/disagreement/', () => {
    it('every scope with its quintiles and the verdict derived from the interval', async () => {
      expectProblem(await get(server, '/api/analysis/disagreement/', withKey(proKey)), 403, 'plan_required');
      const got = await get(server, '/api/analysis/disagreement/', withKey(apiKey));
      expect(got.res.status).toBe(200);
      expect(got.body).toMatchObject({ rounds: 'latest', mode: null, total: 4 });
      expect(got.body.items.map((i: { mode: string }) => i.mode)).toEqual(['headline', 'blind', 'informed', 'augmented']);
      const want = await table(`SELECT * FROM disagreement WHERE rounds = 'latest' AND mode = 'headline'`);
      const h = got.body.items[0];
      expect(h.n).toBe(want[0]!.n);
      expect(h.spearman).toBe(Math.round((want[0]!.spearman as number) * 1e6) / 1e6);
      expect(h.predicts_error).toBe(want[0]!.predicts_error);
      const [lo, hi] = h.spearman_ci95;
      expect(h.predicts_error).toBe(lo > 0 ? 'true' : hi < 0 ? 'false' : 'inconclusive');
      expect(h.verdict).toMatch(/Spearman -?0\.\d{3}, 95% interval \[/);
      expect(h.quintiles).toHaveLength(5);
      expect(h.quintiles.reduce((a: number, q: { n: number }) => a + q.n, 0)).toBe(h.n);
      const one = await get(server, '/api/analysis/disagreement/?mode=Informed&rounds=all', withKey(apiKey));
      expect(one.body).toMatchObject({ rounds: 'all', mode: 'informed', total: 1 });
      expect(one.body.items[0]).toMatchObject({ auroc_wrong_direction: null, n_directional: null, n_wrong: null });
      expectProblem(await get(server, '/api/analysis/disagreement/?mode=x', withKey(apiKey)), 400, 'invalid_parameter');
    });
  });

  describe('GET /api/analysis/information-value/', () => {
    it('both comparisons per forecaster, overall and per category', async () => {
      const got = await get(server, '/api/analysis/information-value/', withKey(apiKey));
      expect(got.res.status).toBe(200);
      expect(got.body).toMatchObject({ rounds: 'latest', dimension: 'overall', key: 'all', total: 7 }); // 4 models, 3 consensus
      const m1 = got.body.items.find((i: { forecaster: string }) => i.forecaster === 'm1');
      const want = await table(`SELECT * FROM information_value WHERE rounds = 'latest' AND dimension = 'overall' AND forecaster = 'm1' AND comparison = 'blind_to_informed'`);
      expect(m1.blind_to_informed.n).toBe(45);
      expect(m1.blind_to_informed.value).toBe(Math.round((want[0]!.value as number) * 1e6) / 1e6);
      expect(m1.blind_to_informed.value_ci95).toHaveLength(2);
      const cat = await get(server, '/api/analysis/information-value/?category=sports&rounds=all', withKey(apiKey));
      expect(cat.body).toMatchObject({ rounds: 'all', dimension: 'category', key: 'sports' });
      expect(cat.body.items[0].informed_to_augmented.n).toBe(15);
      expectProblem(await get(server, '/api/analysis/information-value/?category=astrology', withKey(apiKey)), 400, 'invalid_parameter');
    });
  });

  describe('GET /api/analysis/anchoring/', () => {
    it('slope with interval per model and mode, for rounds latest and all', async () => {
      const got = await get(server, '/api/analysis/anchoring/?mode=augmented', withKey(apiKey));
      expect(got.res.status).toBe(200);
      expect(got.body).toMatchObject({ rounds: 'latest', mode: 'augmented', total: 5 });
      const want = await table(`SELECT * FROM anchoring WHERE rounds = 'latest' AND mode = 'augmented' AND forecaster = 'm2'`);
      const m2 = got.body.items.find((i: { forecaster: string }) => i.forecaster === 'm2');
      expect(m2.slope).toBe(Math.round((want[0]!.slope as number) * 1e6) / 1e6);
      expect(m2.slope).toBeCloseTo(0.7, 2);
      expect(m2.slope_ci95[0]).toBeLessThanOrEqual(m2.slope_ci95[1]);
      expect((await get(server, '/api/analysis/anchoring/', withKey(apiKey))).body.total).toBe(15);
      const all = await get(server, '/api/analysis/anchoring/?rounds=all&mode=informed', withKey(apiKey));
      expect(all.res.status).toBe(200);
      expect(all.body).toMatchObject({ rounds: 'all', mode: 'informed', total: 5 });
      const wantAll = await table(`SELECT * FROM anchoring WHERE rounds = 'all' AND mode = 'informed' ORDER BY forecaster`);
      for (const w of wantAll) {
        const item = all.body.items.find((i: { forecaster: string }) => i.forecaster === w.forecaster);
        expect(item.n_slope).toBe(Number(w.n_slope));
        expect(item.slope).toBeCloseTo(w.slope as number, 6);
      }
      expectProblem(await get(server, '/api/analysis/anchoring/?rounds=some', withKey(apiKey)), 400, 'invalid_parameter');
    });
  });

  describe('GET /api/rankings/', () => {
    it('ranks every category, domain and horizon cell; small cells say insufficient', async () => {
      expectProblem(await get(server, '/api/rankings/', withKey(proKey)), 403, 'plan_required');
      const got = await get(server, '/api/rankings/?mode=augmented', withKey(apiKey));
      expect(got.res.status).toBe(200);
      // 3 categories + 2 domains + 2 horizons (resolved 4 or 50 days after the forecast)
      const want = await table(
        `SELECT DISTINCT dimension, key, n_questions FROM leaderboard WHERE rounds = 'latest' AND mode = 'augmented' AND dimension <> 'overall'`,
      );
      expect(got.body).toMatchObject({ rounds: 'latest', mode: 'augmented', min_questions: 20, total: want.length });
      for (const cell of got.body.items) {
        const w = want.find((x) => x.dimension === cell.dimension && x.key === cell.key)!;
        expect(cell.n_questions).toBe(w.n_questions);
        if ((w.n_questions as number) < 20) expect(cell).toMatchObject({ status: 'insufficient', ranking: null, best: null });
        else {
          expect(cell.status).toBe('ranked');
          expect(cell.ranking).toHaveLength(8);
          expect(cell.ranking[0]).toMatchObject({ rank: 1, forecaster: cell.best, tied_with_best: true });
        }
      }
      expect(got.body.items.some((c: { status: string }) => c.status === 'insufficient')).toBe(true); // categories: 15 each
      expect(got.body.items.some((c: { status: string }) => c.status === 'ranked')).toBe(true); // domains: 22 and 23
      const dom = await get(server, '/api/rankings/?dimension=domain&rounds=all', withKey(apiKey));
      expect(dom.body.items.every((c: { dimension: string }) => c.dimension === 'domain')).toBe(true);
      expect(dom.body.total).toBe(2 * 3);
      expectProblem(await get(server, '/api/rankings/?dimension=planet', withKey(apiKey)), 400, 'invalid_parameter');
    });
  });

  describe('GET /api/analysis/resolution-sources/', () => {
    it('one item per source, as the snapshot table says', async () => {
      const got = await get(server, '/api/analysis/resolution-sources/', withKey(apiKey));
      expect(got.res.status).toBe(200);
      expect(got.body.total).toBe(2);
      // 45 questions: every fifth resolved by BLS (9), the rest by FRED (36)
      expect(got.body.items.map((i: { source_slug: string; resolutions: number }) => [i.source_slug, i.resolutions])).toEqual([
        ['fred', 36],
        ['bls', 9],
      ]);
      expect(got.body.items[0]).toMatchObject({ name: 'FRED', annulled: 0, amended: 0, changed: 0, share_changed: 0, n_lag: 0 });
    });
  });

  // The scoring routes share their filters' names (mode, rounds, category, domain, horizon, since,
  // dimension), but each applies only some. One it does not apply was ignored (the convention for
  // unknown parameters), so /api/rankings/?since=2026-01-01 or /api/analysis/anchoring/?category=
  // politics answered every question's figures with 200, as if filtered. Refused now, naming the
  // route's own filters (as /api/predictions/accuracy?category= is); empty values stay unset.
  describe('a scoring filter the route does not apply is a 400, not ignored', () => {
    const cases: [string, string][] = [
      ['/api/rankings/', 'since=2025-01-01'],
      ['/api/rankings/', 'category=sports'],
      ['/api/rankings/', 'horizon=8-30'],
      ['/api/analysis/anchoring/', 'category=sports'],
      ['/api/analysis/anchoring/', 'since=2025-01-01'],
      ['/api/analysis/disagreement/', 'category=sports'],
      ['/api/analysis/disagreement/', 'domain=macro'],
      ['/api/analysis/information-value/', 'mode=blind'],
      ['/api/analysis/information-value/', 'horizon=8-30'],
      ['/api/analysis/resolution-sources/', 'since=2025-01-01'],
      ['/api/analysis/resolution-sources/', 'rounds=all'],
      ['/api/leaderboard/', 'dimension=category'],
    ];
    it.each(cases)('%s?%s', async (route, query) => {
      const got = await get(server, `${route}?${query}`, withKey(apiKey));
      expectProblem(got, 400, 'invalid_parameter');
      expect(got.body.parameter).toBe(query.split('=')[0]);
      expect(got.body.detail).toContain(route);
    });
    it('an empty value is unset, and the route\'s own filters still work', async () => {
      expect((await get(server, '/api/rankings/?since=', withKey(apiKey))).res.status).toBe(200);
      expect((await get(server, '/api/analysis/anchoring/?category=&mode=informed', withKey(apiKey))).res.status).toBe(200);
      expect((await get(server, '/api/analysis/resolution-sources/?page=2', withKey(apiKey))).res.status).toBe(200);
    });
  });
});
