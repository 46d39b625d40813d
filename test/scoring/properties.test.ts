/**
 * fast-check properties of the scoring SQL on random small warehouses (real DuckDB).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { DuckDBConnection } from '@duckdb/node-api';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SQL_DIR, deriveTables, listSqlFiles } from '../../pipeline/warehouse/derive.ts';
import { forecast, insert, openDb, question, resolution, rows, ts, type Row } from './fixture.ts';

/**
 * The properties concern the scores, the consensus and calibration (files up to 70 that they read):
 * each run derives only those, in a directory of copies, so that the hundred-odd derives stay fast
 * whatever the later files (analyses, feeds) cost.
 */
const PROPERTY_FILES = /^(10|20|25|30|40|50|51|70)_/;
let sqlDir = '';
async function derive(conn: DuckDBConnection): Promise<void> {
  await deriveTables(conn, { asOf: ts('2025-06-01'), sqlDir });
}

const MODELS = ['m1', 'm2', 'm3', 'm4'];

/** Clears the raw tables used by the properties. */
async function reset(conn: DuckDBConnection): Promise<void> {
  for (const t of ['questions', 'forecasts', 'resolutions', 'market_prices']) await conn.run(`DELETE FROM raw_${t}`);
}

/** One question per entry: up to four model probabilities (augmented), an outcome, a market price. */
interface Case {
  ps: number[];
  o: 0 | 1;
  market: number | null;
}

async function load(conn: DuckDBConnection, cases: Case[]): Promise<void> {
  await reset(conn);
  const qs: Row[] = [];
  const fs: Row[] = [];
  const rs: Row[] = [];
  const ms: Row[] = [];
  cases.forEach((c, i) => {
    const id = `q${i}`;
    qs.push(question(id, { category: i % 2 ? 'crypto' : 'finance' }));
    c.ps.forEach((p, m) => fs.push(forecast(id, MODELS[m]!, 'augmented', 'r1', '2025-02-01', p)));
    rs.push(resolution(id, c.o, '2025-03-01'));
    if (c.market !== null) ms.push({ question_id: id, observed_at: '2025-01-31', probability: c.market });
  });
  await insert(conn, 'questions', qs);
  await insert(conn, 'forecasts', fs);
  await insert(conn, 'resolutions', rs);
  if (ms.length) await insert(conn, 'market_prices', ms);
  await derive(conn);
}

const prob = fc.double({ min: 0, max: 1, noNaN: true });
const caseArb = fc.record({
  ps: fc.array(prob, { minLength: 1, maxLength: 4 }),
  o: fc.constantFrom(0 as const, 1 as const),
  market: fc.option(prob, { nil: null }),
});

describe('scoring properties', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    sqlDir = mkdtempSync(join(tmpdir(), 'quorum-props-sql-'));
    for (const f of await listSqlFiles(DEFAULT_SQL_DIR)) {
      if (PROPERTY_FILES.test(f)) copyFileSync(join(DEFAULT_SQL_DIR, f), join(sqlDir, f));
    }
    ({ conn, close } = await openDb());
    // One thread: a derive here is a few hundred statements over a few dozen rows (bootstrap's
    // 1000 × 200 weights the largest), too small for a second thread to share, which only adds
    // its scheduling (on a loaded 2-core machine about half the derives' time and CPU). The
    // properties are bounds and identities within tolerances, whatever the thread count.
    await conn.run('SET threads = 1');
  });
  afterAll(() => {
    close();
    rmSync(sqlDir, { recursive: true, force: true });
  });

  // One derive serves two properties of the same random warehouse (a derive is most of a run's cost).
  it('Brier is in [0, 1] and log loss in [0, −ln 0.001] for every scored row; consensus mean and median lie between the min and max forecast', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(caseArb, { minLength: 1, maxLength: 8 }), async (cases) => {
        await load(conn, cases);
        const r = await rows(
          conn,
          `SELECT brier AS b, log_loss AS l FROM scored_forecasts
           UNION ALL SELECT brier, log_loss FROM scored_consensus
           UNION ALL SELECT market_brier, market_log_loss FROM scored_consensus WHERE market_brier IS NOT NULL`,
        );
        expect(r.length).toBeGreaterThan(0);
        for (const { b, l } of r as { b: number; l: number }[]) {
          expect(b).toBeGreaterThanOrEqual(0);
          expect(b).toBeLessThanOrEqual(1);
          expect(l).toBeGreaterThanOrEqual(0);
          expect(l).toBeLessThanOrEqual(-Math.log(0.001) + 1e-12);
        }
        const c = await rows(conn, `SELECT question_id, mean, median, logit_mean, n_models FROM consensus`);
        expect(c).toHaveLength(cases.length);
        for (const row of c) {
          const ps = cases[Number(String(row.question_id).slice(1))]!.ps;
          const lo = Math.min(...ps) - 1e-12;
          const hi = Math.max(...ps) + 1e-12;
          expect(row.n_models).toBe(ps.length);
          for (const v of [row.mean, row.median] as number[]) {
            expect(v).toBeGreaterThanOrEqual(lo);
            expect(v).toBeLessThanOrEqual(hi);
          }
        }
      }),
      { numRuns: 25 },
    );
  });

  it('perfect forecasts (p = o) score 0', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ o: fc.constantFrom(0 as const, 1 as const), k: fc.integer({ min: 1, max: 4 }) }), {
          minLength: 1,
          maxLength: 8,
        }),
        async (xs) => {
          await load(conn, xs.map(({ o, k }) => ({ ps: Array<number>(k).fill(o), o, market: o })));
          const r = await rows(
            conn,
            `SELECT max(brier) AS b FROM (SELECT brier FROM scored_forecasts UNION ALL
                                          SELECT brier FROM scored_consensus UNION ALL
                                          SELECT market_brier FROM scored_consensus)`,
          );
          expect(r[0]!.b).toBe(0);
          const acc = await rows(conn, `SELECT accuracy_pct FROM accuracy WHERE dimension = 'overall'`);
          for (const a of acc) expect(a.accuracy_pct).toBe(100);
        },
      ),
      { numRuns: 20 },
    );
  });

  it('Murphy identity is exact when each bin holds one forecast value; ECE in [0, 1]', async () => {
    // one model per question, its p the centre of a chosen bin: (b + 0.5) / 10
    const exact = fc.array(fc.record({ bin: fc.integer({ min: 0, max: 9 }), o: fc.constantFrom(0 as const, 1 as const) }), {
      minLength: 1,
      maxLength: 16,
    });
    await fc.assert(
      fc.asyncProperty(exact, async (xs) => {
        await load(conn, xs.map(({ bin, o }) => ({ ps: [(bin + 0.5) / 10], o, market: null })));
        const s = await rows(conn, `SELECT * FROM calibration_summary`);
        expect(s.length).toBeGreaterThan(0);
        for (const r of s as Record<string, number>[]) {
          expect(Math.abs(r.reliability! - r.resolution! + r.uncertainty! - r.brier!)).toBeLessThan(1e-12);
          expect(r.ece).toBeGreaterThanOrEqual(0);
          expect(r.ece).toBeLessThanOrEqual(1);
        }
      }),
      { numRuns: 25 },
    );
  });

  it('Murphy identity holds within the within-bin spread bound for arbitrary forecasts', async () => {
    const single = fc.array(fc.record({ p: prob, o: fc.constantFrom(0 as const, 1 as const) }), { minLength: 1, maxLength: 16 });
    await fc.assert(
      fc.asyncProperty(single, async (xs) => {
        await load(conn, xs.map(({ p, o }) => ({ ps: [p], o, market: null })));
        const s = await rows(conn, `SELECT * FROM calibration_summary WHERE forecaster = 'm1' AND mode = 'augmented'`);
        const r = s[0] as Record<string, number>;
        // Exact: BS = REL − RES + UNC + WBV − 2·WBC, with WBV = (1/N)Σ(p − p̄_k)² and
        // |WBC| ≤ sqrt(WBV · (1/N)Σ(o − ō_k)²) ≤ sqrt(WBV / 4) (Cauchy–Schwarz).
        const bins = new Map<number, number[]>();
        for (const { p } of xs) {
          const b = Math.min(Math.floor(Math.round(p * 10 * 1e9) / 1e9), 9);
          bins.set(b, [...(bins.get(b) ?? []), p]);
        }
        let wbv = 0;
        for (const ps of bins.values()) {
          const m = ps.reduce((a, b) => a + b, 0) / ps.length;
          wbv += ps.reduce((a, p) => a + (p - m) ** 2, 0);
        }
        wbv /= xs.length;
        const diff = Math.abs(r.brier! - (r.reliability! - r.resolution! + r.uncertainty!));
        expect(diff).toBeLessThanOrEqual(wbv + 2 * Math.sqrt(wbv / 4) + 1e-12);
        expect(r.ece).toBeGreaterThanOrEqual(0);
        expect(r.ece).toBeLessThanOrEqual(1);
      }),
      { numRuns: 25 },
    );
  });
});
