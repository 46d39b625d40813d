-- 20_consensus: the four-model consensus and disagreement per (question, mode, run), in ONE
-- aggregation pass over the visible forecasts (created_at <= as_of, question known at as_of).
--
-- p is clipped to [0.001, 0.999] for log-odds only (logit_mean, sd_logit); mean, median, sd and
-- range use the probabilities as given. n_models = forecasts in the group (the raw key
-- (run_id, question_id, model, mode) is unique, so one per model).
-- Median: exact, from the sorted list of the group's probabilities (a handful per group), which
-- is cheaper than the general quantile aggregate over millions of small groups.
-- Providers: distinct providers, sorted, joined by ','.

CREATE OR REPLACE TABLE consensus AS
WITH f AS (
  SELECT f.question_id, f.mode, f.run_id, f.created_at, f.probability AS p, f.provider,
         ln(greatest(0.001, least(0.999, f.probability))
            / (1 - greatest(0.001, least(0.999, f.probability)))) AS lo
  FROM raw_forecasts AS f
  SEMI JOIN questions AS q ON q.question_id = f.question_id
  WHERE f.created_at <= (SELECT as_of FROM run_params)
    AND f.probability IS NOT NULL
),
g AS (
  SELECT question_id, mode, run_id,
         max(created_at) AS created_at,
         count(*) AS n_models,
         avg(p) AS mean,
         list_sort(list(p)) AS ps,
         avg(lo) AS mean_lo,
         stddev_pop(p) AS sd,
         max(p) - min(p) AS range,
         stddev_pop(lo) AS sd_logit,
         string_agg(DISTINCT provider, ',' ORDER BY provider) AS providers
  FROM f
  GROUP BY question_id, mode, run_id
)
SELECT question_id, mode, run_id, created_at, n_models::INTEGER AS n_models, mean,
       CASE WHEN n_models % 2 = 1 THEN ps[(n_models + 1) // 2]
            ELSE (ps[n_models // 2] + ps[n_models // 2 + 1]) / 2 END AS median,
       1 / (1 + exp(-mean_lo)) AS logit_mean,
       sd, range, sd_logit, providers
FROM g;
