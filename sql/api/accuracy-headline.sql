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
  b AS vs_market -- the bucket's ai_vs_market_breakdown row as one struct (every field NULL without one)
FROM accuracy AS c
LEFT JOIN ai_vs_market_breakdown AS b
  ON b.scope = c.scope AND b.dimension = c.dimension AND b.key = c.key
WHERE c.scope = $scope
  AND c.forecaster = 'consensus'
  AND c.mode = 'headline'
ORDER BY c.dimension, c.key;
