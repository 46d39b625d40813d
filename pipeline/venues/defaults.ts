/**
 * The venues and the backfill defaults, in a module of their own that imports nothing: the
 * configuration (venues/config.ts, read by every `quorum` command) needs them, and reaching them
 * through types.ts or core.ts loaded the HTTP client (undici, p-queue) into every command.
 */
export const VENUES = ['polymarket', 'kalshi', 'manifold', 'metaculus'] as const;
export type Venue = (typeof VENUES)[number];

/**
 * Backfill of missed observations: a tracked open market whose latest observation is older than
 * `gapMs` gets its venue's price history since then (at most `lookbackMs` back), one point per
 * `stepMs` at most, for at most `maxMarkets` markets per sync. After `maxFailures` failed
 * history requests in a row the backfill stops for this sync (the venue's history service is
 * down; the markets are still priced from discovery).
 */
export interface BackfillOptions {
  gapMs: number;
  lookbackMs: number;
  stepMs: number;
  maxMarkets: number;
  maxFailures: number;
}

export const DEFAULT_BACKFILL: BackfillOptions = {
  gapMs: 6 * 3_600_000, // 1.5 × the 4-hourly schedule: one missed run
  lookbackMs: 14 * 86_400_000,
  stepMs: 3_600_000,
  maxMarkets: 100,
  maxFailures: 3,
};
