-- 51_bootstrap: the deterministic bootstrap draws behind every published interval (calibration
-- ECE, leaderboard, rankings, value of information, anchoring, disagreement).
--
-- Resampling unit: the question. To keep the cost independent of the number of forecasts (and of
-- replicates x questions), every statistic is first aggregated per question group, then the groups
-- are resampled:
--   * bootstrap_groups: every resolved, non-annulled question gets a group
--     grp = (rank of hash(question_id, seed) among the resolved questions) mod 200,
--     so the 200 groups are random and balanced (sizes differ by at most 1).
--   * bootstrap_weights: replicate r (0 .. bootstrap_replicates - 1, default 1000) draws 200
--     groups with replacement, draw j picking grp = hash(seed, r, j) mod 200; w = how many times
--     grp was drawn (groups never drawn are absent: w = 0).
-- A replicate's statistic is the statistic of the weighted sums: a mean becomes
-- sum_g w_g * sum_g(x) / sum_g w_g * n_g. With at most 200 resolved questions in all (the groups
-- are balanced over all of them, not per cell), the questions sit in different groups and each
-- question gets a Multinomial(200, 1/200) ~ Poisson(1) weight: the
-- Poisson bootstrap of questions. With many more questions it is the random-group bootstrap (200
-- random groups of questions resampled). Intervals are the 2.5% and 97.5% percentiles
-- (quantile_cont) of the replicates. Paired statistics (A - B) resample the same questions for
-- both sides because the weights are per question group, shared by every forecaster.
-- The seed is run_params.bootstrap_seed (fixed: reruns give identical intervals); DuckDB's
-- random() is not used. Both tables are published so a Parquet reader can reproduce any interval.

CREATE OR REPLACE TEMP MACRO _boot_groups_n() AS 200;

CREATE OR REPLACE TABLE bootstrap_groups AS
SELECT r.question_id,
       ((row_number() OVER (ORDER BY hash(r.question_id, rp.bootstrap_seed), r.question_id) - 1)
         % _boot_groups_n())::INTEGER AS grp
FROM _resolved AS r
CROSS JOIN run_params AS rp;

CREATE OR REPLACE TABLE bootstrap_weights AS
WITH draws AS (
  SELECT unnest(range(bootstrap_replicates)) AS replicate, bootstrap_seed AS seed FROM run_params
)
SELECT d.replicate::INTEGER AS replicate,
       (hash(d.seed, d.replicate, j.draw) % _boot_groups_n())::INTEGER AS grp,
       count(*)::INTEGER AS w
FROM draws AS d
CROSS JOIN range(_boot_groups_n()) AS j(draw)
GROUP BY ALL
-- by replicate and group: a GROUP BY's rows come out in another order at each run (two publishes
-- of the same data wrote bootstrap_weights.parquet in two orders)
ORDER BY replicate, grp;

-- The same weights as one dense vector per replicate (w[grp + 1] = weight of group grp, 0 when not
-- drawn): a replicate's weighted sum of per-group sums x is list_dot_product(w, x), so a cell's
-- 1000 replicates cost 1000 vectorised dot products of length 200 whatever the number of forecasts.
-- Each replicate's drawn groups are looked up in its own short lists (a third of the time of
-- zero-filling every (replicate, group) pair by a join and an ordered list aggregate).
CREATE OR REPLACE TABLE _boot_matrix AS
WITH r AS (
  SELECT unnest(range(bootstrap_replicates))::INTEGER AS replicate FROM run_params
),
drawn AS (
  SELECT replicate, list(grp) AS grps, list(w::DOUBLE) AS ws FROM bootstrap_weights GROUP BY replicate
)
SELECT r.replicate,
       list_transform(range(_boot_groups_n()), g -> coalesce(d.ws[list_position(d.grps, g::INTEGER)], 0.0)) AS w
FROM r
LEFT JOIN drawn AS d USING (replicate);

-- A cell's per-group sums are packed over the groups that hold some of its questions only
-- (`_boot_idx`: their 1-based positions in w, NULL when every group does; the sums as lists in the
-- same group order), and each replicate's weights are gathered for those groups
-- (`_boot_w(w, idx)`) before the dot products. Groups the cell has no question in only ever added
-- zeros; a small cell (a category of 8 questions sits in at most 8 of the 200 groups) so costs its
-- groups instead of 200 per replicate: the leaderboard's intervals took 1.0 s on a hundred-question
-- warehouse (every test run and every small deployment paid it), 0.55 s so.
CREATE OR REPLACE TEMP MACRO _boot_idx(grp) AS
  CASE WHEN count(*) < _boot_groups_n() THEN list(grp + 1 ORDER BY grp) END;
-- (a cell's per-group sums of x as such a list, in group order; a group's NULL sum adds nothing)
CREATE OR REPLACE TEMP MACRO _boot_vec(x, grp) AS list(coalesce(x, 0)::DOUBLE ORDER BY grp);
CREATE OR REPLACE TEMP MACRO _boot_w(w, idx) AS CASE WHEN idx IS NULL THEN w ELSE list_select(w, idx) END;

-- An interval needs two groups or more. The draws resample groups, so a figure whose questions all
-- sit in one group (one question; or a few, with more than 200 questions in all) is drawn whole or
-- not at all in every replicate: each replicate is the point figure, an interval [b, b] that would
-- be published as certain. Every bootstrap interval is NULL then (and a verdict read from it):
-- `_boot_groups(n)` counts the groups of a cell's per-group rows that hold some of the figure's
-- questions (n > 0), `_boot_ci(bound, groups)` keeps a bound only from two groups or more.
CREATE OR REPLACE TEMP MACRO _boot_groups(n) AS count(*) FILTER (WHERE n > 0);
CREATE OR REPLACE TEMP MACRO _boot_ci(bound, groups) AS CASE WHEN groups >= 2 THEN bound END;
