-- 40_scored_consensus: one row per scored (question_id, mode): the consensus of the latest run
-- whose consensus created_at (the latest forecast of the run's group) is strictly before both the
-- question's close_time and its resolved_at, for resolved, non-annulled questions.
-- probability = the consensus mean (the headline statistic). Scores, tier, horizon and market
-- comparator as in 30_scored_forecasts (definitions: 25_score_functions), applied to the mean.
-- is_headline: per question, the first mode of run_params.headline_modes that has a scored
-- consensus (default augmented, then informed, then blind).

CREATE OR REPLACE TABLE _latest_consensus AS
SELECT c.question_id, c.mode, arg_max(c.run_id, c.created_at) AS run_id
FROM consensus AS c
JOIN _resolved AS r ON r.question_id = c.question_id
WHERE c.created_at < r.cutoff
GROUP BY c.question_id, c.mode;

CREATE OR REPLACE TABLE _consensus_scored_base AS
SELECT c.question_id, c.mode, c.run_id, c.created_at, c.n_models, c.mean AS probability, c.median,
       c.logit_mean, c.sd, c.range, c.sd_logit, c.providers, r.outcome, r.resolved_at, r.category,
       r.domain, list_position(rp.headline_modes, c.mode) AS headline_rank
FROM _latest_consensus AS l
JOIN consensus AS c ON c.question_id = l.question_id AND c.mode = l.mode AND c.run_id = l.run_id
JOIN _resolved AS r ON r.question_id = l.question_id
CROSS JOIN run_params AS rp;

CREATE OR REPLACE TABLE _consensus_comparators AS
WITH pts AS (SELECT DISTINCT question_id, created_at FROM _consensus_scored_base)
SELECT pts.question_id, pts.created_at, px.probability, px.observed_at
FROM pts
ASOF LEFT JOIN _prices AS px
  ON px.question_id = pts.question_id AND px.observed_at <= pts.created_at;

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
       c.probability AS market_probability, c.observed_at AS market_observed_at,
       _brier(c.probability, b.outcome) AS market_brier,
       _log_loss(c.probability, b.outcome) AS market_log_loss,
       coalesce(h.headline_mode = b.mode, false) AS is_headline
FROM _consensus_scored_base AS b
LEFT JOIN _consensus_comparators AS c
  ON c.question_id = b.question_id AND c.created_at = b.created_at
LEFT JOIN _headline_mode AS h ON h.question_id = b.question_id;

DROP TABLE _latest_consensus;
DROP TABLE _consensus_scored_base;
DROP TABLE _consensus_comparators;
