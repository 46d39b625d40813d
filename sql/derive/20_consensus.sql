-- 20_consensus: the four-model consensus and disagreement per (question, mode, run).
--
-- Cost design (10 M forecasts): ONE hash-aggregate pass over the visible forecasts
-- (created_at <= as_of) with cheap aggregates only; the question-visibility filter is applied to
-- the 2.5 M groups, not to the 10 M rows.
-- * mean = avg(p); sd = population sd; range = max - min; logit_mean = inverse logit of the mean
--   log-odds, sd_logit = population sd of the log-odds, both with p clipped to [0.001, 0.999].
-- * median: a group holds one forecast per model (the raw key (run_id, question_id, model, mode) is
--   unique), so for n <= 4 it follows from count, sum, min and max:
--   n=1: max; n=2: (min+max)/2; n=3: sum-min-max; n=4: (sum-min-max)/2 (exact up to floating
--   rounding, ~1e-16). Groups with more than 4 forecasts get the exact median() in a fallback pass.
-- * providers: distinct providers, sorted, joined by ','. Each provider is a bit of a mask over the
--   sorted provider dictionary (bit_or per group), turned back into the sorted list once per
--   group. Providers beyond the 63rd dictionary entry set the overflow bit 63 and send the group
--   to the fallback pass (string_agg DISTINCT).
-- * The fallback pass joins the forecasts to the (normally empty) set of fallback groups: with an
--   empty build side DuckDB skips the probe, so it costs nothing in the common case.
-- * n_models = forecasts in the group; created_at = the latest forecast created_at of the group.

CREATE OR REPLACE TABLE _provider_dict AS
SELECT coalesce(list(provider ORDER BY provider), []::VARCHAR[]) AS providers
FROM (SELECT DISTINCT provider FROM raw_forecasts WHERE provider IS NOT NULL AND translation_of IS NULL);

CREATE OR REPLACE TABLE _consensus_groups AS
WITH f AS (
  SELECT f.question_id, f.mode, f.run_id, f.created_at, f.probability AS p,
         ln(greatest(0.001, least(0.999, f.probability))
            / (1 - greatest(0.001, least(0.999, f.probability)))) AS lo,
         list_position(d.providers, f.provider) AS provider_pos
  FROM raw_forecasts AS f
  CROSS JOIN _provider_dict AS d
  WHERE f.created_at <= (SELECT as_of FROM run_params)
    AND f.probability IS NOT NULL
    AND f.translation_of IS NULL -- one row per model: translations repeat the same answer
    AND f.condition IS NULL -- a scenario's conditional forecasts are never part of a consensus
)
SELECT question_id, mode, run_id,
       max(created_at) AS created_at,
       count(*) AS n_models,
       avg(p) AS mean,
       sum(p) AS sum_p,
       min(p) AS min_p,
       max(p) AS max_p,
       avg(lo) AS mean_lo,
       stddev_pop(p) AS sd,
       stddev_pop(lo) AS sd_logit,
       bit_or(CASE WHEN provider_pos IS NULL THEN NULL
                   WHEN provider_pos <= 63 THEN 1::UBIGINT << (provider_pos - 1)::UBIGINT
                   ELSE 1::UBIGINT << 63 END) AS provider_mask
FROM f
GROUP BY question_id, mode, run_id;

CREATE OR REPLACE TABLE _consensus_exact AS
SELECT f.question_id, f.mode, f.run_id,
       median(f.probability) AS median,
       string_agg(DISTINCT f.provider, ',' ORDER BY f.provider) AS providers
FROM raw_forecasts AS f
SEMI JOIN (
  SELECT question_id, mode, run_id FROM _consensus_groups
  WHERE n_models > 4 OR provider_mask >= (1::UBIGINT << 63)
) AS k ON k.question_id = f.question_id AND k.mode = f.mode AND k.run_id = f.run_id
WHERE f.created_at <= (SELECT as_of FROM run_params)
  AND f.translation_of IS NULL
  AND f.condition IS NULL
  AND f.probability IS NOT NULL
GROUP BY f.question_id, f.mode, f.run_id;

-- The provider list of each distinct mask (a handful), built once instead of once per group.
CREATE OR REPLACE TABLE _provider_sets AS
SELECT m.provider_mask,
       nullif(array_to_string(
         list_filter(d.providers, lambda v, i: ((m.provider_mask >> (i - 1)::UBIGINT) & 1::UBIGINT) = 1),
         ','), '') AS providers
FROM (SELECT DISTINCT provider_mask FROM _consensus_groups) AS m
CROSS JOIN _provider_dict AS d;

CREATE OR REPLACE TABLE consensus AS
SELECT g.question_id, g.mode, g.run_id, g.created_at, g.n_models::INTEGER AS n_models, g.mean,
       CASE WHEN x.median IS NOT NULL THEN x.median
            WHEN g.n_models = 1 THEN g.max_p
            WHEN g.n_models = 2 THEN (g.min_p + g.max_p) / 2
            WHEN g.n_models = 3 THEN g.sum_p - g.min_p - g.max_p
            WHEN g.n_models = 4 THEN (g.sum_p - g.min_p - g.max_p) / 2 END AS median,
       1 / (1 + exp(-g.mean_lo)) AS logit_mean,
       g.sd, g.max_p - g.min_p AS range, g.sd_logit,
       coalesce(x.providers, ps.providers) AS providers
FROM _consensus_groups AS g
LEFT JOIN _provider_sets AS ps ON ps.provider_mask IS NOT DISTINCT FROM g.provider_mask
LEFT JOIN _consensus_exact AS x
  ON x.question_id = g.question_id AND x.mode = g.mode AND x.run_id = g.run_id
WHERE g.question_id IN (SELECT question_id FROM questions);

DROP TABLE _consensus_groups;
