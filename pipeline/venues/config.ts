/**
 * Venue configuration from the environment, validated with zod (a bad value throws ConfigError
 * naming the variable, like pipeline/config.ts).
 *
 * | variable | default |
 * | --- | --- |
 * | QUORUM_VENUES | polymarket,kalshi,manifold,metaculus (`none`: no venue) |
 * | QUORUM_POLYMARKET_GAMMA_URL | https://gamma-api.polymarket.com |
 * | QUORUM_POLYMARKET_CLOB_URL | https://clob.polymarket.com |
 * | QUORUM_KALSHI_URL | https://api.elections.kalshi.com/trade-api/v2 |
 * | QUORUM_MANIFOLD_URL | https://api.manifold.markets/v0 |
 * | QUORUM_METACULUS_URL | https://www.metaculus.com/api |
 * | QUORUM_METACULUS_TOKEN | (none; sent as `Authorization: Token …` when set) |
 * | QUORUM_MIN_LIQUIDITY, QUORUM_MIN_FORECASTERS, QUORUM_CLOSE_WITHIN_DAYS | (no filter) |
 * | QUORUM_CATEGORIES | (all; else a comma list of taxonomy categories) |
 * | QUORUM_MAX_MARKETS_PER_VENUE | 500 new questions per venue per sync |
 * | QUORUM_VENUE_MAX_PAGES | 20 discovery pages per venue per sync |
 * | QUORUM_VENUE_TIMEOUT_MS | 30000 per request: queueing, retries, backoff and the whole body included (pipeline/net/deadline.ts) |
 * | QUORUM_VENUE_RETRIES | 4 |
 * | QUORUM_POLYMARKET_RPS | 20 (Gamma's documented /markets limit is far higher) |
 * | QUORUM_POLYMARKET_CLOB_RPS | 10 (CLOB prices-history, for gap backfill; its documented limit is higher) |
 * | QUORUM_BACKFILL_GAP_HOURS | 6: a tracked market unobserved this long gets its gap filled from the venue's price history |
 * | QUORUM_BACKFILL_DAYS | 14: how far back a gap is filled at most |
 * | QUORUM_BACKFILL_MAX_MARKETS | 100 markets per venue per sync (0: no backfill) |
 * | QUORUM_RESOLUTION_RECHECK_DAYS | 7: a market resolved this recently is looked up again each sync, and a resolution its venue changed (reversed, annulled) is recorded (0: never) |
 * | QUORUM_REMOVED_MARKET_ANNUL_DAYS | 7: a tracked market its venue answers "not found" for is closed at once, and annulled by a sync that still finds nothing this long after the first (0: the next sync; removed-market.ts) |
 * | QUORUM_KALSHI_RPS | 10 (basic tier: 20 reads/s; half, since windows can burst) |
 * | QUORUM_MANIFOLD_RPS | 7 (documented 500 requests/min per IP ≈ 8.3/s) |
 * | QUORUM_METACULUS_RPS | 1 (no published limit; conservative) |
 *
 * Rates are requests per second, from 0.001 to 10000 (fractions allowed: 0.5 = one request every 2 s;
 * a rate is never exceeded: 2.5 is 2 requests per 800 ms).
 */
import { z } from 'zod';
import { CATEGORIES } from '../warehouse/tables.ts';
import { DEFAULT_BACKFILL, VENUES, type BackfillOptions, type Venue } from './defaults.ts';
import type { DiscoveryFilters } from './types.ts';
import { DEFAULT_REMOVED_ANNUL_DAYS } from './removed-market.ts';
import { decimalNumber, headerCredential, httpBaseUrl, settingIssue, setVariables, wholeNumber } from '../env.ts';

export interface VenueRate {
  requestsPerInterval: number;
  intervalMs: number;
}

export interface VenueConfig {
  venues: Venue[];
  filters: DiscoveryFilters;
  maxPages: number;
  timeoutMs: number;
  retries: number;
  /** Days after its resolution a market is still looked up for an amended one (0: never). */
  resolutionRecheckDays: number;
  /** Days after the first "not found" a tracked market still not found is annulled (removed-market.ts). */
  removedMarketAnnulDays: number;
  polymarket: { gammaUrl: string; clobUrl: string; rate: VenueRate; clobRate: VenueRate };
  /** Gap backfill from venues' price histories (pipeline/venues/core.ts). */
  backfill: BackfillOptions;
  kalshi: { baseUrl: string; rate: VenueRate };
  manifold: { baseUrl: string; rate: VenueRate };
  metaculus: { baseUrl: string; rate: VenueRate; token: string | undefined };
}

export class VenueConfigError extends Error {
  override readonly name = 'VenueConfigError';
}

const httpUrl = httpBaseUrl();

// `none` disables every venue (offline use, tests): nothing is fetched from outside. A list of
// nothing (",") is refused: it meant none, silently (QA), as for QUORUM_EVIDENCE_PROVIDERS.
const venueList = z
  .string()
  .transform((s, ctx) => {
    if (s.trim().toLowerCase() === 'none') return [];
    const listed = [...new Set(s.split(',').map((v) => v.trim().toLowerCase()).filter(Boolean))];
    if (listed.length === 0) ctx.addIssue({ code: 'custom', message: 'list polymarket, kalshi, manifold and/or metaculus, or write none' });
    return listed;
  })
  .pipe(z.array(z.enum(VENUES)));

// At least one request in 1000 s: a p-queue interval must fit a timer (2^31 ms; QA: 1e-7 rps was
// an interval of 1e10 ms, which Node cuts to 1 ms).
const rps = decimalNumber(z.number().min(0.001).max(10_000));

const EnvSchema = z.object({
  QUORUM_VENUES: venueList.default([...VENUES]),
  QUORUM_POLYMARKET_GAMMA_URL: httpUrl.default('https://gamma-api.polymarket.com'),
  QUORUM_POLYMARKET_CLOB_URL: httpUrl.default('https://clob.polymarket.com'),
  QUORUM_KALSHI_URL: httpUrl.default('https://api.elections.kalshi.com/trade-api/v2'),
  QUORUM_MANIFOLD_URL: httpUrl.default('https://api.manifold.markets/v0'),
  QUORUM_METACULUS_URL: httpUrl.default('https://www.metaculus.com/api'),
  QUORUM_METACULUS_TOKEN: headerCredential().optional(),
  QUORUM_CATEGORIES: z
    .string()
    .transform((s) => [...new Set(s.split(',').map((c) => c.trim().toLowerCase()).filter(Boolean))])
    .pipe(z.array(z.enum(CATEGORIES)).min(1))
    .optional(),
  QUORUM_MIN_LIQUIDITY: decimalNumber(z.number().nonnegative()).optional(),
  QUORUM_MIN_FORECASTERS: wholeNumber(0).optional(),
  QUORUM_CLOSE_WITHIN_DAYS: decimalNumber(z.number().positive().max(36_500)).optional(),
  QUORUM_MAX_MARKETS_PER_VENUE: wholeNumber(0, 1_000_000).default(500),
  QUORUM_VENUE_MAX_PAGES: wholeNumber(1, 10_000).default(20),
  QUORUM_VENUE_TIMEOUT_MS: wholeNumber(100, 600_000).default(30_000),
  QUORUM_VENUE_RETRIES: wholeNumber(0, 10).default(4),
  QUORUM_POLYMARKET_RPS: rps.default(20),
  QUORUM_KALSHI_RPS: rps.default(10),
  QUORUM_MANIFOLD_RPS: rps.default(7),
  QUORUM_METACULUS_RPS: rps.default(1),
  QUORUM_POLYMARKET_CLOB_RPS: rps.default(10),
  QUORUM_BACKFILL_GAP_HOURS: decimalNumber(z.number().positive().max(24 * 365)).default(DEFAULT_BACKFILL.gapMs / 3_600_000),
  QUORUM_BACKFILL_DAYS: decimalNumber(z.number().positive().max(365)).default(DEFAULT_BACKFILL.lookbackMs / 86_400_000),
  QUORUM_BACKFILL_MAX_MARKETS: wholeNumber(0, 100_000).default(DEFAULT_BACKFILL.maxMarkets),
  QUORUM_RESOLUTION_RECHECK_DAYS: decimalNumber(z.number().nonnegative().max(365)).default(7),
  QUORUM_REMOVED_MARKET_ANNUL_DAYS: decimalNumber(z.number().nonnegative().max(365)).default(DEFAULT_REMOVED_ANNUL_DAYS),
});

/**
 * Requests per second as a p-queue window that never exceeds it: the whole requests of a second
 * (at least one) per the time they take at that rate, rounded up (20: 20 per 1000 ms; 2.5: 2 per
 * 800 ms; 0.5: 1 per 2000 ms). QA: the count was rounded to a window of 1 s, so 2.5 made 3 requests
 * a second and 1.5 made 2, above the rate set to stay under a venue's limit.
 */
export function rateFromRps(perSecond: number): VenueRate {
  const requestsPerInterval = Math.max(1, Math.floor(perSecond));
  return { requestsPerInterval, intervalMs: Math.ceil((1000 * requestsPerInterval) / perSecond) };
}

/** Reads and validates the venue configuration; throws VenueConfigError naming each bad variable. */
export function loadVenueConfig(env: NodeJS.ProcessEnv = process.env): VenueConfig {
  const given = setVariables(env);
  const parsed = EnvSchema.safeParse(given);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${settingIssue(i, given)}`);
    throw new VenueConfigError(`invalid venue configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const filters: DiscoveryFilters = { maxMarkets: e.QUORUM_MAX_MARKETS_PER_VENUE };
  if (e.QUORUM_MIN_LIQUIDITY !== undefined) filters.minLiquidity = e.QUORUM_MIN_LIQUIDITY;
  if (e.QUORUM_MIN_FORECASTERS !== undefined) filters.minForecasters = e.QUORUM_MIN_FORECASTERS;
  if (e.QUORUM_CLOSE_WITHIN_DAYS !== undefined) filters.closeWithinDays = e.QUORUM_CLOSE_WITHIN_DAYS;
  if (e.QUORUM_CATEGORIES !== undefined) filters.categories = e.QUORUM_CATEGORIES;
  return {
    venues: e.QUORUM_VENUES,
    filters,
    maxPages: e.QUORUM_VENUE_MAX_PAGES,
    timeoutMs: e.QUORUM_VENUE_TIMEOUT_MS,
    retries: e.QUORUM_VENUE_RETRIES,
    resolutionRecheckDays: e.QUORUM_RESOLUTION_RECHECK_DAYS,
    removedMarketAnnulDays: e.QUORUM_REMOVED_MARKET_ANNUL_DAYS,
    polymarket: {
      gammaUrl: e.QUORUM_POLYMARKET_GAMMA_URL,
      clobUrl: e.QUORUM_POLYMARKET_CLOB_URL,
      rate: rateFromRps(e.QUORUM_POLYMARKET_RPS),
      clobRate: rateFromRps(e.QUORUM_POLYMARKET_CLOB_RPS),
    },
    backfill: {
      ...DEFAULT_BACKFILL,
      gapMs: Math.round(e.QUORUM_BACKFILL_GAP_HOURS * 3_600_000),
      lookbackMs: Math.round(e.QUORUM_BACKFILL_DAYS * 86_400_000),
      maxMarkets: e.QUORUM_BACKFILL_MAX_MARKETS,
    },
    kalshi: { baseUrl: e.QUORUM_KALSHI_URL, rate: rateFromRps(e.QUORUM_KALSHI_RPS) },
    manifold: { baseUrl: e.QUORUM_MANIFOLD_URL, rate: rateFromRps(e.QUORUM_MANIFOLD_RPS) },
    metaculus: { baseUrl: e.QUORUM_METACULUS_URL, rate: rateFromRps(e.QUORUM_METACULUS_RPS), token: e.QUORUM_METACULUS_TOKEN },
  };
}
