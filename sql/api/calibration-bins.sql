-- The 10 equal-width calibration bins per (forecaster, mode), with Wilson 95% intervals.
SELECT
  forecaster,
  mode,
  bin,
  bin_lo,
  bin_hi,
  n,
  mean_p,
  observed,
  wilson_lo,
  wilson_hi
FROM calibration
ORDER BY forecaster, mode, bin;
