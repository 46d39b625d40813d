/**
 * POST /api/probability/ and GET /api/probability/{request_id}: a real server on port 0, the real
 * openai SDK (the pipeline's runner) against the project's model simulator, real keys.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelsConfig, type ResolvedModel } from '../../pipeline/models/config.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import type { ServerHandle } from '../../api/server.ts';
import { expectProblem, fixtureDir, get, newKey, serve, type Got } from '../api/helpers.ts';
import { FEED, fixtureData, withFeeds } from '../api/fixtures.ts';

const future = new Date(Date.now() + 90 * 86_400_000).toISOString();
const good = (extra: Record<string, unknown> = {}) => ({
  question: 'Will the test event number one happen before the close date?',
  close_date: future,
  category: 'science',
  market_probability: 0.4,
  ...extra,
});

let sim: Simulator;
let models: ResolvedModel[];
let dir: string;
let cleanup: () => Promise<void>;
let server: ServerHandle;
let scoped: string;
let scoped2: string;
let plain: string;

function post(body: unknown, key: string | null, headers: Record<string, string> = {}, init: RequestInit = {}, s = server): Promise<Got> {
  return get(s, '/api/probability/', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  models = loadModelsConfig({ env: {}, simulatorUrl: sim.url, simulator: { priceInPerMtok: 1, priceOutPerMtok: 1 } });
  ({ dir, cleanup } = await fixtureDir(withFeeds(fixtureData(1))));
  server = await serve(dir, { publicBeta: true, probability: { models, timeoutMs: 3000, evidenceProviders: [] } });
  scoped = newKey(dir, 'pro', ['probability'], 'partner').key;
  scoped2 = newKey(dir, 'pro', ['probability'], 'partner 2').key;
  plain = newKey(dir, 'enterprise', [], 'no scope').key;
});
afterAll(async () => {
  await server?.close();
  await sim?.close();
  await cleanup?.();
});

describe('POST /api/probability/: access and validation', () => {
  it('401 without a key, 403 naming the scope without it', async () => {
    expectProblem(await post(good(), null), 401, 'unauthorized');
    const g = await post(good(), plain);
    expectProblem(g, 403, 'plan_required');
    expect(g.body.scope).toBe('probability');
  });

  it('every bad input is a 400 naming the field, an oversize body a 413', async () => {
    sim.resetStats();
    const cases: [unknown, string][] = [
      [good({ question: 'short?' }), 'question'],
      [good({ question: 'x'.repeat(1001) }), 'question'],
      [{ ...good(), question: undefined }, 'question'],
      [{ ...good(), close_date: undefined }, 'close_date'],
      [good({ close_date: 'next year' }), 'close_date'],
      [good({ close_date: '2001-01-01T00:00:00Z' }), 'close_date'],
      [good({ category: 'astrology' }), 'category'],
      [{ ...good(), category: undefined }, 'category'],
      [good({ mode: 'psychic' }), 'mode'],
      [good({ langs: ['English!'] }), 'langs.0'],
      [good({ langs: [] }), 'langs'],
      [good({ market: { venue: 'polymarket' } }), 'market.market_id'],
      [good({ market: { venue: 'polymarket', market_id: 'not-tracked' } }), 'market'],
      [good({ market_probability: 2 }), 'market_probability'],
      [good({ resolution_criteria: 42 }), 'resolution_criteria'],
      [good({ surprise: true }), 'surprise'],
      [[1, 2], 'body'],
    ];
    for (const [body, field] of cases) {
      const g = await post(body, scoped);
      expectProblem(g, 400, 'invalid_parameter');
      expect(g.body.parameter, JSON.stringify(body).slice(0, 80)).toBe(field);
    }
    expectProblem(await post('{"question": ', scoped), 400, 'invalid_body');
    expectProblem(await post(good({ resolution_criteria: 'y'.repeat(20_000) }), scoped), 413, 'payload_too_large');
    expectProblem(await post(good(), scoped, { 'idempotency-key': 'bad key with spaces' }), 400, 'invalid_parameter');
    expect(sim.stats().requests).toBe(0); // no model was asked
    const u = await get(server, '/api/usage/', { headers: { 'x-api-key': scoped } });
    expect(u.body.probability.used).toBe(0); // and no quota charged
  });
});

describe('POST /api/probability/: answers', () => {
  it('four models live, consensus, disagreement, calibration, stored privately for the key that asked', async () => {
    sim.resetStats();
    const g = await post(good({ langs: ['en', 'fr'] }), scoped);
    expect(g.res.status, g.text).toBe(200);
    const b = g.body;
    expect(sim.stats().requests).toBe(4);
    expect(b.n_models).toBe(4);
    expect(b.mode).toBe('informed'); // a market probability, no evidence provider
    expect(b.models).toHaveLength(4);
    for (const m of b.models) {
      expect(m.probability).toBeGreaterThanOrEqual(0);
      expect(m.calibrated_probability).toBeCloseTo(m.probability, 5); // no fit in this snapshot: identity
      expect(typeof m.reasoning).toBe('string');
      expect(Object.keys(m.translations)).toEqual(['fr']);
      expect(m.tokens_in).toBeGreaterThan(0);
      expect(m.cost_usd).toBeGreaterThan(0);
    }
    const ps: number[] = b.models.map((m: { probability: number }) => m.probability);
    const mean = ps.reduce((a, c) => a + c, 0) / 4;
    expect(b.consensus.mean).toBeCloseTo(mean, 6);
    expect(b.disagreement.range).toBeCloseTo(Math.max(...ps) - Math.min(...ps), 6);
    // identity calibration: the pooled probability is the logit mean
    expect(b.probability).toBeCloseTo(b.consensus.logit_mean, 6);
    expect(b.calibration).toMatchObject({ method: 'identity_no_fit', parameters: { extremize: 1 } });
    expect(b.request_id).toMatch(/^prq_[0-9a-f]{32}$/);

    const mine = await get(server, `/api/probability/${b.request_id}`, { headers: { 'x-api-key': scoped } });
    expect(mine.res.status).toBe(200);
    expect(mine.body.answer.probability).toBe(b.probability);
    expectProblem(await get(server, `/api/probability/${b.request_id}`, { headers: { 'x-api-key': scoped2 } }), 404, 'not_found');
    expectProblem(await get(server, `/api/probability/prq_${'0'.repeat(32)}`, { headers: { 'x-api-key': scoped } }), 404, 'not_found');
    // the calls are logged privately, as model_calls rows
    const logDir = path.join(dir, 'state', 'probability', 'model_calls');
    const [file] = await readdir(logDir);
    const lines = (await readFile(path.join(logDir, file!), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.filter((c) => c.question_id === `probability:${b.request_id}`)).toHaveLength(4);
    expect(lines[0].run_id).toMatch(/^probability-\d{4}-\d{2}-\d{2}$/);
  });

  it('market {venue, market_id} of a tracked question: its latest price goes into the informed prompt', async () => {
    const [venue, market_id] = FEED.a.split(':') as [string, string];
    const { market_probability: _omit, ...rest } = good({ question: 'Will the tracked market question resolve YES?' });
    const g = await post({ ...rest, market: { venue, market_id } }, scoped);
    expect(g.res.status, g.text).toBe(200);
    expect(g.body.mode).toBe('informed');
    expect(g.body.market).toMatchObject({ probability: 0.4, question_id: FEED.a });
    // no market at all: blind
    const { market_probability: _m, ...blind } = good({ question: 'Will the blind question without a market resolve YES?' });
    expect((await post(blind, scoped)).body.mode).toBe('blind');
  });

  it('answers within QUORUM_PROBABILITY_TIMEOUT_MS with the models that answered in time', async () => {
    sim.setFaults([{ kind: 'hang', model: 'sim-gpt' }, { kind: 'hang', model: 'sim-claude' }]);
    try {
      const t0 = Date.now();
      const g = await post(good({ question: 'Will two hanging models delay this answer past the deadline?' }), scoped);
      const ms = Date.now() - t0;
      expect(g.res.status, g.text).toBe(200);
      expect(ms).toBeLessThan(3000 + 300);
      expect(g.body.n_models).toBe(2);
      expect(g.body.failed.map((f: { error_kind: string }) => f.error_kind)).toEqual(['timeout', 'timeout']);
    } finally {
      sim.setFaults([]);
    }
  });

  it('partial failure: answers with the models that did, naming the failed ones', async () => {
    sim.setFaults([{ kind: 'server_error', model: 'sim-gpt' }]);
    try {
      const g = await post(good({ question: 'Will the partial failure case resolve YES eventually?' }), scoped);
      expect(g.res.status, g.text).toBe(200);
      expect(g.body.n_models).toBe(3);
      expect(g.body.failed).toEqual([expect.objectContaining({ model: 'sim-gpt', error_kind: 'server_error' })]);
    } finally {
      sim.setFaults([]);
    }
  });

  it('fewer than two answers: 503 models_unavailable with Retry-After', async () => {
    sim.setFaults([
      { kind: 'schema_violation', model: 'sim-gpt' },
      { kind: 'server_error', model: 'sim-claude' },
      { kind: 'malformed_json', model: 'sim-gemini' },
    ]);
    try {
      const g = await post(good({ question: 'Will three of four models fail on this question?' }), scoped);
      expectProblem(g, 503, 'models_unavailable');
      expect(Number(g.res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(g.body.n_models).toBe(1);
      expect(g.body.failed.map((f: { error_kind: string }) => f.error_kind).sort()).toEqual(['invalid_json', 'schema_violation', 'server_error']);
    } finally {
      sim.setFaults([]);
    }
  });

  it('Idempotency-Key: concurrent requests with one key make one set of calls and one answer', async () => {
    sim.resetStats();
    const body = good({ question: 'Will two concurrent retries be answered once?' });
    const [a, b] = await Promise.all([post(body, scoped, { 'idempotency-key': 'idem-c' }), post(body, scoped, { 'idempotency-key': 'idem-c' })]);
    expect([a.res.status, b.res.status]).toEqual([200, 200]);
    expect(a.body.request_id).toBe(b.body.request_id);
    expect(sim.stats().requests).toBe(4);
  });

  it('Idempotency-Key: the same body replays without a model call; another body is a 422', async () => {
    const body = good({ question: 'Will the idempotent question be answered only once?' });
    const first = await post(body, scoped, { 'idempotency-key': 'idem-1' });
    expect(first.res.status).toBe(200);
    sim.resetStats();
    const again = await post({ ...body }, scoped, { 'idempotency-key': 'idem-1' });
    expect(again.res.status).toBe(200);
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(sim.stats().requests).toBe(0);
    expectProblem(await post(good({ question: 'A different question under the same key?' }), scoped, { 'idempotency-key': 'idem-1' }), 422, 'idempotency_conflict');
    // another key's Idempotency-Key space is its own
    const other = await post(body, scoped2, { 'idempotency-key': 'idem-1' });
    expect(other.res.status).toBe(200);
    expect(other.body.request_id).not.toBe(first.body.request_id);
    // the record is on disk: a restarted server replays it too
    await server.close();
    server = await serve(dir, { publicBeta: true, probability: { models, timeoutMs: 3000, evidenceProviders: [] } });
    sim.resetStats();
    const replay = await post(body, scoped, { 'idempotency-key': 'idem-1' });
    expect(replay.body.request_id).toBe(first.body.request_id);
    expect(sim.stats().requests).toBe(0);
  });
});

describe('default wiring (quorum serve): models from the environment', () => {
  it('no models file: the bundled simulator starts on the first request and stops with the server', async () => {
    const d = await fixtureDir();
    const srv = await serve(d.dir); // no probability option: api/probability/setup.ts
    try {
      const k = newKey(d.dir, 'pro', ['probability']).key;
      const g = await post(good({ question: 'Will the default wiring answer with the simulator?' }), k, {}, {}, srv);
      expect(g.res.status, g.text).toBe(200);
      expect(g.body.models.map((m: { provider: string }) => m.provider)).toEqual(['simulated', 'simulated', 'simulated', 'simulated']);
    } finally {
      await srv.close();
      await d.cleanup();
    }
  });
});

describe('limits and cancellation', () => {
  let slowSim: Simulator;
  let slow: ServerHandle;
  let slowDir: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    slowSim = await startSimulator({ port: 0, latencyMs: 400 });
    slowDir = await fixtureDir();
    const m = loadModelsConfig({ env: {}, simulatorUrl: slowSim.url, simulator: { priceInPerMtok: 1, priceOutPerMtok: 1 } });
    slow = await serve(slowDir.dir, { probability: { models: m, timeoutMs: 20_000, evidenceProviders: [], budgetUsdPerDay: 0.0005 } });
  });
  afterAll(async () => {
    await slow?.close();
    await slowSim?.close();
    await slowDir?.cleanup();
  });

  it('at most 4 in flight per key (429 beyond); another key is not affected', async () => {
    const k = newKey(slowDir.dir, 'pro', ['probability']).key;
    const k2 = newKey(slowDir.dir, 'pro', ['probability']).key;
    const all = await Promise.all([
      ...Array.from({ length: 5 }, (_, i) => post(good({ question: `Will in-flight question ${i} resolve YES?` }), k, {}, {}, slow)),
      post(good(), k2, {}, {}, slow),
    ]);
    const statuses = all.slice(0, 5).map((g) => g.res.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expectProblem(all.slice(0, 5).find((g) => g.res.status === 429)!, 429, 'rate_limited');
    expect(all[5]!.res.status).toBe(200);
  });

  it('the daily budget: once spent, 429; usage of the spend is kept', async () => {
    const k = newKey(slowDir.dir, 'pro', ['probability']).key;
    let g = await post(good(), k, {}, {}, slow);
    expect(g.res.status).toBe(200);
    let cost = 0;
    let answered = 0;
    while (g.res.status === 200 && answered < 10) {
      cost += g.body.cost_usd;
      answered++;
      g = await post(good(), k, {}, {}, slow);
    }
    expectProblem(g, 429, 'rate_limited');
    expect(g.body.policy).toBe('probability_budget_usd');
    expect(g.body.spent_usd).toBeCloseTo(cost, 9);
    expect(cost).toBeGreaterThanOrEqual(0.0005);
    const u = await get(slow, '/api/usage/', { headers: { 'x-api-key': k } });
    expect(u.res.status).toBe(200);
    expect(u.body.probability.used).toBe(answered); // refused before the quota is charged
    expect(u.body.probability_cost_usd).toBeCloseTo(cost, 9);
    expect(u.body.probability_budget_usd).toBe(0.0005);
  });

  it('a client that disconnects cancels the model calls in flight', async () => {
    const k = newKey(slowDir.dir, 'pro', ['probability']).key;
    slowSim.setFaults([{ kind: 'hang', marker: 'HANG-ME' }]);
    slowSim.resetStats();
    try {
      const ac = new AbortController();
      const p = post(good({ question: 'Will this HANG-ME question ever be answered?' }), k, {}, { signal: ac.signal }, slow).catch((e: Error) => e);
      const t0 = Date.now();
      while (slowSim.stats().inFlight < 4 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
      expect(slowSim.stats().inFlight).toBe(4);
      ac.abort();
      expect(await p).toBeInstanceOf(Error);
      const t1 = Date.now();
      while (slowSim.stats().inFlight > 0 && Date.now() - t1 < 3000) await new Promise((r) => setTimeout(r, 20));
      expect(slowSim.stats().inFlight).toBe(0); // the simulator saw the connections go (deadline was ~20 s)
      expect(slowSim.stats().requests).toBe(4);
      // every call is in the private call log, the cancelled ones too
      const logDir = path.join(slowDir.dir, 'state', 'probability', 'model_calls');
      let cancelled: { model: string; status: string }[] = [];
      const t2 = Date.now();
      while (cancelled.length < 4 && Date.now() - t2 < 3000) {
        await new Promise((r) => setTimeout(r, 50));
        const text = await readFile(path.join(logDir, (await readdir(logDir))[0]!), 'utf8').catch(() => '');
        cancelled = text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((c) => /cancelled/.test(c.error_message ?? ''));
      }
      expect(cancelled.map((c) => c.model).sort()).toEqual(['sim-claude', 'sim-deepseek', 'sim-gemini', 'sim-gpt']);
      expect(cancelled.every((c) => c.status === 'failed')).toBe(true);
    } finally {
      slowSim.setFaults([]);
    }
  });
});
