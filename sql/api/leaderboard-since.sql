-- GET /api/leaderboard/?since=: the leaderboard of one cell and rounds over the questions resolved
-- at or after $since, computed at request time from leaderboard_observations with the definitions
-- of sql/derive/52_leaderboard.sql (point figures, difficulty-adjusted Brier with the cell's grand
-- mean, rank and best, paired differences against the market and the best, and their intervals
-- from the published bootstrap_weights). Without `since` the route reads the precomputed
-- `leaderboard` table instead; the two agree exactly when no question is filtered out (tested).
-- q̄ (inside dev) is the question's mean Brier over every forecaster scoring it: a property of the
-- question, unchanged by the filter.
-- Parameters: $rounds VARCHAR, $dimension VARCHAR, $key VARCHAR, $mode VARCHAR (nullable),
-- $since_us BIGINT (epoch µs). The 200 bootstrap groups are 51_bootstrap's _boot_groups_n().
WITH obs AS (
  SELECT mode, forecaster, question_id, grp,
         CASE WHEN $rounds = 'latest' THEN b_l ELSE b_a END AS b,
         CASE WHEN $rounds = 'latest' THEN ll_l ELSE ll_a END AS ll,
         CASE WHEN $rounds = 'latest' THEN c_l ELSE c_a END AS c,
         CASE WHEN $rounds = 'latest' THEN dev_l ELSE dev_a END AS dev,
         CASE WHEN $rounds = 'latest' THEN dm_l ELSE dm_a END AS dm,
         CASE WHEN $rounds = 'latest' THEN bin ELSE bin_a END AS bin,
         CASE WHEN $rounds = 'latest' THEN err ELSE err_a END AS err,
         CASE WHEN $rounds = 'latest' THEN pq ELSE pq_a END AS pq
  FROM leaderboard_observations
  WHERE epoch_us(resolved_at) >= $since_us
    AND ($mode IS NULL OR mode = $mode)
    AND CASE $dimension
          WHEN 'overall' THEN true
          WHEN 'category' THEN category = $key
          WHEN 'domain' THEN domain = $key
          ELSE horizon_bucket = $key
        END
),
ece AS (
  SELECT mode, forecaster, sum(abs(e)) AS sum_abs_err, sum(sqrt(2 / pi() * pq)) AS sum_floor
  FROM (SELECT mode, forecaster, bin, sum(err) AS e, sum(pq) AS pq FROM obs WHERE bin IS NOT NULL GROUP BY ALL)
  GROUP BY ALL
),
agg AS (
  SELECT mode, forecaster, count(b) AS n, sum(b) AS sb, sum(ll) AS sll, count(c) AS nd, sum(c) AS sc,
         sum(dev) AS sdev, count(bin) AS np
  FROM obs
  GROUP BY ALL
  HAVING count(b) > 0
),
grand AS (SELECT mode, sum(sb) / sum(n) AS grand FROM agg GROUP BY ALL),
point AS (
  SELECT a.mode, a.forecaster,
         CASE WHEN a.forecaster = 'market' THEN 'market'
              WHEN a.forecaster LIKE 'consensus\_%' ESCAPE '\' THEN 'consensus' ELSE 'model' END AS kind,
         a.n::BIGINT AS n, a.sb / a.n AS brier, a.sll / a.n AS log_loss, a.nd::BIGINT AS n_directional,
         CASE WHEN a.nd > 0 THEN 100.0 * a.sc / a.nd END AS accuracy_pct,
         CASE WHEN a.np > 0 THEN e.sum_abs_err / a.np END AS ece,
         CASE WHEN a.np > 0 THEN e.sum_floor / a.np END AS ece_noise_floor,
         a.sdev / a.n + g.grand AS brier_adjusted
  FROM agg AS a
  JOIN grand AS g USING (mode)
  LEFT JOIN ece AS e USING (mode, forecaster)
),
-- rank and best on brier_adjusted at 9 decimals, as 52_leaderboard.sql (floating noise is no rank)
best AS (SELECT mode, arg_min(forecaster, (round(brier_adjusted, 9), forecaster)) AS best FROM point GROUP BY ALL),
qbest AS (
  SELECT o.mode, o.question_id, o.b AS bb
  FROM obs AS o JOIN best AS bt ON bt.mode = o.mode AND bt.best = o.forecaster
),
groups AS (
  SELECT o.mode, o.forecaster, o.grp,
         count(o.b) AS n, sum(o.b) AS sb, count(o.dm) AS nm, sum(o.dm) AS sdm,
         count(o.b - q.bb) AS nb, sum(o.b - q.bb) AS sdb
  FROM obs AS o
  LEFT JOIN qbest AS q ON q.mode = o.mode AND q.question_id = o.question_id
  WHERE o.forecaster IN (SELECT forecaster FROM point WHERE point.mode = o.mode)
  GROUP BY ALL
),
-- Each replicate's dense weight vector (as _boot_matrix in sql/derive/51_bootstrap.sql).
weights AS (
  SELECT replicate,
         list_transform(range(200), g -> coalesce(ws[list_position(grps, g::INTEGER)], 0.0)) AS w
  FROM (SELECT replicate, list(grp) AS grps, list(w::DOUBLE) AS ws FROM bootstrap_weights GROUP BY replicate)
),
vec AS (
  SELECT p.mode, p.forecaster,
         list(coalesce(g.n, 0)::DOUBLE ORDER BY gg.grp) AS n_v,
         list(coalesce(g.sb, 0)::DOUBLE ORDER BY gg.grp) AS b_v,
         list(coalesce(g.nm, 0)::DOUBLE ORDER BY gg.grp) AS nm_v,
         list(coalesce(g.sdm, 0)::DOUBLE ORDER BY gg.grp) AS dm_v,
         list(coalesce(g.nb, 0)::DOUBLE ORDER BY gg.grp) AS nb_v,
         list(coalesce(g.sdb, 0)::DOUBLE ORDER BY gg.grp) AS db_v
  FROM point AS p
  CROSS JOIN range(200) AS gg(grp)
  LEFT JOIN groups AS g ON g.mode = p.mode AND g.forecaster = p.forecaster AND g.grp = gg.grp
  GROUP BY ALL
),
intervals AS (
  SELECT v.mode, v.forecaster,
         quantile_cont(list_dot_product(w.w, v.b_v) / nullif(list_dot_product(w.w, v.n_v), 0), 0.025) AS brier_ci95_lo,
         quantile_cont(list_dot_product(w.w, v.b_v) / nullif(list_dot_product(w.w, v.n_v), 0), 0.975) AS brier_ci95_hi,
         quantile_cont(list_dot_product(w.w, v.dm_v) / nullif(list_dot_product(w.w, v.nm_v), 0), 0.025) AS vs_market_ci95_lo,
         quantile_cont(list_dot_product(w.w, v.dm_v) / nullif(list_dot_product(w.w, v.nm_v), 0), 0.975) AS vs_market_ci95_hi,
         quantile_cont(list_dot_product(w.w, v.db_v) / nullif(list_dot_product(w.w, v.nb_v), 0), 0.025) AS vs_best_ci95_lo,
         quantile_cont(list_dot_product(w.w, v.db_v) / nullif(list_dot_product(w.w, v.nb_v), 0), 0.975) AS vs_best_ci95_hi
  FROM vec AS v CROSS JOIN weights AS w
  GROUP BY ALL
),
paired AS (
  SELECT mode, forecaster,
         sum(nm)::BIGINT AS vs_market_n, sum(sdm) / nullif(sum(nm), 0) AS vs_market_diff,
         sum(nb)::BIGINT AS vs_best_n, sum(sdb) / nullif(sum(nb), 0) AS vs_best_diff,
         -- the bootstrap groups each figure's questions sit in (an interval needs two)
         count(*) FILTER (WHERE n > 0) AS groups_n, count(*) FILTER (WHERE nm > 0) AS groups_market,
         count(*) FILTER (WHERE nb > 0) AS groups_best
  FROM groups
  GROUP BY ALL
),
cells AS (SELECT mode, count(DISTINCT question_id) AS n_questions FROM obs GROUP BY ALL)
SELECT p.mode, $rounds AS rounds, $dimension AS dimension, $key AS key, p.forecaster, p.kind,
       rank() OVER (PARTITION BY p.mode ORDER BY round(p.brier_adjusted, 9)) AS rank,
       p.forecaster = b.best AS is_best,
       -- an interval needs two questions in two bootstrap groups: over one question, or questions
       -- that all sit in one group (51_bootstrap resamples groups), every replicate is the point
       -- figure ([b, b], published as certain); as ai_vs_market's interval is null when n < 2
       p.n, p.brier,
       CASE WHEN x.groups_n >= 2 THEN i.brier_ci95_lo END AS brier_ci95_lo,
       CASE WHEN x.groups_n >= 2 THEN i.brier_ci95_hi END AS brier_ci95_hi, p.brier_adjusted, p.log_loss,
       p.n_directional, p.accuracy_pct, p.ece, p.ece_noise_floor,
       x.vs_market_n, x.vs_market_diff,
       CASE WHEN x.groups_market >= 2 THEN i.vs_market_ci95_lo END AS vs_market_ci95_lo,
       CASE WHEN x.groups_market >= 2 THEN i.vs_market_ci95_hi END AS vs_market_ci95_hi,
       b.best, x.vs_best_n, x.vs_best_diff,
       CASE WHEN x.groups_best >= 2 THEN i.vs_best_ci95_lo END AS vs_best_ci95_lo,
       CASE WHEN x.groups_best >= 2 THEN i.vs_best_ci95_hi END AS vs_best_ci95_hi,
       -- bounds compared at 6 decimals, as the API publishes them (an interval read [0, …] is
       -- tied), as 52_leaderboard.sql: a Brier equal to the best's up to floating noise (a
       -- consensus median equal to a model's answer, derived from count/sum/min/max) leaves a
       -- bound of ±1e-17, which is 0, not an interval clear of 0
       CASE WHEN i.vs_best_ci95_lo IS NOT NULL AND x.groups_best >= 2
            THEN round(i.vs_best_ci95_lo, 6) <= 0 AND round(i.vs_best_ci95_hi, 6) >= 0 END AS tied_with_best,
       c.n_questions::BIGINT AS n_questions, c.n_questions >= 20 AS sufficient
FROM point AS p
JOIN best AS b USING (mode)
JOIN cells AS c USING (mode)
LEFT JOIN paired AS x USING (mode, forecaster)
LEFT JOIN intervals AS i USING (mode, forecaster)
ORDER BY CASE p.mode WHEN 'blind' THEN 0 WHEN 'informed' THEN 1 ELSE 2 END, rank, p.forecaster;
