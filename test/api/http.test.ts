/**
 * HTTP integration: a real server on 127.0.0.1:0, real fetch, fixture snapshots as real Parquet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATEGORIES } from '../../pipeline/warehouse/tables.ts';
import { silentLogger } from '../../api/logging/logger.ts';
import { startServer, type ServerHandle } from '../../api/server.ts';
import { fixtureData, publish, resolvedRows, tempDataDir, writeSnapshot } from './fixtures.ts';
import { newKey } from './helpers.ts';

let server: ServerHandle;
let cleanup: () => Promise<void>;
let enterpriseKey = '';
const SNAP = 'r20250402T000000Z-aa01';

async function get(path: string, init?: RequestInit): Promise<{ res: Response; body: any }> {
  const res = await fetch(server.url + path, init);
  const text = await res.text();
  let body: any = text;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // leave as text
  }
  return { res, body };
}

function expectProblem(res: Response, body: any, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(body).toMatchObject({ status, code, type: `urn:quorum:problem:${code}` });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(JSON.stringify(body)).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack frames
  expect(body.stack).toBeUndefined();
}

beforeAll(async () => {
  const tmp = await tempDataDir();
  cleanup = tmp.cleanup;
  enterpriseKey = newKey(tmp.dir, 'enterprise').key; // before the server starts: it reads the key file then
  await writeSnapshot(tmp.dir, SNAP, fixtureData(1));
  await publish(tmp.dir, SNAP);
  server = await startServer({
    port: 0, host: '127.0.0.1', dataDir: tmp.dir, logger: silentLogger(), pollMs: 0,
    limits: { anonymousPerHour: null }, // the suite makes more than 100 anonymous requests
  });
});

afterAll(async () => {
  await server?.close();
  await cleanup?.();
});

describe('common conventions', () => {
  it('healthz and readyz', async () => {
    const h = await get('/healthz');
    expect(h.res.status).toBe(200);
    expect(h.body).toEqual({ status: 'ok' });
    const r = await get('/readyz/');
    expect(r.res.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'ready', snapshot: SNAP, as_of: '2025-04-02T00:00:00.000Z' });
    expect(r.res.headers.get('x-snapshot')).toBe(SNAP);
  });

  it('sets X-Snapshot, API-Version, JSON content type and echoes X-Request-Id', async () => {
    const { res, body } = await get('/api/predictions/accuracy', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-snapshot')).toBe(SNAP);
    expect(res.headers.get('api-version')).toBe('1');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    expect(body.as_of).toBe('2025-04-02T00:00:00.000Z');
    const bad = await get('/healthz', { headers: { 'X-Request-Id': 'bad id\twith spaces' } });
    expect(bad.res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('trailing slash is optional on every endpoint', async () => {
    for (const p of ['/api/predictions/accuracy', '/api/predictions/accuracy/politics', '/api/events/accuracy', '/api/predictions/resolved']) {
      const a = await get(p);
      const b = await get(`${p}/`);
      expect(a.res.status, p).toBe(200);
      expect(b.res.status, `${p}/`).toBe(200);
      expect(b.body).toEqual(a.body);
    }
  });

  it('unknown route → 404 problem', async () => {
    const { res, body } = await get('/api/nope?x=1');
    expectProblem(res, body, 404, 'not_found');
    expect(body.instance).toBe('/api/nope');
    const top = await get('/nope');
    expectProblem(top.res, top.body, 404, 'not_found');
  });

  it('wrong method → 405 problem with Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const { res, body } = await get('/api/predictions/accuracy/', { method, body: method === 'DELETE' ? undefined : '{"x":' });
      expectProblem(res, body, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    }
    const head = await fetch(`${server.url}/api/predictions/accuracy`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-snapshot')).toBe(SNAP);
    const opt = await fetch(`${server.url}/api/predictions/resolved`, { method: 'OPTIONS' });
    expect(opt.status).toBe(204);
    expect(opt.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('malformed percent-encoding in the path is a 400 problem, not a crash', async () => {
    const { res, body } = await get('/api/predictions/accuracy/%E0%A4%A');
    expect([400, 404]).toContain(res.status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(body.stack).toBeUndefined();
  });
});

describe('query parameters in bracket form', () => {
  it('mode[]=, category[]=, filter[mode]= are a 400 naming the plain form, never ignored as if applied (QA: /api/predictions/resolved?category[]=politics listed every category)', async () => {
    for (const q of ['category[]=politics', 'category[0]=politics', 'filter[category]=politics', 'limit]=2']) {
      const r = await get(`/api/predictions/resolved?${q}`);
      expect(r.res.status, q).toBe(400);
      expect(r.body, q).toMatchObject({ code: 'invalid_parameter', parameter: q.split('=')[0] });
    }
    expect((await get('/api/predictions/resolved?category[]=politics')).body.detail).toContain('category=…');
    expect((await get('/api/predictions/resolved?category=politics')).res.status).toBe(200);
  });
});

describe('a parameter name written in another case or with dashes', () => {
  it('is a 400 naming the name meant, never ignored as if applied (outside test: /api/track-records/?Kind=pollster listed every source)', async () => {
    for (const [q, meant] of [['Category=politics', 'category'], ['LIMIT=1', 'limit'], ['Cursor=x', 'cursor'], ['Mode=blind', 'mode']]) {
      const r = await get(`/api/predictions/resolved?${q}`);
      expectProblem(r.res, r.body, 400, 'invalid_parameter');
      expect(r.body.parameter, q).toBe(q!.split('=')[0]);
      expect(r.body.detail, q).toContain(`did you mean '${meant}'?`);
    }
    // A foreign filter's name is refused likewise, and an unknown name still ignored.
    expect((await get('/api/predictions/resolved?Made-Since=2025-01-01')).body.detail).toContain("did you mean 'made_since'?");
    expect((await get('/api/predictions/resolved?Utm_Source=x')).res.status).toBe(200);
  });
});

describe('a filter\'s name given to a route that does not read it', () => {
  it('is a 400 on the account, webhook and stream routes too, naming the route\'s own parameters (QA: /api/stream/?venue=polymarket streamed every venue\'s events, /api/webhooks/?status=active listed the disabled subscriptions, /api/usage/?since= answered as if filtered, each with 200)', async () => {
    const h = { headers: { 'X-API-Key': enterpriseKey } };
    for (const [path, name] of [['/api/usage/?since=2025-01-01', 'since'], ['/api/webhooks/?status=active', 'status'],
      ['/api/webhooks/wh_0123456789abcdef/deliveries?status=failed', 'status'], ['/api/stream/?venue=polymarket', 'venue'],
      ['/api/stream/?mode=blind', 'mode']]) {
      const r = await get(path!, h);
      expectProblem(r.res, r.body, 400, 'invalid_parameter');
      expect(r.body.parameter, path).toBe(name);
      expect(r.body.detail, path).toContain(`has no '${name}' filter`);
    }
    // the routes' own parameters, empty values and unknown names are read as before
    expect((await get('/api/usage/?days=3&since=&utm_source=mail', h)).res.status).toBe(200);
    expect((await get('/api/webhooks/?utm_source=mail', h)).res.status).toBe(200);
  });
});

describe('GET /api/predictions/accuracy', () => {
  it('?category= is a 400 pointing to the category\'s own summary, not the all-categories one as if filtered (QA)', async () => {
    const r = await get('/api/predictions/accuracy?category=politics');
    expect(r.res.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'invalid_parameter', parameter: 'category' });
    expect(r.body.detail).toContain('/api/predictions/accuracy/{category}');
    expect((await get('/api/predictions/accuracy?category=')).res.status).toBe(200); // empty: left out
  });

  it('overall summary with breakdowns and market comparison', async () => {
    const { res, body } = await get('/api/predictions/accuracy');
    expect(res.status).toBe(200);
    expect(body.scope).toBe('all');
    expect(body.headline_modes).toEqual(['augmented', 'informed', 'blind']);
    expect(body.total_resolved).toBe(20);
    expect(body.accuracy_pct).toBe(73.68); // 100 × 14 / 19, published to 2 decimals
    expect(body.n_directional).toBe(19);
    expect(body.n_correct).toBe(14);
    expect(body.n_no_direction).toBe(1);
    // the AI over every resolved question, apart from the comparison
    expect(body.resolved_brier).toBe(0.18);
    expect(body.resolved_log_loss).toBeCloseTo(0.54, 10);
    // AI versus market: both sides on the same 18 questions (ai_vs_market), never 0.18 (20
    // questions) beside the market's 18
    expect(body.brier).toEqual({ ai: 0.17, market: 0.21, n: 18 });
    expect(body.log_loss).toEqual({ ai: 0.5, market: 0.6, n: 18 });
    expect(body.ai_vs_market).toMatchObject({ n: 18, ai_brier: 0.17, market_brier: 0.21, diff_sd: 0.1 });
    expect(body.ai_vs_market.skill).toBe(0.190476); // 1 - 0.17 / 0.21 to 6 decimals
    expect(body.ai_vs_market.diff_mean).toBeCloseTo(-0.04, 10);
    expect(body.ai_vs_market.diff_ci95[0]).toBeCloseTo(-0.09, 10);
    expect(body.ai_vs_market.diff_ci95[1]).toBeCloseTo(0.01, 10);

    // ordering by the known bucket orders of pipeline/warehouse/tables.ts
    expect(body.by_category.map((x: any) => x.category)).toEqual(['politics', 'crypto']);
    expect(body.by_category.map((x: any) => x.key)).toEqual(['politics', 'crypto']);
    expect(body.by_domain.map((x: any) => x.domain)).toEqual(['crypto', 'policy']);
    expect(body.by_horizon.map((x: any) => x.horizon)).toEqual(['0-7', '8-30']);
    expect(body.by_tier.map((x: any) => x.tier)).toEqual(['low', 'medium', 'high']);
    expect(body.by_model.map((x: any) => x.model)).toEqual(['model-a', 'model-b']);
    expect(body.by_mode.map((x: any) => x.mode)).toEqual(['blind', 'informed', 'augmented']);

    const politics = body.by_category[0];
    expect(politics).toMatchObject({
      category: 'politics', key: 'politics', n: 12, brier: 0.2, n_directional: 11, n_correct: 8,
    });
    expect(politics.accuracy_pct).toBe(72.73); // 100 × 8 / 11 to 2 decimals
    // the bucket's comparison: the AI and the market on the same 11 questions (the AI's 0.19 there,
    // not its 0.2 over all 12), with the shape of ai_vs_market
    expect(politics.vs_market).toEqual({
      n: 11, ai_brier: 0.19, market_brier: 0.22, skill: 0.136364, diff_mean: -0.03, diff_sd: 0.1,
      diff_ci95: [-0.08, 0.02], ai_log_loss: 0.57, market_log_loss: 0.66, n_consensus: 12,
      excluded: { no_market: 0, stale_market: 1, no_direction: 0 }, n_directional: 11,
      ai_accuracy_pct: 72.73, market_accuracy_pct: 63.64,
    });
    expect(politics).not.toHaveProperty('market_brier');
    expect(body.by_horizon[0].vs_market).toMatchObject({ n: 13, ai_brier: 0.16, market_brier: 0.17 });
    // no comparison where it is not like for like
    expect(body.by_tier[0]).not.toHaveProperty('vs_market');
    expect(body.by_model[0]).not.toHaveProperty('vs_market');
    // mode items: the consensus of that mode against its comparators
    expect(body.by_mode.find((x: any) => x.mode === 'blind')).toMatchObject({ n: 20, brier: 0.23 });
    expect(body.by_mode.find((x: any) => x.mode === 'blind').vs_market).toMatchObject({ n: 18, ai_brier: 0.225, market_brier: 0.215 });
  });

  it('per category, case-insensitive, canonical scope', async () => {
    const { res, body } = await get('/api/predictions/accuracy/POLITICS');
    expect(res.status).toBe(200);
    expect(body.scope).toBe('politics');
    expect(body.total_resolved).toBe(12);
    expect(body.brier).toEqual({ ai: 0.2, market: 0.22, n: 1 });
    expect(body.by_category[0].vs_market).toMatchObject({ n: 11, ai_brier: 0.19 });
    expect(body.ai_vs_market).toMatchObject({ n: 1, diff_ci95: null, diff_sd: null });
    expect(body.by_category).toHaveLength(1);
    expect(body.by_horizon).toEqual([]);
    expect(res.headers.get('x-snapshot')).toBe(SNAP);
  });

  it('a valid category without resolved forecasts: zeros and nulls, not an error', async () => {
    const { res, body } = await get('/api/predictions/accuracy/science');
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ scope: 'science', total_resolved: 0, accuracy_pct: null, brier: { ai: null, market: null, n: 0 } });
    expect(body.ai_vs_market).toMatchObject({ n: 0, ai_brier: null, diff_ci95: null });
    expect(body.by_category).toEqual([]);
  });

  it('unknown category → 404 problem naming the nine', async () => {
    for (const bad of ['nope', "politics' OR '1'='1", '..%2F..%2Fetc%2Fpasswd', '%00', 'politics;DROP TABLE accuracy', 'a'.repeat(300)]) {
      const { res, body } = await get(`/api/predictions/accuracy/${bad}`);
      expectProblem(res, body, 404, 'not_found');
      expect(body.allowed).toEqual([...CATEGORIES]);
      for (const c of CATEGORIES) expect(body.detail).toContain(c);
      expect(body.detail.length).toBeLessThan(400);
    }
    expect((await get('/api/predictions/accuracy')).res.status).toBe(200);
  });
});

describe('GET /api/events/accuracy/', () => {
  it('a filter is a 400 naming where the filtered figures are, not the whole summary as if filtered (last notes\' list)', async () => {
    // Every (forecaster, mode) is one entry and each names its mode; ?mode=blind, ?category=…
    // or ?since=… were ignored (unknown parameters) and answered every entry with 200.
    for (const [name, value] of [['mode', 'blind'], ['forecaster', 'model-a'], ['model', 'model-a'], ['category', 'politics'], ['domain', 'policy'], ['horizon', '8-30'], ['since', '2025-01-01'], ['rounds', 'all'], ['venue', 'polymarket']]) {
      const r = await get(`/api/events/accuracy/?${name}=${value}`);
      expect(r.res.status, name).toBe(400);
      expect(r.body, name).toMatchObject({ code: 'invalid_parameter', parameter: name });
      expect(r.body.detail, name).toContain('/api/leaderboard/');
    }
    expect((await get('/api/events/accuracy/?mode=')).res.status).toBe(200); // empty: left out
  });

  it('calibration summary per forecaster and mode', async () => {
    const { res, body } = await get('/api/events/accuracy/');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-snapshot')).toBe(SNAP);
    expect(body.as_of).toBe('2025-04-02T00:00:00.000Z');
    const keys = body.forecasters.map((f: any) => `${f.kind}:${f.forecaster}:${f.mode}`);
    expect(keys).toEqual([
      'consensus:consensus:headline',
      'consensus:consensus:augmented',
      'model:model-a:blind',
      'model:model-a:augmented',
      'market:market:headline',
      'market:market:blind',
      'market:market:informed',
      'market:market:augmented',
    ]);
    expect(body.count).toBe(keys.length);
    expect(body.next_cursor).toBeNull();

    const cons = body.forecasters[0];
    expect(cons).toMatchObject({
      n: 18, brier: 0.18, accuracy_pct: 70, ece: 0.05, reliability: 0.01, resolution: 0.08, uncertainty: 0.25,
      base_rate: 0.5, n_directional: 19, n_correct: 14, n_no_direction: 1,
    });
    expect(cons.by_tier.map((t: any) => t.tier)).toEqual(['low', 'medium', 'high']);
    expect(cons.by_domain.map((t: any) => t.domain)).toEqual(['crypto', 'policy']);
    expect(cons.bins).toHaveLength(10);
    expect(cons.bins[0]).toEqual({ bin: 0, bin_lo: 0, bin_hi: 0.1, n: 2, mean_p: 0.05, observed: 0, wilson_lo: 0, wilson_hi: 0.2 });
    expect(cons.bins[3]).toEqual({ bin: 3, bin_lo: 0.3, bin_hi: 0.4, n: 0, mean_p: null, observed: null, wilson_lo: null, wilson_hi: null });

    const modelA = body.forecasters.find((f: any) => f.forecaster === 'model-a' && f.mode === 'augmented');
    expect(modelA.by_tier.map((t: any) => [t.tier, t.n])).toEqual([['low', 10], ['high', 10]]);
    expect(modelA.bins).toHaveLength(10);
    // a forecaster/mode known only from the accuracy table: no calibration figures
    const modelABlind = body.forecasters.find((f: any) => f.forecaster === 'model-a' && f.mode === 'blind');
    expect(modelABlind).toMatchObject({ n: 20, ece: null, bins: [] });
  });
});

describe('GET /api/predictions/resolved', () => {
  const all = resolvedRows(1);
  const expectedOrder = [...all]
    .sort((a, b) => {
      const ra = a.resolved_at as string | null;
      const rb = b.resolved_at as string | null;
      if (ra !== rb) {
        if (ra === null) return 1;
        if (rb === null) return -1;
        return ra < rb ? 1 : -1;
      }
      return (a.question_id as string) < (b.question_id as string) ? -1 : 1;
    })
    .map((r) => r.question_id);

  it('first page: shape and values', async () => {
    const { res, body } = await get('/api/predictions/resolved');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-snapshot')).toBe(SNAP);
    expect(body.count).toBe(23);
    expect(body.total).toBe(23);
    expect(body.next_cursor).toBeNull();
    expect(body.as_of).toBe('2025-04-02T00:00:00.000Z');
    expect(body.predictions.map((p: any) => p.question_id)).toEqual(expectedOrder);
    const q21 = body.predictions[0];
    expect(q21).toEqual({
      question_id: 'q:21', venue: 'polymarket', venue_market_id: 'm-21', title: 'Question 21', category: 'crypto',
      domain: 'crypto', mode: 'augmented', consensus: 0.6, consensus_median: 0.62, consensus_logit_mean: 0.61,
      n_models: 4, disagreement: { sd: 0.05, range: 0.12, sd_logit: 0.21 }, market_probability: 0.55,
      market_observed_at: '2025-01-31T12:00:00.000Z', market_stale: false, market_status: 'ok', market_age_days: 0.5, outcome: 1, ai_error: 0.16,
      market_error: 0.2025, forecast_at: '2025-02-01T00:00:00.000Z', resolved_at: '2025-03-28T12:00:00.000Z',
      horizon_bucket: '31-90',
      source: { slug: 'fred', name: 'FRED', url: 'https://fred.stlouisfed.org/', excerpt: 'excerpt 21', retrieved_at: '2025-04-01T00:00:00.000Z' },
      providers: ['simulated'],
    });
    const q7 = body.predictions.find((p: any) => p.question_id === 'q:7');
    expect(q7.market_probability).toBeNull();
    expect(q7.market_error).toBeNull();
    expect(body.predictions.find((p: any) => p.question_id === 'q:3').providers).toEqual(['openai', 'simulated']);
    expect(body.predictions.find((p: any) => p.question_id === 'q:5').title).toBe('Will "quotes" and ünïcødé — survive?');
    expect(body.predictions.at(-1)).toMatchObject({ question_id: 'q:22', resolved_at: null });
  });

  for (const limit of [1, 2, 3, 5, 7, 22, 23]) {
    it(`walks every page with limit=${limit}: no duplicates, none missing, stable order`, async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = `/api/predictions/resolved?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const { res, body } = await get(q);
        expect(res.status).toBe(200);
        expect(body.count).toBe(body.predictions.length);
        expect(body.count).toBeLessThanOrEqual(limit);
        expect(body.total).toBe(23);
        seen.push(...body.predictions.map((p: any) => p.question_id));
        cursor = body.next_cursor;
        if (cursor !== null) expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
        pages++;
        expect(pages).toBeLessThan(50);
      } while (cursor !== null);
      expect(seen).toEqual(expectedOrder);
      expect(pages).toBe(Math.ceil(23 / limit));
    });
  }

  it('filters by category (case-insensitive) and venue, and paginates filtered', async () => {
    const { body } = await get('/api/predictions/resolved?category=Politics&venue=kalshi&limit=2');
    const expected = expectedOrder.filter((id) => {
      const r = all.find((x) => x.question_id === id)!;
      return r.category === 'politics' && r.venue === 'kalshi';
    });
    expect(body.total).toBe(expected.length);
    const seen = body.predictions.map((p: any) => p.question_id);
    let cursor = body.next_cursor;
    while (cursor) {
      const next = await get(`/api/predictions/resolved?category=politics&venue=kalshi&limit=2&cursor=${cursor}`);
      seen.push(...next.body.predictions.map((p: any) => p.question_id));
      cursor = next.body.next_cursor;
    }
    expect(seen).toEqual(expected);
  });

  it('ignores unknown query parameters; empty values mean absent', async () => {
    const { res, body } = await get('/api/predictions/resolved?foo=bar&limit=&venue=&category=');
    expect(res.status).toBe(200);
    expect(body.count).toBe(23);
  });

  it('bad limits → 400 invalid_parameter naming the parameter and range', async () => {
    for (const bad of ['0', '-1', '501', 'abc', '1e9', '10; DROP TABLE x', '1.5', ' 5', '0x10', '99999999999999999999']) {
      const { res, body } = await get(`/api/predictions/resolved?limit=${encodeURIComponent(bad)}`);
      expectProblem(res, body, 400, 'invalid_parameter');
      expect(body.parameter).toBe('limit');
      expect(body.allowed).toEqual({ min: 1, max: 500 });
      expect(body.detail).toMatch(/1 to 500/);
    }
    const twice = await get('/api/predictions/resolved?limit=5&limit=6');
    expectProblem(twice.res, twice.body, 400, 'invalid_parameter');
    expect((await get('/api/predictions/resolved?limit=500')).res.status).toBe(200);
  });

  it('malformed or tampered cursors → 400', async () => {
    const valid = (await get('/api/predictions/resolved?limit=2')).body.next_cursor as string;
    const forged = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const bad = [
      'not a cursor',
      '!!!!',
      `${valid}=`,
      valid.slice(0, -3),
      Buffer.from('{"v":1').toString('base64url'),
      forged({ v: 2, r: '1', q: 'q:1' }),
      forged({ v: 1, r: "1 OR 1=1", q: 'q:1' }),
      forged({ v: 1, r: '1', q: 'q:1', extra: true }),
      forged({ v: 1, r: '99999999999999999999', q: 'q:1' }),
      forged([1, 2]),
      "' OR 1=1 --",
      '../../../../etc/passwd',
    ];
    for (const c of bad) {
      const { res, body } = await get(`/api/predictions/resolved?cursor=${encodeURIComponent(c)}`);
      expectProblem(res, body, 400, 'invalid_parameter');
      expect(body.parameter).toBe('cursor');
    }
    // a well-formed cursor with a hostile question_id is just a position: bound, never spliced
    const hostile = forged({ v: 1, r: null, q: "'; DROP TABLE resolved_predictions; --" });
    const ok = await get(`/api/predictions/resolved?cursor=${hostile}`);
    expect(ok.res.status).toBe(200);
    expect((await get('/api/predictions/resolved')).body.total).toBe(23);
  });

  it('SQL injection and path traversal in filters → 400 or empty, and the server keeps serving', async () => {
    const cat = await get(`/api/predictions/resolved?category=${encodeURIComponent("politics' OR '1'='1")}`);
    expectProblem(cat.res, cat.body, 400, 'invalid_parameter');
    expect(cat.body.parameter).toBe('category');
    expect(cat.body.allowed).toEqual([...CATEGORIES]);
    const trav = await get(`/api/predictions/resolved?category=${encodeURIComponent('../../etc/passwd')}`);
    expectProblem(trav.res, trav.body, 400, 'invalid_parameter');

    // an unknown venue is a 400 listing the venues, like an unknown category
    for (const v of ["kalshi' OR '1'='1", "x'; DROP TABLE resolved_predictions; --", '../../etc/passwd', '%00', '"); SELECT 1; --']) {
      const got = await get(`/api/predictions/resolved?venue=${encodeURIComponent(v)}`);
      expectProblem(got.res, got.body, 400, 'invalid_parameter');
      expect(got.body.parameter).toBe('venue');
    }
    const long = await get(`/api/predictions/resolved?venue=${'x'.repeat(1000)}`);
    expectProblem(long.res, long.body, 400, 'invalid_parameter');

    const after = await get('/api/predictions/resolved');
    expect(after.body.total).toBe(23);
    expect((await get('/healthz')).res.status).toBe(200);
  });
});
