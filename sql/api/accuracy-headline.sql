-- The AI headline consensus accuracy of one scope ('all' or a category), every dimension
-- (overall, category, domain, horizon, tier, model, mode), with the AI-versus-market comparison of
-- the bucket beside it (ai_vs_market_breakdown: both sides on the same questions, the bucket's
-- consensus rows with a fresh comparator) for category, domain, horizon and mode. None for tier
-- (the market's tier comes from its own probability, i.e. other questions) nor for model; the
-- overall comparison is ai_vs_market (ai-vs-market.sql).
-- Parameters: $scope VARCHAR.
SELECT
  c.dimension,
  c.key,
  c.n,
  c.brier,
  c.log_loss,
  c.n_directional,
  c.n_correct,
  c.n_no_direction,
  c.accuracy_pct,
  b.n AS vs_n,
  b.ai_brier AS vs_ai_brier,
  b.market_brier AS vs_market_brier,
  b.skill AS vs_skill,
  b.diff_mean AS vs_diff_mean,
  b.diff_sd AS vs_diff_sd,
  b.diff_ci95_lo AS vs_diff_ci95_lo,
  b.diff_ci95_hi AS vs_diff_ci95_hi,
  b.ai_log_loss AS vs_ai_log_loss,
  b.market_log_loss AS vs_market_log_loss,
  b.n_consensus AS vs_n_consensus,
  b.excluded_no_market AS vs_excluded_no_market,
  b.excluded_stale_market AS vs_excluded_stale_market,
  b.n_directional AS vs_n_directional,
  b.excluded_no_direction AS vs_excluded_no_direction,
  b.ai_accuracy_pct AS vs_ai_accuracy_pct,
  b.market_accuracy_pct AS vs_market_accuracy_pct
FROM accuracy AS c
LEFT JOIN ai_vs_market_breakdown AS b
  ON b.scope = c.scope AND b.dimension = c.dimension AND b.key = c.key
WHERE c.scope = $scope
  AND c.forecaster = 'consensus'
  AND c.mode = 'headline'
ORDER BY c.dimension, c.key;
