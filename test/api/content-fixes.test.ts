/**
 * Issue 9 §4, §5, §6 and §12 over a real HTTP server (port 0) and a fixture snapshot written as real
 * Parquet (test/api/fixtures.ts: feedRows, scoredRows): a resolved question's detail shows what was
 * scored; every market price beside a forecast says when it was observed and whether it is stale;
 * summaries say where the forecasts came from; lists have totals, venues are validated, lifecycle
 * resolves the ids detail does and lists states in time order; figures are published rounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig, ConfigError } from '../../pipeline/config.ts';
import type { ServerHandle } from '../../api/server.ts';
import { CalibrationReport } from '../../api/routes/events-accuracy.ts';
import { EventsLangPage } from '../../api/routes/events-lang.ts';
import { AccuracySummary } from '../../api/routes/predictions-accuracy.ts';
import { PredictionDetail } from '../../api/routes/predictions-detail.ts';
import { EdgesPage } from '../../api/routes/predictions-edges.ts';
import { PredictionsLangPage } from '../../api/routes/predictions-lang.ts';
import { Lifecycle } from '../../api/routes/predictions-lifecycle.ts';
import { ResolvedPage } from '../../api/routes/predictions-resolved.ts';
import { ServiceStats } from '../../api/routes/service-stats.ts';
import { VENUES } from '../../api/routes/prediction-params.ts';
import { FEED, fixtureData, withFeeds, type FixtureData } from './fixtures.ts';
import { auth, expectProblem, fixtureDir, get, maxDecimals, newKey, serve, type Got } from './helpers.ts';

let dir: string;
let cleanup: () => Promise<void>;
let server: ServerHandle;
let pro: RequestInit;

/** The feed fixture plus: a lifecycle whose stored seq disagrees with the times, a 7-decimal Brier. */
function data(): FixtureData {
  const d = withFeeds(fixtureData(1));
  d.lifecycle = [
    ...d.lifecycle!,
    { question_id: FEED.d, state: 'closed', at: '2025-03-30 00:00:00', reason: 'closed', seq: 1 },
    { question_id: FEED.d, state: 'proposed', at: '2025-01-01 00:00:00', reason: 'imported', seq: 2 },
    { question_id: FEED.d, state: 'active', at: '2025-01-02 00:00:00', reason: 'listed', seq: 3 },
  ];
  d.calibration_summary = d.calibration_summary!.map((r) =>
    r.forecaster === 'consensus' ? { ...r, brier: 0.1812345678, accuracy_pct: 66.666666 } : r,
  );
  return d;
}

beforeAll(async () => {
  ({ dir, cleanup } = await fixtureDir(data()));
  server = await serve(dir);
  pro = auth.x(newKey(dir, 'pro').key);
});

afterAll(async () => {
  await server?.close();
  await cleanup?.();
});

function ok(got: Got, schema: z.ZodObject): any {
  expect(got.res.status, got.text.slice(0, 500)).toBe(200);
  const parsed = schema.extend({ as_of: z.string() }).strict().safeParse(got.body);
  expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues.slice(0, 3))).toBe(true);
  return got.body;
}

describe('§4 a resolved question in detail: what was scored, model by model', () => {
  it('every mode\'s scored consensus and every model\'s scored forecast with scores, texts in every language, evidence', async () => {
    const body = ok(await get(server, `/api/predictions/${FEED.resolved}`, pro), PredictionDetail);
    expect(body.headline).toMatchObject({ mode: 'augmented', run_id: 'r0', n_models: 4, providers: ['openai', 'simulated'] });
    expect(body.headline.consensus.logit_mean).toBe(0.760123); // 0.7601234567891 published to 6 decimals
    const [blind, aug] = body.modes;
    expect(aug.models).toHaveLength(aug.n_models);
    expect(aug.scores).toEqual({
      outcome: 1, brier: 0.0625, log_loss: 0.287682, direction: 'correct', market_probability: 0.6,
      market_observed_at: '2025-02-26T00:00:00.000Z', market_stale: true, market_brier: 0.16, market_log_loss: 0.510826,
    });
    expect(aug.models.map((m: any) => [m.model, m.provider, m.probability])).toEqual([
      ['claude', 'simulated', 0.7], ['deepseek', 'simulated', 0.8], ['gemini', 'simulated', 0.9], ['gpt', 'openai', 0.612346],
    ]);
    const gpt = aug.models[3];
    expect(gpt).toEqual({
      model: 'gpt', provider: 'openai', probability: 0.612346, created_at: '2025-03-01T00:00:00.000Z', run_id: 'r0',
      evidence_ids: ['ev3'],
      scores: {
        outcome: 1, brier: 0.150276, log_loss: 0.490458, direction: 'correct', market_probability: 0.6,
        market_observed_at: '2025-02-26T00:00:00.000Z', market_stale: true, market_brier: 0.16, market_log_loss: 0.510826,
      },
      texts: [
        { lang: 'en', translation_of: null, reasoning: `gpt scored en: reasoning about ${FEED.resolved}`, key_factors: ['en scored factor of gpt'] },
        { lang: 'fr', translation_of: 'en', reasoning: `gpt scored fr: reasoning about ${FEED.resolved}`, key_factors: ['fr scored factor of gpt'] },
      ],
    });
    // claude's blind forecast is from an earlier run, has no text rows and no comparator
    expect(blind.models).toEqual([{
      model: 'claude', provider: 'simulated', probability: 0.3, created_at: '2025-02-20T00:00:00.000Z', run_id: 'rb',
      evidence_ids: [], texts: [],
      scores: {
        outcome: 1, brier: 0.49, log_loss: 1.203973, direction: 'wrong', market_probability: null, market_observed_at: null,
        market_stale: null, market_brier: null, market_log_loss: null,
      },
    }]);
    expect(body.langs).toEqual(['en', 'fr']);
    expect(body.evidence.map((e: any) => e.evidence_id)).toEqual(['ev3']);
    expect(maxDecimals(body)).toBeLessThanOrEqual(6);
  });

  it('an active question keeps its latest run, with null scores', async () => {
    const body = ok(await get(server, `/api/predictions/${FEED.a}`, pro), PredictionDetail);
    expect(body.modes.every((m: any) => m.scores === null && m.models.every((x: any) => x.scores === null))).toBe(true);
  });
});

describe('§5 stale market prices are flagged, and stale edges left out unless asked for', () => {
  it('language feeds: market_observed_at and market_stale (relative to as_of)', async () => {
    const en = ok(await get(server, '/api/predictions/lang/en?limit=500'), PredictionsLangPage);
    const byId = new Map(en.predictions.map((p: any) => [p.question_id, p]));
    expect(byId.get(FEED.a)).toMatchObject({ market_observed_at: '2025-04-01T18:00:00.000Z', market_stale: false });
    expect(byId.get(FEED.dup)).toMatchObject({ market_probability: 0.35, market_observed_at: '2025-03-26T00:00:00.000Z', market_stale: true });
    expect(byId.get(FEED.b)).toMatchObject({ market_probability: null, market_observed_at: null, market_stale: null });
    const ev = ok(await get(server, '/api/events/lang/en/?limit=500'), EventsLangPage);
    expect(ev.events.find((e: any) => e.question_id === FEED.dup)).toMatchObject({ market_stale: true });
  });

  it('detail: the market block says when and whether stale', async () => {
    const dup = ok(await get(server, `/api/predictions/${FEED.dup}`, pro), PredictionDetail);
    expect(dup.market).toEqual({ probability: 0.35, observed_at: '2025-03-26T00:00:00.000Z', stale: true });
  });

  it('resolved list: the comparator is stale by its age at forecast_at', async () => {
    const page = ok(await get(server, '/api/predictions/resolved?limit=500'), ResolvedPage);
    const byId = new Map(page.predictions.map((p: any) => [p.question_id, p]));
    expect(byId.get('q:0')).toMatchObject({ market_observed_at: '2025-01-31T12:00:00.000Z', market_stale: false });
    expect(byId.get('q:1')).toMatchObject({ market_observed_at: '2025-01-29T00:00:00.000Z', market_stale: true });
    expect(byId.get('q:7')).toMatchObject({ market_probability: null, market_observed_at: null, market_stale: null });
    expect(byId.get(FEED.resolved)).toMatchObject({ market_stale: true });
  });

  it('edges: a stale price is left out (total too) unless include_stale=true; bad values are 400s', async () => {
    const def = ok(await get(server, '/api/predictions/edges/?min_edge=0', pro), EdgesPage);
    expect(def.edges.map((e: any) => e.question_id)).not.toContain('polymarket:0xe10');
    expect(def).toMatchObject({ total: 10, include_stale: false, max_price_age_hours: 48 });
    expect(def.edges.every((e: any) => e.market_stale === false)).toBe(true);
    const all = ok(await get(server, '/api/predictions/edges/?min_edge=0&include_stale=true', pro), EdgesPage);
    expect(all.total).toBe(11);
    expect(all.edges.find((e: any) => e.question_id === 'polymarket:0xe10')).toMatchObject({
      market_stale: true, market_age_hours: 72.02, market_observed_at: '2025-03-30T00:00:00.000Z', // (72 h 1 min: ages in hours to 2 decimals)
    });
    expect(ok(await get(server, '/api/predictions/edges/?include_stale=FALSE', pro), EdgesPage).include_stale).toBe(false);
    for (const bad of ['yes', '1', 'truee', 'null']) {
      const got = await get(server, `/api/predictions/edges/?include_stale=${bad}`, pro);
      expectProblem(got, 400, 'invalid_parameter');
      expect(got.body.parameter).toBe('include_stale');
    }
  });

  it('the bound is a setting applied at query time: 200 h makes the 7-day-old price fresh, 1 h the 6-hour-old one stale', async () => {
    const wide = await serve(dir, { maxPriceAgeHours: 200 });
    const narrow = await serve(dir, { maxPriceAgeHours: 1 });
    try {
      const en = ok(await get(wide, '/api/predictions/lang/en?limit=500'), PredictionsLangPage);
      expect(en.predictions.find((p: any) => p.question_id === FEED.dup).market_stale).toBe(false);
      const edges = ok(await get(wide, '/api/predictions/edges/?min_edge=0', auth.x(newKey(dir, 'pro').key)), EdgesPage);
      expect(edges).toMatchObject({ total: 11, max_price_age_hours: 200 });
      const none = ok(await get(narrow, '/api/predictions/edges/?min_edge=0', auth.x(newKey(dir, 'pro').key)), EdgesPage);
      expect(none.total).toBe(0);
      const a = ok(await get(narrow, '/api/predictions/lang/fr'), PredictionsLangPage);
      expect(a.predictions[0].market_stale).toBe(true);
    } finally {
      await wide.close();
      await narrow.close();
    }
  });

  it('QUORUM_MAX_PRICE_AGE_HOURS is validated (default 48)', () => {
    expect(loadConfig({}).maxPriceAgeHours).toBe(48);
    expect(loadConfig({ QUORUM_MAX_PRICE_AGE_HOURS: '12.5' }).maxPriceAgeHours).toBe(12.5);
    for (const bad of ['0', '-1', 'abc', '1e9']) {
      expect(() => loadConfig({ QUORUM_MAX_PRICE_AGE_HOURS: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ QUORUM_MAX_PRICE_AGE_HOURS: bad }), bad).toThrow(/QUORUM_MAX_PRICE_AGE_HOURS/);
    }
  });
});

describe('§6 summaries say where the forecasts came from', () => {
  it('accuracy (overall and per category), events accuracy and service stats carry providers and simulated', async () => {
    const all = ok(await get(server, '/api/predictions/accuracy'), AccuracySummary);
    expect(all).toMatchObject({ providers: ['openai', 'simulated'], simulated: true });
    // the scored forecasts are all politics: crypto has none
    expect(ok(await get(server, '/api/predictions/accuracy/politics'), AccuracySummary)).toMatchObject({ providers: ['openai', 'simulated'], simulated: true });
    expect(ok(await get(server, '/api/predictions/accuracy/crypto'), AccuracySummary)).toMatchObject({ providers: [], simulated: false });
    expect(ok(await get(server, '/api/events/accuracy/'), CalibrationReport)).toMatchObject({ providers: ['openai', 'simulated'], simulated: true });
    // service stats: every consensus of the snapshot (the feed rows are simulated)
    expect(ok(await get(server, '/api/events/service_stats/'), ServiceStats)).toMatchObject({ providers: ['simulated'], simulated: true });
  });

  it('no simulated forecast → simulated: false', async () => {
    const d = fixtureData(1);
    d.scored_forecasts = [{ question_id: 'q:1', model: 'gpt', mode: 'augmented', run_id: 'r', probability: 0.5, provider: 'openai', category: 'crypto' }];
    d.consensus = d.consensus!.map((c) => ({ ...c, providers: 'anthropic,openai' }));
    const tmp = await fixtureDir(d);
    const s = await serve(tmp.dir);
    try {
      expect(ok(await get(s, '/api/predictions/accuracy'), AccuracySummary)).toMatchObject({ providers: ['openai'], simulated: false });
      expect(ok(await get(s, '/api/events/service_stats/'), ServiceStats)).toMatchObject({ providers: ['anthropic', 'openai'], simulated: false });
    } finally {
      await s.close();
      await tmp.cleanup();
    }
  });
});

describe('§12 consistent lists', () => {
  it('every list has total', async () => {
    const ev = ok(await get(server, '/api/events/lang/en/?limit=2'), EventsLangPage);
    expect(ev).toMatchObject({ count: 2, total: 28 });
    expect(ok(await get(server, '/api/events/lang/de/'), EventsLangPage)).toMatchObject({ count: 1, total: 1 });
    const cal = ok(await get(server, '/api/events/accuracy/'), CalibrationReport);
    expect(cal.total).toBe(cal.count);
    expect(cal.total).toBeGreaterThan(0);
    for (const p of ['/api/predictions/resolved', '/api/predictions/lang/en']) expect(typeof (await get(server, p)).body.total, p).toBe('number');
    expect(typeof (await get(server, '/api/predictions/edges/', pro)).body.total).toBe('number');
  });

  it('an unknown venue is a 400 listing the venues; a known one filters, case-insensitively', async () => {
    for (const bad of ['nasdaq', 'poly', "kalshi' OR '1'='1"]) {
      const got = await get(server, `/api/predictions/resolved?venue=${encodeURIComponent(bad)}`);
      expectProblem(got, 400, 'invalid_parameter');
      expect(got.body.parameter).toBe('venue');
      expect(got.body.allowed).toEqual([...VENUES]);
    }
    expect(VENUES).toEqual(['infer', 'kalshi', 'manifold', 'metaculus', 'polymarket', 'quorum']);
    const k = ok(await get(server, '/api/predictions/resolved?venue=Kalshi&limit=500'), ResolvedPage);
    expect(k.total).toBeGreaterThan(0);
    expect(k.predictions.every((p: any) => p.venue === 'kalshi')).toBe(true);
    expect(ok(await get(server, '/api/predictions/resolved?venue=quorum'), ResolvedPage).total).toBe(0);
  });

  it('lifecycle accepts the ids detail accepts: a unique bare id resolves, an ambiguous one is a 400 with the candidates', async () => {
    const bare = ok(await get(server, '/api/predictions/lifecycle/0xabc123/', pro), Lifecycle);
    expect(bare.question_id).toBe(FEED.a);
    expect(ok(await get(server, '/api/predictions/lifecycle/1554', pro), Lifecycle).question_id).toBe(FEED.b);
    for (const p of ['/api/predictions/lifecycle/dup1/', '/api/predictions/dup1']) {
      const dup = await get(server, p, pro);
      expectProblem(dup, 400, 'invalid_parameter');
      expect(dup.body.allowed, p).toEqual([FEED.dupClosed, FEED.dup]);
    }
    expectProblem(await get(server, '/api/predictions/lifecycle/nosuchmarket/', pro), 404, 'not_found');
  });

  it('lifecycle states are in time order (seq renumbered), whatever the stored seq', async () => {
    const body = ok(await get(server, `/api/predictions/lifecycle/${FEED.d}/`, pro), Lifecycle);
    expect(body.states).toEqual([
      { seq: 1, state: 'proposed', at: '2025-01-01T00:00:00.000Z', reason: 'imported' },
      { seq: 2, state: 'active', at: '2025-01-02T00:00:00.000Z', reason: 'listed' },
      { seq: 3, state: 'closed', at: '2025-03-30T00:00:00.000Z', reason: 'closed' },
    ]);
  });

  it('probabilities are published to 6 decimals and percentages to 2, on every route', async () => {
    const stats = ok(await get(server, '/api/events/service_stats/'), ServiceStats);
    const c = stats.calibration.find((r: any) => r.forecaster === 'consensus');
    expect(c).toMatchObject({ brier: 0.181235, accuracy_pct: 66.67 });
    const cal = ok(await get(server, '/api/events/accuracy/'), CalibrationReport);
    expect(cal.forecasters.find((r: any) => r.forecaster === 'consensus' && r.mode === 'headline')).toMatchObject({ brier: 0.181235, accuracy_pct: 66.67 });
    const acc = ok(await get(server, '/api/predictions/accuracy'), AccuracySummary);
    expect(acc.accuracy_pct).toBe(73.68); // 100 × 14 / 19
    for (const p of [
      '/api/predictions/accuracy', '/api/predictions/accuracy/politics', '/api/events/accuracy/', '/api/events/service_stats/',
      '/api/predictions/resolved?limit=500', '/api/predictions/lang/en?limit=500', '/api/events/lang/en/?limit=500',
      '/api/predictions/edges/?min_edge=0&include_stale=true', `/api/predictions/${FEED.a}`, `/api/predictions/${FEED.resolved}`,
      `/api/predictions/lifecycle/${FEED.a}/`,
    ]) {
      const got = await get(server, p, pro);
      expect(got.res.status, p).toBe(200);
      // market_age_hours and horizon days are not probabilities: the fixture's are whole numbers
      expect(maxDecimals(got.body), p).toBeLessThanOrEqual(6);
    }
    const pcts = [acc.accuracy_pct, acc.market_accuracy_pct, ...acc.by_category.map((b: any) => b.accuracy_pct)];
    expect(pcts.every((v: any) => v === null || maxDecimals(v) <= 2)).toBe(true);
  });
});
