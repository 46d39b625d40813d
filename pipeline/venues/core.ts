/**
 * The venue-independent half of a sync: turns each venue's normalized market snapshots into raw
 * rows (questions, market_prices, resolutions, lifecycle_events), applies the discovery filters,
 * keeps one price observation per market per sync, and converts a failed request into a
 * VenueSyncError carrying the partial result.
 *
 * A venue adapter supplies a `VenueDriver`: discovery pages, lookups of tracked markets that the
 * discovery did not return, and `normalize` (zod-validate one raw item, decide binary / state /
 * price / resolution). Everything else is here, so the four adapters behave the same way.
 */
import { marketIdProblem } from '../questions/market-id.ts';
import { classify as defaultClassify, type ClassifyInput } from '../taxonomy/classify.ts';
import { linkedController } from '../net/deadline.ts';
import { SourceHttpError, createSourceClient, type SourceClient, type SourceClientOptions } from '../sources/http-client.ts';
import { BLANK_TITLE } from '../text/blank-title.ts';
import { DEFAULT_BACKFILL, type BackfillOptions } from './defaults.ts';
import { DEFAULT_REMOVED_ANNUL_DAYS, RemovedMarketRule } from './removed-market.ts';
import {
  VenueSyncError,
  type DiscoveryFilters,
  type Row,
  type SkippedItem,
  type Venue,
  type VenueSyncContext,
  type VenueSyncResult,
} from './types.ts';

/** What a classifier returns (pipeline/taxonomy/classify.ts). */
export interface Classified {
  category: string;
  domain: string;
  tags: string[];
}
export type Classifier = (q: ClassifyInput) => Classified;

/** A market's lifecycle state as the warehouse records it. */
export type MarketState = 'upcoming' | 'open' | 'closed' | 'resolved' | 'annulled';

export interface ResolutionInfo {
  /** 1 (YES), 0 (NO), or null when annulled. */
  outcome: 1 | 0 | null;
  /** When the venue says it resolved; null when it does not say (the sync's time is recorded). */
  resolved_at: Date | null;
  evidence_excerpt: string;
  method: string;
  annulled_reason: string | null;
}

/** One market as the core needs it, whatever the venue. */
export interface MarketSnapshot {
  id: string;
  title: string;
  description: string | null;
  resolution_criteria: string | null;
  url: string;
  created_at: Date | null;
  close_time: Date | null;
  /**
   * The venue sent a close time that is not a time (util's readClose); `close_time` is then null.
   * A new market so is skipped (`unreadable close time`); a tracked one keeps its stored close.
   */
  close_unreadable?: boolean;
  state: MarketState;
  /** Why the market is in that state, in the venue's words (lifecycle reason). */
  state_reason: string;
  probability: number | null;
  best_bid: number | null;
  best_ask: number | null;
  volume: number | null;
  liquidity: number | null;
  forecasters: number | null;
  /** Present when state is resolved or annulled. */
  resolution?: ResolutionInfo;
  /** The venue's id of the market's YES price series, for `VenueDriver.history` (null: none). */
  history_key?: string | null;
}

/** Past prices of one market's YES side, as a venue's history endpoint gives them. */
export interface PriceHistory {
  points: { at: Date; probability: number }[];
  /** Points dropped as unreadable (bad time or a probability outside [0, 1]). */
  dropped: number;
  /** The endpoint they came from (the price rows' origin). */
  origin: string;
}

/** History requests in flight at once (the client's rate limit still applies). */
const HISTORY_PARALLEL = 4;




/**
 * The warning for a sync in which every item the venue returned failed its schema (`seen` items,
 * `unreadable` of them unreadable, the first `reason`), or null: a change of the venue's API shape
 * read nothing while the venue was reported ok, exit 0, only `skipped` telling (outside test).
 * A warning, not a failure: one odd market among the tracked ones looked up alone is all of them.
 */
export function schemaDriftWarning(name: string, unreadable: number, seen: number, reason: string): string | null {
  if (unreadable === 0 || unreadable < seen) return null;
  return `every item ${name} returned (${seen}) failed its schema (the first: ${reason}): its API may have changed, and nothing of it was read`;
}

export type Normalized = { ok: true; market: MarketSnapshot } | { ok: false; id: string | null; reason: string };

/** A batch of raw items and the endpoint they came from (the price rows' origin). */
export interface RawPage {
  items: unknown[];
  origin: string;
  /** Tracked ids the venue answered "not found" for (lookups only). */
  notFound?: string[];
}

export interface DiscoveryControl {
  /** False once maxMarkets new questions were taken: stop paginating. */
  wantMore(): boolean;
  /**
   * Discovery stopped after `pages` pages, the page cap, while the venue had more: the sync's
   * report says so (a warning, not a failure: the cap is the operator's QUORUM_VENUE_MAX_PAGES).
   */
  pageCapped(pages: number): void;
  /**
   * Discovery stopped early for another reason the venue gave (Gamma refusing an offset past its
   * cap): the sync's report warns with `reason`; what was read is kept, the lookups still run.
   */
  stoppedEarly(reason: string): void;
}

/**
 * The error a driver throws when the venue's next-page cursor leads back to a page already read:
 * following it would read the same pages until the page cap. It fails the venue like a bad page
 * (runVenueSync turns it into a VenueSyncError; what earlier pages brought is kept).
 */
export function paginationLoop(name: string, url: URL | string, pages: number, cursor: string): SourceHttpError {
  const shown = cursor.length > 80 ? `${cursor.slice(0, 79)}…` : cursor;
  return new SourceHttpError('invalid_payload', String(url), `pagination loop: ${name}'s next page (${shown}) is one already read; discovery stopped after ${pages} page${pages === 1 ? '' : 's'}`);
}

export interface VenueDriver {
  readonly venue: Venue;
  /** Display name for reasons: "Polymarket". */
  readonly name: string;
  readonly client: SourceClient;
  discover(ctx: VenueSyncContext, control: DiscoveryControl): AsyncIterable<RawPage>;
  lookup(ids: string[], ctx: VenueSyncContext): AsyncIterable<RawPage>;
  normalize(raw: unknown, now: Date): Normalized;
  /**
   * The YES price history of a market between two times, `stepMs` apart at the finest (venues
   * with a history endpoint only). Throws SourceHttpError when the request fails.
   */
  history?(market: MarketSnapshot, from: Date, to: Date, stepMs: number, ctx: VenueSyncContext): Promise<PriceHistory>;
}

export interface CoreOptions {
  classify?: Classifier;
  /** Gap backfill settings (defaults: DEFAULT_BACKFILL); venues without a history ignore them. */
  backfill?: Partial<BackfillOptions>;
}

/** Options every adapter factory accepts (all optional; the registry fills them from VenueConfig). */
export interface AdapterOptions extends CoreOptions {
  /** A ready client (tests, or sharing one rate limit); otherwise one is created from clientOptions. */
  client?: SourceClient;
  /** Rate limit, retries, backoff, deadline, fetch: merged over the venue's defaults. */
  clientOptions?: SourceClientOptions;
  /** Items per discovery page (the venue's usual size by default). */
  pageSize?: number;
  /** Discovery pages per sync at most (default 20). */
  maxPages?: number;
  /** Single-market lookups in flight at once (default 4; the client's rate limit still applies). */
  lookupParallel?: number;
}

export const DEFAULT_MAX_PAGES = 20;

/** The adapter's client: the injected one, or a new one with the venue defaults under the overrides. */
export function clientFor(opts: AdapterOptions, defaults: SourceClientOptions): SourceClient {
  return opts.client ?? createSourceClient({ ...defaults, ...opts.clientOptions });
}

/** What every venue driver is configured with, read once from the adapter options. */
export abstract class DriverSettings {
  readonly client: SourceClient;
  /** The venue API's base URL, without a trailing slash. */
  protected readonly base: string;
  protected readonly pageSize: number;
  protected readonly maxPages: number;
  /** Single-market lookups in flight at once. */
  protected readonly parallel: number;

  constructor(
    baseUrl: string,
    opts: AdapterOptions,
    defaults: { pageSize: number; parallel: number; client: SourceClientOptions },
  ) {
    this.base = baseUrl.replace(/\/+$/, '');
    this.pageSize = opts.pageSize ?? defaults.pageSize;
    this.maxPages = opts.maxPages ?? DEFAULT_MAX_PAGES;
    this.parallel = opts.lookupParallel ?? defaults.parallel;
    this.client = clientFor(opts, defaults.client);
  }
}

/** Runs one sync of `driver` (see types.ts for the contract). */
export async function runVenueSync(driver: VenueDriver, ctx: VenueSyncContext, options: CoreOptions = {}): Promise<VenueSyncResult> {
  const classify = options.classify ?? (defaultClassify as Classifier);
  const { venue, name } = driver;
  const { now, filters, logger } = ctx;
  const log = logger.child({ venue });
  const startRequests = driver.client.stats.requests;
  const tracked = new Map<string, string>();
  const lastObserved = new Map<string, Date>();
  const storedClose = new Map<string, Date | null>();
  const storedResolution = new Map<string, { outcome: number | null; resolved_at: Date | null }>();
  for (const t of ctx.tracked) {
    tracked.set(t.venue_market_id, t.question_id);
    if (t.last_observed_at) lastObserved.set(t.question_id, t.last_observed_at);
    if (t.close_time !== undefined) storedClose.set(t.question_id, t.close_time);
    if (t.resolution) storedResolution.set(t.question_id, t.resolution);
  }
  const removedRule = new RemovedMarketRule(ctx.tracked, venue, name, now, { annulAfterDays: ctx.removedMarketAnnulDays ?? DEFAULT_REMOVED_ANNUL_DAYS });
  const backfill = { ...DEFAULT_BACKFILL, ...options.backfill };
  const gaps: { qid: string; market: MarketSnapshot; from: Date }[] = [];

  const result: VenueSyncResult = {
    venue,
    questions: [],
    market_prices: [],
    resolutions: [],
    amended_resolutions: [],
    lifecycle_events: [],
    close_time_changes: [],
    skipped: [],
    markets_seen: 0,
    requests: 0,
    warnings: [],
  };
  const seen = new Set<string>();
  /** Every id the venue returned (readable or not), for `markets_seen`; unreadable id-less items by their JSON. */
  const returned = new Set<string>();
  const returnedWithoutId = new Set<string>();
  /** Items already skipped while reading pages: a repeated page (offsets shifting, a loop) skips them once. */
  const skippedItems = new Set<string>();
  let added = 0;
  const maxNew = filters.maxMarkets ?? Infinity;
  const closeLimit = filters.closeWithinDays !== undefined ? now.getTime() + filters.closeWithinDays * 86_400_000 : Infinity;
  const categories = filters.categories && filters.categories.length > 0 ? new Set(filters.categories) : null;

  const skippedIds = new Set<string>();
  const skip = (id: string | null, reason: string) => {
    if (id !== null) skippedIds.add(id);
    result.skipped.push({ venue, venue_market_id: id, reason });
    log.debug({ venue_market_id: id, reason }, 'venue item skipped');
  };

  const priceRow = (qid: string, m: MarketSnapshot, origin: string) => {
    if (m.probability === null) {
      log.debug({ venue_market_id: m.id }, 'no price published: no observation recorded');
      return;
    }
    result.market_prices.push({
      question_id: qid,
      venue,
      observed_at: now,
      probability: m.probability,
      best_bid: m.best_bid,
      best_ask: m.best_ask,
      volume: m.volume,
      liquidity: m.liquidity,
      origin,
      ingested_at: now,
    });
  };

  const passesCheapFilters = (m: MarketSnapshot): boolean =>
    !(filters.minLiquidity !== undefined && m.liquidity !== null && m.liquidity < filters.minLiquidity) &&
    !(filters.minForecasters !== undefined && m.forecasters !== null && m.forecasters < filters.minForecasters) &&
    !(m.close_time !== null && m.close_time.getTime() > closeLimit);

  /**
   * When a resolution the venue reports happened: the venue's time, but never after this sync,
   * which saw it resolved; none → this sync. A venue time still ahead is a fallback field, not a
   * settlement (Kalshi without settlement_ts: expiration_time, which can be days or months on);
   * dated so, the resolution stayed invisible to every run until then, and the settled question
   * was forecast, and those forecasts scored, meanwhile.
   */
  const resolvedTime = (r: ResolutionInfo): Date => (r.resolved_at && r.resolved_at.getTime() <= now.getTime() ? r.resolved_at : now);

  /** The `resolutions` record of a market the venue resolved or annulled, dated `at`. */
  const resolutionRow = (qid: string, m: MarketSnapshot, at: Date): Row<'resolutions'> => {
    const r = m.resolution!;
    return {
      question_id: qid,
      outcome: r.outcome,
      resolved_at: at,
      source_slug: venue,
      source_url: m.url,
      evidence_excerpt: r.evidence_excerpt,
      retrieved_at: now,
      method: r.method,
      annulled_reason: r.annulled_reason,
    };
  };

  /**
   * A market resolved in the warehouse, rechecked: a resolution the venue changed since (Manifold
   * re-resolves, Kalshi amends, a resolution annulled) is a new record, dated by the venue when it
   * says a later time, else by this sync (so it is the question's latest, and a run dated before
   * the change does not see it); the same resolution again adds nothing.
   */
  const recheckResolution = (qid: string, m: MarketSnapshot, stored: { outcome: number | null; resolved_at: Date | null }) => {
    if (m.state !== 'resolved' && m.state !== 'annulled') {
      if (m.state === 'open') result.warnings.push(`${qid} is resolved in the warehouse but open again on ${name}: the stored resolution stands`);
      return;
    }
    const r = m.resolution!;
    if (stored.resolved_at === null) {
      // Stored without a time by a version before such resolutions were dated (never visible, and
      // no longer tracked): recorded again, dated as a first resolution is.
      result.amended_resolutions.push(resolutionRow(qid, m, resolvedTime(r)));
      return;
    }
    if (r.outcome === stored.outcome) return;
    const venueAt = resolvedTime(r);
    const later = r.resolved_at && venueAt.getTime() > stored.resolved_at.getTime();
    const at = later ? venueAt : now;
    const label = (o: number | null) => (o === null ? 'annulled' : o === 1 ? 'YES' : 'NO');
    result.amended_resolutions.push(resolutionRow(qid, m, at));
    result.lifecycle_events.push({
      question_id: qid, state: m.state, at, reason: `resolution amended on ${name}: ${label(stored.outcome)} before, ${label(r.outcome)} now`,
    });
  };

  /**
   * When the market closed, as far as this sync can tell: the venue's close time, except for a
   * market the venue calls closed while that time is absent or still ahead (closed early: Kalshi's
   * status, Polymarket's `closed`): then the close already stored if it has passed, else this sync
   * (QA soak: a market closed early kept its discovery-time close, stayed active and was forecast
   * and scored after it closed). A market no longer open (closed, resolved, annulled) whose stored
   * close has passed keeps it when the venue's is absent or later: it was closed by then (QA
   * review: one closed early had its close moved back to the venue's original time when it settled,
   * or when that time passed while it was still closed, so it was open again in hindsight). A
   * market resolved or annulled while the venue's close is absent or still ahead (settled early,
   * between two syncs: Kalshi keeps close_time at the scheduled one) closed by its resolution
   * (QA: such a question kept a close weeks ahead of its settlement, with no closed lifecycle).
   */
  const closedAt = (qid: string, m: MarketSnapshot): Date | null => {
    if (m.state === 'open' || m.state === 'upcoming') return m.close_time;
    const stored = storedClose.get(qid);
    const storedPassed = stored && stored.getTime() <= now.getTime() ? stored : null;
    if (storedPassed && (m.close_time === null || m.close_time.getTime() > storedPassed.getTime())) return storedPassed;
    if (m.close_time !== null && m.close_time.getTime() <= now.getTime()) return m.close_time;
    return m.state === 'closed' ? now : resolvedTime(m.resolution!);
  };

  /**
   * Whether an open market was closed in the warehouse (its stored close has passed) and the venue
   * has moved its close ahead again: Kalshi reopens a closed market by moving close_time into the
   * future (its market lifecycle: closed → active, event close_date_updated), Manifold creators
   * reopen a closed market by extending its close. The question is active again (a new version with
   * that close), so its lifecycle gets an `active` event: without it the lifecycle's last state (the
   * API's current status) stayed `closed` while the question was forecast and priced again (QA).
   */
  const reopened = (stored: Date | null | undefined, close: Date | null): boolean =>
    !!stored && stored.getTime() <= now.getTime() && close !== null && close.getTime() > now.getTime();

  /**
   * A market a sync found missing from the venue (removed-market.ts), back: a lifecycle event now
   * ends the count toward its annulment. A market open with its close ahead is active again (an
   * open one the rule had closed is `reopened`, whose event says so); any other is closed (a
   * resolved one gets its resolution's events).
   */
  const foundAgain = (qid: string, m: MarketSnapshot, stored: Date | null | undefined, close: Date | null) => {
    if (!removedRule.wasMissing(qid) || m.state === 'resolved' || m.state === 'annulled') return;
    if (m.state === 'open' && reopened(stored, close)) return;
    const open = (m.state === 'open' || m.state === 'upcoming') && (close === null || close.getTime() > now.getTime());
    result.lifecycle_events.push({ question_id: qid, state: open ? 'active' : 'closed', at: now, reason: `found again on ${name} (${m.state_reason})` });
  };

  const handleTracked = (qid: string, m: MarketSnapshot, origin: string) => {
    const resolved = storedResolution.get(qid);
    if (resolved) {
      // Resolved by a version before close-time versions, which never moved a close: the one it
      // was discovered with, still ahead, while the venue says it closed earlier. The sync that
      // sees a resolution writes the venue's close; this is that close, late (QA upgrade pass: a
      // resolved question kept a close a month past its resolution, and the forecasts made after
      // the market closed were scored).
      // Without a passed close from the venue, closedAt falls back to the resolution's time, and to
      // this recheck's when the venue gives none: the stored resolution's time when earlier, so the
      // close is never after the resolution it follows from (QA review).
      const stored = storedClose.get(qid);
      const venueClose = m.state === 'open' || m.state === 'upcoming' ? null : closedAt(qid, m);
      const venuePassed = m.close_time !== null && m.close_time.getTime() <= now.getTime();
      const close =
        !venuePassed && venueClose && resolved.resolved_at && resolved.resolved_at.getTime() < venueClose.getTime() ? resolved.resolved_at : venueClose;
      if (stored && close && stored.getTime() > now.getTime() && close.getTime() < stored.getTime()) {
        result.close_time_changes.push({ question_id: qid, close_time: close });
      }
      return recheckResolution(qid, m, resolved);
    }
    // The venue moved the close (Manifold creators extend or close early, Kalshi closes early):
    // the stored one would show an open market closed, or keep forecasting a closed one.
    const stored = storedClose.get(qid);
    const close = closedAt(qid, m);
    if (close !== null && stored !== undefined && stored?.getTime() !== close.getTime()) {
      result.close_time_changes.push({ question_id: qid, close_time: close });
    }
    foundAgain(qid, m, stored, close);
    switch (m.state) {
      case 'upcoming':
        return;
      case 'open': {
        if (reopened(stored, close)) {
          result.lifecycle_events.push({ question_id: qid, state: 'active', at: now, reason: `reopened on ${name}: close moved to ${close!.toISOString()}` });
        }
        priceRow(qid, m, origin);
        const last = lastObserved.get(qid);
        if (driver.history && m.history_key && last && now.getTime() - last.getTime() >= backfill.gapMs) {
          gaps.push({ qid, market: m, from: new Date(Math.max(last.getTime(), now.getTime() - backfill.lookbackMs)) });
        }
        return;
      }
      case 'closed':
        result.lifecycle_events.push({ question_id: qid, state: 'closed', at: close ?? now, reason: m.state_reason });
        return;
      case 'resolved':
      case 'annulled': {
        const r = m.resolution!;
        if (close && close.getTime() <= now.getTime()) {
          result.lifecycle_events.push({ question_id: qid, state: 'closed', at: close, reason: `closed on ${name}` });
        }
        // A venue that gives no resolution time, or one still ahead: this sync's, when the
        // resolution was first seen (resolvedTime).
        // A stored resolution without one was never visible (sql/derive/10_questions.sql), and the
        // market, no longer tracked, stayed open forever.
        const resolvedAt = resolvedTime(r);
        result.resolutions.push(resolutionRow(qid, m, resolvedAt));
        result.lifecycle_events.push({ question_id: qid, state: m.state, at: resolvedAt, reason: m.state_reason });
        return;
      }
    }
  };

  /**
   * A market the venue still lists as open whose close time has already passed (Polymarket keeps
   * trading past `endDate` until its resolution): no run can forecast it (a question is forecast
   * only before its close) and no forecast of it is scored, so it is no new question. Taken, it
   * used a slot of QUORUM_MAX_MARKETS_PER_VENUE, and its lifecycle put the `closed` event the venue
   * later dated by that past close before the `active` one of its discovery: the lifecycle's last
   * (current) state read active for a question whose status was closed (QA).
   */
  const closedAlready = (m: MarketSnapshot): boolean => m.close_time !== null && m.close_time.getTime() <= now.getTime();

  const handleNew = (m: MarketSnapshot, origin: string) => {
    if (m.state !== 'open' || added >= maxNew) return;
    // Taken without a close, it would be forecast until it resolved (sql: no close, active).
    if (m.close_unreadable) return skip(m.id, 'unreadable close time');
    if (closedAlready(m) || !passesCheapFilters(m)) return;
    const c = classify({ title: m.title, description: m.description, resolution_criteria: m.resolution_criteria, venue, url: m.url });
    if (categories && !categories.has(c.category)) return;
    const qid = `${venue}:${m.id}`;
    added++;
    result.questions.push({
      question_id: qid,
      venue,
      venue_market_id: m.id,
      title: m.title,
      description: m.description,
      resolution_criteria: m.resolution_criteria,
      url: m.url,
      category: c.category,
      domain: c.domain,
      tags: c.tags,
      created_at: m.created_at,
      close_time: m.close_time,
      status: 'active',
      lang: 'en',
      origin,
      ingested_at: now,
    });
    result.lifecycle_events.push({ question_id: qid, state: 'active', at: now, reason: `discovered on ${name} (${m.state_reason})` });
    priceRow(qid, m, origin);
  };

  /**
   * A tracked market the venue answered "not found" for: skipped (no price, no resolution), and
   * closed or annulled by the removed-market rule where it applies (removed-market.ts).
   */
  const notFoundIds = new Set<string>();
  const handleNotFound = (id: string) => {
    if (notFoundIds.has(id)) return;
    notFoundIds.add(id);
    skip(id, `tracked market not found on ${name}`);
    const qid = tracked.get(id);
    const rows = qid === undefined ? null : removedRule.notFound(qid);
    if (!rows) return;
    result.lifecycle_events.push(...rows.lifecycle_events);
    result.close_time_changes.push(...rows.close_time_changes);
    result.resolutions.push(...rows.resolutions);
  };

  const handlePage = (page: RawPage) => {
    for (const id of page.notFound ?? []) handleNotFound(id);
    for (const raw of page.items) {
      const n = driver.normalize(raw, now);
      const id = n.ok ? n.market.id : n.id;
      const key = id ?? JSON.stringify(raw);
      if (id === null) returnedWithoutId.add(key);
      else returned.add(id);
      if (!n.ok) {
        if (!skippedItems.has(key)) skip(n.id, n.reason);
        skippedItems.add(key);
        continue;
      }
      const m = n.market;
      if (seen.has(m.id)) continue; // offset pages can shift: one observation per market per sync
      seen.add(m.id);
      const qid = tracked.get(m.id);
      if (qid !== undefined) {
        handleTracked(qid, m, page.origin);
        continue;
      }
      // A new market whose id no question id can carry (../questions/market-id.ts), or without a title
      // (BLANK_TITLE); a tracked one (stored by a version before these checks) is still priced and
      // resolved.
      const bad = marketIdProblem(m.id) ?? (BLANK_TITLE.test(m.title) ? 'empty title' : null);
      if (bad !== null) skip(m.id, bad);
      else handleNew(m, page.origin);
    }
  };

  try {
    const control: DiscoveryControl = {
      wantMore: () => added < maxNew,
      pageCapped: (pages) => {
        result.warnings.push(`discovery stopped at the page cap (${pages} page${pages === 1 ? '' : 's'}, QUORUM_VENUE_MAX_PAGES): ${name} has more markets than were read`);
        log.warn({ pages }, 'venue discovery stopped at the page cap');
      },
      stoppedEarly: (reason) => {
        result.warnings.push(reason);
        log.warn({ reason }, 'venue discovery stopped early');
      },
    };
    for await (const page of driver.discover(ctx, control)) {
      handlePage(page);
      if (added >= maxNew) break;
    }
    const rest = [...tracked.keys()].filter((id) => !seen.has(id));
    if (rest.length > 0) {
      for await (const page of driver.lookup(rest, ctx)) handlePage(page);
      for (const id of rest) if (!seen.has(id) && !skippedIds.has(id)) {
        skip(id, `tracked market not returned by ${name}`);
      }
    }
    await backfillGaps(driver, ctx, gaps, backfill, result, skip);
  } catch (err) {
    if (err instanceof SourceHttpError) {
      log.warn({ err: err.message, collected: result.questions.length + result.market_prices.length }, 'venue sync failed');
      throw new VenueSyncError(venue, err, result);
    }
    throw err;
  } finally {
    // Whether the sync ends or fails (what it read is kept, VenueSyncError's partial result): the
    // removed-market rule's steps taken, and the counts.
    result.warnings.push(...removedRule.warnings());
    result.markets_seen = returned.size + returnedWithoutId.size;
    result.requests = driver.client.stats.requests - startRequests;
  }
  // The items that failed the venue's schema are the skips with a `schema:` reason (normalize's, each item once).
  const unreadable = result.skipped.filter((s) => s.reason.startsWith('schema:'));
  const drift = schemaDriftWarning(name, unreadable.length, result.markets_seen, unreadable[0]?.reason ?? '');
  if (drift) {
    result.warnings.push(drift);
    log.warn({ unreadable: unreadable.length }, 'every item the venue returned failed its schema');
  }
  log.info(
    {
      questions: result.questions.length,
      prices: result.market_prices.length,
      resolutions: result.resolutions.length,
      skipped: result.skipped.length,
      requests: result.requests,
    },
    'venue synced',
  );
  return result;
}

/**
 * Fills the observation gaps of tracked markets from the venue's price history (see
 * BackfillOptions). A failed history request is a skipped item with the reason, never a failed
 * venue: the markets were already priced by this sync.
 */
async function backfillGaps(
  driver: VenueDriver,
  ctx: VenueSyncContext,
  gaps: { qid: string; market: MarketSnapshot; from: Date }[],
  opts: BackfillOptions,
  result: VenueSyncResult,
  skip: (id: string | null, reason: string) => void,
): Promise<void> {
  if (!driver.history || gaps.length === 0 || opts.maxMarkets === 0) return;
  const log = ctx.logger.child({ venue: driver.venue });
  const { now } = ctx;
  // The longest gaps first: they lose the most if the cap defers them.
  const todo = [...gaps].sort((a, b) => a.from.getTime() - b.from.getTime() || a.qid.localeCompare(b.qid)).slice(0, opts.maxMarkets);
  if (gaps.length > todo.length) {
    log.warn({ gaps: gaps.length, backfilled: todo.length }, 'more observation gaps than the backfill cap: the rest stay unfilled');
  }
  let failuresInARow = 0;
  let observations = 0;
  for (let i = 0; i < todo.length; i += HISTORY_PARALLEL) {
    const chunk = todo.slice(i, i + HISTORY_PARALLEL);
    if (failuresInARow >= opts.maxFailures) {
      for (const gap of chunk) skip(gap.market.id, `price history not backfilled: stopped after ${opts.maxFailures} failed history requests in a row`);
      continue;
    }
    const settled = await Promise.allSettled(chunk.map((gap) => driver.history!(gap.market, gap.from, now, opts.stepMs, ctx)));
    settled.forEach((s, k) => {
      const gap = chunk[k]!;
      if (s.status === 'rejected') {
        if (!(s.reason instanceof SourceHttpError)) throw s.reason;
        failuresInARow++;
        // The failure without its URL, which names the market's token: one reason for every gap
        // the same failure left (the report counts skipped items by reason, QA).
        const err = s.reason;
        const suffix = ` (${err.url})`;
        log.debug({ venue_market_id: gap.market.id, err: err.message }, 'price history request failed');
        skip(gap.market.id, `price history not backfilled: ${err.message.endsWith(suffix) ? err.message.slice(0, -suffix.length) : err.message}`);
        return;
      }
      failuresInARow = 0;
      const history = s.value;
      if (history.dropped > 0) log.debug({ venue_market_id: gap.market.id, dropped: history.dropped }, 'unreadable price history points dropped');
      // Strictly inside the gap, at least one step apart (the first one step after the last observation).
      let previous = gap.from.getTime();
      for (const p of [...history.points].sort((a, b) => a.at.getTime() - b.at.getTime())) {
        const t = p.at.getTime();
        if (t >= now.getTime()) break;
        if (t - previous < opts.stepMs) continue;
        previous = t;
        observations++;
        result.market_prices.push({
          question_id: gap.qid,
          venue: driver.venue,
          observed_at: p.at,
          probability: p.probability,
          best_bid: null,
          best_ask: null,
          volume: null,
          liquidity: null,
          origin: history.origin,
          ingested_at: now,
        });
      }
    });
  }
  log.info({ markets: todo.length, observations }, 'observation gaps backfilled from price history');
}

/** What a lookup's `fetchOne` returns for an id the venue answered without a market (`{"market": null}`). */
export const NOT_FOUND: unique symbol = Symbol('not found');

/**
 * Fetches one item per id with at most `parallel` in flight (the client's queue still enforces the
 * rate limit), yielding pages in id order. A 404, or `fetchOne` returning NOT_FOUND, marks the id not found; any other failure aborts
 * the remaining lookups and is thrown.
 */
export async function* lookupEach(
  ids: string[],
  parallel: number,
  fetchOne: (id: string, signal: AbortSignal) => Promise<unknown | typeof NOT_FOUND>,
  origin: (id: string) => string,
  outer?: AbortSignal,
): AsyncIterable<RawPage> {
  for (let i = 0; i < ids.length; i += parallel) {
    const chunk = ids.slice(i, i + parallel);
    // One controller per chunk, following the caller's signal (strong references, detached after).
    const link = linkedController(outer);
    // The first real failure: it aborts the rest of the chunk, whose errors are only its echo.
    let failure: { reason: unknown } | null = null;
    let settled: PromiseSettledResult<unknown>[];
    try {
      settled = await Promise.allSettled(
        chunk.map((id) =>
          fetchOne(id, link.signal).catch((err: unknown) => {
            if (!(err instanceof SourceHttpError && err.status === 404) && !failure) {
              failure = { reason: err };
              link.controller.abort(err);
            }
            throw err;
          }),
        ),
      );
    } finally {
      link.clear();
    }
    for (let j = 0; j < chunk.length; j++) {
      const s = settled[j]!;
      const id = chunk[j]!;
      if (s.status === 'fulfilled' && s.value === NOT_FOUND) {
        yield { items: [], origin: origin(id), notFound: [id] };
      } else if (s.status === 'fulfilled') {
        yield { items: [s.value], origin: origin(id) };
      } else if (s.reason instanceof SourceHttpError && s.reason.status === 404) {
        yield { items: [], origin: origin(id), notFound: [id] };
      } else {
        throw failure ? (failure as { reason: unknown }).reason : s.reason;
      }
    }
  }
}

/** Whether the filters can be checked server-side: for venues that accept them as parameters. */
export function closeBefore(ctx: VenueSyncContext): Date | null {
  const d = ctx.filters.closeWithinDays;
  return d === undefined ? null : new Date(ctx.now.getTime() + d * 86_400_000);
}

export type { DiscoveryFilters, Row, SkippedItem };
