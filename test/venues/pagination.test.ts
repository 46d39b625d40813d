/**
 * Discovery pagination that does not end by itself, against loopback replays of the venues: a
 * next-page cursor leading back to a page already read (Kalshi repeating its cursor, Metaculus
 * `next` pointing at itself, Manifold's `before` repeating) fails the venue after the repeated
 * page, keeping what was read and counting each skipped item once; a discovery stopped at the page
 * cap while the venue has more says so in `warnings`; a skipped item that reappears on a later
 * page (offsets shifting) is counted once.
 */
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createKalshiAdapter } from '../../pipeline/venues/kalshi.ts';
import { createManifoldAdapter } from '../../pipeline/venues/manifold.ts';
import { createMetaculusAdapter } from '../../pipeline/venues/metaculus.ts';
import { createPolymarketAdapter } from '../../pipeline/venues/polymarket.ts';
import { VenueSyncError, type VenueAdapter, type VenueSyncContext } from '../../pipeline/venues/types.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';

const fx = (venue: string, name: string) => JSON.parse(readFileSync(new URL(`../fixtures/venues/${venue}/${name}`, import.meta.url), 'utf8'));
const FAST = { requestsPerInterval: 1000, intervalMs: 1000, retries: 0, backoffMs: 5, timeoutMs: 5000 };
const logger = pino({ level: 'silent' });
const now = new Date('2025-11-15T12:00:00Z');
const ctx = (): VenueSyncContext => ({ now, filters: {}, tracked: [], logger });

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The VenueSyncError a sync fails with (the test fails if it succeeds). */
async function failure(adapter: VenueAdapter): Promise<VenueSyncError> {
  const err = await adapter.sync(ctx()).then(
    (r) => new Error(`sync succeeded after ${r.requests} requests`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VenueSyncError);
  return err as VenueSyncError;
}

describe('pagination loops fail the venue after the repeated page', () => {
  it('Kalshi answering the same cursor again', async () => {
    const page1 = fx('kalshi', 'markets-page-1.json'); // 2 open binary markets, 2 skipped (scalar, unknown status)
    server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json(page1)] }]);
    const err = await failure(createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST }));
    expect(err.message).toMatch(/pagination loop: Kalshi's next page .* is one already read; discovery stopped after 2 pages/);
    expect(server.log).toHaveLength(2);
    expect(err.partial.questions).toHaveLength(2);
    // Each skipped market once, not once per page.
    expect(err.partial.skipped.map((s) => s.venue_market_id).sort()).toEqual(['KXBTC-25DEC31-B100000', 'KXHIGHNY-25DEC31-T45']);
    expect(err.partial.markets_seen).toBe(4);
  });

  it('Metaculus `next` pointing at the page itself (its parameters in another order)', async () => {
    const page1 = fx('metaculus', 'posts-page-1.json');
    const self = { ...page1, next: 'https://www.metaculus.com/api/posts/?with_cp=true&order_by=-hotness&offset=0&limit=4&statuses=open&forecast_type=binary' };
    server = await startReplayServer([{ path: '/api/posts/', responses: [json(self)] }]);
    const err = await failure(createMetaculusAdapter({ baseUrl: `${server.url}/api`, pageSize: 4, clientOptions: FAST }));
    expect(err.message).toMatch(/pagination loop: Metaculus's next page .* discovery stopped after 1 page\b/);
    expect(server.log).toHaveLength(1);
    expect(err.partial.questions.length).toBeGreaterThan(0);
  });

  it("Manifold's `before` cursor repeating", async () => {
    const open = (id: string) => ({ ...fx('manifold', 'markets-page-1.json')[0], id, closeTime: now.getTime() + 30 * 86_400_000 });
    server = await startReplayServer([{ path: '/v0/markets', responses: [json([open('LoopA'), open('LoopB')])] }]);
    const err = await failure(createManifoldAdapter({ baseUrl: `${server.url}/v0`, pageSize: 2, clientOptions: FAST }));
    expect(err.message).toMatch(/pagination loop: Manifold's next page \(LoopB\) is one already read; discovery stopped after 2 pages/);
    expect(server.log.map((e) => e.query.get('before'))).toEqual([null, 'LoopB']);
    expect(err.partial.questions.map((q) => q.venue_market_id)).toEqual(['LoopA', 'LoopB']);
  });
});

describe('the page cap', () => {
  it('a discovery stopped at the cap with more pages to read warns; one that ends before it does not', async () => {
    const template = fx('manifold', 'markets-page-1.json')[0];
    // An endless listing: every page is full and continues where the last one ended.
    server = await startReplayServer([
      {
        path: '/v0/markets',
        responses: (req) => {
          const after = Number((req.query.get('before') ?? 'Cap0').slice(3));
          return json([1, 2].map((k) => ({ ...template, id: `Cap${after + k}`, closeTime: now.getTime() + 30 * 86_400_000 })));
        },
      },
    ]);
    const capped = await createManifoldAdapter({ baseUrl: `${server.url}/v0`, pageSize: 2, maxPages: 3, clientOptions: FAST }).sync(ctx());
    expect(server.log).toHaveLength(3);
    expect(capped.questions).toHaveLength(6);
    expect(capped.warnings).toEqual([expect.stringMatching(/^discovery stopped at the page cap \(3 pages, QUORUM_VENUE_MAX_PAGES\): Manifold has more markets than were read$/)]);

    const roomy = await createManifoldAdapter({ baseUrl: `${server.url}/v0`, pageSize: 3, maxPages: 3, clientOptions: FAST }).sync(ctx());
    expect(roomy.warnings).toEqual([]); // a short first page ended it
  });
});

describe('skipped items', () => {
  it('an unreadable item on two offset pages is skipped and seen once', async () => {
    const [a, b] = fx('polymarket', 'markets-offset-0.json');
    const garbage = { garbage: true }; // no id at all
    server = await startReplayServer([
      { path: '/markets', query: { offset: '0' }, responses: [json([garbage, a])] },
      { path: '/markets', query: { offset: '2' }, responses: [json([garbage, b])] },
      { path: '/markets', responses: [json([])] },
    ]);
    const r = await createPolymarketAdapter({ gammaUrl: server.url, pageSize: 2, clientOptions: FAST }).sync(ctx());
    expect(server.log.map((e) => e.query.get('offset'))).toEqual(['0', '2', '4']);
    expect(r.skipped.filter((s) => s.venue_market_id === null)).toHaveLength(1);
    expect(r.markets_seen).toBe(3);
  });
});
