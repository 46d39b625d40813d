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
--   ece (rounds 'latest' only): Σ_bins |Σ (o − p)| / n over the 10 calibration bins.
--   brier_adjusted (difficulty-adjusted Brier, question fixed effects as ForecastBench does):
--     mean over the forecaster's questions of (brier − q̄), plus the cell's overall mean, where
--     q̄ = the question's mean Brier over all leaderboard forecasters scoring it in the same mode
--     and rounds (models, the three consensus statistics and the market), and the overall mean
--     = the mean of all (forecaster, question) Briers of the cell. This is the one-step
--     "Brier minus question mean plus grand mean" estimate, not the iterated two-way fixed-effects
--     fit; forecasters are ranked by it (rank(): ties share a rank; best = lowest, ties by name).
--   vs_market_*: mean of (brier − market brier) over the questions both scored, and its interval.
--   vs_best_*: the same against the cell's best forecaster; tied_with_best when the 95% interval
--     of that paired difference contains 0 (the best itself: difference 0, tied).
--   brier_ci95_*, vs_*_ci95_*: 2.5%/97.5% percentiles over the bootstrap replicates of
--     51_bootstrap (questions resampled; the same questions for both sides of a difference).
--   n_questions: questions in the cell (any forecaster); sufficient = n_questions >= 20.

-- Per (mode, rounds, question): cell keys (from the scored consensus), bootstrap group, q̄ (the
-- mean Brier of every forecaster scoring the question) and the market's Brier, from the source
-- tables directly (one row per question and mode each, or an aggregate of the models' rows).
CREATE OR REPLACE TABLE _lb_q AS
WITH rounds AS (SELECT unnest(['latest', 'all']) AS rounds),
models AS (
  SELECT question_id, mode,
         sum(brier) AS sum_latest, count(*) AS n_latest,
         sum(brier_all_rounds) AS sum_all, count(brier_all_rounds) AS n_all
  FROM scored_forecasts
  GROUP BY question_id, mode
)
SELECT sc.mode, r.rounds, sc.question_id, coalesce(sc.category, 'unknown') AS category,
       coalesce(sc.domain, 'unknown') AS domain, sc.horizon_bucket, g.grp, sc.outcome,
       CASE WHEN r.rounds = 'latest' THEN sc.market_brier ELSE sc.market_brier_all_rounds END AS market_brier,
       CASE WHEN r.rounds = 'latest'
            THEN (coalesce(m.sum_latest, 0) + _brier(sc.probability, sc.outcome) + _brier(sc.median, sc.outcome)
                  + _brier(sc.logit_mean, sc.outcome) + coalesce(sc.market_brier, 0))
                 / (coalesce(m.n_latest, 0) + 3 + (sc.market_brier IS NOT NULL)::INTEGER)
            ELSE (coalesce(m.sum_all, 0) + sc.brier_all_rounds + sc.median_brier_all_rounds
                  + sc.logit_mean_brier_all_rounds + coalesce(sc.market_brier_all_rounds, 0))
                 / (coalesce(m.n_all, 0) + 3 + (sc.market_brier_all_rounds IS NOT NULL)::INTEGER)
       END AS qbar
FROM scored_consensus AS sc
CROSS JOIN rounds AS r
JOIN bootstrap_groups AS g ON g.question_id = sc.question_id
LEFT JOIN models AS m ON m.question_id = sc.question_id AND m.mode = sc.mode;

-- One row per scored (mode, rounds, forecaster, question), with its question's keys, q̄ and the
-- market's Brier on that question.
CREATE OR REPLACE TABLE _lb_obs AS
WITH obs AS (
  SELECT sf.mode, 'latest' AS rounds, sf.model AS forecaster, sf.question_id, sf.brier,
         sf.log_loss, _correct01(sf.probability, sf.outcome) AS correct, sf.probability AS p
  FROM scored_forecasts AS sf
  UNION ALL
  SELECT sf.mode, 'all', sf.model, sf.question_id, sf.brier_all_rounds, sf.log_loss_all_rounds,
         sf.correct_all_rounds, NULL
  FROM scored_forecasts AS sf
  UNION ALL
  SELECT mode, 'latest', 'consensus_mean', question_id, brier, log_loss,
         _correct01(probability, outcome), probability
  FROM scored_consensus
  UNION ALL
  SELECT mode, 'all', 'consensus_mean', question_id, brier_all_rounds, log_loss_all_rounds,
         correct_all_rounds, NULL
  FROM scored_consensus
  UNION ALL
  SELECT mode, 'latest', 'consensus_median', question_id, _brier(median, outcome),
         _log_loss(median, outcome), _correct01(median, outcome), median
  FROM scored_consensus
  UNION ALL
  SELECT mode, 'all', 'consensus_median', question_id, median_brier_all_rounds,
         median_log_loss_all_rounds, median_correct_all_rounds, NULL
  FROM scored_consensus
  UNION ALL
  SELECT mode, 'latest', 'consensus_logit_mean', question_id, _brier(logit_mean, outcome),
         _log_loss(logit_mean, outcome), _correct01(logit_mean, outcome), logit_mean
  FROM scored_consensus
  UNION ALL
  SELECT mode, 'all', 'consensus_logit_mean', question_id, logit_mean_brier_all_rounds,
         logit_mean_log_loss_all_rounds, logit_mean_correct_all_rounds, NULL
  FROM scored_consensus
  UNION ALL
  SELECT mode, 'latest', 'market', question_id, market_brier, market_log_loss,
         _correct01(market_probability, outcome), market_probability
  FROM scored_consensus WHERE market_brier IS NOT NULL
  UNION ALL
  SELECT mode, 'all', 'market', question_id, market_brier_all_rounds, market_log_loss_all_rounds,
         market_correct_all_rounds, NULL
  FROM scored_consensus WHERE market_brier_all_rounds IS NOT NULL
)
SELECT o.mode, o.rounds, o.forecaster, o.question_id, o.brier, o.log_loss, o.correct, o.p,
       o.brier - q.qbar AS dev, o.brier - q.market_brier AS diff_market,
       q.outcome, q.category, q.domain, q.horizon_bucket, q.grp
FROM obs AS o
JOIN _lb_q AS q ON q.question_id = o.question_id AND q.mode = o.mode AND q.rounds = o.rounds
WHERE o.brier IS NOT NULL;

-- Point figures per cell and forecaster: one pass, the four cells as grouping sets.
CREATE OR REPLACE TABLE _lb_point AS
WITH x AS (
  SELECT mode, rounds, forecaster,
         CASE WHEN category IS NOT NULL THEN 'category' WHEN domain IS NOT NULL THEN 'domain'
              WHEN horizon_bucket IS NOT NULL THEN 'horizon' ELSE 'overall' END AS dimension,
         coalesce(category, domain, horizon_bucket, 'all') AS key,
         count(*) AS n, sum(brier) AS sum_brier, sum(log_loss) AS sum_log_loss,
         count(correct) AS n_directional, sum(correct) AS sum_correct, sum(dev) AS sum_dev,
         count(p) AS n_p
  FROM _lb_obs
  GROUP BY GROUPING SETS ((mode, rounds, forecaster), (mode, rounds, forecaster, category),
                          (mode, rounds, forecaster, domain), (mode, rounds, forecaster, horizon_bucket))
),
ece AS (
  SELECT mode, rounds, forecaster,
         CASE WHEN category IS NOT NULL THEN 'category' WHEN domain IS NOT NULL THEN 'domain'
              WHEN horizon_bucket IS NOT NULL THEN 'horizon' ELSE 'overall' END AS dimension,
         coalesce(category, domain, horizon_bucket, 'all') AS key,
         sum(abs(err)) AS sum_abs_err
  FROM (
    SELECT mode, rounds, forecaster, category, domain, horizon_bucket, _calibration_bin(p) AS bin,
           sum(outcome - p) AS err
    FROM _lb_obs
    WHERE p IS NOT NULL
    GROUP BY GROUPING SETS ((mode, rounds, forecaster, bin), (mode, rounds, forecaster, category, bin),
                            (mode, rounds, forecaster, domain, bin),
                            (mode, rounds, forecaster, horizon_bucket, bin))
  )
  GROUP BY ALL
),
cell AS (
  SELECT mode, rounds, dimension, key, sum(sum_brier) / sum(n) AS grand
  FROM x GROUP BY ALL
)
SELECT x.mode, x.rounds, x.dimension, x.key, x.forecaster,
       CASE WHEN x.forecaster = 'market' THEN 'market'
            WHEN x.forecaster LIKE 'consensus\_%' ESCAPE '\' THEN 'consensus' ELSE 'model' END AS kind,
       x.n::BIGINT AS n,
       x.sum_brier / x.n AS brier,
       x.sum_log_loss / x.n AS log_loss,
       x.n_directional::BIGINT AS n_directional,
       CASE WHEN x.n_directional > 0 THEN 100.0 * x.sum_correct / x.n_directional END AS accuracy_pct,
       CASE WHEN x.n_p > 0 THEN e.sum_abs_err / x.n_p END AS ece,
       x.sum_dev / x.n + c.grand AS brier_adjusted
FROM x
JOIN cell AS c USING (mode, rounds, dimension, key)
LEFT JOIN ece AS e USING (mode, rounds, forecaster, dimension, key);

CREATE OR REPLACE TABLE _lb_best AS
SELECT mode, rounds, dimension, key, arg_min(forecaster, (brier_adjusted, forecaster)) AS best
FROM _lb_point
GROUP BY ALL;

-- Per (mode, rounds, question): the Brier of the best forecaster of each of its four cells (only
-- the rows of forecasters that are best somewhere are read).
CREATE OR REPLACE TABLE _lb_qbest AS
SELECT o.mode, o.rounds, o.question_id,
       max(o.brier) FILTER (WHERE o.forecaster = bo.best) AS best_overall,
       max(o.brier) FILTER (WHERE o.forecaster = bc.best) AS best_category,
       max(o.brier) FILTER (WHERE o.forecaster = bd.best) AS best_domain,
       max(o.brier) FILTER (WHERE o.forecaster = bh.best) AS best_horizon
FROM _lb_obs AS o
JOIN _lb_best AS bo ON bo.mode = o.mode AND bo.rounds = o.rounds AND bo.dimension = 'overall'
JOIN _lb_best AS bc ON bc.mode = o.mode AND bc.rounds = o.rounds AND bc.dimension = 'category' AND bc.key = o.category
JOIN _lb_best AS bd ON bd.mode = o.mode AND bd.rounds = o.rounds AND bd.dimension = 'domain' AND bd.key = o.domain
JOIN _lb_best AS bh ON bh.mode = o.mode AND bh.rounds = o.rounds AND bh.dimension = 'horizon' AND bh.key = o.horizon_bucket
WHERE o.forecaster IN (SELECT best FROM _lb_best)
GROUP BY o.mode, o.rounds, o.question_id;

-- Per (cell, forecaster, bootstrap group): the sums every interval needs (grouping sets again).
CREATE OR REPLACE TABLE _lb_groups AS
WITH x AS (
  SELECT o.mode, o.rounds, o.forecaster, o.grp, o.category, o.domain, o.horizon_bucket, o.brier,
         o.diff_market, o.brier - b.best_overall AS d_overall, o.brier - b.best_category AS d_category,
         o.brier - b.best_domain AS d_domain, o.brier - b.best_horizon AS d_horizon
  FROM _lb_obs AS o
  LEFT JOIN _lb_qbest AS b ON b.mode = o.mode AND b.rounds = o.rounds AND b.question_id = o.question_id
),
g AS (
  SELECT mode, rounds, forecaster, grp, category, domain, horizon_bucket,
         count(*) AS n, sum(brier) AS sum_brier,
         count(diff_market) AS n_market, sum(diff_market) AS sum_diff_market,
         count(d_overall) AS n_overall, sum(d_overall) AS s_overall,
         count(d_category) AS n_category, sum(d_category) AS s_category,
         count(d_domain) AS n_domain, sum(d_domain) AS s_domain,
         count(d_horizon) AS n_horizon, sum(d_horizon) AS s_horizon
  FROM x
  GROUP BY GROUPING SETS ((mode, rounds, forecaster, grp), (mode, rounds, forecaster, grp, category),
                          (mode, rounds, forecaster, grp, domain),
                          (mode, rounds, forecaster, grp, horizon_bucket))
)
SELECT mode, rounds, forecaster, grp,
       CASE WHEN category IS NOT NULL THEN 'category' WHEN domain IS NOT NULL THEN 'domain'
            WHEN horizon_bucket IS NOT NULL THEN 'horizon' ELSE 'overall' END AS dimension,
       coalesce(category, domain, horizon_bucket, 'all') AS key,
       n, sum_brier, n_market, sum_diff_market,
       CASE WHEN category IS NOT NULL THEN n_category WHEN domain IS NOT NULL THEN n_domain
            WHEN horizon_bucket IS NOT NULL THEN n_horizon ELSE n_overall END AS n_best,
       CASE WHEN category IS NOT NULL THEN s_category WHEN domain IS NOT NULL THEN s_domain
            WHEN horizon_bucket IS NOT NULL THEN s_horizon ELSE s_overall END AS sum_diff_best
FROM g;

DROP TABLE _lb_qbest;

CREATE OR REPLACE TABLE _lb_intervals AS
WITH cells AS (SELECT DISTINCT mode, rounds, dimension, key, forecaster FROM _lb_groups),
vec AS (
  SELECT c.mode, c.rounds, c.dimension, c.key, c.forecaster,
         list(coalesce(g.n, 0)::DOUBLE ORDER BY gg.grp) AS n_v,
         list(coalesce(g.sum_brier, 0)::DOUBLE ORDER BY gg.grp) AS brier_v,
         list(coalesce(g.n_market, 0)::DOUBLE ORDER BY gg.grp) AS n_market_v,
         list(coalesce(g.sum_diff_market, 0)::DOUBLE ORDER BY gg.grp) AS diff_market_v,
         list(coalesce(g.n_best, 0)::DOUBLE ORDER BY gg.grp) AS n_best_v,
         list(coalesce(g.sum_diff_best, 0)::DOUBLE ORDER BY gg.grp) AS diff_best_v
  FROM cells AS c
  CROSS JOIN range(_boot_groups_n()) AS gg(grp)
  LEFT JOIN _lb_groups AS g
    ON g.mode = c.mode AND g.rounds = c.rounds AND g.dimension = c.dimension AND g.key = c.key
   AND g.forecaster = c.forecaster AND g.grp = gg.grp
  GROUP BY ALL
),
reps AS (
  SELECT v.mode, v.rounds, v.dimension, v.key, v.forecaster,
         list_dot_product(m.w, v.brier_v) / nullif(list_dot_product(m.w, v.n_v), 0) AS brier,
         list_dot_product(m.w, v.diff_market_v) / nullif(list_dot_product(m.w, v.n_market_v), 0) AS diff_market,
         list_dot_product(m.w, v.diff_best_v) / nullif(list_dot_product(m.w, v.n_best_v), 0) AS diff_best
  FROM vec AS v CROSS JOIN _boot_matrix AS m
)
SELECT mode, rounds, dimension, key, forecaster,
       quantile_cont(brier, 0.025) AS brier_ci95_lo, quantile_cont(brier, 0.975) AS brier_ci95_hi,
       quantile_cont(diff_market, 0.025) AS vs_market_ci95_lo,
       quantile_cont(diff_market, 0.975) AS vs_market_ci95_hi,
       quantile_cont(diff_best, 0.025) AS vs_best_ci95_lo, quantile_cont(diff_best, 0.975) AS vs_best_ci95_hi
FROM reps
GROUP BY ALL;

CREATE OR REPLACE TABLE leaderboard AS
WITH paired AS (
  SELECT mode, rounds, dimension, key, forecaster,
         sum(n_market)::BIGINT AS vs_market_n, sum(sum_diff_market) / nullif(sum(n_market), 0) AS vs_market_diff,
         sum(n_best)::BIGINT AS vs_best_n, sum(sum_diff_best) / nullif(sum(n_best), 0) AS vs_best_diff
  FROM _lb_groups
  GROUP BY ALL
),
cells AS (
  SELECT mode, rounds, 'overall' AS dimension, 'all' AS key, count(*) AS n_questions
  FROM _lb_q GROUP BY ALL
  UNION ALL
  SELECT mode, rounds, 'category', category, count(*) FROM _lb_q GROUP BY ALL
  UNION ALL
  SELECT mode, rounds, 'domain', domain, count(*) FROM _lb_q GROUP BY ALL
  UNION ALL
  SELECT mode, rounds, 'horizon', horizon_bucket, count(*) FROM _lb_q GROUP BY ALL
)
SELECT p.mode, p.rounds, p.dimension, p.key, p.forecaster, p.kind,
       rank() OVER (PARTITION BY p.mode, p.rounds, p.dimension, p.key ORDER BY p.brier_adjusted) AS rank,
       p.forecaster = b.best AS is_best,
       p.n, p.brier, i.brier_ci95_lo, i.brier_ci95_hi, p.brier_adjusted, p.log_loss,
       p.n_directional, p.accuracy_pct, p.ece,
       x.vs_market_n, x.vs_market_diff, i.vs_market_ci95_lo, i.vs_market_ci95_hi,
       b.best, x.vs_best_n, x.vs_best_diff, i.vs_best_ci95_lo, i.vs_best_ci95_hi,
       CASE WHEN i.vs_best_ci95_lo IS NOT NULL
            THEN i.vs_best_ci95_lo <= 0 AND i.vs_best_ci95_hi >= 0 END AS tied_with_best,
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
