-- 60_ai_vs_market: AI headline consensus against the market, paired per question.
-- Every figure (accuracy, Brier, skill, log loss, the paired interval) is computed on the SAME
-- questions for both sides: the scored consensus rows with a fresh market comparator
-- (market_status 'ok', see 30/40: at most run_params.max_comparator_age_days old). Accuracy is
-- computed on the subset where both sides have a direction (p rounded to 9 decimals <> 0.5).
-- n_consensus = questions with a consensus in the bucket; they are either paired (n) or excluded
-- with a reason: excluded_no_market (no price at or before the consensus), excluded_stale_market
-- (the latest price is older than the maximum age). Of the n pairs, excluded_no_direction have no
-- direction on at least one side (n_directional = n - excluded_no_direction).
-- skill = 1 - ai_brier / market_brier (NULL when market_brier = 0); diff = ai_brier - market_brier
-- per question; diff_sd is the sample sd; the 95% interval is diff_mean +- 1.96 sd / sqrt(n)
-- (NULL when n < 2).
--
-- Buckets, per scope ('all' and each category):
--   overall                  : the headline consensus (ai_vs_market; scope 'all' is always present,
--                              n = 0 and NULL figures when there is no pair);
--   category, domain, horizon: the headline consensus by its category, domain (NULL → 'unknown')
--                              and horizon bucket (ai_vs_market_breakdown);
--   mode                     : the consensus of each mode, key = mode (ai_vs_market_breakdown).
-- The accuracy summary's breakdown items carry these as `vs_market`, so that every AI-versus-market
-- figure it publishes compares the same questions.

CREATE OR REPLACE TABLE _avm_buckets AS
WITH rows_ AS (
  SELECT is_headline, mode, category, coalesce(domain, 'unknown') AS domain,
         coalesce(horizon_bucket, 'unknown') AS horizon, market_status,
         market_status = 'ok' AS paired,
         brier AS ai_brier, market_brier, log_loss AS ai_log_loss, market_log_loss,
         brier - market_brier AS diff,
         direction AS ai_direction, _direction(market_probability, outcome) AS market_direction
  FROM scored_consensus
),
keyed AS (
  SELECT 'overall' AS dimension, 'all' AS key, * FROM rows_ WHERE is_headline
  UNION ALL
  SELECT 'category', coalesce(category, 'unknown'), * FROM rows_ WHERE is_headline
  UNION ALL
  SELECT 'domain', domain, * FROM rows_ WHERE is_headline
  UNION ALL
  SELECT 'horizon', horizon, * FROM rows_ WHERE is_headline
  UNION ALL
  SELECT 'mode', mode, * FROM rows_
),
scoped AS (
  SELECT 'all' AS scope, * FROM keyed
  UNION ALL
  SELECT category AS scope, * FROM keyed WHERE category IS NOT NULL
),
agg AS (
  SELECT scope, dimension, key,
         count(*) AS n_consensus,
         count(*) FILTER (WHERE paired) AS n,
         count(*) FILTER (WHERE market_status = 'none') AS excluded_no_market,
         count(*) FILTER (WHERE market_status = 'stale') AS excluded_stale_market,
         count(*) FILTER (WHERE paired AND ai_direction <> 'none' AND market_direction <> 'none')
           AS n_directional,
         count(*) FILTER (WHERE paired AND ai_direction = 'correct' AND market_direction <> 'none')
           AS ai_correct,
         count(*) FILTER (WHERE paired AND market_direction = 'correct' AND ai_direction <> 'none')
           AS market_correct,
         avg(ai_brier) FILTER (WHERE paired) AS ai_brier,
         avg(market_brier) FILTER (WHERE paired) AS market_brier,
         avg(diff) FILTER (WHERE paired) AS diff_mean,
         stddev_samp(diff) FILTER (WHERE paired) AS diff_sd,
         avg(ai_log_loss) FILTER (WHERE paired) AS ai_log_loss,
         avg(market_log_loss) FILTER (WHERE paired) AS market_log_loss
  FROM scoped
  GROUP BY scope, dimension, key
),
with_all AS (
  SELECT s.scope, s.dimension, s.key, a.* EXCLUDE (scope, dimension, key)
  FROM (SELECT 'all' AS scope, 'overall' AS dimension, 'all' AS key) AS s
  LEFT JOIN agg AS a USING (scope, dimension, key)
  UNION ALL
  SELECT * FROM agg WHERE NOT (scope = 'all' AND dimension = 'overall')
)
SELECT scope, dimension, key, coalesce(n, 0)::BIGINT AS n, ai_brier, market_brier,
       CASE WHEN market_brier <> 0 THEN 1 - ai_brier / market_brier END AS skill,
       diff_mean, diff_sd,
       CASE WHEN n >= 2 THEN diff_mean - 1.96 * diff_sd / sqrt(n) END AS diff_ci95_lo,
       CASE WHEN n >= 2 THEN diff_mean + 1.96 * diff_sd / sqrt(n) END AS diff_ci95_hi,
       ai_log_loss, market_log_loss,
       coalesce(n_consensus, 0)::BIGINT AS n_consensus,
       coalesce(excluded_no_market, 0)::BIGINT AS excluded_no_market,
       coalesce(excluded_stale_market, 0)::BIGINT AS excluded_stale_market,
       coalesce(n_directional, 0)::BIGINT AS n_directional,
       (coalesce(n, 0) - coalesce(n_directional, 0))::BIGINT AS excluded_no_direction,
       CASE WHEN n_directional > 0 THEN 100.0 * ai_correct / n_directional END AS ai_accuracy_pct,
       CASE WHEN n_directional > 0 THEN 100.0 * market_correct / n_directional END AS market_accuracy_pct
FROM with_all;

-- Published: the overall comparison per scope ('all' first).
CREATE OR REPLACE TABLE ai_vs_market AS
SELECT * EXCLUDE (dimension, key)
FROM _avm_buckets
WHERE dimension = 'overall'
ORDER BY scope <> 'all', scope;

-- Published: the comparison per bucket of category, domain, horizon and mode, per scope.
CREATE OR REPLACE TABLE ai_vs_market_breakdown AS
SELECT *
FROM _avm_buckets
WHERE dimension <> 'overall'
ORDER BY scope <> 'all', scope, dimension, key;

DROP TABLE _avm_buckets;
