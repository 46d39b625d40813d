-- Every forecaster's (models, consensus, market) overall, per-tier and per-domain accuracy rows
-- of one scope, per mode.
-- Parameters: $scope VARCHAR.
SELECT
  forecaster,
  mode,
  dimension,
  key,
  n,
  brier,
  log_loss,
  n_directional,
  n_correct,
  n_no_direction,
  accuracy_pct
FROM accuracy
WHERE scope = $scope
  AND dimension IN ('overall', 'tier', 'domain')
ORDER BY forecaster, mode, dimension, key;
