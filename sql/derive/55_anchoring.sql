-- 55_anchoring: how far each forecaster moves toward the market once the market is shown
-- (sql/README.md, `anchoring`).
--
-- Forecasters: each model (its scored forecasts) and consensus_mean (the scored consensus mean).
-- Per forecaster and mode, over the forecaster's scored forecasts (rounds 'latest') of questions
-- with a fresh market comparator m at the forecast's time (market_status 'ok'):
--   n_market, corr_market (Pearson correlation of p and m; NULL when either is constant),
--   mean_abs_diff_market (mean |p − m|).
-- For the informed and augmented modes, over the questions that ALSO have a blind forecast p_blind
-- (scored, of the same forecaster):
--   slope = Σ x·y / Σ x², the least-squares slope THROUGH THE ORIGIN of y = p_mode − p_blind on
--   x = m − p_blind: 1 = the forecast copies the market, 0 = it ignores it (it stays at its blind
--   answer), negative = it moves away. n_slope pairs; slope_ci95_* the bootstrap interval
--   (51_bootstrap, questions resampled). Pairs with x = 0 carry no information on the slope.
-- Only the latest forecast before the cutoff is used (rounds 'latest'): the move is measured
-- within one forecast, and the blind forecast of the same run is not kept per round.

CREATE OR REPLACE TABLE _anc_obs AS
WITH base AS (
  SELECT model AS forecaster, mode, question_id, probability AS p, market_probability AS m
  FROM scored_forecasts
  UNION ALL
  SELECT 'consensus_mean', mode, question_id, probability, market_probability
  FROM scored_consensus
),
blind AS (SELECT forecaster, question_id, p AS p_blind FROM base WHERE mode = 'blind')
SELECT b.forecaster, b.mode, b.question_id, g.grp, b.p, b.m, bl.p_blind,
       b.m - bl.p_blind AS x, b.p - bl.p_blind AS y
FROM base AS b
LEFT JOIN blind AS bl ON bl.forecaster = b.forecaster AND bl.question_id = b.question_id
JOIN bootstrap_groups AS g ON g.question_id = b.question_id
WHERE b.m IS NOT NULL;

CREATE OR REPLACE TABLE _anc_groups AS
SELECT forecaster, mode, grp,
       count(*) FILTER (WHERE x IS NOT NULL AND mode <> 'blind') AS n_slope,
       sum(x * y) FILTER (WHERE mode <> 'blind') AS sxy,
       sum(x * x) FILTER (WHERE mode <> 'blind') AS sxx
FROM _anc_obs
GROUP BY ALL;

CREATE OR REPLACE TABLE anchoring AS
WITH cells AS (SELECT DISTINCT forecaster, mode FROM _anc_groups WHERE mode <> 'blind'),
vec AS (
  SELECT c.forecaster, c.mode,
         list(coalesce(g.sxy, 0)::DOUBLE ORDER BY gg.grp) AS sxy_v,
         list(coalesce(g.sxx, 0)::DOUBLE ORDER BY gg.grp) AS sxx_v
  FROM cells AS c
  CROSS JOIN range(_boot_groups_n()) AS gg(grp)
  LEFT JOIN _anc_groups AS g ON g.forecaster = c.forecaster AND g.mode = c.mode AND g.grp = gg.grp
  GROUP BY ALL
),
ci AS (
  SELECT v.forecaster, v.mode,
         quantile_cont(list_dot_product(m.w, v.sxy_v) / nullif(list_dot_product(m.w, v.sxx_v), 0), 0.025) AS lo,
         quantile_cont(list_dot_product(m.w, v.sxy_v) / nullif(list_dot_product(m.w, v.sxx_v), 0), 0.975) AS hi
  FROM vec AS v CROSS JOIN _boot_matrix AS m
  GROUP BY ALL
),
pt AS (
  SELECT forecaster, mode, count(*) AS n_market, corr(p, m) AS corr_market,
         avg(abs(p - m)) AS mean_abs_diff_market,
         count(*) FILTER (WHERE x IS NOT NULL AND mode <> 'blind') AS n_slope,
         sum(x * y) FILTER (WHERE mode <> 'blind') / nullif(sum(x * x) FILTER (WHERE mode <> 'blind'), 0) AS slope
  FROM _anc_obs
  GROUP BY ALL
)
SELECT pt.forecaster,
       CASE WHEN pt.forecaster = 'consensus_mean' THEN 'consensus' ELSE 'model' END AS kind,
       pt.mode, pt.n_market::BIGINT AS n_market, pt.corr_market, pt.mean_abs_diff_market,
       pt.n_slope::BIGINT AS n_slope, pt.slope, ci.lo AS slope_ci95_lo, ci.hi AS slope_ci95_hi
FROM pt
LEFT JOIN ci USING (forecaster, mode)
ORDER BY pt.forecaster, CASE pt.mode WHEN 'blind' THEN 0 WHEN 'informed' THEN 1 ELSE 2 END;

DROP TABLE _anc_obs;
DROP TABLE _anc_groups;

-- The leaderboard's observations (52) are not needed after 54: free them.
DROP TABLE _lb_obs;
DROP TABLE _lb_q;
