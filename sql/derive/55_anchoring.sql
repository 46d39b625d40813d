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
-- rounds 'latest': the scored forecast of each question (as above). rounds 'all' (every round's
-- forecast before the cutoff, averaged per question first so that questions weigh equally, as on
-- the other scoring endpoints; runs dated at the same time are one round, the greater run_id's):
-- round r pairs the run's forecast p_r with the same run's blind
-- forecast b_r and the fresh comparator m_r at the round's created_at (rounds without one are
-- left out); per question p = mean p_r, m = mean m_r, |p − m| = mean |p_r − m_r|, and the slope
-- terms x·y and x² are the means over its rounds with a blind forecast of (m_r − b_r)(p_r − b_r)
-- and (m_r − b_r)²; then n_market, corr_market, mean_abs_diff_market, slope and its interval are
-- computed over questions exactly as for 'latest'.

-- One statement from the forecasts to the per-question observations: the rounds of 'all' are
-- aggregated per question as the join produces them (materializing every round first, 8 M rows on
-- the scoring bench, and reading them back cost about 2 s of 19). The rounds' joins and grouping
-- key a question by an integer (qix, its row in _resolved) instead of its id: hashing and comparing
-- the id strings of 8 M rounds three times took a third of the statement (17.6 s → 11-13 s on the
-- bench; question ids of real venues are longer still).
-- The questions scored, numbered in question_id order (qix).
CREATE OR REPLACE TEMP TABLE _anc_rq AS
SELECT question_id, cutoff, (row_number() OVER (ORDER BY question_id))::INTEGER AS qix FROM _resolved;

-- Every forecast and consensus mean of a scored question before its cutoff (a view: each branch
-- of _anc_obs's rounds reads it, and a branch whose times are none reads nothing).
CREATE OR REPLACE TEMP VIEW _anc_forecasts AS
SELECT f.model AS forecaster, f.mode, r.qix, f.run_id, f.created_at, f.probability AS p
FROM raw_forecasts AS f
JOIN _anc_rq AS r ON r.question_id = f.question_id
WHERE f.created_at < r.cutoff
  AND f.probability IS NOT NULL
  AND f.translation_of IS NULL -- translations repeat the same answer in another language
  AND f.condition IS NULL -- conditional forecasts (scenarios) are not forecasts of the question
UNION ALL
SELECT 'consensus_mean', c.mode, r.qix, c.run_id, c.created_at, c.mean
FROM consensus AS c
JOIN _anc_rq AS r ON r.question_id = c.question_id
WHERE c.created_at < r.cutoff;

CREATE OR REPLACE TABLE _anc_obs AS
WITH rq AS (SELECT * FROM _anc_rq),
f AS (
  -- One per round (forecaster, mode, question, created_at): runs dated at the same time are one
  -- round, the greater run_id's (as in 30_scored_forecasts and 40_scored_consensus); only the rows
  -- at such a time (30's _shared_forecast_times) can tie, so only they are grouped.
  SELECT forecaster, mode, qix, run_id, created_at, p FROM _anc_forecasts ANTI JOIN _shared_forecast_times USING (created_at)
  UNION ALL
  SELECT forecaster, mode, qix, max(run_id), created_at, arg_max(p, run_id)
  FROM _anc_forecasts SEMI JOIN _shared_forecast_times USING (created_at)
  GROUP BY forecaster, mode, qix, created_at
),
pts AS (SELECT p.qix, r.question_id, p.created_at FROM (SELECT DISTINCT qix, created_at FROM f) AS p JOIN rq AS r USING (qix)),
cmp AS (
  SELECT pts.qix, pts.created_at,
         CASE WHEN _comparator_status(px.observed_at, pts.created_at, rp.max_comparator_age_days) = 'ok'
              THEN px.probability END AS m
  FROM pts
  ASOF LEFT JOIN _prices AS px
    ON px.question_id = pts.question_id AND px.observed_at <= pts.created_at
  CROSS JOIN run_params AS rp
),
all_rounds AS (
  -- Per question, the means over its rounds; the slope terms over the rounds with a blind forecast
  -- (avg skips the NULLs of rounds without one).
  SELECT a.forecaster, a.mode, r.question_id, a.p, a.m, a.ad, a.xy, a.xx
  FROM (
    SELECT f.forecaster, f.mode, f.qix, avg(f.p) AS p, avg(c.m) AS m, avg(abs(f.p - c.m)) AS ad,
           avg((c.m - b.p) * (f.p - b.p)) AS xy, avg((c.m - b.p) * (c.m - b.p)) AS xx
    FROM f
    JOIN cmp AS c ON c.qix = f.qix AND c.created_at = f.created_at
    LEFT JOIN f AS b
      ON b.mode = 'blind' AND b.forecaster = f.forecaster AND b.qix = f.qix AND b.run_id = f.run_id
    WHERE c.m IS NOT NULL
    GROUP BY f.forecaster, f.mode, f.qix
  ) AS a
  JOIN rq AS r USING (qix)
),
base AS (
  SELECT model AS forecaster, mode, question_id, probability AS p, market_probability AS m
  FROM scored_forecasts
  UNION ALL
  SELECT 'consensus_mean', mode, question_id, probability, market_probability
  FROM scored_consensus
),
blind AS (SELECT forecaster, question_id, p AS p_blind FROM base WHERE mode = 'blind'),
latest AS (
  SELECT b.forecaster, b.mode, b.question_id, b.p, b.m, b.m - bl.p_blind AS x, b.p - bl.p_blind AS y
  FROM base AS b
  LEFT JOIN blind AS bl ON bl.forecaster = b.forecaster AND bl.question_id = b.question_id
  WHERE b.m IS NOT NULL
),
obs AS (
  SELECT 'latest' AS rounds, forecaster, mode, question_id, p, m, abs(p - m) AS ad, x * y AS xy, x * x AS xx
  FROM latest
  UNION ALL
  SELECT 'all', forecaster, mode, question_id, p, m, ad, xy, xx
  FROM all_rounds
)
SELECT o.*, g.grp
FROM obs AS o
JOIN bootstrap_groups AS g ON g.question_id = o.question_id;

CREATE OR REPLACE TABLE _anc_groups AS
SELECT rounds, forecaster, mode, grp,
       count(xy) FILTER (WHERE mode <> 'blind') AS n_slope,
       sum(xy) FILTER (WHERE mode <> 'blind') AS sxy,
       sum(xx) FILTER (WHERE mode <> 'blind') AS sxx
FROM _anc_obs
GROUP BY ALL;

CREATE OR REPLACE TABLE anchoring AS
WITH vec AS (
  -- (packed over the cell's own groups: 51_bootstrap's `_boot_idx`)
  SELECT rounds, forecaster, mode, _boot_idx(grp) AS idx,
         _boot_vec(sxy, grp) AS sxy_v,
         _boot_vec(sxx, grp) AS sxx_v
  FROM _anc_groups
  WHERE mode <> 'blind'
  GROUP BY ALL
),
rw AS (SELECT v.*, _boot_w(m.w, v.idx) AS w FROM vec AS v CROSS JOIN _boot_matrix AS m),
ci AS (
  SELECT rounds, forecaster, mode, quantile_cont(s, [0.025, 0.975])[1] AS lo,
         quantile_cont(s, [0.025, 0.975])[2] AS hi
  FROM (SELECT *, list_dot_product(w, sxy_v) / nullif(list_dot_product(w, sxx_v), 0) AS s FROM rw)
  GROUP BY ALL
),
pt AS (
  -- corr() of a constant side (one observation included) is 0/0, NaN: published NULL instead
  SELECT rounds, forecaster, mode, count(*) AS n_market,
         CASE WHEN var_pop(p) > 0 AND var_pop(m) > 0 THEN corr(p, m) END AS corr_market,
         avg(ad) AS mean_abs_diff_market,
         count(xy) FILTER (WHERE mode <> 'blind') AS n_slope,
         sum(xy) FILTER (WHERE mode <> 'blind') / nullif(sum(xx) FILTER (WHERE mode <> 'blind'), 0) AS slope
  FROM _anc_obs
  GROUP BY ALL
)
SELECT pt.rounds, pt.forecaster,
       CASE WHEN pt.forecaster = 'consensus_mean' THEN 'consensus' ELSE 'model' END AS kind,
       pt.mode, pt.n_market::BIGINT AS n_market, pt.corr_market, pt.mean_abs_diff_market,
       pt.n_slope::BIGINT AS n_slope, pt.slope,
       -- no interval over fewer than two questions: every replicate would be that question
       CASE WHEN pt.n_slope >= 2 THEN ci.lo END AS slope_ci95_lo, CASE WHEN pt.n_slope >= 2 THEN ci.hi END AS slope_ci95_hi
FROM pt
LEFT JOIN ci USING (rounds, forecaster, mode)
ORDER BY pt.rounds DESC, pt.forecaster, CASE pt.mode WHEN 'blind' THEN 0 WHEN 'informed' THEN 1 ELSE 2 END;

DROP TABLE _anc_obs;
DROP TABLE _anc_groups;

-- The leaderboard's per-question keys (52) are not needed after 54: free them (the observations
-- stay: published as leaderboard_observations, the source of the leaderboard's `since` filter).
DROP TABLE _lb_q;
