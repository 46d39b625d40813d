-- 10_questions: the question set as known at run_params.as_of, with its resolution and latest price.
--
-- As-of rules (DESIGN §5): a run dated T sees questions with created_at <= T (or NULL created_at),
-- prices observed_at <= T and resolutions resolved_at <= T. A resolution with a NULL resolved_at
-- cannot be placed in time and is therefore never visible.
-- Raw questions may hold several versions per question_id: the latest by ingested_at wins
-- (arg_max over a struct of the whole row: one hash aggregate, no window sort). The as-of filter on
-- created_at is applied to that latest version. Unlike the questions a run forecasts
-- (sql/pipeline/active_questions.sql: the version known at the run's as-of), scoring takes the latest
-- version whatever the as-of, because it dates facts by when they happened, as it dates resolutions by
-- resolved_at: a close the venue moved earlier (a market closed once the event happened) is the true
-- cutoff even for a backtest dated before the sync that saw it, so no forecast made after the real
-- close is scored.

-- Latest ingested version of every question.
CREATE OR REPLACE TABLE _question_latest AS
SELECT unnest(arg_max(q, q.ingested_at))
FROM raw_questions AS q
GROUP BY q.question_id;

CREATE OR REPLACE TABLE _questions_visible AS
SELECT q.*
FROM _question_latest AS q, run_params AS rp
WHERE q.created_at IS NULL OR q.created_at <= rp.as_of;

-- Visible resolutions, one per question (the latest resolved_at; ties: latest retrieved_at).
-- outcome NULL = annulled.
CREATE OR REPLACE TABLE _resolutions AS
SELECT unnest(arg_max(r, (r.resolved_at, r.retrieved_at)))
FROM raw_resolutions AS r, run_params AS rp
WHERE r.resolved_at <= rp.as_of
GROUP BY r.question_id;

-- Visible market prices (the as-of join source of every market comparator).
CREATE OR REPLACE TABLE _prices AS
SELECT p.question_id, p.observed_at, p.probability
FROM raw_market_prices AS p, run_params AS rp
WHERE p.observed_at <= rp.as_of AND p.probability IS NOT NULL;

CREATE OR REPLACE TABLE _latest_price AS
SELECT question_id,
       arg_max(probability, observed_at) AS probability,
       max(observed_at) AS observed_at
FROM _prices
GROUP BY question_id;

-- Published: one row per visible question.
-- status as of as_of: annulled (visible resolution with NULL outcome), resolved (visible outcome),
-- closed (close_time <= as_of), otherwise active.
CREATE OR REPLACE TABLE questions AS
SELECT
  q.question_id, q.venue, q.venue_market_id, q.title, q.description, q.resolution_criteria, q.url,
  q.category, q.domain, q.tags, q.created_at, q.close_time,
  CASE
    WHEN r.question_id IS NOT NULL AND r.outcome IS NULL THEN 'annulled'
    WHEN r.outcome IS NOT NULL THEN 'resolved'
    WHEN q.close_time IS NOT NULL AND q.close_time <= rp.as_of THEN 'closed'
    ELSE 'active'
  END AS status,
  r.outcome::DOUBLE AS outcome,
  r.resolved_at,
  r.annulled_reason,
  r.source_slug,
  s.name AS source_name,
  s.kind AS source_kind,
  r.source_url,
  r.evidence_excerpt,
  r.retrieved_at,
  r.method AS resolution_method,
  lp.probability AS latest_market_probability,
  lp.observed_at AS latest_market_observed_at,
  q.lang
FROM _questions_visible AS q
CROSS JOIN run_params AS rp
LEFT JOIN _resolutions AS r ON r.question_id = q.question_id
LEFT JOIN (SELECT unnest(arg_max(s, s.name)) FROM raw_sources AS s GROUP BY s.source_slug) AS s
  ON s.source_slug = r.source_slug
LEFT JOIN _latest_price AS lp ON lp.question_id = q.question_id
-- in question id order: the joins run on several threads, and two publishes of the same questions
-- wrote questions.parquet in two orders (an analyst comparing snapshots saw every row move)
ORDER BY q.question_id;

-- Resolved, non-annulled questions with their scoring cutoff: a scored forecast must be created
-- strictly before both close_time (when known) and resolved_at. LEAST ignores NULLs in DuckDB.
CREATE OR REPLACE TABLE _resolved AS
SELECT question_id, category, domain, outcome, resolved_at,
       least(close_time, resolved_at) AS cutoff
FROM questions
WHERE status = 'resolved';
