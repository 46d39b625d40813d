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

CREATE OR REPLACE TABLE _voi_pairs AS
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
pairs AS (
  SELECT forecaster, question_id, category, grp, 'latest' AS rounds, 'blind_to_informed' AS comparison,
         blind_l AS b_from, informed_l AS b_to
  FROM by_mode
  UNION ALL
  SELECT forecaster, question_id, category, grp, 'latest', 'informed_to_augmented', informed_l, augmented_l
  FROM by_mode
  UNION ALL
  SELECT forecaster, question_id, category, grp, 'all', 'blind_to_informed', blind_a, informed_a
  FROM by_mode
  UNION ALL
  SELECT forecaster, question_id, category, grp, 'all', 'informed_to_augmented', informed_a, augmented_a
  FROM by_mode
)
SELECT * FROM pairs WHERE b_from IS NOT NULL AND b_to IS NOT NULL;

CREATE OR REPLACE TABLE _voi_groups AS
SELECT rounds, forecaster, comparison,
       CASE WHEN category IS NULL THEN 'overall' ELSE 'category' END AS dimension,
       coalesce(category, 'all') AS key, grp,
       count(*) AS n, sum(b_from) AS sum_from, sum(b_to) AS sum_to
FROM _voi_pairs
GROUP BY GROUPING SETS ((rounds, forecaster, comparison, grp), (rounds, forecaster, comparison, category, grp));

DROP TABLE _voi_pairs;

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
         sum(sum_from) / sum(n) AS brier_from, sum(sum_to) / sum(n) AS brier_to
  FROM _voi_groups
  GROUP BY ALL
)
SELECT pt.rounds, pt.dimension, pt.key, pt.forecaster,
       CASE WHEN pt.forecaster LIKE 'consensus\_%' ESCAPE '\' THEN 'consensus' ELSE 'model' END AS kind,
       pt.comparison, pt.n::BIGINT AS n, pt.brier_from, pt.brier_to,
       pt.brier_from - pt.brier_to AS value,
       -- no interval over fewer than two questions: every replicate would be that question ([v, v])
       CASE WHEN pt.n >= 2 THEN ci.lo END AS value_ci95_lo, CASE WHEN pt.n >= 2 THEN ci.hi END AS value_ci95_hi
FROM pt
LEFT JOIN ci USING (rounds, forecaster, comparison, dimension, key)
ORDER BY pt.rounds, pt.dimension, pt.key, pt.comparison, pt.forecaster;

DROP TABLE _voi_groups;
