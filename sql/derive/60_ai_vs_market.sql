-- 60_ai_vs_market: AI headline consensus against the market, paired per question.
-- Every figure (accuracy, Brier, skill, log loss, the paired interval) is computed on the SAME
-- questions for both sides: the headline scored consensus rows with a fresh market comparator
-- (market_status 'ok', see 30/40: at most run_params.max_comparator_age_days old). Accuracy is
-- computed on the subset where both sides have a direction (p rounded to 9 decimals <> 0.5).
-- n_consensus = questions with a headline consensus; they are either paired (n) or excluded with a
-- reason: excluded_no_market (no price at or before the consensus), excluded_stale_market (the
-- latest price is older than the maximum age). Of the n pairs, excluded_no_direction have no
-- direction on at least one side (n_directional = n - excluded_no_direction).
-- Scope 'all' is always present (n = 0 and NULL figures when there is no pair); one row per
-- category with a headline consensus.
-- skill = 1 - ai_brier / market_brier (NULL when market_brier = 0); diff = ai_brier - market_brier
-- per question; diff_sd is the sample sd; the 95% interval is diff_mean +- 1.96 sd / sqrt(n)
-- (NULL when n < 2).

CREATE OR REPLACE TABLE ai_vs_market AS
WITH heads AS (
  SELECT category, market_status,
         market_status = 'ok' AS paired,
         brier AS ai_brier, market_brier, log_loss AS ai_log_loss, market_log_loss,
         brier - market_brier AS diff,
         direction AS ai_direction, _direction(market_probability, outcome) AS market_direction
  FROM scored_consensus
  WHERE is_headline
),
scoped AS (
  SELECT 'all' AS scope, * FROM heads
  UNION ALL
  SELECT category AS scope, * FROM heads WHERE category IS NOT NULL
),
agg AS (
  SELECT scope,
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
  GROUP BY scope
),
with_all AS (
  SELECT s.scope, a.* EXCLUDE (scope)
  FROM (SELECT 'all' AS scope) AS s LEFT JOIN agg AS a USING (scope)
  UNION ALL
  SELECT * FROM agg WHERE scope <> 'all'
)
SELECT scope, coalesce(n, 0)::BIGINT AS n, ai_brier, market_brier,
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
FROM with_all
ORDER BY scope <> 'all', scope;
