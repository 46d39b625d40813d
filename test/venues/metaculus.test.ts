import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SourceHttpError } from '../../pipeline/sources/http-client.ts';
import { createMetaculusAdapter, normalizeMetaculus } from '../../pipeline/venues/metaculus.ts';
import type { VenueSyncContext } from '../../pipeline/venues/types.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';

const fx = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/venues/metaculus/${name}`, import.meta.url), 'utf8'));
const page1 = fx('posts-page-1.json');
const page2 = fx('posts-page-2.json');
const tracked: Record<string, unknown> = fx('posts-tracked.json');

const FAST = { requestsPerInterval: 1000, intervalMs: 1000, retries: 3, backoffMs: 5, timeoutMs: 5000 };
const logger = pino({ level: 'silent' });
const now = new Date('2025-11-15T12:00:00Z');
const ctx = (over: Partial<VenueSyncContext> = {}): VenueSyncContext => ({ now, filters: {}, tracked: [], logger, ...over });
const track = (...ids: string[]) => ids.map((id) => ({ question_id: `metaculus:${id}`, venue_market_id: id }));

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('metaculus adapter', () => {
  it('follows `next` on the configured host, keeps binary questions, handles a missing aggregation, annulled and ambiguous', async () => {
    server = await startReplayServer([
      { path: '/api/posts/', query: { offset: '0' }, responses: [{ status: 429, headers: { 'retry-after': '0.05' } }, json(page1)] },
      { path: '/api/posts/', query: { offset: '4' }, responses: [{ status: 500 }, { body: page2, truncate: { bytes: 1000, mode: 'destroy' } }, json(page2)] },
      {
        path: /^\/api\/posts\/\d+\/$/,
        responses: (req: { path: string }) => {
          const p = tracked[req.path.split('/')[3]!];
          return p ? json(p) : json({ detail: 'No Post matches the given query.' }, 404);
        },
      },
    ]);
    const adapter = createMetaculusAdapter({ baseUrl: `${server.url}/api`, pageSize: 4, token: 'test-token', clientOptions: FAST });
    const r = await adapter.sync(ctx({ tracked: track('20001', '20002', '20003', '20004', '20005', '20006', '99999') }));

    const first = server.log[0]!;
    expect(Object.fromEntries(first.query)).toMatchObject({ offset: '0', limit: '4', statuses: 'open', forecast_type: 'binary', with_cp: 'true' });
    expect(server.log.filter((e) => e.path === '/api/posts/').map((e) => `${e.query.get('offset')}:${e.status}`)).toEqual(['0:429', '0:200', '4:500', '4:200', '4:200']);

    // New: 31245 (with community prediction), 31300 (no aggregation yet: tracked, not priced), 31700.
    expect(r.questions.map((q) => q.venue_market_id)).toEqual(['31245', '31300', '31700']);
    expect(r.questions[0]).toMatchObject({
      question_id: 'metaculus:31245',
      url: 'https://www.metaculus.com/questions/31245/',
      close_time: new Date('2026-06-30T23:00:00Z'),
      description: 'The NBER Business Cycle Dating Committee determines US recessions.',
    });
    expect(r.questions[0]!.resolution_criteria).toContain('Announcements after the close date');
    expect(r.market_prices.map((p) => [p.question_id, p.probability])).toEqual([
      ['metaculus:31245', 0.18],
      ['metaculus:31700', 0.05],
    ]);
    expect(r.market_prices[0]).toMatchObject({ best_bid: null, best_ask: null, volume: null, liquidity: null });
    expect(r.lifecycle_events.filter((e) => e.state === 'active').map((e) => e.question_id)).toEqual(['metaculus:31245', 'metaculus:31300', 'metaculus:31700']);

    const skipped = Object.fromEntries(r.skipped.map((s) => [s.venue_market_id, s.reason]));
    expect(skipped['31410']).toBe('non-binary question: type "numeric"');
    expect(skipped['31500']).toMatch(/non-binary post/);
    expect(skipped['31600']).toMatch(/^schema: nr_forecasters/);
    expect(skipped['31800']).toMatch(/unknown Metaculus status "paused"/);
    expect(skipped['99999']).toMatch(/not found/);

    const res = new Map(r.resolutions.map((x) => [x.question_id, x]));
    expect(res.get('metaculus:20001')).toMatchObject({ outcome: 1, resolved_at: new Date('2025-09-17T19:00:00Z'), method: 'metaculus:resolved_yes', source_slug: 'metaculus', source_url: 'https://www.metaculus.com/questions/20001/' });
    expect(res.get('metaculus:20002')).toMatchObject({ outcome: 0 });
    expect(res.get('metaculus:20003')).toMatchObject({ outcome: null, annulled_reason: expect.stringContaining('annulled') });
    expect(res.get('metaculus:20004')).toMatchObject({ outcome: null, annulled_reason: expect.stringContaining('ambiguous') });
    expect(res.get('metaculus:20004')!.evidence_excerpt).toContain('resolution="ambiguous"');
    expect(res.size).toBe(4);
    expect(r.lifecycle_events.find((e) => e.question_id === 'metaculus:20005')).toMatchObject({ state: 'closed', at: new Date('2025-10-01T00:00:00Z') });
    // Tracked, open, no aggregation: no price row, nothing else either.
    expect(r.market_prices.some((p) => p.question_id === 'metaculus:20006')).toBe(false);
    expect(r.skipped.some((s) => s.venue_market_id === '20006')).toBe(false);
  });

  it("the price is the community prediction of the question's default_aggregation_method, not always recency_weighted (QA)", () => {
    // Metaculus's serializer (github.com/Metaculus/metaculus, questions/serializers,
    // serialize_question_aggregations) always emits `aggregations[question.default_aggregation_method]`
    // and other methods only when computed; the CP the site shows is the default method's. Bot
    // tournament questions use "unweighted" (clients read `aggregations[default_aggregation_method]`,
    // e.g. metac-bot-template forks: `qdict.get("default_aggregation_method", ...)`).
    const base = page1.results[0] as { question: Record<string, unknown> } & Record<string, unknown>;
    const latest = (p: number) => ({ start_time: 1761900000, end_time: null, forecaster_count: 40, centers: [p], forecast_values: [1 - p, p] });
    const withAggs = (method: string, aggregations: Record<string, unknown>) =>
      normalizeMetaculus({ ...base, question: { ...base.question, default_aggregation_method: method, aggregations } }, now);
    // Only the default method is there (recency_weighted not computed): still a price.
    const onlyDefault = withAggs('unweighted', { unweighted: { history: [], latest: latest(0.37), score_data: {}, movement: null } });
    expect(onlyDefault.ok && onlyDefault.market.probability).toBe(0.37);
    // Both there: the default one, as Metaculus shows it.
    const both = withAggs('unweighted', { recency_weighted: { history: [], latest: latest(0.6) }, unweighted: { history: [], latest: latest(0.37) } });
    expect(both.ok && both.market.probability).toBe(0.37);
    // Default recency_weighted (the usual case) and no default named: recency_weighted, as before.
    expect((r => r.ok && r.market.probability)(withAggs('recency_weighted', { recency_weighted: { latest: latest(0.6) }, unweighted: { latest: latest(0.37) } }))).toBe(0.6);
    const { default_aggregation_method: _d, ...noDefault } = base.question;
    const unnamed = normalizeMetaculus({ ...base, question: { ...noDefault, aggregations: { recency_weighted: { latest: latest(0.6) } } } }, now);
    expect(unnamed.ok && unnamed.market.probability).toBe(0.6);
    // The default's CP hidden (latest null): no price, not another method's.
    const hidden = withAggs('unweighted', { unweighted: { history: [], latest: null }, recency_weighted: { latest: latest(0.6) } });
    expect(hidden.ok && hidden.market.probability).toBeNull();
    // Another method in a shape this adapter does not read does not cost the post its price.
    const odd = withAggs('recency_weighted', { recency_weighted: { latest: latest(0.6) }, metaculus_prediction: { latest: { centers: [null] } } });
    expect(odd.ok && odd.market.probability).toBe(0.6);
  });

  it('never follows `next` off the configured host', async () => {
    const evil = { ...page1, next: 'http://203.0.113.9:9/api/posts/?offset=4&limit=4' };
    server = await startReplayServer([
      { path: '/api/posts/', query: { offset: '0' }, responses: [json(evil)] },
      { path: '/api/posts/', query: { offset: '4' }, responses: [json(page2)] },
    ]);
    const adapter = createMetaculusAdapter({ baseUrl: `${server.url}/api`, pageSize: 4, clientOptions: FAST });
    const r = await adapter.sync(ctx());
    expect(server.log.map((e) => e.query.get('offset'))).toEqual(['0', '4']);
    expect(r.questions).toHaveLength(3);
  });

  it('a request Metaculus refuses for want of a token says so and names QUORUM_METACULUS_TOKEN (the API requires one since March 2026)', async () => {
    // Metaculus's answer to an unauthenticated request since it closed its API to anonymous
    // users (quoted in pmxt-dev/pmxt issue #1734, 2026-07-19; Metaculus notebook 42554, "Changes
    // to the Metaculus API"). The sync report said only "HTTP 403 (<url>)" on every sync of a
    // default install, which syncs Metaculus without a token (QUORUM_METACULUS_TOKEN is optional).
    server = await startReplayServer([{ path: /.*/, responses: [json({ detail: 'The API is only available to authenticated users.' }, 403)] }]);
    const anonymous = createMetaculusAdapter({ baseUrl: `${server.url}/api`, clientOptions: FAST });
    const err = (await anonymous.sync(ctx()).catch((e: unknown) => e)) as SourceHttpError;
    expect(err).toBeInstanceOf(SourceHttpError);
    expect(err.status).toBe(403);
    expect(err.message).toContain('HTTP 403: The API is only available to authenticated users.');
    expect(err.message).toContain('QUORUM_METACULUS_TOKEN is not set');
    // A token Metaculus refuses is named as such.
    await server.close();
    server = await startReplayServer([{ path: /.*/, responses: [json({ detail: 'Invalid token.' }, 401)] }]);
    const refused = createMetaculusAdapter({ baseUrl: `${server.url}/api`, token: 'stale-token', clientOptions: FAST });
    const err2 = (await refused.sync(ctx()).catch((e: unknown) => e)) as SourceHttpError;
    expect(err2.message).toContain('HTTP 401: Invalid token.');
    expect(err2.message).toContain('Metaculus refused QUORUM_METACULUS_TOKEN');
    expect(err2.message).not.toContain('stale-token');
  });

  it('throws a SourceHttpError within a bounded time when the venue fails entirely', async () => {
    server = await startReplayServer([{ path: /.*/, responses: [{ status: 500 }] }]);
    const adapter = createMetaculusAdapter({ baseUrl: `${server.url}/api`, clientOptions: { ...FAST, retries: 2 } });
    const t0 = Date.now();
    const err = await adapter.sync(ctx()).catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(err).toBeInstanceOf(SourceHttpError);
  });
});

describe('a Metaculus aggregate that has ended', () => {
  /**
   * Metaculus serializes the last aggregate it computed as `latest` with its `start_time` and
   * `end_time` in unix seconds, `end_time` null while it holds (github.com/Metaculus/metaculus,
   * questions/serializers/aggregate_forecasts.py, `serialize_aggregate_forecast`); forecasts are
   * withdrawn or expire (questions/management/commands/mark_forecasts_to_autowithdraw.py), and an
   * open question whose last forecasts all ended keeps that ended aggregate as `latest`. Before,
   * its centers[0] was recorded as the community prediction observed at each sync, the same stale
   * figure every time.
   */
  it('is no price observation; one ending later than the sync, or not at all, still is', async () => {
    const post = page1.results[0] as { question: Record<string, unknown> } & Record<string, unknown>;
    const agg = (id: number, endTime: number | null, p: number) => ({
      ...post,
      id,
      question: {
        ...post.question,
        id: id + 1,
        default_aggregation_method: 'recency_weighted',
        aggregations: {
          recency_weighted: { history: [], latest: { start_time: 1761000000, end_time: endTime, forecaster_count: 12, centers: [p], interval_lower_bounds: [p - 0.1], interval_upper_bounds: [p + 0.1] }, score_data: {}, movement: null },
        },
      },
    });
    const nowS = now.getTime() / 1000;
    server = await startReplayServer([
      { path: '/api/posts/', responses: [json({ next: null, results: [agg(90001, nowS - 86_400, 0.81), agg(90002, nowS + 86_400, 0.42), agg(90003, null, 0.3)] })] },
    ]);
    const r = await createMetaculusAdapter({ baseUrl: `${server.url}/api`, clientOptions: FAST }).sync(ctx());
    expect(r.questions.map((q) => q.venue_market_id)).toEqual(['90001', '90002', '90003']);
    expect(r.market_prices.map((p) => [p.question_id, p.probability])).toEqual([
      ['metaculus:90002', 0.42],
      ['metaculus:90003', 0.3],
    ]);
  });
});
