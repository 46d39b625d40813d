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
-- bench; question ids of real venues are longer still). Each round's forecasts of a question are
-- pivoted into one row (its blind, informed and augmented forecasts: every forecast of a run has
-- the run's created_at, its as-of time) instead of joining every round to its run's blind round:
-- one hash aggregate of the rounds instead of a join and an aggregate over them (the statement
-- 11.8 s → 8 s of CPU on the bench). At a time two runs share, the row also carries the blind
-- forecast of the run each mode's forecast comes from (a pivot per run first, then per round), as
-- the greater run may not have asked every mode. The observations carry the question's bootstrap group, not
-- its id, which nothing after them reads. Then (statement 5.0-7.6 s → 4.3-5.5 s of CPU, medians
-- 6.0 → 5.1, eight interleaved runs each on the shared 2-core bench host): the per-question
-- aggregate keeps sums and one count per mode (and per mode's blind-paired runs) instead of 21
-- avg() states, the most expensive operator of the statement (profile 3.2 s → 1.8 s); the group
-- comes with the comparator points, so the 'all' rows need no join back to the questions; and the
-- 'latest' rows pair each mode's scored forecast with the blind one by pivoting the (forecaster,
-- question)'s scored forecasts into one row, instead of a hash join on (forecaster, question_id)
-- that DuckDB built on the 2.7 M-row side (1.1-1.5 s of the profile → 0.35 s). sum(x) / count(x)
-- is avg(x) bit for bit, but another plan feeds a group's runs to the sums in another order (any
-- change of the plan does: rewriting only the pivot's FILTERs as CASEs did too), so 'all'
-- observations differ in the last bit (at most 2.2e-16); the published tables are the same.
-- (Keying the forecaster by a small integer instead of its name did not measurably help.)
-- The questions scored, numbered in question_id order (qix), with their bootstrap group.
CREATE OR REPLACE TEMP TABLE _anc_rq AS
SELECT r.question_id, r.cutoff, (row_number() OVER (ORDER BY r.question_id))::INTEGER AS qix, g.grp
FROM _resolved AS r
JOIN bootstrap_groups AS g USING (question_id);

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
runs AS (
  -- One row per (forecaster, question, round): the round's forecast in each mode (pb, pi, pa; NULL:
  -- it has none; p itself is never NULL: the forecasts' probability is not, and a consensus mean is
  -- their avg) and, for informed and augmented, the blind forecast of the same run (pb_i, pb_a),
  -- which the slope terms pair it with. Every forecast of a run has the run's created_at (its
  -- as-of time); at a time that one run alone forecast at (most times), that run is the round, so the
  -- pivot pairs each forecast with its own run's blind one and pb_i = pb_a = pb.
  SELECT forecaster, qix, created_at,
         any_value(p) FILTER (WHERE mode = 'blind') AS pb,
         any_value(p) FILTER (WHERE mode = 'informed') AS pi,
         any_value(p) FILTER (WHERE mode = 'augmented') AS pa,
         pb AS pb_i, pb AS pb_a
  FROM _anc_forecasts ANTI JOIN _shared_forecast_times USING (created_at)
  GROUP BY forecaster, qix, created_at
  UNION ALL
  -- Runs dated at the same time (30's _shared_forecast_times: only rows at such a time can tie) are
  -- one round: each mode's forecast is the greater run_id's among the runs with one (as in
  -- 30_scored_forecasts and 40_scored_consensus), and pb_i / pb_a the blind forecast of that same
  -- run (NULL when that run has none), not the blind round's, which may be another run's.
  SELECT forecaster, qix, created_at,
         arg_max(pb, run_id) FILTER (WHERE pb IS NOT NULL),
         arg_max(pi, run_id) FILTER (WHERE pi IS NOT NULL),
         arg_max(pa, run_id) FILTER (WHERE pa IS NOT NULL),
         struct_extract(arg_max({'b': pb}, run_id) FILTER (WHERE pi IS NOT NULL), 'b'),
         struct_extract(arg_max({'b': pb}, run_id) FILTER (WHERE pa IS NOT NULL), 'b')
  FROM (
    SELECT forecaster, qix, created_at, run_id,
           any_value(p) FILTER (WHERE mode = 'blind') AS pb,
           any_value(p) FILTER (WHERE mode = 'informed') AS pi,
           any_value(p) FILTER (WHERE mode = 'augmented') AS pa
    FROM _anc_forecasts SEMI JOIN _shared_forecast_times USING (created_at)
    GROUP BY forecaster, qix, created_at, run_id
  )
  GROUP BY forecaster, qix, created_at
),
pts AS (
  SELECT p.qix, r.question_id, r.grp, p.created_at
  FROM (SELECT DISTINCT qix, created_at FROM runs) AS p JOIN rq AS r USING (qix)
),
cmp AS (
  SELECT pts.qix, pts.created_at, pts.grp,
         CASE WHEN _comparator_status(px.observed_at, pts.created_at, rp.max_comparator_age_days) = 'ok'
              THEN px.probability END AS m
  FROM pts
  ASOF LEFT JOIN _prices AS px
    ON px.question_id = pts.question_id AND px.observed_at <= pts.created_at
  CROSS JOIN run_params AS rp
),
per_q AS (
  -- Per (forecaster, question) and mode, over the runs with a forecast in that mode and a fresh
  -- comparator: their count and the sums of p, m and |p − m|; for informed and augmented also
  -- the count and sums of the slope terms over those runs that also have a blind forecast (the
  -- products are NULL without one). Sums and counts, divided below, not avg(): avg(x) is
  -- sum(x) / count(x), and the runs of one mode share a count, so 18 sums and counts instead of
  -- 21 avg states and 3 counts. The blind mode has no slope terms (nothing reads them).
  SELECT r.forecaster, r.qix, any_value(c.grp) AS grp,
         count(pb) AS nb, sum(pb) AS sp_b, sum(c.m) FILTER (WHERE pb IS NOT NULL) AS sm_b, sum(abs(pb - c.m)) AS sad_b,
         count(pi) AS ni, sum(pi) AS sp_i, sum(c.m) FILTER (WHERE pi IS NOT NULL) AS sm_i, sum(abs(pi - c.m)) AS sad_i,
         count(pi - pb_i) AS nbi, sum((c.m - pb_i) * (pi - pb_i)) AS sxy_i,
         sum((c.m - pb_i) * (c.m - pb_i)) FILTER (WHERE pi IS NOT NULL) AS sxx_i,
         count(pa) AS na, sum(pa) AS sp_a, sum(c.m) FILTER (WHERE pa IS NOT NULL) AS sm_a, sum(abs(pa - c.m)) AS sad_a,
         count(pa - pb_a) AS nba, sum((c.m - pb_a) * (pa - pb_a)) AS sxy_a,
         sum((c.m - pb_a) * (c.m - pb_a)) FILTER (WHERE pa IS NOT NULL) AS sxx_a
  FROM runs AS r
  JOIN cmp AS c ON c.qix = r.qix AND c.created_at = r.created_at
  WHERE c.m IS NOT NULL
  GROUP BY r.forecaster, r.qix
),
all_rounds AS (
  -- Back to one row per (forecaster, mode, question), for the modes the question has a round of
  -- (xy and xx NULL when no round of the mode has a blind forecast: NULL / 0).
  SELECT u.forecaster, u.mode, u.grp, u.sp / u.n AS p, u.sm / u.n AS m, u.sad / u.n AS ad,
         u.sxy / u.nx AS xy, u.sxx / u.nx AS xx
  FROM (
    SELECT forecaster, grp, 'blind' AS mode, nb AS n, sp_b AS sp, sm_b AS sm, sad_b AS sad,
           NULL::DOUBLE AS sxy, NULL::DOUBLE AS sxx, 0 AS nx
    FROM per_q
    UNION ALL
    SELECT forecaster, grp, 'informed', ni, sp_i, sm_i, sad_i, sxy_i, sxx_i, nbi FROM per_q
    UNION ALL
    SELECT forecaster, grp, 'augmented', na, sp_a, sm_a, sad_a, sxy_a, sxx_a, nba FROM per_q
  ) AS u
  WHERE u.n > 0
),
base AS (
  SELECT model AS forecaster, mode, question_id, probability AS p, market_probability AS m
  FROM scored_forecasts
  UNION ALL
  SELECT 'consensus_mean', mode, question_id, probability, market_probability
  FROM scored_consensus
),
latest_q AS (
  -- The scored forecasts of a (forecaster, question) pivoted into one row (one per mode: the
  -- scored tables' key), so each mode's is paired with the blind one without a join.
  SELECT b.forecaster, g.grp,
         any_value(b.p) FILTER (WHERE b.mode = 'blind') AS pb, any_value(b.m) FILTER (WHERE b.mode = 'blind') AS mb,
         any_value(b.p) FILTER (WHERE b.mode = 'informed') AS pi, any_value(b.m) FILTER (WHERE b.mode = 'informed') AS mi,
         any_value(b.p) FILTER (WHERE b.mode = 'augmented') AS pa, any_value(b.m) FILTER (WHERE b.mode = 'augmented') AS ma
  FROM base AS b
  JOIN bootstrap_groups AS g ON g.question_id = b.question_id
  GROUP BY b.forecaster, b.question_id, g.grp
),
latest AS (
  -- Those with a fresh comparator; x = m − p_blind, y = p − p_blind (NULL without a blind forecast).
  SELECT forecaster, 'blind' AS mode, grp, pb AS p, mb AS m, NULL::DOUBLE AS x, NULL::DOUBLE AS y
  FROM latest_q WHERE mb IS NOT NULL
  UNION ALL
  SELECT forecaster, 'informed', grp, pi, mi, mi - pb, pi - pb FROM latest_q WHERE mi IS NOT NULL
  UNION ALL
  SELECT forecaster, 'augmented', grp, pa, ma, ma - pb, pa - pb FROM latest_q WHERE ma IS NOT NULL
),
obs AS (
  SELECT 'latest' AS rounds, forecaster, mode, grp, p, m, abs(p - m) AS ad, x * y AS xy, x * x AS xx
  FROM latest
  UNION ALL
  SELECT 'all', forecaster, mode, grp, p, m, ad, xy, xx
  FROM all_rounds
)
SELECT * FROM obs;

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
         _boot_vec(sxx, grp) AS sxx_v,
         _boot_groups(n_slope) AS groups_slope
  FROM _anc_groups
  WHERE mode <> 'blind'
  GROUP BY ALL
),
rw AS (SELECT v.*, _boot_w(m.w, v.idx) AS w FROM vec AS v CROSS JOIN _boot_matrix AS m),
ci AS (
  SELECT rounds, forecaster, mode, groups_slope, quantile_cont(s, [0.025, 0.975])[1] AS lo,
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
       _boot_ci(ci.lo, ci.groups_slope) AS slope_ci95_lo, _boot_ci(ci.hi, ci.groups_slope) AS slope_ci95_hi
FROM pt
LEFT JOIN ci USING (rounds, forecaster, mode)
ORDER BY pt.rounds DESC, pt.forecaster, CASE pt.mode WHEN 'blind' THEN 0 WHEN 'informed' THEN 1 ELSE 2 END;

DROP TABLE _anc_obs;
DROP TABLE _anc_groups;

-- The leaderboard's per-question keys (52) are not needed after 54: free them (the observations
-- stay: published as leaderboard_observations, the source of the leaderboard's `since` filter).
DROP TABLE _lb_q;
