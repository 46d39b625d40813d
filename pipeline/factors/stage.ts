/**
 * The factor stage of a run (issue 12): before the derive, puts the anchor factors' trees
 * (data/structure/factors/, pipeline/factors/definitions.ts) and the health settings into the
 * connection's temp tables that sql/derive/99_factor_1_tree.sql and 99_factor_2_health.sql read.
 * The computing (leaves, levels, health) is SQL.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { z } from 'zod';
import { decimalNumber, envSettings } from '../env.ts';
import { structureDir } from '../structure/definitions.ts';
import { insertRows } from '../structure/stage.ts';
import { flattenFactors, loadFactorDefinitions, type FactorDefinition } from './definitions.ts';

const HealthEnv = z.object({
  /** Model failure rate of the latest run from which the system is degraded / failing. */
  QUORUM_HEALTH_FAILURE_RATE_DEGRADED: decimalNumber(z.number().min(0).max(1)).default(0.1),
  QUORUM_HEALTH_FAILURE_RATE_FAILING: decimalNumber(z.number().min(0).max(1)).default(0.5),
  /** A market price older than this (hours) is stale. */
  QUORUM_HEALTH_STALE_PRICE_HOURS: decimalNumber(z.number().gt(0).max(1e6)).default(48),
  /** Share of active priced questions with a stale price from which the system is degraded / failing. */
  QUORUM_HEALTH_STALE_SHARE_DEGRADED: decimalNumber(z.number().min(0).max(1)).default(0.25),
  QUORUM_HEALTH_STALE_SHARE_FAILING: decimalNumber(z.number().min(0).max(1)).default(0.75),
  /** Hours since the served snapshot was published from which the system is degraded / failing. */
  QUORUM_HEALTH_SNAPSHOT_AGE_DEGRADED_HOURS: decimalNumber(z.number().gt(0).max(1e6)).default(36),
  QUORUM_HEALTH_SNAPSHOT_AGE_FAILING_HOURS: decimalNumber(z.number().gt(0).max(1e6)).default(108),
  /** A factor whose coverage (active leaves forecast by every model of the latest run) is below this is degraded. */
  QUORUM_HEALTH_COVERAGE_DEGRADED: decimalNumber(z.number().min(0).max(1)).default(0.5),
  /** Coherence across the book: the tolerance of the complement and same_event checks (99_scenario_9_coherence.sql). */
  QUORUM_COHERENCE_TOLERANCE: decimalNumber(z.number().min(0).max(1)).default(0.05),
});

export interface HealthParams {
  failureRateDegraded: number;
  failureRateFailing: number;
  stalePriceHours: number;
  staleShareDegraded: number;
  staleShareFailing: number;
  snapshotAgeDegradedHours: number;
  snapshotAgeFailingHours: number;
  coverageDegraded: number;
  coherenceTolerance: number;
}

/** The health thresholds from the environment; a bad value (or degraded above failing) names the variable. */
export function loadHealthParams(env: NodeJS.ProcessEnv = process.env): HealthParams {
  const e = envSettings(HealthEnv, env);
  const pairs: [string, number, number][] = [
    ['QUORUM_HEALTH_FAILURE_RATE', e.QUORUM_HEALTH_FAILURE_RATE_DEGRADED, e.QUORUM_HEALTH_FAILURE_RATE_FAILING],
    ['QUORUM_HEALTH_STALE_SHARE', e.QUORUM_HEALTH_STALE_SHARE_DEGRADED, e.QUORUM_HEALTH_STALE_SHARE_FAILING],
    ['QUORUM_HEALTH_SNAPSHOT_AGE', e.QUORUM_HEALTH_SNAPSHOT_AGE_DEGRADED_HOURS, e.QUORUM_HEALTH_SNAPSHOT_AGE_FAILING_HOURS],
  ];
  for (const [name, degraded, failing] of pairs) {
    if (degraded > failing) throw new Error(`${name}_DEGRADED*: must not exceed ${name}_FAILING* (${degraded} > ${failing})`);
  }
  return {
    failureRateDegraded: e.QUORUM_HEALTH_FAILURE_RATE_DEGRADED,
    failureRateFailing: e.QUORUM_HEALTH_FAILURE_RATE_FAILING,
    stalePriceHours: e.QUORUM_HEALTH_STALE_PRICE_HOURS,
    staleShareDegraded: e.QUORUM_HEALTH_STALE_SHARE_DEGRADED,
    staleShareFailing: e.QUORUM_HEALTH_STALE_SHARE_FAILING,
    snapshotAgeDegradedHours: e.QUORUM_HEALTH_SNAPSHOT_AGE_DEGRADED_HOURS,
    snapshotAgeFailingHours: e.QUORUM_HEALTH_SNAPSHOT_AGE_FAILING_HOURS,
    coverageDegraded: e.QUORUM_HEALTH_COVERAGE_DEGRADED,
    coherenceTolerance: e.QUORUM_COHERENCE_TOLERANCE,
  };
}

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
