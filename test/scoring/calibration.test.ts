/**
 * Calibration bins, Wilson interval, ECE, Murphy decomposition and AI vs market (skill, paired
 * interval): hand-computed expectations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, one, openDb, question, resolution, rows } from './fixture.ts';

const Z = 1.96;
const Z2 = Z * Z; // 3.8416
function wilson(phat: number, n: number): [number, number] {
  const center = (phat + Z2 / (2 * n)) / (1 + Z2 / n);
  const half = (Z * Math.sqrt((phat * (1 - phat)) / n + Z2 / (4 * n * n))) / (1 + Z2 / n);
  return [Math.max(0, center - half), Math.min(1, center + half)];
}

describe('calibration', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    // One model, augmented: the headline consensus equals the model's forecast.
    // bin 2: p = 0.25 twice, outcomes 1 and 0; bin 8: p = 0.85 twice, outcomes 1 and 1.
    const cases: [string, number, number][] = [
      ['c1', 0.25, 1],
      ['c2', 0.25, 0],
      ['c3', 0.85, 1],
      ['c4', 0.85, 1],
    ];
    await insert(conn, 'questions', cases.map(([id]) => question(id)));
    await insert(conn, 'forecasts', cases.map(([id, p]) => forecast(id, 'm1', 'augmented', 'r1', '2025-02-01', p)));
    await insert(conn, 'resolutions', cases.map(([id, , o]) => resolution(id, o, '2025-03-01')));
    await derive(conn);
  });
  afterAll(() => close());

  it('10 equal-width bins with Wilson 95% intervals; empty bins present with nulls', async () => {
    const bins = await rows(conn, `SELECT * FROM calibration WHERE forecaster = 'consensus' AND mode = 'headline' ORDER BY bin`);
    expect(bins).toHaveLength(10);
    expect(bins[0]).toMatchObject({ bin: 0, bin_lo: 0, bin_hi: 0.1, n: 0, mean_p: null, observed: null, wilson_lo: null, wilson_hi: null });
    const b2 = bins[2]!;
    expect(b2).toMatchObject({ n: 2, mean_p: 0.25, observed: 0.5, bin_lo: 0.2, bin_hi: 0.3 });
    // p̂ = 0.5, n = 2: center = (0.5 + 3.8416/4) / (1 + 3.8416/2) = 1.4604 / 2.9208 = 0.5
    // half = 1.96·sqrt(0.25/2 + 3.8416/16) / 2.9208 = 1.96·sqrt(0.3651) / 2.9208 = 0.405469
    expect(b2.wilson_lo).toBeCloseTo(0.5 - 0.405469, 5);
    expect(b2.wilson_hi).toBeCloseTo(0.5 + 0.405469, 5);
    expect(b2.wilson_lo).toBeCloseTo(wilson(0.5, 2)[0], 12);
    const b8 = bins[8]!;
    expect(b8).toMatchObject({ n: 2, observed: 1 });
    expect(b8.mean_p).toBeCloseTo(0.85, 12);
    // p̂ = 1: center = 1.9604 / 2.9208 = 0.671186, half = 1.96·0.49 / 2.9208 = 0.328814 → [0.342372, 1]
    expect(b8.wilson_lo).toBeCloseTo(0.342372, 5);
    expect(b8.wilson_hi).toBeCloseTo(1, 12);
  });

  it('ECE and the Murphy decomposition', async () => {
    const s = await one(conn, `SELECT * FROM calibration_summary WHERE forecaster = 'consensus' AND mode = 'headline'`);
    expect(s.n).toBe(4);
    // Brier: (0.25−1)² + 0.25² + 2·(0.85−1)² = 0.5625 + 0.0625 + 0.045 = 0.67; / 4 = 0.1675
    expect(s.brier).toBeCloseTo(0.1675, 12);
    // ECE = 2/4·|0.5 − 0.25| + 2/4·|1 − 0.85| = 0.125 + 0.075 = 0.2
    expect(s.ece).toBeCloseTo(0.2, 12);
    // reliability = 0.5·0.25² + 0.5·0.15² = 0.03125 + 0.01125 = 0.0425
    expect(s.reliability).toBeCloseTo(0.0425, 12);
    // base rate ō = 3/4; resolution = 0.5·(0.5 − 0.75)² + 0.5·(1 − 0.75)² = 0.0625
    expect(s.base_rate).toBeCloseTo(0.75, 12);
    expect(s.resolution).toBeCloseTo(0.0625, 12);
    // uncertainty = 0.75·0.25 = 0.1875; REL − RES + UNC = 0.0425 − 0.0625 + 0.1875 = 0.1675 = Brier
    expect(s.uncertainty).toBeCloseTo(0.1875, 12);
    expect((s.reliability as number) - (s.resolution as number) + (s.uncertainty as number)).toBeCloseTo(s.brier as number, 12);
    // directional: 0.25 (o=1) wrong, 0.25 (o=0) correct, 0.85 ×2 correct → 75 %
    expect(s.accuracy_pct).toBeCloseTo(75, 12);
  });

  it('bins: p = 1 in bin 9, decimal boundaries land where written', async () => {
    const b = await one(
      conn,
      `SELECT _calibration_bin(0) AS b0, _calibration_bin(0.0999) AS b00999, _calibration_bin(0.1) AS b01,
              _calibration_bin(0.3) AS b03, _calibration_bin(0.7) AS b07, _calibration_bin(0.99) AS b099,
              _calibration_bin(1) AS b1`,
    );
    expect(b).toEqual({ b0: 0, b00999: 0, b01: 1, b03: 3, b07: 7, b099: 9, b1: 9 });
  });
});

describe('ai_vs_market', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    // (id, category, consensus p, market p, outcome)
    const cases: [string, string, number, number | null, number][] = [
      ['v1', 'finance', 0.8, 0.6, 1], // ai (0.2)² = 0.04, market (0.4)² = 0.16, diff −0.12
      ['v2', 'finance', 0.3, 0.5, 0], // ai 0.09, market 0.25, diff −0.16
      ['v3', 'crypto', 0.4, 0.7, 1], // ai 0.36, market 0.09, diff +0.27
      ['v4', 'crypto', 0.9, null, 1], // no comparator: not paired
    ];
    await insert(conn, 'questions', cases.map(([id, category]) => question(id, { category })));
    await insert(conn, 'forecasts', cases.map(([id, , p]) => forecast(id, 'm1', 'augmented', 'r1', '2025-02-01', p)));
    await insert(
      conn,
      'market_prices',
      cases.filter((c) => c[3] !== null).map(([id, , , m]) => ({ question_id: id, observed_at: '2025-01-31', probability: m })),
    );
    await insert(conn, 'resolutions', cases.map(([id, , , , o]) => resolution(id, o, '2025-03-01')));
    await derive(conn);
  });
  afterAll(() => close());

  it('skill and the paired-difference 95% interval', async () => {
    const all = await one(conn, `SELECT * FROM ai_vs_market WHERE scope = 'all'`);
    expect(all.n).toBe(3);
    expect(all.ai_brier).toBeCloseTo(0.49 / 3, 12); // (0.04 + 0.09 + 0.36) / 3
    expect(all.market_brier).toBeCloseTo(0.5 / 3, 12); // (0.16 + 0.25 + 0.09) / 3
    expect(all.skill).toBeCloseTo(0.02, 12); // 1 − 0.49 / 0.5
    // diffs −0.12, −0.16, 0.27: mean −0.01/3; deviations −0.116667, −0.156667, 0.273333;
    // squares 0.0136111 + 0.0245444 + 0.0747111 = 0.1128667; / (3 − 1) = 0.0564333; sd = 0.237557
    const mean = -0.01 / 3;
    const sd = Math.sqrt(((-0.12 - mean) ** 2 + (-0.16 - mean) ** 2 + (0.27 - mean) ** 2) / 2);
    expect(sd).toBeCloseTo(0.237557, 6);
    expect(all.diff_mean).toBeCloseTo(mean, 12);
    expect(all.diff_sd).toBeCloseTo(sd, 12);
    expect(all.diff_ci95_lo).toBeCloseTo(mean - (1.96 * sd) / Math.sqrt(3), 12); // −0.272150
    expect(all.diff_ci95_hi).toBeCloseTo(mean + (1.96 * sd) / Math.sqrt(3), 12); // 0.265483
    expect(all.ai_log_loss).toBeCloseTo((-Math.log(0.8) - Math.log(0.7) - Math.log(0.4)) / 3, 12);
    expect(all.market_log_loss).toBeCloseTo((-Math.log(0.6) - Math.log(0.5) - Math.log(0.7)) / 3, 12);
  });

  it('per category scope; interval null when n < 2', async () => {
    const r = await rows(conn, `SELECT scope, n, skill, diff_ci95_lo FROM ai_vs_market ORDER BY scope`);
    expect(r.map((x) => x.scope)).toEqual(['all', 'crypto', 'finance']);
    const crypto = r.find((x) => x.scope === 'crypto')!;
    expect(crypto).toMatchObject({ n: 1, diff_ci95_lo: null });
    expect(crypto.skill).toBeCloseTo(1 - 0.36 / 0.09, 12); // −3
    const finance = r.find((x) => x.scope === 'finance')!;
    expect(finance.skill).toBeCloseTo(1 - 0.13 / 0.41, 12); // (0.04 + 0.09) / (0.16 + 0.25)
  });

  it('no pairs: the all row is present with n = 0', async () => {
    const { conn: c2, close: close2 } = await openDb();
    try {
      await derive(c2);
      const all = await one(c2, `SELECT * FROM ai_vs_market`);
      expect(all).toMatchObject({ scope: 'all', n: 0, ai_brier: null, skill: null, diff_ci95_lo: null });
      const t = await rows(c2, 'SELECT count(*) AS n FROM calibration');
      expect(t[0]!.n).toBe(0);
    } finally {
      close2();
    }
  });
});
