import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelsConfig, type ResolvedModel } from '../../pipeline/models/config.ts';
import { runForecasts, type ForecastTask, type ModelCallRow } from '../../pipeline/models/runner.ts';
import { startSimulator, type FaultRule, type Simulator } from '../../pipeline/simulator/server.ts';
import { MODES, RAW_TABLES, type Mode } from '../../pipeline/warehouse/tables.ts';

const asOf = new Date('2025-10-26T12:00:00Z');

function task(mode: Mode, n: number, titleExtra = ''): ForecastTask {
  return {
    mode,
    question: {
      question_id: `test:${n}`,
      title: `Will test event number ${n} happen by 2026?${titleExtra}`,
      description: `Background of event ${n}.`,
      resolution_criteria: 'Resolves YES if it happens.',
      url: null,
      created_at: new Date('2025-09-01T00:00:00Z'),
      close_time: new Date('2026-01-01T00:00:00Z'),
      category: 'science',
      domain: 'other',
    },
    market: {
      probability: 0.2 + (n % 7) / 10,
      observed_at: new Date('2025-10-26T10:00:00Z'),
      volume: 1000 * n,
      liquidity: 500,
      history: [{ observed_at: new Date('2025-10-25T10:00:00Z'), probability: 0.5 }],
    },
    evidence: mode === 'augmented' && n % 2 === 0
      ? [{ evidence_id: `ev-${n}`, title: 'A report', url: 'https://example.com/r', published_at: new Date('2025-10-20T00:00:00Z'), snippet: 'Something relevant.' }]
      : [],
  };
}

let sim: Simulator;
let models: ResolvedModel[];

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  models = loadModelsConfig({ env: {}, simulatorUrl: sim.url });
});
afterAll(() => sim.close());

/** Runs one task with one simulated model against a fresh fault set. */
async function runOne(faults: FaultRule[], opts: { callTimeoutMs?: number; titleExtra?: string } = {}) {
  sim.setFaults(faults);
  try {
    const t0 = Date.now();
    const out = await runForecasts({
      models: models.slice(0, 1),
      tasks: [task('informed', 1, opts.titleExtra ?? ' MARK')],
      runId: 'r-fault',
      asOf,
      callTimeoutMs: opts.callTimeoutMs ?? 10_000,
    });
    return { ...out, call: out.calls[0]!, elapsed: Date.now() - t0 };
  } finally {
    sim.setFaults([]);
  }
}

describe('runForecasts against the simulator (real HTTP, real openai SDK)', () => {
  it('produces a forecast and a call row per (task × model), in warehouse shape', async () => {
    const tasks = [1, 2].flatMap((n) => MODES.map((m) => task(m, n)));
    const seen: ModelCallRow[] = [];
    const { forecasts, calls } = await runForecasts({
      models,
      tasks,
      runId: 'run-1',
      asOf,
      onCall: (c, fs) => {
        seen.push(c);
        expect(fs).toHaveLength(1);
      },
    });
    expect(calls).toHaveLength(24);
    expect(forecasts).toHaveLength(24);
    expect(seen).toHaveLength(24);
    const fcols = Object.keys(RAW_TABLES.forecasts.columns).sort();
    const ccols = Object.keys(RAW_TABLES.model_calls.columns).sort();
    for (const c of calls) {
      expect(Object.keys(c).sort()).toEqual(ccols);
      expect(c).toMatchObject({ run_id: 'run-1', status: 'ok', error_kind: null, error_message: null, attempts: 1, provider: 'simulated', cost_usd: 0 });
      expect(c.started_at).toBeInstanceOf(Date);
      expect(c.tokens_in).toBeGreaterThan(100);
      expect(c.tokens_out).toBeGreaterThan(10);
      expect(c.latency_ms).toBeGreaterThanOrEqual(0);
    }
    for (const f of forecasts) {
      expect(Object.keys(f).sort()).toEqual(fcols);
      expect(f.created_at).toEqual(asOf);
      expect(f.provider).toBe('simulated');
      expect(f.lang).toBe('en');
      expect(f.prompt_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(f.probability).toBeGreaterThanOrEqual(0);
      expect(f.probability).toBeLessThanOrEqual(1);
      expect(f.reasoning).toMatch(/simulat/i);
      expect(Array.isArray(f.key_factors)).toBe(true);
    }
    // order: task order, then model order
    expect(calls.slice(0, 4).map((c) => c.model)).toEqual(['sim-gpt', 'sim-claude', 'sim-gemini', 'sim-deepseek']);
    expect(calls.map((c) => `${c.question_id}/${c.mode}`).filter((_, i) => i % 4 === 0)).toEqual(
      tasks.map((t) => `${t.question.question_id}/${t.mode}`),
    );
    // same prompt for the four models of a task; evidence ids only in augmented
    const aug2 = forecasts.filter((f) => f.question_id === 'test:2' && f.mode === 'augmented');
    expect(new Set(aug2.map((f) => f.prompt_hash)).size).toBe(1);
    expect(aug2.every((f) => f.evidence_ids.join() === 'ev-2')).toBe(true);
    expect(forecasts.filter((f) => f.mode !== 'augmented').every((f) => f.evidence_ids.length === 0)).toBe(true);
    // the models disagree a little; informed answers sit near the market
    const inf = forecasts.filter((f) => f.question_id === 'test:1' && f.mode === 'informed').map((f) => f.probability);
    expect(new Set(inf).size).toBeGreaterThan(1);
    for (const p of inf) expect(Math.abs(p - 0.3)).toBeLessThan(0.15);
  });

  it('is deterministic: the same run gives the same forecasts', async () => {
    const tasks = MODES.map((m) => task(m, 5));
    const a = await runForecasts({ models, tasks, runId: 'a', asOf });
    const b = await runForecasts({ models, tasks, runId: 'a', asOf });
    const strip = (fs: typeof a.forecasts) => fs.map(({ probability, reasoning, key_factors, prompt_hash }) => ({ probability, reasoning, key_factors, prompt_hash }));
    expect(strip(b.forecasts)).toEqual(strip(a.forecasts));
  });

  it.each([
    ['malformed_json', 'invalid_json'],
    ['schema_violation', 'schema_violation'],
    ['truncated', 'truncated'],
  ] as const)('%s: asked once more, then a failed call and no forecast', async (kind, errorKind) => {
    const before = sim.stats().faults[kind];
    const { forecasts, call } = await runOne([{ kind, marker: 'MARK' }]);
    expect(forecasts).toEqual([]);
    expect(call).toMatchObject({ status: 'failed', error_kind: errorKind, attempts: 2, provider: 'simulated' });
    expect(call.error_message).toBeTruthy();
    expect(call.tokens_in).toBeGreaterThan(0); // both replies were billed
    expect(sim.stats().faults[kind] - before).toBe(2);
  });

  it('faults on a fraction of requests: every call recorded, forecasts only for ok calls', async () => {
    sim.setFaults([{ kind: 'malformed_json', fraction: 0.5 }]);
    try {
      const tasks = Array.from({ length: 30 }, (_, i) => task('blind', i));
      const { forecasts, calls } = await runForecasts({ models, tasks, runId: 'frac', asOf });
      expect(calls).toHaveLength(120);
      const ok = calls.filter((c) => c.status === 'ok');
      const failed = calls.filter((c) => c.status === 'failed');
      expect(failed.length).toBeGreaterThan(0);
      expect(ok.length).toBeGreaterThan(0);
      expect(failed.every((c) => c.error_kind === 'invalid_json' && c.attempts === 2)).toBe(true);
      expect(forecasts).toHaveLength(ok.length);
      const okKeys = new Set(ok.map((c) => `${c.question_id}/${c.model}`));
      expect(forecasts.every((f) => okKeys.has(`${f.question_id}/${f.model}`))).toBe(true);
    } finally {
      sim.setFaults([]);
    }
  });

  it('a cut-off HTTP body (socket closed mid-body): asked once more, then truncated_body', async () => {
    const before = sim.stats().faults.truncated_body;
    const { forecasts, call } = await runOne([{ kind: 'truncated_body', marker: 'MARK' }]);
    expect(forecasts).toEqual([]);
    expect(call).toMatchObject({ status: 'failed', error_kind: 'truncated_body', attempts: 2, provider: 'simulated' });
    expect(sim.stats().faults.truncated_body - before).toBe(2);
  });

  it('a body that stalls after the headers is bounded by the deadline (timeout)', async () => {
    const { forecasts, call, elapsed } = await runOne([{ kind: 'stall', marker: 'MARK' }], { callTimeoutMs: 400 });
    expect(forecasts).toEqual([]);
    expect(call).toMatchObject({ status: 'failed', error_kind: 'timeout', attempts: 1 });
    expect(elapsed).toBeLessThan(1500);
  });

  it('a content fault that clears on the second ask gives a forecast (attempts 2)', async () => {
    const { forecasts, call } = await runOne([{ kind: 'malformed_json', marker: 'MARK', times: 1 }]);
    expect(call).toMatchObject({ status: 'ok', error_kind: null, attempts: 2 });
    expect(forecasts).toHaveLength(1);
  });

  it('429: the SDK retries twice (honouring a short Retry-After), then rate_limited', async () => {
    const { forecasts, call } = await runOne([{ kind: 'rate_limit', marker: 'MARK', retryAfterSeconds: 0.02 }]);
    expect(forecasts).toEqual([]);
    expect(call).toMatchObject({ status: 'failed', error_kind: 'rate_limited', attempts: 3, tokens_in: null, cost_usd: null });
  });

  it('429 with a Retry-After longer than the deadline fails at once instead of sleeping', async () => {
    const { call, elapsed } = await runOne([{ kind: 'rate_limit', marker: 'MARK', retryAfterSeconds: 3600 }], {
      callTimeoutMs: 3000,
    });
    expect(call).toMatchObject({ status: 'failed', error_kind: 'rate_limited', attempts: 1 });
    expect(elapsed).toBeLessThan(1500);
  });

  it('5xx: retried by the SDK, then server_error', async () => {
    const { forecasts, call } = await runOne([{ kind: 'server_error', marker: 'MARK', status: 503 }], {});
    expect(forecasts).toEqual([]);
    expect(call).toMatchObject({ status: 'failed', error_kind: 'server_error', attempts: 3 });
  });

  it('a hanging server is bounded by the total deadline', async () => {
    const { forecasts, call, elapsed } = await runOne([{ kind: 'hang', marker: 'MARK' }], { callTimeoutMs: 400 });
    expect(forecasts).toEqual([]);
    expect(call).toMatchObject({ status: 'failed', error_kind: 'timeout', attempts: 1 });
    expect(call.latency_ms).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(1500);
    // the client hung up: the server sees the request end
    for (let i = 0; i < 50 && sim.stats().inFlight > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(sim.stats().inFlight).toBe(0);
  });

  it('an unreachable endpoint is a network failure', async () => {
    const dead = await startSimulator({ port: 0 });
    const url = dead.url;
    await dead.close();
    const [m] = loadModelsConfig({ env: {}, simulatorUrl: url });
    const { forecasts, calls } = await runForecasts({ models: [m!], tasks: [task('blind', 1)], runId: 'r', asOf, callTimeoutMs: 5000 });
    expect(forecasts).toEqual([]);
    expect(calls[0]).toMatchObject({ status: 'failed', error_kind: 'network', attempts: 3, provider: 'simulated' });
  });

  it("a model's own timeout_ms wins over the run's default deadline; maxCallTimeoutMs bounds both", async () => {
    // QA: every call was cut at QUORUM_CALL_TIMEOUT_MS whatever the model's timeout_ms
    const slow = await startSimulator({ port: 0, latencyMs: 600 });
    try {
      const [m] = loadModelsConfig({ env: {}, simulatorUrl: slow.url });
      const patient = { ...m!, timeout_ms: 10_000 };
      const own = await runForecasts({ models: [patient], tasks: [task('blind', 1)], runId: 't1', asOf, callTimeoutMs: 200 });
      expect(own.calls[0]).toMatchObject({ status: 'ok' });
      const none = await runForecasts({ models: [m!], tasks: [task('blind', 2)], runId: 't2', asOf, callTimeoutMs: 200 });
      expect(none.calls[0]).toMatchObject({ status: 'failed', error_kind: 'timeout' });
      const capped = await runForecasts({ models: [patient], tasks: [task('blind', 3)], runId: 't3', asOf, maxCallTimeoutMs: 200 });
      expect(capped.calls[0]).toMatchObject({ status: 'failed', error_kind: 'timeout' });
    } finally {
      await slow.close();
    }
  });

  it('honours max_concurrency per model', async () => {
    const slow = await startSimulator({ port: 0, latencyMs: 30 });
    try {
      const ms = loadModelsConfig({ env: {}, simulatorUrl: slow.url }).slice(0, 2).map((m, i) => ({ ...m, max_concurrency: i === 0 ? 3 : 5 }));
      const tasks = Array.from({ length: 20 }, (_, i) => task('blind', i));
      const { calls } = await runForecasts({ models: ms, tasks, runId: 'c', asOf });
      expect(calls.every((c) => c.status === 'ok')).toBe(true);
      const s = slow.stats();
      expect(s.byModel['sim-gpt']!.maxInFlight).toBe(3);
      expect(s.byModel['sim-claude']!.maxInFlight).toBe(5);
      expect(s.maxInFlight).toBeLessThanOrEqual(8);
    } finally {
      await slow.close();
    }
  });

  it('asks for every configured language in one call: one forecast row per language, same probability', async () => {
    const { forecasts, calls } = await runForecasts({
      models: models.slice(0, 2),
      tasks: [task('informed', 3), task('augmented', 4)],
      runId: 'langs',
      asOf,
      langs: ['en', 'fr', 'de'],
    });
    expect(calls).toHaveLength(4);
    expect(calls.every((c) => c.status === 'ok' && c.attempts === 1)).toBe(true);
    expect(forecasts).toHaveLength(12);
    for (const c of calls) {
      const rows = forecasts.filter((f) => f.question_id === c.question_id && f.model === c.model);
      expect(rows.map((f) => f.lang)).toEqual(['en', 'fr', 'de']);
      expect(new Set(rows.map((f) => f.probability)).size).toBe(1);
      expect(new Set(rows.map((f) => f.prompt_hash)).size).toBe(1);
      expect(rows[0]!.reasoning).toMatch(/Simulated forecast/);
      expect(rows[1]!.reasoning).toMatch(/Prévision simulée/);
      expect(rows[2]!.reasoning).toMatch(/Simulierte Prognose/);
      expect(rows[1]!.key_factors[0]).toMatch(/réponse simulée/);
    }
    // the probability does not depend on the languages asked for
    const en = await runForecasts({ models: models.slice(0, 2), tasks: [task('informed', 3), task('augmented', 4)], runId: 'en', asOf });
    expect(en.forecasts.map((f) => f.probability)).toEqual(forecasts.filter((f) => f.lang === 'en').map((f) => f.probability));
    // one language alone: a different prompt, so a different hash
    expect(en.forecasts[0]!.prompt_hash).not.toBe(forecasts[0]!.prompt_hash);
  });

  it('a reply missing a requested translation violates the schema', async () => {
    sim.setFaults([{ kind: 'schema_violation', marker: 'MARK' }]);
    try {
      const { forecasts, calls } = await runForecasts({ models: models.slice(0, 1), tasks: [task('blind', 1, ' MARK')], runId: 'x', asOf, langs: ['en', 'es'] });
      expect(forecasts).toEqual([]);
      expect(calls[0]).toMatchObject({ status: 'failed', error_kind: 'schema_violation', attempts: 2 });
    } finally {
      sim.setFaults([]);
    }
  });

  it('a valid forecast whose translation stays bad is kept: asked once more, the translation recorded as missing', async () => {
    // A chat completion as OpenAI documents it (platform.openai.com/docs/api-reference/chat/object),
    // the content a valid forecast whose "fr" translation is absent and "de" blank (both attempts).
    const { createServer } = await import('node:http');
    let requests = 0;
    const srv = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        requests++;
        const content = JSON.stringify({
          probability: 0.37, reasoning: 'Main reasoning.', key_factors: ['a'],
          translations: { es: { reasoning: 'Razonamiento.', key_factors: ['b'] }, de: { reasoning: ' ', key_factors: [] } },
        });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({
          id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT', object: 'chat.completion', created: 1741569952, model: 'gpt-4.1-2025-04-14',
          choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
          usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
        }));
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (srv.address() as { port: number }).port;
      const m = { ...models[0]!, base_url: `http://127.0.0.1:${port}/v1`, price_in_per_mtok: 1, price_out_per_mtok: 1 };
      const { forecasts, calls } = await runForecasts({ models: [m], tasks: [task('blind', 1)], runId: 'tr', asOf, langs: ['en', 'es', 'fr', 'de'] });
      expect(requests).toBe(2);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ status: 'ok', error_kind: null, attempts: 2, tokens_in: 200, tokens_out: 100 });
      expect(calls[0]!.error_message).toMatch(/translations missing: fr, de/);
      expect(forecasts.map((f) => [f.lang, f.probability, f.translation_of])).toEqual([['en', 0.37, null], ['es', 0.37, 'en']]);
    } finally {
      await new Promise((r) => srv.close(r));
    }
  });

  it('a valid forecast whose translation was missing is kept when the reply asked again is cut off or not JSON (QA: the call failed, the forecast lost)', async () => {
    // The first reply: a valid forecast without its "fr" translation. Asked again, the model's reply
    // stops at the token limit (a reply in two languages is longer) or is no JSON: the first reply's
    // forecast was lost with it, the call failed as truncated, the model out of the consensus.
    const { createServer } = await import('node:http');
    for (const second of ['length', 'not json'] as const) {
      let requests = 0;
      const srv = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          requests++;
          const full = JSON.stringify({ probability: 0.42, reasoning: 'Main reasoning.', key_factors: ['a'], translations: {} });
          const content = requests === 1 ? full : second === 'length' ? full.slice(0, 20) : 'I cannot format this as JSON.';
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({
            id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT', object: 'chat.completion', created: 1741569952, model: 'gpt-4.1-2025-04-14',
            choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, annotations: [] }, logprobs: null, finish_reason: requests > 1 && second === 'length' ? 'length' : 'stop' }],
            usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
          }));
        });
      });
      await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
      try {
        const port = (srv.address() as { port: number }).port;
        const m = { ...models[0]!, base_url: `http://127.0.0.1:${port}/v1`, price_in_per_mtok: 1, price_out_per_mtok: 1 };
        const { forecasts, calls } = await runForecasts({ models: [m], tasks: [task('blind', 1)], runId: 'tr2', asOf, langs: ['en', 'fr'] });
        expect(requests, second).toBe(2);
        expect(calls[0], second).toMatchObject({ status: 'ok', error_kind: null, attempts: 2, tokens_in: 200, tokens_out: 100 });
        expect(calls[0]!.error_message, second).toMatch(/^translations missing: fr \(asked again: .*; reply violates the schema: translations\.fr: .*\)$/);
        expect(calls[0]!.error_message, second).toMatch(second === 'length' ? /asked again: reply stopped at the token limit/ : /asked again: reply is not JSON/);
        expect(forecasts.map((f) => [f.lang, f.probability, f.reasoning, f.translation_of]), second).toEqual([['en', 0.42, 'Main reasoning.', null]]);
      } finally {
        await new Promise((r) => srv.close(r));
      }
    }
  });

  it('a budget stops new calls: the rest are skipped rows (budget_exhausted), never sent', async () => {
    const paid = models.map((m) => ({ ...m, max_concurrency: 1, price_in_per_mtok: 1000, price_out_per_mtok: 1000 }));
    const tasks = Array.from({ length: 10 }, (_, i) => task('blind', 100 + i));
    const before = sim.stats().requests;
    let exhaustedAt: number | null = null;
    const out = await runForecasts({ models: paid, tasks, runId: 'budget', asOf, budgetUsd: 2, onBudgetExhausted: (s) => (exhaustedAt = s) });
    const sent = sim.stats().requests - before;
    expect(out.budgetExhausted).toBe(true);
    expect(exhaustedAt).toBeGreaterThanOrEqual(2);
    expect(out.calls).toHaveLength(40);
    const ok = out.calls.filter((c) => c.status === 'ok');
    const skipped = out.calls.filter((c) => c.status === 'skipped');
    expect(ok.length + skipped.length).toBe(40);
    expect(sent).toBe(ok.length);
    expect(skipped.length).toBeGreaterThan(10);
    for (const c of skipped) expect(c).toMatchObject({ error_kind: 'budget_exhausted', attempts: 0, cost_usd: 0, tokens_in: null });
    const costs = ok.map((c) => c.cost_usd!);
    const total = costs.reduce((a, b) => a + b, 0);
    // at most the calls in flight (4 models × 1) overshoot the budget
    expect(total).toBeGreaterThanOrEqual(2);
    expect(total).toBeLessThan(2 + 4 * Math.max(...costs));
    expect(out.forecasts).toHaveLength(ok.length);
    // an earlier session's spend counts too
    const again = await runForecasts({ models: paid, tasks, runId: 'budget2', asOf, budgetUsd: 8, spentUsd: 8 });
    expect(again.calls.every((c) => c.status === 'skipped')).toBe(true);
  });

  it('skip: (task, model) pairs done earlier are neither called nor returned', async () => {
    const tasks = Array.from({ length: 5 }, (_, i) => task('blind', 200 + i));
    const before = sim.stats().requests;
    const out = await runForecasts({ models, tasks, runId: 's', asOf, skip: (ti, m) => ti < 3 || m === 'sim-gpt' });
    expect(sim.stats().requests - before).toBe(6);
    expect(out.calls.map((c) => `${c.question_id}/${c.model}`)).toEqual(
      ['test:203', 'test:204'].flatMap((q) => ['sim-claude', 'sim-gemini', 'sim-deepseek'].map((m) => `${q}/${m}`)),
    );
  });

  it('a graceful stop: no new call starts, in-flight calls finish and are returned', async () => {
    const slow = await startSimulator({ port: 0, latencyMs: 80 });
    try {
      const ms = loadModelsConfig({ env: {}, simulatorUrl: slow.url }).map((m) => ({ ...m, max_concurrency: 2 }));
      const stop = new AbortController();
      const tasks = Array.from({ length: 20 }, (_, i) => task('blind', i));
      const seen: ModelCallRow[] = [];
      setTimeout(() => stop.abort(), 120);
      const out = await runForecasts({ models: ms, tasks, runId: 'stop', asOf, stopSignal: stop.signal, onCall: (c) => seen.push(c) });
      expect(out.stopped).toBe(true);
      const s = slow.stats();
      expect(s.inFlight).toBe(0);
      // every request that reached the server finished as a row (nothing cancelled mid-way)
      expect(out.calls).toHaveLength(s.requests);
      expect(out.calls.every((c) => c.status === 'ok')).toBe(true);
      expect(seen).toHaveLength(out.calls.length);
      expect(out.calls.length).toBeGreaterThanOrEqual(8);
      expect(out.calls.length).toBeLessThan(80);
    } finally {
      await slow.close();
    }
  });

  it('a graceful stop does not wait for the queued calls to pass the rate cap (QA: a minute with no call in flight)', async () => {
    const sim2 = await startSimulator({ port: 0, latencyMs: 20 });
    try {
      // 2 calls a minute, 4 in flight: the first two run, six more wait in the queue for the next window
      const [m] = loadModelsConfig({ env: {}, simulatorUrl: sim2.url });
      const capped = { ...m!, requests_per_minute: 2, max_concurrency: 4 };
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 300);
      const t0 = Date.now();
      const out = await runForecasts({ models: [capped], tasks: Array.from({ length: 20 }, (_, i) => task('blind', i)), runId: 'stop-rpm', asOf, stopSignal: stop.signal });
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(out.stopped).toBe(true);
      expect(out.calls).toHaveLength(2);
      expect(out.calls.every((c) => c.status === 'ok')).toBe(true);
      expect(sim2.stats().requests).toBe(2);
    } finally {
      await sim2.close();
    }
  }, 20_000);

  it('an aborted run rejects and starts no more calls', async () => {
    const slow = await startSimulator({ port: 0, latencyMs: 50 });
    try {
      const ms = loadModelsConfig({ env: {}, simulatorUrl: slow.url }).map((m) => ({ ...m, max_concurrency: 1 }));
      const ac = new AbortController();
      setTimeout(() => ac.abort(new Error('stop')), 120);
      const tasks = Array.from({ length: 20 }, (_, i) => task('blind', i));
      await expect(runForecasts({ models: ms, tasks, runId: 'x', asOf, signal: ac.signal })).rejects.toThrow('stop');
      // requests already on the wire when the abort landed may still arrive: let them settle
      await new Promise((r) => setTimeout(r, 60));
      const n = slow.stats().requests;
      await new Promise((r) => setTimeout(r, 150));
      expect(slow.stats().requests).toBe(n);
      expect(n).toBeLessThan(20);
    } finally {
      await slow.close();
    }
  });
});

describe('deadlineAt (the probability endpoint\'s answer deadline)', () => {
  // QA review: every queued task listened on the deadline's signal, which had the default limit of
  // 10 listeners: with eleven models or more, each request logged a "possible EventTarget memory
  // leak" warning (the run's own signals have no limit: one listener per queued task is the design).
  it('a models file of more than ten models: no MaxListenersExceededWarning', async () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ ...models[i % models.length]!, id: `sim-many-${i}` }));
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const out = await runForecasts({ models: many, tasks: [task('informed', 1)], runId: 'r-many', asOf, deadlineAt: Date.now() + 10_000 });
      expect(out.calls.filter((c) => c.status === 'ok')).toHaveLength(12);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
  });
});

describe('a call\'s cost', () => {
  it('is tokens × price to 9 decimals, without binary noise (QA: 0.00012502000000000002 USD at DeepSeek\'s example prices)', async () => {
    sim.setFaults([]);
    const priced = models.map((m) => ({ ...m, price_in_per_mtok: 0.28, price_out_per_mtok: 0.42 }));
    const out = await runForecasts({ models: priced, tasks: Array.from({ length: 12 }, (_, i) => task('blind', i)), runId: 'r-cost', asOf });
    expect(out.calls).toHaveLength(48);
    for (const c of out.calls) {
      expect(c.cost_usd).toBeGreaterThan(0);
      expect(c.cost_usd, String(c.cost_usd)).toBe(Number(c.cost_usd!.toFixed(9)));
      // and it is what the tokens say
      expect(c.cost_usd).toBeCloseTo((c.tokens_in! * 0.28 + c.tokens_out! * 0.42) / 1e6, 12);
    }
  });
});
