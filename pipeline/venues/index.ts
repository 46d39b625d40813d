/**
 * The venue registry: venue name → adapter factory, and the adapters the configuration enables.
 *
 * `createVenueAdapters(config)` builds one adapter (and one rate-limited client) per enabled venue.
 * Each factory takes the VenueConfig plus optional overrides (tests and the benchmark inject a
 * client, client options such as a lifted rate limit, or page sizes).
 */
import type { AdapterOptions } from './core.ts';
import type { VenueConfig } from './config.ts';
import { createKalshiAdapter } from './kalshi.ts';
import { createManifoldAdapter } from './manifold.ts';
import { createMetaculusAdapter } from './metaculus.ts';
import { createPolymarketAdapter } from './polymarket.ts';
import type { Venue, VenueAdapter } from './types.ts';

export type VenueAdapterFactory = (config: VenueConfig, overrides?: AdapterOptions) => VenueAdapter;

/** Client options every venue takes from the config: its rate, the deadline and the retries. */
function clientOptions(config: VenueConfig, rate: VenueConfig['kalshi']['rate'], overrides?: AdapterOptions) {
  return { ...rate, timeoutMs: config.timeoutMs, retries: config.retries, ...overrides?.clientOptions };
}

export const VENUE_ADAPTERS: Record<Venue, VenueAdapterFactory> = {
  polymarket: (config, o) =>
    createPolymarketAdapter({
      maxPages: config.maxPages,
      backfill: config.backfill,
      ...o,
      gammaUrl: config.polymarket.gammaUrl,
      clobUrl: config.polymarket.clobUrl,
      clientOptions: clientOptions(config, config.polymarket.rate, o),
      clobClientOptions: config.polymarket.clobRate,
    }),
  kalshi: (config, o) =>
    createKalshiAdapter({ maxPages: config.maxPages, backfill: config.backfill, ...o, baseUrl: config.kalshi.baseUrl, clientOptions: clientOptions(config, config.kalshi.rate, o) }),
  manifold: (config, o) =>
    createManifoldAdapter({ maxPages: config.maxPages, backfill: config.backfill, ...o, baseUrl: config.manifold.baseUrl, clientOptions: clientOptions(config, config.manifold.rate, o) }),
  metaculus: (config, o) =>
    createMetaculusAdapter({
      maxPages: config.maxPages,
      backfill: config.backfill,
      ...o,
      baseUrl: config.metaculus.baseUrl,
      ...(config.metaculus.token ? { token: config.metaculus.token } : {}),
      clientOptions: clientOptions(config, config.metaculus.rate, o),
    }),
};

/** One adapter per venue enabled in `config.venues`, in that order. */
export function createVenueAdapters(config: VenueConfig, overrides?: Partial<Record<Venue, AdapterOptions>>): VenueAdapter[] {
  return config.venues.map((v) => VENUE_ADAPTERS[v](config, overrides?.[v]));
}

export { loadVenueConfig, VenueConfigError, type VenueConfig } from './config.ts';
export { createKalshiAdapter, type KalshiAdapterOptions } from './kalshi.ts';
export { createManifoldAdapter, type ManifoldAdapterOptions } from './manifold.ts';
export { createMetaculusAdapter, type MetaculusAdapterOptions } from './metaculus.ts';
export { createPolymarketAdapter, type PolymarketAdapterOptions } from './polymarket.ts';
export type { AdapterOptions } from './core.ts';
export * from './types.ts';
