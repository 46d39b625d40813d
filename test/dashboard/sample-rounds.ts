/**
 * The browser tests' data: the bundled ForecastBench sample imported and run at its two rounds'
 * freeze times, with the bundled structure plus one scenario over three questions both runs
 * forecast (so the scenarios pages have joints and archived records to draw: the bundled ones'
 * components may fall outside the runs' first QUORUM_MAX_QUESTIONS questions).
 */
import { cpSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { timestampValue } from '@duckdb/node-api';
import { expect } from 'vitest';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import type { QuorumConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { DEFAULT_STRUCTURE_DIR } from '../../pipeline/structure/definitions.ts';
import { closeDuckdb, withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { queryFile } from '../../pipeline/warehouse/sql-files.ts';

export const SAMPLE = path.resolve(import.meta.dirname, '..', '..', 'data', 'sample', 'forecastbench');
/** The sample's two rounds, in the order they are run. */
const ROUNDS = ['2025-10-16T00:00:00Z', '2026-03-06T00:00:00Z'];

/**
 * Imports the sample into `config.dataDir`, writes the structure into `structure` (which
 * QUORUM_STRUCTURE_DIR then names) with scenario `scenario.id`, and runs both rounds, each of the
 * first `maxQuestions` open questions (the config's QUORUM_MAX_QUESTIONS).
 */
export async function runSampleRounds(config: QuorumConfig, structure: string, scenario: { id: string; file: string; description: string }, maxQuestions: number): Promise<void> {
  const logger = createLogger('silent');
  await importForecastBench(config, SAMPLE);
  cpSync(DEFAULT_STRUCTURE_DIR, structure, { recursive: true });
  const forecastBoth = await withConnection(async (conn) => {
    await createRawViews(conn, config.dataDir);
    const at = (iso: string) => queryFile<{ question_id: string }>(conn, 'pipeline/active_questions.sql', { as_of: timestampValue(BigInt(Date.parse(iso)) * 1000n) });
    const late = new Set((await at(ROUNDS[1]!)).slice(0, maxQuestions).map((q) => q.question_id));
    return (await at(ROUNDS[0]!)).slice(0, maxQuestions).map((q) => q.question_id).filter((id) => late.has(id)).slice(0, 3);
  });
  writeFileSync(path.join(structure, 'scenarios', scenario.file), [
    'scenarios:',
    `  - id: ${scenario.id}`,
    '    title: Three questions forecast in both runs',
    `    description: ${scenario.description}`,
    '    components:',
    ...forecastBoth.map((id) => `      - { question: "${id}" }`),
    '',
  ].join('\n'));
  process.env.QUORUM_STRUCTURE_DIR = structure;
  for (const asOf of ROUNDS) {
    const run = await runPipeline({ config, logger, asOf: new Date(asOf) });
    expect(run.status, run.error ?? '').toBe('completed');
  }
  await closeDuckdb();
}
