/**
 * `resolution_sources` (56_resolution_sources.sql): hand-built resolution records, amended and
 * changed resolutions, annulments and the lag from close to resolution, computed by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, insert, openDb, question, resolution, rows } from './fixture.ts';

describe('resolution sources', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [
      question('A', { close_time: '2025-02-28' }),
      question('B', { close_time: '2025-03-01' }),
      question('C', { close_time: null }),
      question('D', { close_time: '2025-03-01' }),
      question('E', { close_time: '2025-03-01' }),
    ]);
    await insert(conn, 'resolutions', [
      // A (fred): first recorded YES on 03-01, amended to NO on 03-05 → amended and changed; lag 5 days
      resolution('A', 1, '2025-03-01', { retrieved_at: '2025-03-02' }),
      resolution('A', 0, '2025-03-05', { retrieved_at: '2025-03-10' }),
      // B (fred): one record, lag 2 days
      resolution('B', 1, '2025-03-03', { retrieved_at: '2025-03-03' }),
      // C (fred): annulled, no close time
      resolution('C', null, '2025-03-03', { retrieved_at: '2025-03-03', annulled_reason: 'voided' }),
      // D (bls): the date was corrected, the outcome kept → amended, not changed; lag 3 days
      resolution('D', 1, '2025-03-02', { retrieved_at: '2025-03-02', source_slug: 'bls' }),
      resolution('D', 1, '2025-03-04', { retrieved_at: '2025-03-05', source_slug: 'bls' }),
      // E (bls): resolves after as_of → not counted
      resolution('E', 1, '2025-07-01', { source_slug: 'bls' }),
    ]);
    await insert(conn, 'sources', [
      { source_slug: 'fred', name: 'FRED', kind: 'government', url: 'https://fred' },
      { source_slug: 'bls', name: 'BLS', kind: 'government', url: 'https://bls' },
    ]);
    await derive(conn);
  });
  afterAll(() => close());

  it('counts resolutions, annulments, amendments and changes; median lag from close', async () => {
    const r = await rows(conn, 'SELECT * FROM resolution_sources ORDER BY source_slug');
    expect(r).toHaveLength(2);
    const [bls, fred] = r;
    expect(fred).toMatchObject({
      source_slug: 'fred', name: 'FRED', kind: 'government', resolutions: 3, annulled: 1, amended: 1, changed: 1, n_lag: 2,
    });
    expect(fred!.share_changed).toBeCloseTo(1 / 3, 12);
    expect(fred!.median_lag_days).toBeCloseTo(3.5, 12); // median of 5 and 2
    expect(bls).toMatchObject({ resolutions: 1, annulled: 0, amended: 1, changed: 0, share_changed: 0, median_lag_days: 3 });
  });
});
