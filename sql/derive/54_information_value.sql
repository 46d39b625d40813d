-- 54_information_value: what each information mode is worth (sql/README.md, `information_value`).
--
-- Per forecaster (each model; the consensus as mean, median and logit-mean), rounds and cell
-- (overall, or one category), two paired comparisons, each over the questions the forecaster has
-- scored in BOTH modes of the comparison:
--   blind_to_informed     value = Brier(blind) − Brier(informed)
--   informed_to_augmented value = Brier(informed) − Brier(augmented)
-- Positive: the extra information lowered the Brier score. brier_from / brier_to are the two means
-- on those same questions; value_ci95_* is the bootstrap interval (51_bootstrap: questions
-- resampled, the same questions for both modes). The observations are 52_leaderboard's leaderboard_observations
-- (rounds 'latest' and 'all' as there); NULL category is 'unknown'.

-- Per (forecaster, category, group): the pairs' count and sums of each (rounds, comparison), as
-- FILTERed aggregates of one pass over the per-question pivot (a pair: both modes scored), then
-- unpivoted: no row per pair is materialized.
CREATE OR REPLACE TABLE _voi_groups AS
WITH by_mode AS (
  SELECT forecaster, question_id, any_value(category) AS category, any_value(grp) AS grp,
         max(b_l) FILTER (WHERE mode = 'blind') AS blind_l,
         max(b_l) FILTER (WHERE mode = 'informed') AS informed_l,
         max(b_l) FILTER (WHERE mode = 'augmented') AS augmented_l,
         max(b_a) FILTER (WHERE mode = 'blind') AS blind_a,
         max(b_a) FILTER (WHERE mode = 'informed') AS informed_a,
         max(b_a) FILTER (WHERE mode = 'augmented') AS augmented_a
  FROM leaderboard_observations
  WHERE forecaster <> 'market'
  GROUP BY forecaster, question_id
),
g AS (
  SELECT forecaster, category, grp,
         count(*) FILTER (WHERE blind_l IS NOT NULL AND informed_l IS NOT NULL) AS n_bi_l,
         sum(blind_l) FILTER (WHERE informed_l IS NOT NULL) AS f_bi_l,
         sum(informed_l) FILTER (WHERE blind_l IS NOT NULL) AS t_bi_l,
         count(*) FILTER (WHERE informed_l IS NOT NULL AND augmented_l IS NOT NULL) AS n_ia_l,
         sum(informed_l) FILTER (WHERE augmented_l IS NOT NULL) AS f_ia_l,
         sum(augmented_l) FILTER (WHERE informed_l IS NOT NULL) AS t_ia_l,
         count(*) FILTER (WHERE blind_a IS NOT NULL AND informed_a IS NOT NULL) AS n_bi_a,
         sum(blind_a) FILTER (WHERE informed_a IS NOT NULL) AS f_bi_a,
         sum(informed_a) FILTER (WHERE blind_a IS NOT NULL) AS t_bi_a,
         count(*) FILTER (WHERE informed_a IS NOT NULL AND augmented_a IS NOT NULL) AS n_ia_a,
         sum(informed_a) FILTER (WHERE augmented_a IS NOT NULL) AS f_ia_a,
         sum(augmented_a) FILTER (WHERE informed_a IS NOT NULL) AS t_ia_a
  FROM by_mode
  GROUP BY GROUPING SETS ((forecaster, grp), (forecaster, category, grp))
),
k AS (
  SELECT forecaster::VARCHAR AS forecaster,
         CASE WHEN category IS NULL THEN 'overall' ELSE 'category' END AS dimension,
         coalesce(category::VARCHAR, 'all') AS key, grp, * EXCLUDE (forecaster, category, grp)
  FROM g
)
SELECT rounds, forecaster, comparison, dimension, key, grp, n, sum_from, sum_to
FROM (
  SELECT 'latest' AS rounds, forecaster, 'blind_to_informed' AS comparison, dimension, key, grp,
         n_bi_l AS n, f_bi_l AS sum_from, t_bi_l AS sum_to
  FROM k
  UNION ALL
  SELECT 'latest', forecaster, 'informed_to_augmented', dimension, key, grp, n_ia_l, f_ia_l, t_ia_l FROM k
  UNION ALL
  SELECT 'all', forecaster, 'blind_to_informed', dimension, key, grp, n_bi_a, f_bi_a, t_bi_a FROM k
  UNION ALL
  SELECT 'all', forecaster, 'informed_to_augmented', dimension, key, grp, n_ia_a, f_ia_a, t_ia_a FROM k
)
WHERE n > 0;

CREATE OR REPLACE TABLE information_value AS
WITH vec AS (
  -- (packed over the cell's own groups: 51_bootstrap's `_boot_idx`)
  SELECT rounds, forecaster, comparison, dimension, key, _boot_idx(grp) AS idx,
         _boot_vec(n, grp) AS n_v,
         _boot_vec(sum_from - sum_to, grp) AS d_v
  FROM _voi_groups
  GROUP BY ALL
),
rw AS (SELECT v.*, _boot_w(m.w, v.idx) AS w FROM vec AS v CROSS JOIN _boot_matrix AS m),
ci AS (
  SELECT rounds, forecaster, comparison, dimension, key, quantile_cont(d, [0.025, 0.975])[1] AS lo,
         quantile_cont(d, [0.025, 0.975])[2] AS hi
  FROM (SELECT *, list_dot_product(w, d_v) / nullif(list_dot_product(w, n_v), 0) AS d FROM rw)
  GROUP BY ALL
),
pt AS (
  SELECT rounds, forecaster, comparison, dimension, key, sum(n) AS n,
         sum(sum_from) / sum(n) AS brier_from, sum(sum_to) / sum(n) AS brier_to,
         _boot_groups(n) AS groups_n
  FROM _voi_groups
  GROUP BY ALL
)
SELECT pt.rounds, pt.dimension, pt.key, pt.forecaster,
       CASE WHEN pt.forecaster LIKE 'consensus\_%' ESCAPE '\' THEN 'consensus' ELSE 'model' END AS kind,
       pt.comparison, pt.n::BIGINT AS n, pt.brier_from, pt.brier_to,
       pt.brier_from - pt.brier_to AS value,
       _boot_ci(ci.lo, pt.groups_n) AS value_ci95_lo, _boot_ci(ci.hi, pt.groups_n) AS value_ci95_hi
FROM pt
LEFT JOIN ci USING (rounds, forecaster, comparison, dimension, key)
ORDER BY pt.rounds, pt.dimension, pt.key, pt.comparison, pt.forecaster;

DROP TABLE _voi_groups;
