-- 52_leaderboard: every forecaster per mode and rounds, overall and per category, domain and
-- horizon cell, with bootstrap intervals (see sql/README.md, `leaderboard`).
--
-- Forecasters (kind): each model (model: its scored_forecasts rows), consensus_mean,
-- consensus_median, consensus_logit_mean (consensus: the three statistics of the scored consensus)
-- and market (market: the fresh comparator of the scored consensus of the same mode).
-- rounds 'latest': the scored forecast (latest before the cutoff); rounds 'all': the per-question
-- averages over every run before the cutoff (*_all_rounds columns of 30/40), so that questions
-- weigh equally.
-- A question's cell keys in mode m come from its scored consensus in m: category, domain (NULL →
-- 'unknown') and horizon_bucket, the same for every forecaster, so that paired differences compare
-- the same questions.
--
-- Definitions per (mode, rounds, dimension, key, forecaster), over the forecaster's questions:
--   n, brier, log_loss: means over questions.
--   accuracy_pct = 100 × Σ correct / n_directional, correct = 1/0 per question (rounds 'all': the
--     question's share of correct directions among its directional rounds), n_directional =
--     questions with a direction.
--   ece: Σ_bins |Σ (o − p)| / n over the 10 calibration bins; rounds 'all': p is the question's
--     mean probability over its rounds (probability_all_rounds, mean_all_rounds, … of 30/40), so
--     that each question counts once, as for the other rounds 'all' figures.
--   ece_noise_floor: the ECE a perfectly calibrated forecaster making the same forecasts would
--     show from sampling noise alone, Σ_bins sqrt(2/π · Σ p(1 − p)) / n (the expected |Σ (o − p)|
--     of a bin whose outcomes are Bernoulli(p), normal approximation), as calibration_summary's
--     per forecaster and mode: an ece near it is indistinguishable from noise.
--   brier_adjusted (difficulty-adjusted Brier, question fixed effects as ForecastBench does):
--     mean over the forecaster's questions of (brier − q̄), plus the cell's overall mean, where
--     q̄ = the question's mean Brier over all leaderboard forecasters scoring it in the same mode
--     and rounds (models, the three consensus statistics and the market), and the overall mean
--     = the mean of all (forecaster, question) Briers of the cell. This is the one-step
--     "Brier minus question mean plus grand mean" estimate, not the iterated two-way fixed-effects
--     fit; forecasters are ranked by it (rank(): ties share a rank; best = lowest, ties by name).
--   vs_market_*: mean of (brier − market brier) over the questions both scored, and its interval.
--   vs_best_*: the same against the cell's best forecaster; tied_with_best when the 95% interval
--     of that paired difference contains 0, bounds rounded to 6 decimals as the API publishes
--     them (a bound of 6e-8 read [0, …] beside "not tied"; the best itself: difference 0, tied).
--   brier_ci95_*, vs_*_ci95_*: 2.5%/97.5% percentiles over the bootstrap replicates of
--     51_bootstrap (questions resampled; the same questions for both sides of a difference).
--   n_questions: questions in the cell (any forecaster); sufficient = n_questions >= 20.

-- Cost: the observations are kept in WIDE form, one row per (mode, forecaster, question) with the
-- rounds 'latest' and 'all' side by side (suffixes _l and _a), and unpivoted into rounds only
-- after aggregation, so every pass reads half the rows. Their key columns are ENUMs (below), so
-- every pass groups and joins on one-byte keys; the point figures are grouped once by the finest
-- cell and rolled up from those few thousand rows.
-- The tables of this file but `leaderboard` are TEMP tables, leaderboard_observations included (it
-- is published all the same: the export reads it from this connection): checkpoints do not
-- compress them (sql/README.md, "TEMP tables"; the observations export in 4.4 s against 6.2 s).

-- The observations' key columns (mode, forecaster, category, domain, horizon_bucket) are ENUMs of
-- the values present (sorted as VARCHARs sort): one byte per row instead of a string, so the
-- grouping passes below hash integers, the 4.3 M-row table takes less memory, and its Parquet export
-- writes the dictionary it already holds instead of hashing every string (the file reads back the
-- same VARCHAR columns). Every published figure casts them back to VARCHAR.
CREATE OR REPLACE TYPE _lb_mode AS ENUM (
  SELECT DISTINCT mode FROM scored_consensus WHERE mode IS NOT NULL ORDER BY 1);
CREATE OR REPLACE TYPE _lb_forecaster AS ENUM (
  SELECT model FROM scored_forecasts WHERE model IS NOT NULL
  UNION SELECT unnest(['consensus_mean', 'consensus_median', 'consensus_logit_mean', 'market'])
  ORDER BY 1);
CREATE OR REPLACE TYPE _lb_category AS ENUM (
  SELECT DISTINCT coalesce(category, 'unknown') FROM scored_consensus ORDER BY 1);
CREATE OR REPLACE TYPE _lb_domain AS ENUM (
  SELECT DISTINCT coalesce(domain, 'unknown') FROM scored_consensus ORDER BY 1);
CREATE OR REPLACE TYPE _lb_horizon AS ENUM (
  SELECT DISTINCT horizon_bucket FROM scored_consensus WHERE horizon_bucket IS NOT NULL ORDER BY 1);

-- Per (mode, question): cell keys (from the scored consensus), bootstrap group, q̄ (the mean Brier
-- of every forecaster scoring the question) and the market's Brier, per rounds, from the source
-- tables directly (m, cat, dom, hor: the keys as the ENUMs above).
CREATE OR REPLACE TEMP TABLE _lb_q AS
WITH models AS (
  SELECT question_id, mode,
         sum(brier) AS s_l, count(*) AS n_l,
         sum(brier_all_rounds) AS s_a, count(brier_all_rounds) AS n_a
  FROM scored_forecasts
  GROUP BY question_id, mode
)
SELECT sc.mode, sc.question_id, sc.resolved_at, coalesce(sc.category, 'unknown') AS category,
       coalesce(sc.domain, 'unknown') AS domain, sc.horizon_bucket, g.grp,
       sc.mode::_lb_mode AS m, coalesce(sc.category, 'unknown')::_lb_category AS cat,
       coalesce(sc.domain, 'unknown')::_lb_domain AS dom, sc.horizon_bucket::_lb_horizon AS hor,
       sc.market_brier AS mb_l, sc.market_brier_all_rounds AS mb_a,
       (coalesce(m.s_l, 0) + _brier(sc.probability, sc.outcome) + _brier(sc.median, sc.outcome)
        + _brier(sc.logit_mean, sc.outcome) + coalesce(sc.market_brier, 0))
       / (coalesce(m.n_l, 0) + 3 + (sc.market_brier IS NOT NULL)::INTEGER) AS qbar_l,
       (coalesce(m.s_a, 0) + sc.brier_all_rounds + sc.median_brier_all_rounds
        + sc.logit_mean_brier_all_rounds + coalesce(sc.market_brier_all_rounds, 0))
       / (coalesce(m.n_a, 0) + 3 + (sc.market_brier_all_rounds IS NOT NULL)::INTEGER) AS qbar_a
FROM scored_consensus AS sc
JOIN bootstrap_groups AS g ON g.question_id = sc.question_id
LEFT JOIN models AS m ON m.question_id = sc.question_id AND m.mode = sc.mode;

-- One row per scored (mode, forecaster, question): b (Brier), ll (log loss), c (1/0 direction or
-- the share of correct rounds), dev = b − q̄, dm = b − the market's b; bin, err = o − p and
-- pq = p(1 − p) for the ECE and its noise floor (latest; bin_a, err_a, pq_a of the question's mean
-- probability over its rounds). A side is NULL when the forecaster has no score in that rounds (the market
-- without a fresh comparator).
CREATE OR REPLACE TEMP TABLE leaderboard_observations AS
WITH q AS (
  -- the scored consensus with its question's keys, q̄ and market Brier (the four consensus-based
  -- forecasters need no other join)
  SELECT sc.*, lq.grp, lq.m, lq.cat, lq.dom, lq.hor, lq.qbar_l, lq.qbar_a, lq.mb_l, lq.mb_a
  FROM scored_consensus AS sc
  JOIN _lb_q AS lq ON lq.question_id = sc.question_id AND lq.mode = sc.mode
),
obs AS (
  SELECT lq.m AS mode, sf.model::_lb_forecaster AS forecaster, sf.question_id, lq.resolved_at, lq.grp,
         lq.cat AS category, lq.dom AS domain, lq.hor AS horizon_bucket, lq.qbar_l, lq.qbar_a, lq.mb_l, lq.mb_a,
         sf.brier AS b_l, sf.log_loss AS ll_l, _correct01(sf.probability, sf.outcome)::DOUBLE AS c_l, -- (DOUBLE like c_a: it was DECIMAL(2,1))
         sf.probability AS p, sf.outcome,
         sf.brier_all_rounds AS b_a, sf.log_loss_all_rounds AS ll_a, sf.correct_all_rounds AS c_a,
         sf.probability_all_rounds AS p_a
  FROM scored_forecasts AS sf
  JOIN _lb_q AS lq ON lq.question_id = sf.question_id AND lq.mode = sf.mode
  UNION ALL
  SELECT m, 'consensus_mean'::_lb_forecaster, question_id, resolved_at, grp, cat, dom, hor, qbar_l, qbar_a, mb_l, mb_a,
         brier, log_loss, _correct01(probability, outcome), probability, outcome, brier_all_rounds,
         log_loss_all_rounds, correct_all_rounds, mean_all_rounds
  FROM q
  UNION ALL
  SELECT m, 'consensus_median'::_lb_forecaster, question_id, resolved_at, grp, cat, dom, hor, qbar_l, qbar_a, mb_l, mb_a,
         _brier(median, outcome), _log_loss(median, outcome), _correct01(median, outcome), median, outcome,
         median_brier_all_rounds, median_log_loss_all_rounds, median_correct_all_rounds, median_all_rounds
  FROM q
  UNION ALL
  SELECT m, 'consensus_logit_mean'::_lb_forecaster, question_id, resolved_at, grp, cat, dom, hor, qbar_l, qbar_a, mb_l,
         mb_a, _brier(logit_mean, outcome), _log_loss(logit_mean, outcome), _correct01(logit_mean, outcome),
         logit_mean, outcome, logit_mean_brier_all_rounds, logit_mean_log_loss_all_rounds,
         logit_mean_correct_all_rounds, logit_mean_all_rounds
  FROM q
  UNION ALL
  SELECT m, 'market'::_lb_forecaster, question_id, resolved_at, grp, cat, dom, hor, qbar_l, qbar_a, mb_l, mb_a,
         market_brier, market_log_loss, _correct01(market_probability, outcome), market_probability,
         outcome, market_brier_all_rounds, market_log_loss_all_rounds, market_correct_all_rounds,
         market_probability_all_rounds
  FROM q
  WHERE market_brier IS NOT NULL OR market_brier_all_rounds IS NOT NULL
)
SELECT mode, forecaster, question_id, resolved_at, grp, category, domain, horizon_bucket,
       b_l, ll_l, c_l, _calibration_bin(p) AS bin, outcome - p AS err, p * (1 - p) AS pq,
       b_l - qbar_l AS dev_l, b_l - mb_l AS dm_l,
       b_a, ll_a, c_a, b_a - qbar_a AS dev_a, b_a - mb_a AS dm_a,
       _calibration_bin(p_a) AS bin_a, outcome - p_a AS err_a, p_a * (1 - p_a) AS pq_a
FROM obs;

-- Point figures per cell and forecaster: one pass over the observations, grouped by the finest
-- cell (mode, forecaster, category, domain, horizon_bucket) and calibration bin, once per rounds
-- (bin, bin_a: the ECE's bins), then those few ten thousand sums rolled up into the four cells as
-- grouping sets (the point sums from the 'latest' bins: every row is in one of them, NULL bin
-- included).
CREATE OR REPLACE TEMP TABLE _lb_point AS
WITH f AS (
  SELECT mode, forecaster, category, domain, horizon_bucket, bin, bin_a, GROUPING(bin, bin_a) AS gs,
         count(b_l) AS n_l, sum(b_l) AS sb_l, sum(ll_l) AS sll_l, count(c_l) AS nd_l, sum(c_l) AS sc_l,
         sum(dev_l) AS sdev_l, count(bin) AS np_l,
         count(b_a) AS n_a, sum(b_a) AS sb_a, sum(ll_a) AS sll_a, count(c_a) AS nd_a, sum(c_a) AS sc_a,
         sum(dev_a) AS sdev_a, count(bin_a) AS np_a,
         sum(err) AS e_l, sum(pq) AS pq_l, sum(err_a) AS e_a, sum(pq_a) AS pq_a
  FROM leaderboard_observations
  GROUP BY GROUPING SETS ((mode, forecaster, category, domain, horizon_bucket, bin),
                          (mode, forecaster, category, domain, horizon_bucket, bin_a))
),
x AS (
  SELECT mode::VARCHAR AS mode, forecaster::VARCHAR AS forecaster,
         CASE WHEN category IS NOT NULL THEN 'category' WHEN domain IS NOT NULL THEN 'domain'
              WHEN horizon_bucket IS NOT NULL THEN 'horizon' ELSE 'overall' END AS dimension,
         coalesce(category::VARCHAR, domain::VARCHAR, horizon_bucket::VARCHAR, 'all') AS key,
         sum(n_l) AS n_l, sum(sb_l) AS sb_l, sum(sll_l) AS sll_l, sum(nd_l) AS nd_l, sum(sc_l) AS sc_l,
         sum(sdev_l) AS sdev_l, sum(np_l) AS np_l,
         sum(n_a) AS n_a, sum(sb_a) AS sb_a, sum(sll_a) AS sll_a, sum(nd_a) AS nd_a, sum(sc_a) AS sc_a,
         sum(sdev_a) AS sdev_a, sum(np_a) AS np_a
  FROM f
  WHERE gs = 1
  GROUP BY GROUPING SETS ((mode, forecaster), (mode, forecaster, category),
                          (mode, forecaster, domain), (mode, forecaster, horizon_bucket))
),
ece AS (
  -- per rounds: 'latest' bins the scored probability, 'all' the question's mean over its rounds
  SELECT mode::VARCHAR AS mode, rounds, forecaster::VARCHAR AS forecaster,
         CASE WHEN category IS NOT NULL THEN 'category' WHEN domain IS NOT NULL THEN 'domain'
              WHEN horizon_bucket IS NOT NULL THEN 'horizon' ELSE 'overall' END AS dimension,
         coalesce(category::VARCHAR, domain::VARCHAR, horizon_bucket::VARCHAR, 'all') AS key,
         sum(abs(err)) AS sum_abs_err, sum(sqrt(2 / pi() * pq)) AS sum_floor
  FROM (
    SELECT mode, forecaster, category, domain, horizon_bucket, rounds, b, sum(e) AS err, sum(pq) AS pq
    FROM (
      SELECT mode, forecaster, category, domain, horizon_bucket, 'latest' AS rounds, bin AS b, e_l AS e, pq_l AS pq
      FROM f WHERE gs = 1 AND bin IS NOT NULL
      UNION ALL
      SELECT mode, forecaster, category, domain, horizon_bucket, 'all', bin_a, e_a, pq_a
      FROM f WHERE gs = 2 AND bin_a IS NOT NULL
    )
    GROUP BY GROUPING SETS ((mode, forecaster, rounds, b), (mode, forecaster, category, rounds, b),
                            (mode, forecaster, domain, rounds, b), (mode, forecaster, horizon_bucket, rounds, b))
  )
  GROUP BY ALL
),
long AS (
  SELECT mode, 'latest' AS rounds, dimension, key, forecaster, n_l AS n, sb_l AS sum_brier,
         sll_l AS sum_log_loss, nd_l AS n_directional, sc_l AS sum_correct, sdev_l AS sum_dev, np_l AS n_p
  FROM x WHERE n_l > 0
  UNION ALL
  SELECT mode, 'all', dimension, key, forecaster, n_a, sb_a, sll_a, nd_a, sc_a, sdev_a, np_a
  FROM x WHERE n_a > 0
),
cell AS (
  SELECT mode, rounds, dimension, key, sum(sum_brier) / sum(n) AS grand
  FROM long GROUP BY ALL
)
SELECT l.mode, l.rounds, l.dimension, l.key, l.forecaster,
       CASE WHEN l.forecaster = 'market' THEN 'market'
            WHEN l.forecaster LIKE 'consensus\_%' ESCAPE '\' THEN 'consensus' ELSE 'model' END AS kind,
       l.n::BIGINT AS n,
       l.sum_brier / l.n AS brier,
       l.sum_log_loss / l.n AS log_loss,
       l.n_directional::BIGINT AS n_directional,
       CASE WHEN l.n_directional > 0 THEN 100.0 * l.sum_correct / l.n_directional END AS accuracy_pct,
       CASE WHEN l.n_p > 0 THEN e.sum_abs_err / l.n_p END AS ece,
       CASE WHEN l.n_p > 0 THEN e.sum_floor / l.n_p END AS ece_noise_floor,
       l.sum_dev / l.n + c.grand AS brier_adjusted
FROM long AS l
JOIN cell AS c USING (mode, rounds, dimension, key)
LEFT JOIN ece AS e USING (mode, rounds, forecaster, dimension, key);

CREATE OR REPLACE TEMP TABLE _lb_best AS
-- ranked on brier_adjusted at 9 decimals: equal Briers that floating noise set a last bit apart
-- (a consensus median or logit-mean equal to a model's answer) are a tie, and ties go by name
SELECT mode, rounds, dimension, key, arg_min(forecaster, (round(brier_adjusted, 9), forecaster)) AS best
FROM _lb_point
GROUP BY ALL;

-- Per (mode, question): the Brier of the best forecaster of each of its four cells, per rounds
-- (only the rows of forecasters that are best somewhere are read).
CREATE OR REPLACE TEMP TABLE _lb_qbest AS
WITH b AS (
  SELECT mode::_lb_mode AS mode, dimension, key,
         max(best) FILTER (WHERE rounds = 'latest')::_lb_forecaster AS best_l,
         max(best) FILTER (WHERE rounds = 'all')::_lb_forecaster AS best_a
  FROM _lb_best
  GROUP BY ALL
)
SELECT o.mode, o.question_id,
       max(o.b_l) FILTER (WHERE o.forecaster = bo.best_l) AS o_l,
       max(o.b_a) FILTER (WHERE o.forecaster = bo.best_a) AS o_a,
       max(o.b_l) FILTER (WHERE o.forecaster = bc.best_l) AS c_l,
       max(o.b_a) FILTER (WHERE o.forecaster = bc.best_a) AS c_a,
       max(o.b_l) FILTER (WHERE o.forecaster = bd.best_l) AS d_l,
       max(o.b_a) FILTER (WHERE o.forecaster = bd.best_a) AS d_a,
       max(o.b_l) FILTER (WHERE o.forecaster = bh.best_l) AS h_l,
       max(o.b_a) FILTER (WHERE o.forecaster = bh.best_a) AS h_a
FROM leaderboard_observations AS o
JOIN b AS bo ON bo.mode = o.mode AND bo.dimension = 'overall'
JOIN b AS bc ON bc.mode = o.mode AND bc.dimension = 'category' AND bc.key = o.category::VARCHAR
JOIN b AS bd ON bd.mode = o.mode AND bd.dimension = 'domain' AND bd.key = o.domain::VARCHAR
JOIN b AS bh ON bh.mode = o.mode AND bh.dimension = 'horizon' AND bh.key = o.horizon_bucket::VARCHAR
WHERE o.forecaster IN (SELECT best::_lb_forecaster FROM _lb_best)
GROUP BY o.mode, o.question_id;

-- Per (cell, forecaster, bootstrap group): the sums every interval needs (grouping sets again),
-- then unpivoted into rounds. The overall cell is the sum of the category cells (every observation
-- has a category: NULL is 'unknown'), so the pass over the observations has three grouping sets,
-- not four.
CREATE OR REPLACE TEMP TABLE _lb_groups AS
WITH g AS (
  SELECT o.mode, o.forecaster, o.grp, o.category, o.domain, o.horizon_bucket,
         count(o.b_l) AS n_l, sum(o.b_l) AS sb_l, count(o.dm_l) AS nm_l, sum(o.dm_l) AS sdm_l,
         count(o.b_l - b.o_l) AS no_l, sum(o.b_l - b.o_l) AS so_l,
         count(o.b_l - b.c_l) AS nc_l, sum(o.b_l - b.c_l) AS sc_l,
         count(o.b_l - b.d_l) AS nd_l, sum(o.b_l - b.d_l) AS sd_l,
         count(o.b_l - b.h_l) AS nh_l, sum(o.b_l - b.h_l) AS sh_l,
         count(o.b_a) AS n_a, sum(o.b_a) AS sb_a, count(o.dm_a) AS nm_a, sum(o.dm_a) AS sdm_a,
         count(o.b_a - b.o_a) AS no_a, sum(o.b_a - b.o_a) AS so_a,
         count(o.b_a - b.c_a) AS nc_a, sum(o.b_a - b.c_a) AS sc_a,
         count(o.b_a - b.d_a) AS nd_a, sum(o.b_a - b.d_a) AS sd_a,
         count(o.b_a - b.h_a) AS nh_a, sum(o.b_a - b.h_a) AS sh_a
  FROM leaderboard_observations AS o
  LEFT JOIN _lb_qbest AS b ON b.mode = o.mode AND b.question_id = o.question_id
  GROUP BY GROUPING SETS ((o.mode, o.forecaster, o.grp, o.category),
                          (o.mode, o.forecaster, o.grp, o.domain),
                          (o.mode, o.forecaster, o.grp, o.horizon_bucket))
),
k AS (
  SELECT mode::VARCHAR AS mode, forecaster::VARCHAR AS forecaster, grp,
         CASE WHEN category IS NOT NULL THEN 'category' WHEN domain IS NOT NULL THEN 'domain'
              WHEN horizon_bucket IS NOT NULL THEN 'horizon' ELSE 'overall' END AS dimension,
         coalesce(category::VARCHAR, domain::VARCHAR, horizon_bucket::VARCHAR, 'all') AS key,
         n_l, sb_l, nm_l, sdm_l, no_l, so_l, nc_l, sc_l, nd_l, sd_l, nh_l, sh_l,
         n_a, sb_a, nm_a, sdm_a, no_a, so_a, nc_a, sc_a, nd_a, sd_a, nh_a, sh_a
  FROM g
  UNION ALL
  SELECT mode::VARCHAR, forecaster::VARCHAR, grp, 'overall', 'all',
         sum(n_l)::BIGINT, sum(sb_l), sum(nm_l)::BIGINT, sum(sdm_l), sum(no_l)::BIGINT, sum(so_l),
         NULL, NULL, NULL, NULL, NULL, NULL,
         sum(n_a)::BIGINT, sum(sb_a), sum(nm_a)::BIGINT, sum(sdm_a), sum(no_a)::BIGINT, sum(so_a),
         NULL, NULL, NULL, NULL, NULL, NULL
  FROM g
  WHERE category IS NOT NULL
  GROUP BY mode, forecaster, grp
)
SELECT mode, 'latest' AS rounds, forecaster, grp, dimension, key,
       n_l AS n, sb_l AS sum_brier, nm_l AS n_market, sdm_l AS sum_diff_market,
       CASE dimension WHEN 'category' THEN nc_l WHEN 'domain' THEN nd_l WHEN 'horizon' THEN nh_l ELSE no_l END AS n_best,
       CASE dimension WHEN 'category' THEN sc_l WHEN 'domain' THEN sd_l WHEN 'horizon' THEN sh_l ELSE so_l END AS sum_diff_best
FROM k WHERE n_l > 0
UNION ALL
SELECT mode, 'all', forecaster, grp, dimension, key,
       n_a, sb_a, nm_a, sdm_a,
       CASE dimension WHEN 'category' THEN nc_a WHEN 'domain' THEN nd_a WHEN 'horizon' THEN nh_a ELSE no_a END,
       CASE dimension WHEN 'category' THEN sc_a WHEN 'domain' THEN sd_a WHEN 'horizon' THEN sh_a ELSE so_a END
FROM k WHERE n_a > 0;

DROP TABLE _lb_qbest;

-- (the group sums packed over the cell's own groups, 51_bootstrap's `_boot_idx`; both percentiles
-- of a statistic from one quantile_cont, which sorts the replicates once: a third of the time of
-- the six single quantiles)
CREATE OR REPLACE TEMP TABLE _lb_intervals AS
WITH vec AS (
  SELECT mode, rounds, dimension, key, forecaster, _boot_idx(grp) AS idx,
         _boot_vec(n, grp) AS n_v,
         _boot_vec(sum_brier, grp) AS brier_v,
         _boot_vec(n_market, grp) AS n_market_v,
         _boot_vec(sum_diff_market, grp) AS diff_market_v,
         _boot_vec(n_best, grp) AS n_best_v,
         _boot_vec(sum_diff_best, grp) AS diff_best_v
  FROM _lb_groups
  GROUP BY ALL
),
rw AS (SELECT v.*, _boot_w(m.w, v.idx) AS w FROM vec AS v CROSS JOIN _boot_matrix AS m),
reps AS (
  SELECT mode, rounds, dimension, key, forecaster,
         list_dot_product(w, brier_v) / nullif(list_dot_product(w, n_v), 0) AS brier,
         list_dot_product(w, diff_market_v) / nullif(list_dot_product(w, n_market_v), 0) AS diff_market,
         list_dot_product(w, diff_best_v) / nullif(list_dot_product(w, n_best_v), 0) AS diff_best
  FROM rw
),
q AS (
  SELECT mode, rounds, dimension, key, forecaster,
         quantile_cont(brier, [0.025, 0.975]) AS b, quantile_cont(diff_market, [0.025, 0.975]) AS m,
         quantile_cont(diff_best, [0.025, 0.975]) AS d
  FROM reps
  GROUP BY ALL
)
SELECT mode, rounds, dimension, key, forecaster, b[1] AS brier_ci95_lo, b[2] AS brier_ci95_hi,
       m[1] AS vs_market_ci95_lo, m[2] AS vs_market_ci95_hi, d[1] AS vs_best_ci95_lo, d[2] AS vs_best_ci95_hi
FROM q;

CREATE OR REPLACE TABLE leaderboard AS
WITH paired AS (
  SELECT mode, rounds, dimension, key, forecaster,
         sum(n_market)::BIGINT AS vs_market_n, sum(sum_diff_market) / nullif(sum(n_market), 0) AS vs_market_diff,
         sum(n_best)::BIGINT AS vs_best_n, sum(sum_diff_best) / nullif(sum(n_best), 0) AS vs_best_diff,
         -- the bootstrap groups each figure's questions sit in (51_bootstrap's `_boot_ci` rule)
         _boot_groups(n) AS groups_n, _boot_groups(n_market) AS groups_market, _boot_groups(n_best) AS groups_best
  FROM _lb_groups
  GROUP BY ALL
),
cells AS (
  SELECT mode, r.rounds, dimension, key, n_questions
  FROM (
    SELECT mode, 'overall' AS dimension, 'all' AS key, count(*) AS n_questions FROM _lb_q GROUP BY ALL
    UNION ALL
    SELECT mode, 'category', category, count(*) FROM _lb_q GROUP BY ALL
    UNION ALL
    SELECT mode, 'domain', domain, count(*) FROM _lb_q GROUP BY ALL
    UNION ALL
    SELECT mode, 'horizon', horizon_bucket, count(*) FROM _lb_q GROUP BY ALL
  ) CROSS JOIN (SELECT unnest(['latest', 'all']) AS rounds) AS r
)
SELECT p.mode, p.rounds, p.dimension, p.key, p.forecaster, p.kind,
       rank() OVER (PARTITION BY p.mode, p.rounds, p.dimension, p.key ORDER BY round(p.brier_adjusted, 9)) AS rank,
       p.forecaster = b.best AS is_best,
       -- an interval needs two bootstrap groups (51_bootstrap's `_boot_ci`), as ai_vs_market's
       -- interval is null when n < 2
       p.n, p.brier,
       _boot_ci(i.brier_ci95_lo, x.groups_n) AS brier_ci95_lo,
       _boot_ci(i.brier_ci95_hi, x.groups_n) AS brier_ci95_hi, p.brier_adjusted, p.log_loss,
       p.n_directional, p.accuracy_pct, p.ece, p.ece_noise_floor,
       x.vs_market_n, x.vs_market_diff,
       _boot_ci(i.vs_market_ci95_lo, x.groups_market) AS vs_market_ci95_lo,
       _boot_ci(i.vs_market_ci95_hi, x.groups_market) AS vs_market_ci95_hi,
       b.best, x.vs_best_n, x.vs_best_diff,
       _boot_ci(i.vs_best_ci95_lo, x.groups_best) AS vs_best_ci95_lo,
       _boot_ci(i.vs_best_ci95_hi, x.groups_best) AS vs_best_ci95_hi,
       -- bounds compared at 6 decimals, as the API publishes them (an interval read [0, …] is
       -- tied; sql/api/leaderboard-since.sql the same): a Brier equal to the best's up to floating noise (a consensus median equal to a model's answer, derived from
       -- count/sum/min/max) leaves a bound of ±1e-17, which is 0, not an interval clear of 0
       CASE WHEN i.vs_best_ci95_lo IS NOT NULL AND x.groups_best >= 2
            THEN round(i.vs_best_ci95_lo, 6) <= 0 AND round(i.vs_best_ci95_hi, 6) >= 0 END AS tied_with_best,
       c.n_questions::BIGINT AS n_questions, c.n_questions >= 20 AS sufficient
FROM _lb_point AS p
JOIN _lb_best AS b USING (mode, rounds, dimension, key)
JOIN cells AS c USING (mode, rounds, dimension, key)
LEFT JOIN paired AS x USING (mode, rounds, dimension, key, forecaster)
LEFT JOIN _lb_intervals AS i USING (mode, rounds, dimension, key, forecaster)
ORDER BY p.mode, p.rounds, p.dimension, p.key, rank, p.forecaster;

DROP TABLE _lb_point;
DROP TABLE _lb_best;
DROP TABLE _lb_groups;
DROP TABLE _lb_intervals;
