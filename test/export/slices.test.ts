/**
 * First byte fast (issue 9 point 11): a sliced export (resolved/scores as CSV, JSON, JSONL) COPYs
 * ordered slices of the snapshot table's file rows and streams each as it completes. Real DuckDB,
 * real Parquet (small row groups, small slices: many slices over a small file), real HTTP.
 *
 * - the body equals ONE DuckDB COPY of the same query (byte for byte for CSV and JSONL): slices
 *   come in file order, nothing lost or repeated, with filters and a limit that spans slices;
 * - a slice failing after the first ones were sent ends the transfer as a failure (connection cut
 *   without the terminating chunk, no X-Export-Rows trailer), never a clean end;
 * - a client aborting mid-way cancels the work and leaves no temp file.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareBound } from '../../api/db/query.ts';
import { loadSql } from '../../api/db/sql-files.ts';
import { planSlices } from '../../api/export/engine.ts';
import { ENCODERS } from '../../api/export/formats.ts';
import { JsonArrayFramer } from '../../api/export/stream.ts';
import { writeSnapshot } from '../../bench/export.ts';
import { startExportServer, type TestServer } from './export-server.ts';

const ROWS = 12_000;
const ROW_GROUP = 2_000;
const BAD_ROW = 9_000;

/** The bench's realistic resolved_predictions, rewritten with small row groups (and a bad outcome). */
async function writeData(dir: string, badRow: number | null): Promise<string> {
  const file = await writeSnapshot(dir, ROWS);
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  try {
    const bad = badRow === null ? 'outcome' : `CASE WHEN file_row_number = ${badRow} THEN 0.5 ELSE outcome END`;
    await c.run(`COPY (SELECT * EXCLUDE (file_row_number) REPLACE (${bad} AS outcome)
      FROM read_parquet('${file}', file_row_number = true) ORDER BY file_row_number)
      TO '${file}.tmp' (FORMAT parquet, ROW_GROUP_SIZE ${ROW_GROUP})`);
  } finally {
    c.closeSync();
    inst.closeSync();
  }
  await rm(file);
  await import('node:fs/promises').then((fs) => fs.rename(`${file}.tmp`, file));
  return file;
}

/** ONE DuckDB COPY of the export query over `parquet` (the reference the sliced body must equal). */
async function singleCopy(parquet: string, options: string, params: Record<string, string | number | null>, limit: number | null): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'quorum-ref-'));
  const out = path.join(dir, 'ref');
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  try {
    await c.run(`SET TimeZone = 'UTC'`);
    await c.run(`CREATE VIEW resolved_predictions AS SELECT * FROM read_parquet('${parquet}')`);
    const select = loadSql('export-resolved').trim().replace(/;\s*$/, '');
    const query = limit === null ? select : `SELECT * FROM (${select}\n) LIMIT $limit`;
    const stmt = await prepareBound(c, `COPY (${query}\n) TO '${out}' (${options})`, limit === null ? params : { ...params, limit });
    await stmt.run();
    stmt.destroySync();
    return await readFile(out);
  } finally {
    c.closeSync();
    inst.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The export test server with slices small enough to see several per download. */
function startServer(dataDir: string): Promise<TestServer> {
  return startExportServer(dataDir, { threads: 2, firstSliceRows: 500, maxSliceRows: 3_000 });
}

interface Download {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  trailers: NodeJS.Dict<string>;
  /** The response ended cleanly (terminating chunk received). */
  complete: boolean;
}

/** GET over node:http, reading the body to its end or its failure (trailers included). */
function download(port: number, p: string, plan = 'api'): Promise<Download> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, headers: { 'X-Test-Plan': plan }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let settled = false;
      const done = (complete: boolean): void => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), trailers: res.trailers, complete });
      };
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(true));
      res.on('error', () => done(false));
      res.on('aborted', () => done(false));
      res.on('close', () => done(res.complete));
    });
    req.on('error', reject);
  });
}

async function exportFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.includes('quorum-export-'));
}

describe('planSlices', () => {
  it('covers every row once, in order: a small first slice, doubling, on row-group boundaries', () => {
    const groups = Array.from({ length: 10 }, () => 1000);
    const slices = planSlices(groups, 100, 4000);
    expect(slices[0]).toEqual([0, 100]);
    for (let k = 1; k < slices.length; k++) expect(slices[k]![0]).toBe(slices[k - 1]![1]);
    expect(slices.at(-1)![1]).toBe(10_000);
    // Once a slice is as large as a row group, slices end on row-group boundaries.
    for (const [, to] of slices.slice(3)) expect(to % 1000).toBe(0);
    expect(Math.max(...slices.map(([a, b]) => b - a))).toBeLessThanOrEqual(4000);
    expect(planSlices([], 100, 4000)).toEqual([[0, 0]]);
    expect(planSlices([0], 100, 4000)).toEqual([[0, 0]]);
    expect(planSlices([50], 100, 4000)).toEqual([[0, 50]]);
    // One huge row group: cut mid-group rather than one giant slice.
    const big = planSlices([1_000_000], 1000, 8000);
    expect(big.slice(0, 4)).toEqual([[0, 1000], [1000, 3000], [3000, 7000], [7000, 15000]]);
  });
});

describe('JsonArrayFramer', () => {
  it('frames JSON lines into one array whatever the chunk and slice boundaries', () => {
    const lines = ['{"a":1,"s":"x\\ny"}', '{"a":2}', '{"a":3,"t":"2025-10-16T00:00:00.000Z"}'];
    const text = `${lines.join('\n')}\n`;
    for (const size of [1, 2, 3, 7, text.length]) {
      const f = new JsonArrayFramer();
      const out: Buffer[] = [];
      for (let i = 0; i < text.length; i += size) out.push(f.push(Buffer.from(text.slice(i, i + size))));
      out.push(f.end());
      const body = Buffer.concat(out).toString();
      expect(JSON.parse(body)).toEqual(lines.map((l) => JSON.parse(l)));
      expect(body).toBe(`[\n${lines.join(',\n')}\n]\n`);
    }
    const empty = new JsonArrayFramer();
    expect(JSON.parse(Buffer.concat([empty.push(Buffer.alloc(0)), empty.end()]).toString())).toEqual([]);
    expect(JSON.parse(new JsonArrayFramer().end().toString())).toEqual([]);
  });
});

describe('sliced export', () => {
  let srv: TestServer;
  let parquet: string;
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'quorum-slices-'));
    parquet = await writeData(path.join(root, 'good'), null);
    srv = await startServer(path.join(root, 'good'));
  });

  afterAll(async () => {
    await srv?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('CSV and JSONL equal one COPY of the same query byte for byte; JSON the same rows as one array', async () => {
    const expectedSlices = planSlices(Array.from({ length: ROWS / ROW_GROUP }, () => ROW_GROUP), 500, 3000).length;
    expect(expectedSlices).toBeGreaterThanOrEqual(5);
    const params = { resolved_since: null, category: null };
    for (const output of ['csv', 'jsonl'] as const) {
      const d = await download(srv.port, `/api/export/resolved?output=${output}`);
      expect(d.status).toBe(200);
      expect(d.complete).toBe(true);
      expect(d.headers['x-export-sliced']).toBe('true');
      expect(d.headers['content-length']).toBeUndefined();
      expect(d.trailers['x-export-rows']).toBe(String(ROWS));
      const ref = await singleCopy(parquet, ENCODERS[output].copyOptions, params, null);
      expect(d.body.length).toBe(ref.length);
      expect(d.body.equals(ref)).toBe(true);
    }
    const json = await download(srv.port, '/api/export/resolved?output=json');
    expect(json.complete).toBe(true);
    const ref = JSON.parse((await singleCopy(parquet, ENCODERS.json.copyOptions, params, null)).toString('utf8'));
    const got = JSON.parse(json.body.toString('utf8'));
    expect(got.length).toBe(ROWS);
    expect(got).toEqual(ref);
  });

  it('filters and a limit spanning slices: still one COPY of the same query', async () => {
    const params = { resolved_since: '2024-04-01 00:00:00.000000', category: 'crypto' };
    // crypto is every 9th row: 400 matching rows span several slices of 500-3,000 rows.
    const all = await singleCopy(parquet, ENCODERS.csv.copyOptions, params, null);
    expect(all.toString().split('\n').length - 2).toBeGreaterThan(400);
    const ref = await singleCopy(parquet, ENCODERS.csv.copyOptions, params, 400);
    const d = await download(srv.port, '/api/export/resolved?category=crypto&resolved_since=2024-04-01&limit=400');
    expect(d.complete).toBe(true);
    expect(d.trailers['x-export-rows']).toBe('400');
    expect(d.body.equals(ref)).toBe(true);
    // No row matches: the header alone (CSV), an empty array (JSON), nothing (JSONL).
    expect((await download(srv.port, '/api/export/resolved?resolved_since=2030-01-01')).body.toString()).toMatch(/^question_id,[^\n]*\n$/);
    expect(JSON.parse((await download(srv.port, '/api/export/resolved?resolved_since=2030-01-01&output=json')).body.toString())).toEqual([]);
    expect((await download(srv.port, '/api/export/resolved?resolved_since=2030-01-01&output=jsonl')).body.length).toBe(0);
  });

  it('a client aborting mid-way: the export is cancelled, in flight drops to 0, no temp file is left', async () => {
    const before = srv.service.stats.cancelledDuringStream + srv.service.stats.cancelledDuringCopy;
    await new Promise<void>((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port: srv.port, path: '/api/export/resolved?output=jsonl', headers: { 'X-Test-Plan': 'api' }, agent: false },
        (res) => {
          res.once('data', () => {
            res.pause();
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', () => undefined);
      setTimeout(() => reject(new Error('no first byte')), 20_000);
    });
    await srv.service.drain();
    expect(srv.service.stats.cancelledDuringStream + srv.service.stats.cancelledDuringCopy).toBe(before + 1);
    expect(srv.service.inFlightExports()).toBe(0);
    expect(await exportFiles(srv.tempDir)).toEqual([]);
  });

  it('every started export ends with one outcome: a JSON client gone after its rows, before the closing bracket, is counted cancelled (QA soak: started ran ahead of the outcomes by 73 in 2,500)', async () => {
    // One small slice: its rows are handed to the socket before the client's close is seen, and
    // what is left to write is the array's closing bracket, written after the engine has finished.
    const outcomes = (): number => {
      const s = srv.service.stats;
      return s.completed + s.failed + s.cancelledDuringCopy + s.cancelledDuringStream;
    };
    const started = srv.service.stats.started;
    const before = outcomes();
    for (let i = 0; i < 25; i++) {
      await new Promise<void>((resolve) => {
        const req = http.get(
          { host: '127.0.0.1', port: srv.port, path: '/api/export/resolved?output=json&limit=20', headers: { 'X-Test-Plan': 'api' }, agent: false },
          (res) => {
            res.once('data', () => {
              req.destroy();
              resolve();
            });
            res.once('end', resolve);
          },
        );
        req.on('error', () => resolve());
      });
      await srv.service.drain();
    }
    expect(srv.service.stats.started - started).toBe(25);
    expect(outcomes() - before).toBe(25);
    expect(srv.service.inFlightExports()).toBe(0);
  });
});

/** A raw HTTP/1.0 GET (no chunked encoding possible): status line, headers and body up to the close. */
function http10(port: number, p: string): Promise<{ head: string; headers: Record<string, string>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = net.connect(port, '127.0.0.1', () => s.write(`GET ${p} HTTP/1.0\r\nHost: x\r\nX-Test-Plan: api\r\n\r\n`));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, end).toString('latin1');
      const headers = Object.fromEntries(head.split('\r\n').slice(1).map((l) => {
        const i = l.indexOf(':');
        return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
      }));
      resolve({ head, headers, body: all.subarray(end + 4) });
    });
  });
}

describe('a client that cannot take a chunked body (HTTP/1.0)', () => {
  let srv: TestServer;
  let parquet: string;
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'quorum-slices-10-'));
    parquet = await writeData(path.join(root, 'good'), null);
    srv = await startServer(path.join(root, 'good'));
  });

  afterAll(async () => {
    await srv?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('gets the whole file with Content-Length and X-Export-Rows, and the server keeps serving (QA: the Trailer header threw, and the 500 problem after it crashed the process)', async () => {
    const params = { resolved_since: null, category: null };
    for (const output of ['csv', 'jsonl', 'json'] as const) {
      const r = await http10(srv.port, `/api/export/resolved?output=${output}`);
      expect(r.head).toMatch(/^HTTP\/1\.1 200/);
      expect(r.headers['x-export-sliced']).toBeUndefined();
      expect(r.headers['trailer']).toBeUndefined();
      expect(r.headers['x-export-rows']).toBe(String(ROWS));
      expect(Number(r.headers['content-length'])).toBe(r.body.length);
      const ref = await singleCopy(parquet, ENCODERS[output].copyOptions, params, null);
      if (output === 'json') expect(JSON.parse(r.body.toString('utf8'))).toEqual(JSON.parse(ref.toString('utf8')));
      else expect(r.body.equals(ref), output).toBe(true);
    }
    // HTTP/1.1 is still sliced.
    const d = await download(srv.port, '/api/export/resolved?output=csv&limit=10');
    expect(d.headers['x-export-sliced']).toBe('true');
    expect(d.trailers['x-export-rows']).toBe('10');
    await srv.service.drain();
    expect(srv.service.inFlightExports()).toBe(0);
    expect(await exportFiles(srv.tempDir)).toEqual([]);
  });
});

describe('a slice failing mid-way', () => {
  it('is a failed transfer (no terminating chunk, no trailer), never a clean end; no temp file is left', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'quorum-slices-bad-'));
    await writeData(path.join(root, 'bad'), BAD_ROW);
    const s = await startServer(path.join(root, 'bad'));
    try {
      for (const output of ['csv', 'json', 'jsonl']) {
        const d = await download(s.port, `/api/export/resolved?output=${output}`);
        expect(d.status, output).toBe(200);
        expect(d.body.length).toBeGreaterThan(0); // earlier slices went out
        expect(d.complete, output).toBe(false);
        expect(d.trailers['x-export-rows']).toBeUndefined();
        // Nothing of the failing slice was sent: the rows received stop before the bad one.
        if (output === 'jsonl') expect(d.body.toString().split('\n').filter((l) => l !== '').length).toBeLessThanOrEqual(BAD_ROW);
      }
      // The same data with a limit before the bad row completes.
      const ok = await download(s.port, `/api/export/resolved?limit=${BAD_ROW}`);
      expect(ok.complete).toBe(true);
      expect(ok.trailers['x-export-rows']).toBe(String(BAD_ROW));
      await s.service.drain();
      expect(s.service.stats.failed).toBe(3);
      expect(await exportFiles(s.tempDir)).toEqual([]);
    } finally {
      await s.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('track_records: updated_since looks up the claims and keeps the rank order', () => {
  const SOURCES = 60_000;
  let root: string;
  let srv: TestServer;
  let expected: string[];

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'quorum-slices-tr-'));
    const dir = path.join(root, 'snapshots', 'tr');
    await mkdir(dir, { recursive: true });
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    try {
      // In rank order, the unranked after by slug (as sql/derive/91 writes it), in small row groups;
      // every 3rd source's latest claim is recent, every 7th one's claims resolved recently.
      await c.run(`COPY (
        SELECT 's-' || lpad(i::VARCHAR, 6, '0') AS source_slug, CASE WHEN i < 15000 THEN i + 1 END AS rank,
               ['politics'] AS categories,
               TIMESTAMP '2025-01-01' + to_days(CASE WHEN i % 3 = 0 THEN 200 ELSE 0 END) AS last_claim_at
        FROM range(${SOURCES}) r(i) ORDER BY rank NULLS LAST, source_slug
      ) TO '${path.join(dir, 'track_records.parquet')}' (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
      await c.run(`COPY (
        SELECT 's-' || lpad(i::VARCHAR, 6, '0') AS source_slug,
               TIMESTAMP '2025-01-01' + to_days(CASE WHEN i % 7 = 0 THEN 300 ELSE 10 END) AS resolved_at
        FROM range(${SOURCES}) r(i) ORDER BY hash(i)
      ) TO '${path.join(dir, 'claims.parquet')}' (FORMAT parquet)`);
    } finally {
      c.closeSync();
      inst.closeSync();
    }
    await writeFile(path.join(dir, 'manifest.json'), JSON.stringify({
      run_id: 'tr', as_of: '2026-01-01T00:00:00.000Z', created_at: '2026-01-01T00:05:00.000Z',
      tables: ['track_records', 'claims'], headline_modes: ['augmented'],
    }));
    await writeFile(path.join(root, 'CURRENT'), 'tr\n');
    expected = Array.from({ length: SOURCES }, (_, i) => i)
      .filter((i) => i % 3 === 0 || i % 7 === 0)
      .map((i) => `s-${String(i).padStart(6, '0')}`);
    srv = await startExportServer(root, { threads: 4, firstSliceRows: 500, maxSliceRows: 3_000 });
  });

  afterAll(async () => {
    await srv?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('Parquet (one multi-threaded COPY) and sliced JSONL hold the sources in rank order (QA: the lookup shuffled them)', async () => {
    const pq = await download(srv.port, '/api/export/track_records?output=parquet&updated_since=2025-06-01');
    expect(pq.status, pq.body.toString().slice(0, 300)).toBe(200);
    const file = path.join(root, 'got.parquet');
    await writeFile(file, pq.body);
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    try {
      const rows = (await c.runAndReadAll(`SELECT source_slug FROM read_parquet('${file}')`)).getRows().map((r) => String(r[0]));
      expect(rows.length).toBe(expected.length);
      expect(rows).toEqual(expected);
    } finally {
      c.closeSync();
      inst.closeSync();
    }
    const jsonl = await download(srv.port, '/api/export/track_records?output=jsonl&updated_since=2025-06-01');
    expect(jsonl.complete).toBe(true);
    expect(jsonl.body.toString().trim().split('\n').map((l) => (JSON.parse(l) as { source_slug: string }).source_slug)).toEqual(expected);
  });
});
