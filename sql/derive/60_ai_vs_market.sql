-- 60_ai_vs_market: AI headline consensus against the market, paired per question.
-- Pairs: the headline scored consensus rows that have a market comparator. Scope 'all' is always
-- present (n = 0 and NULL figures when there is no pair); one row per category with pairs.
-- skill = 1 - ai_brier / market_brier (NULL when market_brier = 0); diff = ai_brier - market_brier
-- per question; diff_sd is the sample sd; the 95% interval is diff_mean +- 1.96 sd / sqrt(n)
-- (NULL when n < 2).

CREATE OR REPLACE TABLE ai_vs_market AS
WITH pairs AS (
  SELECT category, brier AS ai_brier, market_brier, log_loss AS ai_log_loss, market_log_loss,
         brier - market_brier AS diff
  FROM scored_consensus
  WHERE is_headline AND market_probability IS NOT NULL
),
scoped AS (
  SELECT 'all' AS scope, * FROM pairs
  UNION ALL
  SELECT category AS scope, * FROM pairs WHERE category IS NOT NULL
),
agg AS (
  SELECT scope, count(*) AS n, avg(ai_brier) AS ai_brier, avg(market_brier) AS market_brier,
         avg(diff) AS diff_mean, stddev_samp(diff) AS diff_sd,
         avg(ai_log_loss) AS ai_log_loss, avg(market_log_loss) AS market_log_loss
  FROM scoped
  GROUP BY scope
),
with_all AS (
  SELECT s.scope, coalesce(a.n, 0) AS n, a.ai_brier, a.market_brier, a.diff_mean, a.diff_sd,
         a.ai_log_loss, a.market_log_loss
  FROM (SELECT 'all' AS scope) AS s LEFT JOIN agg AS a USING (scope)
  UNION ALL
  SELECT scope, n, ai_brier, market_brier, diff_mean, diff_sd, ai_log_loss, market_log_loss
  FROM agg WHERE scope <> 'all'
)
SELECT scope, n::BIGINT AS n, ai_brier, market_brier,
       CASE WHEN market_brier <> 0 THEN 1 - ai_brier / market_brier END AS skill,
       diff_mean, diff_sd,
       CASE WHEN n >= 2 THEN diff_mean - 1.96 * diff_sd / sqrt(n) END AS diff_ci95_lo,
       CASE WHEN n >= 2 THEN diff_mean + 1.96 * diff_sd / sqrt(n) END AS diff_ci95_hi,
       ai_log_loss, market_log_loss
FROM with_all
ORDER BY scope <> 'all', scope;
