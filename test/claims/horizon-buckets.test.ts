/**
 * Horizon buckets of claims (sql/derive/90_claims.sql, sql/README.md `claims`): the day buckets up
 * to 365 days (`0-7` … `91-365`, upper bounds inclusive on the fractional days), then whole years
 * rounded up, `2y`, `3y`, …: a horizon just past 365 days is in the first year bucket after
 * `91-365`, never in a `1y` bucket the contract does not have. Raw claims inserted by hand into a
 * real DuckDB and derived by the pipeline's own SQL; the expected buckets are worked out below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, insert, openDb, rows } from '../scoring/fixture.ts';

// [claim id, horizon_days, expected bucket]
const CASES: [string, number, string][] = [
  ['h365', 365, '91-365'], // the last day of the day buckets (inclusive)
  ['h365p1', 365.1, '2y'], // just past 365 days: the first year bucket (365.1 / 365.25 rounds up to 1)
  ['h365p25', 365.25, '2y'], // exactly one Julian year: still past 365 days
  ['h730', 730, '2y'],
  ['h730p5', 730.5, '2y'], // two Julian years
  ['h731', 731, '3y'],
];

describe('claims: horizon buckets past 365 days', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(
      conn,
      'claims',
      CASES.map(([id, h]) => ({
        claim_id: id, source_slug: 'gamma-institute', claimed_at: '2022-01-01', subject: `V ${id}`, category: 'economics',
        kind: 'value', value: 110, unit: 'usd_bn', tolerance: 5, horizon_days: h, realized_value: 100, resolved_at: '2024-01-01',
        ingested_at: '2025-01-01',
      })),
    );
    await insert(conn, 'sources', [{ source_slug: 'gamma-institute', name: 'Gamma Institute', kind: 'analyst' }]);
    await derive(conn);
  });
  afterAll(() => close());

  it('a horizon over 365 days is 2y, 3y, … (no 1y bucket)', async () => {
    const got = await rows(conn, 'SELECT claim_id, horizon_bucket FROM claims ORDER BY horizon_days');
    expect(got.map((r) => [r.claim_id, r.horizon_bucket])).toEqual(CASES.map(([id, , b]) => [id, b]));
  });

  it('track_record_horizons has one row per contract bucket', async () => {
    const got = await rows(conn, 'SELECT horizon_bucket, n_value FROM track_record_horizons ORDER BY min_horizon_days');
    // 91-365: h365; 2y: h365p1, h365p25, h730, h730p5; 3y: h731
    expect(got).toEqual([
      { horizon_bucket: '91-365', n_value: 1 },
      { horizon_bucket: '2y', n_value: 4 },
      { horizon_bucket: '3y', n_value: 1 },
    ]);
  });
});
