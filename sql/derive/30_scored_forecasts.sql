-- 30_scored_forecasts: one row per scored (question_id, model, mode).
--
-- The scored forecast is the latest forecast created strictly before the question's cutoff
-- (least(close_time, resolved_at); see _resolved in 10_questions) of a resolved, non-annulled
-- question. Visible resolutions have resolved_at <= as_of, so every scored forecast is also at or
-- before as_of. Selection: one hash aggregate with max/arg_max (no window ranking); ties on
-- created_at (not produced by the pipeline: one forecast per key and run) are broken arbitrarily.
-- Market comparator: the latest visible price observed at or before the forecast's created_at,
-- found with an ASOF join on the distinct (question_id, created_at) points (a few per question)
-- and joined back. Score definitions: 25_score_functions.

CREATE OR REPLACE TABLE _latest_forecast AS
SELECT f.question_id, f.model, f.mode,
       max(f.created_at) AS created_at,
       arg_max(f.run_id, f.created_at) AS run_id,
       arg_max(f.probability, f.created_at) AS probability,
       arg_max(f.provider, f.created_at) AS provider
FROM raw_forecasts AS f
JOIN _resolved AS r ON r.question_id = f.question_id
WHERE f.created_at < r.cutoff
  AND f.probability IS NOT NULL
  AND f.translation_of IS NULL -- translations repeat the same answer in another language
GROUP BY f.question_id, f.model, f.mode;

CREATE OR REPLACE TABLE _forecast_comparators AS
WITH pts AS (SELECT DISTINCT question_id, created_at FROM _latest_forecast)
SELECT pts.question_id, pts.created_at, px.probability, px.observed_at
FROM pts
ASOF LEFT JOIN _prices AS px
  ON px.question_id = pts.question_id AND px.observed_at <= pts.created_at;

CREATE OR REPLACE TABLE scored_forecasts AS
SELECT lf.question_id, lf.model, lf.mode, lf.run_id, lf.created_at, lf.probability, lf.provider,
       r.outcome, r.resolved_at,
       _brier(lf.probability, r.outcome) AS brier,
       _log_loss(lf.probability, r.outcome) AS log_loss,
       _direction(lf.probability, r.outcome) AS direction,
       _tier(lf.probability) AS tier,
       _horizon_days(lf.created_at, r.resolved_at) AS horizon_days,
       _horizon_bucket(_horizon_days(lf.created_at, r.resolved_at)) AS horizon_bucket,
       r.category, r.domain,
       c.probability AS market_probability, c.observed_at AS market_observed_at,
       _brier(c.probability, r.outcome) AS market_brier,
       _log_loss(c.probability, r.outcome) AS market_log_loss
FROM _latest_forecast AS lf
JOIN _resolved AS r ON r.question_id = lf.question_id
LEFT JOIN _forecast_comparators AS c
  ON c.question_id = lf.question_id AND c.created_at = lf.created_at;

DROP TABLE _latest_forecast;
DROP TABLE _forecast_comparators;
