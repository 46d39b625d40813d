-- The probability endpoint's recalibration (sql/derive/95_calibration_models.sql): the pool row
-- and each model's Platt fit per mode, with the out-of-sample check. Pool rows first.
SELECT
  kind,
  mode,
  model,
  method,
  intercept,
  slope,
  prior_intercept,
  prior_slope,
  prior_precision,
  converged,
  n_questions,
  n_forecasts,
  fitted_through,
  extremize,
  extremize_method,
  extremize_n,
  oos_brier_raw,
  oos_brier_calibrated,
  oos_n,
  oos_folds,
  min_questions,
  as_of
FROM calibration_models
ORDER BY kind DESC, mode, model;
