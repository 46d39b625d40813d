/**
 * The factor stage of a run (issue 12): before the derive, puts the anchor factors' trees
 * (data/structure/factors/, pipeline/factors/definitions.ts) and the health settings into the
 * connection's temp tables that sql/derive/99_factor_1_tree.sql and 99_factor_2_health.sql read.
 * The computing (leaves, levels, health) is SQL.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { structureDir } from '../structure/definitions.ts';
import { insertRows } from '../structure/stage.ts';
import { loadHealthParams, type HealthParams } from './settings.ts';
import { flattenFactors, loadFactorDefinitions, type FactorDefinition } from './definitions.ts';

export { loadHealthParams, type HealthParams } from './settings.ts';

export interface PrepareFactorsOptions {
  /** Anchor factors (default: loaded from QUORUM_STRUCTURE_DIR or data/structure/). */
  factors?: readonly FactorDefinition[];
  health?: HealthParams;
  /** The JSON sync report of the run being published (null: it did not sync). */
  syncReport?: string | null;
}

/** Creates the temp tables sql/derive/99_factor_*.sql read. Returns the factors used. */
export async function prepareFactors(conn: DuckDBConnection, opts: PrepareFactorsOptions = {}): Promise<readonly FactorDefinition[]> {
  const factors = opts.factors ?? loadFactorDefinitions(structureDir());
  const h = opts.health ?? loadHealthParams();
  const flat = flattenFactors(factors);
  await conn.run('CREATE OR REPLACE TEMP TABLE _factor_defs (factor_id VARCHAR, name VARCHAR, statement VARCHAR, description VARCHAR)');
  await conn.run(
    'CREATE OR REPLACE TEMP TABLE _factor_nodes (node_id VARCHAR, factor_id VARCHAR, parent_id VARCHAR, depth INTEGER, ord INTEGER, name VARCHAR, description VARCHAR)',
  );
  await conn.run('CREATE OR REPLACE TEMP TABLE _factor_leaves_def (node_id VARCHAR, factor_id VARCHAR, question_id VARCHAR, sign INTEGER, weight DOUBLE)');
  await conn.run(
    'CREATE OR REPLACE TEMP TABLE _factor_rule_terms (node_id VARCHAR, factor_id VARCHAR, rule_ord INTEGER, n_groups INTEGER, ' +
      'group_ord INTEGER, term VARCHAR, categories VARCHAR, sign INTEGER, weight DOUBLE)',
  );
  await insertRows(conn, '_factor_defs', 'VVVV', flat.factors.map((f) => [f.factor_id, f.name, f.statement, f.description]));
  await insertRows(conn, '_factor_nodes', 'VVVIIVV', flat.nodes.map((n) => [n.node_id, n.factor_id, n.parent_id, n.depth, n.ord, n.name, n.description]));
  await insertRows(conn, '_factor_leaves_def', 'VVVID', flat.leaves.map((l) => [l.node_id, l.factor_id, l.question_id, l.sign, l.weight]));
  await insertRows(
    conn,
    '_factor_rule_terms',
    'VVIIIVVID',
    flat.rules.map((r) => [r.node_id, r.factor_id, r.rule_ord, r.n_groups, r.group_ord, r.term, r.categories, r.sign, r.weight]),
  );
  await conn.run(
    'CREATE OR REPLACE TEMP TABLE _health_params AS SELECT $frd::DOUBLE AS failure_rate_degraded, $frf::DOUBLE AS failure_rate_failing, ' +
      '$sph::DOUBLE AS stale_price_hours, $ssd::DOUBLE AS stale_share_degraded, $ssf::DOUBLE AS stale_share_failing, ' +
      '$sad::DOUBLE AS snapshot_age_degraded_hours, $saf::DOUBLE AS snapshot_age_failing_hours, ' +
      '$cov::DOUBLE AS coverage_degraded, $tol::DOUBLE AS coherence_tolerance, $sync::VARCHAR AS sync_report',
    {
      frd: h.failureRateDegraded,
      frf: h.failureRateFailing,
      sph: h.stalePriceHours,
      ssd: h.staleShareDegraded,
      ssf: h.staleShareFailing,
      sad: h.snapshotAgeDegradedHours,
      saf: h.snapshotAgeFailingHours,
      cov: h.coverageDegraded,
      tol: h.coherenceTolerance,
      sync: opts.syncReport ?? null,
    },
  );
  return factors;
}
