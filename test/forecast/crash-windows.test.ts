/**
 * A kill in each window of the forecast stage's raw writes (pipeline/forecast/raw-rows.ts), then a
 * resume: no row of a finished call is lost and none is written twice.
 *
 * The killed state is built deterministically from a real session: a run stopped by a signal
 * (runPipeline, real DuckDB warehouse with the bundled sample, the real simulator over HTTP) keeps
 * its journal. A second signal kills at once, possibly while the stage writes the raw tables; such
 * a kill leaves the run's `started` row, that journal, and the first tables of RAW_WRITE_ORDER
 * committed (each part is atomic), which is what `killedDuring` rebuilds in a fresh copy of the
 * warehouse with the stage's own writer. The resume is the real `runPipeline({ resume: true })`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import { journalDir, journalPath, readJournal, type JournalContents } from '../../pipeline/forecast/journal.ts';
import { RAW_WRITE_ORDER, stageRows, writeStageRows } from '../../pipeline/forecast/raw-rows.ts';
import { forecastStage } from '../../pipeline/forecast/stage.ts';
import { findRunToResume } from '../../pipeline/forecast/runs.ts';
import { closeDuckdb, withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { newRunId, runDate } from '../../pipeline/warehouse/layout.ts';
import { REPO } from '../helpers/cli.ts';
import { copyWarehouse, oneDuckdbThread, rawQuery, scratch } from './helpers.ts';

const root = scratch('quorum-crash-');
const base = join(root, 'base');
const asOf = new Date('2025-10-16T00:00:00Z');
const logger = createLogger('silent');
const TOTAL = 4 * 2 * 4; // 4 questions × (blind, augmented) × 4 models
const LANGS = 2; // en, fr: every ok call is two forecasts rows
let sim: Simulator;
let n = 0;
/** The stopped session's journal (kept aside) and what it holds. */
let saved: { path: string; runId: string; journal: JournalContents };

function setup() {
  const dir = copyWarehouse(base, root, `w${++n}`);
  const config = loadConfig({
    QUORUM_DATA_DIR: dir,
    QUORUM_SAMPLE_DIR: join(REPO, 'data', 'sample', 'forecastbench'),
    QUORUM_SIMULATOR_URL: sim.url,
    QUORUM_SIMULATOR_MAX_CONCURRENCY: '1',
    QUORUM_MAX_QUESTIONS: '4',
    QUORUM_MODES: 'blind,augmented',
    QUORUM_LANGS: 'en,fr',
    LOG_LEVEL: 'silent',
  });
  return { dir, config };
}

beforeAll(async () => {
  await oneDuckdbThread();
  sim = await startSimulator({ port: 0, latencyMs: 40 });
  await importForecastBench(loadConfig({ QUORUM_DATA_DIR: base, LOG_LEVEL: 'silent' }), join(REPO, 'data', 'sample', 'forecastbench'));

  // A real session stopped by a signal after some calls: its journal holds the evidence and the
  // finished calls with their forecasts.
  const { dir, config } = setup();
  const stop = new AbortController();
  const first = sim.stats().requests;
  const timer = setInterval(() => {
    if (sim.stats().requests - first >= 10) stop.abort();
  }, 5);
  const s = await runPipeline({ config, logger, asOf, signal: stop.signal });
  clearInterval(timer);
  expect(s.status, s.error ?? '').toBe('interrupted');
  const path = join(root, 'stopped-session.jsonl');
  copyFileSync(journalPath(dir, s.run_id), path);
  const journal = readJournal(path);
  expect(journal.calls.length).toBeGreaterThan(0);
  expect(journal.calls.length).toBeLessThan(TOTAL);
  expect(journal.evidence.length).toBeGreaterThan(0);
  saved = { path, runId: s.run_id, journal };
}, 120_000);

afterAll(async () => {
  await sim.close();
  await closeDuckdb();
  rmSync(root, { recursive: true, force: true });
});

/**
 * A warehouse as a kill leaves it when the stage had committed the first `written` tables of
 * RAW_WRITE_ORDER for the stopped session's journal, and not yet removed that journal.
 */
async function killedDuring(written: number) {
  const { dir, config } = setup();
  const { runId, journal } = saved;
  const partition = { runId, runDate: runDate(asOf) };
  await withConnection(async (conn) => {
    await appendRaw(conn, dir, 'runs', [{ run_id: runId, status: 'started', as_of: asOf, started_at: asOf, recorded_at: new Date() }], partition);
    const rows = stageRows(journal.evidence.map((e) => e.items), journal.calls);
    await writeStageRows(conn, dir, partition, rows, RAW_WRITE_ORDER.slice(0, written));
  });
  mkdirSync(journalDir(dir), { recursive: true });
  copyFileSync(saved.path, journalPath(dir, runId));
  return { dir, config };
}

/** The run's raw rows: totals and distinct natural keys, to see a lost or a doubled row. */
async function stored(dir: string, runId: string) {
  const [calls] = await rawQuery(dir, 'model_calls', `SELECT count(*) AS n, count(DISTINCT (question_id, model, mode, condition)) AS k, count(*) FILTER (WHERE status = 'ok') AS ok FROM t WHERE run_id = '${runId}'`);
  const [forecasts] = await rawQuery(dir, 'forecasts', `SELECT count(*) AS n, count(DISTINCT (question_id, model, mode, lang, condition)) AS k FROM t WHERE run_id = '${runId}'`);
  const [evidence] = await rawQuery(dir, 'evidence', 'SELECT count(*) AS n, count(DISTINCT evidence_id) AS k FROM t');
  const forecastRows = await rawQuery(dir, 'forecasts', `SELECT question_id, model, mode, lang, probability, prompt_hash FROM t WHERE run_id = '${runId}'`);
  const evidenceIds = await rawQuery(dir, 'evidence', 'SELECT evidence_id FROM t');
  return {
    calls: calls!,
    forecasts: forecasts!,
    evidence: evidence!,
    forecastRows: new Set(forecastRows.map((f) => `${f.question_id}|${f.model}|${f.mode}|${f.lang}|${f.probability}|${f.prompt_hash}`)),
    evidenceIds: new Set(evidenceIds.map((e) => e.evidence_id as string)),
  };
}

describe('a kill during the forecast stage raw writes, then --resume', () => {
  const windows = [
    { written: 0, when: 'before the evidence write' },
    { written: 1, when: 'after the evidence write, before model_calls' },
    { written: 2, when: 'after the model_calls write, before forecasts' },
    { written: 3, when: 'after the forecasts write, before the journal is removed' },
  ];
  it.each(windows)('killed $when: the resume writes every journaled row once and repeats no call', async ({ written }) => {
    const { dir, config } = await killedDuring(written);
    const { runId, journal } = saved;
    const before = sim.stats().requests;
    const s = await runPipeline({ config, logger, resume: true });
    expect(s, s.error ?? '').toMatchObject({ run_id: runId, status: 'completed', resumed: true, calls: TOTAL });
    // Finished calls are not repeated: only those the journal lacks are made.
    expect(s.calls_made).toBe(TOTAL - journal.calls.length);
    expect(sim.stats().requests - before).toBe(TOTAL - journal.calls.length);
    expect(existsSync(journalPath(dir, runId))).toBe(false);

    const raw = await stored(dir, runId);
    expect(raw.calls).toMatchObject({ n: TOTAL, k: TOTAL });
    // Every ok call has its forecasts, each once: none lost in the window, none doubled.
    expect(raw.forecasts).toEqual({ n: raw.calls.ok * LANGS, k: raw.calls.ok * LANGS });
    expect(s.forecasts).toBe(raw.calls.ok);
    // The journaled forecasts themselves are stored (not a new answer for their call).
    for (const c of journal.calls) {
      for (const f of c.forecasts) expect(raw.forecastRows.has(`${f.question_id}|${f.model}|${f.mode}|${f.lang}|${f.probability}|${f.prompt_hash}`)).toBe(true);
    }
    expect(raw.evidence.n).toBe(raw.evidence.k);
    for (const e of journal.evidence.flatMap((x) => x.items)) expect(raw.evidenceIds.has(e.evidence_id)).toBe(true);
    expect(s.evidence_items).toBe(new Set(journal.evidence.flatMap((x) => x.items.map((i) => i.evidence_id))).size);

    // A second resume of the finished run writes nothing more.
    const again = await runPipeline({ config, logger, resume: runId });
    expect(again).toMatchObject({ status: 'completed', calls_made: 0, calls: TOTAL, forecasts: s.forecasts });
    expect(await stored(dir, runId)).toEqual(raw);
  }, 60_000);

  it('the forecasts write fails after model_calls (every call journaled): --resume finds the failed run, writes the forecasts, calls nothing', async () => {
    const { dir, config } = setup();
    // A file where the forecasts partition directory goes: the stage's forecasts write fails
    // (ENOTDIR, like a full disk) after its model_calls write succeeded, with every call finished.
    const blocker = join(dir, 'raw', 'forecasts', `run_date=${runDate(asOf)}`);
    mkdirSync(join(dir, 'raw', 'forecasts'), { recursive: true });
    writeFileSync(blocker, 'in the way');
    const failed = await runPipeline({ config, logger, asOf });
    expect(failed.status).toBe('failed');
    const journal = readJournal(journalPath(dir, failed.run_id));
    expect(journal.calls).toHaveLength(TOTAL);
    const [calls] = await rawQuery(dir, 'model_calls', `SELECT count(*) AS n FROM t WHERE run_id = '${failed.run_id}'`);
    expect(calls!.n).toBe(TOTAL);
    expect(await rawQuery(dir, 'forecasts', 'SELECT * FROM t')).toEqual([]);
    // the failure says how to continue it; a plain `--resume` finds it (QA: it said there was no
    // run to continue and made every call again), the schedule does not continue a failed run
    expect(failed.notes).toContainEqual(expect.stringContaining(`quorum run --resume ${failed.run_id}`));
    // what it called (and paid for) is in its summary, read from the journal, not 0 (QA)
    expect(failed).toMatchObject({ calls: TOTAL, calls_made: TOTAL });
    const recorded = await rawQuery(dir, 'runs', `SELECT calls FROM t WHERE run_id = '${failed.run_id}' AND status = 'failed'`);
    expect(recorded).toEqual([{ calls: TOTAL }]);
    await withConnection(async (conn) => {
      expect((await findRunToResume(conn, dir, true))?.run_id).toBe(failed.run_id);
      expect(await findRunToResume(conn, dir, 'auto')).toBeNull();
    });

    rmSync(blocker);
    const before = sim.stats().requests;
    const s = await runPipeline({ config, logger, resume: true });
    expect(s, s.error ?? '').toMatchObject({ run_id: failed.run_id, status: 'completed', calls: TOTAL, calls_made: 0 });
    expect(sim.stats().requests - before).toBe(0);
    const raw = await stored(dir, failed.run_id);
    const ok = journal.calls.filter((c) => c.call.status === 'ok').length;
    expect(raw.forecasts).toEqual({ n: ok * LANGS, k: ok * LANGS });
    expect(s.forecasts).toBe(ok);
    expect(existsSync(journalPath(dir, failed.run_id))).toBe(false);
  }, 60_000);

  it('a journal whose calls have fractional token counts (written before they were rounded) reaches the warehouse on --resume, its tokens whole (QA)', async () => {
    // A usage such as GLM's on a cache hit (QuantumNous/new-api#1545) was journaled as reported; the BIGINT tokens
    // columns refused the rows, so the run failed writing them and every --resume failed the same: its paid calls
    // never reached the warehouse.
    const { dir, config } = setup();
    const { runId, journal } = saved;
    await withConnection((conn) => appendRaw(conn, dir, 'runs', [{ run_id: runId, status: 'started', as_of: asOf, started_at: asOf, recorded_at: new Date() }], { runId, runDate: runDate(asOf) }));
    mkdirSync(journalDir(dir), { recursive: true });
    const lines = readFileSync(saved.path, 'utf8').split('\n').filter((l) => l !== '').map((l) => {
      const e = JSON.parse(l) as { t: string; call?: { tokens_in: number | null; tokens_out: number | null } };
      if (e.t === 'call' && e.call!.tokens_in !== null) e.call = { ...e.call!, tokens_in: e.call!.tokens_in + 0.25, tokens_out: e.call!.tokens_out! + 0.5 };
      return JSON.stringify(e);
    });
    writeFileSync(journalPath(dir, runId), `${lines.join('\n')}\n`);
    const s = await runPipeline({ config, logger, resume: true });
    expect(s, s.error ?? '').toMatchObject({ run_id: runId, status: 'completed', calls: TOTAL, calls_made: TOTAL - journal.calls.length });
    const journaled = journal.calls.filter((c) => c.call.tokens_in !== null);
    expect(journaled.length).toBeGreaterThan(0);
    const rows = await rawQuery(dir, 'model_calls', `SELECT question_id, model, mode, tokens_in, tokens_out FROM t WHERE run_id = '${runId}'`);
    const byKey = new Map(rows.map((r) => [`${r.question_id}|${r.model}|${r.mode}`, r]));
    for (const { call } of journaled) {
      expect(byKey.get(`${call.question_id}|${call.model}|${call.mode}`)).toMatchObject({ tokens_in: call.tokens_in! + 1, tokens_out: call.tokens_out! + 1 });
    }
  }, 60_000);

  it('killed after the journal is removed (while scoring): the resume makes no call, loses and doubles nothing', async () => {
    const { dir, config } = setup();
    const runId = newRunId(asOf);
    const partition = { runId, runDate: runDate(asOf) };
    // The stage ran to its end (raw tables written, journal removed); the process died before the
    // run was recorded completed.
    const first = await withConnection(async (conn) => {
      await appendRaw(conn, dir, 'runs', [{ run_id: runId, status: 'started', as_of: asOf, started_at: asOf, recorded_at: new Date() }], partition);
      return forecastStage({ conn, config, log: logger, runId, asOf, partition });
    });
    expect(first).toMatchObject({ calls: TOTAL, calls_made: TOTAL, interrupted: false });
    expect(existsSync(journalPath(dir, runId))).toBe(false);
    const raw = await stored(dir, runId);

    const before = sim.stats().requests;
    const s = await runPipeline({ config, logger, resume: true });
    expect(s).toMatchObject({ run_id: runId, status: 'completed', resumed: true, calls_made: 0, calls: TOTAL, forecasts: first.forecasts });
    // counted from the stored forecasts: the resumed session holds no evidence in memory
    expect(first.evidence_items).toBeGreaterThan(0);
    expect(s.evidence_items).toBe(first.evidence_items);
    expect(sim.stats().requests - before).toBe(0);
    expect(await stored(dir, runId)).toEqual(raw);
  }, 60_000);
});
