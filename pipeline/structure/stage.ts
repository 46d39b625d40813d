/**
 * The structure stage of a run (issue 12): links between questions, thesis maps and their frozen
 * records. The computing is SQL (sql/derive/96_question_links.sql, 97_theses.sql,
 * 98_thesis_vintages.sql, run by deriveTables with the rest of the scoring); this module only
 *  - before the derive, puts the curated definitions (data/structure/) and the settings into the
 *    connection's temp tables those files read (`prepareStructure`), and
 *  - after it, appends this run's vintages to the raw append-only table `thesis_vintages`
 *    (`freezeThesisVintages`): idempotent on (thesis_id, run_id, question_id), written atomically,
 *    so a repeated or killed-and-resumed run adds no duplicate.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { appendRaw } from '../warehouse/raw-writer.ts';
import { runDate } from '../warehouse/layout.ts';
import { toPlain } from '../warehouse/values.ts';
import { loadStructureDefinitions, type StructureDefinitions } from './definitions.ts';
import { loadStructureConfig, type StructureConfig } from './settings.ts';

export { loadStructureConfig, type StructureConfig, type StructureParams } from './settings.ts';

export interface PrepareOptions {
  /** Curated definitions (default: loaded from `config.dir`). */
  definitions?: StructureDefinitions;
  config?: StructureConfig;
  /** The run whose vintages 98_thesis_vintages.sql freezes (null: none). */
  runId: string | null;
}

/** Creates the temp tables sql/derive/96-98 read: settings, curated links, theses and members. */
export async function prepareStructure(conn: DuckDBConnection, opts: PrepareOptions): Promise<StructureDefinitions> {
  const config = opts.config ?? loadStructureConfig();
  const defs = opts.definitions ?? loadStructureDefinitions(config.dir);
  const p = config.params;
  await conn.run(
    'CREATE OR REPLACE TEMP TABLE _structure_params AS SELECT $similar::DOUBLE AS similar_threshold, ' +
      '$same_event::DOUBLE AS same_event_threshold, $cluster::DOUBLE AS cluster_threshold, ' +
      '$max_df::INTEGER AS max_term_df, $max_size::INTEGER AS max_cluster_size, $run_id::VARCHAR AS run_id',
    {
      similar: p.similarThreshold,
      same_event: p.sameEventThreshold,
      cluster: p.clusterThreshold,
      max_df: p.maxTermDf,
      max_size: p.maxClusterSize,
      run_id: opts.runId,
    },
  );
  await conn.run('CREATE OR REPLACE TEMP TABLE _structure_links (a VARCHAR, b VARCHAR, kind VARCHAR, sign INTEGER, strength DOUBLE)');
  await conn.run('CREATE OR REPLACE TEMP TABLE _structure_theses (thesis_id VARCHAR, statement VARCHAR)');
  await conn.run('CREATE OR REPLACE TEMP TABLE _structure_members (thesis_id VARCHAR, question_id VARCHAR, sign INTEGER, weight DOUBLE)');
  await insertRows(conn, '_structure_links', 'VVVID', defs.links.map((l) => [l.a, l.b, l.kind, l.sign, l.strength]));
  await insertRows(conn, '_structure_theses', 'VV', defs.theses.map((t) => [t.id, t.statement]));
  await insertRows(
    conn,
    '_structure_members',
    'VVID',
    defs.theses.flatMap((t) => t.members.map((m) => [t.id, m.question, m.sign, m.weight])),
  );
  return defs;
}

type Cell = string | number | null;

/**
 * Inserts rows into a temp table through the appender (no SQL text built from values); `types`
 * has one letter per column: V varchar, I integer, D double.
 */
export async function insertRows(conn: DuckDBConnection, table: string, types: string, rows: Cell[][]): Promise<void> {
  if (rows.length === 0) return;
  const appender = await conn.createAppender(table, 'main', 'temp');
  try {
    for (const row of rows) {
      row.forEach((v, i) => {
        if (v === null) appender.appendNull();
        else if (types[i] === 'V') appender.appendVarchar(String(v));
        else if (types[i] === 'I') appender.appendInteger(Number(v));
        else appender.appendDouble(Number(v));
      });
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/**
 * Appends this run's vintages (`_thesis_vintage_new`, left by 98_thesis_vintages.sql on this
 * connection) to the raw table thesis_vintages. Returns the rows written (0 when they were stored).
 */
export async function freezeThesisVintages(
  conn: DuckDBConnection,
  root: string,
  runId: string,
  asOf: Date,
): Promise<number> {
  const reader = await conn.runAndReadAll('SELECT * FROM _thesis_vintage_new');
  const now = new Date();
  const rows = reader.getRowObjectsJS().map((r) => {
    const row = toPlain(r) as Record<string, unknown>;
    return { ...row, as_of: asOf, recorded_at: now };
  });
  const result = await appendRaw(conn, root, 'thesis_vintages', rows, { runId, runDate: runDate(asOf) });
  return result.written;
}
