-- 70_calibration: reliability of every forecaster (consensus, market, each model) per mode
-- (blind, informed, augmented, headline), over the scored observations of 50_accuracy, from its
-- cells (_accuracy_cells, which carry the calibration bin and the sums of p and outcome).
-- Bins: 10 equal-width bins, bin = floor(p * 10) with p = 1 in bin 9 (p * 10 is rounded to 9
-- decimals first so that p = 0.3 lands in bin 3 whatever its binary representation).
-- Wilson 95% interval (z = 1.96) on the observed frequency p^ of n outcomes:
--   center = (p^ + z^2/(2n)) / (1 + z^2/n)
--   half   = z * sqrt(p^(1 - p^)/n + z^2/(4n^2)) / (1 + z^2/n)
-- Empty bins are present with n = 0 and NULL figures.

CREATE OR REPLACE TABLE _calibration_bins AS
SELECT forecaster, mode, bin, sum(n) AS n, sum(sum_p) / sum(n) AS mean_p,
       sum(sum_outcome) / sum(n) AS observed
FROM _accuracy_cells
GROUP BY forecaster, mode, bin;

CREATE OR REPLACE TABLE calibration AS
WITH fm AS (SELECT DISTINCT forecaster, mode FROM _calibration_bins),
grid AS (SELECT fm.forecaster, fm.mode, b.bin::INTEGER AS bin FROM fm, range(10) AS b(bin)),
w AS (
  SELECT g.forecaster, g.mode, g.bin, coalesce(c.n, 0)::BIGINT AS n, c.mean_p, c.observed,
         (1.96 * 1.96) AS z2
  FROM grid AS g
  LEFT JOIN _calibration_bins AS c USING (forecaster, mode, bin)
)
SELECT forecaster, mode, bin, bin / 10.0 AS bin_lo, (bin + 1) / 10.0 AS bin_hi, n, mean_p, observed,
       CASE WHEN n > 0 THEN greatest(0.0,
         (observed + z2 / (2 * n)) / (1 + z2 / n)
         - 1.96 * sqrt(observed * (1 - observed) / n + z2 / (4.0 * n * n)) / (1 + z2 / n)) END
         AS wilson_lo,
       CASE WHEN n > 0 THEN least(1.0,
         (observed + z2 / (2 * n)) / (1 + z2 / n)
         + 1.96 * sqrt(observed * (1 - observed) / n + z2 / (4.0 * n * n)) / (1 + z2 / n)) END
         AS wilson_hi
FROM w
ORDER BY forecaster, mode, bin;

-- Summary per (forecaster, mode). With N observations, bins k of n_k observations, mean forecast
-- p_k, observed frequency o_k and base rate o:
--   ece         = sum n_k/N * |o_k - p_k|
--   reliability = sum n_k/N * (p_k - o_k)^2
--   resolution  = sum n_k/N * (o_k - o)^2
--   uncertainty = o (1 - o)
-- Murphy: brier = reliability - resolution + uncertainty + (within-bin spread terms), exact when
-- every forecast in a bin has the same value.
CREATE OR REPLACE TABLE calibration_summary AS
WITH totals AS (
  SELECT forecaster, mode, sum(n) AS n, sum(sum_brier) / sum(n) AS brier,
         sum(sum_log_loss) / sum(n) AS log_loss,
         sum(n_directional) AS n_directional, sum(n_correct) AS n_correct,
         sum(sum_outcome) / sum(n) AS base_rate
  FROM _accuracy_cells
  GROUP BY forecaster, mode
)
SELECT t.forecaster, t.mode, t.n::BIGINT AS n, t.brier, t.log_loss,
       CASE WHEN t.n_directional > 0 THEN 100.0 * t.n_correct / t.n_directional END AS accuracy_pct,
       sum(b.n / t.n * abs(b.observed - b.mean_p)) AS ece,
       sum(b.n / t.n * (b.mean_p - b.observed) ** 2) AS reliability,
       sum(b.n / t.n * (b.observed - t.base_rate) ** 2) AS resolution,
       t.base_rate * (1 - t.base_rate) AS uncertainty,
       t.base_rate
FROM totals AS t
JOIN _calibration_bins AS b USING (forecaster, mode)
GROUP BY ALL
ORDER BY t.forecaster, t.mode;
