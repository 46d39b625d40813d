/**
 * What a long-lived server keeps of the snapshots it served, across real publishes (score-only runs
 * of the sample, the pipeline's own path: derive, publish, prune): the reader's DuckDB instance
 * holds the served snapshot's schema and, while a request still reads it, a retired one's; the
 * retired one's views are gone once its last request has finished. A request pinned to a snapshot
 * that is retired under it finishes from that snapshot. On disk, a replaced snapshot stays for the
 * grace (QUORUM_KEEP_SNAPSHOTS counts only once it has run out), then only the newest `keep` remain.
 * A download that started on a snapshot finishes whole from it, however many publishes come while
 * it is paused.
 */
import { existsSync, readdirSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { closeDuckdb } from '../../pipeline/warehouse/duckdb.ts';
import { pruneSnapshots, readCurrent, readManifest, SUPERSEDED_GRACE_MS } from '../../pipeline/warehouse/snapshot.ts';
import { ONE_DUCKDB_THREAD, oneDuckdbThread } from '../forecast/helpers.ts';
import { fixture, forecasts, question, writeRaw, type Fixture } from '../structure/helpers.ts';
import { fixtureData, publish, tempDataDir, writeSnapshot } from './fixtures.ts';
import { get, newKey, serve } from './helpers.ts';

const KEEP = 2;
let f: Fixture;
let server: ServerHandle;
let key: string;

/** One score-only run as of 2026-01-<day>, as `quorum run --score-only --as-of` makes it; its snapshot id. */
async function run(day: number): Promise<string> {
  const config = loadConfig({
    QUORUM_DATA_DIR: f.dataDir, QUORUM_STRUCTURE_DIR: f.structureDir, QUORUM_VENUES: 'none', LOG_LEVEL: 'silent',
    QUORUM_KEEP_SNAPSHOTS: String(KEEP), ...ONE_DUCKDB_THREAD,
  });
  const summary = await runPipeline({ config, logger: createLogger('silent'), scoreOnly: true, asOf: new Date(Date.UTC(2026, 0, day)) });
  expect(summary.status, summary.error ?? '').toBe('completed');
  return summary.snapshot!;
}

/** The reader's snapshot schemas, by snapshot id (the schema is `snap_<n>_<id folded>`). */
async function schemas(): Promise<Array<{ schema: string; views: number }>> {
  return server.app.snapshots.loadedSchemas();
}

/** Waits (a retired schema is dropped off the request's path) until `check` holds. */
async function until(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const folded = (id: string) => id.toLowerCase().replace(/[^a-z0-9_]/g, '_');
const schemaOf = (id: string) => new RegExp(`^snap_[0-9]+_${folded(id)}$`);

describe('snapshots retired by a long-lived server', () => {
  beforeAll(async () => {
    await oneDuckdbThread();
    f = fixture({}, { memory: true });
    // Three questions forecast on 2026-01-10: the predictions' list has a page past the first.
    const at = new Date('2026-01-10T00:00:00Z');
    const ids = ['manifold:k1', 'manifold:k2', 'manifold:k3'];
    await writeRaw(f.dataDir, {
      questions: ids.map((id, i) => question(id, `keyset widget ${i}`)),
      forecasts: ids.flatMap((id) => forecasts('r20260110T000000Z-keep0001', id, at, [0.6, 0.7, 0.6, 0.7])),
      market_prices: ids.map((id) => ({ question_id: id, venue: 'manifold', observed_at: at, probability: 0.6 })),
    });
    await run(20);
    server = await serve(f.dataDir);
    key = newKey(f.dataDir, 'enterprise').key;
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await closeDuckdb();
    f?.cleanup();
  });

  it('keeps only the served schema (and one a request still reads); the pinned request finishes on its own snapshot; directories go per retention', async () => {
    const headers = { 'X-API-Key': key };
    const first = readCurrent(f.dataDir)!;
    const tables = readManifest(f.dataDir, first).tables.length;
    expect(await schemas()).toEqual([{ schema: expect.stringMatching(schemaOf(first)), views: tables }]);

    // A list's first page, and a request pinned to the first snapshot (as a slow response is) for
    // the whole of the publishes below.
    const page1 = await get(server, '/api/predictions/lang/en?limit=1', { headers });
    expect(page1.res.status).toBe(200);
    expect(page1.res.headers.get('x-snapshot')).toBe(first);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const pinned = server.app.snapshots.withSnapshot(async (snap) => {
      const before = await snap.query('resolved-count', { category: null, venue: null });
      await gate;
      const after = await snap.query('resolved-count', { category: null, venue: null });
      return { id: snap.id, before: before[0]!.total, after: after[0]!.total };
    });

    const published = [first];
    for (const day of [21, 22, 23, 24]) {
      const id = await run(day);
      published.push(id);
      expect((await server.app.snapshots.reload())?.id).toBe(id);
      for (const p of ['/api/predictions/resolved?limit=5', '/api/predictions/accuracy', '/api/leaderboard/']) {
        const got = await get(server, p, { headers });
        expect(got.res.status, `${p}: ${got.text}`).toBe(200);
        expect(got.res.headers.get('x-snapshot')).toBe(id);
      }
      // the served one and the pinned first one; those retired in between dropped with their last request
      await until(async () => (await schemas()).length === 2);
      const held = await schemas();
      for (const served of [first, id]) expect(held.filter((s) => schemaOf(served).test(s.schema)), served).toHaveLength(1);
      expect(held.every((s) => s.views === tables)).toBe(true);
    }

    // The pinned request read its snapshot all along, with its own answer, not "does not exist".
    release();
    const done = await pinned;
    expect(done.id).toBe(first);
    expect(done.after).toBe(done.before);
    // ...and, its last reader gone, the first snapshot's schema is dropped too.
    const last = published.at(-1)!;
    await until(async () => (await schemas()).length === 1);
    expect(await schemas()).toEqual([{ schema: expect.stringMatching(schemaOf(last)), views: tables }]);

    // The first page's cursor, issued by the first snapshot (a position in question_id order, which
    // no run rewrites), continues on the newest one (README, The API: lists).
    const cursor = (JSON.parse(page1.text) as { next_cursor: string | null }).next_cursor;
    expect(cursor).toEqual(expect.any(String));
    const page2 = await get(server, `/api/predictions/lang/en?limit=1&cursor=${cursor}`, { headers });
    expect(page2.res.status, page2.text).toBe(200);
    expect(page2.res.headers.get('x-snapshot')).toBe(last);
    expect(page2.body.predictions.map((p: { question_id: string }) => p.question_id)).toEqual(['manifold:k2']);

    // On disk: every run pruned, but within the grace nothing went; once it has run, the newest KEEP.
    const onDisk = () => readdirSync(join(f.dataDir, 'snapshots')).sort();
    expect(onDisk()).toEqual([...published].sort());
    const removed = await pruneSnapshots(f.dataDir, KEEP, new Date(Date.now() + SUPERSEDED_GRACE_MS));
    expect(removed.sort()).toEqual(published.slice(0, -KEEP).sort());
    expect(onDisk()).toEqual(published.slice(-KEEP).sort());
    expect(existsSync(join(f.dataDir, 'snapshots', last, 'manifest.json'))).toBe(true);
    const after = await get(server, '/api/predictions/resolved?limit=5', { headers });
    expect(after.res.status).toBe(200);
    expect(after.res.headers.get('x-snapshot')).toBe(last);
  }, 90_000);
});

/** Replaces snapshot `id`'s resolved_predictions with `rows` generated ones (a CSV of ~15 MB: far more than the sockets buffer). */
async function writeManyResolved(dataDir: string, id: string, rows: number): Promise<void> {
  const file = join(dataDir, 'snapshots', id, 'resolved_predictions.parquet');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    // the fixture's own rows, repeated under other question ids: the snapshot's columns as they are
    await c.run(
      `COPY (SELECT * REPLACE ('q:' || r.i AS question_id) FROM read_parquet('${file}') p, range(${rows}) r(i) QUALIFY row_number() OVER (PARTITION BY r.i) = 1) ` +
        `TO '${file}.many' (FORMAT parquet, ROW_GROUP_SIZE 10000)`,
    );
  } finally {
    c.closeSync();
    db.closeSync();
  }
  await rename(`${file}.many`, file);
}

describe('an export in flight while its snapshot is retired', () => {
  it('a sliced download paused across two publishes finishes whole, from the snapshot it started on; then its schema goes', async () => {
    const ROWS = 40_000;
    const tmp = await tempDataDir({ memory: true });
    const s = await serve(tmp.dir);
    try {
      const old = 'r20250402T000000Z-ret1';
      await writeSnapshot(tmp.dir, old, fixtureData(1));
      await writeManyResolved(tmp.dir, old, ROWS);
      await publish(tmp.dir, old);
      await s.app.snapshots.reload();
      const apiKey = newKey(tmp.dir, 'enterprise').key;

      // the download starts, takes its first bytes, and stops reading
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        httpGet(`${s.url}/api/export/resolved/?output=csv`, { headers: { 'X-API-Key': apiKey }, agent: false }, resolve).on('error', reject);
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-export-sliced']).toBe('true');
      expect(res.headers['x-snapshot']).toBe(old);
      const chunks: Buffer[] = [];
      await new Promise<void>((resolve) => res.once('data', (c: Buffer) => (chunks.push(c), res.pause(), resolve())));

      // two publishes meanwhile: the API serves the newest; the paused download keeps the first pinned
      for (const [id, day] of [['r20250403T000000Z-ret2', '03'], ['r20250404T000000Z-ret3', '04']] as const) {
        await writeSnapshot(tmp.dir, id, fixtureData(2), { asOf: `2025-04-${day}T00:00:00Z` });
        await publish(tmp.dir, id);
        expect((await s.app.snapshots.reload())?.id).toBe(id);
        const list = await get(s, '/api/predictions/resolved?limit=2', { headers: { 'X-API-Key': apiKey } });
        expect(list.res.status).toBe(200);
        expect(list.res.headers.get('x-snapshot')).toBe(id);
      }
      await until(async () => (await s.app.snapshots.loadedSchemas()).length === 2);
      const held = (await s.app.snapshots.loadedSchemas()).map((x) => x.schema);
      expect(held.some((n) => n.endsWith('_ret1'))).toBe(true);
      expect(held.some((n) => n.endsWith('_ret3'))).toBe(true);

      // read on to the end: every row of the first snapshot, a clean end with its trailer
      const body = await new Promise<string>((resolve, reject) => {
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', reject);
        res.resume();
      });
      expect(res.trailers['x-export-rows']).toBe(String(ROWS));
      const lines = body.split('\n').filter((l) => l !== '');
      expect(lines).toHaveLength(ROWS + 1);
      expect(lines[1]).toMatch(/^"?q:\d+/);
      // the download's end released the first snapshot: only the served one is left
      await until(async () => (await s.app.snapshots.loadedSchemas()).length === 1);
      expect((await s.app.snapshots.loadedSchemas())[0]!.schema).toMatch(/_ret3$/);
    } finally {
      await s.close();
      await tmp.cleanup();
    }
  }, 60_000);
});
