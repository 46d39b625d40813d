/**
 * Snapshot lifecycle over HTTP: not ready before CURRENT exists, ready after reload, swapping
 * CURRENT serves the new figures, a broken publication keeps the old snapshot, requests pinned to
 * the old snapshot finish on it, polling picks up a new CURRENT.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.ts';
import { silentLogger } from '../../api/logging/logger.ts';
import { startServer, type ServerHandle } from '../../api/server.ts';
import { fixtureData, publish, tempDataDir, withFeeds, writeSnapshot, type FixtureData } from './fixtures.ts';
import { newKey, serve } from './helpers.ts';
import { deriveSqlHash } from '../../pipeline/warehouse/derive.ts';
import { capturedLog } from '../helpers/captured-log.ts';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function json(url: string): Promise<{ res: Response; body: any }> {
  const res = await fetch(url);
  return { res, body: await res.json() };
}

async function until(fn: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not met in time');
}

async function setup(pollMs = 0): Promise<{ dir: string; server: ServerHandle }> {
  const tmp = await tempDataDir();
  closers.push(tmp.cleanup);
  const server = await startServer({ port: 0, dataDir: tmp.dir, logger: silentLogger(), pollMs });
  closers.push(() => server.close());
  return { dir: tmp.dir, server };
}

/** Rewrites the Parquet `file` without `column`, as an older pipeline that did not write it left it. */
async function dropColumn(file: string, column: string): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    await conn.run(`COPY (SELECT * EXCLUDE (${column}) FROM read_parquet('${file}')) TO '${file}.old' (FORMAT parquet)`);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  await rename(`${file}.old`, file);
}

describe('snapshot lifecycle', () => {
  it('503 not_ready before a snapshot exists, then 200 after CURRENT appears (reload)', async () => {
    const tmp = await tempDataDir();
    closers.push(tmp.cleanup);
    const handle = await createApp({ dataDir: tmp.dir, logger: silentLogger(), pollMs: 0 });
    closers.push(() => handle.close());
    const srv = handle.app.listen(0, '127.0.0.1');
    await new Promise((r) => srv.once('listening', r));
    closers.push(() => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }));
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;

    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    for (const p of ['/readyz', '/api/predictions/accuracy', '/api/predictions/accuracy/politics', '/api/events/accuracy/', '/api/predictions/resolved']) {
      const { res, body } = await json(url + p);
      expect(res.status, p).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('x-snapshot')).toBeNull();
      expect(body).toMatchObject({ status: 503, code: 'not_ready' });
    }
    // validation still comes first
    expect((await fetch(`${url}/api/predictions/accuracy/nope`)).status).toBe(404);
    expect((await fetch(`${url}/api/predictions/resolved?limit=0`)).status).toBe(400);

    await writeSnapshot(tmp.dir, 's1', fixtureData(1));
    expect(handle.snapshots.current).toBeNull(); // not published yet
    await publish(tmp.dir, 's1');
    const info = await handle.snapshots.reload();
    expect(info?.id).toBe('s1');

    const { res, body } = await json(`${url}/api/predictions/accuracy`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-snapshot')).toBe('s1');
    expect(body.total_resolved).toBe(20);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });

  it('with polling off, a CURRENT published after start waits for reload()', async () => {
    const { dir, server } = await setup();
    await writeSnapshot(dir, 'r1', fixtureData(1), { asOf: '2025-04-02T00:00:00Z' });
    await publish(dir, 'r1');
    expect((await fetch(`${server.url}/api/predictions/accuracy`)).status).toBe(503);
  });

  it('a cursor across a publish: a stable order continues; an order each run rewrites is a 410 cursor_expired (QA)', async () => {
    const tmp = await tempDataDir();
    closers.push(tmp.cleanup);
    const { dir } = tmp;
    const headers = { 'X-API-Key': newKey(dir, 'enterprise').key };
    const server = await serve(dir);
    closers.push(() => server.close());
    // three sources whose ranks the second snapshot reverses, as a run's new claims can
    const sources = (ranks: number[]): FixtureData['track_records'] =>
      ranks.map((rank, i) => ({ source_slug: `source-${i}`, name: `Source ${i}`, kind: 'pollster', n_claims: 20, n_resolved: 20, ranked: true, rank, categories: [] }));
    const claims = (day: number): FixtureData['claims'] =>
      [0, 1, 2].map((i) => ({ claim_id: `c${i}`, source_slug: 'quorum-consensus', made_at: `2025-0${day + i}-01 00:00:00`, kind: 'probability', probability: 0.5 }));
    await writeSnapshot(dir, 'r1', { ...withFeeds(fixtureData(1)), track_records: sources([1, 2, 3]), claims: claims(1) });
    await publish(dir, 'r1');
    await server.app.snapshots.reload();
    const page = async (p: string) => {
      const res = await fetch(`${server.url}${p}`, { headers });
      return { status: res.status, body: (await res.json()) as any };
    };
    const routes = ['/api/events/lang/en/', '/api/predictions/edges', '/api/track-records/', '/api/track-records/?sort=accuracy', '/api/claims/'];
    const firstPages = await Promise.all([...routes, '/api/predictions/lang/en', '/api/track-records/?sort=slug'].map((r) => page(`${r}${r.includes('?') ? '&' : '?'}limit=1`)));
    for (const p of firstPages) expect(p.body.next_cursor, JSON.stringify(p.body)).toEqual(expect.any(String));
    const next = (i: number, r: string) => `${r}${r.includes('?') ? '&' : '?'}limit=1&cursor=${firstPages[i]!.body.next_cursor}`;
    // on the snapshot that issued them, every cursor continues
    for (const [i, r] of routes.entries()) expect((await page(next(i, r))).status, r).toBe(200);

    await writeSnapshot(dir, 'r2', { ...withFeeds(fixtureData(2)), track_records: sources([3, 2, 1]), claims: claims(4) }, { asOf: '2025-04-03T00:00:00Z' });
    await publish(dir, 'r2');
    await server.app.snapshots.reload();
    for (const [i, r] of routes.entries()) {
      const got = await page(next(i, r));
      expect(got.status, r).toBe(410);
      expect(got.body).toMatchObject({ code: 'cursor_expired', parameter: 'cursor' });
      expect(got.body.detail).toMatch(/snapshot r1.*snapshot r2.*first page/);
    }
    // a position in an order no run rewrites (question id, slug) continues in the new snapshot
    const lang = await page(`/api/predictions/lang/en?limit=1&cursor=${firstPages[5]!.body.next_cursor}`);
    expect(lang.status).toBe(200);
    const bySlug = await page(`/api/track-records/?sort=slug&limit=1&cursor=${firstPages[6]!.body.next_cursor}`);
    expect(bySlug.status).toBe(200);
    expect(bySlug.body.sources.map((x: any) => x.slug)).toEqual(['source-1']);
    // a cursor of an earlier version (no snapshot in it) cannot be placed either
    const legacy = Buffer.from(JSON.stringify({ v: 1, k: 'edges', a: [0.1, 'polymarket:x'] })).toString('base64url');
    expect((await page(`/api/predictions/edges?cursor=${legacy}`)).body).toMatchObject({ status: 410, code: 'cursor_expired' });
    // one that names a snapshot in a malformed way is no cursor at all
    const forged = Buffer.from(JSON.stringify({ v: 1, k: 'edges', a: [0.1, 'polymarket:x', 'r2/../x'] })).toString('base64url');
    expect((await page(`/api/predictions/edges?cursor=${forged}`)).body).toMatchObject({ status: 400, code: 'invalid_parameter' });
  });

  it('swap via reload, with in-flight requests finishing on the snapshot they pinned', async () => {
    const tmp = await tempDataDir();
    closers.push(tmp.cleanup);
    await writeSnapshot(tmp.dir, 'r1', fixtureData(1), { asOf: '2025-04-02T00:00:00Z' });
    await publish(tmp.dir, 'r1');
    const handle = await createApp({ dataDir: tmp.dir, logger: silentLogger(), pollMs: 0 });
    closers.push(() => handle.close());
    const srv = handle.app.listen(0, '127.0.0.1');
    await new Promise((r) => srv.once('listening', r));
    closers.push(() => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }));
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;

    const first = await json(`${url}/api/predictions/accuracy`);
    expect(first.res.headers.get('x-snapshot')).toBe('r1');
    expect(first.body).toMatchObject({ total_resolved: 20, as_of: '2025-04-02T00:00:00.000Z' });

    // Pin r1 as an in-flight request would, then publish r2 and swap.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const pinned = handle.snapshots.withSnapshot(async (snap) => {
      const before = await snap.query('resolved-count', { category: null, venue: null });
      await gate;
      const after = await snap.query('resolved-count', { category: null, venue: null });
      return { id: snap.id, before: before[0]!.total, after: after[0]!.total };
    });

    await writeSnapshot(tmp.dir, 'r2', fixtureData(2), { asOf: '2025-04-03T00:00:00Z' });
    await publish(tmp.dir, 'r2');
    expect((await handle.snapshots.reload())?.id).toBe('r2');

    const second = await json(`${url}/api/predictions/accuracy/`);
    expect(second.res.headers.get('x-snapshot')).toBe('r2');
    expect(second.body).toMatchObject({ total_resolved: 40, as_of: '2025-04-03T00:00:00.000Z' });
    expect(second.body.resolved_brier).toBeCloseTo(0.13, 10);
    expect((await json(`${url}/api/predictions/resolved`)).body.total).toBe(25);

    release();
    expect(await pinned).toEqual({ id: 'r1', before: 23, after: 23 });

    // A broken publication (manifest missing, or a listed table missing) keeps r2 served.
    await mkdir(path.join(tmp.dir, 'snapshots', 'r3'), { recursive: true });
    await publish(tmp.dir, 'r3');
    await expect(handle.snapshots.reload()).rejects.toThrow();
    expect(handle.snapshots.current?.id).toBe('r2');
    expect(handle.snapshots.lastFailure?.id).toBe('r3');
    expect((await fetch(`${url}/api/predictions/accuracy`)).headers.get('x-snapshot')).toBe('r2');

    const r4 = await writeSnapshot(tmp.dir, 'r4', fixtureData(1));
    await rm(path.join(r4, 'calibration.parquet'));
    await publish(tmp.dir, 'r4');
    await expect(handle.snapshots.reload()).rejects.toThrow(/calibration/);
    expect(handle.snapshots.current?.id).toBe('r2');

    // Hostile CURRENT contents never reach a path or an identifier.
    for (const id of ['../../etc', '..', 'a/b', "x'; DROP SCHEMA main; --", '']) {
      await writeFile(path.join(tmp.dir, 'CURRENT'), id);
      await handle.snapshots.reload().catch(() => undefined);
      expect(handle.snapshots.current?.id).toBe('r2');
    }
    expect((await fetch(`${url}/api/predictions/resolved`)).status).toBe(200);
  });

  it('a published snapshot whose Parquet file is cut short: its load failure is logged once, not on every poll (outside upgrade test: an error line every 2 s)', async () => {
    const tmp = await tempDataDir();
    closers.push(tmp.cleanup);
    await writeSnapshot(tmp.dir, 'r1', fixtureData(1));
    await publish(tmp.dir, 'r1');
    const { logger, lines } = capturedLog();
    const handle = await createApp({ dataDir: tmp.dir, logger, pollMs: 0 });
    closers.push(() => handle.close());
    const r2 = await writeSnapshot(tmp.dir, 'r2', fixtureData(2));
    const file = path.join(r2, 'accuracy.parquet');
    await writeFile(file, (await readFile(file)).subarray(0, 100)); // a copy cut short
    await publish(tmp.dir, 'r2');
    for (let i = 0; i < 4; i++) await expect(handle.snapshots.reload()).rejects.toThrow(/accuracy\.parquet/);
    expect(handle.snapshots.current?.id).toBe('r1');
    expect(handle.snapshots.lastFailure?.id).toBe('r2');
    expect(lines.filter((l) => l.msg === 'snapshot load failed; keeping the served snapshot')).toHaveLength(1);
  });

  it('the only published snapshot cannot be loaded: data endpoints are 503 not_ready naming it, as /readyz does, not "nothing published yet" (outside upgrade test)', async () => {
    const tmp = await tempDataDir();
    closers.push(tmp.cleanup);
    const r1 = await writeSnapshot(tmp.dir, 'r1', fixtureData(1));
    const file = path.join(r1, 'accuracy.parquet');
    await writeFile(file, (await readFile(file)).subarray(0, 100));
    await publish(tmp.dir, 'r1');
    const server = await startServer({ port: 0, dataDir: tmp.dir, logger: silentLogger(), pollMs: 0 });
    closers.push(() => server.close());
    for (const p of ['/readyz', '/api/predictions/accuracy', '/api/predictions/resolved']) {
      const { res, body } = await json(`${server.url}${p}`);
      expect(res.status, p).toBe(503);
      expect(body.code, p).toBe('not_ready');
      expect(body.detail, p).toBe('No snapshot is loaded yet; the published snapshot r1 could not be loaded.');
    }
  });

  it('a snapshot without a table an endpoint needs: that endpoint is 503, the others serve', async () => {
    const tmp = await tempDataDir();
    closers.push(tmp.cleanup);
    await writeSnapshot(tmp.dir, 'partial', fixtureData(1), { omitTables: ['calibration'] });
    await publish(tmp.dir, 'partial');
    const server = await startServer({ port: 0, dataDir: tmp.dir, logger: silentLogger(), pollMs: 0 });
    closers.push(() => server.close());
    const ev = await json(`${server.url}/api/events/accuracy`);
    expect(ev.res.status).toBe(503);
    expect(ev.body.code).toBe('not_ready');
    expect(ev.body.detail).toContain('calibration');
    expect((await fetch(`${server.url}/api/predictions/accuracy`)).status).toBe(200);
  });

  it('a snapshot published before a column an endpoint reads: that endpoint is 503 naming it, never a 500', async () => {
    const tmp = await tempDataDir();
    closers.push(tmp.cleanup);
    const dir = await writeSnapshot(tmp.dir, 'older', fixtureData(1));
    // resolved_predictions as an older pipeline wrote it: without market_observed_at
    await dropColumn(path.join(dir, 'resolved_predictions.parquet'), 'market_observed_at');
    await publish(tmp.dir, 'older');
    const server = await startServer({ port: 0, dataDir: tmp.dir, logger: silentLogger(), pollMs: 0 });
    closers.push(() => server.close());
    const resolved = await json(`${server.url}/api/predictions/resolved`);
    expect(resolved.res.status).toBe(503);
    expect(resolved.body.code).toBe('not_ready');
    expect(resolved.body.detail).toContain('resolved_predictions.market_observed_at');
    expect((await fetch(`${server.url}/api/predictions/accuracy`)).status).toBe(200);
  });

  it('any column or table this version reads that a snapshot derived by other SQL lacks: 503 not_ready naming it (QA: a 500 after an upgrade); on this version\'s own snapshot it stays a 500', async () => {
    for (const own of [false, true]) {
      const tmp = await tempDataDir();
      closers.push(tmp.cleanup);
      const dir = await writeSnapshot(tmp.dir, 'upgraded', fixtureData(1));
      // resolved_predictions without market_status, a column no route lists in its requirements
      await dropColumn(path.join(dir, 'resolved_predictions.parquet'), 'market_status');
      const manifestFile = path.join(dir, 'manifest.json');
      const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as Record<string, unknown>;
      manifest.derive_sql_hash = own ? await deriveSqlHash() : '0'.repeat(64);
      await writeFile(manifestFile, JSON.stringify(manifest));
      await publish(tmp.dir, 'upgraded');
      const server = await startServer({ port: 0, dataDir: tmp.dir, logger: silentLogger(), pollMs: 0 });
      closers.push(() => server.close());
      const resolved = await json(`${server.url}/api/predictions/resolved`);
      if (own) {
        expect(resolved.res.status).toBe(500); // this version derived it: a query that does not bind is a bug
      } else {
        expect(resolved.res.status).toBe(503);
        expect(resolved.body.code).toBe('not_ready');
        expect(resolved.body.detail).toContain("column 'market_status'");
        expect(resolved.body.detail).toContain('derived by other SQL');
      }
      expect((await fetch(`${server.url}/api/predictions/accuracy`)).status).toBe(200);
    }
  });

  it('the same id re-published (new manifest created_at) is reloaded', async () => {
    const tmp = await tempDataDir();
    closers.push(tmp.cleanup);
    await writeSnapshot(tmp.dir, 'same', fixtureData(1));
    await publish(tmp.dir, 'same');
    const handle = await createApp({ dataDir: tmp.dir, logger: silentLogger(), pollMs: 0 });
    closers.push(() => handle.close());
    const loadedAt = handle.snapshots.current?.loadedAt;
    expect(await handle.snapshots.reload()).toMatchObject({ id: 'same', loadedAt }); // unchanged: no reload
    await new Promise((r) => setTimeout(r, 5));
    await writeSnapshot(tmp.dir, 'same', fixtureData(2), { createdAt: '2025-04-02T01:00:00.000Z' });
    const info = await handle.snapshots.reload();
    expect(info?.createdAt).toBe('2025-04-02T01:00:00.000Z');
    const total = await handle.snapshots.withSnapshot(async (s) => (await s.query('resolved-count', { category: null, venue: null }))[0]!.total);
    expect(total).toBe(25);
  });

  it('the served snapshot removed from disk (pruned while a newer one cannot load): /readyz is 503 not_ready naming it, data endpoints 503 not_ready, not ready 200 beside 500 internal (QA)', async () => {
    const tmp = await tempDataDir();
    closers.push(tmp.cleanup);
    await writeSnapshot(tmp.dir, 'gone1', fixtureData(1));
    await publish(tmp.dir, 'gone1');
    const server = await serve(tmp.dir);
    closers.push(() => server.close());
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    // a table's file deleted under the server, then the whole directory
    await rm(path.join(tmp.dir, 'snapshots', 'gone1', 'accuracy.parquet'));
    for (const step of ['file', 'dir']) {
      if (step === 'dir') await rm(path.join(tmp.dir, 'snapshots', 'gone1'), { recursive: true, force: true });
      const ready = await json(`${server.url}/readyz`);
      expect(ready.res.status, step).toBe(503);
      expect(ready.body).toMatchObject({ code: 'not_ready' });
      expect(ready.body.detail).toContain('gone1');
      const data = await json(`${server.url}/api/predictions/accuracy`);
      expect(data.res.status, step).toBe(503);
      expect(data.body).toMatchObject({ code: 'not_ready' });
      expect(data.res.headers.get('retry-after')).toBe('5');
    }
    // a new snapshot published and loaded: ready again
    await writeSnapshot(tmp.dir, 'gone2', fixtureData(2));
    await publish(tmp.dir, 'gone2');
    await server.app.snapshots.reload();
    expect((await json(`${server.url}/readyz`)).body).toMatchObject({ status: 'ready', snapshot: 'gone2' });
    expect((await fetch(`${server.url}/api/predictions/accuracy`)).status).toBe(200);
  });

  it('polling picks up a newly published CURRENT', async () => {
    const { dir, server } = await setup(100);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
    await writeSnapshot(dir, 'p1', fixtureData(1));
    await publish(dir, 'p1');
    await until(async () => (await fetch(`${server.url}/readyz`)).status === 200);
    await writeSnapshot(dir, 'p2', fixtureData(2));
    await publish(dir, 'p2');
    await until(async () => (await fetch(`${server.url}/api/predictions/accuracy`)).headers.get('x-snapshot') === 'p2');
    expect((await json(`${server.url}/api/predictions/accuracy`)).body.total_resolved).toBe(40);
  });

  it('concurrent requests across a swap all succeed', async () => {
    const tmp = await tempDataDir();
    closers.push(tmp.cleanup);
    await writeSnapshot(tmp.dir, 'c1', fixtureData(1));
    await writeSnapshot(tmp.dir, 'c2', fixtureData(2));
    await publish(tmp.dir, 'c1');
    const handle = await createApp({ dataDir: tmp.dir, logger: silentLogger(), pollMs: 0, poolSize: 2 });
    closers.push(() => handle.close());
    const srv = handle.app.listen(0, '127.0.0.1');
    await new Promise((r) => srv.once('listening', r));
    closers.push(() => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }));
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;

    const paths = ['/api/predictions/accuracy', '/api/events/accuracy', '/api/predictions/resolved?limit=3'];
    const requests = Array.from({ length: 30 }, (_, i) => json(url + paths[i % paths.length]));
    await publish(tmp.dir, 'c2');
    const swapped = handle.snapshots.reload();
    const results = await Promise.all(requests);
    await swapped;
    for (const { res, body } of results) {
      expect(res.status).toBe(200);
      const snap = res.headers.get('x-snapshot');
      expect(['c1', 'c2']).toContain(snap);
      if (body.total_resolved !== undefined) expect(body.total_resolved).toBe(snap === 'c1' ? 20 : 40);
      if (body.predictions !== undefined) expect(body.total).toBe(snap === 'c1' ? 23 : 25);
    }
    expect((await json(`${url}/api/predictions/accuracy`)).res.headers.get('x-snapshot')).toBe('c2');
  });
});
