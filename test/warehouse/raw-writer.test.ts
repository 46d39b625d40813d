import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { rawTableDir } from '../../pipeline/warehouse/layout.ts';
import { tempDir } from '../helpers/temp-dir.ts';

let instance: DuckDBInstance;
let conn: DuckDBConnection;
const tmp = tempDir();
const partition = { runId: 'r20260101T000000Z-test0001', runDate: '2026-01-01' };

const price = (question_id: string, at: string, probability: number) => ({
  question_id,
  venue: 'manifold',
  observed_at: new Date(at),
  probability,
  best_bid: null,
  best_ask: null,
  volume: null,
  liquidity: null,
  origin: 'test',
  ingested_at: new Date('2026-01-01T00:00:00Z'),
});

async function count(table: string): Promise<number> {
  await createRawViews(conn, tmp.dir);
  const r = await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM raw_${table}`);
  return r.getRowObjectsJS()[0]!.n as number;
}

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
});
afterAll(() => {
  conn.closeSync();
  instance.closeSync();
  tmp.cleanup();
});

describe('appendRaw', () => {
  it('reads an empty, typed relation before anything is written', async () => {
    expect(await count('market_prices')).toBe(0);
    const r = await conn.runAndReadAll(`DESCRIBE raw_market_prices`);
    const types = Object.fromEntries(r.getRowObjectsJS().map((c) => [c.column_name, c.column_type]));
    expect(types.observed_at).toBe('TIMESTAMP');
    expect(types.probability).toBe('DOUBLE');
  });

  it('writes a Hive-partitioned Parquet part and nothing else', async () => {
    const res = await appendRaw(conn, tmp.dir, 'market_prices', [price('manifold:a', '2025-10-16T00:00:00Z', 0.4)], partition);
    expect(res.written).toBe(1);
    expect(res.file).toMatch(/raw\/market_prices\/run_date=2026-01-01\/run_id=r20260101T000000Z-test0001\/part-.*\.parquet$/);
    const dir = `${rawTableDir(tmp.dir, 'market_prices')}/run_date=2026-01-01/run_id=${partition.runId}`;
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(await count('market_prices')).toBe(1);
  });

  it('is idempotent: the same rows again write nothing; duplicates within a batch are written once', async () => {
    const again = await appendRaw(conn, tmp.dir, 'market_prices', [price('manifold:a', '2025-10-16T00:00:00Z', 0.4)], partition);
    expect(again).toMatchObject({ received: 1, written: 0, file: null });
    const mixed = await appendRaw(
      conn,
      tmp.dir,
      'market_prices',
      [
        price('manifold:a', '2025-10-16T00:00:00Z', 0.4), // stored already
        price('manifold:b', '2025-10-16T00:00:00Z', 0.7),
        price('manifold:b', '2025-10-16T00:00:00Z', 0.7), // duplicate in the batch
      ],
      partition,
    );
    expect(mixed.written).toBe(1);
    expect(await count('market_prices')).toBe(2);
  });

  it('round-trips every column type (timestamps as UTC, lists, nulls)', async () => {
    await appendRaw(
      conn,
      tmp.dir,
      'questions',
      [
        {
          question_id: 'metaculus:1554',
          venue: 'metaculus',
          venue_market_id: '1554',
          title: "Will it rain? 'quoted'",
          description: null,
          resolution_criteria: 'x',
          url: null,
          category: 'climate',
          domain: 'other',
          tags: ['weather', 'rain'],
          created_at: new Date('2025-01-02T03:04:05Z'),
          close_time: null,
          status: 'active',
          lang: 'en',
          origin: 'test',
          ingested_at: new Date('2026-01-01T00:00:00Z'),
        },
      ],
      partition,
    );
    await createRawViews(conn, tmp.dir);
    const row = (await conn.runAndReadAll(`SELECT * FROM raw_questions`)).getRowObjectsJS()[0]!;
    expect(row.title).toBe("Will it rain? 'quoted'");
    expect(row.tags).toEqual(['weather', 'rain']);
    // An empty list is still a typed VARCHAR[].
    await appendRaw(conn, tmp.dir, 'evidence', [{ evidence_id: 'e1', question_id: 'q', retrieved_at: new Date(), title: 't', url: null, published_at: null, snippet: 's', source_slug: 'x' }], partition);
    const emptyTags = { ...row, question_id: 'metaculus:1555', tags: [] };
    expect((await appendRaw(conn, tmp.dir, 'questions', [emptyTags], partition)).written).toBe(1);
    expect((row.created_at as Date).toISOString()).toBe('2025-01-02T03:04:05.000Z');
    expect(row.close_time).toBeNull();
  });

  it('rejects a row of the wrong type with the column named, and writes nothing', async () => {
    const before = await count('market_prices');
    await expect(
      appendRaw(conn, tmp.dir, 'market_prices', [{ ...price('manifold:c', '2025-10-16T00:00:00Z', 0.1), probability: '0.1' }], partition),
    ).rejects.toThrow(/column probability: expected DOUBLE/);
    expect(await count('market_prices')).toBe(before);
    expect(existsSync(tmp.dir)).toBe(true);
  });

  it('writes DOUBLE[] lists (the scenario archive) exactly, and rejects a list holding a non-number or NaN', async () => {
    const record = {
      scenario_id: 'pair', run_id: 'r1', as_of: new Date('2026-01-10T00:00:00Z'), title: 'A pair', components: 'a:1,b:2',
      probabilities: [0.1, 0.2, 0.30000000000000004, 0.4], disagreement_sd: [0, 0.05, 0, 1e-7], marginals: [0.7, 0.6000000000000001],
      n_models: 4, methods: 'chain_rule', content_hash: 'h', recorded_at: new Date('2026-01-10T00:00:00Z'),
    };
    expect((await appendRaw(conn, tmp.dir, 'scenario_archive', [record], partition)).written).toBe(1);
    await createRawViews(conn, tmp.dir);
    const row = (await conn.runAndReadAll(`SELECT * FROM raw_scenario_archive`)).getRowObjectsJS()[0]!;
    expect(row.probabilities).toEqual(record.probabilities);
    expect(row.disagreement_sd).toEqual(record.disagreement_sd);
    expect(row.marginals).toEqual(record.marginals);
    // The natural key is (scenario_id, run_id): the same record again writes nothing.
    expect((await appendRaw(conn, tmp.dir, 'scenario_archive', [record], partition)).written).toBe(0);
    for (const bad of [[0.1, '0.2'], [0.1, Number.NaN], 0.5]) {
      await expect(
        appendRaw(conn, tmp.dir, 'scenario_archive', [{ ...record, run_id: 'r2', probabilities: bad }], partition),
      ).rejects.toThrow(/column probabilities: expected DOUBLE\[\]/);
    }
    expect((await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM raw_scenario_archive`)).getRowObjectsJS()[0]!.n).toBe(1);
  });
});
