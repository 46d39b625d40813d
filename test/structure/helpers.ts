/**
 * Helpers of the structure tests (issue 12): a warehouse in a temp dir written through the real raw
 * writer, curated definitions in a temp structure dir, and the pipeline's own score-and-publish.
 */
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { scoreAndPublish } from '../../pipeline/run.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { newRunId } from '../../pipeline/warehouse/layout.ts';
import type { RawTableName } from '../../pipeline/warehouse/tables.ts';
import { toPlain } from '../../pipeline/warehouse/values.ts';
import { fixture, type Fixture } from './raw-fixture.ts';

export { fixture, question, resolution, writeRaw, type Fixture } from './raw-fixture.ts';

/** Log-odds and back: the hand computations of the thesis and factor levels. */
export const logit = (p: number) => Math.log(p / (1 - p));
export const invLogit = (x: number) => 1 / (1 + Math.exp(-x));

/** The bundled ForecastBench sample. */
export const SAMPLE = new URL('../../data/sample/forecastbench/', import.meta.url).pathname;

/** A fixture whose warehouse holds the bundled sample, imported as `quorum import` does (on 2026-03-10). */
export async function sampleFixture(opts: { memory?: boolean } = {}): Promise<Fixture> {
  const f = fixture({}, opts);
  const config = loadConfig({ QUORUM_DATA_DIR: f.dataDir, QUORUM_VENUES: 'none', LOG_LEVEL: 'silent' });
  await importForecastBench(config, SAMPLE, new Date('2026-03-10T00:00:00Z'));
  return f;
}

/** Four models' forecasts of one question in one run (augmented mode). */
export function forecasts(runId: string, questionId: string, at: Date, probabilities: number[]) {
  return probabilities.map((p, i) => ({
    run_id: runId,
    question_id: questionId,
    model: `m${i + 1}`,
    mode: 'augmented',
    created_at: at,
    probability: p,
    lang: 'en',
    provider: 'simulated',
    translation_of: null,
  }));
}

/** Scores and publishes as of `asOf` with the structure dir and settings given (the pipeline's path). */
export async function publish(f: Fixture, asOf: Date, env: Record<string, string> = {}): Promise<string> {
  const saved = { ...process.env };
  Object.assign(process.env, { QUORUM_STRUCTURE_DIR: f.structureDir, ...env });
  try {
    const config = loadConfig({ QUORUM_DATA_DIR: f.dataDir, QUORUM_VENUES: 'none', LOG_LEVEL: 'silent' });
    const runId = newRunId(asOf);
    await withConnection((conn) => scoreAndPublish(conn, config, asOf, runId));
    return runId;
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

/** Rows of a SQL query over a published snapshot's Parquet files (`{table}` → its file). */
export async function snapshotRows(dataDir: string, runId: string, sql: string): Promise<Record<string, any>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const text = sql.replace(/\{(\w+)\}/g, (_, t: string) => `read_parquet('${join(dataDir, 'snapshots', runId, `${t}.parquet`)}')`);
    const reader = await conn.runAndReadAll(text);
    return reader.getRowObjectsJS().map((r) => toPlain(r) as Record<string, any>);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** Rows of the raw table `table` (every committed part). */
export async function rawRows(dataDir: string, table: RawTableName, where = 'true'): Promise<Record<string, any>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(
      `SELECT * FROM read_parquet('${join(dataDir, 'raw', table)}/**/*.parquet', hive_partitioning = false) WHERE ${where}`,
    );
    return reader.getRowObjectsJS().map((r) => toPlain(r) as Record<string, any>);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}
