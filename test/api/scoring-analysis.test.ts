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
import { derive, forecast, insert, openDb, question, resolution, rows, type Row } from '../scoring/fixture.ts';
import { expectProblem, get, newKey, serve } from './helpers.ts';
import { publish, tempDataDir } from './fixtures.ts';

const SNAP = 'r20250601T000000Z-sa01';
const AS_OF = '2025-06-01T00:00:00.000Z';
const MODELS = ['m1', 'm2', 'm3', 'm4'];
const MODES = ['blind', 'informed', 'augmented'] as const;
const CATS = ['politics', 'finance', 'sports'];

/** Deterministic pseudo-random value in [0, 1) of (i, j, k). */
function u(...xs: number[]): number {
  let h = 2166136261;
  for (const x of xs) h = Math.imul(h ^ (x + 0x9e3779b9), 16777619) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0x5bd1e995) >>> 0;
  return (h >>> 0) / 2 ** 32;
}

/** 45 questions; forecasts in three modes by four models; the market sits near the outcome. */
export function analysisFixture(): { questions: Row[]; forecasts: Row[]; prices: Row[]; resolutions: Row[] } {
  const questions: Row[] = [];
  const forecasts: Row[] = [];
  const prices: Row[] = [];
  const resolutions: Row[] = [];
  for (let i = 0; i < 45; i++) {
    const id = `Q${String(i).padStart(2, '0')}`;
    const o = u(i, 1) < 0.5 ? 1 : 0;
    const market = Math.round((o === 1 ? 0.35 + 0.6 * u(i, 2) : 0.05 + 0.6 * u(i, 2)) * 100) / 100;
    questions.push(question(id, { category: CATS[i % 3], domain: i % 2 ? 'macro' : 'policy' }));
    resolutions.push(resolution(id, o, i % 4 === 0 ? '2025-03-05' : '2025-04-20', { source_slug: i % 5 === 0 ? 'bls' : 'fred' }));
    prices.push({ question_id: id, observed_at: '2025-02-28', probability: market });
    for (const [k, model] of MODELS.entries()) {
      const blind = Math.round((0.2 + 0.6 * u(i, k, 3)) * 100) / 100;
      const pull: Record<(typeof MODES)[number], number> = { blind: 0, informed: 0.4 + 0.1 * k, augmented: 0.7 };
      for (const mode of MODES) {
        const p = Math.round((blind + pull[mode] * (market - blind)) * 1000) / 1000;
        forecasts.push(forecast(id, model, mode, 'r2', '2025-03-01', p));
        forecasts.push(forecast(id, model, mode, 'r1', '2025-02-01', 0.5));
      }
    }
  }
  return { questions, forecasts, prices, resolutions };
}

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
    const f = analysisFixture();
    await insert(conn, 'questions', f.questions);
    await insert(conn, 'forecasts', f.forecasts);
    await insert(conn, 'market_prices', f.prices);
    await insert(conn, 'resolutions', f.resolutions);
    await insert(conn, 'sources', [
      { source_slug: 'fred', name: 'FRED', kind: 'government', url: 'https://fred' },
      { source_slug: 'bls', name: 'BLS', kind: 'government', url: 'https://bls' },
    ]);
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

    it('filters by mode, rounds and one cell; rejects two cells and unknown values', async () => {
      const got = await get(server, '/api/leaderboard/?mode=augmented&rounds=all&category=Finance', withKey(apiKey));
      expect(got.res.status).toBe(200);
      expect(got.body).toMatchObject({ rounds: 'all', dimension: 'category', key: 'finance', mode: 'augmented', total: 8 });
      const want = await table(
        `SELECT forecaster, n FROM leaderboard WHERE rounds = 'all' AND dimension = 'category' AND key = 'finance' AND mode = 'augmented'`,
      );
      expect(got.body.items.map((i: { forecaster: string }) => i.forecaster).sort()).toEqual(want.map((w) => w.forecaster).sort());
      expect(got.body.items.every((i: { n: number; ece: unknown }) => i.n === 15 && i.ece === null)).toBe(true);
      expect(got.body.items[0].sufficient).toBe(false); // 15 questions < 20
      expectProblem(await get(server, '/api/leaderboard/?category=finance&horizon=8-30', withKey(apiKey)), 400, 'invalid_parameter');
      expectProblem(await get(server, '/api/leaderboard/?rounds=some', withKey(apiKey)), 400, 'invalid_parameter');
      expectProblem(await get(server, '/api/leaderboard/?mode=psychic', withKey(apiKey)), 400, 'invalid_parameter');
    });
  });
});
