import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SourceHttpError } from '../../pipeline/sources/http-client.ts';
import { createKalshiAdapter, normalizeKalshi } from '../../pipeline/venues/kalshi.ts';
import { VenueSyncError, type VenueSyncContext } from '../../pipeline/venues/types.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';

const fx = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/venues/kalshi/${name}`, import.meta.url), 'utf8'));
const page1 = fx('markets-page-1.json');
const page2 = fx('markets-page-2.json');
const tracked: Record<string, unknown> = fx('markets-tracked.json');
// Current payloads: fixed-point strings only (where each market came from: the file's $comment).
const fixedPoint = fx('markets-fixed-point.json');

const FAST = { requestsPerInterval: 1000, intervalMs: 1000, retries: 3, backoffMs: 5, timeoutMs: 5000 };
const logger = pino({ level: 'silent' });
const now = new Date('2025-11-15T12:00:00Z');
const ctx = (over: Partial<VenueSyncContext> = {}): VenueSyncContext => ({ now, filters: {}, tracked: [], logger, ...over });
const track = (...ids: string[]) => ids.map((id) => ({ question_id: `kalshi:${id}`, venue_market_id: id }));

const singleMarket = {
  path: /^\/trade-api\/v2\/markets\/[^/]+$/,
  responses: (req: { path: string }) => {
    const ticker = decodeURIComponent(req.path.split('/').pop()!);
    const m = tracked[ticker];
    return m ? json({ market: m }) : json({ error: { code: 'not_found', message: 'market not found' } }, 404);
  },
};

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('kalshi adapter', () => {
  it('follows the cursor through 429 / 500 / a cut-off body; dollars and cents prices; final settlements only', async () => {
    server = await startReplayServer([
      { path: '/trade-api/v2/markets', query: { cursor: null, status: 'open' }, responses: [{ status: 429, headers: { 'retry-after': '0.05' } }, { body: page1, truncate: { bytes: 500, mode: 'destroy' } }, json(page1)] },
      { path: '/trade-api/v2/markets', query: { cursor: page1.cursor }, responses: [{ status: 502, body: 'Bad Gateway' }, json(page2)] },
      singleMarket,
    ]);
    const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
    const r = await adapter.sync(
      ctx({ tracked: track('KXFEDDECISION-26JAN-C25', 'KXCPI-25SEP-T0.3', 'KXPAYROLLS-25SEP-T50000', 'KXGOVSHUT-25OCT15', 'KXTIKTOK-25SEP17', 'KXRAIN-25NOV', 'KXGONE-25') }),
    );
    expect(server.log.filter((e) => e.path === '/trade-api/v2/markets').map((e) => e.status)).toEqual([429, 200, 200, 502, 200]);
    expect(server.log[0]!.query.get('limit')).toBe('1000');
    expect(r.requests).toBe(server.log.length);

    // Tracked open market (dollars): mid of 0.42 / 0.44.
    const fed = r.market_prices.find((p) => p.question_id === 'kalshi:KXFEDDECISION-26JAN-C25')!;
    expect(fed).toMatchObject({ probability: 0.43, best_bid: 0.42, best_ask: 0.44, liquidity: 48211.37, volume: 183422, observed_at: now });
    // Older payload in integer cents: mid of 61 / 63 cents.
    const inx = r.market_prices.find((p) => p.question_id === 'kalshi:INXD-25DEC31-B6000')!;
    expect(inx).toMatchObject({ probability: 0.62, best_bid: 0.61, best_ask: 0.63, liquidity: 12345 });
    // Empty book (bid 0, ask 1.00): the last price, no bid/ask.
    const pope = r.market_prices.find((p) => p.question_id === 'kalshi:KXNEWPOPE-26-PPAR')!;
    expect(pope).toMatchObject({ probability: 0.35, best_bid: null, best_ask: null });
    expect(r.market_prices).toHaveLength(3);

    expect(r.questions.map((q) => q.venue_market_id)).toEqual(['INXD-25DEC31-B6000', 'KXNEWPOPE-26-PPAR']);
    expect(r.questions[0]).toMatchObject({ url: 'https://kalshi.com/markets/inxd-25dec31', close_time: new Date('2025-12-31T21:00:00Z') });
    expect(r.questions[0]!.resolution_criteria).toContain('S&P 500');

    const skipped = Object.fromEntries(r.skipped.map((s) => [s.venue_market_id, s.reason]));
    expect(skipped['KXHIGHNY-25DEC31-T45']).toBe('non-binary market: market_type "scalar"');
    expect(skipped['KXBTC-25DEC31-B100000']).toMatch(/unknown Kalshi status "frozen"/);
    expect(skipped['KXGDP-25Q4-T3']).toMatch(/^schema: status/);
    expect(skipped['KXRAIN-25NOV']).toMatch(/without a binary result/);
    expect(skipped['KXGONE-25']).toMatch(/not found/);

    const res = new Map(r.resolutions.map((x) => [x.question_id, x]));
    expect(res.size).toBe(3);
    expect(res.get('kalshi:KXCPI-25SEP-T0.3')).toMatchObject({ outcome: 1, method: 'kalshi:settled_result', resolved_at: new Date('2025-10-24T14:00:00Z'), source_slug: 'kalshi', annulled_reason: null });
    expect(res.get('kalshi:KXCPI-25SEP-T0.3')!.evidence_excerpt).toContain('status=finalized; result="yes"');
    expect(res.get('kalshi:KXPAYROLLS-25SEP-T50000')).toMatchObject({ outcome: 0 });
    expect(res.get('kalshi:KXTIKTOK-25SEP17')).toMatchObject({ outcome: null, method: 'kalshi:settled_void', annulled_reason: expect.stringContaining('void') });
    // determined (result already "no") is not final yet: only closed.
    expect(res.has('kalshi:KXGOVSHUT-25OCT15')).toBe(false);
    expect(r.lifecycle_events.find((e) => e.question_id === 'kalshi:KXGOVSHUT-25OCT15')).toMatchObject({ state: 'closed', at: new Date('2025-10-15T23:59:00Z') });
    expect(r.lifecycle_events.find((e) => e.question_id === 'kalshi:KXTIKTOK-25SEP17' && e.state === 'annulled')).toBeTruthy();
  });

  it('a market Kalshi closed before its close time is closed now: a new close time for the question, the lifecycle dated by this sync, once (QA soak)', async () => {
    const early = { ...(tracked['KXGOVSHUT-25OCT15'] as object), ticker: 'KXEARLY-25', status: 'closed', close_time: '2025-12-31T00:00:00Z' };
    tracked['KXEARLY-25'] = early;
    try {
      server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json({ markets: [], cursor: '' })] }, singleMarket]);
      const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
      const stored = new Date('2025-12-31T00:00:00Z');
      const first = await adapter.sync(ctx({ tracked: [{ question_id: 'kalshi:KXEARLY-25', venue_market_id: 'KXEARLY-25', close_time: stored }] }));
      expect(first.close_time_changes).toEqual([{ question_id: 'kalshi:KXEARLY-25', close_time: now }]);
      expect(first.lifecycle_events).toEqual([expect.objectContaining({ state: 'closed', at: now })]);
      // the next sync finds the close stored: nothing new, the lifecycle row the same (deduplicated)
      const later = await adapter.sync({ ...ctx({ tracked: [{ question_id: 'kalshi:KXEARLY-25', venue_market_id: 'KXEARLY-25', close_time: now }] }), now: new Date(now.getTime() + 3_600_000) });
      expect(later.close_time_changes).toEqual([]);
      expect(later.lifecycle_events).toEqual([expect.objectContaining({ state: 'closed', at: now })]);
    } finally {
      delete tracked['KXEARLY-25'];
    }
  });

  it('a market closed early keeps the close its first closed sync gave it when it settles, or its old close time passes, before the venue moves that time (QA review)', async () => {
    // Closed early at `now` (the sync above), its close_time still 2025-12-31: then settled, or still closed past that time.
    const settled = { ...(tracked['KXCPI-25SEP-T0.3'] as object), ticker: 'KXEARLY-26', close_time: '2025-12-31T00:00:00Z' };
    const stillClosed = { ...(tracked['KXGOVSHUT-25OCT15'] as object), ticker: 'KXEARLY-27', status: 'closed', close_time: '2025-12-31T00:00:00Z' };
    tracked['KXEARLY-26'] = settled;
    tracked['KXEARLY-27'] = stillClosed;
    try {
      server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json({ markets: [], cursor: '' })] }, singleMarket]);
      const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
      const stored = (id: string) => ({ question_id: `kalshi:${id}`, venue_market_id: id, close_time: now });
      const r = await adapter.sync({ ...ctx({ tracked: [stored('KXEARLY-26'), stored('KXEARLY-27')] }), now: new Date('2026-01-02T00:00:00Z') });
      // It moved the close back to 2025-12-31: the question was open again, in hindsight, for six weeks after it closed.
      expect(r.close_time_changes).toEqual([]);
      // Both closed lifecycles dated by the close stored (the same row as the first sync's: deduplicated), not 2025-12-31.
      expect(r.lifecycle_events.filter((e) => e.state === 'closed').map((e) => [e.question_id, e.at])).toEqual([['kalshi:KXEARLY-26', now], ['kalshi:KXEARLY-27', now]]);
      expect(r.resolutions.map((x) => x.question_id)).toEqual(['kalshi:KXEARLY-26']);
    } finally {
      delete tracked['KXEARLY-26'];
      delete tracked['KXEARLY-27'];
    }
  });

  it('a market reopened after it closed (close_time moved into the future, status active again) is active again in its lifecycle, once (QA)', async () => {
    // Kalshi's market lifecycle: "closed → reopened active: close_time is moved into the future"
    // (event close_date_updated). The market as it trades again: the real fixed-point market's book.
    const reopened = { ...fixedPoint.markets[0], ticker: 'KXREOPEN-25', status: 'active', close_time: '2025-12-31T00:00:00Z' };
    tracked['KXREOPEN-25'] = reopened;
    try {
      server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json({ markets: [], cursor: '' })] }, singleMarket]);
      const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
      // Closed early an hour before this sync (the sync that saw it closed stored that close).
      const closedAt = new Date(now.getTime() - 3_600_000);
      const r = await adapter.sync(ctx({ tracked: [{ question_id: 'kalshi:KXREOPEN-25', venue_market_id: 'KXREOPEN-25', close_time: closedAt }] }));
      expect(r.close_time_changes).toEqual([{ question_id: 'kalshi:KXREOPEN-25', close_time: new Date('2025-12-31T00:00:00Z') }]);
      expect(r.market_prices.map((p) => p.probability)).toEqual([0.635]);
      // Without it the lifecycle's last state (the API's current status) stayed "closed" while the question was forecast again.
      expect(r.lifecycle_events).toEqual([
        expect.objectContaining({ question_id: 'kalshi:KXREOPEN-25', state: 'active', at: now, reason: 'reopened on Kalshi: close moved to 2025-12-31T00:00:00.000Z' }),
      ]);
      // The next sync finds the new close stored: no second reopening.
      const later = await adapter.sync({
        ...ctx({ tracked: [{ question_id: 'kalshi:KXREOPEN-25', venue_market_id: 'KXREOPEN-25', close_time: new Date('2025-12-31T00:00:00Z') }] }),
        now: new Date(now.getTime() + 3_600_000),
      });
      expect(later.lifecycle_events).toEqual([]);
      expect(later.close_time_changes).toEqual([]);
    } finally {
      delete tracked['KXREOPEN-25'];
    }
  });

  it('a settlement whose only venue times are still ahead (no settlement_ts; expiration_time after the sync) is dated by the sync that saw it, not in the future', async () => {
    // markets-tracked.json's KXPAYROLLS-25SEP-T50000: status "settled", result "no", no
    // settlement_ts (payloads before Kalshi added it; public clients still tolerate finalized
    // markets without one), close_time and expiration_time 2025-11-20, five days after `now`.
    // Dated 2025-11-20 the resolution stayed invisible to every run until then: the settled
    // question was forecast for five more days and those forecasts were scored.
    server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json({ markets: [], cursor: '' })] }, singleMarket]);
    const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
    const r = await adapter.sync(ctx({ tracked: track('KXPAYROLLS-25SEP-T50000') }));
    expect(r.resolutions).toEqual([expect.objectContaining({ question_id: 'kalshi:KXPAYROLLS-25SEP-T50000', outcome: 0, resolved_at: now })]);
    expect(r.lifecycle_events.filter((e) => e.state === 'resolved').map((e) => e.at)).toEqual([now]);
    // The same market rechecked after a first record without a time: dated by the sync as well.
    const again = await adapter.sync(ctx({ tracked: [{ ...track('KXPAYROLLS-25SEP-T50000')[0]!, resolution: { outcome: 0, resolved_at: null } }] }));
    expect(again.amended_resolutions.map((x) => x.resolved_at)).toEqual([now]);
  });

  it('a market settled between two syncs while its close_time is still ahead closed by its settlement: a new close for the question and a closed lifecycle (QA)', async () => {
    // Active at the last sync, finalized by this one (settlement_ts 2025-11-15T10:00, two hours
    // before `now`), close_time still the scheduled 2025-12-31: the question kept that close,
    // weeks after its settlement, with no closed lifecycle.
    tracked['KXEARLY-30'] = { ...(tracked['KXCPI-25SEP-T0.3'] as object), ticker: 'KXEARLY-30', close_time: '2025-12-31T00:00:00Z', settlement_ts: '2025-11-15T10:00:00Z' };
    try {
      server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json({ markets: [], cursor: '' })] }, singleMarket]);
      const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
      const settled = new Date('2025-11-15T10:00:00Z');
      const r = await adapter.sync(ctx({ tracked: [{ question_id: 'kalshi:KXEARLY-30', venue_market_id: 'KXEARLY-30', close_time: new Date('2025-12-31T00:00:00Z') }] }));
      expect(r.close_time_changes).toEqual([{ question_id: 'kalshi:KXEARLY-30', close_time: settled }]);
      expect(r.lifecycle_events.map((e) => [e.state, e.at])).toEqual([['closed', settled], ['resolved', settled]]);
      // Rechecked later (resolved in the warehouse, its close moved): nothing more.
      const again = await adapter.sync(ctx({ tracked: [{ question_id: 'kalshi:KXEARLY-30', venue_market_id: 'KXEARLY-30', close_time: settled, resolution: { outcome: 1, resolved_at: settled } }] }));
      expect([again.close_time_changes, again.lifecycle_events, again.amended_resolutions]).toEqual([[], [], []]);
    } finally {
      delete tracked['KXEARLY-30'];
    }
  });

  it('a market resolved in the warehouse whose close is still ahead closes at the latest by its stored resolution, not by the recheck that moves it (QA review)', async () => {
    // KXPAYROLLS-25SEP-T50000: settled, no settlement_ts, close and expiration 2025-11-20 (ahead):
    // the venue gives no usable resolution time. Resolved in the warehouse at T1 (dated by the sync
    // that saw it, as a venue without a time is) by a version that left its discovery-time close
    // ahead. The recheck moved the close to its own time, a day after the resolution.
    server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json({ markets: [], cursor: '' })] }, singleMarket]);
    const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
    const t1 = new Date('2025-11-14T09:00:00Z');
    const r = await adapter.sync(
      ctx({
        tracked: [
          { question_id: 'kalshi:KXPAYROLLS-25SEP-T50000', venue_market_id: 'KXPAYROLLS-25SEP-T50000', close_time: new Date('2025-11-20T00:00:00Z'), resolution: { outcome: 0, resolved_at: t1 } },
        ],
      }),
    );
    expect(r.close_time_changes).toEqual([{ question_id: 'kalshi:KXPAYROLLS-25SEP-T50000', close_time: t1 }]);
    expect(r.amended_resolutions).toEqual([]);
  });

  it('markets of one event that share a title are told apart by their YES side: the title names it, not only the description (QA)', () => {
    // Kalshi's game and bracket events give every market the event's question as its title and
    // name the YES side in yes_sub_title: KXNBAGAME-26MAR31NYKHOU-NYK is "New York at Houston
    // Winner?" with yes_sub_title "New York", its sibling -HOU the same title with "Houston" (a
    // Kalshi client's test fixture, test_market_filter_accepts_full_game_winner_market); bracket
    // markets likewise (KXHIGHMIA-26JUL21-B92.5: yes_sub_title "91° to 94°, Miami Intl (MIA)").
    // Taken as is, two questions read "New York at Houston Winner?", one at 0.62 and one at 0.38.
    const game = (side: string, name: string) =>
      normalizeKalshi({
        ticker: `KXNBAGAME-26MAR31NYKHOU-${side}`, event_ticker: 'KXNBAGAME-26MAR31NYKHOU', market_type: 'binary', status: 'active',
        title: 'New York at Houston Winner?', yes_sub_title: name, no_sub_title: name, close_time: '2026-04-15T03:00:00Z',
        rules_primary: `If ${name} wins the New York at Houston professional basketball game originally scheduled for Mar 31, 2026, then the market resolves to Yes.`,
        yes_bid_dollars: '0.6100', yes_ask_dollars: '0.6300',
      });
    const nyk = game('NYK', 'New York');
    const hou = game('HOU', 'Houston');
    expect(nyk.ok && nyk.market.title).toBe('New York at Houston Winner? (Yes: New York)');
    expect(hou.ok && hou.market.title).toBe('New York at Houston Winner? (Yes: Houston)');
    // No YES side named (or the title is it): the title as it is.
    const same = normalizeKalshi({ ticker: 'KXWTAMATCH-26AUG27VIDBAR-BAR', title: 'Nikola Bartunkova', yes_sub_title: 'Nikola Bartunkova', status: 'active' });
    expect(same.ok && same.market.title).toBe('Nikola Bartunkova');
    const none = normalizeKalshi({ ticker: 'KXGDP-25Q4-T3', title: 'Will Q4 2025 GDP growth exceed 3%?', yes_sub_title: '', status: 'active' });
    expect(none.ok && none.market.title).toBe('Will Q4 2025 GDP growth exceed 3%?');
  });

  it('passes max_close_ts for the close window', async () => {
    server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json(page2)] }]);
    const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
    await adapter.sync(ctx({ filters: { closeWithinDays: 10 } }));
    expect(server.log[0]!.query.get('max_close_ts')).toBe(String(Date.parse('2025-11-25T12:00:00Z') / 1000));
  });

  it('throws a SourceHttpError within a bounded time when the venue fails entirely', async () => {
    server = await startReplayServer([{ path: /.*/, responses: [{ status: 500 }] }]);
    const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: { ...FAST, retries: 2 } });
    const t0 = Date.now();
    const err = await adapter.sync(ctx({ tracked: track('A') })).catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(err).toBeInstanceOf(SourceHttpError);
    expect((err as VenueSyncError).partial.requests).toBe(3);
  });

  it('a request the venue refuses (4xx) fails the venue with the venue\'s reason, not a bare status (QA)', async () => {
    // Kalshi's 400 bodies as public clients quote them: {"error":{"code":"invalid_parameters"}}, with a message when it gives one.
    server = await startReplayServer([
      { path: '/trade-api/v2/markets', responses: [json({ error: { code: 'invalid_parameters', message: 'cursor is invalid' } }, 400)] },
    ]);
    const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
    const err = (await adapter.sync(ctx()).catch((e: unknown) => e)) as VenueSyncError;
    expect(err).toBeInstanceOf(VenueSyncError);
    expect(err.message).toBe(`client_error: kalshi sync failed: HTTP 400: cursor is invalid (${server.url}/trade-api/v2/markets?status=open&mve_filter=exclude&limit=1000)`);
    await server.close();
    server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json({ error: { code: 'invalid_parameters' } }, 400)] }]);
    const bare = (await createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST }).sync(ctx()).catch((e: unknown) => e)) as VenueSyncError;
    expect(bare.message).toMatch(/^client_error: kalshi sync failed: HTTP 400: invalid_parameters \(/);
  });

  it('a tracked lookup failing after retries fails the venue (with partial rows)', async () => {
    server = await startReplayServer([
      { path: '/trade-api/v2/markets', responses: [json(page2)] },
      { path: /^\/trade-api\/v2\/markets\//, responses: [{ status: 500 }] },
    ]);
    const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: { ...FAST, retries: 1 } });
    const err = (await adapter.sync(ctx({ tracked: track('KXCPI-25SEP-T0.3') })).catch((e: unknown) => e)) as VenueSyncError;
    expect(err).toBeInstanceOf(VenueSyncError);
    expect(err.partial.questions).toHaveLength(1);
  });

  it('reads the current fixed-point payloads exactly: *_fp counts and *_dollars prices, the legacy integers only as a fallback', async () => {
    server = await startReplayServer([
      { path: '/trade-api/v2/markets', responses: [json(fixedPoint)] },
      { path: /^\/trade-api\/v2\/markets\/[^/]+$/, responses: (req) => json({ market: fixedPoint.markets.find((m: { ticker: string }) => req.path.endsWith(`/${m.ticker}`)) }) },
    ]);
    const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
    // A sync after the settlement (2026-08-28): a resolution is never dated after its sync.
    const r = await adapter.sync({ ...ctx({ tracked: track('KXWTAMATCH-26AUG26AAABBB-AAA') }), now: new Date('2026-09-01T00:00:00Z') });

    // The real market: no integer volume at all; volume_fp "896792.27" is stored as that decimal's
    // double (not null, not a float computed on the way), prices from the dollar strings.
    const real = r.market_prices.find((p) => p.question_id === 'kalshi:KXWTAMATCH-26AUG27VIDBAR-BAR')!;
    expect(real).toMatchObject({ volume: 896792.27, best_bid: 0.63, best_ask: 0.64, probability: 0.635, liquidity: null });
    expect(real.volume).toBe(Number('896792.27'));
    // A malformed fixed-point value is not read (Number() would accept "1.2e5"): the legacy integer is.
    const legacy = r.market_prices.find((p) => p.question_id === 'kalshi:KXWTAMATCH-26AUG28CCCDDD-CCC')!;
    expect(legacy).toMatchObject({ volume: 120000, best_bid: 0.81, best_ask: 0.82 });

    // The settled one (tracked): resolved NO by the settlement rule, named as such.
    expect(r.resolutions).toHaveLength(1);
    expect(r.resolutions[0]).toMatchObject({
      question_id: 'kalshi:KXWTAMATCH-26AUG26AAABBB-AAA',
      outcome: 0,
      method: 'kalshi:settled_result',
      resolved_at: new Date('2026-08-28T02:04:11Z'),
    });
    expect(r.resolutions[0]!.evidence_excerpt).toContain('settlement_value_dollars=0.0000');
  });

  it('a liquidity_dollars of "0.0000" (the deprecated field current payloads carry) is no liquidity figure: the min-liquidity filter does not drop every Kalshi market', async () => {
    // markets-fixed-point.json[0] is a real, busy market (a live book at 0.63/0.64, 896,792
    // contracts traded) whose liquidity_dollars is "0.0000" like every market's since Kalshi
    // deprecated the field; with QUORUM_MIN_LIQUIDITY set, discovery took none of them.
    server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json(fixedPoint)] }]);
    const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
    const r = await adapter.sync(ctx({ filters: { minLiquidity: 1000 } }));
    expect(r.questions.map((q) => q.question_id)).toEqual(['kalshi:KXWTAMATCH-26AUG27VIDBAR-BAR', 'kalshi:KXWTAMATCH-26AUG28CCCDDD-CCC']);
    // Stored as unknown, not as a liquidity of 0 dollars.
    expect(r.market_prices.map((p) => p.liquidity)).toEqual([null, null]);
  });

  it('a side of the book quoted "0.0000" is empty, not a price: a bid-only market is priced by its last trade, not at half its bid (QA)', async () => {
    // Current payloads send "0.0000" for a side with no orders (public Kalshi clients' tests read a
    // bid "0.1500" beside an ask "0.0000" as 0.15, and "0 and 1 are not prices"); the real market's
    // field set, its asks gone. The mid of 0.15 and 0 stored 0.075 as the market probability.
    const bidOnly = { ...fixedPoint.markets[0], ticker: 'KXBIDONLY-26', yes_bid_dollars: '0.1500', yes_ask_dollars: '0.0000', no_bid_dollars: '1.0000', no_ask_dollars: '0.8500', last_price_dollars: '0.1500' };
    const askOnly = { ...fixedPoint.markets[0], ticker: 'KXASKONLY-26', yes_bid_dollars: '0.0000', yes_ask_dollars: '0.0700', last_price_dollars: '0.0600' };
    const empty = { ...fixedPoint.markets[0], ticker: 'KXEMPTY-26', yes_bid_dollars: '0.0000', yes_ask_dollars: '0.0000', last_price_dollars: '0.0000' };
    server = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json({ markets: [bidOnly, askOnly, empty], cursor: '' })] }]);
    const adapter = createKalshiAdapter({ baseUrl: `${server.url}/trade-api/v2`, clientOptions: FAST });
    const r = await adapter.sync(ctx());
    expect(r.questions).toHaveLength(3);
    expect(r.market_prices.map((p) => [p.question_id, p.probability, p.best_bid, p.best_ask])).toEqual([
      ['kalshi:KXBIDONLY-26', 0.15, 0.15, null],
      ['kalshi:KXASKONLY-26', 0.06, null, 0.07],
    ]);
  });
});
