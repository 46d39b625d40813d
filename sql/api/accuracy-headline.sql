-- The AI headline consensus accuracy of one scope ('all' or a category), every dimension
-- (overall, category, domain, horizon, tier, model, mode), with the market comparator of the same
-- questions beside it where the comparison is like for like:
--   overall/category/domain/horizon: market rows of mode 'headline', same dimension and key;
--   mode m: the market's overall row of mode m (the comparators paired with the consensus in m).
-- No market figures for tier (the market's tier comes from its own probability, i.e. other
-- questions) nor for model.
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
  m.n AS market_n,
  m.brier AS market_brier,
  m.log_loss AS market_log_loss,
  m.accuracy_pct AS market_accuracy_pct
FROM accuracy AS c
LEFT JOIN accuracy AS m
  ON m.scope = c.scope
 AND m.forecaster = 'market'
 AND (
      (c.dimension IN ('overall', 'category', 'domain', 'horizon')
        AND m.mode = 'headline' AND m.dimension = c.dimension AND m.key = c.key)
   OR (c.dimension = 'mode' AND m.mode = c.key AND m.dimension = 'overall')
 )
WHERE c.scope = $scope
  AND c.forecaster = 'consensus'
  AND c.mode = 'headline'
ORDER BY c.dimension, c.key;
