/**
 * Issue 9 point 1, "no hang past a deadline, anywhere": every outbound client (the source HTTP
 * client, FRED, GDELT, the four venues, Polymarket's CLOB, the models through the openai SDK)
 * against three loopback servers that never finish an answer (test/net/bad-servers.ts: a silent
 * listener, headers then a stalled body, a body trickling a byte a second). Each client makes
 * TRIES tries against each kind, all concurrently, under a caller's signal (as `quorum sync` and
 * the runs pass one) and under full garbage collections every few ms (test/net/gc-pressure.ts):
 * a deadline that can be collected before it fires (AbortSignal.timeout inside AbortSignal.any)
 * hangs here every time. Each try must end with the client's timeout error within DEADLINE +
 * MARGIN, and the server must be left with no open connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { z } from 'zod';
import { createSourceClient, SourceHttpError, type SourceClient } from '../../pipeline/sources/http-client.ts';
import { fetchFredObservations, FredError } from '../../pipeline/sources/fred.ts';
import { createGdeltProvider } from '../../pipeline/evidence/gdelt.ts';
import { createKalshiAdapter } from '../../pipeline/venues/kalshi.ts';
import { createManifoldAdapter } from '../../pipeline/venues/manifold.ts';
import { createMetaculusAdapter } from '../../pipeline/venues/metaculus.ts';
import { createPolymarketAdapter } from '../../pipeline/venues/polymarket.ts';
import { VenueSyncError, type VenueAdapter, type VenueSyncContext } from '../../pipeline/venues/types.ts';
import { simulatedModels } from '../../pipeline/models/config.ts';
import { runForecasts, type ForecastTask } from '../../pipeline/models/runner.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { EventFeed } from '../../api/events/feed.ts';
import { WebhookDispatcher } from '../../api/events/webhooks/dispatcher.ts';
import { createKey } from '../../api/auth/keys.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { BAD_KINDS, startBadServers, type BadKind, type BadServer } from './bad-servers.ts';
import { gcPressure } from './gc-pressure.ts';

const DEADLINE = 400;
/**
 * Room for a loaded 2-core machine, within the bound (deadline + 5 s); a hang lasts
 * minutes (undici's own 300 s timeouts, or forever).
 */
const MARGIN = 4000;
const TRIES = 20;
const FAST = { requestsPerInterval: 10_000, intervalMs: 1000, concurrency: 100, retries: 2, backoffMs: 5, timeoutMs: DEADLINE };
const logger = pino({ level: 'silent' });

let servers: Record<BadKind, BadServer>;
let stopGc: () => void;
beforeAll(async () => {
  servers = await startBadServers();
  stopGc = gcPressure(100);
});
afterAll(async () => {
  stopGc?.();
  await Promise.all(Object.values(servers ?? {}).map((s) => s.close()));
});

type Outcome = { kind: BadKind; elapsed: number; hung: boolean; value?: unknown; error?: unknown };

/**
 * Runs TRIES tries of `one` against each kind of server, all at once, under one caller's signal.
 * A try still pending at DEADLINE + MARGIN + 6 s is recorded as hung (the test does not wait for it).
 */
async function everyKind(
  one: (server: BadServer, signal: AbortSignal, i: number, startClock: () => void) => Promise<unknown>,
): Promise<Outcome[]> {
  const caller = new AbortController();
  const tries = BAD_KINDS.flatMap((kind) =>
    Array.from({ length: TRIES }, async (_, i): Promise<Outcome> => {
      let t0 = Date.now();
      let watchdog: NodeJS.Timeout | undefined;
      const hang = new Promise<'hang'>((r) => (watchdog = setTimeout(() => r('hang'), DEADLINE + MARGIN + 6000)));
      // A try whose timed client is not the first thing it calls restarts the clock when it is.
      const startClock = () => {
        t0 = Date.now();
      };
      const work = one(servers[kind], caller.signal, i, startClock).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      const r = await Promise.race([work, hang]);
      clearTimeout(watchdog);
      const elapsed = Date.now() - t0;
      return r === 'hang' ? { kind, elapsed, hung: true } : { kind, elapsed, hung: false, ...r };
    }),
  );
  const out = await Promise.all(tries);
  caller.abort(); // only now: nothing above ended because of it
  return out;
}

/** Every try ended in time with `expected` true of its result, and every connection was closed. */
async function expectBounded(outcomes: Outcome[], expected: (o: Outcome) => boolean) {
  const hung = outcomes.filter((o) => o.hung);
  expect(hung.map((o) => o.kind), 'tries that hung past the deadline').toEqual([]);
  const late = outcomes.filter((o) => o.elapsed > DEADLINE + MARGIN);
  expect(late.map((o) => `${o.kind}: ${o.elapsed} ms`), 'tries that ended late').toEqual([]);
  const wrong = outcomes.filter((o) => !expected(o));
  expect(wrong.map((o) => `${o.kind}: ${String((o.error as Error | undefined)?.message ?? JSON.stringify(o.value))}`), 'tries without the timeout error').toEqual([]);
  const drained = await Promise.all(BAD_KINDS.map((kind) => servers[kind].drained(5000)));
  expect(Object.fromEntries(BAD_KINDS.map((kind, i) => [kind, drained[i]])), 'every connection closed').toEqual({ silent: true, stall: true, trickle: true });
  for (const kind of BAD_KINDS) expect(servers[kind].accepted(), `${kind}: connections made`).toBeGreaterThan(0);
}

const timedOut = (o: Outcome) => o.error instanceof SourceHttpError && o.error.kind === 'timeout';

describe('every outbound client ends within its deadline against servers that never finish', () => {
  it('source HTTP client (getJson / getRaw): timeout', async () => {
    const clients = Object.fromEntries(BAD_KINDS.map((k) => [k, createSourceClient(FAST)]));
    const outcomes = await everyKind((s, signal, i) =>
      i % 2 === 0 ? clients[s.kind]!.getJson(`${s.url}/data?i=${i}`, z.unknown(), signal) : clients[s.kind]!.getRaw(`${s.url}/data?i=${i}`, signal),
    );
    await expectBounded(outcomes, timedOut);
    // Without a caller's signal too (what FRED and GDELT callers may do).
    await expectBounded(await everyKind((s, _signal, i) => clients[s.kind]!.getRaw(`${s.url}/plain?i=${i}`)), timedOut);
  });

  it('FRED: request_failed with the client kind timeout', async () => {
    const client = createSourceClient(FAST);
    const outcomes = await everyKind((s, signal) =>
      fetchFredObservations(client, { baseUrl: s.url, apiKey: 'abcdef0123456789abcdef0123456789' }, { seriesId: 'UNRATE', start: '2025-01-01', end: '2025-12-31' }, signal),
    );
    await expectBounded(outcomes, (o) => o.error instanceof FredError && o.error.kind === 'request_failed' && o.error.httpKind === 'timeout');
  });

  it('GDELT: timeout', async () => {
    const question = {
      question_id: 'test:gdelt', title: 'Will the European Central Bank cut rates in December?', description: null, resolution_criteria: null,
      url: null, created_at: null, close_time: null, category: null, domain: null,
    };
    // One provider per try: GDELT's pacing is one request at a time per provider.
    const outcomes = await everyKind((s, signal) =>
      createGdeltProvider({ baseUrl: s.url, timeoutMs: DEADLINE, minIntervalMs: 1, backoffMs: 5 }).retrieve(question, { asOf: new Date(), limit: 5, signal }),
    );
    await expectBounded(outcomes, timedOut);
  });

  const ctx = (signal: AbortSignal, over: Partial<VenueSyncContext> = {}): VenueSyncContext => ({ now: new Date(), filters: {}, tracked: [], logger, signal, ...over });
  const venueTimedOut = (o: Outcome) => o.error instanceof VenueSyncError && o.error.kind === 'timeout';
  const venues: [string, (base: string) => VenueAdapter][] = [
    ['kalshi', (base) => createKalshiAdapter({ baseUrl: `${base}/trade-api/v2`, clientOptions: FAST })],
    ['manifold', (base) => createManifoldAdapter({ baseUrl: `${base}/v0`, clientOptions: FAST })],
    ['metaculus', (base) => createMetaculusAdapter({ baseUrl: `${base}/api`, clientOptions: FAST })],
    ['polymarket (Gamma)', (base) => createPolymarketAdapter({ gammaUrl: base, clientOptions: FAST })],
  ];
  for (const [name, create] of venues) {
    it(`${name}: the sync fails with timeout`, async () => {
      const outcomes = await everyKind((s, signal) => create(s.url).sync(ctx(signal)));
      await expectBounded(outcomes, venueTimedOut);
    });
  }

  describe('polymarket CLOB (gap backfill)', () => {
    const market = JSON.parse(readFileSync(new URL('../fixtures/venues/polymarket/markets-offset-0.json', import.meta.url), 'utf8'))[0];
    let gamma: ReplayServer;
    beforeAll(async () => {
      gamma = await startReplayServer([{ path: '/markets', responses: [json([market])] }]);
    });
    afterAll(() => gamma?.close());

    it('a tracked market with a gap: the history request times out and is reported, the sync ends in time', async () => {
      const now = new Date();
      const tracked = [{ question_id: `polymarket:${market.conditionId}`, venue_market_id: market.conditionId, last_observed_at: new Date(now.getTime() - 12 * 3_600_000) }];
      const outcomes = await everyKind((s, signal, _i, startClock) => {
        // The CLOB client as the registry builds it (the Gamma client's options, a short deadline),
        // its clock started when the history request is made: Gamma answers first, unhurried.
        const clob = createSourceClient({ ...FAST, timeoutMs: DEADLINE });
        const timed: SourceClient = {
          stats: clob.stats,
          getRaw: (url, sig) => (startClock(), clob.getRaw(url, sig)),
          getJson: (url, schema, sig) => (startClock(), clob.getJson(url, schema, sig)),
        };
        return createPolymarketAdapter({ gammaUrl: gamma.url, clobUrl: s.url, clientOptions: { ...FAST, timeoutMs: 10_000 }, clobClient: timed }).sync(ctx(signal, { now, tracked }));
      });
      await expectBounded(outcomes, (o) => {
        const r = o.value as { skipped: { reason: string }[]; market_prices: unknown[] } | undefined;
        return r !== undefined && r.market_prices.length === 1 && r.skipped.length === 1 && /^price history not backfilled: timeout: deadline of 400 ms exceeded/.test(r.skipped[0]!.reason);
      });
    });
  });

  it('models (openai SDK through the runner): every call fails with error kind timeout', async () => {
    const task = (n: number): ForecastTask => ({
      mode: 'blind',
      question: {
        question_id: `test:${n}`, title: `Will test event ${n} happen?`, description: null, resolution_criteria: null, url: null,
        created_at: null, close_time: null, category: 'science', domain: 'other',
      },
    });
    // One model per server, TRIES calls each in flight at once; a "try" is one call.
    const byKind = new Map(BAD_KINDS.map((k) => [k, { ...simulatedModels(servers[k].url)[0]!, id: `m-${k}`, max_concurrency: TRIES, requests_per_minute: 10_000 }]));
    const outcomes = await everyKind(async (s, signal, i) => {
      const r = await runForecasts({ models: [byKind.get(s.kind)!], tasks: [task(i)], runId: 'deadline-test', asOf: new Date(), callTimeoutMs: DEADLINE, signal });
      return r.calls[0];
    });
    await expectBounded(outcomes, (o) => {
      const call = o.value as { status: string; error_kind: string; latency_ms: number } | undefined;
      return call?.status === 'failed' && call.error_kind === 'timeout' && call.latency_ms <= DEADLINE + MARGIN;
    });
  });

  it('webhook deliveries (the dispatcher, one deadline sweep for all attempts): each attempt fails with the deadline', async () => {
    const side = tempDir('quorum-webhook-deadline-');
    try {
      const feed = await EventFeed.open({ dataDir: side.dir, logger, pollMs: 0, retentionMs: 86_400_000 });
      const cfg = { allowPrivate: true, timeoutMs: DEADLINE, retryWindowMs: 86_400_000, backoffMs: 600_000, maxBackoffMs: 600_000, concurrency: 3 * TRIES, maxPerKey: 20 };
      const dispatcher = new WebhookDispatcher(side.dir, feed, cfg, logger);
      await dispatcher.start();
      // Deliveries go only to subscriptions of an active enterprise key (the dispatcher checks the key file).
      const keyId = createKey(side.dir, { name: 'deadline test', plan: 'enterprise' }).record.id;
      const subs = BAD_KINDS.flatMap((kind) =>
        Array.from({ length: TRIES }, (_, i) => ({ kind, sub: dispatcher.store.create({ keyId, url: `${servers[kind].url}/hook/${i}`, types: null, description: null }) })),
      );
      const now = new Date();
      const row = {
        event_id: 'evt_deadline_1', seq: 1, run_id: 'r20260101T000000Z-deadline', type: 'run.completed', subject: 'run', question_id: null, category: null,
        as_of: now, created_at: now, snapshot: 'r20260101T000000Z-deadline', previous_snapshot: null, data: JSON.stringify({ n: 1 }),
      };
      await withConnection((conn) => appendRaw(conn, side.dir, 'events', [row], { runId: 'r20260101T000000Z-deadline', runDate: '2026-01-01' }));
      await feed.poll();
      const attempted = () => subs.map(({ kind, sub }) => ({ kind, attempt: dispatcher.queue.ofSubscription(sub.id)[0]?.attempts[0] }));
      const end = Date.now() + DEADLINE + MARGIN + 6000;
      while (attempted().some((a) => !a.attempt) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      const outcomes = attempted();
      expect(outcomes.filter((o) => !o.attempt).map((o) => o.kind), 'attempts that hung').toEqual([]);
      for (const { kind, attempt } of outcomes) {
        // The silent server never answers (the deadline ends the attempt); the others send a 2xx
        // status line and never finish the body: the receiver acknowledged, so the delivery counts,
        // and the body is read until the deadline (trickle) or given up at once (stall's
        // Content-Length is over undici's dump limit).
        if (kind === 'silent') {
          expect(attempt!.status, kind).toBeNull();
          expect(attempt!.error, kind).toMatch(/webhook delivery deadline of 400 ms exceeded|timeout/i);
        } else {
          expect(attempt!.status, kind).toBe(200);
          if (attempt!.error !== null) expect(attempt!.error, kind).toMatch(/webhook delivery deadline of 400 ms exceeded|timeout|aborted/i);
        }
        expect(attempt!.duration_ms, kind).toBeLessThanOrEqual(DEADLINE + MARGIN);
      }
      await dispatcher.close();
      await feed.close();
      const drained = await Promise.all(BAD_KINDS.map((kind) => servers[kind].drained(5000)));
      expect(drained, 'every connection closed').toEqual([true, true, true]);
    } finally {
      side.cleanup();
    }
  });
});
