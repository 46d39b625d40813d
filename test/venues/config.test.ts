import { describe, expect, it } from 'vitest';
import { createVenueAdapters, loadVenueConfig, VENUE_ADAPTERS, VenueConfigError } from '../../pipeline/venues/index.ts';
import { rateFromRps } from '../../pipeline/venues/config.ts';

describe('venue config and registry', () => {
  it('defaults to the four public APIs with conservative rates', () => {
    const c = loadVenueConfig({});
    expect(c.venues).toEqual(['polymarket', 'kalshi', 'manifold', 'metaculus']);
    expect(c.polymarket.gammaUrl).toBe('https://gamma-api.polymarket.com');
    expect(c.kalshi.baseUrl).toBe('https://api.elections.kalshi.com/trade-api/v2');
    expect(c.manifold.baseUrl).toBe('https://api.manifold.markets/v0');
    expect(c.metaculus.baseUrl).toBe('https://www.metaculus.com/api');
    expect(c.kalshi.rate).toEqual({ requestsPerInterval: 10, intervalMs: 1000 });
    expect(c.filters).toEqual({ maxMarkets: 500 });
  });

  it('reads overrides and filters, and names bad variables', () => {
    const c = loadVenueConfig({
      QUORUM_VENUES: 'kalshi, manifold',
      QUORUM_KALSHI_URL: 'http://127.0.0.1:9999/trade-api/v2/',
      QUORUM_MIN_LIQUIDITY: '1000',
      QUORUM_MIN_FORECASTERS: '20',
      QUORUM_CLOSE_WITHIN_DAYS: '90',
      QUORUM_MAX_MARKETS_PER_VENUE: '50',
      QUORUM_CATEGORIES: 'economics,finance',
      QUORUM_METACULUS_RPS: '0.5',
    });
    expect(c.venues).toEqual(['kalshi', 'manifold']);
    expect(c.kalshi.baseUrl).toBe('http://127.0.0.1:9999/trade-api/v2');
    expect(c.filters).toEqual({ minLiquidity: 1000, minForecasters: 20, closeWithinDays: 90, maxMarkets: 50, categories: ['economics', 'finance'] });
    expect(c.metaculus.rate).toEqual({ requestsPerInterval: 1, intervalMs: 2000 });
    expect(createVenueAdapters(c).map((a) => a.venue)).toEqual(['kalshi', 'manifold']);
    expect(() => loadVenueConfig({ QUORUM_VENUES: 'kalshi,predictit' })).toThrow(VenueConfigError);
    expect(() => loadVenueConfig({ QUORUM_MANIFOLD_URL: 'ftp://x' })).toThrow(/QUORUM_MANIFOLD_URL/);
    expect(() => loadVenueConfig({ QUORUM_KALSHI_RPS: '0' })).toThrow(/QUORUM_KALSHI_RPS/);
  });

  it('registers a factory per venue', () => {
    const c = loadVenueConfig({});
    for (const [venue, factory] of Object.entries(VENUE_ADAPTERS)) expect(factory(c).venue).toBe(venue);
    expect(rateFromRps(20)).toEqual({ requestsPerInterval: 20, intervalMs: 1000 });
  });
});
