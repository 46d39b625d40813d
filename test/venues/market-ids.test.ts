/**
 * A venue market id becomes the question id (`<venue>:<id>`), and the API's list cursors carry
 * question ids (api/http/cursor.ts: at most 1,024 characters). An id the venue sends over 200
 * characters, or with a control character in it, is skipped with a counted reason, as the
 * ForecastBench import refuses such ids (pipeline/questions/market-id.ts, the grammar both share):
 * before, a 5,000-character conditionId or a ticker with a newline became a question whose
 * cursors the API then refused.
 *
 * Payload shapes are the repository's fixtures, modelled on the venues' documented listings:
 * Polymarket Gamma `GET /markets` (https://docs.polymarket.com/developers/gamma-markets-api/get-markets:
 * `conditionId` a string, `outcomes`/`outcomePrices` JSON-encoded strings), Kalshi `GET /markets`
 * (https://docs.kalshi.com/api-reference/market/get-markets: `{markets, cursor}`, `ticker` a string)
 * and Manifold `GET /v0/markets` (https://docs.manifold.markets/api, LiteMarket: `id` a string,
 * times in epoch ms). Each sync runs in-process against the loopback replay server.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createKalshiAdapter } from '../../pipeline/venues/kalshi.ts';
import { createManifoldAdapter } from '../../pipeline/venues/manifold.ts';
import { createPolymarketAdapter } from '../../pipeline/venues/polymarket.ts';
import type { VenueSyncContext, VenueSyncResult } from '../../pipeline/venues/types.ts';
import { silentLogger } from '../../pipeline/log.ts';
import { syncAll } from '../../pipeline/sync.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { newRunId, runDate } from '../../pipeline/warehouse/layout.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';

const fx = (venue: string, name: string) => JSON.parse(readFileSync(new URL(`../fixtures/venues/${venue}/${name}`, import.meta.url), 'utf8'));
const FAST = { requestsPerInterval: 1000, intervalMs: 1000, retries: 0, backoffMs: 5, timeoutMs: 5000 };
const now = new Date('2025-11-15T12:00:00Z');
const ctx = (): VenueSyncContext => ({ now, filters: {}, tracked: [], logger: pino({ level: 'silent' }) });

const LONG = 'x'.repeat(5_000);
const AT_LIMIT = 'y'.repeat(200);

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const reasons = (r: VenueSyncResult) => r.skipped.map((s) => s.reason).sort();

describe('venue market ids the API could not page past are skipped', () => {
  it('Polymarket: a 5,000-character conditionId and one with a newline are skipped; one of 200 is kept', async () => {
    const open = fx('polymarket', 'markets-offset-0.json')[0];
    const page = [
      { ...open, conditionId: LONG },
      { ...open, conditionId: '0xabc\ndef' },
      { ...open, conditionId: AT_LIMIT },
    ];
    server = await startReplayServer([{ path: '/markets', responses: [json(page)] }]);
    const r = await createPolymarketAdapter({ gammaUrl: server.url, pageSize: 100, clientOptions: FAST }).sync(ctx());
    expect(r.questions.map((q) => q.question_id)).toEqual([`polymarket:${AT_LIMIT}`]);
    expect(r.market_prices.map((p) => p.question_id)).toEqual([`polymarket:${AT_LIMIT}`]);
    expect(r.lifecycle_events.map((e) => e.question_id)).toEqual([`polymarket:${AT_LIMIT}`]);
    expect(reasons(r)).toEqual(['market id has a control character', 'market id over 200 characters']);
    expect(r.markets_seen).toBe(3);
  });

  it('Kalshi: a ticker with a control character is skipped; the rest of the page is kept', async () => {
    const body = fx('kalshi', 'markets-page-1.json');
    const first = { ...body.markets[0], close_time: '2026-01-28T19:00:00Z' };
    const page = { markets: [{ ...first, ticker: 'KXFED-26JAN\u0000C25' }, { ...first, ticker: `KX-${LONG}` }, first], cursor: '' };
    server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json(page)] }]);
    const r = await createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST }).sync(ctx());
    expect(r.questions.map((q) => q.question_id)).toEqual([`kalshi:${first.ticker}`]);
    expect(reasons(r)).toEqual(['market id has a control character', 'market id over 200 characters']);
  });

  it('Manifold: an id over 200 characters, with a tab, or with a character no API path takes is skipped, neither a question nor priced', async () => {
    const first = fx('manifold', 'markets-page-1.json')[0];
    // A space or a '/': no path or question_id filter of the API could name such a question (QA).
    const page = [{ ...first, id: LONG }, { ...first, id: 'tab\tid' }, { ...first, id: 'with space' }, { ...first, id: 'a/b' }];
    server = await startReplayServer([{ path: '/v0/markets', responses: [json(page)] }]);
    const r = await createManifoldAdapter({ baseUrl: `${server.url}/v0`, pageSize: 1000, clientOptions: FAST }).sync(ctx());
    expect(r.questions).toEqual([]);
    expect(r.market_prices).toEqual([]);
    expect(r.skipped.map((s) => s.venue_market_id!.length)).toEqual([LONG.length, 6, 10, 3]);
    expect(reasons(r)).toEqual([
      "market id has a character other than letters, digits, '_', '.' and '-'",
      "market id has a character other than letters, digits, '_', '.' and '-'",
      'market id has a control character',
      'market id over 200 characters',
    ]);
  });
});

describe('the sync report of such a market', () => {
  it('counts it under its reason, writes no question of it, and keeps a 5,000-character id out of the examples', async () => {
    const open = fx('polymarket', 'markets-offset-0.json')[0];
    server = await startReplayServer([{ path: '/markets', responses: [json([{ ...open, conditionId: LONG }, { ...open, conditionId: `${LONG}z` }])] }]);
    const tmp = tempDir('quorum-market-ids-');
    try {
      const dataDir = join(tmp.dir, 'data');
      const report = await withConnection((conn) =>
        syncAll(conn, {
          root: dataDir,
          questionsDir: join(tmp.dir, 'questions'),
          now,
          logger: silentLogger(),
          env: { QUORUM_VENUES: 'polymarket', QUORUM_POLYMARKET_GAMMA_URL: server!.url, QUORUM_VENUE_RETRIES: '0', QUORUM_BACKFILL_MAX_MARKETS: '0' },
          partition: { runId: newRunId(now), runDate: runDate(now) },
        }),
      );
      const venue = report.sources.find((s) => s.source === 'venue:polymarket')!;
      expect(venue).toMatchObject({ ok: true, markets: 2, skipped: 2, written: {}, skipped_reasons: [{ reason: 'market id over 200 characters', count: 2 }] });
      expect(venue.skipped_examples).toEqual([`${'x'.repeat(199)}…: market id over 200 characters`, `${'x'.repeat(199)}…: market id over 200 characters`]);
      expect(existsSync(join(dataDir, 'raw', 'questions'))).toBe(false);
    } finally {
      tmp.cleanup();
    }
  });
});
