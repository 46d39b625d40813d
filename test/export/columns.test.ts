/**
 * The documented columns of every export (api/export/columns.ts, published in the OpenAPI document)
 * are the columns served: each table exported over real HTTP from a snapshot the real pipeline
 * made (raw rows through the raw writer, then the pipeline's own score-and-publish: the derived
 * tables have every column sql/derive gives them, not a hand-written fixture's), as Parquet, JSON
 * and CSV. Name for name and in order; Parquet types of the documented type; every JSON row parses
 * with the table's row schema (types, nulls, no other key). A column added to or dropped from the
 * SQL fails here until it is documented.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_COLUMNS, exportColumns, PARQUET_TYPES } from '../../api/export/columns.ts';
import { startExportServer, type TestServer } from './export-server.ts';
import { EXPORT_TABLES } from '../../api/export/tables.ts';
import { fixture, forecasts, publish, question, resolution, writeRaw, type Fixture } from '../structure/helpers.ts';

const T0 = new Date('2025-03-01T00:00:00Z');
const d = (iso: string) => new Date(`${iso}T00:00:00Z`);
/** ISO 8601 UTC with milliseconds and Z, the timestamp shape of CSV/JSON/JSONL exports. */
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A warehouse whose snapshot has rows in every exported table: questions with prices, four
 * models' forecasts (two resolved questions: scores, resolved, Quorum's claims), an open question
 * (predictions, forecasts), imported probability and value claims (claims, track records), and a
 * scenario over a resolved and the open question (its archived record: scenario_records).
 */
async function writeWarehouse(dataDir: string, structureDir: string): Promise<void> {
  await mkdir(path.join(structureDir, 'scenarios'), { recursive: true });
  await writeFile(
    path.join(structureDir, 'scenarios', 's.yaml'),
    ['scenarios:', '  - id: a-then-c', '    title: A then C', '    description: Two questions in order', '    components:',
      '      - { question: "polymarket:q1" }', '      - { question: "kalshi:q3" }', ''].join('\n'),
  );
  const ids = ['polymarket:q1', 'manifold:q2', 'kalshi:q3'];
  await writeRaw(dataDir, {
    questions: [
      question(ids[0]!, 'Will A happen?'),
      question(ids[1]!, 'Will B happen?', { venue: 'manifold', category: 'science' }),
      question(ids[2]!, 'Will C happen?', { venue: 'kalshi', category: 'finance' }),
    ],
    market_prices: ids.map((id, i) => ({ question_id: id, venue: id.split(':')[0], observed_at: d('2025-02-28'), probability: 0.4 + i / 10, ingested_at: T0 })),
    forecasts: [
      ...forecasts('r1', ids[0]!, T0, [0.8, 0.6, 0.7, 0.5]),
      ...forecasts('r1', ids[1]!, T0, [0.3, 0.1, 0.2, 0.4]),
      ...forecasts('r1', ids[2]!, T0, [0.55, 0.45, 0.6, 0.5]),
    ],
    resolutions: [resolution(ids[0]!, 1, d('2025-04-01')), resolution(ids[1]!, 0, d('2025-04-02'))],
    claims: [
      { claim_id: 'p1', source_slug: 'pundit', question_id: ids[0], claimed_at: d('2025-02-01'), kind: 'probability', probability: 0.9, side: 'yes', category: 'tech', horizon_days: 59, outcome: 1, resolved_at: d('2025-04-01'), provenance_dataset: 'test', provenance_file: 'claims.csv', provenance_line: 2, ingested_at: T0 },
      { claim_id: 'v1', source_slug: 'pollster-a', subject: 'Race X', subject_key: 'race-x', claimed_at: d('2025-01-10'), kind: 'value', value: 3.5, unit: 'pts', tolerance: 1, horizon_days: 20, realized_value: 2, resolved_at: d('2025-01-30'), provenance_dataset: 'test', provenance_file: 'claims.csv', provenance_line: 3, ingested_at: T0 },
      { claim_id: 'v2', source_slug: 'pollster-b', subject: 'Race X', subject_key: 'race-x', claimed_at: d('2025-01-12'), kind: 'value', value: 1.5, unit: 'pts', horizon_days: 18, realized_value: 2, resolved_at: d('2025-01-30'), provenance_dataset: 'test', provenance_file: 'claims.csv', provenance_line: 4, ingested_at: T0 },
    ],
    sources: [
      { source_slug: 'pundit', name: 'A Pundit', kind: 'media' },
      { source_slug: 'pollster-a', name: 'Pollster A', kind: 'analyst' },
    ],
  });
}

/** Column name → DuckDB type of a Parquet file, in the file's column order. */
async function parquetColumns(bytes: Uint8Array): Promise<Array<[string, string]>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'quorum-pq-'));
  const file = path.join(dir, 'x.parquet');
  await writeFile(file, bytes);
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  try {
    const reader = await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
    return reader.getRowObjectsJson().map((r) => [String(r.column_name), String(r.column_type)]);
  } finally {
    c.closeSync();
    inst.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('every export serves exactly its documented columns (api/export/columns.ts)', () => {
  let f: Fixture;
  let server: TestServer;
  beforeAll(async () => {
    f = fixture();
    await writeWarehouse(f.dataDir, f.structureDir);
    await publish(f, d('2025-06-01'));
    server = await startExportServer(f.dataDir);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    f?.cleanup();
  });

  async function get(table: string, output: string): Promise<{ status: number; bytes: Uint8Array; text: string }> {
    const res = await fetch(`${server.url}/api/export/${table}?output=${output}`, { headers: { 'X-Test-Plan': 'enterprise' } });
    const bytes = new Uint8Array(await res.arrayBuffer());
    return { status: res.status, bytes, text: Buffer.from(bytes).toString('utf8') };
  }

  it.each(EXPORT_TABLES)('%s as Parquet: the documented columns, in order, of the documented types', async (table) => {
    const r = await get(table, 'parquet');
    expect(r.status, r.text).toBe(200);
    const served = await parquetColumns(r.bytes);
    const documented = exportColumns(table);
    expect(served.map(([name]) => name)).toEqual(documented.map((c) => c.name));
    for (const [i, [name, type]] of served.entries()) {
      expect(PARQUET_TYPES[documented[i]!.type], `${table}.${name} is ${type}, documented ${documented[i]!.type}`).toContain(type);
    }
  });

  it.each(EXPORT_TABLES)('%s as JSON: every row has the documented columns, in order, and parses with the row schema', async (table) => {
    const r = await get(table, 'json');
    expect(r.status, r.text).toBe(200);
    const rows = JSON.parse(r.text) as Record<string, unknown>[];
    expect(rows.length, `${table} has rows`).toBeGreaterThan(0);
    const documented = exportColumns(table);
    const names = documented.map((c) => c.name);
    const times = documented.filter((c) => c.type === 'timestamp').map((c) => c.name);
    const schema = EXPORT_COLUMNS[table].strict();
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(names);
      const parsed = schema.safeParse(row);
      expect(parsed.success, `${table} row ${JSON.stringify(row)}: ${parsed.error?.message}`).toBe(true);
      for (const name of times) if (row[name] !== null) expect(row[name], `${table}.${name}`).toMatch(ISO_Z);
    }
  });

  it.each(EXPORT_TABLES)('%s as CSV: the header is the documented columns, in order', async (table) => {
    const r = await get(table, 'csv');
    expect(r.status, r.text).toBe(200);
    expect(r.text.slice(0, r.text.indexOf('\n')).split(',')).toEqual(exportColumns(table).map((c) => c.name));
  });

  it.each(['predictions', 'resolved'] as const)(
    '%s: the consensus comes with its whole disagreement (DESIGN §5: sd, range and sd of log-odds)',
    async (table) => {
      // The exports carried disagreement_sd and disagreement_range only, not the sd of log-odds that
      // DESIGN §5 publishes beside every consensus (the feeds, edges and detail have it).
      const r = await get(table, 'json');
      expect(r.status, r.text).toBe(200);
      const rows = JSON.parse(r.text) as Record<string, unknown>[];
      const keys = Object.keys(rows[0]!);
      expect(keys.indexOf('disagreement_sd_logit')).toBe(keys.indexOf('disagreement_range') + 1);
      const withConsensus = rows.filter((row) => row.consensus !== null && (row.n_models as number) > 1);
      expect(withConsensus.length).toBeGreaterThan(0);
      for (const row of withConsensus) expect(row.disagreement_sd_logit, JSON.stringify(row)).toEqual(expect.any(Number));
    },
  );

  it('every column is described, and its description is more than a format note', () => {
    for (const table of EXPORT_TABLES) {
      for (const c of exportColumns(table)) {
        expect(c.description.length, `${table}.${c.name}`).toBeGreaterThan(10);
        expect(c.description, `${table}.${c.name}`).not.toBe('ISO 8601 UTC time.');
      }
    }
  });
});
