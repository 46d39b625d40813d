/**
 * The warehouse's table schemas: the one place both the pipeline and the API import.
 *
 * Raw tables are append-only Hive-partitioned Parquet
 * (`raw/<table>/run_date=YYYY-MM-DD/run_id=<id>/part-*.parquet`). Every timestamp is a DuckDB
 * `TIMESTAMP` holding UTC (no time zone, so every engine reads the same instant).
 * `key` is the natural key used to make ingestion idempotent: a row whose key is already stored
 * is not written again.
 */

export type DuckType =
  | 'VARCHAR'
  | 'DOUBLE'
  | 'BIGINT'
  | 'INTEGER'
  | 'BOOLEAN'
  | 'TIMESTAMP'
  | 'VARCHAR[]'
  | 'DOUBLE[]';

export interface RawTable {
  /** Column name to DuckDB type, in file order. */
  columns: Record<string, DuckType>;
  /** Natural key: rows with an already-stored key are skipped on append (idempotent ingest). */
  key: string[];
}

/** A claim's resolution and where the row came from: the last columns of `claims`, and all of `claim_resolutions`'s but its id. */
const CLAIM_RESOLUTION_COLUMNS = {
  outcome: 'DOUBLE', // at resolution: 1 came true, 0 did not, 0.5 a tie; NULL unresolved
  realized_value: 'DOUBLE', // at resolution, for claims with a value
  resolved_at: 'TIMESTAMP',
  provenance_dataset: 'VARCHAR',
  provenance_file: 'VARCHAR',
  provenance_line: 'BIGINT',
  ingested_at: 'TIMESTAMP',
} as const;

export const RAW_TABLES = {
  questions: {
    columns: {
      question_id: 'VARCHAR', // venue-qualified: "metaculus:1554"
      venue: 'VARCHAR',
      venue_market_id: 'VARCHAR',
      title: 'VARCHAR',
      description: 'VARCHAR',
      resolution_criteria: 'VARCHAR',
      url: 'VARCHAR',
      category: 'VARCHAR',
      domain: 'VARCHAR',
      tags: 'VARCHAR[]',
      created_at: 'TIMESTAMP',
      close_time: 'TIMESTAMP',
      status: 'VARCHAR',
      lang: 'VARCHAR',
      origin: 'VARCHAR', // where the row came from, e.g. "forecastbench:2025-10-26-llm.json@25842c8"
      ingested_at: 'TIMESTAMP',
    },
    // A question is written once (an extract imported again adds nothing, whatever it says now);
    // new versions, keyed by (question_id, ingested_at), are the sync's (pipeline/sync.ts): when a
    // venue moves a tracked market's close (extended, closed early, reopened), and when an
    // operator edits a question file's entry; and a ForecastBench extract's later rounds whose text
    // changed, each dated at its round's freeze time (pipeline/import/forecastbench.ts).
    // Readers take the latest version by ingested_at (the run's questions: the latest ingested by
    // its as-of time, sql/pipeline/active_questions.sql).
    key: ['question_id'],
  },
  market_prices: {
    columns: {
      question_id: 'VARCHAR',
      venue: 'VARCHAR',
      observed_at: 'TIMESTAMP',
      probability: 'DOUBLE',
      best_bid: 'DOUBLE',
      best_ask: 'DOUBLE',
      volume: 'DOUBLE',
      liquidity: 'DOUBLE',
      origin: 'VARCHAR',
      ingested_at: 'TIMESTAMP',
    },
    key: ['question_id', 'observed_at'],
  },
  evidence: {
    columns: {
      evidence_id: 'VARCHAR',
      question_id: 'VARCHAR',
      retrieved_at: 'TIMESTAMP',
      title: 'VARCHAR',
      url: 'VARCHAR',
      published_at: 'TIMESTAMP',
      snippet: 'VARCHAR',
      source_slug: 'VARCHAR',
    },
    key: ['evidence_id'],
  },
  model_calls: {
    columns: {
      run_id: 'VARCHAR',
      question_id: 'VARCHAR',
      model: 'VARCHAR',
      mode: 'VARCHAR',
      started_at: 'TIMESTAMP',
      latency_ms: 'DOUBLE',
      status: 'VARCHAR', // ok | failed
      error_kind: 'VARCHAR', // null when ok: rate_limited, server_error, timeout, invalid_json, schema_violation, truncated, ...
      error_message: 'VARCHAR',
      attempts: 'INTEGER',
      tokens_in: 'BIGINT',
      tokens_out: 'BIGINT',
      cost_usd: 'DOUBLE',
      provider: 'VARCHAR',
      // NULL for a forecast call; for a scenario's conditional call (issue 13), the condition:
      // `<scenario_id>:<k>:<outcomes>` = P(component k | the earlier components' outcomes, one
      // digit each in pathway order, 1 YES, 0 NO), e.g. `fed-2026-path:3:10`.
      condition: 'VARCHAR',
    },
    key: ['run_id', 'question_id', 'model', 'mode', 'condition'],
  },
  forecasts: {
    columns: {
      run_id: 'VARCHAR',
      question_id: 'VARCHAR',
      model: 'VARCHAR',
      mode: 'VARCHAR', // blind | informed | augmented
      created_at: 'TIMESTAMP', // the run's as-of time
      probability: 'DOUBLE',
      reasoning: 'VARCHAR',
      lang: 'VARCHAR',
      key_factors: 'VARCHAR[]',
      evidence_ids: 'VARCHAR[]',
      provider: 'VARCHAR', // "simulated" for the bundled simulator
      prompt_hash: 'VARCHAR',
      // NULL for the forecast itself; for the same answer's reasoning in another configured
      // language, the language it translates. Scoring reads only rows where this is NULL, so a
      // model counts once however many languages its reasoning comes in.
      translation_of: 'VARCHAR',
      // NULL for a forecast; a scenario's conditional forecast names its condition (as in
      // model_calls). Scoring, consensus and every published forecast table read only rows where
      // this is NULL: conditional forecasts are never mixed into the unconditional scores.
      condition: 'VARCHAR',
    },
    key: ['run_id', 'question_id', 'model', 'mode', 'lang', 'condition'],
  },
  resolutions: {
    columns: {
      question_id: 'VARCHAR',
      outcome: 'DOUBLE', // 1, 0, or NULL when annulled
      resolved_at: 'TIMESTAMP',
      source_slug: 'VARCHAR',
      source_url: 'VARCHAR',
      evidence_excerpt: 'VARCHAR',
      retrieved_at: 'TIMESTAMP',
      method: 'VARCHAR',
      annulled_reason: 'VARCHAR',
    },
    key: ['question_id'],
  },
  lifecycle_events: {
    columns: {
      question_id: 'VARCHAR',
      state: 'VARCHAR', // proposed | active | closed | resolved | annulled
      at: 'TIMESTAMP',
      reason: 'VARCHAR',
    },
    key: ['question_id', 'state', 'at'],
  },
  claims: {
    columns: {
      claim_id: 'VARCHAR',
      source_slug: 'VARCHAR',
      question_id: 'VARCHAR',
      claimed_at: 'TIMESTAMP',
      claim_text: 'VARCHAR',
      probability_or_direction: 'VARCHAR',
      // Claims and track records (issue 11, pipeline/claims/README.md). claimed_at is the claim's
      // made_at. question_id is set when the claim is about a tracked question; otherwise subject
      // describes the target and subject_key groups claims about the same target (a race).
      subject: 'VARCHAR',
      subject_key: 'VARCHAR',
      category: 'VARCHAR',
      kind: 'VARCHAR', // probability | direction | value
      probability: 'DOUBLE', // kind probability: P(side happens)
      side: 'VARCHAR', // what the claim says happens (a candidate, "Democrat", "above")
      value: 'DOUBLE', // the claimed value (a poll's margin, a projection)
      unit: 'VARCHAR',
      threshold: 'DOUBLE', // a value claim's threshold, where one applies
      tolerance: 'DOUBLE', // a value claim counts as within tolerance when |value - realized| <= this
      horizon_days: 'DOUBLE', // from made_at to the event the claim is about
      ...CLAIM_RESOLUTION_COLUMNS,
    },
    key: ['claim_id'],
  },
  claim_resolutions: {
    // The resolution of a claim imported open (`quorum import claims csv` of the same claim again,
    // now with its outcome): raw tables are append-only, so it is a row of its own, read beside
    // the claim by sql/derive/90_claims.sql. One per claim: a stored resolution never changes.
    columns: { claim_id: 'VARCHAR', ...CLAIM_RESOLUTION_COLUMNS },
    key: ['claim_id'],
  },
  sources: {
    columns: {
      source_slug: 'VARCHAR',
      name: 'VARCHAR',
      kind: 'VARCHAR', // government | central_bank | regulatory | primary_financial | secondary_reporting | market | analyst; claims' sources: pollster | forecaster | institution | ai_model | consensus | media | other
      url: 'VARCHAR',
      description: 'VARCHAR',
      attribution: 'VARCHAR', // the credit line of the data behind the source (shown with its track record)
    },
    key: ['source_slug'],
  },
  runs: {
    // One row per state change of a run; the latest recorded_at per run_id is its current state.
    columns: {
      run_id: 'VARCHAR',
      status: 'VARCHAR', // started | completed | failed
      as_of: 'TIMESTAMP',
      started_at: 'TIMESTAMP',
      finished_at: 'TIMESTAMP',
      recorded_at: 'TIMESTAMP',
      questions: 'BIGINT',
      forecasts: 'BIGINT',
      calls: 'BIGINT',
      failed_calls: 'BIGINT',
      tokens_in: 'BIGINT',
      tokens_out: 'BIGINT',
      cost_usd: 'DOUBLE',
      skipped_calls: 'BIGINT',
      budget_exhausted: 'BOOLEAN',
      snapshot: 'VARCHAR',
      error: 'VARCHAR',
      // JSON: what the market/source sync brought and which venue or source failed (null: no sync).
      sync_report: 'VARCHAR',
    },
    key: ['run_id', 'status'],
  },
  events: {
    // What changed between a run's published snapshot and the one before it (issue 15,
    // pipeline/events/): derived in SQL (sql/events/) after each publish. event_id is derived
    // from (run_id, type, subject), so a repeated or killed-and-redone run adds no duplicate;
    // seq increases by one per event in the order they were written (the SSE `id`).
    columns: {
      event_id: 'VARCHAR',
      seq: 'BIGINT',
      run_id: 'VARCHAR',
      type: 'VARCHAR', // consensus.updated | edge.opened | edge.closed | question.resolved | question.annulled | score.posted | run.completed
      subject: 'VARCHAR', // the question id, or the run id for run.completed
      question_id: 'VARCHAR',
      category: 'VARCHAR',
      as_of: 'TIMESTAMP', // the run's as-of time
      created_at: 'TIMESTAMP', // when the event was written (retention counts from here)
      snapshot: 'VARCHAR',
      previous_snapshot: 'VARCHAR', // NULL: compared with an empty warehouse (the first snapshot)
      data: 'VARCHAR', // JSON payload
    },
    key: ['event_id'],
  },
  thesis_vintages: {
    // Frozen records of the thesis maps (issue 12, sql/derive/98_thesis_vintages.sql): every run
    // appends one immutable vintage per thesis, one row per member. The thesis-level values
    // repeat on each member row of a vintage (thesis_id, run_id). content_hash = sha256 of the
    // vintage's canonical content (statement and, per member in question_id order, question,
    // sign, weight, consensus and market price). A repeated or killed-and-resumed run adds nothing.
    columns: {
      thesis_id: 'VARCHAR',
      run_id: 'VARCHAR',
      as_of: 'TIMESTAMP',
      origin: 'VARCHAR', // curated | computed
      statement: 'VARCHAR',
      question_id: 'VARCHAR',
      sign: 'INTEGER', // +1: YES supports the thesis; -1: YES contradicts it
      weight: 'DOUBLE',
      member_consensus: 'DOUBLE', // the member's headline AI consensus (null: none at as_of)
      member_market_probability: 'DOUBLE', // the member's latest market price at as_of
      thesis_consensus: 'DOUBLE',
      thesis_market_consensus: 'DOUBLE',
      content_hash: 'VARCHAR',
      recorded_at: 'TIMESTAMP',
    },
    key: ['thesis_id', 'run_id', 'question_id'],
  },
  scenario_archive: {
    // Archived scenario records (issue 13, sql/derive/99_scenario_2_records.sql): every run
    // appends one immutable record per scenario with a consensus joint and a component still
    // open, one row per record with its distributions as lists. components = the component
    // question ids in pathway order, comma-separated. World i (0-based) is the world whose digits,
    // one per component in pathway order (1 YES, 0 NO), read as a binary number give i: with two
    // components, probabilities = [P('00'), P('01'), P('10'), P('11')]. content_hash = sha256 of
    // the components and, per world in world order, its probability. A repeated or
    // killed-and-resumed run adds nothing.
    columns: {
      scenario_id: 'VARCHAR',
      run_id: 'VARCHAR',
      as_of: 'TIMESTAMP',
      title: 'VARCHAR',
      components: 'VARCHAR',
      probabilities: 'DOUBLE[]', // the consensus joint, world i at index i + 1 (2^n values)
      disagreement_sd: 'DOUBLE[]', // population sd of the models' probabilities of each world, same order
      marginals: 'DOUBLE[]', // the component distribution: P(component k YES) implied by the joint, pathway order
      n_models: 'INTEGER',
      methods: 'VARCHAR', // the models' methods, sorted, comma-separated: chain_rule | max_entropy_ipf | independent
      content_hash: 'VARCHAR',
      recorded_at: 'TIMESTAMP',
    },
    key: ['scenario_id', 'run_id'],
  },
  scenario_records: {
    // The first format of the archived scenario records (issue 13), one row per world; no
    // longer written (runs append to scenario_archive, one row per record) but still read:
    // 99_scenario_2_records.sql folds these rows into records, so nothing archived is lost. The
    // record-level values repeat on each world row of a record (scenario_id, run_id).
    columns: {
      scenario_id: 'VARCHAR',
      run_id: 'VARCHAR',
      as_of: 'TIMESTAMP',
      title: 'VARCHAR',
      components: 'VARCHAR',
      world: 'VARCHAR', // one digit per component in pathway order: '10' = first YES, second NO
      probability: 'DOUBLE', // the consensus joint's probability of the world
      disagreement_sd: 'DOUBLE', // population sd of the models' probabilities of the world
      n_models: 'INTEGER',
      methods: 'VARCHAR', // the models' methods, sorted, comma-separated: chain_rule | max_entropy_ipf | independent
      content_hash: 'VARCHAR',
      recorded_at: 'TIMESTAMP',
    },
    key: ['scenario_id', 'run_id', 'world'],
  },
} as const satisfies Record<string, RawTable>;

export type RawTableName = keyof typeof RAW_TABLES;

/** JS value of a DuckDB column type: TIMESTAMP → Date (UTC), VARCHAR[] → string[]. */
type JsOf<T> = T extends 'VARCHAR'
  ? string
  : T extends 'TIMESTAMP'
    ? Date
    : T extends 'VARCHAR[]'
      ? string[]
      : T extends 'DOUBLE[]'
        ? number[]
      : T extends 'BOOLEAN'
        ? boolean
        : number;

/** A row of raw table `N`: exactly its columns (a renamed column is a compile error); missing values are null. */
export type RawRow<N extends RawTableName> = {
  -readonly [K in keyof (typeof RAW_TABLES)[N]['columns']]: JsOf<(typeof RAW_TABLES)[N]['columns'][K]> | null;
};

/** The three information modes, a ladder: each adds information to the one before. */
export const MODES = ['blind', 'informed', 'augmented'] as const;
export type Mode = (typeof MODES)[number];

/** The nine categories of the taxonomy. */
export const CATEGORIES = [
  'politics',
  'world',
  'finance',
  'economics',
  'crypto',
  'tech',
  'science',
  'sports',
  'climate',
] as const;
export type Category = (typeof CATEGORIES)[number];

export const DOMAINS = [
  'earnings',
  'macro',
  'rates',
  'crypto',
  'commodities',
  'trade',
  'central-banks',
  'policy',
  'other',
] as const;
export type Domain = (typeof DOMAINS)[number];

/** Horizon buckets: days from forecast to resolution (DESIGN §5). */
export const HORIZON_BUCKETS = ['0-7', '8-30', '31-90', '91-365', '>365'] as const;

/** Confidence tiers by |p − 0.5| (DESIGN §5). */
export const TIERS = ['low', 'medium', 'high'] as const;
