-- 50_accuracy: long-form accuracy breakdowns (see sql/README.md, `accuracy`).
--
-- _obs holds one scored observation per (forecaster, mode, question[, model]):
--   consensus, mode m       : scored_consensus rows of mode m
--   consensus, 'headline'   : the question's headline scored consensus
--   market, mode m          : the market comparators paired with the consensus rows of mode m
--                             (same questions; rows without a comparator are left out), with the
--                             paired consensus's horizon, and tier/direction from the market's
--                             own probability
--   market, 'headline'      : same for the headline rows
--   <model>, mode m         : that model's scored forecasts in mode m
--   <model>, 'headline'     : that model's scored forecasts in the question's headline mode
-- They are summed ONCE into small cells (forecaster, mode, category, domain, horizon, tier,
-- calibration bin); the cells are then rolled up into every (scope, dimension, key) here and into
-- the calibration tables in 70_calibration: the millions of observations are aggregated once.
-- NULL category/domain keys are reported as 'unknown'.

CREATE OR REPLACE TABLE _headline AS
SELECT question_id, mode AS headline_mode FROM scored_consensus WHERE is_headline;

CREATE OR REPLACE TEMP VIEW _obs AS
SELECT 'consensus' AS forecaster, mode, question_id, category, domain, horizon_bucket, tier,
       probability AS p, outcome, brier, log_loss, direction
FROM scored_consensus
UNION ALL
SELECT 'consensus', 'headline', question_id, category, domain, horizon_bucket, tier,
       probability, outcome, brier, log_loss, direction
FROM scored_consensus WHERE is_headline
UNION ALL
SELECT 'market', mode, question_id, category, domain, horizon_bucket, _tier(market_probability),
       market_probability, outcome, market_brier, market_log_loss,
       _direction(market_probability, outcome)
FROM scored_consensus WHERE market_probability IS NOT NULL
UNION ALL
SELECT 'market', 'headline', question_id, category, domain, horizon_bucket,
       _tier(market_probability), market_probability, outcome, market_brier, market_log_loss,
       _direction(market_probability, outcome)
FROM scored_consensus WHERE is_headline AND market_probability IS NOT NULL
UNION ALL
SELECT model, mode, question_id, category, domain, horizon_bucket, tier,
       probability, outcome, brier, log_loss, direction
FROM scored_forecasts
UNION ALL
SELECT sf.model, 'headline', sf.question_id, sf.category, sf.domain, sf.horizon_bucket, sf.tier,
       sf.probability, sf.outcome, sf.brier, sf.log_loss, sf.direction
FROM scored_forecasts AS sf
JOIN _headline AS h ON h.question_id = sf.question_id AND h.headline_mode = sf.mode;

CREATE OR REPLACE TABLE _accuracy_cells AS
SELECT forecaster, mode, coalesce(category, 'unknown') AS category,
       coalesce(domain, 'unknown') AS domain, horizon_bucket, tier,
       _calibration_bin(p) AS bin,
       count(*) AS n, sum(p) AS sum_p, sum(outcome) AS sum_outcome,
       sum(p * (1 - p)) AS sum_pq, -- outcome variance of a perfectly calibrated forecaster (70)
       sum(brier) AS sum_brier, sum(log_loss) AS sum_log_loss,
       count(*) FILTER (WHERE direction <> 'none') AS n_directional,
       count(*) FILTER (WHERE direction = 'correct') AS n_correct,
       count(*) FILTER (WHERE direction = 'none') AS n_no_direction
FROM _obs
GROUP BY ALL;

-- _obs is kept for the ECE bootstrap of 70_calibration (which drops it).

CREATE OR REPLACE TABLE accuracy AS
WITH expanded AS (
  SELECT c.forecaster, c.mode, s.scope, d.dim.dimension AS dimension, d.dim.key AS key,
         c.n, c.sum_brier, c.sum_log_loss, c.n_directional, c.n_correct, c.n_no_direction
  FROM _accuracy_cells AS c,
       unnest(CASE WHEN c.category = 'unknown' THEN ['all'] ELSE ['all', c.category] END) AS s(scope),
       unnest([{'dimension': 'overall', 'key': 'all'},
               {'dimension': 'category', 'key': c.category},
               {'dimension': 'domain', 'key': c.domain},
               {'dimension': 'horizon', 'key': c.horizon_bucket},
               {'dimension': 'tier', 'key': c.tier}]) AS d(dim)
),
rolled AS (
  SELECT scope, forecaster, mode, dimension, key,
         sum(n)::BIGINT AS n,
         sum(sum_brier) / sum(n) AS brier,
         sum(sum_log_loss) / sum(n) AS log_loss,
         sum(n_directional)::BIGINT AS n_directional,
         sum(n_correct)::BIGINT AS n_correct,
         sum(n_no_direction)::BIGINT AS n_no_direction
  FROM expanded
  GROUP BY ALL
),
labelled AS (
  SELECT * FROM rolled
  UNION ALL
  -- each model's scored forecasts in the consensus's mode (headline: the question's headline mode)
  SELECT scope, 'consensus', mode, 'model', forecaster, n, brier, log_loss, n_directional,
         n_correct, n_no_direction
  FROM rolled
  WHERE forecaster NOT IN ('consensus', 'market') AND dimension = 'overall'
  UNION ALL
  -- the consensus in each mode, beside the headline
  SELECT scope, 'consensus', 'headline', 'mode', mode, n, brier, log_loss, n_directional,
         n_correct, n_no_direction
  FROM rolled
  WHERE forecaster = 'consensus' AND mode <> 'headline' AND dimension = 'overall'
)
SELECT scope, forecaster, mode, dimension, key, n, brier, log_loss, n_directional, n_correct,
       n_no_direction,
       CASE WHEN n_directional > 0 THEN 100.0 * n_correct / n_directional END AS accuracy_pct
FROM labelled
ORDER BY scope, forecaster, mode, dimension, key;
