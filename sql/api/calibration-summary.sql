-- Calibration summary per (forecaster, mode): Brier, log loss, directional accuracy, ECE and the
-- Murphy decomposition.
SELECT
  forecaster,
  mode,
  n,
  brier,
  log_loss,
  accuracy_pct,
  ece,
  reliability,
  resolution,
  uncertainty,
  base_rate
FROM calibration_summary
ORDER BY forecaster, mode;
