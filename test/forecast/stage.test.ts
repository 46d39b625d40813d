/**
 * The forecast stage inside real pipeline runs (in-process runPipeline, real DuckDB warehouse with
 * the bundled sample, the real simulator over HTTP, the real openai SDK): faults, budget,
 * re-runs, evidence, languages and a graceful stop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config.ts';
import { simulatedModels } from '../../pipeline/models/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import { journalPath } from '../../pipeline/forecast/journal.ts';
import { closeDuckdb } from '../../pipeline/warehouse/duckdb.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { REPO } from '../helpers/cli.ts';
import { copyWarehouse, oneDuckdbThread, rawQuery } from './helpers.ts';
import { memTempDir } from '../helpers/mem-temp-dir.ts';
import { question, writeRaw } from '../structure/helpers.ts';

/**
 * The warehouses in memory (a tmpfs, test/helpers/mem-temp-dir.ts): the runs here fsync every raw
 * part, snapshot table and, every second, the journal, on the event loop of this process, which
 * also runs the simulator and times the calls. On the disk of a busy machine each fsync blocked it
 * (a CPU profile of one test: 0.3 s of its 1.6 s of main-thread CPU in fsync, and the wait on the
 * disk beyond that), time the calls' deadlines counted. Nothing tested here is about the disk.
 */
const root = memTempDir('quorum-stage-').dir;
const base = join(root, 'base');
const asOf = new Date('2025-10-16T00:00:00Z');
const logger = createLogger('silent');
let sim: Simulator;
let n = 0;

function setup(env: Record<string, string> = {}) {
  const dir = copyWarehouse(base, root, `w${++n}`);
  const config = loadConfig({
    QUORUM_DATA_DIR: dir,
    QUORUM_SAMPLE_DIR: join(REPO, 'data', 'sample', 'forecastbench'),
    QUORUM_SIMULATOR_URL: sim.url,
    QUORUM_MAX_QUESTIONS: '4',
    LOG_LEVEL: 'silent',
    ...env,
  });
  return { dir, config };
}

/**
 * `models` written as a models file under root whose entries name the key variable `keyEnv`, set to
 * `key` in the env returned (for setup: loadConfig checks it) and in the process's (the runner reads
 * it at each call) until `done()`.
 */
function modelsFile(name: string, keyEnv: string, key: string, models: object[]) {
  const file = join(root, name);
  writeFileSync(file, JSON.stringify({ models: models.map((m) => ({ ...m, api_key_env: keyEnv })) }));
  process.env[keyEnv] = key;
  return { env: { QUORUM_MODELS_FILE: file, [keyEnv]: key }, done: () => delete process.env[keyEnv] };
}

beforeAll(async () => {
  await oneDuckdbThread();
  sim = await startSimulator({ port: 0, latencyMs: 5 });
  const config = loadConfig({ QUORUM_DATA_DIR: base, LOG_LEVEL: 'silent' });
  await importForecastBench(config, join(REPO, 'data', 'sample', 'forecastbench'));
}, 120_000);

afterAll(async () => {
  await sim.close();
  await closeDuckdb();
  rmSync(root, { recursive: true, force: true });
});

describe('forecast stage in a pipeline run', () => {
  it('every fault kind at once: the run completes, every call is a row, failed calls never a forecast', async () => {
    // 3 s: enough that on a loaded machine only the hang and stall faults reach the deadline, so
    // the other fault kinds keep their own error kind (at 1.5 s every failure could be a timeout).
    // sim-deepseek, whose every call must end as a schema violation, has a deadline of its own
    // that no load reaches (a model's timeout_ms wins over QUORUM_CALL_TIMEOUT_MS): under heavy
    // load one of its calls once reached the 3 s and ended as a timeout. Its calls never take a
    // hang or a stall (its rule comes first), so its deadline never delays the run. The four
    // models are the bundled simulator's, as simulatedModels makes them, in a models file to give
    // sim-deepseek that.
    const four = modelsFile(
      'fault-models.json',
      'TEST_FAULT_MODELS_API_KEY',
      'simulated',
      simulatedModels(sim.url).map(({ apiKey: _key, ...m }) => ({ ...m, ...(m.id === 'sim-deepseek' ? { timeout_ms: 60_000 } : {}) })),
    );
    const { dir, config } = setup({ QUORUM_CALL_TIMEOUT_MS: '3000', ...four.env });
    // The counted faults land on whichever requests arrive first, so which calls they fail (and
    // with which final kind) depends on timing. Two failure kinds are certain whatever the order:
    // every sim-deepseek call violates the schema (first rule, so it never takes a counted fault),
    // and the hang and stall reach the deadline (the other models' 36 calls outnumber the 14
    // counted faults before them).
    sim.setFaults([
      { kind: 'schema_violation', model: 'sim-deepseek' },
      { kind: 'rate_limit', times: 3, retryAfterSeconds: 0.01 },
      { kind: 'server_error', times: 3 },
      { kind: 'malformed_json', times: 2 },
      { kind: 'schema_violation', times: 2 },
      { kind: 'truncated', times: 2 },
      { kind: 'truncated_body', times: 2 },
      { kind: 'hang', times: 1 },
      { kind: 'stall', times: 1 },
      { kind: 'malformed_json', fraction: 0.1 },
    ]);
    try {
      const s = await runPipeline({ config, logger, asOf });
      expect(s.status, s.error ?? '').toBe('completed');
      expect(s.calls).toBe(4 * 3 * 4);
      expect(s.failed_calls).toBeGreaterThan(0);
      const calls = await rawQuery(dir, 'model_calls', 'SELECT * FROM t');
      const forecasts = await rawQuery(dir, 'forecasts', 'SELECT * FROM t');
      expect(calls).toHaveLength(48);
      const ok = new Set(calls.filter((c) => c.status === 'ok').map((c) => `${c.question_id}|${c.model}|${c.mode}`));
      expect(forecasts).toHaveLength(ok.size);
      for (const f of forecasts) expect(ok.has(`${f.question_id}|${f.model}|${f.mode}`)).toBe(true);
      const kinds = new Set(calls.filter((c) => c.status === 'failed').map((c) => c.error_kind));
      for (const k of kinds) expect(['rate_limited', 'server_error', 'timeout', 'invalid_json', 'schema_violation', 'truncated', 'truncated_body']).toContain(k);
      expect(kinds).toContain('schema_violation');
      expect(kinds).toContain('timeout');
      expect(calls.filter((c) => c.model === 'sim-deepseek').every((c) => c.status === 'failed' && c.error_kind === 'schema_violation')).toBe(true);
      expect(s.forecasts).toBe(ok.size);
      expect(existsSync(journalPath(dir, s.run_id))).toBe(false);
    } finally {
      sim.setFaults([]);
      four.done();
    }
  });

  it('a budget stops new calls, the rest are skipped rows, and the run says so', async () => {
    const { dir, config } = setup({ QUORUM_SIMULATOR_PRICE_IN_PER_MTOK: '1000', QUORUM_SIMULATOR_PRICE_OUT_PER_MTOK: '1000', QUORUM_SIMULATOR_MAX_CONCURRENCY: '1', QUORUM_MODES: 'blind' });
    const before = sim.stats().requests;
    const s = await runPipeline({ config, logger, asOf, budgetUsd: 1.5 });
    const sent = sim.stats().requests - before;
    expect(s.status).toBe('completed');
    expect(s.budget_exhausted).toBe(true);
    expect(s.calls).toBe(16);
    expect(s.skipped_calls).toBeGreaterThan(0);
    expect(sent).toBe(16 - s.skipped_calls);
    expect(s.cost_usd).toBeGreaterThanOrEqual(1.5);
    const skipped = await rawQuery(dir, 'model_calls', "SELECT * FROM t WHERE status = 'skipped'");
    expect(skipped).toHaveLength(s.skipped_calls);
    expect(skipped.every((c) => c.error_kind === 'budget_exhausted' && c.attempts === 0)).toBe(true);
    const runs = await rawQuery(dir, 'runs', `SELECT * FROM t WHERE run_id = '${s.run_id}' AND status = 'completed'`);
    expect(runs[0]).toMatchObject({ cost_usd: s.cost_usd, calls: 16 });
  });

  it("the run's cost is the sum of its calls' costs in micro-dollars, without float noise", async () => {
    // QA: 48 calls of 0.0035 USD each were summarised as cost_usd 0.16800000000000012 (summary and runs row)
    const api = await startReplayServer([
      {
        method: 'POST',
        path: '/v1/chat/completions',
        responses: [
          json({
            id: 'chatcmpl-1', object: 'chat.completion', created: 1723031665, model: 'gpt-4o-2024-08-06',
            choices: [{ index: 0, message: { role: 'assistant', content: '{"probability":0.4,"reasoning":"r","key_factors":[]}', refusal: null }, logprobs: null, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
          }),
        ],
      },
    ]);
    const entry = (id: string) => ({ id, display_name: id, base_url: `${api.url}/v1`, model: 'gpt-4o', max_concurrency: 2, requests_per_minute: 10000, price_in_per_mtok: 2.5, price_out_per_mtok: 10 });
    const priced = modelsFile('priced-models.json', 'TEST_PRICED_MODEL_API_KEY', 'sk-test', ['a', 'b', 'c', 'd'].map(entry));
    try {
      const { dir, config } = setup(priced.env);
      const s = await runPipeline({ config, logger, asOf });
      expect(s.status, s.error ?? '').toBe('completed');
      expect(s.calls).toBe(48);
      expect(s.cost_usd).toBe(0.168);
      const runs = await rawQuery(dir, 'runs', `SELECT * FROM t WHERE run_id = '${s.run_id}' AND status = 'completed'`);
      expect(runs[0]!.cost_usd).toBe(0.168);
    } finally {
      priced.done();
      await api.close();
    }
  });

  it('a usage with fractional token counts is stored, rounded up: it no longer fails the run (QA)', async () => {
    // token counts as floats: Hugging Face's endpoints (completion_tokens 37.25, philschmid/easyllm#42), GLM once its
    // cache is hit (QuantumNous/new-api#1545). The BIGINT tokens columns refused the row: the forecasts write failed,
    // the run was recorded failed with its journal, and every --resume failed the same, its paid calls never stored.
    const api = await startReplayServer([
      {
        method: 'POST',
        path: '/v1/chat/completions',
        responses: [
          json({
            id: 'chatcmpl-1', object: 'chat.completion', created: 1723031665, model: 'glm-4.5',
            choices: [{ index: 0, message: { role: 'assistant', content: '{"probability":0.4,"reasoning":"r","key_factors":[]}', refusal: null }, logprobs: null, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1000.2, completion_tokens: 37.25, total_tokens: 1037.45 },
          }),
        ],
      },
    ]);
    const glm = modelsFile('float-usage-models.json', 'TEST_FLOAT_USAGE_API_KEY', 'sk-test', [
      { id: 'glm', display_name: 'GLM', base_url: `${api.url}/v1`, model: 'glm-4.5', max_concurrency: 2, requests_per_minute: 10000, price_in_per_mtok: 2, price_out_per_mtok: 10 },
    ]);
    try {
      const { dir, config } = setup(glm.env);
      const s = await runPipeline({ config, logger, asOf });
      expect(s.status, s.error ?? '').toBe('completed');
      expect(s).toMatchObject({ calls: 12, failed_calls: 0, forecasts: 12, tokens_in: 12 * 1001, tokens_out: 12 * 38 });
      const calls = await rawQuery(dir, 'model_calls', `SELECT DISTINCT tokens_in, tokens_out, cost_usd FROM t WHERE run_id = '${s.run_id}'`);
      // the cost is that of the tokens stored, whole tokens as every provider bills them
      expect(calls).toEqual([{ tokens_in: 1001, tokens_out: 38, cost_usd: (1001 * 2 + 38 * 10) / 1e6 }]);
    } finally {
      glm.done();
      await api.close();
    }
  });

  it('failed calls are warned about at the end of the stage, by model and error kind with an example', async () => {
    // QA: a run with 30 of its 40 calls failed logged nothing above info; only failed_calls counted them
    const { config } = setup();
    sim.setFaults([{ kind: 'schema_violation', model: 'sim-deepseek' }]);
    const lines: string[] = [];
    const captured = createLogger('warn', { destination: new Writable({ write: (c, _e, cb) => { lines.push(String(c)); cb(); } }) });
    try {
      const s = await runPipeline({ config, logger: captured, asOf });
      expect(s).toMatchObject({ status: 'completed', calls: 48, failed_calls: 12 });
      const warned = lines.map((l) => JSON.parse(l) as { level: number; msg: string; failed_calls?: number; by_model?: Record<string, Record<string, { calls: number; example: string }>> }).filter((l) => l.failed_calls !== undefined);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: 40, failed_calls: 12 });
      expect(Object.keys(warned[0]!.by_model!)).toEqual(['sim-deepseek']);
      expect(warned[0]!.by_model!['sim-deepseek']!.schema_violation!.calls).toBe(12);
      expect(warned[0]!.by_model!['sim-deepseek']!.schema_violation!.example).toMatch(/violates the schema: probability/);
      expect(warned[0]!.msg).toContain('sim-deepseek: 12 schema_violation');
    } finally {
      sim.setFaults([]);
    }
  });

  it('re-running a finished run makes zero model calls', async () => {
    const { config } = setup({ QUORUM_MODES: 'blind,augmented' });
    const first = await runPipeline({ config, logger, asOf });
    expect(first.status).toBe('completed');
    expect(first.calls_made).toBe(32);
    const before = sim.stats().requests;
    const again = await runPipeline({ config, logger, resume: first.run_id });
    expect(sim.stats().requests - before).toBe(0);
    expect(again).toMatchObject({ status: 'completed', run_id: first.run_id, calls_made: 0, calls: 32, forecasts: first.forecasts, resumed: true });
    // a question that entered the warehouse later (a later sync), open at the run's as-of time and
    // sorting first, is not one of the finished run's tasks: still no call, the same counts
    await writeRaw(config.dataDir, { questions: [question('aaa:late', 'A question synced after the run', { created_at: new Date('2025-01-01T00:00:00Z') })] });
    const late = await runPipeline({ config, logger, resume: first.run_id });
    expect(sim.stats().requests - before).toBe(0);
    expect(late).toMatchObject({ status: 'completed', calls_made: 0, calls: 32, forecasts: first.forecasts, questions: first.questions });
    const rows = await rawQuery(config.dataDir, 'forecasts', `SELECT count(*)::INTEGER AS n FROM t WHERE run_id = '${first.run_id}'`);
    expect(rows[0]!.n).toBe(first.forecasts);
    // and --resume with nothing interrupted starts a new run
    const fresh = await runPipeline({ config, logger, asOf, resume: false });
    expect(fresh.run_id).not.toBe(first.run_id);
  });

  it('evidence: stored, referenced by augmented forecasts, and never published after the as-of time', async () => {
    const evDir = join(root, 'evidence-files');
    mkdirSync(evDir, { recursive: true });
    // the first question open at as-of (question ids sort; the stage takes the first 4)
    const open = await rawQuery(base, 'questions', "SELECT question_id FROM t WHERE (created_at IS NULL OR created_at <= TIMESTAMP '2025-10-16') AND (close_time IS NULL OR close_time > TIMESTAMP '2025-10-16') ORDER BY question_id");
    const qid = open[0]!.question_id as string;
    writeFileSync(
      join(evDir, 'test.jsonl'),
      [
        { question_id: qid, title: 'Before as-of', url: 'https://local/before', published_at: '2025-10-10T00:00:00Z', snippet: 'LOCAL-BEFORE' },
        { question_id: qid, title: 'After as-of', url: 'https://local/after', published_at: '2025-10-16T00:00:01Z', snippet: 'LOCAL-AFTER' },
        { question_id: qid, title: 'Bad date', url: 'https://local/bad', published_at: 'last Tuesday', snippet: 'LOCAL-BAD' },
      ].map((x) => JSON.stringify(x)).join('\n'),
    );
    const gdelt: ReplayServer = await startReplayServer([
      {
        path: '/api/v2/doc/doc',
        responses: (req) =>
          req.query.get('enddatetime') === '20251016000000'
            ? json({
                articles: [
                  { url: `https://news.example/${req.query.get('query')?.length}/a`, url_mobile: '', title: 'Seen before', seendate: '20251015T100000Z', socialimage: '', domain: 'news.example', language: 'English', sourcecountry: 'United Kingdom' },
                  { url: `https://news.example/${req.query.get('query')?.length}/b`, url_mobile: '', title: 'Seen after', seendate: '20251016T100000Z', socialimage: '', domain: 'news.example', language: 'English', sourcecountry: 'United Kingdom' },
                ],
              })
            : json({}, 400),
      },
    ]);
    try {
      const { dir, config } = setup({
        QUORUM_MODES: 'augmented',
        QUORUM_EVIDENCE_DIR: evDir,
        QUORUM_EVIDENCE_PROVIDERS: 'local,gdelt',
        QUORUM_GDELT_URL: gdelt.url,
        QUORUM_GDELT_MIN_INTERVAL_MS: '0',
      });
      const lines: string[] = [];
      const captured = createLogger('info', { destination: new Writable({ write: (c, _e, cb) => { lines.push(String(c)); cb(); } }) });
      const s = await runPipeline({ config, logger: captured, asOf });
      expect(s.status).toBe('completed');
      expect(gdelt.log.length).toBeGreaterThanOrEqual(1);
      // the malformed line is skipped and, as data/evidence/README.md says, counted in the log
      const skippedLog = lines.map((l) => JSON.parse(l) as { msg: string; skipped_lines?: Record<string, number> }).filter((l) => l.skipped_lines);
      expect(skippedLog).toHaveLength(1);
      expect(skippedLog[0]!.skipped_lines).toEqual({ [join(evDir, 'test.jsonl')]: 1 });
      const evidence = await rawQuery(dir, 'evidence', 'SELECT * FROM t');
      expect(evidence.length).toBe(s.evidence_items);
      expect(evidence.some((e) => e.source_slug === 'gdelt')).toBe(true);
      for (const e of evidence) expect((e.published_at as Date).getTime()).toBeLessThanOrEqual(asOf.getTime());
      expect(evidence.some((e) => e.snippet === 'LOCAL-BEFORE')).toBe(true);
      expect(evidence.some((e) => e.snippet === 'LOCAL-AFTER' || e.title === 'Seen after')).toBe(false);
      const ids = new Set(evidence.map((e) => e.evidence_id));
      const forecasts = await rawQuery(dir, 'forecasts', 'SELECT * FROM t');
      expect(forecasts).toHaveLength(16);
      for (const f of forecasts) for (const id of f.evidence_ids as string[]) expect(ids.has(id)).toBe(true);
      const first = forecasts.filter((f) => f.question_id === qid);
      expect(first.every((f) => (f.evidence_ids as string[]).length >= 2)).toBe(true);
      expect(first.every((f) => (f.reasoning as string).includes('evidence item'))).toBe(true);
    } finally {
      await gdelt.close();
    }
  });

  it('languages: one call per (task, model) whatever the number of languages; every language is stored, the main one scored', async () => {
    const { dir, config } = setup({ QUORUM_MODES: 'blind', QUORUM_LANGS: 'fr,en' });
    const before = sim.stats().requests;
    const s = await runPipeline({ config, logger, asOf });
    expect(s.status).toBe('completed');
    expect(sim.stats().requests - before).toBe(16);
    expect(s.forecasts).toBe(16); // forecasts counts answers, not translations
    const forecasts = await rawQuery(dir, 'forecasts', 'SELECT lang, reasoning, translation_of, probability, question_id, model FROM t');
    expect(forecasts).toHaveLength(32);
    const main = forecasts.filter((f) => f.translation_of === null);
    const translations = forecasts.filter((f) => f.translation_of !== null);
    expect(main).toHaveLength(16);
    expect(main.every((f) => f.lang === 'fr' && /Prévision simulée/.test(f.reasoning))).toBe(true);
    expect(translations.every((f) => f.lang === 'en' && f.translation_of === 'fr')).toBe(true);
    // A translation repeats its answer's probability.
    const key = (f: Record<string, unknown>) => `${f.question_id}|${f.model}`;
    const mainP = new Map(main.map((f) => [key(f), f.probability]));
    expect(translations.every((f) => mainP.get(key(f)) === f.probability)).toBe(true);
  });

  it('a resumed run keeps the languages it started with, whatever QUORUM_LANGS says by then (QA: half its forecasts were in another main language)', async () => {
    const slow = await startSimulator({ port: 0, latencyMs: 40 });
    try {
      const { dir, config } = setup({ QUORUM_SIMULATOR_URL: slow.url, QUORUM_SIMULATOR_MAX_CONCURRENCY: '2', QUORUM_MODES: 'blind', QUORUM_LANGS: 'en,fr' });
      const stop = new AbortController();
      const timer = setInterval(() => {
        if (slow.stats().requests >= 4) stop.abort();
      }, 5);
      const s = await runPipeline({ config, logger, asOf, signal: stop.signal });
      clearInterval(timer);
      expect(s.status).toBe('interrupted');
      // the operator changed the languages before the restart: the run was asked in en and fr
      const later = loadConfig({ ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('QUORUM_'))), QUORUM_DATA_DIR: dir, QUORUM_SAMPLE_DIR: join(REPO, 'data', 'sample', 'forecastbench'), QUORUM_SIMULATOR_URL: slow.url, QUORUM_MAX_QUESTIONS: '4', QUORUM_MODES: 'blind', QUORUM_LANGS: 'de', LOG_LEVEL: 'silent' });
      const lines: string[] = [];
      const captured = createLogger('info', { destination: new Writable({ write: (c, _e, cb) => { lines.push(String(c)); cb(); } }) });
      const resumed = await runPipeline({ config: later, logger: captured, resume: s.run_id });
      expect(resumed).toMatchObject({ run_id: s.run_id, status: 'completed', resumed: true, calls: 16, forecasts: 16 });
      const rows = await rawQuery(dir, 'forecasts', `SELECT lang, translation_of, count(*) AS n FROM t WHERE run_id = '${s.run_id}' GROUP BY ALL ORDER BY lang`);
      expect(rows).toEqual([
        { lang: 'en', translation_of: null, n: 16 },
        { lang: 'fr', translation_of: 'en', n: 16 },
      ]);
      const warned = lines.map((l) => JSON.parse(l) as { level: number; msg: string; run_langs?: string[] }).filter((l) => l.run_langs);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: 40, run_langs: ['en', 'fr'] });
    } finally {
      await slow.close();
    }
  });

  it('a stop signal: no new calls, calls in flight finish and are stored, the run is interrupted and resumable', async () => {
    const slow = await startSimulator({ port: 0, latencyMs: 60 });
    try {
      const { dir, config } = setup({ QUORUM_SIMULATOR_URL: slow.url, QUORUM_SIMULATOR_MAX_CONCURRENCY: '2', QUORUM_MODES: 'blind,informed', QUORUM_MAX_QUESTIONS: '8' });
      const stop = new AbortController();
      const timer = setInterval(() => {
        if (slow.stats().requests >= 12) stop.abort();
      }, 5);
      const s = await runPipeline({ config, logger, asOf, signal: stop.signal });
      clearInterval(timer);
      expect(s.status).toBe('interrupted');
      expect(s.snapshot).toBeNull();
      const sent = slow.stats().requests;
      expect(s.calls).toBe(sent); // every request that went out finished and was recorded
      expect(s.calls).toBeLessThan(64);
      expect(existsSync(journalPath(dir, s.run_id))).toBe(true);
      const state = await rawQuery(dir, 'runs', `SELECT status FROM t WHERE run_id = '${s.run_id}' ORDER BY recorded_at`);
      expect(state.map((r) => r.status)).toEqual(['started', 'interrupted']);
      // a score-only rescore in between (what quorum start makes after an upgrade) makes no call and
      // supersedes nothing: the interrupted run is still the one a restarted service continues
      // (as `quorum run --score-only` makes it: resume false, a new run, which says what is left)
      const lines: string[] = [];
      const captured = createLogger('info', { destination: new Writable({ write: (c, _e, cb) => { lines.push(String(c)); cb(); } }) });
      expect(await runPipeline({ config, logger: captured, scoreOnly: true, resume: false })).toMatchObject({ status: 'completed', calls_made: 0, resumed: false });
      const warned = lines.map((l) => JSON.parse(l) as { level: number; interrupted_run?: string; msg: string }).filter((l) => l.interrupted_run);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: 40, interrupted_run: s.run_id });
      expect(warned[0]!.msg).toContain('quorum run --resume');
      // a restarted service (auto-resume, no as-of) continues it without repeating a call
      const resumed = await runPipeline({ config, logger });
      expect(resumed).toMatchObject({ run_id: s.run_id, status: 'completed', resumed: true, calls: 64, calls_made: 64 - sent });
      // dated before the score-only run's snapshot it replaces: published, and said (QA)
      expect(resumed.notes.filter((n) => n.includes('before the snapshot it replaces'))).toHaveLength(1);
      expect(slow.stats().requests).toBe(64);
      expect(existsSync(journalPath(dir, s.run_id))).toBe(false);
      const calls = await rawQuery(dir, 'model_calls', `SELECT count(*) AS n, count(DISTINCT (question_id, model, mode)) AS k FROM t WHERE run_id = '${s.run_id}'`);
      expect(calls[0]).toEqual({ n: 64, k: 64 });
    } finally {
      await slow.close();
    }
  });
});
