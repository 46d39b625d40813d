-- 30_scored_forecasts: one row per scored (question_id, model, mode).
--
-- The scored forecast is the latest forecast created strictly before the question's cutoff
-- (least(close_time, resolved_at); see _resolved in 10_questions) of a resolved, non-annulled
-- question. Visible resolutions have resolved_at <= as_of, so every scored forecast is also at or
-- before as_of. Selection is one hash aggregate with arg_max (no window ranking).
--
-- Shared definitions (used again in 40_scored_consensus):
--   brier      = (p - o)^2
--   log_loss   = -ln(p') if o = 1, -ln(1 - p') if o = 0, with p' = p clipped to [0.001, 0.999]
--   direction  = 'correct' when (p > 0.5 and o = 1) or (p < 0.5 and o = 0); 'none' when p = 0.5;
--                otherwise 'wrong'
--   tier       = by d = |p - 0.5| rounded to 9 decimals (so that decimal boundaries such as
--                p = 0.65 or 0.85 fall where written, not where binary floating point puts them):
--                low d < 0.15, medium 0.15 <= d < 0.35, high d >= 0.35
--   horizon_days   = (epoch(resolved_at) - epoch(created_at)) / 86400, fractional
--   horizon_bucket = upper bounds inclusive on the fractional days, i.e. bucketing on the ceiling
--                of the fractional day count: d <= 7 '0-7' (7.0 days exactly is '0-7', 7.0001 is
--                '8-30'), d <= 30 '8-30', d <= 90 '31-90', d <= 365 '91-365', else '>365'.
--   market comparator = latest visible market price observed at or before created_at (ASOF join).

CREATE OR REPLACE TEMP MACRO _brier(p, o) AS (p - o) * (p - o);
CREATE OR REPLACE TEMP MACRO _log_loss(p, o) AS
  CASE WHEN p IS NULL OR o IS NULL THEN NULL
       WHEN o = 1 THEN -ln(greatest(0.001, least(0.999, p)))
       ELSE -ln(1 - greatest(0.001, least(0.999, p))) END;
CREATE OR REPLACE TEMP MACRO _direction(p, o) AS
  CASE WHEN p IS NULL OR o IS NULL THEN NULL
       WHEN p = 0.5 THEN 'none'
       WHEN (p > 0.5 AND o = 1) OR (p < 0.5 AND o = 0) THEN 'correct'
       ELSE 'wrong' END;
CREATE OR REPLACE TEMP MACRO _tier(p) AS
  CASE WHEN p IS NULL THEN NULL
       WHEN round(abs(p - 0.5), 9) < 0.15 THEN 'low'
       WHEN round(abs(p - 0.5), 9) < 0.35 THEN 'medium'
       ELSE 'high' END;
CREATE OR REPLACE TEMP MACRO _horizon_days(created_at, resolved_at) AS
  (epoch(resolved_at) - epoch(created_at)) / 86400.0;
CREATE OR REPLACE TEMP MACRO _horizon_bucket(d) AS
  CASE WHEN d IS NULL THEN NULL
       WHEN d <= 7 THEN '0-7'
       WHEN d <= 30 THEN '8-30'
       WHEN d <= 90 THEN '31-90'
       WHEN d <= 365 THEN '91-365'
       ELSE '>365' END;

CREATE OR REPLACE TABLE _latest_forecast AS
SELECT f.question_id, f.model, f.mode,
       arg_max({'run_id': f.run_id, 'created_at': f.created_at, 'probability': f.probability,
                'provider': f.provider}, f.created_at) AS s
FROM raw_forecasts AS f
JOIN _resolved AS r ON r.question_id = f.question_id
WHERE f.created_at < r.cutoff
  AND f.probability IS NOT NULL
GROUP BY f.question_id, f.model, f.mode;

CREATE OR REPLACE TABLE scored_forecasts AS
WITH lf AS (
  SELECT lf.question_id, lf.model, lf.mode, lf.s.run_id AS run_id, lf.s.created_at AS created_at,
         lf.s.probability AS probability, lf.s.provider AS provider,
         r.outcome, r.resolved_at, r.category, r.domain
  FROM _latest_forecast AS lf
  JOIN _resolved AS r ON r.question_id = lf.question_id
),
m AS (
  SELECT lf.*, px.probability AS market_probability, px.observed_at AS market_observed_at
  FROM lf
  ASOF LEFT JOIN _prices AS px
    ON px.question_id = lf.question_id AND px.observed_at <= lf.created_at
)
SELECT question_id, model, mode, run_id, created_at, probability, provider, outcome, resolved_at,
       _brier(probability, outcome) AS brier,
       _log_loss(probability, outcome) AS log_loss,
       _direction(probability, outcome) AS direction,
       _tier(probability) AS tier,
       _horizon_days(created_at, resolved_at) AS horizon_days,
       _horizon_bucket(_horizon_days(created_at, resolved_at)) AS horizon_bucket,
       category, domain,
       market_probability, market_observed_at,
       _brier(market_probability, outcome) AS market_brier,
       _log_loss(market_probability, outcome) AS market_log_loss
FROM m;
