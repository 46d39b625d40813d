-- 53_disagreement: does the models' disagreement predict the consensus's error? (sql/README.md,
-- `disagreement`, `disagreement_quintiles`)
--
-- Observations: one per question and scope, the scored consensus with at least two models
-- (n_models >= 2: one model has no disagreement), scope = its mode, and 'headline' for the
-- question's headline consensus. rounds 'latest': disagreement = the scored consensus's sd
-- (population sd of the model probabilities), error = |mean − outcome|, Brier and direction of the
-- mean. rounds 'all': the per-question means over every run before the cutoff (sd_all_rounds,
-- abs_error_all_rounds, brier_all_rounds, correct_all_rounds); no AUROC (a direction per round).
--
-- spearman = the Pearson correlation of the average ranks (ties share their mean rank) of sd and
--   of the absolute error. Its 95% interval: bootstrap over questions (51_bootstrap) of the
--   Pearson correlation of those ranks, the ranks kept from the full sample (not re-ranked in each
--   replicate: with hundreds of questions or more the difference is negligible).
-- predicts_error: 'true' when the interval lies above 0 (lower bound > 0: more disagreement, more
--   error), 'false' when it lies below 0 (upper bound < 0: more disagreement, less error),
--   'inconclusive' when it contains 0; NULL without an interval. Derived, never set by hand. The
--   bounds are read rounded to 6 decimals as the API publishes them (as tied_with_best in
--   52_leaderboard.sql): a lower bound of 3e-7 reads [0, …], which contains 0.
-- auroc_wrong_direction (rounds 'latest'): the probability that a question where the consensus
--   points the wrong way has a larger sd than one where it points the right way, ties counting
--   one half (Mann-Whitney U / (n_wrong × n_correct), from average ranks); questions without a
--   direction (mean rounded to 9 decimals = 0.5) are left out.
-- Quintiles: questions ordered by sd (ties by question_id) and cut into five groups of equal size
--   (ntile(5); equal sds may straddle a boundary); per quintile n, sd range, mean absolute error,
--   consensus Brier with its bootstrap interval, accuracy.

-- The working tables of this file are TEMP tables (sql/README.md, "TEMP tables"): compressing
-- _dis_ranked's 1.4 M rows just before their DROP cost about 0.7 s of CPU on the scoring bench.
CREATE OR REPLACE TEMP TABLE _dis_obs AS
WITH base AS (
  SELECT mode, question_id, is_headline, sd, abs(probability - outcome) AS err, brier,
         _correct01(probability, outcome) AS correct, direction,
         sd_all_rounds, abs_error_all_rounds, brier_all_rounds, correct_all_rounds
  FROM scored_consensus
  WHERE n_models >= 2 AND sd IS NOT NULL
),
scoped AS (
  SELECT mode AS scope, question_id, sd, err, brier, correct, direction, sd_all_rounds,
         abs_error_all_rounds, brier_all_rounds, correct_all_rounds
  FROM base
  UNION ALL
  SELECT 'headline', question_id, sd, err, brier, correct, direction, sd_all_rounds,
         abs_error_all_rounds, brier_all_rounds, correct_all_rounds
  FROM base WHERE is_headline
)
SELECT s.scope AS mode, r.rounds, s.question_id, g.grp,
       CASE WHEN r.rounds = 'latest' THEN s.sd ELSE s.sd_all_rounds END AS sd,
       CASE WHEN r.rounds = 'latest' THEN s.err ELSE s.abs_error_all_rounds END AS err,
       CASE WHEN r.rounds = 'latest' THEN s.brier ELSE s.brier_all_rounds END AS brier,
       CASE WHEN r.rounds = 'latest' THEN s.correct ELSE s.correct_all_rounds END AS correct,
       CASE WHEN r.rounds = 'latest' THEN CASE s.direction WHEN 'wrong' THEN 1 WHEN 'correct' THEN 0 END
       END AS wrong
FROM scoped AS s
CROSS JOIN (SELECT unnest(['latest', 'all']) AS rounds) AS r
JOIN bootstrap_groups AS g ON g.question_id = s.question_id;

-- Average ranks (centred on the mean rank (n + 1) / 2) and quintiles. The average rank of a value
-- with ties is the mean of its first and last rank: (rank() + the count of values <= it) / 2, the
-- count being cume_dist() times the partition's size (rounded: cume_dist is that ratio as a
-- double). Both come from the same sort; counting the ties by a window partitioned by the value
-- itself instead cost one more sort per ranking (3.2 s against 2.4 s on the scoring bench's 1.4 M
-- rows, with identical ranks). sd and err are ranked rounded to 9 decimals (the leaderboard's
-- tie precision): they are parallel aggregates whose last bits follow the order rows reach them,
-- so two questions with the same model probabilities tied in one run and not in the next, and
-- spearman and its interval moved in the 3rd decimal between runs on identical data (QA).
-- question_id only orders the quintiles: the ranked rows carry what the sums below read.
CREATE OR REPLACE TEMP TABLE _dis_ranked AS
SELECT mode, rounds, grp, sd, err, brier, correct, wrong,
       (rank() OVER w_sd + round(cume_dist() OVER w_sd * count(*) OVER p)) / 2.0 - (count(*) OVER p + 1) / 2.0 AS rx,
       (rank() OVER w_err + round(cume_dist() OVER w_err * count(*) OVER p)) / 2.0 - (count(*) OVER p + 1) / 2.0 AS ry,
       ntile(5) OVER (PARTITION BY mode, rounds ORDER BY round(sd, 9), question_id) AS quintile
FROM _dis_obs
WINDOW p AS (PARTITION BY mode, rounds),
       w_sd AS (PARTITION BY mode, rounds ORDER BY round(sd, 9)),
       w_err AS (PARTITION BY mode, rounds ORDER BY round(err, 9));

-- The AUROC's rank sum: the average rank of sd among the questions with a direction, summed over
-- those pointing the wrong way. Ranked over those questions' (mode, rounds, sd, wrong) alone, not
-- as a third window over every wide row of _dis_ranked (a third sort of all of them).
CREATE OR REPLACE TEMP TABLE _dis_auroc AS
SELECT mode, rounds, sum(rw) FILTER (WHERE wrong = 1) AS rank_sum_wrong
FROM (
  SELECT mode, rounds, wrong,
         (rank() OVER w_dir + round(cume_dist() OVER w_dir * count(*) OVER p_dir)) / 2.0 AS rw
  FROM _dis_obs
  WHERE wrong IS NOT NULL
  WINDOW p_dir AS (PARTITION BY mode, rounds),
         w_dir AS (PARTITION BY mode, rounds ORDER BY round(sd, 9))
)
GROUP BY ALL;

DROP TABLE _dis_obs;

-- Per (mode, rounds, group): the sums of the rank correlation; per quintile and group: Brier sums.
CREATE OR REPLACE TEMP TABLE _dis_groups AS
SELECT mode, rounds, grp, count(*) AS n, sum(rx) AS sx, sum(ry) AS sy, sum(rx * rx) AS sxx,
       sum(ry * ry) AS syy, sum(rx * ry) AS sxy
FROM _dis_ranked
GROUP BY ALL;

CREATE OR REPLACE TEMP MACRO _pearson(n, sx, sy, sxx, syy, sxy) AS
  CASE WHEN (n * sxx - sx * sx) > 0 AND (n * syy - sy * sy) > 0
       THEN (n * sxy - sx * sy) / sqrt((n * sxx - sx * sx) * (n * syy - sy * sy)) END;

-- the verdict of an interval, its bounds as published (6 decimals)
CREATE OR REPLACE TEMP MACRO _predicts_error(lo, hi) AS
  CASE WHEN round(lo, 6) > 0 THEN 'true' WHEN round(hi, 6) < 0 THEN 'false'
       WHEN lo IS NOT NULL THEN 'inconclusive' END;

CREATE OR REPLACE TEMP TABLE _dis_spearman_ci AS
WITH vec AS (
  -- (packed over the cell's own groups: 51_bootstrap's `_boot_idx`)
  SELECT mode, rounds, _boot_idx(grp) AS idx,
         _boot_vec(n, grp) AS n_v,
         _boot_vec(sx, grp) AS sx_v,
         _boot_vec(sy, grp) AS sy_v,
         _boot_vec(sxx, grp) AS sxx_v,
         _boot_vec(syy, grp) AS syy_v,
         _boot_vec(sxy, grp) AS sxy_v,
         _boot_groups(n) AS groups_n
  FROM _dis_groups
  GROUP BY ALL
),
rw AS (SELECT v.*, _boot_w(m.w, v.idx) AS w FROM vec AS v CROSS JOIN _boot_matrix AS m),
reps AS (
  SELECT mode, rounds, groups_n,
         _pearson(list_dot_product(w, n_v), list_dot_product(w, sx_v),
                  list_dot_product(w, sy_v), list_dot_product(w, sxx_v),
                  list_dot_product(w, syy_v), list_dot_product(w, sxy_v)) AS rho
  FROM rw
)
SELECT mode, rounds, quantile_cont(rho, [0.025, 0.975])[1] AS lo, quantile_cont(rho, [0.025, 0.975])[2] AS hi
FROM reps
WHERE groups_n >= 2 -- no interval (nor verdict) from fewer than two groups: 51_bootstrap's `_boot_ci` rule
GROUP BY mode, rounds;

CREATE OR REPLACE TABLE disagreement AS
WITH pt AS (
  SELECT mode, rounds, count(*) AS n,
         _pearson(count(*), sum(rx), sum(ry), sum(rx * rx), sum(ry * ry), sum(rx * ry)) AS spearman,
         count(wrong) AS n_directional, sum(wrong) AS n_wrong
  FROM _dis_ranked
  GROUP BY ALL
)
SELECT pt.mode, pt.rounds, pt.n::BIGINT AS n, pt.spearman,
       ci.lo AS spearman_ci95_lo, ci.hi AS spearman_ci95_hi,
       _predicts_error(ci.lo, ci.hi) AS predicts_error,
       -- (the AUROC's counts: rounds 'latest' only, NULL for 'all', where a question has a direction per round)
       CASE WHEN pt.rounds = 'latest' THEN pt.n_directional::BIGINT END AS n_directional,
       CASE WHEN pt.rounds = 'latest' THEN coalesce(pt.n_wrong, 0)::BIGINT END AS n_wrong,
       CASE WHEN pt.n_wrong > 0 AND pt.n_directional - pt.n_wrong > 0
            THEN (au.rank_sum_wrong - pt.n_wrong * (pt.n_wrong + 1) / 2.0)
                 / (pt.n_wrong * (pt.n_directional - pt.n_wrong)) END AS auroc_wrong_direction
FROM pt
LEFT JOIN _dis_spearman_ci AS ci USING (mode, rounds)
LEFT JOIN _dis_auroc AS au USING (mode, rounds)
ORDER BY CASE pt.mode WHEN 'headline' THEN 0 WHEN 'blind' THEN 1 WHEN 'informed' THEN 2 ELSE 3 END,
         pt.rounds DESC;

CREATE OR REPLACE TEMP TABLE _dis_q_groups AS
SELECT mode, rounds, quintile, grp, count(*) AS n, sum(brier) AS sum_brier
FROM _dis_ranked
GROUP BY ALL;

CREATE OR REPLACE TABLE disagreement_quintiles AS
WITH vec AS (
  SELECT mode, rounds, quintile, _boot_idx(grp) AS idx,
         _boot_vec(n, grp) AS n_v,
         _boot_vec(sum_brier, grp) AS b_v,
         _boot_groups(n) AS groups_n
  FROM _dis_q_groups
  GROUP BY ALL
),
rw AS (SELECT v.*, _boot_w(m.w, v.idx) AS w FROM vec AS v CROSS JOIN _boot_matrix AS m),
ci AS (
  SELECT mode, rounds, quintile, groups_n, quantile_cont(b, [0.025, 0.975])[1] AS lo,
         quantile_cont(b, [0.025, 0.975])[2] AS hi
  FROM (SELECT *, list_dot_product(w, b_v) / nullif(list_dot_product(w, n_v), 0) AS b FROM rw)
  GROUP BY ALL
),
pt AS (
  SELECT mode, rounds, quintile, count(*) AS n, min(sd) AS sd_min, max(sd) AS sd_max,
         avg(err) AS mean_abs_error, avg(brier) AS brier,
         count(correct) AS n_directional, sum(correct) AS sum_correct
  FROM _dis_ranked
  GROUP BY ALL
)
SELECT pt.mode, pt.rounds, pt.quintile::INTEGER AS quintile, pt.n::BIGINT AS n, pt.sd_min, pt.sd_max,
       pt.mean_abs_error, pt.brier,
       _boot_ci(ci.lo, ci.groups_n) AS brier_ci95_lo, _boot_ci(ci.hi, ci.groups_n) AS brier_ci95_hi,
       pt.n_directional::BIGINT AS n_directional,
       CASE WHEN pt.n_directional > 0 THEN 100.0 * pt.sum_correct / pt.n_directional END AS accuracy_pct
FROM pt
LEFT JOIN ci USING (mode, rounds, quintile)
ORDER BY pt.mode, pt.rounds, pt.quintile;

DROP TABLE _dis_ranked;
DROP TABLE _dis_groups;
DROP TABLE _dis_spearman_ci;
DROP TABLE _dis_q_groups;
DROP TABLE _dis_auroc;
