/**
 * The factor stage's health settings (QUORUM_HEALTH_*, QUORUM_COHERENCE_TOLERANCE), apart from the
 * stage itself (./stage.ts) so that checking them at a command's start (pipeline/stage-settings.ts)
 * loads no DuckDB: a command refused for a bad setting starts on less.
 */
import { z } from 'zod';
import { decimalNumber, envSettings } from '../env.ts';

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
