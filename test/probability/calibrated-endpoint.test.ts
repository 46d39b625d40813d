/**
 * The calibrated path end to end: a synthetic history (the four simulated models, overconfident,
 * 300 resolved questions) derived by the project's sql/derive into a real published snapshot;
 * POST /api/probability/ applies that snapshot's calibration_models to the live answers, and
 * GET /api/events/accuracy/ publishes the out-of-sample check. The OpenAPI document describes the
 * request and the answer.
 *
 * The blind history is built for a fit that loses out of sample: the models are overconfident on the
 * earlier-resolved questions and underconfident on the later ones, so the fit of the earlier folds
 * makes the later ones worse than the raw consensus. Its check says so, and the endpoint then
 * answers with the raw consensus mean instead of applying it.
 */
import { cpSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { exportTables } from '../../pipeline/warehouse/derive.ts';
import { loadModelsConfig, type ResolvedModel } from '../../pipeline/models/config.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import type { ServerHandle } from '../../api/server.ts';
import { derive, forecast, insert, openDb, question, resolution, rows } from '../scoring/fixture.ts';
import { get, newKey, serve } from '../api/helpers.ts';
import { publish, tempDataDir } from '../api/fixtures.ts';

const SNAP = 'r20250601T000000Z-cal1';
const AS_OF = '2025-06-01T00:00:00.000Z';
const MODELS = ['sim-gpt', 'sim-claude', 'sim-gemini', 'sim-deepseek'];
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));
const logit = (p: number) => Math.log(Math.min(0.999, Math.max(0.001, p)) / (1 - Math.min(0.999, Math.max(0.001, p))));

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let sim: Simulator;
let models: ResolvedModel[];
let server: ServerHandle;
let dir: string;
let cleanup: () => Promise<void>;
let key: string;
let table: (sql: string) => Promise<Record<string, unknown>[]>;
let closeTables: () => void;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDataDir());
  const { conn, close } = await openDb();
  const truths = prng(5);
  const draws = prng(5005);
  const qs = Array.from({ length: 300 }, (_, i) => {
    const t = 0.05 + 0.9 * truths();
    return { id: `cal:${i}`, t, y: draws() < t ? 1 : 0, at: new Date(Date.UTC(2024, 0, 1) + i * 86_400_000 / 2).toISOString().slice(0, 19) };
  });
  await insert(conn, 'questions', qs.map((q) => question(q.id, { created_at: '2023-12-01' })));
  await insert(conn, 'forecasts', qs.flatMap((q) => MODELS.map((m, j) => forecast(q.id, m, 'informed', 'r1', '2023-12-15', sigmoid((1.6 + 0.2 * j) * logit(q.t))))));
  await insert(conn, 'forecasts', qs.flatMap((q, i) => MODELS.map((m) => forecast(q.id, m, 'blind', 'r1', '2023-12-15', sigmoid((i < 120 ? 2.5 : 0.3) * logit(q.t))))));
  await insert(conn, 'resolutions', qs.map((q) => resolution(q.id, q.y, q.at)));
  const tables = await derive(conn, new Date(AS_OF));
  const snapDir = path.join(dir, 'snapshots', SNAP);
  await mkdir(snapDir, { recursive: true });
  await exportTables(conn, tables, snapDir);
  close();
  await writeFile(
    path.join(snapDir, 'manifest.json'),
    JSON.stringify({ run_id: SNAP, as_of: AS_OF, created_at: AS_OF, tables, headline_modes: ['augmented', 'informed', 'blind'] }),
  );
  await publish(dir, SNAP);
  sim = await startSimulator({ port: 0 });
  models = loadModelsConfig({ env: {}, simulatorUrl: sim.url });
  server = await serve(dir, { probability: { models, evidenceProviders: [] } });
  key = newKey(dir, 'pro', ['probability']).key;
  const db = await DuckDBInstance.create(':memory:');
  const reader = await db.connect();
  table = (sql) => rows(reader, sql.replaceAll(/\bFROM (\w+)/g, (_m, t: string) => `FROM read_parquet('${path.join(snapDir, `${t}.parquet`)}')`));
  closeTables = () => {
    reader.closeSync();
    db.closeSync();
  };
}, 120_000);
afterAll(async () => {
  closeTables?.();
  await server?.close();
  await sim?.close();
  await cleanup?.();
});

/** POSTs a science question closing in 30 days, with `fields` added, with the test's key. */
function ask(fields: Record<string, unknown>) {
  return get(server, '/api/probability/', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({
      close_date: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10),
      category: 'science',
      ...fields,
    }),
  });
}

describe('the probability endpoint with a fitted calibration', () => {
  it('applies each model\'s Platt fit, pools in log-odds and extremizes, as the snapshot says', async () => {
    const g = await ask({ question: 'Will the calibrated endpoint give a sensible answer?', market_probability: 0.7 });
    expect(g.res.status, g.text).toBe(200);
    const b = g.body;
    expect(b.mode).toBe('informed');
    const fits = await table(`SELECT * FROM calibration_models WHERE mode = 'informed'`);
    const pool = fits.find((r) => r.kind === 'pool')!;
    expect(b.calibration).toMatchObject({
      method: 'platt_shrunk_logit_pool',
      applied: 'platt', // its out-of-sample check beats the raw consensus
      fitted_on: { resolved_questions: 300, snapshot: SNAP, as_of: AS_OF },
      out_of_sample: { n: Number(pool.oos_n), folds: 5 },
    });
    expect(b.calibration.parameters.extremize).toBe(Number(pool.extremize));
    expect(b.calibration.out_of_sample.brier_calibrated).toBeCloseTo(Number(pool.oos_brier_calibrated), 6);
    let z = 0;
    for (const m of b.models) {
      const fit = fits.find((r) => r.model === m.model)!;
      expect(fit.method).toBe('platt_shrunk');
      expect(Number(fit.slope)).toBeLessThan(0.8); // overconfident models are pulled in
      expect(b.calibration.parameters.models[m.model]).toMatchObject({ intercept: Number(fit.intercept), slope: Number(fit.slope), n_questions: 300 });
      expect(m.calibration_applied).toBe('platt');
      const c = Number(fit.intercept) + Number(fit.slope) * logit(m.probability);
      expect(m.calibrated_probability).toBeCloseTo(sigmoid(c), 6);
      z += c;
    }
    expect(b.probability).toBeCloseTo(sigmoid(Number(pool.extremize) * (z / b.models.length)), 6);
  });

  it('a fit whose out-of-sample check loses to the raw consensus is not applied: the raw mean, and the answer says so', async () => {
    const [pool] = await table(`SELECT * FROM calibration_models WHERE kind = 'pool' AND mode = 'blind'`);
    expect(pool!.method).toBe('platt');
    expect(Number(pool!.oos_brier_calibrated)).toBeGreaterThan(Number(pool!.oos_brier_raw)); // the fixture's premise
    const g = await ask({ question: 'Will the blind question be answered with a calibration that loses out of sample?' });
    expect(g.res.status, g.text).toBe(200);
    const b = g.body;
    expect(b.mode).toBe('blind'); // no market, no evidence provider
    expect(b.calibration).toMatchObject({
      method: 'platt_shrunk_logit_pool',
      applied: 'raw_mean',
      out_of_sample: { brier_raw: Number(Number(pool!.oos_brier_raw).toFixed(6)), brier_calibrated: Number(Number(pool!.oos_brier_calibrated).toFixed(6)) },
    });
    expect(b.probability).toBe(b.consensus.mean);
    for (const m of b.models) expect([m.calibrated_probability, m.calibration_applied]).toEqual([m.probability, 'identity']);
  });

  // Outside test: real models after a first start on the simulated sample (none of them in the
  // fit's history) each got the identity, yet the pool was extremized by the factor fitted on the
  // simulator's forecasts, and the answer said `applied: "platt"`.
  it('models none of which is in the fit\'s history: nothing fitted on other models applies (the identity, not extremized), and the answer says so', async () => {
    const [pool] = await table(`SELECT * FROM calibration_models WHERE kind = 'pool' AND mode = 'informed'`);
    const d = Number(pool!.extremize);
    expect(d).not.toBe(1); // the fixture's premise: extremizing would move the answer
    const asked = 'Will models new to the calibration be answered with what was fitted on them?';
    const renamed = (keep: string[]) => models.map((m) => (keep.includes(m.id) ? m : { ...m, id: `real-${m.id.slice(4)}` }));
    const { dir: copy, cleanup: dropCopy } = await tempDataDir();
    cpSync(dir, copy, { recursive: true });
    const answer = async (configured: ResolvedModel[]) => {
      const other = await serve(copy, { probability: { models: configured, evidenceProviders: [] } });
      try {
        const g = await get(other, '/api/probability/', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': newKey(copy, 'pro', ['probability']).key },
          body: JSON.stringify({ question: asked, close_date: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10), market_probability: 0.7 }),
        });
        expect(g.res.status, g.text).toBe(200);
        return g.body;
      } finally {
        await other.close();
      }
    };
    try {
      const none = await answer(renamed([]));
      expect(none.mode).toBe('informed');
      expect(none.calibration).toMatchObject({ method: 'platt_shrunk_logit_pool', applied: 'identity', parameters: { extremize: d } });
      expect(none.probability).toBe(none.consensus.logit_mean);
      for (const m of none.models) {
        expect(m.model).toMatch(/^real-/);
        expect([m.calibrated_probability, m.calibration_applied]).toEqual([m.probability, 'identity']);
        expect(none.calibration.parameters.models[m.model]).toEqual({ intercept: 0, slope: 1, method: 'identity_insufficient_data', n_questions: 0 });
      }
      // one model in the history: its own fit and the extremizing factor apply; the others the identity
      const fits = await table(`SELECT * FROM calibration_models WHERE mode = 'informed' AND model = 'sim-gpt'`);
      const mixed = await answer(renamed(['sim-gpt']));
      expect(mixed.calibration.applied).toBe('platt');
      let z = 0;
      for (const m of mixed.models) {
        const own = m.model === 'sim-gpt';
        expect(m.calibration_applied).toBe(own ? 'platt' : 'identity');
        const c = own ? Number(fits[0]!.intercept) + Number(fits[0]!.slope) * logit(m.probability) : logit(m.probability);
        if (!own) expect(m.calibrated_probability).toBe(m.probability);
        else expect(m.calibrated_probability).toBeCloseTo(sigmoid(c), 6);
        z += c;
      }
      expect(mixed.probability).toBeCloseTo(sigmoid(d * (z / mixed.models.length)), 6);
    } finally {
      await dropCopy();
    }
  });

  it('GET /api/events/accuracy/ publishes the out-of-sample check beside the raw consensus', async () => {
    const g = await get(server, '/api/events/accuracy/');
    expect(g.res.status).toBe(200);
    const [pool] = await table(`SELECT * FROM calibration_models WHERE kind = 'pool' AND mode = 'informed'`);
    const [blind] = await table(`SELECT * FROM calibration_models WHERE kind = 'pool' AND mode = 'blind'`);
    expect(g.body.recalibration).toEqual([
      expect.objectContaining({
        mode: 'blind',
        method: 'platt',
        out_of_sample: {
          brier_raw: Number(Number(blind!.oos_brier_raw).toFixed(6)),
          brier_calibrated: Number(Number(blind!.oos_brier_calibrated).toFixed(6)),
          n: 240,
          folds: 5,
        },
      }),
      expect.objectContaining({
        mode: 'informed',
        method: 'platt',
        n_questions: 300,
        out_of_sample: {
          brier_raw: Number(Number(pool!.oos_brier_raw).toFixed(6)),
          brier_calibrated: Number(Number(pool!.oos_brier_calibrated).toFixed(6)),
          n: 240,
          folds: 5,
        },
      }),
    ]);
    expect(g.body.recalibration[1].out_of_sample.brier_calibrated).toBeLessThan(g.body.recalibration[1].out_of_sample.brier_raw);
  });

  it('the OpenAPI document describes the request, the answer and the stored request', async () => {
    const doc = (await get(server, '/api/openapi.json')).body;
    const post = doc.paths['/api/probability/'].post;
    expect(post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/ProbabilityRequest');
    expect(post.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/ProbabilityAnswer');
    for (const s of ['400', '401', '403', '413', '422', '429', '503']) expect(post.responses[s], s).toBeDefined();
    const req = doc.components.schemas.ProbabilityRequest;
    expect(req.required.sort()).toEqual(['close_date', 'question']);
    expect(req.properties.question).toMatchObject({ minLength: 10, maxLength: 1000 });
    expect(req.properties.category.enum).toHaveLength(9);
    const answer = doc.components.schemas.ProbabilityAnswer;
    expect(answer.properties.calibration.properties.applied.enum).toEqual(['platt', 'raw_mean', 'identity']);
    // a model without its own fit gets the identity (calibration.ts fitFor), not the pool's fit:
    // the document said the pool was "used for a model without its own"
    const fits = answer.properties.calibration.properties.parameters.properties;
    expect(fits.pool.description).not.toMatch(/used for a model without its own/);
    expect(fits.pool.description).toMatch(/gets the identity/);
    expect(answer.properties.market.anyOf[0].properties.stale).toBeDefined();
    expect(doc.paths['/api/probability/{request_id}'].get).toBeDefined();
    expect(post.security).toEqual([{ ApiKeyHeader: [] }, { BearerAuth: [] }]); // /docs: Authorize, then try it
    expect(req.example.question.length).toBeGreaterThanOrEqual(10);
    expect(Object.keys(doc.components.securitySchemes ?? {}).length).toBeGreaterThan(0);
  });
});
