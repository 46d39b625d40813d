/**
 * The columns of each exportable table (`GET /api/export/{table}/`): one zod object per table, its
 * keys the columns in the order every format writes them, each with its type and a description
 * (what it is, its unit). The OpenAPI document publishes them (api/routes/export-doc.ts): a JSON
 * row is the object (component `Export<Table>Row`), the CSV header and the Parquet schema are its
 * keys. test/export/columns.test.ts exports every table of a snapshot made by the real pipeline
 * and checks that the columns served are these, name for name and in order, and of these types:
 * a column added to or removed from an sql/api/export-*.sql file (or a snapshot table it selects
 * `*` from) fails it until it is documented here.
 *
 * Written from the SQL that makes each column (sql/api/export-*.sql, sql/derive/) and README
 * "Exports". Units: probabilities, Brier scores, disagreement and shares on 0–1; log loss in nats
 * (natural log, p clipped to [0.001, 0.999], so at most 6.91); scores named `*_score` and the
 * accuracy interval in percent (0–100); days fractional. Times are UTC instants: ISO 8601 with
 * milliseconds and Z in CSV, JSON and JSONL, TIMESTAMP WITH TIME ZONE in Parquet. Lists are JSON
 * arrays in JSON/JSONL, their JSON text in a CSV cell, Parquet lists in Parquet. The values are
 * exact (full precision), not rounded as the JSON endpoints publish them.
 */
import { z } from 'zod';
import 'zod-openapi';
import { SOURCE_KINDS } from '../../pipeline/claims/formats.ts';
import { DOC, isoTime } from '../openapi/common.ts';
import type { ExportTable } from './tables.ts';

// Column builders: one per column type, so that the type documented is the type of the cell.
const text = (description: string) => z.string().nullable().meta({ description });
const textNotNull = (description: string) => z.string().meta({ description });
const time = (description: string) => isoTime.nullable().meta({ description });
const timeNotNull = (description: string) => isoTime.meta({ description });
const num = (description: string) => z.number().nullable().meta({ description });
const numNotNull = (description: string) => z.number().meta({ description });
const int = (description: string) => z.int().nullable().meta({ description });
const intNotNull = (description: string) => z.int().meta({ description });
const bool = (description: string) => z.boolean().nullable().meta({ description });
const boolNotNull = (description: string) => z.boolean().meta({ description });
const textList = (description: string) => z.array(z.string()).nullable().meta({ description });
const numList = (description: string) => z.array(z.number()).nullable().meta({ description });

/** Wordings several tables share (as DOC does for the JSON endpoints). */
const COL = {
  providers:
    'The distinct providers of the consensus\'s forecasts, sorted and joined by commas, as the snapshot stores them ' +
    '(`openai,simulated`; `simulated`: the bundled model simulator). The JSON endpoints split it into an array.',
  outcome01: 'The outcome as an integer: 1 the question resolved YES, 0 NO.',
  market_status:
    'The market comparator: ok (a price at most QUORUM_MAX_COMPARATOR_AGE_DAYS, default 7, old at the forecast), ' +
    'stale (a price existed, older: no comparison, the market_* columns null) or none (no price at or before the forecast).',
  market_age_days: 'Age in days of the latest price at or before the forecast (ok and stale; null: none).',
  horizon_bucket:
    'Days from the forecast to resolved_at, bucketed with inclusive upper bounds: 0-7, 8-30, 31-90, 91-365 or >365.',
  consensus_median: 'The median of the same models\' probabilities of YES (0–1).',
  consensus_logit_mean:
    'The inverse logit of the mean log-odds of the same probabilities, p clipped to [0.001, 0.999] (0–1).',
  disagreement_sd: 'Population standard deviation of the models\' probabilities in the consensus (probability units).',
  disagreement_range: 'max − min of the models\' probabilities in the consensus (probability units).',
  disagreement_sd_logit:
    'Population standard deviation of the models\' log-odds in the consensus, p clipped to [0.001, 0.999] (log-odds units).',
  brier: 'Brier score (p − outcome)², 0–1, lower is better.',
  log_loss: 'Log loss −ln(p\') if YES, −ln(1 − p\') if NO, p\' = p clipped to [0.001, 0.999]: in nats, 0 to 6.91, lower is better.',
} as const;

/** `predictions`: sql/api/export-predictions.sql, one row per question of the snapshot, by question_id. */
const predictions = z
  .object({
    question_id: textNotNull(DOC.question_id),
    venue: text(DOC.venue),
    venue_market_id: text(DOC.venue_market_id),
    title: text(DOC.title),
    category: text(DOC.category),
    domain: text(DOC.domain),
    status: textNotNull(DOC.status),
    url: text(DOC.url),
    created_at: time(DOC.created_at),
    close_time: time(DOC.close_time),
    mode: text(`${DOC.headline_mode} null: no consensus.`),
    consensus: num(
      'The headline consensus: the mean of the models\' probabilities of YES (0–1) in the latest run of the headline mode ' +
        '(ties: the greater run_id); null: no consensus.',
    ),
    consensus_median: num(COL.consensus_median),
    consensus_logit_mean: num(COL.consensus_logit_mean),
    n_models: int(DOC.n_models),
    disagreement_sd: num(COL.disagreement_sd),
    disagreement_range: num(COL.disagreement_range),
    disagreement_sd_logit: num(COL.disagreement_sd_logit),
    consensus_at: time(`${DOC.forecast_at} null: no consensus.`),
    consensus_run_id: text('The pipeline run that made the headline consensus (null: no consensus).'),
    providers: text(`${COL.providers} null: no consensus.`),
    market_probability: num(`${DOC.market_probability} 0–1.`),
    market_observed_at: time(DOC.market_observed_at),
    outcome: int('1 when the question resolved YES, 0 NO; null when annulled or not resolved.'),
    resolved_at: time('When the question resolved (or was annulled), as its source dates it; null: no visible resolution.'),
    source_slug: text(`The resolution source's slug (e.g. a venue, \`fred\`, \`bls\`); null: no visible resolution.`),
    source_url: text(`${DOC.source_url} null: none.`),
    updated_at: time(
      'When the row last changed: the latest of created_at, consensus_at, market_observed_at, the close_time of a closed ' +
        'question, resolved_at and the resolution\'s retrieval (when Quorum recorded it). The column updated_since compares.',
    ),
  })
  .meta({ id: 'ExportPredictionsRow', description: 'A row of the predictions export: a question with its headline consensus and latest market price.' });

/** `resolved`: the snapshot's resolved_predictions (sql/derive/80_resolved_predictions.sql), newest resolution first. */
const resolved = z
  .object({
    question_id: textNotNull(DOC.question_id),
    venue: text(DOC.venue),
    venue_market_id: text(DOC.venue_market_id),
    title: text(DOC.title),
    category: text(DOC.category),
    domain: text(DOC.domain),
    mode: textNotNull(DOC.headline_mode),
    consensus: numNotNull(
      'The scored headline consensus: the mean of the models\' probabilities of YES (0–1) in the latest run before both ' +
        'close_time and resolved_at.',
    ),
    consensus_median: num(COL.consensus_median),
    consensus_logit_mean: num(COL.consensus_logit_mean),
    n_models: int(DOC.n_models),
    disagreement_sd: num(COL.disagreement_sd),
    disagreement_range: num(COL.disagreement_range),
    disagreement_sd_logit: num(COL.disagreement_sd_logit),
    market_probability: num('The market comparator: the latest price (probability of YES, 0–1) at or before forecast_at, when fresh (market_status ok); null otherwise.'),
    outcome: intNotNull(COL.outcome01),
    ai_error: num(`Brier score of the consensus: ${COL.brier}`),
    market_error: num(`Brier score of the market comparator: ${COL.brier} Null without a fresh comparator.`),
    forecast_at: timeNotNull('When the scored consensus was made: the latest created_at of the forecasts it averages.'),
    resolved_at: timeNotNull('When the question resolved.'),
    horizon_bucket: text(COL.horizon_bucket),
    source_slug: text(DOC.source_slug),
    source_name: text(DOC.source_name),
    source_url: text(DOC.source_url),
    evidence_excerpt: text(DOC.evidence_excerpt),
    retrieved_at: time(DOC.retrieved_at),
    providers: text(COL.providers),
    market_observed_at: time('When the comparator price was observed (null: no fresh comparator).'),
    market_status: text(COL.market_status),
    market_age_days: num(COL.market_age_days),
  })
  .meta({ id: 'ExportResolvedRow', description: 'A row of the resolved export: a resolved question\'s scored headline consensus beside the market and the resolution\'s source.' });

/** `scores`: the snapshot's scored_forecasts (sql/derive/30_scored_forecasts.sql), in its file's order. */
const scores = z
  .object({
    question_id: textNotNull(DOC.question_id),
    model: textNotNull('The model that made the forecast.'),
    mode: textNotNull(DOC.mode),
    run_id: textNotNull('The pipeline run that made the forecast.'),
    created_at: timeNotNull(
      'When the scored forecast was made (its run\'s as-of time): the latest forecast of the (question, model, mode) strictly ' +
        'before least(close_time, resolved_at).',
    ),
    probability: numNotNull('The model\'s probability of YES, 0–1.'),
    provider: text('The model\'s provider (`simulated`: the bundled model simulator).'),
    outcome: intNotNull(COL.outcome01),
    resolved_at: timeNotNull('When the question resolved.'),
    brier: numNotNull(COL.brier),
    log_loss: numNotNull(COL.log_loss),
    direction: textNotNull('correct (p > 0.5 and YES, or p < 0.5 and NO), wrong, or none (p = 0.5), p rounded to 9 decimals.'),
    tier: textNotNull('Confidence tier by d = |p − 0.5| (rounded to 9 decimals): low d < 0.15, medium 0.15 ≤ d < 0.35, high d ≥ 0.35.'),
    horizon_days: numNotNull('Days (fractional) from created_at to resolved_at.'),
    horizon_bucket: textNotNull(COL.horizon_bucket),
    category: text(DOC.category),
    domain: text(DOC.domain),
    market_probability: num('The market comparator: the latest price (probability of YES, 0–1) at or before created_at, when fresh (market_status ok); null otherwise.'),
    market_observed_at: time('When the comparator price was observed (null: no fresh comparator).'),
    market_brier: num(`Brier score of the market comparator: ${COL.brier} Null without a fresh comparator.`),
    market_log_loss: num(`Log loss of the market comparator (nats, as log_loss); null without a fresh comparator.`),
    market_status: textNotNull(COL.market_status),
    market_age_days: num(COL.market_age_days),
    n_rounds: intNotNull(
      'Rounds of the (question, model, mode) before the cutoff: its forecasts at distinct times (runs dated at the same time are one round, the greater run_id\'s).',
    ),
    brier_all_rounds: numNotNull('Mean Brier score (0–1) of the forecasts of every round (rounds=all).'),
    log_loss_all_rounds: numNotNull('Mean log loss (nats) of the forecasts of every round (rounds=all).'),
    correct_all_rounds: num('Share (0–1) of the rounds with a direction whose direction was correct (null: no round with one).'),
    probability_all_rounds: numNotNull('Mean probability of YES (0–1) of the forecasts of every round.'),
  })
  .meta({ id: 'ExportScoresRow', description: 'A row of the scores export: one scored (question, model, mode) with its Brier and log loss beside the market\'s.' });

/** `forecasts`: sql/api/export-forecasts.sql over the raw forecasts, by created_at, question, model, mode, run, lang. */
const forecasts = z
  .object({
    run_id: textNotNull('The pipeline run that made the forecast.'),
    question_id: textNotNull(DOC.question_id),
    category: text(DOC.category),
    model: textNotNull('The model that made the forecast.'),
    mode: textNotNull(DOC.mode),
    created_at: timeNotNull('When the forecast was made: its run\'s as-of time.'),
    probability: num('The model\'s probability of YES, 0–1 (a translation repeats its forecast\'s).'),
    reasoning: text('The model\'s reasoning, in lang.'),
    lang: text('The language of reasoning and key_factors.'),
    translation_of: text(
      'Null for the model\'s forecast; for a translation of its reasoning into another configured language, the main language ' +
        '(same probability: count the rows where it is null).',
    ),
    key_factors: textList('The key factors the model named, in lang (a list).'),
    evidence_ids: textList('The ids of the evidence items given to the model in its prompt (a list; augmented mode).'),
    provider: text('The model\'s provider (`simulated`: the bundled model simulator).'),
    prompt_hash: text('SHA-256 (hex) of the prompt: its template version and the rendered text.'),
  })
  .meta({ id: 'ExportForecastsRow', description: 'A row of the forecasts export: one raw model forecast with its reasoning, one row per language.' });

/** `claims`: the snapshot's claims (sql/derive/90_claims.sql), in its file's order. */
const claims = z
  .object({
    claim_id: textNotNull(
      'The claim\'s id: as imported, or for Quorum\'s claims `forecast:<question_id>:<model>:<mode>`, `consensus:<question_id>:<mode>`, ' +
        '`price:<question_id>:<observed time>`.',
    ),
    source_slug: textNotNull('The slug of the source that made the claim (its track record: the track_records export).'),
    made_at: time('When the claim was made (a forecast\'s created_at, a price\'s observation time). The column created_since compares.'),
    question_id: text('The tracked question the claim is about, if any.'),
    subject: text('What the claim is about (a race, a fiscal year, a question title).'),
    subject_key: text('Groups the claims about the same target (a race; Quorum\'s claims: the question_id): the peers of reference_value.'),
    category: text('The claim\'s category, lower case (Quorum\'s claims: the question\'s taxonomy category).'),
    kind: textNotNull('probability: P(side happens); direction: side happens; value: a number about the subject.'),
    probability: num('Probability claims: the probability (0–1) that side happens (Quorum\'s claims: that the question resolves YES).'),
    side: text('What the claim says happens (a candidate, "Democrat", "above"; Quorum\'s claims: `yes`).'),
    value: num('The claimed value (a poll\'s margin, a projection), in unit.'),
    unit: text('The unit of value and realized_value.'),
    threshold: num('A value claim\'s threshold, where one applies, in unit.'),
    tolerance: num('A value claim is within tolerance when |value − realized_value| ≤ this, in unit (null: 5% of |realized_value|).'),
    horizon_days: num('Days (fractional) from made_at to the event the claim is about.'),
    outcome: num('1 came true, 0 did not, 0.5 a tie (a number, not an integer); null: unresolved at as_of.'),
    realized_value: num('The value that came to be, in unit (null: unresolved or not a value claim).'),
    resolved_at: time('When the claim resolved (null: unresolved at as_of). The column resolved_since compares.'),
    provenance_dataset: text('The dataset the claim came from (`quorum` for Quorum\'s claims).'),
    provenance_file: text('The file it was read from (Quorum\'s claims: the table: scored_forecasts, scored_consensus, market_prices).'),
    provenance_line: int('The line of that file (header = line 1; null for Quorum\'s claims).'),
    claim_text: text('The claim in words (imported claims without one: their subject).'),
    reference_probability: num('The market comparator (0–1) the claim is measured against (AI model and consensus claims; null otherwise).'),
    origin: textNotNull('import: imported with `quorum import claims`; quorum: Quorum\'s own scored forecasts and the venues\' comparator prices.'),
    resolved: boolNotNull('true when an outcome or a realized value is known at as_of.'),
    hit: num('Directional score: 1 right, 0 wrong, 0.5 a tie or p = 0.5 (null for value claims and unresolved).'),
    brier: num(`Brier score of a probability claim with a YES/NO outcome (null otherwise): ${COL.brier}`),
    log_loss: num('Log loss (nats, p clipped to [0.001, 0.999]) of a probability claim with a YES/NO outcome (null otherwise).'),
    reference_brier: num('Brier score (0–1) of reference_probability against the outcome (null without both).'),
    error: num('value − realized_value, in unit (null without both).'),
    within_tolerance: bool('|error| ≤ tolerance (null without a value and a realized value).'),
    reference_value: num(
      'The mean value of the OTHER claims with the same subject_key in the same 14-day window of horizon_days, in unit (null: none).',
    ),
    year: int('The year (UTC) of made_at.'),
    horizon_bucket: text(
      'horizon_days bucketed: 0-7, 8-30, 31-90, 91-365 (inclusive upper bounds), then whole years rounded up from 2y (2y, 3y, …); null without a horizon.',
    ),
  })
  .meta({ id: 'ExportClaimsRow', description: 'A row of the claims export: one claim (imported, or Quorum\'s own forecasts and the venues\' prices) with its scores.' });

/** `track_records`: the snapshot's track_records (sql/derive/91_track_records.sql), in rank order, the unranked after by slug. */
const trackRecords = z
  .object({
    source_slug: textNotNull('The source\'s slug: its kebab-cased name (`ai-<model>` for a model, `quorum-consensus`, the venue for a market).'),
    name: textNotNull('The source\'s name: the sources registry\'s, else `Quorum consensus`, the model for `ai-<model>`, or the slug.'),
    kind: text(`One of ${SOURCE_KINDS.join(', ')}.`),
    url: text('The source\'s web address (null: none recorded).'),
    description: text('What the source is (null: none recorded).'),
    attribution: text('The credit line of the data behind this track record.'),
    categories: textList('The categories of the source\'s claims, sorted (a list).'),
    n_claims: intNotNull('Claims the source made, visible at as_of (resolved or not).'),
    n_resolved: intNotNull('Resolved claims (an outcome or a realized value known at as_of).'),
    n_directional: intNotNull('Resolved claims with a direction (direction and probability claims).'),
    hits: num('Sum of the hits of those directional claims (a tie counts 0.5; null: none).'),
    accuracy_score: num('Percent (0–100) of resolved directional claims that came true; a tie counts half (null: none).'),
    accuracy_ci95_lo: num('Lower bound of the Wilson 95% interval of accuracy_score, percent (null: no directional claim).'),
    accuracy_ci95_hi: num('Upper bound of the Wilson 95% interval of accuracy_score, percent (null: no directional claim).'),
    shrunk_score: num('accuracy_score shrunk toward prior_score with prior_weight pseudo-claims, percent: the ranking score (null: no directional claim).'),
    prior_score: num('The pooled accuracy of every source\'s directional claims, percent: the score shrunk_score is pulled toward.'),
    prior_weight: numNotNull('Pseudo-claims of the prior in shrunk_score (20).'),
    ranked: boolNotNull('false under 10 resolved directional claims: shown, not ranked.'),
    rank: int('Position by shrunk_score among ranked sources (1 = best; ties: more directional claims, then slug); null when not ranked.'),
    n_probability: intNotNull('Resolved claims with a probability and a YES/NO outcome (the Brier and log loss sample).'),
    brier: num('Mean Brier score (p − o)², 0–1, of those probability claims (null: none).'),
    log_loss: num('Mean log loss (nats, p clipped to [0.001, 0.999]) of those probability claims (null: none).'),
    n_value: intNotNull('Resolved value claims (a claimed and a realized value).'),
    value_unit: text('The unit the value claims name when they name exactly one (e.g. points, usd_bn; null: none named, or several).'),
    value_units: intNotNull('Distinct units the value claims name (compared exactly; a claim naming none does not count). Above 1, mae, bias and value_skill are null: errors in different units are not averaged.'),
    mae: num('Mean absolute error |value − realized|, in value_unit (null: no value claim, or value claims in more than one unit).'),
    bias: num('Mean signed error (claimed − realized), in value_unit (null: no value claim, or value claims in more than one unit).'),
    share_within: num('Share (0–1) of the value claims within tolerance: |value − realized| ≤ the claim\'s tolerance, else 5% of |realized| (null: none).'),
    n_reference_probability: intNotNull('Resolved probability claims with a reference probability (AI models and the consensus: the market comparator).'),
    brier_skill: num('Mean (reference Brier − own Brier) against the market comparator, Brier units; positive = better (null: none).'),
    n_reference_value: intNotNull('Resolved value claims with a reference value (other claims of the same subject_key in the same 14-day window).'),
    value_skill: num('Mean (|reference − realized| − |value − realized|) against the other claims of the same race and window, in value_unit; positive = better (null: none, or value claims in more than one unit).'),
    first_claim_at: time('When the source\'s earliest claim was made.'),
    last_claim_at: time(
      'When the source\'s latest claim was made. updated_since keeps a source whose latest claim was made, or one of whose claims resolved, at or after it.',
    ),
  })
  .meta({ id: 'ExportTrackRecordsRow', description: 'A row of the track_records export: one source of claims with its accuracy, scores and skill.' });

/**
 * `scenario_records`: sql/api/export-scenario-records.sql, one row per archived scenario record
 * (scenario_records) with its scores (scenario_record_scores), by scenario_id, as_of, run_id.
 */
const scenarioRecords = z
  .object({
    scenario_id: textNotNull('The scenario\'s id (its definition file\'s; GET /api/scenarios/{id}/).'),
    run_id: textNotNull('The run that archived the record.'),
    as_of: timeNotNull('The run\'s as-of time: the record is the consensus joint as of then. created_since compares it.'),
    title: text('The scenario\'s title when the record was archived.'),
    components: text('The component question ids in pathway order, comma-separated, as archived (the components the record\'s worlds are over).'),
    content_hash: text('sha256 of the components, \'|\', then each world\'s probability in world order: the record\'s identity (immutable).'),
    n_models: int('Models whose joints the consensus joint averages.'),
    methods: text('The models\' methods, sorted, comma-separated: chain_rule, max_entropy_ipf or independent.'),
    n_components: int('Components n (2 to 6).'),
    n_worlds: int('Worlds 2^n: the length of probabilities and disagreement_sd.'),
    top_world: text('The most likely world of the record (ties: the lowest world index), one digit per component in pathway order: 1 YES, 0 NO.'),
    top_probability: num('Its probability (0–1).'),
    n_resolved: int('Components of the record resolved YES or NO as of the snapshot (annulled ones do not count).'),
    resolved_pattern: text('The components\' resolutions as of the snapshot, one character each in pathway order: 1 YES, 0 NO, - open or annulled.'),
    complete: bool('true when every component resolved: the realized world is known and the record is scored on it.'),
    realized_world: text('The world that came true (null until complete).'),
    realized_probability: num('The record\'s probability of the realized world (0–1; null until complete).'),
    log_score: num('ln of realized_probability (floored at 1e-12), in nats, at most 0, higher is better (null until complete).'),
    brier: num('Brier score of the record over its worlds: Σ (p_w − [w realized])², 0–2, lower is better (null until complete).'),
    component_brier: num('Mean over the resolved components of (implied marginal − outcome)², 0–1, lower is better (null: none resolved).'),
    consistent_mass: num('The record\'s probability of the worlds consistent with the components resolved so far (0–1; null: none resolved).'),
    partial_log_score: num('ln of consistent_mass (floored at 1e-12), in nats: the score of a partly resolved record (null: none resolved).'),
    probabilities: numList('The consensus joint: the probability of each world, in world order (world i: its digits read as a binary number give i), a list of n_worlds values summing to 1.'),
    disagreement_sd: numList('Population sd across the models of each world\'s probability, in world order (probability units).'),
    marginals: numList('The component distribution the joint implies: P(component k YES), in pathway order (n_components values).'),
  })
  .meta({ id: 'ExportScenarioRecordsRow', description: 'A row of the scenario_records export: one archived scenario record with its distributions and scores.' });

/** Every export table's columns: the object's keys in the order the export writes them. */
export const EXPORT_COLUMNS: Readonly<Record<ExportTable, z.ZodObject>> = {
  predictions,
  resolved,
  scores,
  forecasts,
  claims,
  track_records: trackRecords,
  scenario_records: scenarioRecords,
};

/** The type of a column as an analyst reads it, and as the Parquet file holds it. */
export type ColumnType = 'text' | 'timestamp' | 'number' | 'integer' | 'boolean' | 'list of text' | 'list of numbers';

/** The Parquet types (DuckDB's names) each column type is written as. */
export const PARQUET_TYPES: Readonly<Record<ColumnType, readonly string[]>> = {
  text: ['VARCHAR'],
  timestamp: ['TIMESTAMP WITH TIME ZONE'],
  number: ['DOUBLE'],
  integer: ['INTEGER', 'BIGINT'],
  boolean: ['BOOLEAN'],
  'list of text': ['VARCHAR[]'],
  'list of numbers': ['DOUBLE[]'],
};

export interface ExportColumn {
  name: string;
  type: ColumnType;
  nullable: boolean;
  description: string;
}

/** The type of one column's schema (built by the builders above). */
function columnType(schema: z.ZodType): { type: ColumnType; nullable: boolean } {
  const nullable = schema instanceof z.ZodNullable;
  const inner = nullable ? (schema as z.ZodNullable<z.ZodType>).unwrap() : schema;
  if (inner instanceof z.ZodArray) {
    return { type: (inner as z.ZodArray<z.ZodType>).element instanceof z.ZodNumber ? 'list of numbers' : 'list of text', nullable };
  }
  if (inner instanceof z.ZodBoolean) return { type: 'boolean', nullable };
  if (inner instanceof z.ZodNumber) return { type: inner.format === 'safeint' ? 'integer' : 'number', nullable };
  if (inner instanceof z.ZodString) {
    return { type: z.globalRegistry.get(inner)?.format === 'date-time' ? 'timestamp' : 'text', nullable };
  }
  throw new Error(`export column of unsupported schema type ${inner.type}`);
}

/** The columns of `table`, in order, with their type and description. */
export function exportColumns(table: ExportTable): ExportColumn[] {
  return Object.entries(EXPORT_COLUMNS[table].shape).map(([name, schema]) => ({
    name,
    ...columnType(schema as z.ZodType),
    description: String(z.globalRegistry.get(schema as z.ZodType)?.description ?? ''),
  }));
}

/** `table`'s columns as one line of text: `name (type): description; …` (the CSV and Parquet documentation). */
export function exportColumnsText(table: ExportTable): string {
  return exportColumns(table)
    .map((c) => `${c.name} (${c.type}${c.nullable ? ', null' : ''}): ${c.description}`)
    .join(' | ');
}
