/**
 * derive.ts API: run_params binding, published-table list, file-named errors, Parquet export,
 * createRawTables; and provider-independence of the scores.
 */
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DeriveError, deriveTables, exportTables } from '../../pipeline/warehouse/derive.ts';
import { RAW_TABLES } from '../../pipeline/warehouse/tables.ts';
import { derive, forecast, insert, one, openDb, question, resolution, rows, ts } from './fixture.ts';

describe('derive.ts', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  let tmp: string;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    tmp = mkdtempSync(join(tmpdir(), "quorum-derive-'test-"));
  });
  afterAll(() => {
    close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('createRawTables creates every raw table with its columns and types', async () => {
    for (const [table, def] of Object.entries(RAW_TABLES)) {
      const cols = await rows(
        conn,
        `SELECT column_name AS name, data_type AS type FROM duckdb_columns()
         WHERE table_name = 'raw_${table}' ORDER BY column_index`,
      );
      expect(cols).toEqual(Object.entries(def.columns).map(([name, type]) => ({ name, type })));
    }
  });

  it('binds run_params (as_of, headline_modes)', async () => {
    await deriveTables(conn, { asOf: ts('2025-06-01T12:34:56'), headlineModes: ['informed', 'blind'] });
    const p = await one(conn, `SELECT as_of::VARCHAR AS as_of, headline_modes FROM run_params`);
    expect(p).toEqual({ as_of: '2025-06-01 12:34:56', headline_modes: ['informed', 'blind'] });
    await deriveTables(conn, { asOf: ts('2025-06-01') });
    const d = await one(conn, `SELECT headline_modes FROM run_params`);
    expect(d.headline_modes).toEqual(['augmented', 'informed', 'blind']);
  });

  it('names the SQL file that failed', async () => {
    const dir = join(tmp, 'sql');
    rmSync(dir, { recursive: true, force: true });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir);
    writeFileSync(join(dir, '10_ok.sql'), 'CREATE OR REPLACE TABLE ok_table AS SELECT 1 AS x;\nCREATE OR REPLACE TABLE _hidden AS SELECT 2 AS y;');
    writeFileSync(join(dir, '20_bad.sql'), '-- a comment\nCREATE OR REPLACE TABLE t2 AS SELECT 1;\nSELECT * FROM no_such_table;');
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    const err = await deriveTables(conn, { asOf: ts('2025-06-01'), sqlDir: dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeriveError);
    expect((err as DeriveError).message).toMatch(/20_bad\.sql \(statement 2, line 3\)/);
    expect((err as DeriveError).message).toMatch(/no_such_table/);
    rmSync(join(dir, '20_bad.sql'));
    expect(await deriveTables(conn, { asOf: ts('2025-06-01'), sqlDir: dir })).toEqual(['ok_table']);
  });

  it('exports published tables as Parquet (paths with quotes) and rejects bad names', async () => {
    await insert(conn, 'questions', [question('Q1')]);
    await insert(conn, 'forecasts', [forecast('Q1', 'm1', 'blind', 'r1', '2025-02-01', 0.7)]);
    await insert(conn, 'resolutions', [resolution('Q1', 1, '2025-03-01')]);
    const tables = await derive(conn);
    const out = join(tmp, "snap'1");
    const { mkdirSync } = await import('node:fs');
    mkdirSync(out);
    await exportTables(conn, tables, out);
    for (const t of tables) expect(existsSync(join(out, `${t}.parquet`))).toBe(true);
    const path = join(out, 'scored_forecasts.parquet').replaceAll("'", "''");
    const r = await one(conn, `SELECT question_id, brier FROM read_parquet('${path}')`);
    expect(r.question_id).toBe('Q1');
    expect(r.brier).toBeCloseTo(0.09, 12); // (0.7 − 1)²
    await expect(exportTables(conn, ['scores; DROP TABLE questions'], out)).rejects.toThrow(/invalid table name/);
    await expect(exportTables(conn, ['_hidden'], out)).rejects.toThrow(/invalid table name/);
  });

  it('scores do not depend on the provider (carried, never filtered)', async () => {
    const scores = async (provider: string | null) => {
      for (const t of ['questions', 'forecasts', 'resolutions']) await conn.run(`DELETE FROM raw_${t}`);
      await insert(conn, 'questions', [question('P')]);
      await insert(conn, 'forecasts', [
        forecast('P', 'm1', 'blind', 'r1', '2025-02-01', 0.7, { provider }),
        forecast('P', 'm2', 'blind', 'r1', '2025-02-01', 0.4, { provider }),
      ]);
      await insert(conn, 'resolutions', [resolution('P', 1, '2025-03-01')]);
      await derive(conn);
      return rows(conn, `SELECT mode, probability, brier, log_loss, providers FROM scored_consensus`);
    };
    const a = await scores('simulated');
    const b = await scores('openai');
    const c = await scores(null);
    expect(a.map(({ providers, ...x }) => x)).toEqual(b.map(({ providers, ...x }) => x));
    expect(a.map(({ providers, ...x }) => x)).toEqual(c.map(({ providers, ...x }) => x));
    expect([a[0]!.providers, b[0]!.providers, c[0]!.providers]).toEqual(['simulated', 'openai', null]);
  });
});
