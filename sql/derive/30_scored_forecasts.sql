-- 30_scored_forecasts: one row per scored (question_id, model, mode).
--
-- The scored forecast is the latest forecast created strictly before the question's cutoff
-- (least(close_time, resolved_at); see _resolved in 10_questions) of a resolved, non-annulled
-- question. Visible resolutions have resolved_at <= as_of, so every scored forecast is also at or
-- before as_of. Selection: one hash aggregate per (question, model, mode) with max/arg_max (no
-- window ranking) over the rounds (below). Two runs
-- dated at the same time (`quorum run --as-of T` twice; a first start killed and started again)
-- tie on created_at: the greater run_id wins, here and wherever the snapshot picks a latest run
-- (40_scored_consensus, 85_edges, 99_factor_1_tree, the API's latest consensus), so the figures
-- never depend on the order DuckDB meets the rows in, and a consensus is the mean of the
-- forecasts published beside it. The run, probability and provider come from one arg_max, so
-- from the same row.
-- Market comparator: the latest visible price observed at or before the forecast's created_at,
-- found with an ASOF join on the distinct (question_id, created_at) points (a few per question)
-- and joined back. The comparator has a maximum age (run_params.max_comparator_age_days,
-- QUORUM_MAX_COMPARATOR_AGE_DAYS, default 7): an older price is no comparator (market_* NULL) and
-- the row says so in market_status ('ok', 'stale', 'none'), so excluded pairs are counted, never
-- silently dropped; market_age_days is the age of that latest price (also when stale).
-- rounds=all (ForecastBench's convention): brier_all_rounds, log_loss_all_rounds and
-- correct_all_rounds average the forecast of every round of the (question, model, mode) before the
-- cutoff (computed in the same aggregate pass); n_rounds counts them; probability_all_rounds is the
-- mean probability of those forecasts (the leaderboard's rounds=all calibration). A round is a
-- point in time (a created_at): runs dated at the same time are one round, whose forecast is the
-- greater run_id's (as for the latest), so repeating `quorum run --as-of T` does not weigh the
-- round at T twice. Score definitions: 25_score_functions.

-- Times at which more than one run forecast (runs dated at the same time). Only at those can a
-- round hold two forecasts of one (question, model, mode); elsewhere a forecast is its round's, so
-- only their rows go through the per-round aggregate (over every row it cost 1.7 s of the scoring
-- bench's 10 M forecasts, for a case that is rare). 55_anchoring reads it too.
CREATE OR REPLACE TABLE _shared_forecast_times AS
SELECT created_at FROM raw_forecasts GROUP BY created_at HAVING min(run_id) < max(run_id);

-- The forecasts that are scored: of resolved questions, before the cutoff (a view: each branch
-- below reads it, and a branch whose times are none reads nothing).
CREATE OR REPLACE TEMP VIEW _scorable_forecasts AS
SELECT f.question_id, f.model, f.mode, f.created_at, f.run_id, f.probability, f.provider, r.outcome
FROM raw_forecasts AS f
JOIN _resolved AS r ON r.question_id = f.question_id
WHERE f.created_at < r.cutoff
  AND f.probability IS NOT NULL
  AND f.translation_of IS NULL -- translations repeat the same answer in another language
  AND f.condition IS NULL; -- conditional forecasts (scenarios) are never scored as forecasts

CREATE OR REPLACE TABLE _latest_forecast AS
WITH rounds AS (
  SELECT question_id, model, mode, created_at, outcome,
         {'run_id': run_id, 'probability': probability, 'provider': provider} AS pick
  FROM _scorable_forecasts ANTI JOIN _shared_forecast_times USING (created_at)
  UNION ALL
  -- One forecast per round (question, model, mode, created_at) at a shared time: the greater run_id's.
  SELECT question_id, model, mode, created_at, any_value(outcome),
         arg_max({'run_id': run_id, 'probability': probability, 'provider': provider}, run_id)
  FROM _scorable_forecasts SEMI JOIN _shared_forecast_times USING (created_at)
  GROUP BY question_id, model, mode, created_at
)
SELECT * EXCLUDE (latest), latest.run_id AS run_id, latest.probability AS probability, latest.provider AS provider
FROM (
  SELECT question_id, model, mode,
         max(created_at) AS created_at,
         arg_max(pick, created_at) AS latest,
         count(*) AS n_rounds,
         avg(pick.probability) AS probability_all_rounds,
         avg(_brier(pick.probability, outcome)) AS brier_all_rounds,
         avg(_log_loss(pick.probability, outcome)) AS log_loss_all_rounds,
         avg(_correct01(pick.probability, outcome)) AS correct_all_rounds
  FROM rounds
  GROUP BY question_id, model, mode
);

CREATE OR REPLACE TABLE _forecast_comparators AS
WITH pts AS (SELECT DISTINCT question_id, created_at FROM _latest_forecast)
SELECT pts.question_id, pts.created_at, px.probability, px.observed_at,
       _comparator_status(px.observed_at, pts.created_at, rp.max_comparator_age_days) AS status,
       (epoch(pts.created_at) - epoch(px.observed_at)) / 86400.0 AS age_days
FROM pts
ASOF LEFT JOIN _prices AS px
  ON px.question_id = pts.question_id AND px.observed_at <= pts.created_at
CROSS JOIN run_params AS rp;

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
       -- the fresh comparator only: NULL when stale or absent
       CASE WHEN c.status = 'ok' THEN c.probability END AS market_probability,
       CASE WHEN c.status = 'ok' THEN c.observed_at END AS market_observed_at,
       CASE WHEN c.status = 'ok' THEN _brier(c.probability, r.outcome) END AS market_brier,
       CASE WHEN c.status = 'ok' THEN _log_loss(c.probability, r.outcome) END AS market_log_loss,
       c.status AS market_status, c.age_days AS market_age_days,
       lf.n_rounds::INTEGER AS n_rounds, lf.brier_all_rounds, lf.log_loss_all_rounds,
       lf.correct_all_rounds, lf.probability_all_rounds
FROM _latest_forecast AS lf
JOIN _resolved AS r ON r.question_id = lf.question_id
LEFT JOIN _forecast_comparators AS c
  ON c.question_id = lf.question_id AND c.created_at = lf.created_at;

DROP TABLE _latest_forecast;
DROP TABLE _forecast_comparators;
