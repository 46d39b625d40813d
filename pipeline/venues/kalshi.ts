/**
 * Kalshi adapter (Trade API v2, public market data).
 *
 * Discovery: `GET {base}/markets?status=open&mve_filter=exclude&limit=1000&cursor=` (cursor
 * pagination; an empty cursor ends it, a cursor already followed is a pagination loop;
 * `max_close_ts` when closeWithinDays is set). Tracked markets
 * the discovery did not return: `GET {base}/markets/{ticker}` (`{ market: … }`; 404 = not found).
 *
 * Semantics:
 *  - question_id = `kalshi:<ticker>`; only `market_type` "binary" (or absent) is kept. The title
 *    is the market's `title` with its YES side appended, `(Yes: <yes_sub_title>)`, when Kalshi
 *    names one (the markets of a game or bracket event all carry the event's title).
 *  - Current payloads carry fixed-point decimal strings and no integers: prices and liquidity as
 *    `*_dollars` ("0.6300"), counts as `*_fp` (`volume_fp` "896792.27" contracts,
 *    `open_interest_fp`). They are preferred when present and read exactly (util.fixedPoint: the
 *    decimal's nearest double, no arithmetic); the integer fields of older payloads are the
 *    fallback (`yes_bid`, `yes_ask`, `last_price`, `liquidity` in cents / 100; `volume` in
 *    contracts). A side quoted at 0 or 1.00 is an empty side of the book, not a price: current
 *    payloads send "0.0000" for a side with no orders (an ask of "0.0000" beside a bid of "0.1500"),
 *    legacy ones an ask of 100 cents; no one sells YES for nothing or bids its whole payout.
 *    probability = mid(bid, ask) when both sides exist, else the last price (none → no
 *    observation). volume = contracts traded; liquidity = dollars, null when `liquidity_dollars`
 *    is 0: Kalshi deprecated the field in January 2026 and sends "0.0000" for every market since,
 *    busy books included, so 0 is no figure (read as one, QUORUM_MIN_LIQUIDITY dropped every
 *    Kalshi market from discovery); the legacy integer `liquidity` is read as it is.
 *  - Status: initialized/unopened/inactive → not trading (no price); active/open → open;
 *    closed/determined/disputed/amended → closed, not final; finalized/settled → final, with
 *    `result` yes → 1, no → 0 (method `kalshi:settled_result`), void → annulled (method
 *    `kalshi:settled_void`); "scalar" or an empty result is not a binary outcome (skipped). Any
 *    other status is skipped.
 */
import { z } from 'zod';
import {
  DriverSettings,
  closeBefore,
  NOT_FOUND,
  lookupEach,
  paginationLoop,
  runVenueSync,
  type AdapterOptions,
  type DiscoveryControl,
  type MarketSnapshot,
  type Normalized,
  type RawPage,
  type VenueDriver,
} from './core.ts';
import type { VenueAdapter, VenueSyncContext } from './types.ts';
import { blankToNull, clip, firstIssue, fixedPoint, readClose, round6, toDate } from './util.ts';

export interface KalshiAdapterOptions extends AdapterOptions {
  baseUrl: string;
}

export const KALSHI_PAGE_SIZE = 1000;

/** A fixed-point field: Kalshi sends strings; a number is taken as is. */
const fp = z.union([z.string(), z.number()]).nullish();

const KalshiMarket = z.object({
  ticker: z.string().min(1),
  event_ticker: z.string().nullish(),
  market_type: z.string().nullish(),
  title: z.string().min(1),
  subtitle: z.string().nullish(),
  yes_sub_title: z.string().nullish(),
  no_sub_title: z.string().nullish(),
  created_time: z.string().nullish(),
  open_time: z.string().nullish(),
  close_time: z.string().nullish(),
  expiration_time: z.string().nullish(),
  settlement_ts: z.string().nullish(),
  status: z.string().min(1),
  yes_bid: z.number().nullish(),
  yes_ask: z.number().nullish(),
  last_price: z.number().nullish(),
  // Fixed-point fields are decimal strings; a malformed one reads as absent (then the legacy field).
  yes_bid_dollars: fp,
  yes_ask_dollars: fp,
  last_price_dollars: fp,
  volume: z.number().nullish(),
  volume_fp: fp,
  open_interest: z.number().nullish(),
  open_interest_fp: fp,
  liquidity: z.number().nullish(),
  liquidity_dollars: fp,
  result: z.string().nullish(),
  settlement_value_dollars: z.string().nullish(),
  rules_primary: z.string().nullish(),
  rules_secondary: z.string().nullish(),
});
type KalshiMarket = z.infer<typeof KalshiMarket>;

const KalshiPage = z.object({ markets: z.array(z.unknown()).nullable(), cursor: z.string().nullish() });

const NOT_TRADING = new Set(['initialized', 'unopened', 'inactive']);
const OPEN = new Set(['active', 'open']);
const CLOSED = new Set(['closed', 'determined', 'disputed', 'amended']);
const FINAL = new Set(['finalized', 'settled']);

/**
 * Dollars from the `*_dollars` fixed-point string, else the legacy integer cents / 100 (a
 * correctly rounded division: the same double as the decimal); null when neither is readable.
 */
function dollars(dollarField: string | number | null | undefined, cents: number | null | undefined): number | null {
  const d = fixedPoint(dollarField);
  if (d !== null) return d;
  return typeof cents === 'number' && Number.isFinite(cents) ? cents / 100 : null;
}

/**
 * Liquidity in dollars, as `dollars` reads it, with a `liquidity_dollars` of 0 read as absent: it
 * is the deprecated field's placeholder (see the module doc), not a figure, so the legacy integer
 * cents when the payload has them, else null.
 */
function liquidityDollars(dollarField: string | number | null | undefined, cents: number | null | undefined): number | null {
  return dollars(fixedPoint(dollarField) === 0 ? null : dollarField, cents);
}

/** A count (contracts) from the `*_fp` fixed-point string, else the legacy integer. */
function count(fpField: string | number | null | undefined, legacy: number | null | undefined): number | null {
  return fixedPoint(fpField) ?? (typeof legacy === 'number' && Number.isFinite(legacy) ? legacy : null);
}

/** Validates one Kalshi market and maps it to a snapshot (see the module doc for the rules). */
export function normalizeKalshi(raw: unknown): Normalized {
  const idHint = raw && typeof raw === 'object' && typeof (raw as { ticker?: unknown }).ticker === 'string' ? (raw as { ticker: string }).ticker : null;
  const parsed = KalshiMarket.safeParse(raw);
  if (!parsed.success) return { ok: false, id: idHint, reason: `schema: ${firstIssue(parsed.error)}` };
  const m: KalshiMarket = parsed.data;
  const id = m.ticker;
  if (m.market_type && m.market_type !== 'binary') return { ok: false, id, reason: `non-binary market: market_type ${JSON.stringify(m.market_type)}` };
  const status = m.status.toLowerCase();

  let bid = dollars(m.yes_bid_dollars, m.yes_bid);
  let ask = dollars(m.yes_ask_dollars, m.yes_ask);
  const last = dollars(m.last_price_dollars, m.last_price);
  if (bid !== null && (bid <= 0 || bid >= 1)) bid = null;
  if (ask !== null && (ask <= 0 || ask >= 1)) ask = null;
  const probability = bid !== null && ask !== null ? round6((bid + ask) / 2) : last !== null && last > 0 && last < 1 ? last : null;
  const rules = [blankToNull(m.rules_primary), blankToNull(m.rules_secondary)].filter((s): s is string => s !== null).join('\n\n');
  const close = readClose(m.close_time);
  // Markets of one event share its title ("New York at Houston Winner?") and name their YES side
  // in yes_sub_title ("New York"): the title says it. Always, when there is one: a title naming
  // both sides ("New York at Houston") contains either, so containment tells nothing.
  const title = m.title.trim();
  const yesSide = blankToNull(m.yes_sub_title);
  const base: MarketSnapshot = {
    id,
    title: yesSide && title !== '' && title !== yesSide ? `${title} (Yes: ${yesSide})` : title,
    description: blankToNull(m.subtitle) ?? blankToNull(m.yes_sub_title),
    resolution_criteria: rules === '' ? null : rules,
    url: `https://kalshi.com/markets/${(m.event_ticker ?? id).toLowerCase()}`,
    created_at: toDate(m.open_time) ?? toDate(m.created_time),
    close_time: close.close,
    close_unreadable: close.unreadable,
    state: 'open',
    state_reason: `status ${status} on Kalshi`,
    probability,
    best_bid: bid,
    best_ask: ask,
    volume: count(m.volume_fp, m.volume),
    liquidity: liquidityDollars(m.liquidity_dollars, m.liquidity),
    forecasters: null,
  };
  if (OPEN.has(status)) return { ok: true, market: base };
  if (NOT_TRADING.has(status)) return { ok: true, market: { ...base, state: 'upcoming', probability: null } };
  if (CLOSED.has(status)) {
    return { ok: true, market: { ...base, state: 'closed', probability: null, state_reason: `closed on Kalshi (status ${status}, not final)` } };
  }
  if (!FINAL.has(status)) return { ok: false, id, reason: `unknown Kalshi status ${JSON.stringify(m.status)}` };

  const result = (m.result ?? '').toLowerCase();
  const excerpt = clip(
    `Kalshi market ${id}: status=${m.status}; result=${JSON.stringify(m.result ?? null)}; settlement_value_dollars=${m.settlement_value_dollars ?? 'null'}; settlement_ts=${m.settlement_ts ?? 'null'}; expiration_time=${m.expiration_time ?? 'null'}`,
    500,
  );
  const resolved_at = toDate(m.settlement_ts) ?? toDate(m.expiration_time) ?? base.close_time;
  const common = { ...base, probability: null };
  if (result === 'yes' || result === 'no') {
    const outcome = result === 'yes' ? 1 : 0;
    return {
      ok: true,
      market: {
        ...common,
        state: 'resolved',
        state_reason: `settled ${result.toUpperCase()} on Kalshi (status ${status})`,
        resolution: { outcome, resolved_at, evidence_excerpt: excerpt, method: 'kalshi:settled_result', annulled_reason: null },
      },
    };
  }
  if (result === 'void') {
    return {
      ok: true,
      market: {
        ...common,
        state: 'annulled',
        state_reason: `voided on Kalshi (status ${status})`,
        resolution: { outcome: null, resolved_at, evidence_excerpt: excerpt, method: 'kalshi:settled_void', annulled_reason: 'Kalshi voided the market (result "void"): positions refunded, no YES/NO outcome' },
      },
    };
  }
  return { ok: false, id, reason: `final status ${status} without a binary result (result ${JSON.stringify(m.result ?? null)})` };
}

class KalshiDriver extends DriverSettings implements VenueDriver {
  readonly venue = 'kalshi' as const;
  readonly name = 'Kalshi';

  constructor(opts: KalshiAdapterOptions) {
    super(opts.baseUrl, opts, {
      pageSize: KALSHI_PAGE_SIZE,
      parallel: 4,
      client: { requestsPerInterval: 10, intervalMs: 1000, concurrency: 4 },
    });
  }

  async *discover(ctx: VenueSyncContext, control: DiscoveryControl): AsyncIterable<RawPage> {
    const before = closeBefore(ctx);
    let cursor: string | null = null;
    const followed = new Set<string>();
    let page = 0;
    for (; page < this.maxPages && control.wantMore(); page++) {
      const url = new URL(`${this.base}/markets`);
      url.searchParams.set('status', 'open');
      url.searchParams.set('mve_filter', 'exclude');
      url.searchParams.set('limit', String(this.pageSize));
      if (before) url.searchParams.set('max_close_ts', String(Math.floor(before.getTime() / 1000)));
      if (cursor) url.searchParams.set('cursor', cursor);
      const body = await this.client.getJson(url, KalshiPage, ctx.signal);
      yield { items: body.markets ?? [], origin: `kalshi:${this.base}/markets` };
      cursor = blankToNull(body.cursor);
      if (!cursor || (body.markets ?? []).length === 0) return;
      if (followed.has(cursor)) throw paginationLoop(this.name, url, page + 1, cursor);
      followed.add(cursor);
    }
    if (control.wantMore()) control.pageCapped(page);
  }

  lookup(ids: string[], ctx: VenueSyncContext): AsyncIterable<RawPage> {
    return lookupEach(
      ids,
      this.parallel,
      async (id, signal) => {
        const body = (await this.client.getRaw(`${this.base}/markets/${encodeURIComponent(id)}`, signal)) as { market?: unknown } | null;
        // `{"market": null}`: no such market, one skipped item (as a 404), not a schema error and a "not returned" both.
        if (body && typeof body === 'object' && 'market' in body) return body.market ?? NOT_FOUND;
        return body;
      },
      () => `kalshi:${this.base}/markets/{ticker}`,
      ctx.signal,
    );
  }

  normalize(raw: unknown): Normalized {
    return normalizeKalshi(raw);
  }
}

/** The Kalshi adapter (cursor discovery, finalized/settled settlements). */
export function createKalshiAdapter(opts: KalshiAdapterOptions): VenueAdapter {
  const driver = new KalshiDriver(opts);
  return { venue: 'kalshi', sync: (ctx) => runVenueSync(driver, ctx, opts) };
}
