/**
 * The contract of the prediction-market venue adapters (Polymarket, Kalshi, Manifold, Metaculus).
 *
 * One `sync` per venue per pipeline run: discover open binary markets matching the filters, record
 * one price observation per tracked or discovered open market, and detect the closing, resolution
 * or annulment of tracked markets. Rows are plain JS objects keyed by exactly the raw table's
 * columns (pipeline/warehouse/tables.ts): TIMESTAMP → Date (UTC), VARCHAR[] → string[], missing →
 * null.
 *
 * Failure: a bad item is skipped (`skipped`, with a reason, also logged, once however many pages
 * repeat it) and the batch goes on. A page or lookup that still fails after the client's retries,
 * or a next-page cursor that leads back to a page already read (a pagination loop), makes `sync`
 * throw a
 * `VenueSyncError`, which IS a `SourceHttpError` (same kind, url, status) and also carries, in
 * `partial`, the rows collected before the failure (callers that only know SourceHttpError simply
 * record the venue as failed; callers that want to keep earlier pages can use `partial`).
 */
import type { Logger } from 'pino';
import { SourceHttpError } from '../sources/http-client.ts';
import type { RawRow, RawTableName } from '../warehouse/tables.ts';

export { VENUES, type Venue } from './defaults.ts';
import type { Venue } from './defaults.ts';

/** A row of raw table `N` (one definition, in tables.ts). */
export type Row<N extends RawTableName> = RawRow<N>;

export interface DiscoveryFilters {
  /** Venue liquidity (USD, or mana on Manifold); venues that publish none (Metaculus) ignore it. */
  minLiquidity?: number;
  /** Distinct forecasters/bettors; venues that publish none (Polymarket, Kalshi) ignore it. */
  minForecasters?: number;
  /** Quorum taxonomy categories (classify's `category`), not the venue's own tags. */
  categories?: string[];
  /** Only markets closing within this many days of `now` (markets without a close time pass). */
  closeWithinDays?: number;
  /** At most this many NEW questions per venue per sync (tracked markets are always priced). */
  maxMarkets?: number;
}

/** A market already in the warehouse: not resolved, or resolved recently (rechecked for amendments). */
export interface TrackedMarket {
  question_id: string;
  venue_market_id: string;
  /**
   * The latest price observation the warehouse holds for it (absent or null: unknown). When it
   * is older than the backfill gap, venues with a price history (Polymarket's CLOB) fill the gap.
   */
  last_observed_at?: Date | null;
  /**
   * The close time the warehouse holds for it (absent: unknown, never compared). When the venue
   * reports another one, the sync lists it in `close_time_changes`.
   */
  close_time?: Date | null;
  /**
   * Its resolution as the warehouse holds it (the latest record), for a market resolved within the
   * recheck window (QUORUM_RESOLUTION_RECHECK_DAYS); absent or null: not resolved. Such a market is
   * only checked for an amended resolution (`amended_resolutions`): no price, no lifecycle.
   */
  resolution?: { outcome: number | null; resolved_at: Date | null } | null;
  /**
   * When a sync first got "not found" for it from the venue, nothing heard of it since (absent or
   * null: not missing). A market still not found long enough after is annulled (removed-market.ts).
   */
  removed_since?: Date | null;
  /**
   * Whether a venue sync discovered it (absent: false). Only such a market is closed and annulled
   * when its venue no longer knows it; one imported from a dataset (ForecastBench) is resolved by
   * the dataset's later rounds, and a "not found" for it is only a skipped item.
   */
  discovered?: boolean;
}

export interface VenueSyncContext {
  now: Date;
  filters: DiscoveryFilters;
  tracked: TrackedMarket[];
  /** Days after the first "not found" a tracked market still not found is annulled (removed-market.ts; default 7). */
  removedMarketAnnulDays?: number;
  signal?: AbortSignal;
  logger: Logger;
}

export interface SkippedItem {
  venue: Venue;
  venue_market_id: string | null;
  reason: string;
}

export interface VenueSyncResult {
  venue: Venue;
  questions: Row<'questions'>[];
  market_prices: Row<'market_prices'>[];
  resolutions: Row<'resolutions'>[];
  /**
   * Resolutions of tracked markets that the venue changed after the warehouse recorded one (an
   * outcome reversed, a resolution annulled or an annulment resolved): the caller appends them as
   * new records beside the first (raw `resolutions` otherwise keeps one per question).
   */
  amended_resolutions: Row<'resolutions'>[];
  lifecycle_events: Row<'lifecycle_events'>[];
  /**
   * Tracked markets whose close time on the venue is not the stored one (a close date extended,
   * a market closed early): the caller writes a new version of the question with it.
   */
  close_time_changes: { question_id: string; close_time: Date }[];
  skipped: SkippedItem[];
  /**
   * Distinct markets the venue returned this sync, whatever became of them: recorded, skipped,
   * or dropped by the discovery filters (an unreadable item without an id counts as one market;
   * the same item on several pages, once).
   */
  markets_seen: number;
  /** HTTP attempts made by this sync (retries included). */
  requests: number;
  /** What went short without failing the venue: discovery stopped at the page cap. */
  warnings: string[];
}

export interface VenueAdapter {
  readonly venue: Venue;
  sync(ctx: VenueSyncContext): Promise<VenueSyncResult>;
}

/**
 * Thrown by `sync` when a page or lookup fails after retries. It is a SourceHttpError (kind, url
 * and status of the failed request); `partial` holds what was collected before the failure.
 */
export class VenueSyncError extends SourceHttpError {
  constructor(
    readonly venue: Venue,
    readonly cause: SourceHttpError,
    readonly partial: VenueSyncResult,
  ) {
    super(cause.kind, cause.url, `${venue} sync failed: ${detail(cause)}${refusalReason(cause)}`, cause.status);
    this.name = 'VenueSyncError';
  }
}

/**
 * Why the venue refused a request (a 4xx), in its own words from the body it answered with:
 * Kalshi's `{"error":{"code":"invalid_parameters","message":"…"}}`, Gamma's `{"error":"…"}`,
 * Manifold's `{"message":"…"}`, a `{"detail":"…"}`; "" when the body says nothing readable or the
 * message already carries it (Metaculus's refusals). Without it `quorum sync` reported only
 * "client_error: kalshi sync failed: HTTP 400 (<url>)", and the operator had nothing to go on (QA).
 */
function refusalReason(err: SourceHttpError): string {
  if (err.kind !== 'client_error' || !err.body) return '';
  let said: unknown;
  try {
    const body = JSON.parse(err.body) as Record<string, unknown>;
    const inner = body && typeof body.error === 'object' && body.error !== null ? (body.error as Record<string, unknown>) : null;
    said = inner ? (inner.message ?? inner.details ?? inner.code) : (body?.error ?? body?.message ?? body?.detail);
  } catch {
    return '';
  }
  if (typeof said !== 'string' || said.trim() === '') return '';
  const text = said.trim().replace(/\s+/g, ' ');
  const shown = text.length > 200 ? `${text.slice(0, 199)}…` : text;
  return err.message.includes(shown) ? '' : `: ${shown}`;
}

/** What went wrong, without the kind and url this error's own message adds again. */
function detail(err: SourceHttpError): string {
  const prefix = `${err.kind}: `;
  const suffix = ` (${err.url})`;
  let m = err.message;
  if (m.startsWith(prefix)) m = m.slice(prefix.length);
  return m.endsWith(suffix) ? m.slice(0, -suffix.length) : m;
}
