/**
 * Polymarket adapter (Gamma API).
 *
 * Discovery: `GET {gamma}/markets?closed=false&active=true&archived=false&order=volumeNum&ascending=false&limit=&offset=`
 * (offset pagination; a short page ends it). Gamma refuses offsets past a cap (2000 since it
 * deprecated this listing: HTTP 422 `{"type":"validation error","error":"offset too large, use
 * /markets/keyset for deeper pagination"}`): a 422 after the first page ends discovery with a
 * warning, like the page cap, and the lookups still run. Tracked markets the discovery did not return are looked
 * up by condition id: `GET {gamma}/markets?condition_ids=…&condition_ids=…&limit=` (and once more
 * with `closed=true` for any still missing, whatever Gamma's default for `closed`).
 *
 * Semantics:
 *  - question_id = `polymarket:<conditionId>`.
 *  - `outcomes`, `outcomePrices`, `clobTokenIds` are JSON-encoded strings. Only Yes/No markets are
 *    binary; "Yes" is found by name (it is not always first). Anything else is skipped.
 *  - probability = outcomePrices[yes]; ["0","0"] (Gamma's placeholder when it has no price) is
 *    no price, not YES at 0. Gamma quotes bestBid/bestAsk for the FIRST outcome token;
 *    when "No" is first they are converted to the Yes side (bid = 1 − ask, ask = 1 − bid).
 *    volume = volumeNum, liquidity = liquidityNum (USDC).
 *  - The UMA status is `umaResolutionStatus`, else the last entry of `umaResolutionStatuses` (a
 *    JSON-encoded history such as ["proposed","resolved"]; "[]" when UMA has reported nothing).
 *    An unknown status is skipped.
 *  - `outcomePrices` alone never resolves a market: a book at ["1","0"] is a price, not a payout.
 *    A resolution counts only when the market is closed, no longer accepts orders, its payout is
 *    final ([1,0]/[0,1] → outcome, [0.5,0.5] → annulled 50-50), and one of these rules fires,
 *    named in the resolution's `method`:
 *      `polymarket:uma_resolved`: the UMA status is "resolved";
 *      `polymarket:automatically_resolved`: no UMA status, and Gamma flags `automaticallyResolved`
 *        (markets settled by the venue's own feed, e.g. Chainlink-priced up/down markets);
 *      `polymarket:final_payout_without_uma_fields`: a market from before UMA statuses were
 *        published (neither field present at all) with a final payout.
 *    "proposed"/"disputed"/"challenged"/"pending" are NOT final; nor is a closed market that still
 *    accepts orders (`acceptingOrders`), or whose UMA history is empty: it is only closed.
 *  - One observation per market per sync comes from the Gamma snapshot. When a tracked market's
 *    latest observation is older than the backfill gap (a missed sync), the gap is filled from the
 *    CLOB: `GET {clob}/prices-history?market=<YES token id>&startTs=&endTs=&fidelity=<minutes>`
 *    → `{"history":[{"t":<unix s>,"p":<price>}]}` (a `t` over 1e11 is read as unix ms). The YES token is `clobTokenIds[i]` for the
 *    index i of "Yes" in `outcomes` (the two arrays are parallel). The CLOB has its own
 *    rate-limited client. It refuses a range over about 15 days: a longer gap is read in
 *    consecutive windows of 14 days (points on a window's edge are kept once by the backfill's
 *    one-per-step rule).
 */
import { z } from 'zod';
import {
  DriverSettings,
  closeBefore,
  runVenueSync,
  type AdapterOptions,
  type DiscoveryControl,
  type MarketSnapshot,
  type Normalized,
  type PriceHistory,
  type RawPage,
  type VenueDriver,
} from './core.ts';
import type { VenueAdapter, VenueSyncContext } from './types.ts';
import { blankToNull, clip, firstIssue, readClose, toDate, toNumber } from './util.ts';
import { SourceHttpError, createSourceClient, type SourceClient, type SourceClientOptions } from '../sources/http-client.ts';

export interface PolymarketAdapterOptions extends AdapterOptions {
  gammaUrl: string;
  /** The CLOB API (price history for gap backfill); without it gaps stay unfilled. */
  clobUrl?: string;
  /** A ready CLOB client, or options for one (default: 10 requests/s; deadline, retries and backoff as the Gamma client's). */
  clobClient?: SourceClient;
  clobClientOptions?: SourceClientOptions;
}

export const POLYMARKET_PAGE_SIZE = 100;
const LOOKUP_CHUNK = 50;

/** A JSON-encoded string array (or, leniently, a real array); decoded in normalize (cheaper than a zod transform). */
const jsonStrings = z.union([z.string(), z.array(z.union([z.string(), z.number()]))]);
const numOrString = z.union([z.number(), z.string()]);

/**
 * A JSON-encoded pair of plain strings, `["Yes", "No"]`: Gamma's usual shape, read without
 * JSON.parse (no escapes or control characters inside, JSON whitespace only, so the result is
 * exactly JSON.parse's).
 */
const PLAIN_PAIR = /^\[[ \t\n\r]*"([^"\\\u0000-\u001f]*)"[ \t\n\r]*,[ \t\n\r]*"([^"\\\u0000-\u001f]*)"[ \t\n\r]*\]$/;

/** Decodes a JSON-encoded array of strings; null when it is not one. */
function decodeStrings(v: string | unknown[]): string[] | null {
  let arr: unknown = v;
  if (typeof v === 'string') {
    const pair = PLAIN_PAIR.exec(v);
    if (pair) return [pair[1]!, pair[2]!];
    try {
      arr = JSON.parse(v);
    } catch {
      return null;
    }
  }
  if (!Array.isArray(arr) || !arr.every((x) => typeof x === 'string' || typeof x === 'number')) return null;
  return arr.map(String);
}

/** The outcome name, compared as Gamma means it: case and surrounding spaces do not matter. */
const YES = /^\s*yes\s*$/i;
const NO = /^\s*no\s*$/i;

/** The fields this adapter reads (others, e.g. id, archived, lastTradePrice, are not needed and not checked). */
const GammaMarket = z.object({
  conditionId: z.string().min(1),
  question: z.string().min(1),
  slug: z.string().nullish(),
  description: z.string().nullish(),
  resolutionSource: z.string().nullish(),
  startDate: z.string().nullish(),
  createdAt: z.string().nullish(),
  endDate: z.string().nullish(),
  closedTime: z.string().nullish(),
  umaEndDate: z.string().nullish(),
  outcomes: jsonStrings,
  outcomePrices: jsonStrings.nullish(),
  clobTokenIds: z.union([z.string(), z.array(z.unknown())]).nullish(), // only the price history needs it: read leniently
  volumeNum: z.number().nullish(),
  volume: numOrString.nullish(),
  liquidityNum: z.number().nullish(),
  liquidity: numOrString.nullish(),
  bestBid: numOrString.nullish(),
  bestAsk: numOrString.nullish(),
  active: z.boolean().nullish(),
  closed: z.boolean().nullish(),
  acceptingOrders: z.boolean().nullish(),
  automaticallyResolved: z.boolean().nullish(),
  umaResolutionStatus: z.string().nullish(),
  umaResolutionStatuses: jsonStrings.nullish(),
  events: z.array(z.object({ slug: z.string().nullish() })).nullish(),
});
type GammaMarket = z.infer<typeof GammaMarket>;

const GammaPage = z.array(z.unknown());

/** CLOB prices-history: points are validated one by one (a bad point is dropped, not the series). */
const ClobHistory = z.object({ history: z.array(z.unknown()) });
const ClobPoint = z.object({ t: z.number().int().positive(), p: z.number().min(0).max(1) });

const UMA_NOT_FINAL = new Set(['proposed', 'disputed', 'challenged', 'pending']);

function marketUrl(m: GammaMarket): string {
  const eventSlug = m.events?.find((e) => e.slug)?.slug;
  if (eventSlug) return `https://polymarket.com/event/${eventSlug}`;
  return `https://polymarket.com/market/${m.slug ?? m.conditionId}`;
}

function pricesAre(prices: (number | null)[], a: number, b: number): boolean {
  return prices.length === 2 && ((prices[0] === a && prices[1] === b) || (prices[0] === b && prices[1] === a));
}

/** Validates one Gamma market and maps it to a snapshot (see the module doc for the rules). */
export function normalizePolymarket(raw: unknown): Normalized {
  const idHint = raw && typeof raw === 'object' && typeof (raw as { conditionId?: unknown }).conditionId === 'string' ? (raw as { conditionId: string }).conditionId : null;
  const parsed = GammaMarket.safeParse(raw);
  if (!parsed.success) return { ok: false, id: idHint, reason: `schema: ${firstIssue(parsed.error)}` };
  const m = parsed.data;
  const id = m.conditionId;
  const outcomes = decodeStrings(m.outcomes);
  if (outcomes === null) return { ok: false, id, reason: 'schema: outcomes: not a JSON-encoded array of strings' };
  const outcomePrices = m.outcomePrices == null ? null : decodeStrings(m.outcomePrices);
  if (m.outcomePrices != null && outcomePrices === null) return { ok: false, id, reason: 'schema: outcomePrices: not a JSON-encoded array of strings' };
  const yes = outcomes.length !== 2 ? -1 : YES.test(outcomes[0]!) ? (NO.test(outcomes[1]!) ? 0 : -1) : YES.test(outcomes[1]!) && NO.test(outcomes[0]!) ? 1 : -1;
  if (yes === -1) {
    // One reason for them all (the report counts skipped items by reason): with the outcomes in
    // it, each team-named sports market had its own (QA).
    return { ok: false, id, reason: 'non-binary market: outcomes are not Yes and No' };
  }
  const prices = (outcomePrices ?? []).map(toNumber);
  // The YES token's id (parallel to outcomes); only the price history needs it, so a bad value is
  // no reason to skip the market.
  const tokens = m.clobTokenIds == null ? null : decodeStrings(m.clobTokenIds);
  const history_key = tokens?.length === 2 ? tokens[yes] ?? null : null;
  // ["0","0"] is Gamma's placeholder for a market it has no price for (not YES at 0%): no price.
  const yesPrice = prices.length === 2 && !(prices[0] === 0 && prices[1] === 0) ? prices[yes] ?? null : null;
  // The UMA status: the current one, else the last of the published history (see the module doc).
  const history = m.umaResolutionStatuses == null ? null : decodeStrings(m.umaResolutionStatuses);
  const uma = (blankToNull(m.umaResolutionStatus) ?? blankToNull(history?.at(-1)))?.toLowerCase() ?? null;
  if (uma !== null && uma !== 'resolved' && !UMA_NOT_FINAL.has(uma)) {
    return { ok: false, id, reason: `unknown umaResolutionStatus ${JSON.stringify(m.umaResolutionStatus ?? history?.at(-1))}` };
  }
  // Neither UMA field at all (absent or null; "[]" is a published, empty history).
  const noUmaFields = m.umaResolutionStatus == null && m.umaResolutionStatuses == null;

  // Gamma's bid/ask are for the first outcome token: convert when Yes is second.
  const b = toNumber(m.bestBid);
  const a = toNumber(m.bestAsk);
  const best_bid = yes === 0 ? b : a === null ? null : 1 - a;
  const best_ask = yes === 0 ? a : b === null ? null : 1 - b;

  const close = readClose(m.endDate);
  const base: MarketSnapshot = {
    id,
    title: m.question.trim(),
    description: blankToNull(m.description),
    resolution_criteria: blankToNull(m.resolutionSource) ? `Resolution source: ${m.resolutionSource!.trim()}` : null,
    url: marketUrl(m),
    created_at: toDate(m.startDate) ?? toDate(m.createdAt),
    close_time: close.close,
    close_unreadable: close.unreadable,
    state: 'open',
    state_reason: 'open on Polymarket',
    probability: yesPrice !== null && yesPrice >= 0 && yesPrice <= 1 ? yesPrice : null,
    best_bid: best_bid === null ? null : Math.round(best_bid * 1e6) / 1e6,
    best_ask: best_ask === null ? null : Math.round(best_ask * 1e6) / 1e6,
    volume: m.volumeNum ?? toNumber(m.volume),
    liquidity: m.liquidityNum ?? toNumber(m.liquidity),
    forecasters: null,
    history_key,
  };

  if (m.closed !== true) {
    if (m.active === false) return { ok: true, market: { ...base, state: 'upcoming', state_reason: 'not active on Polymarket' } };
    return { ok: true, market: base };
  }

  // Closed: final only when a rule of the module doc fires and the book is shut.
  const closedAt = toDate(m.closedTime) ?? base.close_time;
  const finalPrices = pricesAre(prices, 1, 0) || pricesAre(prices, 0.5, 0.5);
  const rule =
    uma === 'resolved'
      ? 'polymarket:uma_resolved'
      : uma !== null || !finalPrices
        ? null
        : m.automaticallyResolved === true
          ? 'polymarket:automatically_resolved'
          : noUmaFields
            ? 'polymarket:final_payout_without_uma_fields'
            : null;
  if (rule === null || m.acceptingOrders === true) {
    const why =
      m.acceptingOrders === true
        ? 'still accepting orders, not final'
        : uma
          ? `UMA resolution ${uma}, not final`
          : 'awaiting resolution (no UMA resolution yet)';
    return { ok: true, market: { ...base, close_time: closedAt, state: 'closed', state_reason: `closed on Polymarket; ${why}` } };
  }
  if (!finalPrices || yesPrice === null) {
    return { ok: false, id, reason: `resolved but payout ${JSON.stringify(m.outcomePrices)} is neither 1/0 nor 0.5/0.5` };
  }
  const excerpt = clip(
    `Polymarket Gamma: closed=true; acceptingOrders=${m.acceptingOrders ?? 'null'}; umaResolutionStatus=${m.umaResolutionStatus ?? 'null'}; umaResolutionStatuses=${JSON.stringify(history)}; automaticallyResolved=${m.automaticallyResolved ?? 'null'}; outcomes=${JSON.stringify(outcomes)}; outcomePrices=${JSON.stringify(outcomePrices)}; closedTime=${m.closedTime ?? 'null'}`,
    500,
  );
  const resolved_at = toDate(m.closedTime) ?? toDate(m.umaEndDate) ?? base.close_time;
  const common = { ...base, close_time: closedAt, probability: null };
  if (yesPrice === 0.5) {
    return {
      ok: true,
      market: {
        ...common,
        state: 'annulled',
        state_reason: `resolved 50-50 on Polymarket (${rule})`,
        resolution: { outcome: null, resolved_at, evidence_excerpt: excerpt, method: rule, annulled_reason: 'Polymarket paid out 50-50 (outcomePrices ["0.5","0.5"]): the question was resolved as unknown/ambiguous' },
      },
    };
  }
  const outcome = yesPrice === 1 ? 1 : 0;
  return {
    ok: true,
    market: {
      ...common,
      state: 'resolved',
      state_reason: `resolved ${outcome === 1 ? 'YES' : 'NO'} on Polymarket (${rule})`,
      resolution: { outcome, resolved_at, evidence_excerpt: excerpt, method: rule, annulled_reason: null },
    },
  };
}

/**
 * The longest startTs..endTs range one prices-history request asks for: the CLOB refuses ranges
 * over about 15 days (HTTP 400 "invalid filters: 'startTs' and 'endTs' interval is too long"), so
 * a longer gap (QUORUM_BACKFILL_DAYS above 15) is read in windows of 14 days.
 */
const CLOB_WINDOW_S = 14 * 86_400;

/** The CLOB's own rate (its documented limits are higher). */
const CLOB_RATE = { requestsPerInterval: 10, intervalMs: 1000, concurrency: 4 };

/** Client options without the rate: what the CLOB client shares with the Gamma one. */
function withoutRate(o: SourceClientOptions = {}): SourceClientOptions {
  const { requestsPerInterval: _r, intervalMs: _i, concurrency: _c, ...shared } = o;
  return shared;
}

class PolymarketDriver extends DriverSettings implements VenueDriver {
  readonly venue = 'polymarket' as const;
  readonly name = 'Polymarket';
  private readonly clob: { base: string; client: SourceClient } | null;
  /** Present when a CLOB URL is configured. */
  readonly history: VenueDriver['history'];

  constructor(opts: PolymarketAdapterOptions) {
    // Base: the Gamma API (markets, tracked lookups by condition id).
    super(opts.gammaUrl, opts, {
      pageSize: POLYMARKET_PAGE_SIZE,
      parallel: 4,
      client: { requestsPerInterval: 20, intervalMs: 1000, concurrency: 4 },
    });
    this.clob = opts.clobUrl
      ? {
          base: opts.clobUrl.replace(/\/+$/, ''),
          client: opts.clobClient ?? createSourceClient({ ...CLOB_RATE, ...withoutRate(opts.clientOptions), ...opts.clobClientOptions }),
        }
      : null;
    this.history = this.clob ? (market, from, to, stepMs, ctx) => this.clobHistory(this.clob!, market, from, to, stepMs, ctx) : undefined;
  }

  /** The YES price history from the CLOB (see the module doc). */
  private async clobHistory(
    clob: { base: string; client: SourceClient },
    market: MarketSnapshot,
    from: Date,
    to: Date,
    stepMs: number,
    ctx: VenueSyncContext,
  ): Promise<PriceHistory> {
    const points: { at: Date; probability: number }[] = [];
    let dropped = 0;
    // Both ends rounded down: a point at or after `to` is dropped by the backfill anyway, and a
    // rounded-up end made a gap of exactly 14 days 14 days and 1 s, a second request for that second.
    const [start, end] = [Math.floor(from.getTime() / 1000), Math.floor(to.getTime() / 1000)];
    // One request per window of at most CLOB_WINDOW_S, oldest first (see the module doc).
    for (let windowStart = start; windowStart < end || windowStart === start; windowStart += CLOB_WINDOW_S) {
      const url = new URL(`${clob.base}/prices-history`);
      url.searchParams.set('market', market.history_key!);
      url.searchParams.set('startTs', String(windowStart));
      url.searchParams.set('endTs', String(Math.min(end, windowStart + CLOB_WINDOW_S)));
      url.searchParams.set('fidelity', String(Math.max(1, Math.round(stepMs / 60_000))));
      const body = await clob.client.getJson(url, ClobHistory, ctx.signal);
      for (const raw of body.history) {
        const p = ClobPoint.safeParse(raw);
        // `t` is unix seconds (the docs); a value over 1e11 is milliseconds (1e11 s is the year
        // 5138, 1e11 ms 1973), taken as such: read as seconds it was a time past `to`, dropped
        // without a count (QA).
        if (p.success) points.push({ at: new Date(p.data.t > 1e11 ? p.data.t : p.data.t * 1000), probability: p.data.p });
        else dropped++;
      }
    }
    return { points, dropped, origin: `polymarket:${clob.base}/prices-history` };
  }

  get origin(): string {
    return `polymarket:${this.base}/markets`;
  }

  async *discover(ctx: VenueSyncContext, control: DiscoveryControl): AsyncIterable<RawPage> {
    const before = closeBefore(ctx);
    let page = 0;
    for (; page < this.maxPages && control.wantMore(); page++) {
      const url = new URL(`${this.base}/markets`);
      const q = url.searchParams;
      q.set('closed', 'false');
      q.set('active', 'true');
      q.set('archived', 'false');
      q.set('order', 'volumeNum');
      q.set('ascending', 'false');
      q.set('limit', String(this.pageSize));
      q.set('offset', String(page * this.pageSize));
      if (ctx.filters.minLiquidity !== undefined) q.set('liquidity_num_min', String(ctx.filters.minLiquidity));
      if (before) q.set('end_date_max', before.toISOString());
      let items: unknown[];
      try {
        items = await this.client.getJson(url, GammaPage, ctx.signal);
      } catch (err) {
        // Past Gamma's offset cap: the end of what this listing can read (see the module doc).
        if (!(page > 0 && err instanceof SourceHttpError && err.status === 422)) throw err;
        const why = err.body ? `: ${clip(err.body.replace(/\s+/g, ' '), 160)}` : '';
        control.stoppedEarly(`discovery stopped after ${page} page${page === 1 ? '' : 's'}: ${this.name} refused offset ${page * this.pageSize} (HTTP 422${why})`);
        return;
      }
      yield { items, origin: this.origin };
      if (items.length < this.pageSize) return;
    }
    // Offsets cannot loop; a full last page means more may follow.
    if (control.wantMore()) control.pageCapped(page);
  }

  async *lookup(ids: string[], ctx: VenueSyncContext): AsyncIterable<RawPage> {
    for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
      const chunk = ids.slice(i, i + LOOKUP_CHUNK);
      let missing = chunk;
      for (const closed of [null, 'true'] as const) {
        const url = new URL(`${this.base}/markets`);
        for (const id of missing) url.searchParams.append('condition_ids', id);
        url.searchParams.set('limit', String(missing.length));
        if (closed) url.searchParams.set('closed', closed);
        const items = await this.client.getJson(url, GammaPage, ctx.signal);
        const got = new Set(items.map((x) => (x && typeof x === 'object' ? (x as { conditionId?: unknown }).conditionId : undefined)));
        missing = missing.filter((id) => !got.has(id));
        yield { items, origin: this.origin, notFound: closed && missing.length > 0 ? missing : [] };
        if (missing.length === 0) break;
      }
    }
  }

  normalize(raw: unknown): Normalized {
    return normalizePolymarket(raw);
  }
}

/** The Polymarket adapter (Gamma discovery, UMA-final resolutions). */
export function createPolymarketAdapter(opts: PolymarketAdapterOptions): VenueAdapter {
  const driver = new PolymarketDriver(opts);
  return {
    venue: 'polymarket',
    sync: (ctx) => runVenueSync(driver, ctx, opts),
  };
}
