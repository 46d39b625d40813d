/**
 * Venue payloads that pass the schemas but carry nothing usable, through the adapters in-process
 * against the loopback replay server.
 *
 * Blank titles: Manifold's own create-market schema takes any `question` of at least one character,
 * untrimmed (manifoldmarkets/manifold common/src/api/market-types.ts, `createMarketProps`:
 * `question: z.string().min(1).max(MAX_QUESTION_LENGTH)`), so a market titled " " can be listed;
 * Kalshi's `title`, Gamma's `question` and Metaculus's post `title` are plain strings too
 * (https://docs.kalshi.com/api-reference/market/get-markets,
 * https://docs.polymarket.com/developers/gamma-markets-api/get-markets). Before, such a market
 * became a question with an empty title (trimmed), which the ForecastBench import and the question
 * files refuse; now it is skipped with a counted reason.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createKalshiAdapter } from '../../pipeline/venues/kalshi.ts';
import { createManifoldAdapter } from '../../pipeline/venues/manifold.ts';
import { createMetaculusAdapter } from '../../pipeline/venues/metaculus.ts';
import { createPolymarketAdapter } from '../../pipeline/venues/polymarket.ts';
import { VenueSyncError, type VenueSyncContext } from '../../pipeline/venues/types.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';

const fx = (venue: string, name: string) => JSON.parse(readFileSync(new URL(`../fixtures/venues/${venue}/${name}`, import.meta.url), 'utf8'));
const FAST = { requestsPerInterval: 1000, intervalMs: 1000, retries: 0, backoffMs: 5, timeoutMs: 5000 };
const now = new Date('2025-11-15T12:00:00Z');
const ctx = (over: Partial<VenueSyncContext> = {}): VenueSyncContext => ({ now, filters: {}, tracked: [], logger: pino({ level: 'silent' }), ...over });

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a market without a title is no question', () => {
  it('Manifold: " " and a zero-width space are skipped as empty titles; the titled market is kept', async () => {
    const first = fx('manifold', 'markets-page-1.json')[0];
    const page = [{ ...first, id: 'blank00001', question: ' ' }, { ...first, id: 'zwsp000001', question: '\u200b\n' }, first];
    server = await startReplayServer([{ path: '/v0/markets', responses: [json(page)] }]);
    const r = await createManifoldAdapter({ baseUrl: `${server.url}/v0`, clientOptions: FAST }).sync(ctx());
    expect(r.questions.map((q) => q.venue_market_id)).toEqual([first.id]);
    expect(r.skipped).toEqual([
      { venue: 'manifold', venue_market_id: 'blank00001', reason: 'empty title' },
      { venue: 'manifold', venue_market_id: 'zwsp000001', reason: 'empty title' },
    ]);
  });

  it('Kalshi, Polymarket and Metaculus: a whitespace title is skipped the same way', async () => {
    const k = { ...fx('kalshi', 'markets-page-1.json').markets[0], title: ' \t ' };
    const p = { ...fx('polymarket', 'markets-offset-0.json')[0], question: '  ' };
    const post = fx('metaculus', 'posts-page-1.json').results[0];
    const mt = { ...post, title: ' ', question: { ...post.question, title: '' } };
    server = await startReplayServer([
      { path: '/trade-api/v2/markets', responses: [json({ markets: [k], cursor: '' })] },
      { path: '/markets', responses: [json([p])] },
      { path: '/api/posts/', responses: [json({ next: null, results: [mt] })] },
    ]);
    const results = await Promise.all([
      createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST }).sync(ctx()),
      createPolymarketAdapter({ gammaUrl: server.url, clientOptions: FAST }).sync(ctx()),
      createMetaculusAdapter({ baseUrl: `${server.url}/api`, clientOptions: FAST }).sync(ctx()),
    ]);
    for (const r of results) {
      expect(r.questions).toEqual([]);
      expect(r.market_prices).toEqual([]);
      expect(r.skipped.map((s) => s.reason)).toEqual(['empty title']);
    }
  });
});

/**
 * Manifold close times far ahead: its create-market form lets a creator pick any close date up to
 * 9999-12-31 (manifoldmarkets/manifold web/components/new-contract/close-time-section.tsx: the date
 * input's `max="9999-12-31"`; `updateMarketProps.closeTime` is any number), and LiteMarket times
 * are epoch milliseconds (common/src/api/market-types.ts). Before, the schema capped epoch ms at
 * 9,999,999,999,999 (year 2286): such a market was skipped as "schema: closeTime", and a tracked
 * one whose creator extended its close that far went unpriced every sync. Microseconds (16 digits
 * for any time since 1990) are still refused.
 */
describe('a venue whose every item fails its schema (its API changed shape)', () => {
  it('is ok with a warning saying so, naming the first reason; one readable item among them: no warning', async () => {
    const first = fx('manifold', 'markets-page-1.json')[0];
    // the shape of a renamed field: every market lacks `question`
    const drifted = [0, 1, 2].map((i) => ({ ...first, id: `drift0000${i}`, question: undefined, title: first.question }));
    server = await startReplayServer([{ path: '/v0/markets', responses: [json(drifted)] }]);
    const r = await createManifoldAdapter({ baseUrl: `${server.url}/v0`, clientOptions: FAST }).sync(ctx());
    expect(r.questions).toEqual([]);
    expect(r.skipped).toHaveLength(3);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/^every item Manifold returned \(3\) failed its schema \(the first: schema: question[^)]*\): its API may have changed, and nothing of it was read$/);
    await server.close();
    server = await startReplayServer([{ path: '/v0/markets', responses: [json([...drifted, first])] }]);
    const ok = await createManifoldAdapter({ baseUrl: `${server.url}/v0`, clientOptions: FAST }).sync(ctx());
    expect(ok.questions.map((q) => q.venue_market_id)).toEqual([first.id]);
    expect(ok.warnings).toEqual([]);
  });
});

describe('Manifold epoch milliseconds up to the year 9999', () => {
  it('a market closing 9999-12-31 is a question with that close; a tracked one extended to 2500 is priced; microseconds are refused', async () => {
    const [first, second] = fx('manifold', 'markets-page-1.json');
    const far = Date.UTC(9999, 11, 31, 23, 59);
    const ext = Date.UTC(2500, 0, 1);
    const page = [
      { ...first, closeTime: far },
      { ...second, outcomeType: 'BINARY', isResolved: false, probability: 0.4, closeTime: ext },
      { ...first, id: 'micro00001', closeTime: first.closeTime * 1000 },
    ];
    server = await startReplayServer([{ path: '/v0/markets', responses: [json(page)] }]);
    const tracked = [{ question_id: `manifold:${second.id}`, venue_market_id: second.id, close_time: new Date(second.closeTime) }];
    const r = await createManifoldAdapter({ baseUrl: `${server.url}/v0`, clientOptions: FAST }).sync(ctx({ tracked }));
    expect(r.questions.map((q) => [q.venue_market_id, q.close_time])).toEqual([[first.id, new Date(far)]]);
    expect(r.market_prices.map((p) => p.question_id).sort()).toEqual([`manifold:${first.id}`, `manifold:${second.id}`].sort());
    expect(r.close_time_changes).toEqual([{ question_id: `manifold:${second.id}`, close_time: new Date(ext) }]);
    expect(r.skipped).toEqual([{ venue: 'manifold', venue_market_id: 'micro00001', reason: 'schema: closeTime: expected epoch milliseconds' }]);
  });
});

/**
 * Huge pages: a venue page is a few MB at most (Kalshi's 1,000 markets a page, limit's documented
 * maximum, https://docs.kalshi.com/api-reference/market/get-markets), but nothing bounded what the
 * client read of a 2xx body: a venue or proxy streaming without end, or a small gzip body that
 * inflates to gigabytes, was read into memory until the deadline or V8's string limit, then
 * retried. The client now stops reading at `maxBodyBytes` (64 MiB by default; decoded bytes for a
 * compressed body) and fails the request at once as `invalid_payload`, not retried.
 */
describe('a page over the body cap', () => {
  const page = fx('kalshi', 'markets-page-1.json');
  const big = { markets: Array.from({ length: 200 }, (_, i) => ({ ...page.markets[0], ticker: `KXBIG-${i}` })), cursor: '' };
  const opts = (url: string) => ({ baseUrl: `${url}/trade-api/v2`, clientOptions: { ...FAST, retries: 2, maxBodyBytes: 64 * 1024 } });

  it('fails the venue after one request, naming the cap; a page under it is read', async () => {
    server = await startReplayServer([
      { path: '/trade-api/v2/markets', responses: [json(big)] },
    ]);
    const err = await createKalshiAdapter(opts(server.url)).sync(ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VenueSyncError);
    expect((err as VenueSyncError).kind).toBe('invalid_payload');
    expect((err as VenueSyncError).message).toContain('body over 65536 bytes');
    expect(server.log).toHaveLength(1);
    await server.close();
    server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json({ markets: page.markets.slice(0, 2), cursor: '' })] }]);
    const r = await createKalshiAdapter(opts(server.url)).sync(ctx());
    expect(r.markets_seen).toBe(2);
  });

  it('still reads a page that starts with a UTF-8 byte order mark, plain or gzipped', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ markets: page.markets.slice(0, 2), cursor: '' }))]);
    server = await startReplayServer([
      { path: '/trade-api/v2/markets', query: { status: 'open' }, responses: [{ body }, { body: gzipSync(body), headers: { 'content-encoding': 'gzip' } }] },
    ]);
    for (let i = 0; i < 2; i++) expect((await createKalshiAdapter(opts(server.url)).sync(ctx())).markets_seen).toBe(2);
  });

  it('counts a gzip body by what it inflates to', async () => {
    const bomb = gzipSync(Buffer.from(JSON.stringify({ markets: [], cursor: 'x'.repeat(2_000_000) })));
    expect(bomb.length).toBeLessThan(64 * 1024);
    server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [{ body: bomb, headers: { 'content-encoding': 'gzip' } }] }]);
    const err = await createKalshiAdapter(opts(server.url)).sync(ctx()).catch((e: unknown) => e);
    expect((err as VenueSyncError).message).toContain('body over 65536 bytes');
    expect(server.log).toHaveLength(1);
  });
});

/**
 * The sync report groups skipped items by reason, "the market id left out" (pipeline/sync.ts,
 * skipped_reasons). A failed price-history request's reason carried the request's URL, whose
 * `market` is the market's YES token id (the CLOB's prices-history, `{"history":[{"t","p"}]}`,
 * https://docs.polymarket.com/developers/CLOB/timeseries): every gap had a reason of its own, so a
 * CLOB outage read as five reasons counted once each, the rest not shown. The reason is now the
 * failure without the URL.
 */
describe('a failed price-history request', () => {
  it('skips each gap under one reason, without the URL or token in it', async () => {
    const open = fx('polymarket', 'markets-offset-0.json')[0];
    const markets = [1, 2, 3].map((k) => ({ ...open, conditionId: `0x${'e'.repeat(63)}${k}`, clobTokenIds: JSON.stringify([`77${k}1`, `77${k}2`]) }));
    server = await startReplayServer([
      { path: '/markets', responses: [json(markets)] },
      { path: '/prices-history', responses: [{ status: 500, body: { error: 'internal' } }] },
    ]);
    const tracked = markets.map((m) => ({ question_id: `polymarket:${m.conditionId}`, venue_market_id: m.conditionId, last_observed_at: new Date(now.getTime() - 30 * 3_600_000) }));
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, clobUrl: server.url, clientOptions: FAST, backfill: { maxFailures: 10 } });
    const r = await adapter.sync(ctx({ tracked }));
    expect(r.market_prices).toHaveLength(3);
    expect(r.skipped.map((s) => [s.venue_market_id, s.reason])).toEqual(markets.map((m) => [m.conditionId, 'price history not backfilled: server_error: HTTP 500']));
  });
});

/**
 * Gamma lists sports markets with the teams as outcomes (`outcomes` "[\"Lakers\", \"Celtics\"]",
 * https://docs.polymarket.com/developers/gamma-markets-api/get-markets: a JSON-encoded string
 * array), and they are among its highest-volume markets. Each was skipped with its own reason
 * (`non-binary market: outcomes ["Lakers","Celtics"]`), so the report's skipped_reasons listed five
 * such markets counted once each and hid the rest. They now share one reason, counted together.
 */
describe('Polymarket markets whose outcomes are not Yes/No', () => {
  it('are skipped under one reason', async () => {
    const open = fx('polymarket', 'markets-offset-0.json')[0];
    const games = [['Lakers', 'Celtics'], ['Chiefs', 'Bills'], ['Over', 'Under']].map(([a, b], k) => ({ ...open, conditionId: `0x${'c'.repeat(63)}${k}`, outcomes: JSON.stringify([a, b]) }));
    server = await startReplayServer([{ path: '/markets', responses: [json(games)] }]);
    const r = await createPolymarketAdapter({ gammaUrl: server.url, clientOptions: FAST }).sync(ctx());
    expect(r.skipped.map((s) => s.reason)).toEqual(Array(3).fill('non-binary market: outcomes are not Yes and No'));
  });
});

/**
 * The venue's own type strings (Kalshi `market_type`, documented "binary" | "scalar"; Manifold
 * `outcomeType`; Metaculus question `type`) went into skip reasons as sent, so a control character
 * from a venue reached `quorum sync`'s terminal table. They are now JSON-quoted, as other reasons'
 * venue values are.
 */
describe('venue type strings in skip reasons', () => {
  it('are quoted and escaped', async () => {
    const k = fx('kalshi', 'markets-page-1.json').markets[0];
    const post = fx('metaculus', 'posts-page-1.json').results[0];
    const mf = fx('manifold', 'markets-page-1.json')[0];
    server = await startReplayServer([
      { path: '/trade-api/v2/markets', responses: [json({ markets: [{ ...k, market_type: 'scalar\u001b[2J' }], cursor: '' })] },
      { path: '/api/posts/', responses: [json({ next: null, results: [{ ...post, question: { ...post.question, type: 'numeric\r' } }] })] },
      { path: '/v0/markets', responses: [json([{ ...mf, outcomeType: 'MULTIPLE_CHOICE\n' }])] },
    ]);
    const rs = await Promise.all([
      createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST }).sync(ctx()),
      createMetaculusAdapter({ baseUrl: `${server.url}/api`, clientOptions: FAST }).sync(ctx()),
      createManifoldAdapter({ baseUrl: `${server.url}/v0`, clientOptions: FAST }).sync(ctx()),
    ]);
    expect(rs.map((r) => r.skipped.map((s) => s.reason))).toEqual([
      ['non-binary market: market_type "scalar\\u001b[2J"'],
      ['non-binary question: type "numeric\\r"'],
      ['non-binary market: outcomeType "MULTIPLE_CHOICE\\n"'],
    ]);
  });
});

/**
 * Kalshi's `GET /markets/{ticker}` answers `{"market": {...}}` (https://docs.kalshi.com/api-reference/market/get-market);
 * a `{"market": null}` for a tracked ticker was two skipped items for one market (a schema error
 * without an id, then "not returned"): now one, "tracked market not found on Kalshi", as a 404.
 */
describe('a Kalshi lookup answering {"market": null}', () => {
  it('is one skipped item', async () => {
    server = await startReplayServer([
      { path: '/trade-api/v2/markets', responses: [json({ markets: [], cursor: '' })] },
      { path: /^\/trade-api\/v2\/markets\/.+$/, responses: [json({ market: null })] },
    ]);
    const tracked = [{ question_id: 'kalshi:KXGONE-25DEC31', venue_market_id: 'KXGONE-25DEC31' }];
    const r = await createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST }).sync(ctx({ tracked }));
    expect(r.skipped).toEqual([{ venue: 'kalshi', venue_market_id: 'KXGONE-25DEC31', reason: 'tracked market not found on Kalshi' }]);
  });
});

/**
 * CLOB prices-history points are `{"t": <unix timestamp>, "p": <price>}`
 * (https://docs.polymarket.com/api-reference/markets/get-prices-history: startTs/endTs "unix
 * timestamp", seconds). A history whose `t` is in milliseconds read as a time some 55,000 years
 * ahead, past the gap's end: every point dropped, not even counted. A `t` over 1e11 (1e11 s is the
 * year 5138; 1e11 ms is 1973) is now read as milliseconds.
 */
describe('CLOB price-history points in milliseconds', () => {
  it('fill the gap as seconds do', async () => {
    const open = fx('polymarket', 'markets-offset-0.json')[0];
    const s0 = Math.floor(now.getTime() / 1000) - 10 * 3600;
    const history = [0, 1, 2].map((h) => ({ t: (s0 + h * 3600) * 1000, p: 0.4 + h / 100 }));
    server = await startReplayServer([
      { path: '/markets', responses: [json([open])] },
      { path: '/prices-history', responses: [json({ history })] },
    ]);
    const tracked = [{ question_id: `polymarket:${open.conditionId}`, venue_market_id: open.conditionId, last_observed_at: new Date(now.getTime() - 30 * 3_600_000) }];
    const r = await createPolymarketAdapter({ gammaUrl: server.url, clobUrl: server.url, clientOptions: FAST }).sync(ctx({ tracked }));
    const backfilled = r.market_prices.filter((x) => x.origin?.endsWith('/prices-history'));
    expect(backfilled.map((x) => [x.observed_at!.getTime(), x.probability])).toEqual(history.map((h) => [h.t, h.p]));
    expect(r.skipped).toEqual([]);
  });
});

/**
 * A close time that is present but no time. Every venue documents its close as a timestamp:
 * Gamma's `endDate` an ISO string (https://docs.polymarket.com/developers/gamma-markets-api/get-markets),
 * Kalshi's `close_time` an RFC 3339 date-time (https://docs.kalshi.com/api-reference/market/get-markets),
 * Metaculus's `scheduled_close_time` an ISO string (https://www.metaculus.com/api/, posts), Manifold's
 * `closeTime` epoch ms (https://docs.manifold.markets/api, LiteMarket). A value such as "TBD", a bare
 * "1764547200" or "2025-13-45T00:00:00Z" read as no close at all (null): the market became an
 * active question without a close, forecast until it resolved. Now a new market so is skipped
 * (`unreadable close time`, counted), a tracked one is priced and keeps its stored close; an
 * absent or null close is still no close. (Manifold's schema already refused a non-number.)
 */
describe('an unreadable close time', () => {
  it('skips new markets with it on each venue, keeps a tracked one\'s stored close, and takes an absent close as none', async () => {
    const open = fx('polymarket', 'markets-offset-0.json')[0];
    const pid = (k: number) => `0x${'d'.repeat(63)}${k}`;
    const poly = [
      { ...open, conditionId: pid(1), endDate: 'TBD' },
      { ...open, conditionId: pid(2), endDate: '1764547200' },
      { ...open, conditionId: pid(3), endDate: null },
      { ...open, conditionId: pid(4), endDate: 'soon' }, // tracked
    ];
    const k = fx('kalshi', 'markets-page-1.json').markets[0];
    const post = fx('metaculus', 'posts-page-1.json').results[0];
    const mt = { ...post, scheduled_close_time: 'x', question: { ...post.question, scheduled_close_time: '2025-13-45T00:00:00Z' } };
    const mf = fx('manifold', 'markets-page-1.json')[0];
    server = await startReplayServer([
      { path: '/markets', responses: [json(poly)] },
      { path: '/trade-api/v2/markets', responses: [json({ markets: [{ ...k, close_time: 'soon' }], cursor: '' })] },
      { path: '/api/posts/', responses: [json({ next: null, results: [mt] })] },
      { path: '/v0/markets', responses: [json([{ ...mf, closeTime: '2025-12-01' }])] },
    ]);
    const stored = new Date('2025-12-20T00:00:00Z');
    const tracked = [{ question_id: `polymarket:${pid(4)}`, venue_market_id: pid(4), close_time: stored }];
    const p = await createPolymarketAdapter({ gammaUrl: server.url, clientOptions: FAST }).sync(ctx({ tracked }));
    expect(p.skipped).toEqual([pid(1), pid(2)].map((id) => ({ venue: 'polymarket', venue_market_id: id, reason: 'unreadable close time' })));
    expect(p.questions.map((q) => [q.venue_market_id, q.close_time])).toEqual([[pid(3), null]]);
    expect(p.market_prices.map((r) => r.question_id).sort()).toEqual([`polymarket:${pid(3)}`, `polymarket:${pid(4)}`]);
    expect(p.close_time_changes).toEqual([]);
    const [kr, mr, fr] = await Promise.all([
      createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST }).sync(ctx()),
      createMetaculusAdapter({ baseUrl: `${server.url}/api`, clientOptions: FAST }).sync(ctx()),
      createManifoldAdapter({ baseUrl: `${server.url}/v0`, clientOptions: FAST }).sync(ctx()),
    ]);
    expect(kr.skipped.map((s) => s.reason)).toEqual(['unreadable close time']);
    expect(mr.skipped.map((s) => s.reason)).toEqual(['unreadable close time']);
    expect(fr.skipped.map((s) => s.reason)).toEqual(['schema: closeTime: Invalid input: expected number, received string']);
    for (const r of [kr, mr, fr]) expect(r.questions).toEqual([]);
  });
});
