/** Translations of a model's reasoning repeat its answer: they never count as another model. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, one, openDb, question, resolution, ts } from './fixture.ts';

describe('translations', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [question('q1')]);
    await insert(conn, 'forecasts', [
      forecast('q1', 'a', 'blind', 'r1', '2025-05-01', 0.2, { lang: 'en' }),
      forecast('q1', 'a', 'blind', 'r1', '2025-05-01', 0.2, { lang: 'fr', translation_of: 'en' }),
      forecast('q1', 'b', 'blind', 'r1', '2025-05-01', 0.6, { lang: 'en' }),
      forecast('q1', 'b', 'blind', 'r1', '2025-05-01', 0.6, { lang: 'fr', translation_of: 'en' }),
    ]);
    await insert(conn, 'resolutions', [resolution('q1', 1, '2025-05-20')]);
    await derive(conn, ts('2025-06-01'));
  });
  afterAll(() => close());

  it('consensus counts each model once: n_models 2, mean (0.2 + 0.6) / 2 = 0.4', async () => {
    const c = await one(conn, `SELECT n_models, mean FROM consensus`);
    expect(c.n_models).toBe(2);
    expect(c.mean).toBeCloseTo(0.4, 12);
  });

  it('scores one forecast per model: Brier (0.2 − 1)² = 0.64 and (0.6 − 1)² = 0.16', async () => {
    const s = await one(conn, `SELECT count(*) AS n, sum(brier) AS total FROM scored_forecasts`);
    expect(s.n).toBe(2);
    expect(s.total).toBeCloseTo(0.8, 12);
  });
});
