/**
 * A tracked market its venue no longer knows (pipeline/venues/removed-market.ts): closed at the
 * first sync that gets "not found", annulled by one that still gets it QUORUM_REMOVED_MARKET_ANNUL_DAYS
 * later, and back in play if found in between. Before, such a question was forecast until its
 * scheduled close, reported skipped at every sync forever, and never resolved.
 *
 * Each sync runs in-process (syncAll, the real warehouse) against a loopback Manifold replay: its
 * `GET /v0/markets` listing and `GET /v0/market/{id}` lookup (https://docs.manifold.markets/api;
 * LiteMarket fields as in test/fixtures/venues/manifold, a 404 `{"message": "Contract not found"}`
 * for an unknown id, as Manifold answers).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseForecastBench } from '../../pipeline/import/forecastbench.ts';
import { writeImportBatch } from '../../pipeline/import/write-batch.ts';
import { silentLogger } from '../../pipeline/log.ts';
import { syncAll, type SyncReport } from '../../pipeline/sync.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { newRunId, runDate } from '../../pipeline/warehouse/layout.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const market = JSON.parse(readFileSync(new URL('../fixtures/venues/manifold/markets-page-1.json', import.meta.url), 'utf8'))[0];
const QID = `manifold:${market.id}`;
const DAY = 86_400_000;
const t0 = new Date('2025-11-15T12:00:00Z'); // the market's close (2026-01-29) is ahead

/** What the venue says of the market now: listed and found, or unknown (404). */
let listed: 'listed' | 'gone';
let server: ReplayServer;
let tmp: ReturnType<typeof tempDir>;

beforeEach(async () => {
  listed = 'listed';
  tmp = tempDir('quorum-removed-market-');
  server = await startReplayServer([
    { path: '/v0/markets', query: { before: null }, responses: () => json(listed === 'listed' ? [market] : []) },
    { path: '/v0/markets', responses: [json([])] },
    { path: /^\/v0\/market\/[^/]+$/, responses: () => (listed === 'listed' ? json(market) : json({ message: 'Contract not found' }, 404)) },
  ]);
});

afterEach(async () => {
  await server.close();
  tmp.cleanup();
});

async function syncAt(now: Date, env: Record<string, string> = {}): Promise<SyncReport> {
  return withConnection((conn) =>
    syncAll(conn, {
      root: join(tmp.dir, 'data'),
      questionsDir: join(tmp.dir, 'questions'),
      now,
      logger: silentLogger(),
      env: { QUORUM_VENUES: 'manifold', QUORUM_MANIFOLD_URL: `${server.url}/v0`, QUORUM_MANIFOLD_RPS: '1000', QUORUM_VENUE_RETRIES: '0', ...env },
      partition: { runId: newRunId(now), runDate: runDate(now) },
    }),
  );
}

/** The raw rows of question `q`, oldest first. */
async function stored(q = QID) {
  return withConnection(async (conn) => {
    await createRawViews(conn, join(tmp.dir, 'data'));
    const rows = async (sql: string) => (await conn.runAndReadAll(sql, { q })).getRowObjectsJS();
    return {
      lifecycle: await rows(`SELECT state, strftime("at", '%Y-%m-%dT%H:%M:%SZ') AS at, reason FROM raw_lifecycle_events WHERE question_id = $q ORDER BY "at", state`),
      closes: (await rows(`SELECT strftime(close_time, '%Y-%m-%dT%H:%M:%SZ') AS close FROM raw_questions WHERE question_id = $q ORDER BY ingested_at`)).map((r) => r['close']),
      resolutions: await rows(`SELECT outcome, strftime(resolved_at, '%Y-%m-%dT%H:%M:%SZ') AS resolved_at, source_slug, method, annulled_reason FROM raw_resolutions WHERE question_id = $q ORDER BY retrieved_at`),
    };
  });
}

const warnings = (r: SyncReport) => r.sources.find((s) => s.source === 'venue:manifold')!.warnings;

describe('a tracked market the venue answers "not found" for', () => {
  it('is closed at once, left alone within the grace days, then annulled once; the report says each step', async () => {
    await syncAt(t0);
    listed = 'gone';
    const t1 = new Date(t0.getTime() + DAY);
    const first = await syncAt(t1);
    expect(warnings(first)).toEqual([
      `1 tracked market not found on Manifold, closed now (annulled if still not found after 7 days, QUORUM_REMOVED_MARKET_ANNUL_DAYS): ${QID}`,
    ]);
    let s = await stored();
    expect(s.closes).toEqual(['2026-01-29T00:00:00Z', '2025-11-16T12:00:00Z']); // no run forecasts it any more
    expect(s.lifecycle.at(-1)).toEqual({
      state: 'closed',
      at: '2025-11-16T12:00:00Z',
      reason: `removed from Manifold: the venue answers "not found" for market ${market.id} (annulled if still not found after 7 days)`,
    });
    const events = s.lifecycle.length;

    // Within the grace days: nothing new but the skip.
    const waiting = await syncAt(new Date(t1.getTime() + 3 * DAY));
    expect(warnings(waiting)).toEqual([]);
    expect(waiting.sources.find((x) => x.source === 'venue:manifold')!.skipped_reasons).toEqual([{ reason: 'tracked market not found on Manifold', count: 1 }]);
    s = await stored();
    expect(s.lifecycle).toHaveLength(events);
    expect(s.resolutions).toEqual([]);

    const annulled = await syncAt(new Date(t1.getTime() + 7 * DAY));
    expect(warnings(annulled)).toEqual([`1 tracked market annulled, still not found on Manifold 7 days or more after the first time: ${QID}`]);
    s = await stored();
    const reason = `removed from Manifold: market ${market.id} not found since 2025-11-16T12:00:00.000Z, and still not found 7 days later`;
    expect(s.resolutions).toEqual([{ outcome: null, resolved_at: '2025-11-23T12:00:00Z', source_slug: 'manifold', method: 'manifold:removed', annulled_reason: reason }]);
    expect(s.lifecycle.at(-1)).toEqual({ state: 'annulled', at: '2025-11-23T12:00:00Z', reason });

    // Still rechecked for an amendment (QUORUM_RESOLUTION_RECHECK_DAYS), still not found: annulled once.
    const after = await syncAt(new Date(t1.getTime() + 8 * DAY));
    expect(warnings(after)).toEqual([]);
    s = await stored();
    expect(s.resolutions).toHaveLength(1);
    expect(s.lifecycle.at(-1)!['state']).toBe('annulled');
  });

  it('found again within the grace days, is active again and its count starts over', async () => {
    await syncAt(t0);
    listed = 'gone';
    const t1 = new Date(t0.getTime() + DAY);
    await syncAt(t1);
    listed = 'listed';
    const back = await syncAt(new Date(t1.getTime() + 2 * DAY));
    expect(warnings(back)).toEqual([]);
    let s = await stored();
    expect(s.closes.at(-1)).toBe('2026-01-29T00:00:00Z'); // its close is the venue's again
    expect(s.lifecycle.at(-1)).toMatchObject({ state: 'active', at: '2025-11-18T12:00:00Z' });

    // Gone again 8 days after the first miss: closed again, not annulled (nothing heard counts from now).
    listed = 'gone';
    const again = await syncAt(new Date(t1.getTime() + 8 * DAY));
    expect(warnings(again)[0]).toMatch(/^1 tracked market not found on Manifold, closed now/);
    s = await stored();
    expect(s.resolutions).toEqual([]);
    expect(s.lifecycle.at(-1)).toMatchObject({ state: 'closed', at: '2025-11-24T12:00:00Z' });
  });

  it('closed on the venue before it went missing: its close stays, and found again (still closed) its count starts over', async () => {
    await syncAt(t0);
    const t1 = new Date('2026-02-01T12:00:00Z'); // past its close: closed on Manifold, awaiting resolution
    await syncAt(t1);
    listed = 'gone';
    await syncAt(new Date(t1.getTime() + DAY));
    let s = await stored();
    expect(s.closes.at(-1)).toBe('2026-01-29T00:00:00Z'); // closed already: no version moves it
    expect(s.lifecycle.at(-1)).toMatchObject({ state: 'closed', at: '2026-02-02T12:00:00Z' });
    listed = 'listed';
    await syncAt(new Date(t1.getTime() + 2 * DAY));
    s = await stored();
    expect(s.lifecycle.at(-1)).toEqual({ state: 'closed', at: '2026-02-03T12:00:00Z', reason: 'found again on Manifold (closed on Manifold, not yet resolved)' });
    listed = 'gone';
    await syncAt(new Date(t1.getTime() + 9 * DAY));
    s = await stored();
    expect(s.resolutions).toEqual([]);
    expect(s.lifecycle.at(-1)!['reason']).toMatch(/^removed from Manifold: /);
  });

  it('a `closed` event an older version dated at the scheduled close, still ahead, hides no removal: closed once, then annulled (upgrade)', async () => {
    await syncAt(t0);
    // Versions before closedAt (pipeline/venues/core.ts, 2026-11-27) recorded a market the venue
    // called closed at `m.close_time ?? now`: one closed early (Kalshi's status, Polymarket's
    // `closed`) kept a `closed` event dated at its scheduled close, weeks ahead. Written here as
    // such a version's sync wrote it, in a partition of its own.
    const older = new Date(t0.getTime() + 3_600_000);
    await withConnection((conn) =>
      appendRaw(conn, join(tmp.dir, 'data'), 'lifecycle_events', [
        { question_id: QID, state: 'closed', at: new Date(market.closeTime), reason: 'closed on Manifold, not yet resolved' },
      ], { runId: newRunId(older), runDate: runDate(older) }),
    );
    listed = 'gone';
    const t1 = new Date(t0.getTime() + DAY);
    expect(warnings(await syncAt(t1))[0]).toMatch(/^1 tracked market not found on Manifold, closed now/);
    const events = (await stored()).lifecycle.length;

    // Within the grace days: waiting, not closed again at every sync (QA upgrade pass: the future
    // `closed` event read as the latest, so the removal was never seen and never ended in an annulment).
    const waiting = await syncAt(new Date(t1.getTime() + 3 * DAY));
    expect(warnings(waiting)).toEqual([]);
    expect((await stored()).lifecycle).toHaveLength(events);

    const annulled = await syncAt(new Date(t1.getTime() + 7 * DAY));
    expect(warnings(annulled)).toEqual([`1 tracked market annulled, still not found on Manifold 7 days or more after the first time: ${QID}`]);
    expect((await stored()).resolutions).toMatchObject([{ outcome: null, resolved_at: '2025-11-23T12:00:00Z', method: 'manifold:removed' }]);
  });

  it('imported from ForecastBench (its rounds resolve it), it is only skipped, however long it stays missing', async () => {
    const dir = new URL('../fixtures/forecastbench/valid/', import.meta.url).pathname;
    await withConnection(async (conn) => writeImportBatch(conn, join(tmp.dir, 'data'), await parseForecastBench(dir, { now: t0 }), t0));
    const imported = 'manifold:hkmwaaZrisxgrs5Q3zGz'; // unresolved in the fixture's resolutions
    const before = await stored(imported);
    listed = 'gone';
    for (const days of [1, 9, 20]) {
      const r = await syncAt(new Date(t0.getTime() + days * DAY));
      expect(r.sources.find((x) => x.source === 'venue:manifold')!.skipped_examples).toEqual(['hkmwaaZrisxgrs5Q3zGz: tracked market not found on Manifold']);
      expect(warnings(r)).toEqual([]);
    }
    expect(await stored(imported)).toEqual(before);
  });

  it('QUORUM_REMOVED_MARKET_ANNUL_DAYS=0 annuls at the next sync that still finds nothing, never at the first', async () => {
    await syncAt(t0);
    listed = 'gone';
    const env = { QUORUM_REMOVED_MARKET_ANNUL_DAYS: '0' };
    await syncAt(new Date(t0.getTime() + DAY), env);
    expect((await stored()).resolutions).toEqual([]);
    await syncAt(new Date(t0.getTime() + DAY + 60_000), env);
    expect((await stored()).resolutions.map((r) => r['method'])).toEqual(['manifold:removed']);
  });

  it('a bad QUORUM_REMOVED_MARKET_ANNUL_DAYS is refused naming the variable', async () => {
    await expect(syncAt(t0, { QUORUM_REMOVED_MARKET_ANNUL_DAYS: '-1' })).rejects.toThrow(/QUORUM_REMOVED_MARKET_ANNUL_DAYS/);
  });
});
