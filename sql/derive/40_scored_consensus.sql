-- 40_scored_consensus: one row per scored (question_id, mode): the consensus of the latest run
-- whose consensus created_at (the latest forecast of the run's group) is strictly before both the
-- question's close_time and its resolved_at, for resolved, non-annulled questions.
-- probability = the consensus mean (the headline statistic). Scores, tier, horizon and market
-- comparator as defined in 30_scored_forecasts, applied to the consensus mean.
-- is_headline: per question, the first mode of run_params.headline_modes that has a scored
-- consensus (default augmented, then informed, then blind).

CREATE OR REPLACE TABLE scored_consensus AS
WITH latest AS (
  SELECT c.question_id, c.mode, arg_max(c, c.created_at) AS c
  FROM consensus AS c
  JOIN _resolved AS r ON r.question_id = c.question_id
  WHERE c.created_at < r.cutoff
  GROUP BY c.question_id, c.mode
),
sc AS (
  SELECT l.question_id, l.mode, l.c.run_id AS run_id, l.c.created_at AS created_at,
         l.c.n_models AS n_models, l.c.mean AS probability, l.c.median AS median,
         l.c.logit_mean AS logit_mean, l.c.sd AS sd, l.c.range AS range, l.c.sd_logit AS sd_logit,
         l.c.providers AS providers, r.outcome, r.resolved_at, r.category, r.domain,
         list_position(rp.headline_modes, l.mode) AS headline_rank
  FROM latest AS l
  JOIN _resolved AS r ON r.question_id = l.question_id
  CROSS JOIN run_params AS rp
),
m AS (
  SELECT sc.*, px.probability AS market_probability, px.observed_at AS market_observed_at
  FROM sc
  ASOF LEFT JOIN _prices AS px
    ON px.question_id = sc.question_id AND px.observed_at <= sc.created_at
)
SELECT question_id, mode, run_id, created_at, n_models, probability, median, logit_mean, sd, range,
       sd_logit, providers, outcome, resolved_at,
       _brier(probability, outcome) AS brier,
       _log_loss(probability, outcome) AS log_loss,
       _direction(probability, outcome) AS direction,
       _tier(probability) AS tier,
       _horizon_days(created_at, resolved_at) AS horizon_days,
       _horizon_bucket(_horizon_days(created_at, resolved_at)) AS horizon_bucket,
       category, domain, market_probability, market_observed_at,
       _brier(market_probability, outcome) AS market_brier,
       _log_loss(market_probability, outcome) AS market_log_loss,
       coalesce(headline_rank IS NOT NULL AND headline_rank > 0
                AND headline_rank = min(CASE WHEN headline_rank > 0 THEN headline_rank END)
                                      OVER (PARTITION BY question_id), false) AS is_headline
FROM m;
