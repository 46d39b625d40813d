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
       sum(sum_outcome) / sum(n) AS observed, sum(sum_pq) AS sum_pq
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
       -- (Wilson's interval contains the observed frequency; each bound is clamped to it, as
       -- rounding put one a last bit across it: observed 1, hi 0.9999999999999999; QA)
       CASE WHEN n > 0 THEN least(observed, greatest(0.0,
         (observed + z2 / (2 * n)) / (1 + z2 / n)
         - 1.96 * sqrt(observed * (1 - observed) / n + z2 / (4.0 * n * n)) / (1 + z2 / n))) END
         AS wilson_lo,
       CASE WHEN n > 0 THEN greatest(observed, least(1.0,
         (observed + z2 / (2 * n)) / (1 + z2 / n)
         + 1.96 * sqrt(observed * (1 - observed) / n + z2 / (4.0 * n * n)) / (1 + z2 / n))) END
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
-- ECE interval: ece_ci95_lo/hi, the 2.5%/97.5% percentiles of the ECE over the bootstrap replicates
-- of 51_bootstrap (questions resampled; per replicate ECE = sum_k |sum w (o - p)| / sum w over the
-- same bins). Replicates that draw none of the forecaster's questions are left out.
-- Noise floor: ece_noise_floor, the expected ECE of a perfectly calibrated forecaster making the
-- same forecasts (outcomes drawn as Bernoulli(p) for each forecast), under the normal
-- approximation of each bin's sum of outcomes: E|sum_k(o - p)| ~ sqrt(2/pi) * sqrt(sum_k p(1 - p)),
--   ece_noise_floor = sum_k sqrt(2/pi * sum_{i in k} p_i (1 - p_i)) / N.
-- An ECE inside its noise floor is indistinguishable from sampling noise; the approximation
-- understates the floor for bins of one or two forecasts (e.g. exact 2p(1 - p) vs 0.80 sqrt(p(1 - p))).

CREATE OR REPLACE TABLE _ece_groups AS
SELECT o.forecaster, o.mode, _calibration_bin(o.p) AS bin, g.grp,
       count(*) AS n, sum(o.outcome - o.p) AS sum_err
FROM _obs AS o
JOIN bootstrap_groups AS g ON g.question_id = o.question_id
GROUP BY ALL;

-- The short leaderboard of service stats (headline_leaderboard): every forecaster of the headline
-- mode (each model's scored forecast in the question's headline mode, the headline consensus, and
-- the market's fresh comparator) scored on the SAME questions, so that the ranking compares like
-- with like: the resolved questions whose headline consensus has a fresh market comparator
-- (market_status 'ok') and that every model with any headline-mode scored forecast scored. Per
-- forecaster over those n questions: brier, log_loss, accuracy_pct (100 × correct / its questions
-- with a direction), ece (Σ over the 10 bins of |Σ (o − p)| / n); rank by Brier (lower is better,
-- ties share a rank), compared at 9 decimals as the leaderboard's (52_leaderboard.sql): a
-- consensus equal to the market up to its last bit (0.3, 0.3, 0.7, 0.7 average to
-- 0.49999999999999994) has the market's Brier and shares its rank. calibration_summary keeps each forecaster's figures over all its questions.
CREATE OR REPLACE TABLE headline_leaderboard AS
WITH obs AS (
  SELECT forecaster, question_id, p, outcome, brier, log_loss, direction
  FROM _obs
  WHERE mode = 'headline'
),
models AS (
  SELECT count(DISTINCT forecaster) AS n_models FROM obs WHERE forecaster NOT IN ('consensus', 'market')
),
common AS (
  SELECT o.question_id
  FROM obs AS o
  JOIN scored_consensus AS sc ON sc.question_id = o.question_id AND sc.is_headline AND sc.market_status = 'ok'
  WHERE o.forecaster NOT IN ('consensus', 'market')
  GROUP BY o.question_id
  HAVING count(DISTINCT o.forecaster) = (SELECT n_models FROM models)
),
scored AS (
  SELECT o.* FROM obs AS o SEMI JOIN common AS c ON c.question_id = o.question_id
),
bins AS (
  SELECT forecaster, abs(sum(outcome - p)) AS gap
  FROM scored
  GROUP BY forecaster, _calibration_bin(p)
),
agg AS (
  SELECT forecaster, count(*) AS n, avg(brier) AS brier, avg(log_loss) AS log_loss,
         count(*) FILTER (WHERE direction <> 'none') AS n_directional,
         count(*) FILTER (WHERE direction = 'correct') AS n_correct
  FROM scored
  GROUP BY forecaster
)
SELECT a.forecaster, a.n::BIGINT AS n, a.brier, a.log_loss,
       CASE WHEN a.n_directional > 0 THEN 100.0 * a.n_correct / a.n_directional END AS accuracy_pct,
       b.gap / a.n AS ece,
       rank() OVER (ORDER BY round(a.brier, 9))::INTEGER AS rank
FROM agg AS a
JOIN (SELECT forecaster, sum(gap) AS gap FROM bins GROUP BY forecaster) AS b USING (forecaster)
ORDER BY rank, forecaster;

DROP VIEW _obs;

-- Per (forecaster, mode, bin): the group sums packed over the bin's own groups (51_bootstrap's
-- `_boot_idx`).
CREATE OR REPLACE TABLE _ece_vectors AS
SELECT forecaster, mode, bin, _boot_idx(grp) AS idx,
       _boot_vec(n, grp) AS n_vec,
       _boot_vec(sum_err, grp) AS err_vec
FROM _ece_groups
GROUP BY forecaster, mode, bin;

CREATE OR REPLACE TABLE _ece_interval AS
WITH rw AS (SELECT v.*, m.replicate, _boot_w(m.w, v.idx) AS w FROM _ece_vectors AS v CROSS JOIN _boot_matrix AS m),
per_bin AS (
  SELECT forecaster, mode, replicate, list_dot_product(w, n_vec) AS n, list_dot_product(w, err_vec) AS err
  FROM rw
),
reps AS (
  SELECT forecaster, mode, replicate, sum(abs(err)) / sum(n) AS ece
  FROM per_bin
  GROUP BY ALL
  HAVING sum(n) > 0
)
SELECT forecaster, mode, quantile_cont(ece, [0.025, 0.975])[1] AS ece_ci95_lo,
       quantile_cont(ece, [0.025, 0.975])[2] AS ece_ci95_hi
FROM reps
-- no interval from fewer than two bootstrap groups (51_bootstrap's `_boot_ci` rule; _ece_groups has
-- a row per bin and group, so the groups are counted across the bins)
SEMI JOIN (SELECT forecaster, mode FROM _ece_groups GROUP BY ALL HAVING count(DISTINCT grp) >= 2) USING (forecaster, mode)
GROUP BY ALL;

DROP TABLE _ece_vectors;
DROP TABLE _ece_groups;

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
       t.base_rate,
       any_value(i.ece_ci95_lo) AS ece_ci95_lo,
       any_value(i.ece_ci95_hi) AS ece_ci95_hi,
       sum(sqrt(2 / pi() * b.sum_pq)) / t.n AS ece_noise_floor
FROM totals AS t
JOIN _calibration_bins AS b USING (forecaster, mode)
LEFT JOIN _ece_interval AS i USING (forecaster, mode)
GROUP BY t.forecaster, t.mode, t.n, t.brier, t.log_loss, t.n_directional, t.n_correct, t.base_rate
ORDER BY t.forecaster, t.mode;
