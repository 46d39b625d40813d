-- 95_calibration_models: the recalibration behind the probability endpoint (DESIGN §10; sql/README.md,
-- `calibration_models`). Fitted here, by the pipeline, on the scored forecasts of this run: only
-- outcomes visible at the run's as_of (scored_forecasts holds nothing else), so a run dated T
-- calibrates on what was known at T.
--
-- Per mode:
--   1. Observations: each scored (question, model) forecast, x = log-odds of p clipped to
--      [0.001, 0.999], y = the outcome.
--   2. Pooled Platt fit: P(y = 1) = sigmoid(a + b·x) over every model's forecasts of the mode,
--      maximum a posteriori with a weak Gaussian prior centred on the identity (a = 0, b = 1) of
--      precision 1 (keeps Newton finite on separable data; negligible beside 50+ questions).
--   3. Per-model Platt fit, shrunk toward the pooled fit: the same model with a Gaussian prior
--      centred on the pooled (a, b), precision 20 on each coefficient (each observation brings at
--      most 0.25 to the intercept's information, so the prior weighs like ~80 observations at
--      p = 0.5: a model with few forecasts stays near the pool, one with thousands follows its data).
--   4. Pool: the calibrated log-odds a_m + b_m·x of the models that answered, averaged (the
--      log-odds pool), times an extremizing factor d: p = sigmoid(d · mean_m(a_m + b_m·x_m)).
--   5. d is fitted by cross-validation on the grid 0.70, 0.75, …, 2.00 (bounded to [0.7, 2.0]):
--      the value whose out-of-fold pooled forecasts (step 6) have the lowest Brier score (ties: the
--      one nearest 1).
--   6. Folds, time-ordered by question: the mode's questions sorted by resolved_at (then
--      question_id) and cut into K = 5 contiguous folds (ntile). Fold k (k = 2..5) is predicted by
--      fits (steps 2-3) trained on folds 1..k-1 only (forward chaining: never trained on the
--      future). Its extremizing factor is fitted on the out-of-fold predictions of folds 2..k-1
--      (1 while fewer than 50 of them), so the check has no look-ahead at all.
--   With fewer than 50 resolved questions in a cell (the mode for the pool, the (mode, model) for a
--   model), the cell's calibration is the identity (a = 0, b = 1) and `method` says
--   `identity_insufficient_data`; with fewer than 50 out-of-fold questions d = 1 likewise.
--
-- Out-of-sample check (pool rows): over the questions of folds 2..5, brier_raw = Brier of the raw
-- consensus (the mean of the same scored model probabilities), brier_calibrated = Brier of the
-- calibrated pool (steps 4-6); n = those questions, folds = K. Model rows carry the same check for
-- the model alone (its raw p against sigmoid(a + b·x) from the earlier folds' fit).
--
-- Newton's method: 12 steps from the prior mean, unrolled as statements (one aggregation pass over
-- the training rows per step, every cell at once; the MAP objective is strictly concave and Newton
-- converges in a handful of steps; `converged` says whether the last step moved a coefficient by
-- less than 1e-9).

CREATE OR REPLACE TEMP MACRO _cal_min_questions() AS 50;
CREATE OR REPLACE TEMP MACRO _cal_folds() AS 5;
CREATE OR REPLACE TEMP MACRO _cal_pool_prior() AS 1.0;
CREATE OR REPLACE TEMP MACRO _cal_model_prior() AS 20.0;
CREATE OR REPLACE TEMP MACRO _cal_logit(p) AS
  ln(greatest(0.001, least(0.999, p)) / (1 - greatest(0.001, least(0.999, p))));
CREATE OR REPLACE TEMP MACRO _cal_sigmoid(z) AS 1.0 / (1.0 + exp(-z));

-- The training forecasts: in a mode where a real provider's forecasts are scored, theirs alone.
-- A deployment first started on the bundled sample with the simulator (quorum start), then given
-- real providers, had the simulator's history in every pool beside theirs: the prior of each real
-- model's fit and the extremizing factor were partly a fit of the simulator, with no word of it.
-- A mode with the simulator's forecasts alone (a demo) is fitted on them. (provider NULL: a
-- forecast from before providers were recorded, counted as real.)
CREATE OR REPLACE TEMP TABLE _cal_obs AS
WITH scored AS (
  SELECT question_id, model, mode, resolved_at, outcome::DOUBLE AS y, probability AS p,
         _cal_logit(probability) AS x, provider IS NOT DISTINCT FROM 'simulated' AS simulated
  FROM scored_forecasts
  WHERE probability IS NOT NULL AND outcome IS NOT NULL
)
SELECT question_id, model, mode, resolved_at, y, p, x
FROM scored
WHERE NOT simulated OR mode NOT IN (SELECT mode FROM scored WHERE NOT simulated);

-- Questions per mode in time order, and their fold.
CREATE OR REPLACE TEMP TABLE _cal_q AS
SELECT mode, question_id, resolved_at, y,
       ntile(_cal_folds()) OVER (PARTITION BY mode ORDER BY resolved_at, question_id) AS fold
FROM (SELECT mode, question_id, min(resolved_at) AS resolved_at, min(y) AS y FROM _cal_obs GROUP BY ALL);

-- Each observation with its question's fold (one join, for the training sets and the
-- out-of-fold forecasts alike).
CREATE OR REPLACE TEMP TABLE _cal_obs_f AS
SELECT o.question_id, o.model, o.mode, o.resolved_at, o.y, o.p, o.x, q.fold
FROM _cal_obs o
JOIN _cal_q q USING (mode, question_id);

-- Training sets: fit 0 = everything (the published fit); fit k = folds 1..k-1 (predicts fold k).
-- The training rows collapsed to distinct log-odds (exact: every sum below is over rows, and rows
-- with the same x contribute n·f(x) and their outcome sum sy): forecasts given to two decimals, as
-- models mostly give them, collapse to at most ~100 rows per cell. They are collapsed per fold
-- first and the folds then summed into each training set (counts and sums of 0/1 outcomes: exact),
-- instead of copying every observation into each training set that holds it (6.5 M rows on the
-- scoring bench, grouped three times).
CREATE OR REPLACE TEMP TABLE _cal_fold_w AS
SELECT mode, model, fold, x, count(*) AS n, sum(y) AS sy, max(resolved_at) AS last_at
FROM _cal_obs_f GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE _cal_model_w AS
SELECT f.fit, w.mode, w.model, w.x, sum(w.n)::DOUBLE AS n, sum(w.sy) AS sy, max(w.last_at) AS last_at
FROM _cal_fold_w w
JOIN (SELECT range AS fit FROM range(0, _cal_folds() + 1) WHERE range <> 1) f ON f.fit = 0 OR w.fold < f.fit
GROUP BY ALL;
CREATE OR REPLACE TEMP TABLE _cal_pool_w AS
SELECT fit, mode, x, sum(n) AS n, sum(sy) AS sy FROM _cal_model_w GROUP BY ALL;

-- Cells: the pool of a (fit, mode), each (fit, mode, model); their sizes. A (question, model,
-- mode) is one scored forecast (30_scored_forecasts), so a model's questions are its forecasts;
-- the pool's questions are those of _cal_q in the training folds.
CREATE OR REPLACE TEMP TABLE _cal_cells AS
WITH models AS (
  SELECT fit, mode, model, sum(n)::BIGINT AS n_forecasts, max(last_at) AS fitted_through
  FROM _cal_model_w GROUP BY ALL
),
pool_q AS (
  SELECT f.fit, q.mode, count(*) AS n_questions
  FROM _cal_q q
  JOIN (SELECT range AS fit FROM range(0, _cal_folds() + 1) WHERE range <> 1) f ON f.fit = 0 OR q.fold < f.fit
  GROUP BY ALL
)
SELECT m.fit, m.mode, '*' AS model, q.n_questions, sum(m.n_forecasts)::BIGINT AS n_forecasts,
       max(m.fitted_through) AS fitted_through
FROM models m JOIN pool_q q USING (fit, mode)
GROUP BY m.fit, m.mode, q.n_questions
UNION ALL
SELECT fit, mode, model, n_forecasts, n_forecasts, fitted_through
FROM models;

-- One Newton step of the MAP logistic regression of y on x, prior N((a0, b0), I / lam), for every
-- cell of a theta table at once (one aggregation pass over the training rows):
-- θ += H⁻¹ g with g = (Σ(y-μ) - lam(a-a0), Σ(y-μ)x - lam(b-b0)), H = [[Σw + lam, Σwx], [Σwx, Σwx² + lam]],
-- w = μ(1-μ); each coefficient's step capped at ±5 (a damped first step on extreme data).
CREATE OR REPLACE TEMP MACRO _cal_newton_step(ga, gb, h11, h12, h22) AS
  struct_pack(da := greatest(-5.0, least(5.0, (h22 * ga - h12 * gb) / (h11 * h22 - h12 * h12))),
              db := greatest(-5.0, least(5.0, (h11 * gb - h12 * ga) / (h11 * h22 - h12 * h12))));

-- Pools: prior = the identity, precision _cal_pool_prior(); cells under the minimum stay out.
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS
SELECT fit, mode, 0.0::DOUBLE AS a0, 1.0::DOUBLE AS b0, _cal_pool_prior()::DOUBLE AS lam,
       0.0::DOUBLE AS a, 1.0::DOUBLE AS b, 1e9::DOUBLE AS step
FROM _cal_cells WHERE model = '*' AND n_questions >= _cal_min_questions();

CREATE OR REPLACE TEMP MACRO _cal_pool_step() AS TABLE
SELECT fit, mode, a0, b0, lam, a + s.da AS a, b + s.db AS b, greatest(abs(s.da), abs(s.db)) AS step
FROM (
  SELECT fit, mode, a0, b0, lam, a, b,
         _cal_newton_step(sum(sy - n * mu) - lam * (a - a0), sum((sy - n * mu) * x) - lam * (b - b0),
                          sum(n * mu * (1 - mu)) + lam, sum(n * mu * (1 - mu) * x), sum(n * mu * (1 - mu) * x * x) + lam) AS s
  FROM (SELECT t.*, d.x, d.n, d.sy, _cal_sigmoid(t.a + t.b * d.x) AS mu
        FROM _cal_pool_theta t JOIN _cal_pool_w d USING (fit, mode))
  GROUP BY fit, mode, a0, b0, lam, a, b
);

CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();
CREATE OR REPLACE TEMP TABLE _cal_pool_theta AS FROM _cal_pool_step();

CREATE OR REPLACE TEMP TABLE _cal_pool_fit AS
SELECT c.fit, c.mode, c.n_questions, c.n_forecasts, c.fitted_through,
       coalesce(t.a, 0.0) AS a, coalesce(t.b, 1.0) AS b, t.step < 1e-9 AS converged,
       CASE WHEN t.a IS NULL THEN 'identity_insufficient_data' ELSE 'platt' END AS method
FROM _cal_cells c LEFT JOIN _cal_pool_theta t USING (fit, mode)
WHERE c.model = '*';

-- Models: prior = the pool of the same training set, precision _cal_model_prior().
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS
SELECT c.fit, c.mode, c.model, p.a AS a0, p.b AS b0, _cal_model_prior()::DOUBLE AS lam,
       p.a AS a, p.b AS b, 1e9::DOUBLE AS step
FROM _cal_cells c JOIN _cal_pool_fit p USING (fit, mode)
WHERE c.model <> '*' AND c.n_questions >= _cal_min_questions();

CREATE OR REPLACE TEMP MACRO _cal_model_step() AS TABLE
SELECT fit, mode, model, a0, b0, lam, a + s.da AS a, b + s.db AS b, greatest(abs(s.da), abs(s.db)) AS step
FROM (
  SELECT fit, mode, model, a0, b0, lam, a, b,
         _cal_newton_step(sum(sy - n * mu) - lam * (a - a0), sum((sy - n * mu) * x) - lam * (b - b0),
                          sum(n * mu * (1 - mu)) + lam, sum(n * mu * (1 - mu) * x), sum(n * mu * (1 - mu) * x * x) + lam) AS s
  FROM (SELECT t.*, d.x, d.n, d.sy, _cal_sigmoid(t.a + t.b * d.x) AS mu
        FROM _cal_model_theta t JOIN _cal_model_w d USING (fit, mode, model))
  GROUP BY fit, mode, model, a0, b0, lam, a, b
);

CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();
CREATE OR REPLACE TEMP TABLE _cal_model_theta AS FROM _cal_model_step();

CREATE OR REPLACE TEMP TABLE _cal_model_fit AS
SELECT c.fit, c.mode, c.model, c.n_questions, c.n_forecasts, c.fitted_through,
       coalesce(t.a, 0.0) AS a, coalesce(t.b, 1.0) AS b, t.step < 1e-9 AS converged, p.a AS prior_a, p.b AS prior_b,
       CASE WHEN t.a IS NULL THEN 'identity_insufficient_data' ELSE 'platt_shrunk' END AS method
FROM _cal_cells c
JOIN _cal_pool_fit p USING (fit, mode)
LEFT JOIN _cal_model_theta t USING (fit, mode, model)
WHERE c.model <> '*';

-- Out-of-fold forecasts: fold k's observations through fit k's model calibrations.
CREATE OR REPLACE TEMP TABLE _cal_oof_obs AS
SELECT o.fold, o.mode, o.question_id, o.model, o.y, o.p, o.x,
       _cal_sigmoid(coalesce(m.a, 0.0) + coalesce(m.b, 1.0) * o.x) AS p_cal,
       coalesce(m.a, 0.0) + coalesce(m.b, 1.0) * o.x AS z_cal
FROM _cal_obs_f o
LEFT JOIN _cal_model_fit m ON m.fit = o.fold AND m.mode = o.mode AND m.model = o.model
WHERE o.fold >= 2;

-- Per question: the raw consensus (mean) and the unextremized calibrated pool (mean log-odds).
CREATE OR REPLACE TEMP TABLE _cal_oof_q AS
SELECT fold, mode, question_id, min(y) AS y, avg(p) AS p_raw, avg(z_cal) AS z
FROM _cal_oof_obs GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE _cal_grid AS
SELECT 0.7 + 0.05 * range AS d FROM range(0, 27);

-- The factor chosen from the out-of-fold questions of folds strictly before `upto` (upto = K + 1:
-- all of them, the published factor); 1 with fewer than 50 such questions.
-- Brier sums per (mode, fold, d), once; a target sums the folds before it.
CREATE OR REPLACE TEMP TABLE _cal_fold_d AS
SELECT q.mode, q.fold, g.d, sum(_brier(_cal_sigmoid(g.d * q.z), q.y)) AS s, count(*) AS n
FROM _cal_oof_q q CROSS JOIN _cal_grid g
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE _cal_extremize AS
WITH targets AS (
  SELECT DISTINCT mode, upto FROM _cal_q, (SELECT range AS upto FROM range(2, _cal_folds() + 2))
),
scored AS (
  SELECT t.mode, t.upto, f.d, sum(f.s) / sum(f.n) AS brier, sum(f.n) AS n
  FROM targets t JOIN _cal_fold_d f ON f.mode = t.mode AND f.fold < t.upto
  GROUP BY ALL
),
best AS (
  SELECT mode, upto, arg_min(d, (brier, abs(d - 1.0), d)) AS d, max(n) AS n FROM scored GROUP BY ALL
)
SELECT t.mode, t.upto,
       CASE WHEN coalesce(b.n, 0) >= _cal_min_questions() THEN round(b.d, 2)::DOUBLE ELSE 1.0::DOUBLE END AS d,
       coalesce(b.n, 0) AS n_cv,
       CASE WHEN coalesce(b.n, 0) >= _cal_min_questions() THEN 'cv' ELSE 'identity_insufficient_data' END AS method
FROM targets t LEFT JOIN best b USING (mode, upto);

CREATE OR REPLACE TEMP TABLE _cal_oos_pool AS
SELECT q.mode, avg(_brier(q.p_raw, q.y)) AS brier_raw,
       avg(_brier(_cal_sigmoid(e.d * q.z), q.y)) AS brier_calibrated, count(*) AS n
FROM _cal_oof_q q JOIN _cal_extremize e ON e.mode = q.mode AND e.upto = q.fold
GROUP BY q.mode;

CREATE OR REPLACE TEMP TABLE _cal_oos_model AS
SELECT mode, model, avg(_brier(p, y)) AS brier_raw, avg(_brier(p_cal, y)) AS brier_calibrated, count(*) AS n
FROM _cal_oof_obs GROUP BY ALL;

CREATE OR REPLACE TABLE calibration_models AS
SELECT 'pool' AS kind, p.mode, CAST(NULL AS VARCHAR) AS model, p.method, p.a AS intercept, p.b AS slope,
       0.0::DOUBLE AS prior_intercept, 1.0::DOUBLE AS prior_slope, _cal_pool_prior()::DOUBLE AS prior_precision,
       p.converged, p.n_questions, p.n_forecasts, p.fitted_through,
       e.d AS extremize, e.method AS extremize_method, e.n_cv::BIGINT AS extremize_n,
       o.brier_raw AS oos_brier_raw, o.brier_calibrated AS oos_brier_calibrated, coalesce(o.n, 0) AS oos_n,
       _cal_folds() AS oos_folds, _cal_min_questions() AS min_questions, r.as_of
FROM _cal_pool_fit p
JOIN _cal_extremize e ON e.mode = p.mode AND e.upto = _cal_folds() + 1
LEFT JOIN _cal_oos_pool o ON o.mode = p.mode
CROSS JOIN run_params r
WHERE p.fit = 0
UNION ALL
SELECT 'model', m.mode, m.model, m.method, m.a, m.b, m.prior_a, m.prior_b, _cal_model_prior()::DOUBLE,
       m.converged, m.n_questions, m.n_forecasts, m.fitted_through,
       NULL, NULL, NULL,
       o.brier_raw, o.brier_calibrated, coalesce(o.n, 0), _cal_folds(), _cal_min_questions(), r.as_of
FROM _cal_model_fit m
LEFT JOIN _cal_oos_model o USING (mode, model)
CROSS JOIN run_params r
WHERE m.fit = 0
ORDER BY kind DESC, mode, model;
