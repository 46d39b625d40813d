/**
 * Issue 9 §4 and §6 on the bundled ForecastBench sample: the sample imported into a fresh warehouse,
 * a pipeline run dated at the first round's freeze time (the simulator forecasts the first eight
 * open questions in English and French), then one at the second round's, when four of them have
 * resolved and are scored. The API's detail of a resolved question then shows every model's scored
 * forecast in every mode with its scores and both languages, and the summaries name the simulator.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { closeDuckdb } from '../../pipeline/warehouse/duckdb.ts';
import type { ServerHandle } from '../../api/server.ts';
import { auth, get, newKey, serve } from './helpers.ts';

const SAMPLE = path.resolve(import.meta.dirname, '..', '..', 'data', 'sample', 'forecastbench');
const dir = mkdtempSync(path.join(tmpdir(), 'quorum-sample-resolved-'));
let server: ServerHandle;
let pro: RequestInit;

beforeAll(async () => {
  const config = loadConfig({
    QUORUM_DATA_DIR: dir, QUORUM_SAMPLE_DIR: SAMPLE, QUORUM_VENUES: 'none', QUORUM_MAX_QUESTIONS: '8',
    QUORUM_LANGS: 'en,fr', LOG_LEVEL: 'silent',
  });
  const logger = createLogger('silent');
  await importForecastBench(config, SAMPLE);
  for (const asOf of ['2025-10-16T00:00:00Z', '2026-03-06T00:00:00Z']) {
    const run = await runPipeline({ config, logger, asOf: new Date(asOf) });
    expect(run.status, run.error ?? '').toBe('completed');
  }
  await closeDuckdb();
  server = await serve(dir);
  pro = auth.x(newKey(dir, 'pro').key);
}, 180_000);

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the bundled sample: a resolved question in detail', () => {
  it('every model\'s scored forecast in every mode, with scores and its reasoning in both languages', async () => {
    const resolved = await get(server, '/api/predictions/resolved?limit=500');
    expect(resolved.res.status).toBe(200);
    const item = resolved.body.predictions.find((p: any) => p.n_models === 4);
    expect(item, 'a resolved question scored with four models').toBeDefined();

    const { res, body } = await get(server, `/api/predictions/${item.question_id}`, pro);
    expect(res.status).toBe(200);
    expect(body.question.status).toBe('resolved');
    expect(body.modes.map((m: any) => m.mode)).toEqual(['blind', 'informed', 'augmented']);
    for (const mode of body.modes) {
      expect(mode.n_models).toBe(4);
      expect(mode.models, mode.mode).toHaveLength(4);
      expect(mode.scores).toMatchObject({ outcome: item.outcome, direction: expect.stringMatching(/^(correct|wrong|none)$/) });
      expect(typeof mode.scores.brier).toBe('number');
      for (const m of mode.models) {
        expect(m.provider).toBe('simulated');
        expect(m.scores.brier).toBeCloseTo((m.probability - item.outcome) ** 2, 5);
        expect(m.texts.map((t: any) => t.lang)).toEqual(['en', 'fr']);
        expect(m.texts[0]).toMatchObject({ translation_of: null, reasoning: expect.any(String) });
        expect(m.texts[0].reasoning.length).toBeGreaterThan(0);
        expect(m.texts[1].translation_of).toBe('en');
      }
    }
    expect(body.langs).toEqual(['en', 'fr']);
    const headline = body.modes.find((m: any) => m.mode === body.headline.mode);
    expect(headline.consensus.mean).toBeCloseTo(item.consensus, 6);
    // the comparator beside it says when it was observed: the sample's price of the same freeze time,
    // so not stale; the detail's scores carry the same comparator
    expect(item.market_probability).toEqual(expect.any(Number));
    expect(item).toMatchObject({ market_observed_at: item.forecast_at, market_stale: false });
    expect(headline.scores).toMatchObject({ market_probability: item.market_probability, market_observed_at: item.forecast_at, market_stale: false });
    expect(Object.keys(body.market)).toEqual(['probability', 'observed_at', 'stale']);
  });

  it('the summaries say the forecasts are simulated', async () => {
    for (const p of ['/api/predictions/accuracy', '/api/events/accuracy/', '/api/events/service_stats/']) {
      const { res, body } = await get(server, p);
      expect(res.status, p).toBe(200);
      expect(body, p).toMatchObject({ providers: ['simulated'], simulated: true });
    }
  });
});
