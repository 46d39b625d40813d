-- AI headline consensus against the market, paired per question, for one scope.
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
  market_log_loss
FROM ai_vs_market
WHERE scope = $scope;
