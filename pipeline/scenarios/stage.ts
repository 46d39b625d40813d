/**
 * The scenario stage of a run (issue 13). The computing is SQL (sql/derive/99_scenario_1_joint.sql
 * and 99_scenario_2_records.sql, run by deriveTables with the rest of the scoring); this module only
 *  - before the derive, puts the curated scenarios (data/structure/scenarios/), the conditionals
 *    a caller gives (none in a pipeline run: 99_scenario_0_conditionals.sql adds the models'
 *    conditional forecasts from the warehouse) and the settings into the connection's temp tables
 *    those files read (`prepareScenarios`), and
 *  - after it, appends this run's records to the raw append-only table `scenario_archive`
 *    (`freezeScenarioRecords`), one row per record with its joint as a list: idempotent on
 *    (scenario_id, run_id), written atomically, so a repeated or killed-and-resumed run adds no
 *    duplicate.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { loadIpfSweeps } from './settings.ts';
import { appendRaw } from '../warehouse/raw-writer.ts';
import { runDate } from '../warehouse/layout.ts';
import { toPlain } from '../warehouse/values.ts';
import { structureDir } from '../structure/definitions.ts';
import { insertRows } from '../structure/stage.ts';
import type { ScenarioDefinition } from './definitions.ts';
import { loadScenarios } from './from-theses.ts';

export { loadIpfSweeps } from './settings.ts';

/**
 * A model's P(component `componentOrd` YES | the earlier components as `condition`): one character
 * per earlier component, '1' YES, '0' NO, '-' either ('1-': the first YES, the second either).
 */
export interface ScenarioConditional {
  scenarioId: string;
  model: string;
  componentOrd: number;
  condition: string;
  probability: number;
}

export interface PrepareScenariosOptions {
  /** Curated scenarios (default: loaded from QUORUM_STRUCTURE_DIR or data/structure/). */
  scenarios?: readonly ScenarioDefinition[];
  /** Conditionals besides the warehouse's conditional forecasts (default: none; tests give some). */
  conditionals?: readonly ScenarioConditional[];
  ipfSweeps?: number;
  /** The run whose records 99_scenario_2_records.sql freezes (null: none). */
  runId: string | null;
}

/** Creates the temp tables sql/derive/99_scenario_*.sql read. Returns the scenarios used. */
export async function prepareScenarios(conn: DuckDBConnection, opts: PrepareScenariosOptions): Promise<readonly ScenarioDefinition[]> {
  const scenarios = opts.scenarios ?? loadScenarios(structureDir());
  const sweeps = opts.ipfSweeps ?? loadIpfSweeps();
  await conn.run('CREATE OR REPLACE TEMP TABLE _scenario_params AS SELECT $run_id::VARCHAR AS run_id, $sweeps::INTEGER AS ipf_sweeps', {
    run_id: opts.runId,
    sweeps,
  });
  await conn.run('CREATE OR REPLACE TEMP TABLE _scenario_defs (scenario_id VARCHAR, title VARCHAR, description VARCHAR)');
  await conn.run('CREATE OR REPLACE TEMP TABLE _scenario_components_def (scenario_id VARCHAR, ord INTEGER, question_id VARCHAR, label VARCHAR)');
  await conn.run(
    'CREATE OR REPLACE TEMP TABLE _scenario_conditionals (scenario_id VARCHAR, model VARCHAR, component_ord INTEGER, condition VARCHAR, probability DOUBLE)',
  );
  await insertRows(conn, '_scenario_defs', 'VVV', scenarios.map((s) => [s.id, s.title, s.description]));
  await insertRows(
    conn,
    '_scenario_components_def',
    'VIVV',
    scenarios.flatMap((s) => s.components.map((c, i) => [s.id, i + 1, c.question, c.label ?? null])),
  );
  await insertRows(
    conn,
    '_scenario_conditionals',
    'VVIVD',
    (opts.conditionals ?? []).map((k) => [k.scenarioId, k.model, k.componentOrd, k.condition, k.probability]),
  );
  return scenarios;
}

/**
 * Appends this run's records (`_scenario_record_new`, left by 99_scenario_2_records.sql on this
 * connection) to the raw table scenario_archive. Returns the records written (0 when they were stored).
 */
export async function freezeScenarioRecords(conn: DuckDBConnection, root: string, runId: string, asOf: Date): Promise<number> {
  const reader = await conn.runAndReadAll('SELECT * FROM _scenario_record_new');
  const now = new Date();
  const rows = reader.getRowObjectsJS().map((r) => ({ ...(toPlain(r) as Record<string, unknown>), as_of: asOf, recorded_at: now }));
  const result = await appendRaw(conn, root, 'scenario_archive', rows, { runId, runDate: runDate(asOf) });
  return result.written;
}
