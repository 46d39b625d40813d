import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { SourceHttpError } from '../../pipeline/sources/http-client.ts';
import { createPolymarketAdapter, normalizePolymarket } from '../../pipeline/venues/polymarket.ts';
import { VenueSyncError, type VenueSyncContext } from '../../pipeline/venues/types.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';

type Gamma = { conditionId: string; closed: boolean; question: string };
const fx = (name: string): Gamma[] => JSON.parse(readFileSync(new URL(`../fixtures/venues/polymarket/${name}`, import.meta.url), 'utf8'));
const page0 = fx('markets-offset-0.json');
const page3 = fx('markets-offset-3.json');
const page6 = fx('markets-offset-6.json');
const tracked = fx('markets-tracked.json');

const FAST = { requestsPerInterval: 1000, intervalMs: 1000, retries: 3, backoffMs: 5, timeoutMs: 5000, maxRetryAfterMs: 5000 };
const logger = pino({ level: 'silent' });
const now = new Date('2025-11-15T12:00:00Z');
const ctx = (over: Partial<VenueSyncContext> = {}): VenueSyncContext => ({ now, filters: {}, tracked: [], logger, ...over });
const T = (n: number) => '0x' + String(n).repeat(32);

/** Gamma's lookup by condition ids, honouring `closed` (absent: open markets only). */
const lookupRoute = {
  path: '/markets',
  query: { offset: null },
  responses: (req: { query: URLSearchParams }) => {
    const ids = req.query.getAll('condition_ids');
    const closed = req.query.get('closed') === 'true';
    return json([...page0, ...tracked].filter((m) => ids.includes(m.conditionId) && m.closed === closed));
  },
};

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('polymarket adapter', () => {
  it('paginates, rides out 429 (Retry-After) / 500 / a truncated body, keeps binary markets, detects final UMA resolutions', async () => {
    server = await startReplayServer([
      { path: '/markets', query: { offset: '0', closed: 'false' }, responses: [{ status: 429, headers: { 'retry-after': '1' }, body: { error: 'Too Many Requests' } }, json(page0)] },
      { path: '/markets', query: { offset: '3' }, responses: [{ status: 500, body: { error: 'internal' } }, json(page3)] },
      { path: '/markets', query: { offset: '6' }, responses: [{ body: page6, truncate: { bytes: 200, mode: 'end' } }, json(page6)] },
      lookupRoute,
    ]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, pageSize: 3, clientOptions: FAST });
    const trackedIds = [page0[0]!.conditionId, T(11), T(22), T(33), T(44), T(55), '0xdeadbeef'];
    const r = await adapter.sync(ctx({ tracked: trackedIds.map((id) => ({ question_id: `polymarket:${id}`, venue_market_id: id })) }));

    // Retry-After: 1 s was obeyed before the first page was fetched again.
    const first = server.log.filter((e) => e.query.get('offset') === '0');
    expect(first.map((e) => e.status)).toEqual([429, 200]);
    expect(first[1]!.at - first[0]!.at).toBeGreaterThanOrEqual(900);
    expect(r.requests).toBe(server.log.length);

    // New questions: the No-first BTC market, the Lakers and Taylor Swift; not the tracked Fed market.
    expect(r.questions.map((q) => q.title)).toEqual([page0[1]!.question, page3[1]!.question, page6[0]!.question]);
    const btc = r.questions[0]!;
    expect(btc).toMatchObject({
      question_id: `polymarket:${page0[1]!.conditionId}`,
      venue: 'polymarket',
      venue_market_id: page0[1]!.conditionId,
      url: 'https://polymarket.com/event/will-bitcoin-reach-150000-by-december-31-2025',
      status: 'active',
      lang: 'en',
      ingested_at: now,
    });
    expect(btc.category).toEqual(expect.any(String));
    expect(Array.isArray(btc.tags)).toBe(true);
    expect(Object.keys(btc).sort()).toEqual(
      ['question_id', 'venue', 'venue_market_id', 'title', 'description', 'resolution_criteria', 'url', 'category', 'domain', 'tags', 'created_at', 'close_time', 'status', 'lang', 'origin', 'ingested_at'].sort(),
    );

    // One observation per open market (tracked + new), Yes side even when "No" is listed first.
    expect(r.market_prices).toHaveLength(4);
    const btcPrice = r.market_prices.find((p) => p.question_id === btc.question_id)!;
    expect(btcPrice.probability).toBe(0.07);
    expect(btcPrice.best_bid).toBeCloseTo(0.065, 9);
    expect(btcPrice.best_ask).toBeCloseTo(0.075, 9);
    expect(btcPrice).toMatchObject({ observed_at: now, volume: 8211934.4, liquidity: 381221.19 });
    expect(btcPrice.origin).toBe(`polymarket:${server.url}/markets`);
    const fed = r.market_prices.find((p) => p.question_id === `polymarket:${page0[0]!.conditionId}`)!;
    expect(fed).toMatchObject({ probability: 0.855, best_bid: 0.85, best_ask: 0.86 });

    // Skipped with reasons, rest kept.
    const reasons = r.skipped.map((s) => s.reason);
    expect(reasons).toEqual(
      expect.arrayContaining([
        'non-binary market: outcomes are not Yes and No', // ["Vance","Newsom"]
        expect.stringMatching(/^schema: outcomes/),
        expect.stringMatching(/unknown umaResolutionStatus "under-review"/),
        expect.stringMatching(/not found/),
      ]),
    );
    expect(r.skipped.find((s) => /not found/.test(s.reason))!.venue_market_id).toBe('0xdeadbeef');

    // Resolutions: final ones only; 50/50 is an annulment; No-first payout maps to Yes = 0.
    const byId = new Map(r.resolutions.map((x) => [x.question_id, x]));
    expect(byId.size).toBe(3);
    expect(byId.get(`polymarket:${T(11)}`)).toMatchObject({
      outcome: 1,
      resolved_at: new Date('2025-09-17T18:32:11Z'),
      source_slug: 'polymarket',
      source_url: 'https://polymarket.com/event/fed-decreases-interest-rates-by-25-bps-after-september-2025-meeting',
      retrieved_at: now,
      method: 'polymarket:uma_resolved',
      annulled_reason: null,
    });
    expect(byId.get(`polymarket:${T(11)}`)!.evidence_excerpt).toContain('umaResolutionStatus=resolved');
    expect(byId.get(`polymarket:${T(33)}`)).toMatchObject({ outcome: null, annulled_reason: expect.stringContaining('50-50') });
    expect(byId.get(`polymarket:${T(44)}`)).toMatchObject({ outcome: 0 });
    expect(byId.has(`polymarket:${T(22)}`)).toBe(false); // proposed: not final
    expect(byId.has(`polymarket:${T(55)}`)).toBe(false); // disputed: not final

    const events = r.lifecycle_events;
    expect(events.filter((e) => e.state === 'active').map((e) => e.question_id)).toEqual(r.questions.map((q) => q.question_id));
    expect(events.find((e) => e.question_id === `polymarket:${T(22)}` && e.state === 'closed')).toMatchObject({ at: new Date('2025-11-01T04:00:12Z'), reason: expect.stringContaining('proposed') });
    expect(events.find((e) => e.question_id === `polymarket:${T(55)}`)!.reason).toContain('disputed');
    expect(events.find((e) => e.question_id === `polymarket:${T(33)}` && e.state === 'annulled')).toBeTruthy();
    expect(events.find((e) => e.question_id === `polymarket:${T(11)}` && e.state === 'resolved')!.at).toEqual(new Date('2025-09-17T18:32:11Z'));
  });

  it('Gamma refusing an offset past its cap (422 "offset too large") ends discovery with a warning: the tracked markets are still looked up and resolved', async () => {
    // The refusal as Gamma sends it at offset 2100 since the legacy /markets listing was
    // deprecated (HTTP 422 {"type":"validation error","error":"offset too large, use
    // /markets/keyset for deeper pagination"}: sapiencexyz/sapience PRs #1884 and #1911,
    // Polymarket/py-sdk issue #127). With QUORUM_VENUE_MAX_PAGES above 21 every sync that paged so
    // deep failed Polymarket, and the tracked markets' lookups never ran: no price, no resolution.
    server = await startReplayServer([
      { path: '/markets', query: { offset: '0' }, responses: [json(page0)] },
      { path: '/markets', query: { offset: '3' }, responses: [json({ type: 'validation error', error: 'offset too large, use /markets/keyset for deeper pagination' }, 422)] },
      lookupRoute,
    ]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, pageSize: 3, clientOptions: FAST });
    const r = await adapter.sync(ctx({ tracked: [{ question_id: `polymarket:${T(11)}`, venue_market_id: T(11) }] }));
    expect(r.questions.map((q) => q.title)).toEqual([page0[0]!.question, page0[1]!.question]); // the first page's binary markets
    expect(r.resolutions.map((x) => [x.question_id, x.outcome])).toEqual([[`polymarket:${T(11)}`, 1]]);
    expect(r.warnings).toEqual([expect.stringMatching(/^discovery stopped after 1 page: Polymarket refused offset 3 \(HTTP 422: .*offset too large/)]);
    // A 422 on the first page is no cap but a request Gamma refuses: the venue fails as before.
    await server.close();
    server = await startReplayServer([{ path: '/markets', responses: [json({ type: 'validation error', error: 'order fields are not valid' }, 422)] }]);
    const failing = createPolymarketAdapter({ gammaUrl: server.url, pageSize: 3, clientOptions: FAST });
    await expect(failing.sync(ctx())).rejects.toBeInstanceOf(VenueSyncError);
  });

  it('applies filters: liquidity, close window, categories and the new-question cap', async () => {
    server = await startReplayServer([
      { path: '/markets', query: { offset: '0' }, responses: [json(page0)] },
      { path: '/markets', query: { offset: '3' }, responses: [json(page3)] },
      { path: '/markets', query: { offset: '6' }, responses: [json(page6)] },
    ]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, pageSize: 3, clientOptions: FAST });
    const r = await adapter.sync(ctx({ filters: { minLiquidity: 100_000 } }));
    expect(r.questions.map((q) => q.title)).toEqual([page0[0]!.question, page0[1]!.question]);
    expect(server.log[0]!.query.get('liquidity_num_min')).toBe('100000');

    const capped = await adapter.sync(ctx({ filters: { maxMarkets: 1 } }));
    expect(capped.questions).toHaveLength(1);

    const soon = await adapter.sync(ctx({ filters: { closeWithinDays: 30 } }));
    expect(soon.questions.map((q) => q.title)).toEqual([page0[0]!.question]);

    const sports = await adapter.sync(ctx({ filters: { categories: ['sports'] } }));
    expect(sports.questions.map((q) => q.title)).toEqual([page3[1]!.question]);
  });

  it('a market still listed open past its endDate is no new question (it can never be forecast), and takes no slot of the new-question cap (QA)', async () => {
    // Gamma lists a market closed=false, acceptingOrders=true past its endDate until it resolves:
    // the fixture's first market two days past its endDate. It became a question whose status was
    // closed from the start, and when Gamma then closed it its lifecycle read closed (endDate) before
    // active (discovery): the last (current) state said active.
    const pastEnd = { ...page0[0]!, endDate: '2025-11-13T12:00:00Z' };
    server = await startReplayServer([{ path: '/markets', query: { offset: '0' }, responses: [json([pastEnd, page0[1], page0[2]])] }]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, pageSize: 100, clientOptions: FAST });
    const r = await adapter.sync(ctx({ filters: { maxMarkets: 1 } }));
    expect(r.questions.map((q) => q.question_id)).toEqual([`polymarket:${page0[1]!.conditionId}`]);
    expect(r.lifecycle_events.map((e) => e.question_id)).toEqual([`polymarket:${page0[1]!.conditionId}`]);
    expect(r.markets_seen).toBe(3);
    // Tracked already, it is still priced and followed to its resolution.
    const tracked = await adapter.sync(ctx({ tracked: [{ question_id: `polymarket:${pastEnd.conditionId}`, venue_market_id: pastEnd.conditionId, close_time: new Date('2025-11-13T12:00:00Z') }] }));
    expect(tracked.market_prices.map((p) => p.question_id)).toContain(`polymarket:${pastEnd.conditionId}`);
  });

  it('throws a SourceHttpError within a bounded time when the venue fails entirely', async () => {
    server = await startReplayServer([{ path: /.*/, responses: [{ status: 500, body: { error: 'down' } }] }]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, clientOptions: { ...FAST, retries: 2 } });
    const t0 = Date.now();
    const err = await adapter.sync(ctx()).catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(err).toBeInstanceOf(SourceHttpError);
    expect(err).toBeInstanceOf(VenueSyncError);
    expect((err as SourceHttpError).kind).toBe('server_error');
    expect(server.log).toHaveLength(3);
  });

  it('returns what earlier pages gave in VenueSyncError.partial when a later page fails', async () => {
    server = await startReplayServer([
      { path: '/markets', query: { offset: '0' }, responses: [json(page0)] },
      { path: '/markets', query: { offset: '3' }, responses: [{ status: 503, headers: { 'retry-after': '0' } }] },
    ]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, pageSize: 3, clientOptions: { ...FAST, retries: 1 } });
    const err = (await adapter.sync(ctx()).catch((e: unknown) => e)) as VenueSyncError;
    expect(err).toBeInstanceOf(VenueSyncError);
    expect(err.venue).toBe('polymarket');
    expect(err.partial.questions).toHaveLength(2);
    expect(err.partial.requests).toBe(3);
  });

  it('reads JSON-encoded outcomes exactly as JSON.parse would, whatever the spacing, case, escapes or names', () => {
    const base = page0[1] as unknown as Record<string, unknown>; // "No" listed first
    const name = fc.oneof(fc.constantFrom('Yes', 'No', 'yes', ' NO ', 'YES', 'Maybe', 'Yes\n', 'No"', 'Ye\\s', '\u0001Yes', 'ſ'), fc.string({ maxLength: 5 }));
    const spacing = fc.constantFrom(undefined, 1, '\t', ' \r\n ');
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 3 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }).map(String), { minLength: 2, maxLength: 2 }), spacing, (outcomes, prices, space) => {
        const encoded = normalizePolymarket({ ...base, outcomes: JSON.stringify(outcomes, null, space), outcomePrices: JSON.stringify(prices, null, space) });
        const decoded = normalizePolymarket({ ...base, outcomes, outcomePrices: prices });
        expect(encoded).toEqual(decoded);
      }),
      { numRuns: 500 },
    );
  });

  it('reads closed markets without any UMA field (pre-UMA-status markets) by their final payout, with the rule named', () => {
    const base = tracked[0] as unknown as Record<string, unknown>;
    const { umaResolutionStatus: _s, umaResolutionStatuses: _h, ...legacy } = base;
    const final = normalizePolymarket(legacy);
    expect(final.ok && final.market.state).toBe('resolved');
    expect(final.ok && final.market.resolution!.method).toBe('polymarket:final_payout_without_uma_fields');
    const open = normalizePolymarket({ ...legacy, outcomePrices: '["0.97","0.03"]' });
    expect(open.ok && open.market.state).toBe('closed');
    // The status history alone says resolved: the UMA rule.
    const byHistory = normalizePolymarket({ ...legacy, umaResolutionStatuses: '["proposed","resolved"]' });
    expect(byHistory.ok && byHistory.market.resolution!.method).toBe('polymarket:uma_resolved');
    // A published but empty history is not "no UMA fields": no resolution yet.
    const empty = normalizePolymarket({ ...legacy, umaResolutionStatuses: '[]' });
    expect(empty.ok && empty.market.state).toBe('closed');
    // Settled by the venue's own feed (automaticallyResolved), no UMA status.
    const auto = normalizePolymarket({ ...legacy, umaResolutionStatuses: '[]', automaticallyResolved: true });
    expect(auto.ok && auto.market.resolution).toMatchObject({ outcome: 1, method: 'polymarket:automatically_resolved' });
  });

  it('outcomePrices ["0","0"] (Gamma\'s "no price" placeholder) is no price observation, not YES at 0 (QA)', async () => {
    // Gamma answers ["0", "0"] for a market it has no price for, e.g. market 12 of its listing
    // ("Will Joe Biden get Coronavirus before the election?", `"outcomePrices": "[\"0\", \"0\"]"`,
    // active: true, liquidityNum 0), as quoted in public Gamma response samples (GitHub code
    // search: READMEs and notes of Polymarket clients showing GET gamma-api.polymarket.com/markets),
    // and clients' tests treat it as "no payout" (a Gamma client's test_none_when_void_double_zero).
    // A YES price of 0 beside a NO price of 0 is not a price: recorded, it said the market gave
    // YES 0%, and every forecast was compared with that.
    const base = page0[0] as unknown as Record<string, unknown>;
    const open = normalizePolymarket({ ...base, outcomePrices: '["0", "0"]' });
    expect(open.ok && open.market.state).toBe('open');
    expect(open.ok && open.market.probability).toBeNull();
    // The other side listed first: the same.
    const noFirst = normalizePolymarket({ ...base, outcomes: '["No", "Yes"]', outcomePrices: '["0", "0"]' });
    expect(noFirst.ok && noFirst.market.probability).toBeNull();
    // A real one-sided price is still a price (YES at 0 when NO is at 1).
    const zero = normalizePolymarket({ ...base, outcomePrices: '["0", "1"]' });
    expect(zero.ok && zero.market.probability).toBe(0);
    // Through a sync: the market is discovered, but no observation is recorded.
    server = await startReplayServer([{ path: '/markets', responses: [json([{ ...base, outcomePrices: '["0", "0"]' }])] }]);
    const r = await createPolymarketAdapter({ gammaUrl: server.url, clientOptions: FAST }).sync(ctx());
    expect(r.questions.map((q) => q.venue_market_id)).toEqual([base.conditionId]);
    expect(r.market_prices).toEqual([]);
  });

  it('replays current resolution shapes: a [1,0] book that still trades or has no UMA resolution is not final; every resolution names its rule', async () => {
    // Where each market came from: its $comment.
    const shapes = fx('markets-resolution-shapes.json');
    server = await startReplayServer([
      { path: '/markets', query: { offset: '0' }, responses: [json([])] },
      {
        path: '/markets',
        query: { offset: null },
        responses: (req: { query: URLSearchParams }) => {
          const ids = req.query.getAll('condition_ids');
          const closed = req.query.get('closed') === 'true';
          return json(shapes.filter((m) => ids.includes(m.conditionId) && m.closed === closed));
        },
      },
    ]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, clientOptions: FAST });
    const id = (cid: string) => shapes.find((m) => m.conditionId.startsWith(cid))!.conditionId;
    // A sync after the latest of these markets closed (2026-08-20): a resolution is never dated after its sync.
    const r = await adapter.sync({
      ...ctx({ tracked: shapes.map((m) => ({ question_id: `polymarket:${m.conditionId}`, venue_market_id: m.conditionId })) }),
      now: new Date('2026-09-01T00:00:00Z'),
    });
    expect(r.skipped).toEqual([]);

    const res = new Map(r.resolutions.map((x) => [x.question_id!.slice('polymarket:'.length), x]));
    // Real UMA resolutions (NYC, Ankara): outcome from the payout, rule uma_resolved, at closedTime.
    expect(res.get(id('0x559d41'))).toMatchObject({ outcome: 0, method: 'polymarket:uma_resolved', resolved_at: new Date('2025-12-30T09:09:31Z') });
    expect(res.get(id('0x5b39af'))).toMatchObject({ outcome: 1, method: 'polymarket:uma_resolved' });
    expect(res.get(id('0x3b85cb'))).toMatchObject({ outcome: 0, method: 'polymarket:uma_resolved' });
    expect(res.get(id('0x5b39af'))!.evidence_excerpt).toContain('umaResolutionStatuses=["proposed","disputed","proposed","resolved"]');
    expect(res.size).toBe(3);

    // The shape: ["1","0"] on a live book, no UMA status. Open: one price observation of 1, no resolution.
    const live = `polymarket:${id('0x9001a3')}`;
    expect(r.market_prices.find((p) => p.question_id === live)).toMatchObject({ probability: 1 });
    // Closed but still accepting orders, or closed with an empty UMA history: closed, not resolved.
    const reasons = new Map(r.lifecycle_events.map((e) => [e.question_id, e]));
    expect(reasons.get(`polymarket:${id('0x9002a3')}`)).toMatchObject({ state: 'closed', reason: expect.stringContaining('still accepting orders') });
    expect(reasons.get(`polymarket:${id('0x9003a3')}`)).toMatchObject({ state: 'closed', reason: expect.stringContaining('awaiting resolution') });
    // The 2021 AMM market: near-final prices with an empty history stay closed.
    expect(reasons.get(`polymarket:${id('0x289000')}`)).toMatchObject({ state: 'closed' });
  });
});

describe('polymarket gap backfill from the CLOB prices-history', () => {
  const HOUR = 3_600_000;
  const yesToken = (m: Gamma) => {
    const outcomes = JSON.parse((m as unknown as { outcomes: string }).outcomes) as string[];
    return (JSON.parse((m as unknown as { clobTokenIds: string }).clobTokenIds) as string[])[outcomes.indexOf('Yes')]!;
  };
  /** The CLOB's answer for a token: half-hourly points over the two days before `now`, and a few bad ones. */
  const clobRoute = (fail = false) => ({
    path: '/prices-history',
    responses: (req: { query: URLSearchParams }) => {
      if (fail) return { status: 500, body: { error: 'internal' } };
      const end = Number(req.query.get('endTs'));
      const history: unknown[] = [];
      for (let t = end - 48 * 3600; t <= end + 1800; t += 1800) history.push({ t, p: 0.4 + ((t / 1800) % 10) / 100 });
      history.push({ t: 'yesterday', p: 0.5 }, { t: end - 7200 + 60, p: 1.5 }, { p: 0.3 });
      return json({ history });
    },
  });
  const trackedAt = (ms: Record<string, number | null>) =>
    Object.entries(ms).map(([id, ago]) => ({ question_id: `polymarket:${id}`, venue_market_id: id, last_observed_at: ago === null ? null : new Date(now.getTime() - ago) }));

  it('fills a missed-sync gap hourly from the YES token history; recent or unknown observations are not backfilled', async () => {
    server = await startReplayServer([{ path: '/markets', query: { offset: '0' }, responses: [json(page0)] }, clobRoute(), lookupRoute]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, clobUrl: server.url, pageSize: 100, clientOptions: FAST });
    const [yesFirst, noFirst] = [page0[0]!, page0[1]!];
    const r = await adapter.sync(ctx({ tracked: trackedAt({ [yesFirst.conditionId]: 30 * HOUR, [noFirst.conditionId]: 10 * HOUR }) }));

    // One CLOB request per gap, for the YES token (the second one when "No" is listed first), over the gap, hourly.
    const clob = server.log.filter((e) => e.path === '/prices-history');
    expect(clob.map((e) => e.query.get('market')).sort()).toEqual([yesToken(yesFirst), yesToken(noFirst)].sort());
    expect(yesToken(noFirst)).toBe(JSON.parse((noFirst as unknown as { clobTokenIds: string }).clobTokenIds)[1]);
    const q = clob.find((e) => e.query.get('market') === yesToken(yesFirst))!;
    expect(Number(q.query.get('startTs'))).toBe((now.getTime() - 30 * HOUR) / 1000);
    expect(Number(q.query.get('endTs'))).toBe(now.getTime() / 1000);
    expect(q.query.get('fidelity')).toBe('60');

    const prices = (id: string) => r.market_prices.filter((p) => p.question_id === `polymarket:${id}`).sort((a, b) => a.observed_at!.getTime() - b.observed_at!.getTime());
    const filled = prices(yesFirst.conditionId).filter((p) => p.origin!.endsWith('/prices-history'));
    // Strictly inside the 30 h gap, one point per hour at most, the bad points dropped: hours 29 … 1 before now.
    expect(filled).toHaveLength(29);
    for (const [k, p] of filled.entries()) {
      expect(p.observed_at!.getTime()).toBe(now.getTime() - (29 - k) * HOUR);
      expect(p).toMatchObject({ venue: 'polymarket', best_bid: null, best_ask: null, volume: null, liquidity: null, ingested_at: now, origin: `polymarket:${server.url}/prices-history` });
      expect(p.probability).toBeGreaterThanOrEqual(0.4);
      expect(p.probability).toBeLessThanOrEqual(0.5);
    }
    // The sync's own Gamma observation is still there, last.
    expect(prices(yesFirst.conditionId).at(-1)).toMatchObject({ observed_at: now, origin: `polymarket:${server.url}/markets`, best_bid: 0.85 });
    expect(prices(noFirst.conditionId).filter((p) => p.origin!.endsWith('/prices-history'))).toHaveLength(9);

    // A 1-hour-old observation, or none known: no history request.
    server.log.length = 0;
    const quiet = await adapter.sync(ctx({ tracked: trackedAt({ [yesFirst.conditionId]: HOUR, [noFirst.conditionId]: null }) }));
    expect(server.log.filter((e) => e.path === '/prices-history')).toHaveLength(0);
    expect(quiet.market_prices.every((p) => p.observed_at!.getTime() === now.getTime())).toBe(true);
  });

  it('a gap longer than the CLOB serves in one request (15 days) is read in windows, not refused whole', async () => {
    // The CLOB refuses a startTs..endTs range over ~15 days: HTTP 400 {"error":"invalid filters:
    // 'startTs' and 'endTs' interval is too long"} (a public client's chunking notes, found with
    // the search tool; Jon-Becker/prediction-market-analysis PR #55 windows its requests into 15
    // days for the same limit). With QUORUM_BACKFILL_DAYS above 15 a market unobserved that long
    // (Quorum down for three weeks, when backfill matters most) got nothing: every request
    // refused, and the backfill stopped after three.
    const DAY = 86_400_000;
    server = await startReplayServer([
      { path: '/markets', query: { offset: '0' }, responses: [json(page0)] },
      {
        path: '/prices-history',
        responses: (req: { query: URLSearchParams }) => {
          const [start, end] = [Number(req.query.get('startTs')), Number(req.query.get('endTs'))];
          if (end - start > 15 * 86_400) return json({ error: "invalid filters: 'startTs' and 'endTs' interval is too long" }, 400);
          const history: unknown[] = [];
          for (let t = start - (start % 3600) + 3600; t <= end; t += 3600) history.push({ t, p: 0.42 });
          return json({ history });
        },
      },
      lookupRoute,
    ]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, clobUrl: server.url, clientOptions: FAST, backfill: { lookbackMs: 30 * DAY } });
    const a = page0[0]!;
    const r = await adapter.sync(ctx({ tracked: trackedAt({ [a.conditionId]: 30 * DAY }) }));
    expect(r.skipped.filter((x) => x.reason.includes('price history'))).toEqual([]);
    const filled = r.market_prices.filter((p) => p.origin!.endsWith('/prices-history'));
    // Hourly over the 30 days, strictly inside the gap: 30 × 24 − 1 points.
    expect(filled).toHaveLength(30 * 24 - 1);
    const windows = server.log.filter((e) => e.path === '/prices-history').map((e) => Number(e.query.get('endTs')) - Number(e.query.get('startTs')));
    expect(windows.length).toBeGreaterThan(1);
    expect(Math.max(...windows)).toBeLessThanOrEqual(15 * 86_400);
  });

  it('a gap of the default lookback (14 days) is one prices-history request, whatever the sync time\'s milliseconds', async () => {
    // startTs rounded down and endTs rounded up made the range 14 days and 1 s at a sync time with
    // milliseconds (every real one): a second request for that one second, per market, each one
    // more chance for the market's history to fail (QA review).
    server = await startReplayServer([{ path: '/markets', query: { offset: '0' }, responses: [json(page0)] }, clobRoute(), lookupRoute]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, clobUrl: server.url, clientOptions: FAST });
    const at = new Date(now.getTime() + 250);
    const a = page0[0]!;
    const r = await adapter.sync({ ...ctx(), now: at, tracked: [{ question_id: `polymarket:${a.conditionId}`, venue_market_id: a.conditionId, last_observed_at: new Date(at.getTime() - 20 * 86_400_000) }] });
    expect(r.skipped.filter((x) => x.reason.includes('price history'))).toEqual([]);
    expect(r.market_prices.filter((p) => p.origin!.endsWith('/prices-history')).length).toBeGreaterThan(0);
    expect(server.log.filter((e) => e.path === '/prices-history')).toHaveLength(1);
  });

  it('caps the lookback and the number of markets; without a CLOB URL nothing is requested', async () => {
    server = await startReplayServer([{ path: '/markets', query: { offset: '0' }, responses: [json(page0)] }, clobRoute(), lookupRoute]);
    const [a, b] = [page0[0]!, page0[1]!];
    const capped = createPolymarketAdapter({ gammaUrl: server.url, clobUrl: server.url, clientOptions: FAST, backfill: { maxMarkets: 1, lookbackMs: 5 * HOUR } });
    const r = await capped.sync(ctx({ tracked: trackedAt({ [a.conditionId]: 10 * 86_400_000, [b.conditionId]: 20 * HOUR }) }));
    const clob = server.log.filter((e) => e.path === '/prices-history');
    expect(clob).toHaveLength(1);
    expect(Number(clob[0]!.query.get('startTs'))).toBe((now.getTime() - 5 * HOUR) / 1000);
    expect(r.market_prices.filter((p) => p.origin!.endsWith('/prices-history'))).toHaveLength(4); // hours 4 … 1 before now

    server.log.length = 0;
    const noClob = createPolymarketAdapter({ gammaUrl: server.url, clientOptions: FAST });
    const r2 = await noClob.sync(ctx({ tracked: trackedAt({ [a.conditionId]: 30 * HOUR }) }));
    expect(server.log.filter((e) => e.path === '/prices-history')).toHaveLength(0);
    expect(r2.market_prices.filter((p) => p.question_id === `polymarket:${a.conditionId}`)).toHaveLength(1);
  });

  it('a failing CLOB loses nothing: markets are priced, each gap is a skipped item with the reason, and it stops after repeated failures', async () => {
    // Seven open markets: the fixtures' four and three more like the first under other ids and tokens.
    const copies = [1, 2, 3].map((k) => ({ ...page0[0]!, conditionId: `0x${'e'.repeat(63)}${k}`, clobTokenIds: JSON.stringify([`${k}1`, `${k}2`]) }));
    const all = [...page0, ...page3, ...page6, ...copies];
    const openMarkets = all.filter((m) => normalizePolymarket(m).ok);
    server = await startReplayServer([{ path: '/markets', responses: [json(all)] }, clobRoute(true)]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, clobUrl: server.url, pageSize: 100, clientOptions: { ...FAST, retries: 1 }, backfill: { maxFailures: 2 } });
    const gaps = Object.fromEntries(openMarkets.map((m) => [m.conditionId, 30 * HOUR]));
    expect(openMarkets).toHaveLength(7);
    const r = await adapter.sync(ctx({ tracked: trackedAt(gaps) }));

    expect(r.market_prices.map((p) => p.question_id).sort()).toEqual(openMarkets.map((m) => `polymarket:${m.conditionId}`).sort());
    const reasons = r.skipped.filter((s) => s.reason.startsWith('price history not backfilled'));
    expect(reasons.map((s) => s.venue_market_id).sort()).toEqual(openMarkets.map((m) => m.conditionId).sort());
    expect(reasons.some((s) => /server_error: HTTP 500/.test(s.reason))).toBe(true);
    expect(reasons.some((s) => /stopped after 2 failed history requests in a row/.test(s.reason))).toBe(true);
    // The first chunk of 4 was tried (2 attempts each: retries 1); the rest were not.
    expect(server.log.filter((e) => e.path === '/prices-history')).toHaveLength(8);
  });

  it('rides out a truncated history body (retried) and a 429 with Retry-After', async () => {
    const good = clobRoute();
    let calls = 0;
    server = await startReplayServer([
      { path: '/markets', query: { offset: '0' }, responses: [json(page0)] },
      {
        path: '/prices-history',
        responses: (req: { query: URLSearchParams }) => {
          calls++;
          if (calls === 1) return { status: 429, headers: { 'retry-after': '0' }, body: { error: 'Too Many Requests' } };
          const full = good.responses(req) as { body: unknown };
          if (calls === 2) return { body: JSON.stringify(full.body), truncate: { bytes: 40, mode: 'end' as const } };
          return full;
        },
      },
      lookupRoute,
    ]);
    const adapter = createPolymarketAdapter({ gammaUrl: server.url, clobUrl: server.url, pageSize: 100, clientOptions: FAST });
    const r = await adapter.sync(ctx({ tracked: trackedAt({ [page0[0]!.conditionId]: 8 * HOUR }) }));
    expect(server.log.filter((e) => e.path === '/prices-history').map((e) => e.status)).toEqual([429, 200, 200]);
    expect(r.market_prices.filter((p) => p.origin!.endsWith('/prices-history'))).toHaveLength(7);
    expect(r.skipped.filter((s) => s.reason.startsWith('price history'))).toEqual([]);
  });
});
