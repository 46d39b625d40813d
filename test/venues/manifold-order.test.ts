/**
 * Manifold's `/v0/markets` as its own handler serves it (manifoldmarkets/manifold,
 * backend/api/src/markets.ts, `getMarkets`): `before=<id>` keeps the markets created before that
 * market (`created_time < $before`), then orders by `created_time ${order ?? 'asc'}` (a stored
 * version of the handler; another has `?? 'desc'`) and cuts at `limit`. The replay server below
 * answers the same way, over market payloads built on test/fixtures/venues/manifold (LiteMarket,
 * common/src/api/market-types.ts). Before, the adapter left the order to the server: with the
 * ascending default its second page restarted at the oldest markets, so a sync read only the
 * oldest page, and never the newest, open markets, without a word.
 */
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createManifoldAdapter } from '../../pipeline/venues/manifold.ts';
import type { VenueSyncContext } from '../../pipeline/venues/types.ts';
import { json, startReplayServer, type ReplayRequest, type ReplayServer } from '../helpers/replay-server.ts';

const template = JSON.parse(readFileSync(new URL('../fixtures/venues/manifold/markets-page-1.json', import.meta.url), 'utf8'))[0];
const FAST = { requestsPerInterval: 1000, intervalMs: 1000, retries: 0, backoffMs: 5, timeoutMs: 5000 };
const now = new Date('2025-11-15T12:00:00Z');
const ctx = (over: Partial<VenueSyncContext> = {}): VenueSyncContext => ({ now, filters: {}, tracked: [], logger: pino({ level: 'silent' }), ...over });

/** Seven open binary markets, created a day apart (Ord0 the oldest). */
const markets = Array.from({ length: 7 }, (_, i) => ({
  ...template,
  id: `Ord${i}`,
  question: `Ordered market number ${i}?`,
  createdTime: Date.UTC(2025, 0, 1 + i),
  closeTime: now.getTime() + 30 * 86_400_000,
  isResolved: false,
}));

/** `getMarkets` with `default` as the order it takes when none is asked for. */
const manifoldHandler = (fallback: 'asc' | 'desc') => (req: ReplayRequest) => {
  const limit = Number(req.query.get('limit') ?? 500);
  const order = req.query.get('order') ?? fallback;
  const before = req.query.get('before');
  const beforeTime = before ? markets.find((m) => m.id === before)?.createdTime : undefined;
  const rows = markets
    .filter((m) => beforeTime === undefined || m.createdTime < beforeTime)
    .sort((a, b) => (order === 'asc' ? a.createdTime - b.createdTime : b.createdTime - a.createdTime));
  return json(rows.slice(0, limit));
};

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("Manifold discovery pages newest first whatever the server's default order", () => {
  for (const fallback of ['asc', 'desc'] as const) {
    it(`reads every market once when the handler defaults to ${fallback}`, async () => {
      server = await startReplayServer([{ path: '/v0/markets', responses: manifoldHandler(fallback) }]);
      const r = await createManifoldAdapter({ baseUrl: `${server.url}/v0`, pageSize: 3, clientOptions: FAST }).sync(ctx());
      expect(server.log.map((e) => [e.query.get('sort'), e.query.get('order'), e.query.get('before')])).toEqual([
        ['created-time', 'desc', null],
        ['created-time', 'desc', 'Ord4'],
        ['created-time', 'desc', 'Ord1'],
      ]);
      expect(r.questions.map((q) => q.venue_market_id)).toEqual(['Ord6', 'Ord5', 'Ord4', 'Ord3', 'Ord2', 'Ord1', 'Ord0']);
      expect(r.markets_seen).toBe(7);
      expect(r.skipped).toEqual([]);
    });
  }
});
