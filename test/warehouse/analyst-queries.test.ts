/**
 * The README's DuckDB examples ("The warehouse, for analysts"), run as an analyst runs them: read
 * from README.md, `data/warehouse` replaced by a temp warehouse, against raw parts of two shapes.
 *
 * Raw tables gain columns across versions within one data format (forecasts' `condition`, issue
 * 13; sources' `description`/`attribution`, issue 11), so a warehouse a newer version wrote into
 * holds parts without them. DuckDB's `read_parquet` over several files takes the first file's
 * columns unless `union_by_name = true`: the older part sorts first (its run_date is earlier),
 * `condition` silently vanished from the README's raw forecasts query, and a scenario's
 * conditional forecast read as one more forecast of its question (QA: the pipeline's own raw
 * views use union_by_name; the documented query did not).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../pipeline/config.ts';
import { silentLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { runDate } from '../../pipeline/warehouse/layout.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { publishSnapshot, readCurrent, readManifest } from '../../pipeline/warehouse/snapshot.ts';
import { RAW_TABLES } from '../../pipeline/warehouse/tables.ts';
import { toPlain } from '../../pipeline/warehouse/values.ts';
import { fixture, forecasts, publish, question, writeRaw, type Fixture } from '../structure/helpers.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The statements of the ```sql blocks of the README's analysts' section. */
function analystStatements(): string[] {
  const start = README.indexOf('## The warehouse, for analysts');
  const end = README.indexOf('\n## ', start + 1);
  const section = README.slice(start, end);
  const blocks = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .join('\n')
    .split(';')
    .map((s) => s.replace(/--[^\n]*/g, '').trim())
    .filter(Boolean);
}

const OLD_AT = new Date('2025-12-01T00:00:00Z');
const NEW_AT = new Date('2026-01-10T00:00:00Z');

describe("the README's analyst queries", () => {
  let f: Fixture;
  let current: string;
  beforeAll(async () => {
    f = fixture();
    await writeRaw(f.dataDir, { questions: [question('manifold:a1', 'first unrelated heron')] });
    // A part of an older version: raw forecasts before the `condition` column (issue 13).
    const oldDir = join(f.dataDir, 'raw', 'forecasts', 'run_date=2025-12-01', 'run_id=r20251201T000000Z-oldshape');
    mkdirSync(oldDir, { recursive: true });
    const oldColumns = Object.entries(RAW_TABLES.forecasts.columns).filter(([c]) => c !== 'condition');
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    const select = oldColumns
      .map(([c, t]) =>
        c === 'run_id' ? `'r20251201T000000Z-oldshape'::${t} AS ${c}`
        : c === 'question_id' ? `'manifold:a1'::${t} AS ${c}`
        : c === 'model' ? `'m' || i AS ${c}`
        : c === 'mode' ? `'augmented' AS ${c}`
        : c === 'created_at' ? `TIMESTAMP '2025-12-01 00:00:00' AS ${c}`
        : c === 'probability' ? `0.1 * i AS ${c}`
        : c === 'lang' ? `'en' AS ${c}`
        : `NULL::${t} AS ${c}`,
      )
      .join(', ');
    await conn.run(`COPY (SELECT ${select} FROM range(1, 5) AS r(i)) TO '${join(oldDir, 'part-1-00000000.parquet')}' (FORMAT parquet)`);
    conn.closeSync();
    db.closeSync();
    // This version's part: four forecasts and a scenario's conditional forecast of the same question.
    const runId = 'r20260110T000000Z-newshape';
    const rows = [...forecasts(runId, 'manifold:a1', NEW_AT, [0.6, 0.7, 0.5, 0.4]), { ...forecasts(runId, 'manifold:a1', NEW_AT, [0.95])[0], condition: 'some-scenario:2:1' }];
    await withConnection((c) => appendRaw(c, f.dataDir, 'forecasts', rows, { runId, runDate: runDate(NEW_AT) }));
    await publish(f, new Date('2026-01-15T00:00:00Z'));
    current = readCurrent(f.dataDir)!;
  });
  afterAll(() => f.cleanup());

  async function run(sql: string): Promise<{ columns: string[]; rows: Record<string, any>[] }> {
    const text = sql.replaceAll('data/warehouse/', `${f.dataDir}/`).replaceAll('<id from CURRENT>', current);
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      const reader = await conn.runAndReadAll(text);
      return { columns: reader.columnNames(), rows: reader.getRowObjectsJS().map((r) => toPlain(r) as Record<string, any>) };
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  }

  it('every example runs', async () => {
    const statements = analystStatements();
    expect(statements.length).toBeGreaterThanOrEqual(2);
    for (const sql of statements) await expect(run(sql), sql).resolves.toBeDefined();
  });

  it("the raw forecasts query keeps the columns newer parts added and reads the models' own forecasts of every part", async () => {
    const sql = analystStatements().find((s) => s.includes('raw/forecasts'))!;
    const { columns, rows } = await run(sql);
    for (const c of Object.keys(RAW_TABLES.forecasts.columns)) expect(columns, c).toContain(c);
    expect(columns).toContain('run_date');
    // the conditional forecast is told apart (and the README's query of the models' own forecasts leaves it out)
    expect(rows.some((r) => r.condition === null && r.probability === 0.95)).toBe(false);
    expect(rows.filter((r) => r.run_id === 'r20251201T000000Z-oldshape')).toHaveLength(4);
    expect(rows.filter((r) => r.run_id === 'r20260110T000000Z-newshape' && r.condition === null)).toHaveLength(4);
  });

  it('Hive partition columns and timestamps read as the README says', async () => {
    const types = async (sql: string) =>
      Object.fromEntries((await run(`DESCRIBE ${sql}`)).rows.map((r) => [r.column_name as string, r.column_type as string]));
    // a table with run_id in its files: one run_id column (the path's value, equal to the file's), run_date a DATE
    const f1 = await types(`SELECT * FROM read_parquet('data/warehouse/raw/forecasts/**/*.parquet', union_by_name = true)`);
    expect(f1).toMatchObject({ run_id: 'VARCHAR', run_date: 'DATE', created_at: 'TIMESTAMP' });
    const viaPath = await run(`SELECT run_id, count(*) AS n FROM read_parquet('data/warehouse/raw/forecasts/**/*.parquet', union_by_name = true) GROUP BY ALL ORDER BY 1`);
    const inFiles = await run(`SELECT run_id, count(*) AS n FROM read_parquet('data/warehouse/raw/forecasts/**/*.parquet', union_by_name = true, hive_partitioning = false) GROUP BY ALL ORDER BY 1`);
    expect(viaPath.rows).toEqual(inFiles.rows);
    // a table without: both partition columns added from the path
    expect(await types(`SELECT * FROM read_parquet('data/warehouse/raw/questions/**/*.parquet', union_by_name = true)`)).toMatchObject({
      run_id: 'VARCHAR',
      run_date: 'DATE',
    });
    // timestamps: naive TIMESTAMP in Parquet (not UTC-adjusted); AT TIME ZONE 'UTC' is the instant in any session
    const file = `data/warehouse/snapshots/<id from CURRENT>/questions.parquet`;
    const schema = await run(`SELECT logical_type FROM parquet_schema('${file}') WHERE name = 'created_at'`);
    expect(String(schema.rows[0]!.logical_type)).toContain('isAdjustedToUTC=0');
    expect(README.includes("AT TIME ZONE 'UTC'"), 'README: how to read the naive UTC timestamps').toBe(true);
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      await conn.run(`SET TimeZone = 'America/New_York'`);
      const path = file.replaceAll('data/warehouse/', `${f.dataDir}/`).replaceAll('<id from CURRENT>', current);
      const r = (await conn.runAndReadAll(
        `SELECT epoch(created_at AT TIME ZONE 'UTC') AS utc, epoch(created_at::TIMESTAMPTZ) AS local FROM read_parquet('${path}')`,
      )).getRowObjectsJS()[0]!;
      expect(Number(r.utc)).toBe(Date.parse('2025-01-01T00:00:00Z') / 1000);
      expect(Number(r.local) - Number(r.utc)).toBe(5 * 3600);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });

  it('a snapshot being built is a directory of snapshots/ beside the published ones, and the README says how to tell it', async () => {
    let building = '';
    let seen: string[] = [];
    // a build stopped half-way (it throws): nothing is published, CURRENT stays
    const publishing = publishSnapshot(f.dataDir, 'r20260116T000000Z-building', { asOf: new Date('2026-01-16T00:00:00Z'), headlineModes: ['augmented'] }, async (dir) => {
      building = dir;
      await run(`COPY (SELECT 1 AS half_written) TO '${dir}/accuracy.parquet' (FORMAT parquet)`);
      seen = (await run(`SELECT file FROM glob('data/warehouse/snapshots/*/accuracy.parquet')`)).rows.map((r) => String(r.file));
      throw new Error('stopped');
    });
    await expect(publishing).rejects.toThrow('stopped');
    expect(building.slice(f.dataDir.length)).toMatch(/^\/snapshots\/r20260116T000000Z-building\.tmp-\d+$/);
    expect(seen).toContain(`${building}/accuracy.parquet`);
    expect(readCurrent(f.dataDir)).toBe(current);
    expect(README.includes('snapshots/<run_id>.tmp-<pid>/'), 'README: the snapshot being built').toBe(true);
  });

  it('the snapshot query reads the published accuracy table', async () => {
    const sql = analystStatements().find((s) => s.includes('snapshots/'))!;
    const { columns } = await run(sql);
    expect(columns).toEqual(expect.arrayContaining(['scope', 'forecaster', 'mode', 'dimension', 'key', 'brier']));
  });
});

describe('run_date partitions of a run dated before the current snapshot', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = fixture();
    await writeRaw(f.dataDir, {
      questions: [question('manifold:b1', 'first unrelated marten')],
      forecasts: forecasts('r20260105T000000Z-partdate', 'manifold:b1', new Date('2026-01-05T00:00:00Z'), [0.6, 0.7, 0.5, 0.4]),
    });
  });
  afterAll(() => f.cleanup());

  it("the run's parts are dated at its as-of time; its events at its snapshot's as_of (the README says which)", async () => {
    const config = loadConfig({ QUORUM_DATA_DIR: f.dataDir, QUORUM_VENUES: 'none', LOG_LEVEL: 'silent' });
    const logger = silentLogger();
    await runPipeline({ config, logger, scoreOnly: true, asOf: new Date('2026-02-01T00:00:00Z') });
    const behind = await runPipeline({ config, logger, scoreOnly: true, asOf: new Date('2026-01-20T00:00:00Z') });
    const manifest = readManifest(f.dataDir, behind.run_id);
    expect(manifest.as_of).toBe('2026-02-01T00:00:00.000Z');
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      const parts = (await conn.runAndReadAll(`SELECT file FROM glob('${f.dataDir}/raw/*/*/run_id=${behind.run_id}/*.parquet')`))
        .getRows()
        .map((r) => String(r[0]).slice(f.dataDir.length + 5).split('/').slice(0, 2).join('/'));
      expect(parts).toContain('runs/run_date=2026-01-20');
      expect(parts).toContain('events/run_date=2026-02-01');
    } finally {
      conn.closeSync();
      db.closeSync();
    }
    expect(README.includes("for `events`, of the `as_of` of the snapshot"), 'README: the events partition date').toBe(true);
  });
});
