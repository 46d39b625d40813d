-- 40_scored_consensus: one row per scored (question_id, mode): the consensus of the latest run
-- whose consensus created_at (the latest forecast of the run's group) is strictly before both the
-- question's close_time and its resolved_at, for resolved, non-annulled questions.
-- probability = the consensus mean (the headline statistic). Scores, tier, horizon and market
-- comparator as in 30_scored_forecasts (definitions: 25_score_functions), applied to the mean.
-- is_headline: per question, the first mode of run_params.headline_modes that has a scored
-- consensus (default augmented, then informed, then blind).
-- Market comparator: fresh only (max age run_params.max_comparator_age_days; market_status 'ok',
-- 'stale' or 'none', market_age_days), as in 30_scored_forecasts.
-- rounds=all: the consensus of every round before the cutoff, averaged per question (n_rounds
-- rounds; runs dated at the same time are one round, the greater run_id's, as in 30_scored_forecasts):
-- brier_all_rounds / log_loss_all_rounds / correct_all_rounds of the mean, median_brier_all_rounds
-- and logit_mean_brier_all_rounds (and their log loss and correct share) of the other two
-- statistics, and market_brier_all_rounds / market_log_loss_all_rounds / market_correct_all_rounds:
-- the mean over the runs that have a fresh comparator at their created_at (market_n_rounds);
-- sd_all_rounds and abs_error_all_rounds: the mean disagreement (sd) and |mean − outcome| over the
-- runs (53_disagreement). mean_all_rounds, median_all_rounds, logit_mean_all_rounds and
-- market_probability_all_rounds (fresh comparators only): the mean of each statistic over the runs
-- (the leaderboard's rounds=all calibration).

-- The consensus of a resolved question before the cutoff (a view: each branch below reads it).
CREATE OR REPLACE TEMP VIEW _scorable_consensus AS
SELECT c.question_id, c.mode, c.run_id, c.created_at, c.mean, c.median, c.logit_mean, c.sd, r.outcome
FROM consensus AS c
JOIN _resolved AS r ON r.question_id = c.question_id
WHERE c.created_at < r.cutoff;

-- The consensus of every round (one per created_at: the greater run_id's when runs are dated at the
-- same time), with its market comparator. Only at a time more than one run forecast
-- (30_scored_forecasts' _shared_forecast_times; a consensus is dated as its forecasts) can two tie.
CREATE OR REPLACE TABLE _consensus_rounds AS
SELECT * FROM _scorable_consensus ANTI JOIN _shared_forecast_times USING (created_at)
UNION ALL
SELECT * FROM (
  SELECT * FROM _scorable_consensus SEMI JOIN _shared_forecast_times USING (created_at)
  QUALIFY row_number() OVER (PARTITION BY question_id, mode, created_at ORDER BY run_id DESC) = 1
);

CREATE OR REPLACE TABLE _round_comparators AS
WITH pts AS (SELECT DISTINCT question_id, created_at FROM _consensus_rounds)
SELECT pts.question_id, pts.created_at, px.probability, px.observed_at,
       _comparator_status(px.observed_at, pts.created_at, rp.max_comparator_age_days) AS status,
       (epoch(pts.created_at) - epoch(px.observed_at)) / 86400.0 AS age_days
FROM pts
ASOF LEFT JOIN _prices AS px
  ON px.question_id = pts.question_id AND px.observed_at <= pts.created_at
CROSS JOIN run_params AS rp;

CREATE OR REPLACE TABLE _latest_consensus AS
SELECT c.question_id, c.mode, arg_max(c.run_id, (c.created_at, c.run_id)) AS run_id, -- (ties: 30_scored_forecasts)
       count(*) AS n_rounds,
       avg(c.sd) AS sd_all_rounds,
       avg(c.mean) AS mean_all_rounds,
       avg(c.median) AS median_all_rounds,
       avg(c.logit_mean) AS logit_mean_all_rounds,
       avg(m.probability) FILTER (WHERE m.status = 'ok') AS market_probability_all_rounds,
       avg(abs(c.mean - c.outcome)) AS abs_error_all_rounds,
       avg(_brier(c.mean, c.outcome)) AS brier_all_rounds,
       avg(_log_loss(c.mean, c.outcome)) AS log_loss_all_rounds,
       avg(_correct01(c.mean, c.outcome)) AS correct_all_rounds,
       avg(_brier(c.median, c.outcome)) AS median_brier_all_rounds,
       avg(_log_loss(c.median, c.outcome)) AS median_log_loss_all_rounds,
       avg(_correct01(c.median, c.outcome)) AS median_correct_all_rounds,
       avg(_brier(c.logit_mean, c.outcome)) AS logit_mean_brier_all_rounds,
       avg(_log_loss(c.logit_mean, c.outcome)) AS logit_mean_log_loss_all_rounds,
       avg(_correct01(c.logit_mean, c.outcome)) AS logit_mean_correct_all_rounds,
       count(*) FILTER (WHERE m.status = 'ok') AS market_n_rounds,
       avg(_brier(m.probability, c.outcome)) FILTER (WHERE m.status = 'ok') AS market_brier_all_rounds,
       avg(_log_loss(m.probability, c.outcome)) FILTER (WHERE m.status = 'ok') AS market_log_loss_all_rounds,
       avg(_correct01(m.probability, c.outcome)) FILTER (WHERE m.status = 'ok') AS market_correct_all_rounds
FROM _consensus_rounds AS c
LEFT JOIN _round_comparators AS m ON m.question_id = c.question_id AND m.created_at = c.created_at
GROUP BY c.question_id, c.mode;

CREATE OR REPLACE TABLE _consensus_scored_base AS
SELECT c.question_id, c.mode, c.run_id, c.created_at, c.n_models, c.mean AS probability, c.median,
       c.logit_mean, c.sd, c.range, c.sd_logit, c.providers, r.outcome, r.resolved_at, r.category,
       r.domain, list_position(rp.headline_modes, c.mode) AS headline_rank,
       l.* EXCLUDE (question_id, mode, run_id)
FROM _latest_consensus AS l
JOIN consensus AS c ON c.question_id = l.question_id AND c.mode = l.mode AND c.run_id = l.run_id
JOIN _resolved AS r ON r.question_id = l.question_id
CROSS JOIN run_params AS rp;

CREATE OR REPLACE TABLE _headline_mode AS
SELECT question_id, arg_min(mode, headline_rank) AS headline_mode
FROM _consensus_scored_base
WHERE headline_rank > 0
GROUP BY question_id;

CREATE OR REPLACE TABLE scored_consensus AS
SELECT b.question_id, b.mode, b.run_id, b.created_at, b.n_models, b.probability, b.median,
       b.logit_mean, b.sd, b.range, b.sd_logit, b.providers, b.outcome, b.resolved_at,
       _brier(b.probability, b.outcome) AS brier,
       _log_loss(b.probability, b.outcome) AS log_loss,
       _direction(b.probability, b.outcome) AS direction,
       _tier(b.probability) AS tier,
       _horizon_days(b.created_at, b.resolved_at) AS horizon_days,
       _horizon_bucket(_horizon_days(b.created_at, b.resolved_at)) AS horizon_bucket,
       b.category, b.domain,
       CASE WHEN c.status = 'ok' THEN c.probability END AS market_probability,
       CASE WHEN c.status = 'ok' THEN c.observed_at END AS market_observed_at,
       CASE WHEN c.status = 'ok' THEN _brier(c.probability, b.outcome) END AS market_brier,
       CASE WHEN c.status = 'ok' THEN _log_loss(c.probability, b.outcome) END AS market_log_loss,
       coalesce(h.headline_mode = b.mode, false) AS is_headline,
       c.status AS market_status, c.age_days AS market_age_days,
       b.n_rounds::INTEGER AS n_rounds, b.brier_all_rounds, b.log_loss_all_rounds, b.correct_all_rounds,
       b.sd_all_rounds, b.abs_error_all_rounds,
       b.median_brier_all_rounds, b.median_log_loss_all_rounds, b.median_correct_all_rounds,
       b.logit_mean_brier_all_rounds, b.logit_mean_log_loss_all_rounds, b.logit_mean_correct_all_rounds,
       b.market_n_rounds::INTEGER AS market_n_rounds, b.market_brier_all_rounds,
       b.market_log_loss_all_rounds, b.market_correct_all_rounds,
       b.mean_all_rounds, b.median_all_rounds, b.logit_mean_all_rounds, b.market_probability_all_rounds
FROM _consensus_scored_base AS b
LEFT JOIN _round_comparators AS c
  ON c.question_id = b.question_id AND c.created_at = b.created_at
LEFT JOIN _headline_mode AS h ON h.question_id = b.question_id;

DROP TABLE _latest_consensus;
DROP TABLE _consensus_scored_base;
DROP TABLE _consensus_rounds;
DROP TABLE _round_comparators;
