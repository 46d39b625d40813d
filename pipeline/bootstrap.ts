/**
 * First start on the bundled data: when no snapshot has been published yet, import the sample
 * (ForecastBench questions, market prices and outcomes), run the pipeline dated at each round's
 * freeze time (the models see only what was known then), then once more now, so the service has
 * real questions, real prices, real outcomes and (simulated, unless configured) model forecasts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from './log.ts';
import type { QuorumConfig } from './config.ts';
import { withConnection } from './warehouse/duckdb.ts';
import { readCurrent } from './warehouse/snapshot.ts';
import { parseForecastBench } from './import/forecastbench.ts';
import { writeImportBatch } from './import/write-batch.ts';
import { runPipeline, type RunSummary } from './run.ts';

/** The distinct freeze times of the rounds in a ForecastBench questions file, oldest first. */
export function roundFreezeTimes(dir: string): Date[] {
  const times = new Set<string>();
  for (const line of readFileSync(join(dir, 'questions_market.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const freeze = (JSON.parse(line) as { freeze_datetime?: string }).freeze_datetime;
    if (freeze) times.add(new Date(freeze).toISOString());
  }
  return [...times].sort().map((t) => new Date(t));
}

/** Imports a ForecastBench directory into the raw tables; returns per-table counts. */
export async function importForecastBench(config: QuorumConfig, dir: string, now = new Date()) {
  const batch = await parseForecastBench(dir, { now });
  const written = await withConnection((conn) => writeImportBatch(conn, config.dataDir, batch, now));
  return { written, skipped: batch.skipped };
}

/** Runs the first-start sequence if no snapshot exists; returns the runs it made. */
export async function bootstrapIfEmpty(config: QuorumConfig, logger: Logger): Promise<RunSummary[]> {
  if (readCurrent(config.dataDir)) return [];
  logger.info({ sample: config.sampleDir }, 'no snapshot yet: importing the bundled sample and running the pipeline');
  const imported = await importForecastBench(config, config.sampleDir);
  logger.info({ written: imported.written, skipped: imported.skipped.length }, 'sample imported');
  const runs: RunSummary[] = [];
  for (const asOf of [...roundFreezeTimes(config.sampleDir), new Date()]) {
    runs.push(await runPipeline({ config, logger, asOf }));
  }
  return runs;
}
