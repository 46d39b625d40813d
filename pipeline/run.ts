/**
 * One pipeline run (DESIGN §2): select the questions open at the run's as-of time, forecast them
 * with the four models in every mode, score everything in DuckDB SQL, publish a snapshot.
 *
 * Crash safety: raw parts are written atomically (raw-writer), the snapshot is published by
 * rename (snapshot.ts), and the run lock keeps runs from overlapping. A run killed at any point
 * leaves the previous snapshot served; its `runs` row stays `started` and the next run under the
 * lock sweeps its abandoned snapshot directory.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { timestampValue } from '@duckdb/node-api';
import type { Logger } from './log.ts';
import type { QuorumConfig } from './config.ts';
import { withConnection } from './warehouse/duckdb.ts';
import { appendRaw } from './warehouse/raw-writer.ts';
import { createRawViews } from './warehouse/raw-views.ts';
import { newRunId, runDate } from './warehouse/layout.ts';
import { acquireRunLock } from './warehouse/lock.ts';
import { publishSnapshot, pruneSnapshots, removeAbandonedSnapshots } from './warehouse/snapshot.ts';
import { queryFile } from './warehouse/sql-files.ts';
import { deriveTables, exportTables } from './warehouse/derive.ts';
import type { Mode } from './warehouse/tables.ts';
import { loadModelsConfig } from './models/config.ts';
import { runForecasts, type ForecastTask } from './models/runner.ts';
import { startSimulator } from './simulator/server.ts';

export interface RunOptions {
  config: QuorumConfig;
  logger: Logger;
  /** The run's point in time (default: now). A run dated T sees only what was known at T. */
  asOf?: Date;
  /** Skip the forecasting stage (rescore and publish only). */
  scoreOnly?: boolean;
  signal?: AbortSignal;
}

export interface RunSummary {
  run_id: string;
  as_of: string;
  status: 'completed' | 'failed';
  questions: number;
  forecasts: number;
  calls: number;
  failed_calls: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  snapshot: string | null;
  error: string | null;
  duration_ms: number;
}

interface ActiveQuestion {
  question_id: string;
  title: string;
  description: string | null;
  resolution_criteria: string | null;
  url: string | null;
  created_at: string | null;
  close_time: string | null;
  category: string;
  domain: string;
  market_probability: number | null;
  market_observed_at: string | null;
  market_volume: number | null;
  market_liquidity: number | null;
  market_history: { observed_at: string; probability: number }[] | null;
}

const asDate = (s: string | null): Date | null => (s ? new Date(s) : null);

/** Builds the (question × mode) tasks of a run from the questions open at its as-of time. */
function toTasks(questions: ActiveQuestion[], modes: readonly Mode[]): ForecastTask[] {
  return questions.flatMap((q) =>
    modes.map((mode) => ({
      mode,
      question: {
        question_id: q.question_id,
        title: q.title,
        description: q.description,
        resolution_criteria: q.resolution_criteria,
        url: q.url,
        created_at: asDate(q.created_at),
        close_time: asDate(q.close_time),
        category: q.category,
        domain: q.domain,
      },
      market:
        q.market_probability === null || q.market_observed_at === null
          ? null
          : {
              probability: q.market_probability,
              observed_at: new Date(q.market_observed_at),
              volume: q.market_volume,
              liquidity: q.market_liquidity,
              history: (q.market_history ?? []).map((h) => ({
                observed_at: new Date(h.observed_at),
                probability: h.probability,
              })),
            },
      evidence: [],
    })),
  );
}

async function recordRun(
  conn: DuckDBConnection,
  root: string,
  row: Record<string, unknown> & { run_id: string; as_of: Date },
): Promise<void> {
  await appendRaw(conn, root, 'runs', [{ ...row, recorded_at: new Date() }], {
    runId: row.run_id,
    runDate: runDate(row.as_of),
  });
}

/** Runs the whole pipeline once under the run lock. Throws RunLockedError when a run is in progress. */
export async function runPipeline(options: RunOptions): Promise<RunSummary> {
  const { config, logger } = options;
  const root = config.dataDir;
  const asOf = options.asOf ?? new Date();
  const runId = newRunId(asOf);
  const started = new Date();
  const release = acquireRunLock(root, runId);
  const log = logger.child({ run_id: runId, as_of: asOf.toISOString() });
  const summary: RunSummary = {
    run_id: runId,
    as_of: asOf.toISOString(),
    status: 'failed',
    questions: 0,
    forecasts: 0,
    calls: 0,
    failed_calls: 0,
    tokens_in: 0,
    tokens_out: 0,
    cost_usd: 0,
    snapshot: null,
    error: null,
    duration_ms: 0,
  };
  const partition = { runId, runDate: runDate(asOf) };
  try {
    const abandoned = removeAbandonedSnapshots(root);
    if (abandoned.length) log.warn({ abandoned }, 'removed snapshot directories of runs that died');
    return await withConnection(async (conn) => {
      await recordRun(conn, root, { run_id: runId, status: 'started', as_of: asOf, started_at: started });
      log.info('run started');
      try {
        if (!options.scoreOnly) await forecastStage(conn, options, asOf, runId, partition, summary, log);
        const manifest = await scoreAndPublish(conn, config, asOf, runId);
        summary.snapshot = manifest.run_id;
        summary.status = 'completed';
        const pruned = pruneSnapshots(root, config.keepSnapshots);
        log.info({ tables: manifest.tables.length, pruned: pruned.length }, 'snapshot published');
      } catch (err) {
        summary.error = err instanceof Error ? err.message : String(err);
        log.error({ err }, 'run failed');
      }
      summary.duration_ms = Date.now() - started.getTime();
      const { duration_ms, as_of: _asOf, run_id: _runId, ...counts } = summary;
      await recordRun(conn, root, { run_id: runId, ...counts, as_of: asOf, started_at: started, finished_at: new Date() });
      log.info({ ...counts, duration_ms }, `run ${summary.status}`);
      return summary;
    });
  } finally {
    release();
  }
}

async function forecastStage(
  conn: DuckDBConnection,
  options: RunOptions,
  asOf: Date,
  runId: string,
  partition: { runId: string; runDate: string },
  summary: RunSummary,
  log: Logger,
): Promise<void> {
  const { config } = options;
  await createRawViews(conn, config.dataDir);
  const questions = await queryFile<ActiveQuestion>(conn, 'pipeline/active_questions.sql', {
    as_of: timestampValue(BigInt(asOf.getTime()) * 1000n),
  });
  summary.questions = questions.length;
  const tasks = toTasks(questions, config.modes);
  log.info({ questions: questions.length, tasks: tasks.length }, 'forecasting');
  if (tasks.length === 0) return;

  const simulator = config.modelsFile
    ? null
    : await startSimulator({ port: 0, latencyMs: config.simulatorLatencyMs });
  if (simulator) log.warn({ url: simulator.url }, 'no models file configured: forecasting with the bundled SIMULATOR (provider=simulated)');
  try {
    const models = loadModelsConfig({ file: config.modelsFile, env: process.env, simulatorUrl: simulator?.url });
    const { forecasts, calls } = await runForecasts({
      models,
      tasks,
      runId,
      asOf,
      lang: config.lang,
      signal: options.signal,
      callTimeoutMs: config.callTimeoutMs,
    });
    // Calls first: every call, failed ones included, is recorded even if the run dies next.
    await appendRaw(conn, config.dataDir, 'model_calls', calls as unknown as Record<string, unknown>[], partition);
    await appendRaw(conn, config.dataDir, 'forecasts', forecasts as unknown as Record<string, unknown>[], partition);
    summary.forecasts = forecasts.length;
    summary.calls = calls.length;
    summary.failed_calls = calls.filter((c) => c.status !== 'ok').length;
    summary.tokens_in = calls.reduce((s, c) => s + (Number(c.tokens_in) || 0), 0);
    summary.tokens_out = calls.reduce((s, c) => s + (Number(c.tokens_out) || 0), 0);
    summary.cost_usd = calls.reduce((s, c) => s + (Number(c.cost_usd) || 0), 0);
  } finally {
    await simulator?.close();
  }
}

/** Rescores the whole warehouse as of `asOf` with sql/derive and publishes the snapshot. */
export async function scoreAndPublish(
  conn: DuckDBConnection,
  config: QuorumConfig,
  asOf: Date,
  runId: string,
) {
  await createRawViews(conn, config.dataDir);
  return publishSnapshot(config.dataDir, runId, { asOf, headlineModes: config.headlineModes }, async (dir) => {
    const tables = await deriveTables(conn, { asOf, headlineModes: config.headlineModes });
    await exportTables(conn, tables, dir);
    return tables;
  });
}
