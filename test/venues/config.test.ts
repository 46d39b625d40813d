import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../pipeline/config.ts';
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
    expect(c.polymarket.clobUrl).toBe('https://clob.polymarket.com');
    expect(c.polymarket.clobRate).toEqual({ requestsPerInterval: 10, intervalMs: 1000 });
    expect(c.backfill).toEqual({ gapMs: 6 * 3_600_000, lookbackMs: 14 * 86_400_000, stepMs: 3_600_000, maxMarkets: 100, maxFailures: 3 });
  });

  it('reads the gap backfill settings and names bad ones', () => {
    const c = loadVenueConfig({ QUORUM_BACKFILL_GAP_HOURS: '12', QUORUM_BACKFILL_DAYS: '2', QUORUM_BACKFILL_MAX_MARKETS: '0', QUORUM_POLYMARKET_CLOB_RPS: '2' });
    expect(c.backfill).toMatchObject({ gapMs: 12 * 3_600_000, lookbackMs: 2 * 86_400_000, maxMarkets: 0 });
    expect(c.polymarket.clobRate).toEqual({ requestsPerInterval: 2, intervalMs: 1000 });
    expect(() => loadVenueConfig({ QUORUM_BACKFILL_GAP_HOURS: '-1' })).toThrow(/QUORUM_BACKFILL_GAP_HOURS/);
    expect(() => loadVenueConfig({ QUORUM_BACKFILL_DAYS: 'lots' })).toThrow(/QUORUM_BACKFILL_DAYS/);
    expect(() => loadVenueConfig({ QUORUM_BACKFILL_MAX_MARKETS: '1.5' })).toThrow(/QUORUM_BACKFILL_MAX_MARKETS/);
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

  it('a list of nothing (",", " , ") is refused, not read as none: it turned every venue off without a word (QA), as QUORUM_EVIDENCE_PROVIDERS refuses it', () => {
    for (const empty of [',', ' , ', ',,']) {
      expect(() => loadVenueConfig({ QUORUM_VENUES: empty }), empty).toThrow(/QUORUM_VENUES: list polymarket, kalshi, manifold and\/or metaculus, or write none/);
    }
    expect(loadVenueConfig({ QUORUM_VENUES: 'None' }).venues).toEqual([]);
    expect(loadVenueConfig({ QUORUM_VENUES: 'kalshi,' }).venues).toEqual(['kalshi']);
  });

  it('the start-up configuration checks the venues too (a bad QUORUM_VENUES is an error at start, not at the first sync)', () => {
    expect(() => loadConfig({ QUORUM_VENUES: 'polymarket,foo' })).toThrow(ConfigError);
    expect(() => loadConfig({ QUORUM_VENUES: 'polymarket,foo' })).toThrow(/QUORUM_VENUES/);
    expect(() => loadConfig({ QUORUM_MODES: 'blind,blind' })).toThrow(/QUORUM_MODES: a mode is listed twice/);
    expect(loadConfig({ QUORUM_VENUES: 'none' }).modes).toEqual(['blind', 'informed', 'augmented']);
  });

  it('registers a factory per venue', () => {
    const c = loadVenueConfig({});
    for (const [venue, factory] of Object.entries(VENUE_ADAPTERS)) expect(factory(c).venue).toBe(venue);
    expect(rateFromRps(20)).toEqual({ requestsPerInterval: 20, intervalMs: 1000 });
  });

  it('a fractional rate is never exceeded (QA: QUORUM_KALSHI_RPS=2.5 made 3 requests a second, 1.5 made 2: Math.round)', () => {
    // a rate as requests per second the window allows: never above the one set, and close to it
    const perSecond = (r: { requestsPerInterval: number; intervalMs: number }) => (r.requestsPerInterval * 1000) / r.intervalMs;
    for (const rps of [0.3, 0.5, 0.7, 1, 1.5, 2.5, 8.3, 9.99, 20, 1234.5]) {
      const r = rateFromRps(rps);
      expect(Number.isInteger(r.requestsPerInterval) && Number.isInteger(r.intervalMs), String(rps)).toBe(true);
      expect(perSecond(r), String(rps)).toBeLessThanOrEqual(rps);
      expect(perSecond(r), String(rps)).toBeGreaterThan(rps * 0.99);
    }
    expect(rateFromRps(2.5)).toEqual({ requestsPerInterval: 2, intervalMs: 800 });
    expect(loadVenueConfig({ QUORUM_KALSHI_RPS: '1.5' }).kalshi.rate).toEqual({ requestsPerInterval: 1, intervalMs: 667 });
  });

  it('a rate so low its interval would not fit a timer is refused (QA: 1e-7 rps was a 1e10 ms p-queue interval, which Node cuts to 1 ms)', () => {
    expect(() => loadVenueConfig({ QUORUM_METACULUS_RPS: '0.0000001' })).toThrow(/QUORUM_METACULUS_RPS: Too small: expected number to be >=0.001/);
    expect(loadVenueConfig({ QUORUM_METACULUS_RPS: '0.001' }).metaculus.rate).toEqual({ requestsPerInterval: 1, intervalMs: 1_000_000 });
  });

  it('a token fetch cannot send in a header is refused at start, its value not shown (outside test: a token with a line break inside passed, and every Metaculus request failed unsent, reported as a timeout)', () => {
    for (const token of ['abc\ndef', 'abc\r\ndef', 'abc\u2028def', 'tok\u0000en']) {
      let message = '';
      try {
        loadConfig({ QUORUM_METACULUS_TOKEN: token });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, JSON.stringify(token)).toMatch(/QUORUM_METACULUS_TOKEN: .*a line break, a NUL or a character beyond Latin-1.*\(value not shown, \d+ characters\)/);
      expect(message).not.toContain('abc');
    }
    // read trimmed, as every setting (a line end from a CRLF env file is no part of it)
    expect(loadVenueConfig({ QUORUM_METACULUS_TOKEN: ' abc123\r\n' }).metaculus.token).toBe('abc123');
  });
});
