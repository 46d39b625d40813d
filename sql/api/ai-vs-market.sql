-- AI headline consensus against the market, paired per question, for one scope: both sides on the
-- same questions (fresh comparator; accuracy: a direction on both sides), with the excluded counts.
-- Parameters: $scope VARCHAR.
SELECT
  n,
  ai_brier,
  market_brier,
  skill,
  diff_mean,
  diff_sd,
  diff_ci95_lo,
  diff_ci95_hi,
  ai_log_loss,
  market_log_loss,
  n_consensus,
  excluded_no_market,
  excluded_stale_market,
  n_directional,
  excluded_no_direction,
  ai_accuracy_pct,
  market_accuracy_pct
FROM ai_vs_market
WHERE scope = $scope;
