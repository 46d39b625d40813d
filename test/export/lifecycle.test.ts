/**
 * Export lifecycle over real HTTP with a large real-Parquet snapshot: client disconnects during
 * COPY and during streaming, the concurrency cap and each key's share of it, a client that stops
 * reading (the send-progress timeout), a COPY that fails midway, in-flight tracking and the stale
 * temp-file sweep. Auth comes from an `X-Test-Plan` header (see export.test.ts) and the key id
 * from `X-Test-Key` (default `key-<plan>`).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_EXPORT_IDLE_TIMEOUT_MS,
  idleTimeoutFromEnv,
  inFlightExports,
} from '../../api/export/routes.ts';
import { newExportFile, sweepStaleExports } from '../../api/export/temp-files.ts';
import { fixtureData, publish, tempDataDir, writeSnapshot } from '../api/fixtures.ts';
import { startExportServer, type TestServer } from './export-server.ts';

const SNAP = 'r20250402T000000Z-big1';
const BIG_ROWS = 400_000;

/** Replaces resolved_predictions.parquet with `rows` (default BIG_ROWS) generated rows (same columns). */
async function writeBigResolved(dataDir: string, id: string, rowGroupSize = 100_000, rows = BIG_ROWS): Promise<string> {
  const file = path.join(dataDir, 'snapshots', id, 'resolved_predictions.parquet');
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  try {
    await c.run(`COPY (
      SELECT 'q:' || i AS question_id, ['polymarket','kalshi','manifold'][i % 3 + 1] AS venue, 'm-' || i AS venue_market_id,
             'Will event number ' || i || ' happen before the deadline?' AS title,
             ['politics','crypto','finance'][i % 3 + 1] AS category, 'policy' AS domain, 'augmented' AS mode,
             (i % 97) / 97.0 AS consensus, (i % 89) / 89.0 AS consensus_median, (i % 83) / 83.0 AS consensus_logit_mean,
             4::BIGINT AS n_models, 0.05::DOUBLE AS disagreement_sd, 0.1::DOUBLE AS disagreement_range,
             (i % 79) / 79.0 AS market_probability, (i % 2)::DOUBLE AS outcome, (i % 71) / 71.0 AS ai_error,
             (i % 67) / 67.0 AS market_error, TIMESTAMP '2025-01-01' + to_seconds(i) AS forecast_at,
             TIMESTAMP '2025-03-01' + to_seconds(i) AS resolved_at, '31-90' AS horizon_bucket, 'fred' AS source_slug,
             'FRED' AS source_name, 'https://fred.stlouisfed.org/series/X' || (i % 100) AS source_url,
             'The official release showed value ' || (i % 1000) AS evidence_excerpt,
             TIMESTAMP '2025-04-01' AS retrieved_at, 'openai,simulated' AS providers
      FROM range(${rows}) r(i)
    ) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE ${rowGroupSize})`);
  } finally {
    c.closeSync();
    inst.closeSync();
  }
  return file;
}


async function exportFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.includes('quorum-export-'));
}

/** Starts a raw GET (node:http, so the test controls reading and aborting). */
function rawGet(port: number, p: string, plan = 'api', key = `key-${plan}`): { req: http.ClientRequest; response: Promise<http.IncomingMessage> } {
  let req!: http.ClientRequest;
  const response = new Promise<http.IncomingMessage>((resolve, reject) => {
    req = http.get({ host: '127.0.0.1', port, path: p, headers: { 'X-Test-Plan': plan, 'X-Test-Key': key }, agent: false }, resolve);
    req.on('error', reject);
  });
  response.catch(() => undefined);
  return { req, response };
}

async function fetchText(url: string, plan = 'api', key = `key-${plan}`): Promise<{ res: Response; text: string }> {
  const res = await fetch(url, { headers: { 'X-Test-Plan': plan, 'X-Test-Key': key } });
  return { res, text: await res.text() };
}

let srv: TestServer;
let cleanup: () => Promise<void>;
let dataDir: string;

beforeAll(async () => {
  const tmp = await tempDataDir();
  cleanup = tmp.cleanup;
  dataDir = tmp.dir;
  await writeSnapshot(dataDir, SNAP, fixtureData(1));
  await writeBigResolved(dataDir, SNAP);
  await publish(dataDir, SNAP);
  srv = await startExportServer(dataDir);
});

afterAll(async () => {
  await srv?.close();
  await cleanup?.();
});

describe('large exports', () => {
  it('streams a large export completely (sliced: chunked, every row present)', async () => {
    const { res, text } = await fetchText(`${srv.url}/api/export/resolved`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-export-sliced')).toBe('true');
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(text.split('\n').filter((l) => l !== '').length).toBe(BIG_ROWS + 1);
    await srv.service.drain();
    expect(await exportFiles(srv.tempDir)).toEqual([]);
  });

  it('a client aborting after the first chunk: read stream destroyed, file deleted, server keeps serving', async () => {
    const before = srv.service.stats.cancelledDuringStream;
    const { req, response } = rawGet(srv.port, '/api/export/resolved');
    const res = await response;
    expect(res.statusCode).toBe(200);
    const total = 100 * BIG_ROWS; // far below the whole CSV (~200 bytes a row)
    let received = 0;
    await new Promise<void>((resolve) => {
      res.once('data', (chunk: Buffer) => {
        received += chunk.length;
        req.destroy();
        resolve();
      });
    });
    expect(received).toBeLessThan(total);
    await srv.service.drain();
    expect(srv.service.stats.cancelledDuringStream).toBe(before + 1);
    expect(srv.service.inFlightExports()).toBe(0);
    expect(await exportFiles(srv.tempDir)).toEqual([]);

    const again = await fetchText(`${srv.url}/api/export/resolved?limit=10`);
    expect(again.res.status).toBe(200);
    expect(again.text.trim().split('\n').length).toBe(11);
  });

  it('a whole-file download abandoned after its first chunk is cancelled, never counted sent (QA: counted completed and logged "export sent")', async () => {
    // A pro CSV is produced whole (capped plans); 24,000 rows: ~10 MB, three 4 MiB reads, more than
    // the loopback socket buffers take while the client does not read.
    const big = await startExportServer(dataDir, { proRowCap: BIG_ROWS });
    try {
      for (let round = 0; round < 4; round++) {
        const before = { ...big.service.stats };
        // A raw socket: read 64 kB, stop reading for 300 ms (the server fills the buffers), close.
        await new Promise<void>((resolve, reject) => {
          let got = 0;
          const s = net.connect(big.port, '127.0.0.1', () =>
            s.write(`GET /api/export/resolved?limit=24000 HTTP/1.1\r\nHost: x\r\nX-Test-Plan: pro\r\nX-Test-Key: key-abandon-${round}\r\n\r\n`));
          s.on('error', reject);
          s.on('data', (chunk: Buffer) => {
            if (got === 0) expect(chunk.toString('latin1')).toMatch(/^HTTP\/1\.1 200[\s\S]*content-length: \d{7,}/i);
            got += chunk.length;
            if (got < 64 * 1024 || s.isPaused()) return;
            s.pause();
            setTimeout(() => {
              s.destroy();
              resolve();
            }, 300);
          });
        });
        await big.service.drain();
        expect(big.service.stats.cancelledDuringStream, `round ${round}`).toBe(before.cancelledDuringStream + 1);
        expect(big.service.stats.completed, `round ${round}`).toBe(before.completed);
      }
    } finally {
      await big.close();
    }
  });

  it('a whole file read to its last byte by a client that then closes at once (as curl does) is a finished response, never `aborted` (QA: 13 of 15 curl downloads logged status null and counted aborted)', async () => {
    // Parquet is produced whole and sent with Content-Length; 20,000 rows: a few hundred kB, which
    // the socket buffers take at once, so the client can have every byte before the server ends
    // the response.
    const rounds = 12;
    const before = { ...srv.service.stats };
    const path0 = '/api/export/resolved?output=parquet&limit=20000';
    for (let round = 0; round < rounds; round++) {
      await new Promise<void>((resolve, reject) => {
        let head = '';
        let body = 0;
        let length = -1;
        const s = net.connect(srv.port, '127.0.0.1', () =>
          s.write(`GET ${path0} HTTP/1.1\r\nHost: x\r\nX-Test-Plan: api\r\nX-Test-Key: key-curl-${round}\r\n\r\n`));
        s.on('error', reject);
        s.on('data', (chunk: Buffer) => {
          if (length < 0) {
            head += chunk.toString('latin1');
            const end = head.indexOf('\r\n\r\n');
            if (end === -1) return;
            expect(head).toMatch(/^HTTP\/1\.1 200/);
            length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
            body = Buffer.byteLength(head, 'latin1') - end - 4;
          } else body += chunk.length;
          if (body >= length) {
            s.destroy(); // every byte is here: close at once
            resolve();
          }
        });
      });
    }
    await srv.service.drain();
    await new Promise((r) => setTimeout(r, 50));
    const closes = srv.closes.filter((c) => c.path === path0);
    expect(closes.length).toBe(rounds);
    expect(closes.filter((c) => !c.finished)).toEqual([]);
    expect(srv.service.stats.completed).toBe(before.completed + rounds);
  });

  it('clients gone within milliseconds (while the export sets up its DuckDB connection) are cancellations, never failures (QA: counted failed, logged as a 500)', async () => {
    const before = { ...srv.service.stats };
    for (let i = 0; i < 30; i++) {
      const s = net.connect(srv.port, '127.0.0.1', () =>
        s.write(`GET /api/export/resolved?output=parquet HTTP/1.1\r\nHost: x\r\nX-Test-Plan: api\r\nX-Test-Key: key-quick-${i}\r\n\r\n`));
      s.on('error', () => undefined);
      await new Promise((r) => setTimeout(r, i % 8));
      s.destroy();
      await new Promise((r) => setTimeout(r, 20));
    }
    await srv.service.drain();
    expect(srv.service.stats.failed).toBe(before.failed);
    expect(await exportFiles(srv.tempDir)).toEqual([]);
  });

  it('a client aborting during COPY: the DuckDB connection is interrupted, no file is left', async () => {
    const before = srv.service.stats.cancelledDuringCopy;
    // Parquet is produced whole before a byte goes (a sliced export's COPY is tested in slices.test.ts).
    const { req } = rawGet(srv.port, '/api/export/resolved?output=parquet');
    // Wait until the COPY is running (DuckDB opens its target file when the COPY starts), then
    // disconnect at once: a fixed sleep raced a fast machine's COPY to the finish.
    const t0 = Date.now();
    let started = false;
    while (!(started = (await exportFiles(srv.tempDir)).length > 0) && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 2));
    req.destroy();
    expect(started, 'the COPY started').toBe(true);
    const t1 = Date.now();
    await srv.service.drain();
    expect(srv.service.stats.cancelledDuringCopy).toBe(before + 1);
    expect(Date.now() - t1).toBeLessThan(3000);
    expect(await exportFiles(srv.tempDir)).toEqual([]);

    const again = await fetchText(`${srv.url}/api/export/resolved?limit=5&output=jsonl`);
    expect(again.res.status).toBe(200);
    expect(again.text.trim().split('\n').length).toBe(5);
  });

  it('concurrency cap: a third export while two are in flight → 429 with Retry-After', async () => {
    await srv.service.drain(); // the previous test's last export may still be deleting its file
    const a = rawGet(srv.port, '/api/export/resolved', 'api', 'key-a');
    const b = rawGet(srv.port, '/api/export/resolved', 'api', 'key-b');
    // Both produce and start streaming; nobody reads, so backpressure keeps them in flight.
    const [ra, rb] = await Promise.all([a.response, b.response]);
    expect(ra.statusCode).toBe(200);
    expect(rb.statusCode).toBe(200);
    expect(srv.service.inFlightExports()).toBe(2);
    expect(inFlightExports()).toBeGreaterThanOrEqual(2);

    const third = await fetch(`${srv.url}/api/export/predictions`, { headers: { 'X-Test-Plan': 'api', 'X-Test-Key': 'key-c' } });
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(third.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await third.json()).toMatchObject({ code: 'rate_limited', policy: 'exports', limit: 2 });

    let drained = false;
    const draining = srv.service.drain().then(() => {
      drained = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(drained).toBe(false); // shutdown can wait for in-flight exports
    a.req.destroy();
    b.req.destroy();
    await draining;
    expect(srv.service.inFlightExports()).toBe(0);
    expect(await exportFiles(srv.tempDir)).toEqual([]);
    const after = await fetchText(`${srv.url}/api/export/resolved?limit=1`);
    expect(after.res.status).toBe(200);
  });

  it('one key cannot take every slot: its second export at once is a 429, other keys still export', async () => {
    await srv.service.drain();
    const before = srv.service.stats.rejectedKeyBusy;
    // The QA report: two slow downloads of one key held both slots and every other key got 429.
    // (api: an uncapped CSV of ~80 MB that nobody reads stays in flight; pro's 10,000 rows would
    // fit in the loopback socket buffers and finish.)
    const first = rawGet(srv.port, '/api/export/resolved', 'api', 'key-greedy');
    expect((await first.response).statusCode).toBe(200);
    const t0 = Date.now();
    const second = await fetch(`${srv.url}/api/export/scores`, { headers: { 'X-Test-Plan': 'api', 'X-Test-Key': 'key-greedy' } });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('5');
    expect(await second.json()).toMatchObject({ code: 'rate_limited', policy: 'exports_per_key', limit: 1 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900); // it waited for the key's share first
    expect(srv.service.stats.rejectedKeyBusy).toBe(before + 1);
    expect(srv.service.inFlightExports()).toBe(1);

    // Another key gets the free slot while the greedy key's export is still in flight.
    const other = await fetchText(`${srv.url}/api/export/track_records?limit=1`, 'enterprise', 'key-other');
    expect(other.res.status, other.text.slice(0, 200)).toBe(200);

    first.req.destroy();
    await srv.service.drain();
    expect(await exportFiles(srv.tempDir)).toEqual([]);
    // Its share is back once its export has ended.
    const again = await fetchText(`${srv.url}/api/export/resolved?limit=2`, 'api', 'key-greedy');
    expect(again.res.status).toBe(200);
  });

  it('one key exporting table after table never meets its own finished export', async () => {
    await srv.service.drain();
    const outputs = ['csv', 'json', 'jsonl', 'parquet'];
    for (let i = 0; i < 12; i++) {
      const r = await fetchText(`${srv.url}/api/export/resolved?limit=20&output=${outputs[i % 4]}`, 'api', 'key-script');
      expect(r.res.status, `${i}: ${r.text.slice(0, 200)}`).toBe(200);
    }
  });

  it('table after table beside another key\'s download: a finished export no longer takes a slot while its file is deleted (soak: 2,515 of ~6,900 such requests refused "every slot is taken")', async () => {
    await srv.service.drain();
    // another key holds one of the two slots for the whole test (nobody reads its download)
    const other = rawGet(srv.port, '/api/export/resolved', 'api', 'key-other-download');
    expect((await other.response).statusCode).toBe(200);
    try {
      const outputs = ['csv', 'json', 'jsonl', 'parquet'];
      for (let i = 0; i < 24; i++) {
        const r = await fetchText(`${srv.url}/api/export/resolved?limit=5&output=${outputs[i % 4]}`, 'api', 'key-one-after-another');
        expect(r.res.status, `${i}: ${r.text.slice(0, 200)}`).toBe(200);
      }
    } finally {
      other.req.destroy();
    }
    await srv.service.drain();
    expect(srv.service.inFlightExports()).toBe(0);
  });

  it('the export instances keep nothing of the files they read once the exports are done (no external file cache: the soak\'s RSS stayed 150-350 MB above a fresh start)', async () => {
    await srv.service.drain();
    for (const table of ['resolved', 'scores', 'track_records']) {
      const whole = await fetchText(`${srv.url}/api/export/${table}?limit=50&output=parquet`, 'api', 'key-cache');
      expect(whole.res.status).toBe(200);
      const sliced = await fetchText(`${srv.url}/api/export/${table}?output=csv`, 'api', 'key-cache');
      expect(sliced.res.status).toBe(200);
    }
    expect(await srv.service.cachedFileBytes()).toBe(0);
  });
});

describe('a client that stops reading (send-progress timeout)', () => {
  const IDLE_MS = 1000;
  let slow: TestServer;

  beforeAll(async () => {
    // Pro's cap raised to 100,000 rows: a pro CSV is then produced whole (capped path) and ~20 MB,
    // more than the loopback socket buffers hold.
    slow = await startExportServer(dataDir, { idleTimeoutMs: IDLE_MS, proRowCap: 100_000 });
  });
  afterAll(async () => {
    await slow?.close();
  });

  /**
   * Reads one chunk, then stops reading while staying connected, until the server has ended the
   * export; then reads again and reports whether the body was complete. (A socket that is not
   * being read does not notice the server closing it, so the client is asked only afterwards.)
   */
  async function stallAfterFirstChunk(p: string, plan: string, key: string): Promise<{ complete: boolean }> {
    const { response } = rawGet(slow.port, p, plan, key);
    const res = await response;
    expect(res.statusCode).toBe(200);
    await new Promise<void>((resolve) => {
      res.once('data', () => {
        res.pause(); // connected, not reading
        resolve();
      });
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      slow.service.drain(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('the stalled download still holds its slot after 15 s')), 15_000);
      }),
    ]).finally(() => clearTimeout(timer));
    const complete = await new Promise<boolean>((resolve) => {
      res.on('error', () => resolve(false));
      res.on('end', () => resolve(res.complete));
      res.on('close', () => resolve(res.complete));
      res.resume();
    });
    return { complete };
  }

  it('a stalled download (whole file: pro CSV) is aborted after the idle timeout: slot freed, temp file deleted', async () => {
    const before = slow.service.stats.stalled;
    const cut = await stallAfterFirstChunk('/api/export/resolved', 'pro', 'key-slow-1');
    expect(cut.complete).toBe(false);
    // The server cut it for want of progress (the stats say why), not because the client left.
    expect(slow.service.stats.stalled).toBe(before + 1);
    expect(slow.service.inFlightExports()).toBe(0);
    expect(await exportFiles(slow.tempDir)).toEqual([]);
    // The key may export again.
    const again = await fetch(`${slow.url}/api/export/resolved?limit=3`, { headers: { 'X-Test-Plan': 'pro', 'X-Test-Key': 'key-slow-1' } });
    expect(again.status).toBe(200);
    expect((await again.text()).trim().split('\n').length).toBe(4);
  });

  it('a stalled sliced download (api CSV) is aborted the same way', async () => {
    const before = slow.service.stats.stalled;
    const cut = await stallAfterFirstChunk('/api/export/resolved', 'api', 'key-slow-2');
    expect(cut.complete).toBe(false);
    expect(slow.service.stats.stalled).toBe(before + 1);
    expect(slow.service.inFlightExports()).toBe(0);
    expect(await exportFiles(slow.tempDir)).toEqual([]);
  });

  it('a reader that pauses for less than the timeout is not cut off', async () => {
    const before = slow.service.stats.stalled;
    const rows = 60_000; // ~25 MB: more than the loopback socket buffers hold
    const { response } = rawGet(slow.port, `/api/export/resolved?limit=${rows}`, 'api', 'key-steady');
    const res = await response;
    let lines = 0;
    let bytes = 0;
    let pauses = 0;
    const complete = await new Promise<boolean>((resolve) => {
      // A pause of a quarter of the timeout after every 2 MiB read: a dozen pauses, together three
      // times the timeout, each with the socket buffers full (the server waiting to send). It was
      // every 10th chunk (~35 pauses, 9 s), which showed no more.
      res.on('data', (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        const before = bytes;
        bytes += chunk.length;
        if (Math.floor(bytes / (2 << 20)) === Math.floor(before / (2 << 20))) return;
        pauses++;
        res.pause();
        setTimeout(() => res.resume(), IDLE_MS / 4);
      });
      res.on('end', () => resolve(true));
      res.on('close', () => resolve(res.complete));
    });
    expect(complete).toBe(true);
    expect(lines).toBe(rows + 1);
    expect(pauses * (IDLE_MS / 4)).toBeGreaterThanOrEqual(2 * IDLE_MS); // pauses that would add up past the timeout
    expect(slow.service.stats.stalled).toBe(before);
  });

  it('QUORUM_EXPORT_IDLE_TIMEOUT_MS sets the default; a malformed value fails the start', () => {
    expect(idleTimeoutFromEnv({})).toBe(DEFAULT_EXPORT_IDLE_TIMEOUT_MS);
    expect(idleTimeoutFromEnv({ QUORUM_EXPORT_IDLE_TIMEOUT_MS: '15000' })).toBe(15_000);
    for (const bad of ['0', '-5', '1.5', 'abc', '99999999']) {
      expect(() => idleTimeoutFromEnv({ QUORUM_EXPORT_IDLE_TIMEOUT_MS: bad }), bad).toThrow(/QUORUM_EXPORT_IDLE_TIMEOUT_MS/);
    }
  });
});

describe('failures', () => {
  it('a COPY failing midway (corrupt Parquet row group) → a failed transfer (sliced) or a 500 problem (whole file), no file', async () => {
    const tmp = await tempDataDir();
    const id = 'r20250402T000000Z-bad1';
    try {
      await writeSnapshot(tmp.dir, id, fixtureData(1));
      // 100,000 rows in row groups of 5,000: the junk in the middle of the file (~row 50,000) is
      // well past the first slice (16,384 rows), which goes out before the failing one. It was
      // 400,000 rows, which sent ~200,000 of them twice (CSV, JSON) before failing: 3.8 s → 1.5 s.
      const file = await writeBigResolved(tmp.dir, id, 5_000, 100_000);
      await publish(tmp.dir, id);
      const s = await startExportServer(tmp.dir);
      try {
        // Footer intact (the snapshot loads), data pages in the middle overwritten.
        const size = (await stat(file)).size;
        const fh = await open(file, 'r+');
        const junk = Buffer.alloc(256 * 1024, 0xa7);
        await fh.write(junk, 0, junk.length, Math.floor(size / 2));
        await fh.close();

        // Sliced formats: the first slices went out, then a slice failed: the transfer fails
        // (connection cut without the final chunk), it never ends cleanly.
        for (const output of ['csv', 'json']) {
          const res = await fetch(`${s.url}/api/export/resolved?output=${output}`, { headers: { 'X-Test-Plan': 'api' } });
          expect(res.status).toBe(200);
          expect(res.headers.get('x-export-sliced')).toBe('true');
          await expect(res.text()).rejects.toThrow(/terminated/);
        }
        // Whole file: the failure comes before any byte: a 500 problem.
        for (const output of ['parquet']) {
          const { res, text } = await fetchText(`${s.url}/api/export/resolved?output=${output}`);
          expect(res.status, text.slice(0, 200)).toBe(500);
          expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          expect(res.headers.get('content-disposition')).toBeNull();
          const body = JSON.parse(text);
          expect(body).toMatchObject({ status: 500, code: 'internal' });
          expect(text).not.toContain('q:');
          expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
        }
        await s.service.drain();
        expect(s.service.stats.failed).toBe(3);
        expect(await exportFiles(s.tempDir)).toEqual([]);
        // The server still serves the tables that are intact.
        const ok = await fetchText(`${s.url}/api/export/resolved?limit=3`);
        expect(ok.res.status).toBe(200);
      } finally {
        await s.close();
      }
    } finally {
      await tmp.cleanup();
    }
  });

  it('an unwritable temp dir → 500 problem', async () => {
    const base = await mkdtemp(path.join(tmpdir(), 'quorum-export-test-'));
    const notADir = path.join(base, 'file');
    await writeFile(notADir, 'x');
    const s = await startExportServer(dataDir, { tempDir: notADir });
    try {
      const { res, text } = await fetchText(`${s.url}/api/export/resolved?limit=3`);
      expect(res.status).toBe(500);
      expect(JSON.parse(text).code).toBe('internal');
    } finally {
      await s.close();
      await rm(base, { recursive: true, force: true });
    }
  });
});

describe('stale temp files', () => {
  it('the startup sweep removes quorum-export-* files older than an hour and dead processes\' files and spill dirs at once, nothing else', async () => {
    // A surely-dead pid: a process that has exited. A live one: a child kept running (and our parent).
    const gone = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((r) => gone.once('exit', r));
    const dead = gone.pid!;
    const alive = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await new Promise((r) => alive.once('spawn', r));
    const live = [alive.pid!, process.ppid, process.pid];
    const dir = await mkdtemp(path.join(tmpdir(), 'quorum-export-sweep-'));
    try {
      const at = (name: string) => path.join(dir, name);
      const old = at(`quorum-export-${randomUUID()}.csv`);
      const oldTmp = at(`tmp_quorum-export-${randomUUID()}.parquet`);
      const fresh = at(`quorum-export-${randomUUID()}.json`);
      const unrelated = at('other.csv');
      // A crashed process's leftovers: removed at once, however fresh.
      const deadFile = at(`quorum-export-${dead}-${randomUUID()}.csv`);
      const deadTmp = at(`tmp_quorum-export-${dead}-${randomUUID()}.parquet`);
      const deadSpill = at(`quorum-duckdb-spill-${dead}-k3x9qa`);
      // Live processes' (ours included): kept; an export file of theirs older than an hour is not.
      const liveFiles = live.map((pid) => at(`quorum-export-${pid}-${randomUUID()}.csv`));
      const liveSpills = live.map((pid) => at(`quorum-duckdb-spill-${pid}-a1b2c3`));
      const oldLive = at(`quorum-export-${alive.pid}-${randomUUID()}.jsonl`);
      // Names as this process makes them: ours (kept while fresh), and swept once old.
      const ownFresh = newExportFile(dir, 'csv');
      const ownOld = newExportFile(dir, 'parquet');
      expect(path.basename(ownFresh)).toMatch(new RegExp(`^quorum-export-${process.pid}-[0-9a-f-]{36}\\.csv$`));
      // Near misses, even of the dead pid: kept.
      const lookalikes = [
        `quorum-duckdb-spill-${dead}-abc`, // a file, not a directory
        `quorum-duckdb-spill-${dead}`,
        `quorum-export-${dead}-not-a-uuid.csv`,
        `quorum-export-${dead}-${randomUUID()}.csv.bak`,
      ];
      const lookalikeDir = `quorum-export-${dead}-${randomUUID()}.csv`; // a directory, not a file
      for (const f of [old, oldTmp, fresh, unrelated, deadFile, deadTmp, ...liveFiles, oldLive, ownFresh, ownOld, ...lookalikes.map(at)]) {
        await writeFile(f, 'x');
      }
      for (const d of [deadSpill, ...liveSpills]) {
        await mkdir(path.join(d, 'resolved'), { recursive: true });
        await writeFile(path.join(d, 'resolved', 'duckdb_temp_storage-0.tmp'), 'x');
      }
      await mkdir(at(lookalikeDir));
      const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
      for (const f of [old, oldTmp, unrelated, oldLive, ownOld, ...liveSpills, ...lookalikes.map(at), at(lookalikeDir)]) {
        await utimes(f, twoHoursAgo, twoHoursAgo);
      }

      const s = await startExportServer(dataDir, { tempDir: dir });
      try {
        expect(await s.service.swept).toBe(7); // old, oldTmp, deadFile, deadTmp, deadSpill, oldLive, ownOld
        expect((await readdir(dir)).sort()).toEqual(
          [fresh, unrelated, ...liveFiles, ownFresh, ...liveSpills, ...lookalikes.map(at), at(lookalikeDir)].map((f) => path.basename(f)).sort(),
        );
        for (const d of liveSpills) expect(await readdir(path.join(d, 'resolved'))).toEqual(['duckdb_temp_storage-0.tmp']);
      } finally {
        await s.close();
      }
      expect(await sweepStaleExports(path.join(dir, 'missing'))).toBe(0);
    } finally {
      alive.kill();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
