import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SourceHttpError } from '../../pipeline/sources/http-client.ts';
import { createManifoldAdapter } from '../../pipeline/venues/manifold.ts';
import { VenueSyncError, type VenueSyncContext } from '../../pipeline/venues/types.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';

const fx = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/venues/manifold/${name}`, import.meta.url), 'utf8'));
const page1 = fx('markets-page-1.json');
const page2 = fx('markets-page-2.json');
const page3 = fx('markets-page-3.json');
const tracked: Record<string, unknown> = fx('markets-tracked.json');

const FAST = { requestsPerInterval: 1000, intervalMs: 1000, retries: 3, backoffMs: 5, timeoutMs: 5000 };
const logger = pino({ level: 'silent' });
const now = new Date('2025-11-15T12:00:00Z');
const ctx = (over: Partial<VenueSyncContext> = {}): VenueSyncContext => ({ now, filters: {}, tracked: [], logger, ...over });
const track = (...ids: string[]) => ids.map((id) => ({ question_id: `manifold:${id}`, venue_market_id: id }));

const pages = (first: ReturnType<typeof json>[] = [json(page1)]) => [
  { path: '/v0/markets', query: { before: null }, responses: first },
  { path: '/v0/markets', query: { before: 'sEc0nD5bAd' }, responses: [{ status: 500 }, { status: 429, headers: { 'retry-after': '0' } }, json(page2)] },
  { path: '/v0/markets', query: { before: 'Trk0pen001' }, responses: [json(page3)] },
  {
    path: /^\/v0\/market\/[^/]+$/,
    responses: (req: { path: string }) => {
      const m = tracked[req.path.split('/').pop()!];
      return m ? json(m) : json({ message: 'Contract not found' }, 404);
    },
  },
];

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('manifold adapter', () => {
  it('pages with `before`, keeps open BINARY markets, reads epoch ms, resolves YES and annuls MKT / CANCEL', async () => {
    server = await startReplayServer(pages([{ body: page1, truncate: { bytes: 100 } }, json(page1)]));
    const adapter = createManifoldAdapter({ baseUrl: `${server.url}/v0`, pageSize: 3, clientOptions: FAST });
    const r = await adapter.sync(ctx({ tracked: track('Trk0pen001', 'Trk0yes001', 'Trk0mkt001', 'Trk0cncl01', 'Trk0clsd01', 'Trk0weird1', 'Trk0gone01') }));

    expect(server.log.filter((e) => e.path === '/v0/markets').map((e) => `${e.query.get('before')}:${e.status}`)).toEqual([
      'null:200', // truncated body (invalid JSON): retried
      'null:200',
      'sEc0nD5bAd:500',
      'sEc0nD5bAd:429',
      'sEc0nD5bAd:200',
      'Trk0pen001:200',
    ]);

    expect(r.questions.map((q) => q.venue_market_id)).toEqual(['tQ8hXn2wZ5', 'Zx9PoIu7Yt', 'LastPg0001']);
    const fed = r.questions[0]!;
    expect(fed).toMatchObject({
      question_id: 'manifold:tQ8hXn2wZ5',
      url: 'https://manifold.markets/ManifoldPolitics/will-the-fed-cut-interest-rates-in-jan',
      created_at: new Date(page1[0].createdTime),
      close_time: new Date('2026-01-29T00:00:00Z'), // 1769644800000 ms
    });
    const price = r.market_prices.find((p) => p.question_id === 'manifold:tQ8hXn2wZ5')!;
    expect(price).toMatchObject({ probability: 0.2371, best_bid: null, best_ask: null, volume: 51234.2, liquidity: 2500, observed_at: now });
    // Tracked and still open: priced, not re-added. Resolved untracked market in the listing: ignored.
    expect(r.market_prices.map((p) => p.question_id).sort()).toEqual(['manifold:LastPg0001', 'manifold:Trk0pen001', 'manifold:Zx9PoIu7Yt', 'manifold:tQ8hXn2wZ5']);

    const skipped = Object.fromEntries(r.skipped.map((s) => [s.venue_market_id, s.reason]));
    expect(skipped['Rk3LmPq9Ab']).toBe('non-binary market: outcomeType "MULTIPLE_CHOICE"');
    expect(skipped['sEc0nD5bAd']).toMatch(/^schema: createdTime: expected epoch milliseconds/);
    expect(skipped['Trk0weird1']).toMatch(/unknown Manifold resolution "CHOOSE_MULTIPLE"/);
    expect(skipped['Trk0gone01']).toMatch(/not found/);

    const res = new Map(r.resolutions.map((x) => [x.question_id, x]));
    expect(res.get('manifold:Trk0yes001')).toMatchObject({ outcome: 1, resolved_at: new Date(1762318800000), method: 'manifold:resolution_yes', source_url: 'https://manifold.markets/ManifoldPolitics/will-zohran-mamdani-win-nyc-mayor' });
    expect(res.get('manifold:Trk0mkt001')).toMatchObject({ outcome: null, annulled_reason: expect.stringMatching(/^resolved to market probability \(MKT\) of 0\.63/) });
    expect(res.get('manifold:Trk0mkt001')!.evidence_excerpt).toContain('resolution="MKT"; resolutionProbability=0.63');
    expect(res.get('manifold:Trk0cncl01')).toMatchObject({ outcome: null, annulled_reason: expect.stringContaining('CANCEL') });
    expect(res.size).toBe(3);
    expect(r.lifecycle_events.find((e) => e.question_id === 'manifold:Trk0clsd01')).toMatchObject({ state: 'closed', at: new Date(1761955200000) });
    expect(r.lifecycle_events.filter((e) => e.state === 'annulled')).toHaveLength(2);
  });

  it('filters by forecasters and liquidity', async () => {
    server = await startReplayServer(pages());
    const adapter = createManifoldAdapter({ baseUrl: `${server.url}/v0`, pageSize: 3, clientOptions: FAST });
    const r = await adapter.sync(ctx({ filters: { minForecasters: 100, minLiquidity: 2000 } }));
    expect(r.questions.map((q) => q.venue_market_id)).toEqual(['tQ8hXn2wZ5', 'Zx9PoIu7Yt']);
    // Markets seen counts what the venue returned, the ones the filters dropped included.
    const unfiltered = await adapter.sync(ctx());
    expect(unfiltered.questions.length).toBeGreaterThan(r.questions.length);
    expect(r.markets_seen).toBe(unfiltered.markets_seen);
    expect(r.markets_seen).toBeGreaterThanOrEqual(unfiltered.questions.length + unfiltered.skipped.length);
  });

  it('a body that stays truncated fails as invalid_json after the retries', async () => {
    server = await startReplayServer([{ path: '/v0/markets', responses: [{ body: page1, truncate: { bytes: 64 } }] }]);
    const adapter = createManifoldAdapter({ baseUrl: `${server.url}/v0`, clientOptions: { ...FAST, retries: 2 } });
    const err = (await adapter.sync(ctx()).catch((e: unknown) => e)) as SourceHttpError;
    expect(err).toBeInstanceOf(VenueSyncError);
    expect(err.kind).toBe('invalid_json');
    // the kind and the address once each (it read "invalid_json: manifold sync failed: invalid_json: …")
    expect(err.message).toBe(`invalid_json: manifold sync failed: body is not JSON (64 bytes) (${server.url}/v0/markets?limit=1000&sort=created-time&order=desc)`);
    expect(server.log).toHaveLength(3);
  });

  it('throws a SourceHttpError within a bounded time when the venue fails entirely', async () => {
    server = await startReplayServer([{ path: /.*/, responses: [{ status: 500 }] }]);
    const adapter = createManifoldAdapter({ baseUrl: `${server.url}/v0`, clientOptions: { ...FAST, retries: 2 } });
    const t0 = Date.now();
    const err = await adapter.sync(ctx()).catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(err).toBeInstanceOf(SourceHttpError);
  });
});
