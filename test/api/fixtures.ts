/**
 * Fixture snapshots for the API tests: small derived tables with known values, written as real
 * Parquet by DuckDB with the columns of sql/README.md, plus manifest.json and CURRENT.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, LIST, VARCHAR, listValue, type DuckDBPreparedStatement } from '@duckdb/node-api';
import type { DuckType } from '../../pipeline/warehouse/tables.ts';
import { memTempDir } from '../helpers/mem-temp-dir.ts';

/** The warehouse's column types (pipeline/warehouse/tables.ts), DuckDB DDL as written. */
type ColType = DuckType;
type Row = Record<string, string | number | boolean | null | string[]>;

const V = 'VARCHAR';
const D = 'DOUBLE';
const B = 'BIGINT';
const TS = 'TIMESTAMP';
const VL = 'VARCHAR[]';

export const SCHEMAS: Record<string, Record<string, ColType>> = {
  // issue 10 (empty unless a test fills them): the columns the scoring-analysis routes read
  leaderboard: {
    mode: V, rounds: V, dimension: V, key: V, forecaster: V, kind: V, rank: B, is_best: 'BOOLEAN', n: B,
    brier: D, brier_ci95_lo: D, brier_ci95_hi: D, brier_adjusted: D, log_loss: D, n_directional: B,
    accuracy_pct: D, ece: D, vs_market_n: B, vs_market_diff: D, vs_market_ci95_lo: D, vs_market_ci95_hi: D,
    best: V, vs_best_n: B, vs_best_diff: D, vs_best_ci95_lo: D, vs_best_ci95_hi: D, tied_with_best: 'BOOLEAN',
    n_questions: B, sufficient: 'BOOLEAN',
  },
  // the source of the leaderboard's `since` filter (sql/api/leaderboard-since.sql)
  leaderboard_observations: {
    mode: V, forecaster: V, question_id: V, resolved_at: TS, grp: 'INTEGER', category: V, domain: V, horizon_bucket: V,
    b_l: D, ll_l: D, c_l: D, bin: 'INTEGER', err: D, dev_l: D, dm_l: D, b_a: D, ll_a: D, c_a: D, dev_a: D, dm_a: D,
    bin_a: 'INTEGER', err_a: D,
  },
  bootstrap_weights: { replicate: 'INTEGER', grp: 'INTEGER', w: 'INTEGER' },
  disagreement: {
    mode: V, rounds: V, n: B, spearman: D, spearman_ci95_lo: D, spearman_ci95_hi: D, predicts_error: V,
    n_directional: B, n_wrong: B, auroc_wrong_direction: D,
  },
  disagreement_quintiles: {
    mode: V, rounds: V, quintile: 'INTEGER', n: B, sd_min: D, sd_max: D, mean_abs_error: D, brier: D,
    brier_ci95_lo: D, brier_ci95_hi: D, n_directional: B, accuracy_pct: D,
  },
  information_value: {
    rounds: V, dimension: V, key: V, forecaster: V, kind: V, comparison: V, n: B, brier_from: D, brier_to: D,
    value: D, value_ci95_lo: D, value_ci95_hi: D,
  },
  anchoring: {
    rounds: V, forecaster: V, kind: V, mode: V, n_market: B, corr_market: D, mean_abs_diff_market: D, n_slope: B, slope: D,
    slope_ci95_lo: D, slope_ci95_hi: D,
  },
  resolution_sources: {
    source_slug: V, name: V, kind: V, resolutions: B, annulled: B, amended: B, changed: B, share_changed: D,
    median_lag_days: D, n_lag: B,
  },
  // issue 11 (empty unless a test fills them): the claims database and track records (sql/derive/90-94)
  claims: {
    claim_id: V, source_slug: V, made_at: TS, question_id: V, subject: V, subject_key: V, category: V, kind: V,
    probability: D, side: V, value: D, unit: V, threshold: D, tolerance: D, horizon_days: D, outcome: D,
    realized_value: D, resolved_at: TS, provenance_dataset: V, provenance_file: V, provenance_line: B, claim_text: V,
    reference_probability: D, origin: V, resolved: 'BOOLEAN', hit: D, brier: D, log_loss: D, reference_brier: D,
    error: D, within_tolerance: 'BOOLEAN', reference_value: D, year: 'INTEGER', horizon_bucket: V,
  },
  claim_sources: { source_slug: V, name: V, kind: V, url: V, description: V, attribution: V, categories: VL },
  // issue 12 (empty unless a test fills them): thesis maps (sql/derive/96-98)
  theses: {
    thesis_id: V, origin: V, statement: V, label: V, n_members: B, n_active: B, n_resolved: B, n_with_consensus: B,
    n_with_market: B, consensus: D, consensus_logit: D, market_consensus: D, market_consensus_logit: D, gap_vs_market: D,
    spread: D, disagreement: D, as_of: TS,
  },
  thesis_members: {
    thesis_id: V, question_id: V, sign: 'INTEGER', weight: D, title: V, venue: V, url: V, category: V, status: V,
    outcome: D, resolved_at: TS, consensus: D, disagreement_sd: D, n_models: B, mode: V, consensus_run_id: V,
    market_probability: D, market_observed_at: TS, signed_consensus: D, signed_market: D,
  },
  thesis_vintage_scores: {
    thesis_id: V, run_id: V, as_of: TS, origin: V, statement: V, n_members: B, n_with_consensus: B, thesis_consensus: D,
    thesis_market_consensus: D, content_hash: V, n_resolved: B, brier: D, market_brier: D, realized: D,
    direction_held: 'BOOLEAN',
  },
  thesis_vintage_members: {
    thesis_id: V, run_id: V, as_of: TS, question_id: V, sign: 'INTEGER', weight: D, member_consensus: D,
    member_market_probability: D, outcome: D, resolved_at: TS, brier: D, market_brier: D,
  },
  // issue 12 (empty unless a test fills them): factors and health (sql/derive/99_factor_*); factor_health's
  // stale_leaves (a list of structs) is left out: the route reads it as [] when absent
  factors: {
    factor_id: V, name: V, statement: V, description: V, n_leaves: B, n_active: B, n_resolved: B, n_with_consensus: B, n_with_previous: B, n_with_market: B, level: D, level_logit: D, previous_level: D, change: D, market_level: D, gap_vs_market: D, n_drivers: B, n_levels: 'INTEGER', categories: VL, n_attached_by_rules: B, as_of: TS,
  },
  factor_nodes: {
    node_id: V, factor_id: V, parent_id: V, depth: 'INTEGER', ord: 'INTEGER', name: V, description: V, n_leaves: B, n_active: B, n_resolved: B, n_with_consensus: B, n_with_previous: B, n_with_market: B, level: D, level_logit: D, previous_level: D, change: D, market_level: D, gap_vs_market: D, as_of: TS,
  },
  factor_leaves: {
    factor_id: V, node_id: V, question_id: V, sign: 'INTEGER', weight: D, origin: V, rule_ord: 'INTEGER', title: V, venue: V, url: V, category: V, status: V, outcome: D, resolved_at: TS, consensus: D, mode: V, consensus_run_id: V, forecast_at: TS, n_models: 'INTEGER', disagreement_sd: D, previous_consensus: D, previous_run_id: V, market_probability: D, market_observed_at: TS, signed_consensus: D, signed_previous_consensus: D, signed_market: D, last_forecast_at: TS, models_latest_run: B,
  },
  factor_health: {
    factor_id: V, name: V, n_leaves: B, n_active: B, n_resolved: B, n_covered: B, coverage: D, latest_run_models: B, latest_run_id: V, newest_forecast_at: TS, newest_forecast_age_hours: D, newest_price_at: TS, newest_price_age_hours: D, n_stale: B, n_scored: B, brier: D, market_brier: D, brier_vs_market: D, disagreement: D, market_share: D, n_contradictions: B, status: V, reasons: VL, as_of: TS,
  },
  factor_contradictions: {
    factor_id: V, question_a: V, question_b: V, kind: V, link_origin: V, consensus_a: D, consensus_b: D, violation: D,
  },
  system_health: {
    check: V, value: D, degraded_at: D, failing_at: D, status: V, detail: V, as_of: TS,
  },
  // issue 13 (empty unless a test fills them): scenarios (sql/derive/99_scenario_*)
  scenarios: {
    scenario_id: V, title: V, description: V, n_components: 'INTEGER', n_worlds: 'INTEGER', n_resolved: 'INTEGER', resolved_pattern: V, status: V, n_models: 'INTEGER', methods: V, top_world: V, top_probability: D, n_records: 'INTEGER', latest_run_id: V, latest_record_as_of: TS, first_record_as_of: TS, as_of: TS,
  },
  scenario_components: {
    scenario_id: V, ord: 'INTEGER', question_id: V, label: V, title: V, venue: V, url: V, category: V, status: V, outcome: D, resolved_at: TS, implied: D, direct: D, coherence_gap: D,
  },
  scenario_worlds: {
    scenario_id: V, source: V, model: V, method: V, world: V, world_ix: 'INTEGER', probability: D, disagreement_sd: D, n_models: 'INTEGER', rank: 'INTEGER', consistent: 'BOOLEAN', conditional_probability: D,
  },
  scenario_marginals: {
    scenario_id: V, source: V, model: V, method: V, ord: 'INTEGER', question_id: V, implied: D, direct: D, coherence_gap: D,
  },
  scenario_record_scores: {
    scenario_id: V, run_id: V, as_of: TS, n_resolved: 'INTEGER', resolved_pattern: V, complete: 'BOOLEAN', realized_world: V, realized_probability: D, log_score: D, brier: D, component_brier: D, consistent_mass: D, partial_log_score: D,
  },
  scenario_records: {
    scenario_id: V, run_id: V, as_of: TS, title: V, components: V, content_hash: V, n_models: 'INTEGER', methods: V, n_components: 'INTEGER', n_worlds: 'INTEGER', top_world: V, top_probability: D, probabilities: 'DOUBLE[]', disagreement_sd: 'DOUBLE[]', marginals: 'DOUBLE[]',
  },
  track_records: {
    source_slug: V, name: V, kind: V, url: V, description: V, attribution: V, categories: VL, n_claims: B,
    n_resolved: B, n_directional: B, hits: D, accuracy_score: D, accuracy_ci95_lo: D, accuracy_ci95_hi: D,
    shrunk_score: D, prior_score: D, prior_weight: D, ranked: 'BOOLEAN', rank: B, n_probability: B, brier: D,
    log_loss: D, n_value: B, value_unit: V, value_units: 'INTEGER', mae: D, bias: D, share_within: D, n_reference_probability: B, brier_skill: D,
    n_reference_value: B, value_skill: D, first_claim_at: TS, last_claim_at: TS,
  },
  track_record_calibration: { source_slug: V, bin: 'INTEGER', n: B, mean_probability: D, observed: D },
  track_record_horizons: {
    source_slug: V, horizon_bucket: V, min_horizon_days: D, n_resolved: B, n_directional: B, accuracy_score: D,
    n_probability: B, brier: D, n_value: B, value_unit: V, value_units: 'INTEGER', mae: D, bias: D, share_within: D,
  },
  track_record_trends: {
    source_slug: V, year: 'INTEGER', n_resolved: B, n_directional: B, accuracy_score: D, accuracy_ci95_lo: D,
    accuracy_ci95_hi: D, n_probability: B, brier: D, log_loss: D, n_value: B, value_unit: V, value_units: 'INTEGER', mae: D, bias: D, share_within: D,
  },
  accuracy: {
    scope: V, forecaster: V, mode: V, dimension: V, key: V, n: B, brier: D, log_loss: D,
    n_directional: B, n_correct: B, n_no_direction: B, accuracy_pct: D,
  },
  ai_vs_market: {
    scope: V, n: B, ai_brier: D, market_brier: D, skill: D, diff_mean: D, diff_sd: D,
    diff_ci95_lo: D, diff_ci95_hi: D, ai_log_loss: D, market_log_loss: D,
    // issue 10's columns (sql/api/ai-vs-market.sql reads them); null unless a test sets them
    n_consensus: B, excluded_no_market: B, excluded_stale_market: B, n_directional: B, excluded_no_direction: B,
    ai_accuracy_pct: D, market_accuracy_pct: D,
  },
  ai_vs_market_breakdown: {
    scope: V, dimension: V, key: V, n: B, ai_brier: D, market_brier: D, skill: D, diff_mean: D, diff_sd: D,
    diff_ci95_lo: D, diff_ci95_hi: D, ai_log_loss: D, market_log_loss: D, n_consensus: B,
    excluded_no_market: B, excluded_stale_market: B, n_directional: B, excluded_no_direction: B,
    ai_accuracy_pct: D, market_accuracy_pct: D,
  },
  headline_leaderboard: {
    forecaster: V, n: B, brier: D, log_loss: D, accuracy_pct: D, ece: D, rank: 'INTEGER',
  },
  calibration: {
    forecaster: V, mode: V, bin: 'INTEGER', bin_lo: D, bin_hi: D, n: B, mean_p: D, observed: D,
    wilson_lo: D, wilson_hi: D,
  },
  calibration_summary: {
    forecaster: V, mode: V, n: B, brier: D, log_loss: D, accuracy_pct: D, ece: D, reliability: D,
    resolution: D, uncertainty: D, base_rate: D,
  },
  questions: {
    question_id: V, venue: V, category: V, domain: V, status: V, close_time: TS,
    // the other columns of sql/README.md (prediction detail, lifecycle)
    venue_market_id: V, title: V, description: V, resolution_criteria: V, url: V, tags: VL,
    created_at: TS, outcome: D, resolved_at: TS, annulled_reason: V, source_slug: V, source_name: V,
    source_kind: V, source_url: V, evidence_excerpt: V, retrieved_at: TS, resolution_method: V,
    latest_market_probability: D, latest_market_observed_at: TS, lang: V,
  },
  consensus: {
    question_id: V, mode: V, run_id: V, created_at: TS, n_models: B,
    mean: D, median: D, logit_mean: D, sd: D, range: D, sd_logit: D, providers: V,
  },
  resolved_predictions: {
    question_id: V, venue: V, venue_market_id: V, title: V, category: V, domain: V, mode: V,
    consensus: D, consensus_median: D, consensus_logit_mean: D, n_models: B, disagreement_sd: D,
    disagreement_range: D, disagreement_sd_logit: D, market_probability: D, outcome: D, ai_error: D, market_error: D,
    forecast_at: TS, resolved_at: TS, horizon_bucket: V, source_slug: V, source_name: V,
    source_url: V, evidence_excerpt: V, retrieved_at: TS, providers: V, market_observed_at: TS,
    market_status: V, market_age_days: D,
  },
  // What a resolved question's detail shows (rows: test/api/content-fixes.test.ts; empty elsewhere).
  scored_consensus: {
    question_id: V, mode: V, run_id: V, created_at: TS, n_models: 'INTEGER', probability: D, median: D,
    logit_mean: D, sd: D, range: D, sd_logit: D, providers: V, outcome: D, resolved_at: TS, brier: D,
    log_loss: D, direction: V, tier: V, horizon_days: D, horizon_bucket: V, category: V, domain: V,
    market_probability: D, market_observed_at: TS, market_brier: D, market_log_loss: D, is_headline: 'BOOLEAN',
  },
  scored_forecasts: {
    question_id: V, model: V, mode: V, run_id: V, created_at: TS, probability: D, provider: V, outcome: D,
    resolved_at: TS, brier: D, log_loss: D, direction: V, tier: V, horizon_days: D, horizon_bucket: V,
    category: V, domain: V, market_probability: D, market_observed_at: TS, market_brier: D, market_log_loss: D,
  },
  scored_forecast_texts: {
    question_id: V, mode: V, model: V, lang: V, run_id: V, created_at: TS, probability: D, reasoning: V,
    key_factors: VL, evidence_ids: VL, provider: V, translation_of: V,
  },
  // The prediction feeds (rows: feedRows(); fixtureData() leaves them empty).
  lifecycle: { question_id: V, state: V, at: TS, reason: V, seq: B },
  taxonomy_history: {
    question_id: V, seq: B, since: TS, change: V, category: V, domain: V, tags: VL,
    previous_category: V, previous_domain: V, previous_tags: VL,
  },
  edges: {
    question_id: V, venue: V, venue_market_id: V, title: V, url: V, category: V, domain: V, close_time: TS,
    mode: V, run_id: V, forecast_at: TS, consensus: D, n_models: 'INTEGER', disagreement_sd: D,
    disagreement_range: D, disagreement_sd_logit: D, market_probability: D, market_observed_at: TS,
    market_age_hours: D, liquidity: D, volume: D, edge: D, abs_edge: D, direction: V, providers: V,
  },
  latest_forecasts: {
    question_id: V, mode: V, model: V, lang: V, run_id: V, created_at: TS, probability: D, reasoning: V,
    key_factors: VL, evidence_ids: VL, provider: V, translation_of: V,
  },
  evidence_used: {
    question_id: V, evidence_id: V, title: V, url: V, published_at: TS, retrieved_at: TS, snippet: V,
    source_slug: V, source_name: V, source_kind: V, evidence_question_id: V, n_forecasts: B, modes: VL,
  },
  active_predictions: {
    question_id: V, venue: V, venue_market_id: V, title: V, url: V, category: V, domain: V, tags: VL,
    created_at: TS, close_time: TS, question_lang: V, mode: V, run_id: V, forecast_at: TS, consensus: D,
    consensus_median: D, consensus_logit_mean: D, n_models: 'INTEGER', disagreement_sd: D,
    disagreement_range: D, disagreement_sd_logit: D, providers: V, market_probability: D,
    market_observed_at: TS, langs: VL,
  },
};

export type FixtureData = Record<keyof typeof SCHEMAS, Row[]>;

/**
 * `questions` (the columns service_stats reads) and `consensus`: 12 questions over two categories
 * and three venues; statuses active ×5, closed ×1, resolved ×5, annulled ×1; 10 have a consensus,
 * 7 of them with all four models in their latest run (q:a3's latest run has 3, an older one 4).
 */
export function coverageRows(): { questions: Row[]; consensus: Row[] } {
  const statuses = ['active', 'active', 'active', 'active', 'active', 'closed', 'resolved', 'resolved', 'resolved', 'resolved', 'resolved', 'annulled'];
  const questions: Row[] = statuses.map((status, i) => ({
    question_id: `q:a${i}`,
    venue: VENUES[i % 3]!,
    category: i < 6 ? 'politics' : 'crypto',
    domain: i < 6 ? 'policy' : 'crypto',
    status,
    close_time: '2025-06-01 00:00:00',
  }));
  const consensus: Row[] = [];
  for (let i = 0; i < 10; i++) {
    const latestModels = i === 3 ? 3 : i >= 7 ? 2 : 4;
    consensus.push({ question_id: `q:a${i}`, mode: 'augmented', run_id: 'r2', created_at: '2025-03-02 00:00:00', n_models: latestModels });
    consensus.push({ question_id: `q:a${i}`, mode: 'augmented', run_id: 'r1', created_at: '2025-03-01 00:00:00', n_models: 4 });
  }
  return { questions, consensus };
}

/**
 * A row of ai_vs_market_breakdown: n pairs of the bucket (n_consensus = n + 1, the one excluded as
 * stale), the AI's and the market's Brier on them, every pair directional.
 */
function avm(scope: string, dimension: string, key: string, n: number, ai: number, market: number, aiCorrect: number, marketCorrect: number): Row {
  return {
    scope, dimension, key, n, ai_brier: ai, market_brier: market, skill: 1 - ai / market, diff_mean: ai - market,
    diff_sd: 0.1, diff_ci95_lo: ai - market - 0.05, diff_ci95_hi: ai - market + 0.05, ai_log_loss: ai * 3,
    market_log_loss: market * 3, n_consensus: n + 1, excluded_no_market: 0, excluded_stale_market: 1,
    n_directional: n, excluded_no_direction: 0, ai_accuracy_pct: (100 * aiCorrect) / n,
    market_accuracy_pct: (100 * marketCorrect) / n,
  };
}

function acc(
  scope: string, forecaster: string, mode: string, dimension: string, key: string,
  n: number, brier: number, correct: number, noDir = 0,
): Row {
  const directional = n - noDir;
  return {
    scope, forecaster, mode, dimension, key, n, brier, log_loss: brier * 3,
    n_directional: directional, n_correct: correct, n_no_direction: noDir,
    accuracy_pct: directional > 0 ? (100 * correct) / directional : null,
  };
}

/**
 * The data of one fixture snapshot. `scale` changes the figures so that swapping snapshots is
 * visible (variant 1: total_resolved 20; variant 2: total_resolved 40).
 */
export function fixtureData(variant: 1 | 2 = 1): FixtureData {
  const k = variant; // multiplies counts
  const b = variant === 1 ? 0 : -0.05; // shifts Briers
  const accuracy: Row[] = [
    // AI headline consensus, scope all
    acc('all', 'consensus', 'headline', 'overall', 'all', 20 * k, 0.18 + b, 14 * k, 1 * k),
    acc('all', 'consensus', 'headline', 'category', 'crypto', 8 * k, 0.15 + b, 6 * k),
    acc('all', 'consensus', 'headline', 'category', 'politics', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('all', 'consensus', 'headline', 'domain', 'policy', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('all', 'consensus', 'headline', 'domain', 'crypto', 8 * k, 0.15 + b, 6 * k),
    acc('all', 'consensus', 'headline', 'horizon', '8-30', 5 * k, 0.3 + b, 3 * k),
    acc('all', 'consensus', 'headline', 'horizon', '0-7', 15 * k, 0.14 + b, 11 * k, 1 * k),
    acc('all', 'consensus', 'headline', 'tier', 'medium', 6 * k, 0.2 + b, 4 * k),
    acc('all', 'consensus', 'headline', 'tier', 'high', 6 * k, 0.08 + b, 6 * k),
    acc('all', 'consensus', 'headline', 'tier', 'low', 8 * k, 0.24 + b, 4 * k, 1 * k),
    acc('all', 'consensus', 'headline', 'model', 'model-b', 20 * k, 0.2 + b, 13 * k),
    acc('all', 'consensus', 'headline', 'model', 'model-a', 20 * k, 0.19 + b, 14 * k),
    acc('all', 'consensus', 'headline', 'mode', 'augmented', 20 * k, 0.18 + b, 14 * k),
    acc('all', 'consensus', 'headline', 'mode', 'blind', 20 * k, 0.23 + b, 12 * k),
    acc('all', 'consensus', 'headline', 'mode', 'informed', 20 * k, 0.2 + b, 13 * k),
    // market comparators of the headline consensus, scope all
    acc('all', 'market', 'headline', 'overall', 'all', 18 * k, 0.21, 12 * k),
    acc('all', 'market', 'headline', 'category', 'crypto', 7 * k, 0.19, 5 * k),
    acc('all', 'market', 'headline', 'category', 'politics', 11 * k, 0.22, 7 * k),
    acc('all', 'market', 'headline', 'domain', 'policy', 11 * k, 0.22, 7 * k),
    acc('all', 'market', 'headline', 'domain', 'crypto', 7 * k, 0.19, 5 * k),
    acc('all', 'market', 'headline', 'horizon', '0-7', 13 * k, 0.17, 9 * k),
    acc('all', 'market', 'headline', 'horizon', '8-30', 5 * k, 0.31, 3 * k),
    acc('all', 'market', 'headline', 'tier', 'low', 9 * k, 0.25, 4 * k),
    acc('all', 'market', 'blind', 'overall', 'all', 18 * k, 0.215, 12 * k),
    acc('all', 'market', 'informed', 'overall', 'all', 18 * k, 0.212, 12 * k),
    acc('all', 'market', 'augmented', 'overall', 'all', 18 * k, 0.21, 12 * k),
    acc('all', 'market', 'augmented', 'tier', 'low', 9 * k, 0.25, 4 * k),
    // a model, per mode
    acc('all', 'model-a', 'augmented', 'overall', 'all', 20 * k, 0.19 + b, 14 * k),
    acc('all', 'model-a', 'augmented', 'tier', 'high', 10 * k, 0.1 + b, 9 * k),
    acc('all', 'model-a', 'augmented', 'tier', 'low', 10 * k, 0.28 + b, 5 * k),
    acc('all', 'model-a', 'augmented', 'domain', 'policy', 12 * k, 0.2 + b, 8 * k),
    acc('all', 'model-a', 'augmented', 'domain', 'crypto', 8 * k, 0.17 + b, 6 * k),
    acc('all', 'model-a', 'blind', 'overall', 'all', 20 * k, 0.24 + b, 11 * k),
    // the consensus per mode, scope all (non-headline rows must not leak into the summary)
    acc('all', 'consensus', 'augmented', 'overall', 'all', 20 * k, 0.18 + b, 14 * k),
    acc('all', 'consensus', 'augmented', 'category', 'politics', 99, 0.99, 1),
    // scope politics
    acc('politics', 'consensus', 'headline', 'overall', 'all', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('politics', 'consensus', 'headline', 'category', 'politics', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('politics', 'consensus', 'headline', 'domain', 'policy', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('politics', 'consensus', 'headline', 'mode', 'augmented', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('politics', 'market', 'headline', 'overall', 'all', 11 * k, 0.22, 7 * k),
    acc('politics', 'market', 'headline', 'category', 'politics', 11 * k, 0.22, 7 * k),
    // scope crypto
    acc('crypto', 'consensus', 'headline', 'overall', 'all', 8 * k, 0.15 + b, 6 * k),
  ];

  const ai_vs_market: Row[] = [
    {
      scope: 'all', n: 18 * k, ai_brier: 0.17 + b, market_brier: 0.21, skill: 1 - (0.17 + b) / 0.21,
      diff_mean: 0.17 + b - 0.21, diff_sd: 0.1, diff_ci95_lo: 0.17 + b - 0.21 - 0.05,
      diff_ci95_hi: 0.17 + b - 0.21 + 0.05, ai_log_loss: 0.5, market_log_loss: 0.6,
    },
    {
      scope: 'politics', n: 1, ai_brier: 0.2, market_brier: 0.22, skill: 1 - 0.2 / 0.22,
      diff_mean: -0.02, diff_sd: null, diff_ci95_lo: null, diff_ci95_hi: null, ai_log_loss: 0.55, market_log_loss: 0.61,
    },
  ];

  // the same questions on both sides: fewer than the AI's own n of the bucket
  const ai_vs_market_breakdown: Row[] = [
    avm('all', 'category', 'politics', 11 * k, 0.19 + b, 0.22, 8 * k, 7 * k),
    avm('all', 'category', 'crypto', 7 * k, 0.14 + b, 0.19, 6 * k, 5 * k),
    avm('all', 'domain', 'policy', 11 * k, 0.19 + b, 0.22, 8 * k, 7 * k),
    avm('all', 'domain', 'crypto', 7 * k, 0.14 + b, 0.19, 6 * k, 5 * k),
    avm('all', 'horizon', '0-7', 13 * k, 0.16 + b, 0.17, 10 * k, 9 * k),
    avm('all', 'horizon', '8-30', 5 * k, 0.3 + b, 0.31, 3 * k, 3 * k),
    avm('all', 'mode', 'blind', 18 * k, 0.225 + b, 0.215, 12 * k, 12 * k),
    avm('all', 'mode', 'informed', 18 * k, 0.2 + b, 0.212, 12 * k, 12 * k),
    avm('all', 'mode', 'augmented', 18 * k, 0.17 + b, 0.21, 13 * k, 12 * k),
    avm('politics', 'category', 'politics', 11 * k, 0.19 + b, 0.22, 8 * k, 7 * k),
  ];

  const calibration: Row[] = [];
  const calibration_summary: Row[] = [];
  for (const [forecaster, mode, base] of [
    ['consensus', 'headline', 0.18 + b],
    ['market', 'headline', 0.21],
    ['model-a', 'augmented', 0.19 + b],
  ] as const) {
    for (let bin = 0; bin < 10; bin++) {
      const empty = bin === 3;
      calibration.push({
        forecaster, mode, bin, bin_lo: bin / 10, bin_hi: (bin + 1) / 10, n: empty ? 0 : 2 * k,
        mean_p: empty ? null : bin / 10 + 0.05, observed: empty ? null : bin / 10,
        wilson_lo: empty ? null : Math.max(0, bin / 10 - 0.2), wilson_hi: empty ? null : Math.min(1, bin / 10 + 0.2),
      });
    }
    calibration_summary.push({
      forecaster, mode, n: 18 * k, brier: base, log_loss: base * 3, accuracy_pct: 70, ece: 0.05,
      reliability: 0.01, resolution: 0.08, uncertainty: 0.25, base_rate: 0.5,
    });
  }

  return {
    accuracy, ai_vs_market, ai_vs_market_breakdown, calibration, calibration_summary,
    // every forecaster on the same 17 questions (ranked by Brier)
    headline_leaderboard: [
      { forecaster: 'consensus', n: 17 * k, brier: 0.17 + b, log_loss: 0.5, accuracy_pct: 70.59, ece: 0.05, rank: 1 },
      { forecaster: 'market', n: 17 * k, brier: 0.21, log_loss: 0.6, accuracy_pct: 64.71, ece: 0.06, rank: 2 },
    ],
    resolved_predictions: resolvedRows(variant),
    ...coverageRows(),
  };
}

const VENUES = ['polymarket', 'kalshi', 'manifold'] as const;

/** 23 resolved predictions (variant 2 adds 2), with tied resolved_at and one NULL resolved_at. */
export function resolvedRows(variant: 1 | 2 = 1): Row[] {
  const rows: Row[] = [];
  const n = variant === 1 ? 23 : 25;
  for (let i = 0; i < n; i++) {
    // Groups of three share a resolved_at: ties are ordered by question_id ascending.
    const day = 1 + Math.floor(i / 3);
    const resolvedAt =
      i === 22 ? null : i === 21 ? '2025-03-28 12:00:00.000123' : `2025-03-${String(day).padStart(2, '0')} 12:00:00`;
    const category = i % 2 === 0 ? 'politics' : 'crypto';
    rows.push({
      question_id: `q:${i}`,
      venue: VENUES[i % 3]!,
      venue_market_id: `m-${i}`,
      title: i === 5 ? 'Will "quotes" and ünïcødé — survive?' : `Question ${i}`,
      category,
      domain: category === 'politics' ? 'policy' : 'crypto',
      mode: 'augmented',
      consensus: 0.6,
      consensus_median: 0.62,
      consensus_logit_mean: 0.61,
      n_models: 4,
      disagreement_sd: 0.05,
      disagreement_range: 0.12,
      disagreement_sd_logit: 0.21,
      market_probability: i === 7 ? null : 0.55,
      // 12 h before forecast_at (fresh); q:1's 3 days before (stale under the default 48 h)
      market_observed_at: i === 7 ? null : i === 1 ? '2025-01-29 00:00:00' : '2025-01-31 12:00:00',
      // q:7 had no price at all (none); the others a comparator within the maximum age (ok)
      market_status: i === 7 ? 'none' : 'ok',
      market_age_days: i === 7 ? null : i === 1 ? 3 : 0.5,
      outcome: i % 4 === 0 ? 0 : 1,
      ai_error: i % 4 === 0 ? 0.36 : 0.16,
      market_error: i === 7 ? null : i % 4 === 0 ? 0.3025 : 0.2025,
      forecast_at: '2025-02-01 00:00:00',
      resolved_at: resolvedAt,
      horizon_bucket: '31-90',
      source_slug: 'fred',
      source_name: 'FRED',
      source_url: 'https://fred.stlouisfed.org/',
      evidence_excerpt: `excerpt ${i}`,
      retrieved_at: '2025-04-01 00:00:00',
      providers: i === 3 ? 'openai,simulated' : 'simulated',
    });
  }
  return rows;
}

function bindCell(stmt: DuckDBPreparedStatement, index: number, value: Row[string]): void {
  if (value === null) stmt.bindNull(index);
  else if (Array.isArray(value)) stmt.bindList(index, listValue(value), LIST(VARCHAR));
  else if (typeof value === 'string') stmt.bindVarchar(index, value);
  else if (typeof value === 'boolean') stmt.bindBoolean(index, value);
  else stmt.bindDouble(index, value);
}

/** Writes `<dataDir>/snapshots/<id>/` with every table of `data` as Parquet plus manifest.json. */
export async function writeSnapshot(
  dataDir: string,
  id: string,
  data: FixtureData,
  opts: { asOf?: string; createdAt?: string; omitTables?: string[] } = {},
): Promise<string> {
  const dir = path.join(dataDir, 'snapshots', id);
  await mkdir(dir, { recursive: true });
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const tables: string[] = [];
  try {
    for (const [table, columns] of Object.entries(SCHEMAS)) {
      if (opts.omitTables?.includes(table)) continue;
      const names = Object.keys(columns);
      await conn.run(`CREATE TABLE "${table}" (${names.map((c) => `"${c}" ${columns[c]}`).join(', ')})`);
      const stmt = await conn.prepare(
        `INSERT INTO "${table}" SELECT ${names.map((c, i) => `CAST($${i + 1} AS ${columns[c]})`).join(', ')}`,
      );
      for (const row of data[table as keyof FixtureData] ?? []) {
        names.forEach((c, i) => bindCell(stmt, i + 1, row[c] ?? null));
        await stmt.run();
      }
      stmt.destroySync();
      const file = path.join(dir, `${table}.parquet`).replaceAll("'", "''");
      await conn.run(`COPY "${table}" TO '${file}' (FORMAT parquet)`);
      tables.push(table);
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  const asOf = opts.asOf ?? '2025-04-02T00:00:00.000Z';
  await writeFile(
    path.join(dir, 'manifest.json'),
    JSON.stringify({
      run_id: id,
      as_of: asOf,
      created_at: opts.createdAt ?? '2025-04-02T00:05:00.000Z',
      tables,
      headline_modes: ['augmented', 'informed', 'blind'],
    }),
  );
  return dir;
}

/** Points CURRENT at `id` the way the pipeline does: write a temp file, then rename. */
export async function publish(dataDir: string, id: string): Promise<void> {
  const tmp = path.join(dataDir, `.CURRENT.${process.pid}.${Date.now()}`);
  await writeFile(tmp, `${id}\n`);
  await rename(tmp, path.join(dataDir, 'CURRENT'));
}

/**
 * A fresh data directory; `memory`: in memory (test/helpers/mem-temp-dir.ts), for a file whose
 * requests write durably again and again (keys, usage, the probability endpoint's records), where
 * every fsync on the disk of a busy machine waited.
 */
export async function tempDataDir(opts: { memory?: boolean } = {}): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  if (opts.memory) {
    const t = memTempDir('quorum-api-');
    return { dir: t.dir, cleanup: async () => t.cleanup() };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'quorum-api-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------------------------------------
// The prediction feeds: lifecycle, edges, latest_forecasts, evidence_used, active_predictions, and
// the questions/consensus/resolved_predictions rows they refer to (as_of 2025-04-02T00:00:00Z).

export const FEED = {
  /** Active, augmented headline (r2, 2025-04-01T20:00), reasoning in en and fr, market 0.40. */
  a: 'polymarket:0xabc123',
  /** Active, informed headline (r2, 2025-04-01T20:00: ties with `a`), en only, no market price. */
  b: 'metaculus:1554',
  /** Active, augmented headline (r1, 2025-03-31), en and pt-BR, no close time. */
  c: 'manifold:hkmwaaZrisxgrs5Q3zGz',
  /** Active, blind headline (r2, 2025-04-01T12:00), de only. */
  d: 'kalshi:KXFED-25DEC',
  /** Active; shares the venue market id `dup1` with the closed `dupClosed`; its price is 7 days old (stale). */
  dup: 'polymarket:dup1',
  dupClosed: 'manifold:dup1',
  /** Resolved YES on 2025-03-20 (FRED), headline scored consensus 19 days before. */
  resolved: 'metaculus:7000',
  /** Annulled. */
  annulled: 'metaculus:7001',
  /** 24 bulk active predictions `manifold:bulk00..23` (en), three per forecast_at day. */
  bulk: 24,
} as const;

const MODELS4 = ['claude', 'deepseek', 'gemini', 'gpt'] as const;
const AS_OF_FEED = '2025-04-02 00:00:00';

function q(id: string, extra: Row): Row {
  const [venue, vmid] = id.split(':') as [string, string];
  return {
    question_id: id, venue, venue_market_id: vmid, title: `Title of ${id}`, description: `About ${id}`,
    resolution_criteria: `Resolves YES if ${id} happens.`, url: `https://example.org/${vmid}`, category: 'politics',
    domain: 'policy', tags: [], created_at: '2025-01-01 00:00:00', close_time: '2025-06-01 00:00:00', status: 'active',
    outcome: null, resolved_at: null, annulled_reason: null, source_slug: null, source_name: null, source_kind: null,
    source_url: null, evidence_excerpt: null, retrieved_at: null, resolution_method: null,
    latest_market_probability: null, latest_market_observed_at: null, lang: 'en', ...extra,
  };
}

function cons(question_id: string, mode: string, run_id: string, created_at: string, ps: number[]): Row {
  const n = ps.length;
  const mean = ps.reduce((a, b) => a + b, 0) / n;
  const sorted = [...ps].sort((x, y) => x - y);
  const median = n % 2 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  const sd = Math.sqrt(ps.reduce((a, p) => a + (p - mean) ** 2, 0) / n);
  return {
    question_id, mode, run_id, created_at, n_models: n, mean, median, logit_mean: mean, sd,
    range: sorted[n - 1]! - sorted[0]!, sd_logit: sd * 4, providers: 'simulated',
  };
}

function lf(question_id: string, mode: string, run_id: string, created_at: string, langs: string[], ps: number[], evidence: string[] = []): Row[] {
  const out: Row[] = [];
  ps.forEach((probability, i) => {
    const model = MODELS4[i]!;
    for (const lang of langs) {
      out.push({
        question_id, mode, model, lang, run_id, created_at, probability,
        reasoning: `${model} ${mode} ${lang}: reasoning about ${question_id}`,
        key_factors: [`${lang} factor 1 of ${model}`, `${lang} factor 2`], evidence_ids: evidence, provider: 'simulated',
        translation_of: lang === langs[0] ? null : langs[0]!,
      });
    }
  });
  return out;
}

function ap(qrow: Row, c: Row, langs: string[]): Row {
  return {
    question_id: qrow.question_id!, venue: qrow.venue!, venue_market_id: qrow.venue_market_id!, title: qrow.title!,
    url: qrow.url!, category: qrow.category!, domain: qrow.domain!, tags: qrow.tags!, created_at: qrow.created_at!,
    close_time: qrow.close_time!, question_lang: 'en', mode: c.mode!, run_id: c.run_id!, forecast_at: c.created_at!,
    consensus: c.mean!, consensus_median: c.median!, consensus_logit_mean: c.logit_mean!, n_models: c.n_models!,
    disagreement_sd: c.sd!, disagreement_range: c.range!, disagreement_sd_logit: c.sd_logit!, providers: c.providers!,
    market_probability: qrow.latest_market_probability!, market_observed_at: qrow.latest_market_observed_at!, langs,
  };
}

/** One edges row (consensus − market given explicitly, so that ties are exact). */
function edge(i: number, edgeValue: number, consensus: number): Row {
  const id = `polymarket:0xe${i}`;
  return {
    question_id: id, venue: 'polymarket', venue_market_id: `0xe${i}`, title: `Edge ${i}`, url: null,
    category: i % 2 ? 'crypto' : 'politics', domain: i % 2 ? 'crypto' : 'policy', close_time: '2025-05-01 00:00:00',
    mode: 'augmented', run_id: 'r2', forecast_at: '2025-04-01 20:00:00', consensus, n_models: 4, disagreement_sd: 0.05,
    disagreement_range: 0.1, disagreement_sd_logit: 0.2, market_probability: consensus - edgeValue,
    market_observed_at: '2025-04-01 18:00:00', market_age_hours: 6, liquidity: 1000 + i, volume: 5000 + i,
    edge: edgeValue, abs_edge: Math.abs(edgeValue),
    direction: edgeValue > 0 ? 'ai_above_market' : edgeValue < 0 ? 'ai_below_market' : 'none', providers: 'openai,simulated',
  };
}

/** The feed tables' rows (see FEED), plus the questions, consensus and resolved_predictions they need. */
export function feedRows(): Pick<
  FixtureData,
  | 'questions' | 'consensus' | 'resolved_predictions' | 'lifecycle' | 'taxonomy_history' | 'edges' | 'latest_forecasts' | 'evidence_used'
  | 'active_predictions' | 'scored_consensus' | 'scored_forecasts' | 'scored_forecast_texts'
> {
  const questions: Row[] = [
    q(FEED.a, { tags: ['election', 'us'], close_time: '2025-04-12 00:00:00', latest_market_probability: 0.4, latest_market_observed_at: '2025-04-01 18:00:00' }),
    q(FEED.b, { category: 'crypto', domain: 'crypto', close_time: '2025-04-05 12:00:00' }),
    q(FEED.c, { close_time: null, category: 'tech', domain: 'other' }),
    q(FEED.d, { category: 'economics', domain: 'rates', latest_market_probability: 0.7, latest_market_observed_at: '2025-04-01 00:00:00' }),
    q(FEED.dup, { latest_market_probability: 0.35, latest_market_observed_at: '2025-03-26 00:00:00' }),
    q(FEED.dupClosed, { status: 'closed', close_time: '2025-03-01 00:00:00' }),
    q(FEED.resolved, {
      status: 'resolved', close_time: '2025-03-15 00:00:00', outcome: 1, resolved_at: '2025-03-20 00:00:00',
      source_slug: 'fred', source_name: 'FRED', source_kind: 'government', source_url: 'https://fred.stlouisfed.org/series/X',
      evidence_excerpt: 'The series printed 3.1.', retrieved_at: '2025-03-21 00:00:00', resolution_method: 'api',
    }),
    q(FEED.annulled, { status: 'annulled', close_time: '2025-03-15 00:00:00', resolved_at: '2025-03-16 00:00:00', annulled_reason: 'question voided', source_slug: 'metaculus', source_name: 'Metaculus', source_kind: 'market', resolution_method: 'venue' }),
  ];
  const byId = new Map(questions.map((r) => [r.question_id as string, r]));

  const consensus: Row[] = [];
  const latest_forecasts: Row[] = [];
  const active_predictions: Row[] = [];
  const add = (id: string, mode: string, run: string, at: string, langs: string[], ps: number[], evidence: string[] = []) => {
    const c = cons(id, mode, run, at, ps);
    consensus.push(c);
    latest_forecasts.push(...lf(id, mode, run, at, langs, ps, evidence));
    return c;
  };
  // a: augmented r1 (older, not latest) and r2 (latest, headline); blind r2; informed r1.
  consensus.push(cons(FEED.a, 'augmented', 'r1', '2025-03-31 20:00:00', [0.3, 0.4, 0.5, 0.6]));
  const aHead = add(FEED.a, 'augmented', 'r2', '2025-04-01 20:00:00', ['en', 'fr'], [0.5, 0.6, 0.6, 0.7], ['ev1', 'ev2']);
  add(FEED.a, 'blind', 'r2', '2025-04-01 20:00:00', ['en'], [0.4, 0.4, 0.4, 0.4]);
  add(FEED.a, 'informed', 'r1', '2025-03-31 20:00:00', ['en'], [0.2, 0.3, 0.4, 0.5]);
  active_predictions.push(ap(byId.get(FEED.a)!, aHead, ['en', 'fr']));
  // b: informed headline (no augmented consensus).
  active_predictions.push(ap(byId.get(FEED.b)!, add(FEED.b, 'informed', 'r2', '2025-04-01 20:00:00', ['en'], [0.1, 0.2, 0.3, 0.4]), ['en']));
  // c: augmented r1, en and pt-BR; one model did not answer.
  active_predictions.push(ap(byId.get(FEED.c)!, add(FEED.c, 'augmented', 'r1', '2025-03-31 00:00:00', ['en', 'pt-BR'], [0.8, 0.9, 0.85]), ['en', 'pt-BR']));
  // d: blind only, de.
  active_predictions.push(ap(byId.get(FEED.d)!, add(FEED.d, 'blind', 'r2', '2025-04-01 12:00:00', ['de'], [0.5, 0.5, 0.5, 0.5]), ['de']));
  // dup (active): en.
  active_predictions.push(ap(byId.get(FEED.dup)!, add(FEED.dup, 'augmented', 'r2', '2025-04-01 00:00:00', ['en'], [0.3, 0.3, 0.3, 0.3]), ['en']));
  // resolved / closed: a consensus history, no latest forecasts (not active).
  consensus.push(cons(FEED.resolved, 'augmented', 'r0', '2025-03-01 00:00:00', [0.7, 0.8, 0.9, 0.6]));
  consensus.push(cons(FEED.dupClosed, 'augmented', 'r0', '2025-02-01 00:00:00', [0.5, 0.5]));
  // bulk: 24 active predictions, three per forecast_at day (ties broken by question_id).
  for (let i = 0; i < FEED.bulk; i++) {
    const id = `manifold:bulk${String(i).padStart(2, '0')}`;
    const qrow = q(id, { category: i % 2 ? 'crypto' : 'politics', domain: i % 2 ? 'crypto' : 'policy' });
    questions.push(qrow);
    const day = String(1 + Math.floor(i / 3)).padStart(2, '0');
    active_predictions.push(ap(qrow, add(id, 'augmented', 'r1', `2025-03-${day} 06:00:00`, ['en'], [0.2, 0.3, 0.4, 0.5]), ['en']));
  }

  const lifecycle: Row[] = [
    { question_id: FEED.a, state: 'proposed', at: '2025-01-01 00:00:00', reason: 'imported', seq: 1 },
    { question_id: FEED.a, state: 'active', at: '2025-01-02 00:00:00', reason: 'listed on Polymarket', seq: 2 },
    { question_id: FEED.resolved, state: 'active', at: '2025-01-01 00:00:00', reason: 'listed', seq: 1 },
    { question_id: FEED.resolved, state: 'resolved', at: '2025-03-20 00:00:00', reason: 'resolved YES by FRED', seq: 2 },
    { question_id: FEED.resolved, state: 'closed', at: '2025-03-25 00:00:00', reason: 'recorded late', seq: 3 },
  ];

  // a: first stored as world, reclassified by a later version's rules
  const taxonomy_history: Row[] = [
    { question_id: FEED.a, seq: 1, since: '2025-01-01 00:00:00', change: 'first_stored', category: 'world', domain: 'other', tags: [], previous_category: null, previous_domain: null, previous_tags: [] },
    { question_id: FEED.a, seq: 2, since: '2025-02-01 00:00:00', change: 'reclassified', category: 'politics', domain: 'policy', tags: ['election', 'us'], previous_category: 'world', previous_domain: 'other', previous_tags: [] },
  ];

  const evidence_used: Row[] = [
    {
      question_id: FEED.a, evidence_id: 'ev1', title: 'Poll shows a lead', url: 'https://news.example/1',
      published_at: '2025-03-30 00:00:00', retrieved_at: '2025-03-31 00:00:00', snippet: 'A snippet', source_slug: 'ap',
      source_name: 'Associated Press', source_kind: 'secondary_reporting', evidence_question_id: FEED.a, n_forecasts: 8,
      modes: ['augmented'],
    },
    {
      question_id: FEED.a, evidence_id: 'ev2', title: 'Undated note', url: null, published_at: null,
      retrieved_at: '2025-03-31 00:00:00', snippet: null, source_slug: null, source_name: null, source_kind: null,
      evidence_question_id: FEED.a, n_forecasts: 8, modes: ['augmented'],
    },
  ];

  const edges: Row[] = [
    edge(0, 0.25, 0.8), edge(1, -0.25, 0.3), edge(2, 0.1, 0.6), edge(3, -0.1, 0.4), edge(4, 0.1, 0.5),
    edge(5, 0.3 - 0.35, 0.3), // -0.04999999999999999: kept by the default min_edge 0.05 (rounded to 9 decimals)
    edge(6, 0.0499, 0.5),
    // 3e-7: ai_above_market in the table (its direction at 12 decimals), an edge of 0 as published
    edge(7, 3e-7, 0.5), edge(8, 0.6, 0.9), edge(9, 1, 1),
    // a price 72 h old at as_of: stale, listed only with include_stale=true
    { ...edge(10, 0.4, 0.9), market_observed_at: '2025-03-30 00:00:00', market_age_hours: 72 + 1 / 60 },
  ];

  const resolved_predictions: Row[] = [{
    question_id: FEED.resolved, venue: 'metaculus', venue_market_id: '7000', title: `Title of ${FEED.resolved}`,
    category: 'politics', domain: 'policy', mode: 'augmented', consensus: 0.75, consensus_median: 0.75,
    consensus_logit_mean: 0.75, n_models: 4, disagreement_sd: 0.11, disagreement_range: 0.3, market_probability: 0.6,
    outcome: 1, ai_error: 0.0625, market_error: 0.16, forecast_at: '2025-03-01 00:00:00', resolved_at: '2025-03-20 00:00:00',
    horizon_bucket: '8-30', source_slug: 'fred', source_name: 'FRED', source_url: 'https://fred.stlouisfed.org/series/X',
    evidence_excerpt: 'The series printed 3.1.', retrieved_at: '2025-03-21 00:00:00', providers: 'simulated',
    market_observed_at: '2025-02-26 00:00:00', // 3 days before the consensus: a stale comparator
  }];

  const scored = scoredRows();
  evidence_used.push({
    question_id: FEED.resolved, evidence_id: 'ev3', title: 'Release calendar', url: 'https://fred.example/cal',
    published_at: '2025-02-20 00:00:00', retrieved_at: '2025-02-21 00:00:00', snippet: 'CPI on the 12th',
    source_slug: 'fred', source_name: 'FRED', source_kind: 'government', evidence_question_id: FEED.resolved,
    n_forecasts: 8, modes: ['augmented'],
  });

  return {
    questions, consensus, resolved_predictions, lifecycle, taxonomy_history, edges, latest_forecasts, evidence_used, active_predictions, ...scored,
  };
}

/**
 * What FEED.resolved (resolved YES) scored: the augmented consensus of run r0 (2025-03-01, the
 * headline; comparator 0.6 observed 3 days before it: stale) and a blind one; four augmented model
 * forecasts of r0 with texts in en and fr (gpt's probability carries 10 decimals, its provider is
 * openai), and claude's blind forecast of an earlier run (rb, no texts, no comparator).
 */
export function scoredRows(): Pick<FixtureData, 'scored_consensus' | 'scored_forecasts' | 'scored_forecast_texts'> {
  const id = FEED.resolved;
  const base = {
    question_id: id, outcome: 1, resolved_at: '2025-03-20 00:00:00', category: 'politics', domain: 'policy',
    horizon_bucket: '8-30',
  };
  const scoredAt = '2025-03-01 00:00:00';
  const market = { market_probability: 0.6, market_observed_at: '2025-02-26 00:00:00', market_brier: 0.16, market_log_loss: -Math.log(0.6) };
  const ll = (p: number) => -Math.log(p);
  const scored_consensus: Row[] = [
    {
      ...base, ...market, mode: 'augmented', run_id: 'r0', created_at: scoredAt, n_models: 4, probability: 0.75, median: 0.75,
      logit_mean: 0.7601234567891, sd: Math.sqrt(0.0125), range: 0.3, sd_logit: 0.5, providers: 'openai,simulated',
      brier: 0.0625, log_loss: ll(0.75), direction: 'correct', tier: 'medium', horizon_days: 19, is_headline: true,
    },
    {
      ...base, mode: 'blind', run_id: 'rb', created_at: '2025-02-20 00:00:00', n_models: 1, probability: 0.3, median: 0.3,
      logit_mean: 0.3, sd: 0, range: 0, sd_logit: 0, providers: 'simulated', brier: 0.49, log_loss: ll(0.3),
      direction: 'wrong', tier: 'medium', horizon_days: 28, market_probability: null, market_observed_at: null,
      market_brier: null, market_log_loss: null, is_headline: false,
    },
  ];
  const ps: Array<[string, number]> = [['claude', 0.7], ['deepseek', 0.8], ['gemini', 0.9], ['gpt', 0.6123456789]];
  const scored_forecasts: Row[] = ps.map(([model, p]) => ({
    ...base, ...market, model, mode: 'augmented', run_id: 'r0', created_at: scoredAt, probability: p,
    provider: model === 'gpt' ? 'openai' : 'simulated', brier: (1 - p) ** 2, log_loss: ll(p), direction: 'correct',
    tier: 'medium', horizon_days: 19,
  }));
  scored_forecasts.push({
    ...base, model: 'claude', mode: 'blind', run_id: 'rb', created_at: '2025-02-20 00:00:00', probability: 0.3,
    provider: 'simulated', brier: 0.49, log_loss: ll(0.3), direction: 'wrong', tier: 'medium', horizon_days: 28,
    market_probability: null, market_observed_at: null, market_brier: null, market_log_loss: null,
  });
  const scored_forecast_texts: Row[] = [];
  for (const [model, p] of ps) {
    for (const lang of ['en', 'fr']) {
      scored_forecast_texts.push({
        question_id: id, mode: 'augmented', model, lang, run_id: 'r0', created_at: scoredAt, probability: p,
        reasoning: `${model} scored ${lang}: reasoning about ${id}`, key_factors: [`${lang} scored factor of ${model}`],
        evidence_ids: ['ev3'], provider: model === 'gpt' ? 'openai' : 'simulated', translation_of: lang === 'en' ? null : 'en',
      });
    }
  }
  return { scored_consensus, scored_forecasts, scored_forecast_texts };
}

/** `data` with the feed rows added (its own rows kept). */
export function withFeeds(data: FixtureData): FixtureData {
  const f = feedRows();
  const out: FixtureData = { ...data };
  for (const [table, rows] of Object.entries(f)) out[table] = [...(data[table] ?? []), ...rows];
  return out;
}

/**
 * `data` with the reasoning languages of the active predictions' runs stored under other codes:
 * `rename(question_id, code)` gives each latest_forecasts row's lang and translation_of and each
 * active_predictions row's langs (sorted, as 89_active_predictions.sql stores them) their new code.
 */
export function renameLangs(data: FixtureData, rename: (questionId: string, code: string) => string): FixtureData {
  const to = (r: Row, code: Row[string] | undefined): Row[string] => (typeof code === 'string' ? rename(r.question_id as string, code) : code ?? null);
  return {
    ...data,
    // the texts name their language (lf: `gpt augmented fr: reasoning about …`): they name the new code
    latest_forecasts: (data.latest_forecasts ?? []).map((r) => ({
      ...r, lang: to(r, r.lang), translation_of: to(r, r.translation_of),
      reasoning: typeof r.reasoning === 'string' && typeof r.lang === 'string' ? r.reasoning.replace(` ${r.lang}: `, ` ${to(r, r.lang)}: `) : r.reasoning ?? null,
    })),
    active_predictions: (data.active_predictions ?? []).map((r) => ({ ...r, langs: (r.langs as string[]).map((c) => rename(r.question_id as string, c)).sort() })),
  };
}

/**
 * The feeds as a service run with QUORUM_LANGS=pt-BR,zh-Hant would store them, no English anywhere:
 * en → pt-BR (every run's main language but d's), fr → zh-Hant (a's translation), pt-BR → he (c's
 * translation) and de → iw (d's main language: he and iw are one language, stored under two codes).
 * Languages, main first: pt-BR (28 predictions, all answered in it first), he (c and d; d's first),
 * zh-Hant (a, a translation).
 */
export function withoutEnglish(data: FixtureData): FixtureData {
  const to: Record<string, string> = { en: 'pt-BR', fr: 'zh-Hant', 'pt-BR': 'he', de: 'iw' };
  return renameLangs(data, (_q, code) => to[code] ?? code);
}

export { AS_OF_FEED };
