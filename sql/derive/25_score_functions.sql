-- 25_score_functions: the scoring definitions of DESIGN §5 as SQL macros, shared by every later
-- file (temporary: they live only on the deriving connection).
--
--   brier      = (p - o)^2
--   log_loss   = -ln(p') if o = 1, -ln(1 - p') if o = 0, with p' = p clipped to [0.001, 0.999]
--   direction  = on p rounded to 9 decimals (the rounding of tiers and bins, so that a mean of
--                0.3, 0.3, 0.7, 0.7 = 0.49999999999999994 is 0.5): 'correct' when (p > 0.5 and
--                o = 1) or (p < 0.5 and o = 0); 'none' when p = 0.5 (no direction, counted apart);
--                otherwise 'wrong'
--   tier       = by d = |p - 0.5| rounded to 9 decimals (so that decimal boundaries such as
--                p = 0.65 or 0.85 fall where written, not where binary floating point puts them):
--                low d < 0.15, medium 0.15 <= d < 0.35, high d >= 0.35
--   horizon_days   = (epoch(resolved_at) - epoch(created_at)) / 86400, fractional days
--   horizon_bucket = upper bounds inclusive on the fractional day count, which is the same as
--                bucketing on its ceiling: d <= 7 '0-7' (exactly 7.0 days is '0-7', 7.0001 days is
--                '8-30'), d <= 30 '8-30', d <= 90 '31-90', d <= 365 '91-365', else '>365'.
--   calibration bin = floor(p * 10) with p * 10 rounded to 9 decimals, p = 1 in bin 9.
--   logit      = ln(p' / (1 - p')), p' = p clipped to [0.001, 0.999] (the log-odds means of
--                theses and factors); inv_logit(x) = 1 / (1 + e^(-x)).

CREATE OR REPLACE TEMP MACRO _brier(p, o) AS (p - o) * (p - o);

CREATE OR REPLACE TEMP MACRO _logit(p) AS ln(least(greatest(p, 0.001), 0.999) / (1 - least(greatest(p, 0.001), 0.999)));
CREATE OR REPLACE TEMP MACRO _inv_logit(x) AS 1 / (1 + exp(-x));

CREATE OR REPLACE TEMP MACRO _log_loss(p, o) AS
  CASE WHEN p IS NULL OR o IS NULL THEN NULL
       WHEN o = 1 THEN -ln(greatest(0.001, least(0.999, p)))
       ELSE -ln(1 - greatest(0.001, least(0.999, p))) END;

CREATE OR REPLACE TEMP MACRO _direction(p, o) AS
  CASE WHEN p IS NULL OR o IS NULL THEN NULL
       WHEN round(p, 9) = 0.5 THEN 'none'
       WHEN (round(p, 9) > 0.5 AND o = 1) OR (round(p, 9) < 0.5 AND o = 0) THEN 'correct'
       ELSE 'wrong' END;

-- 1 for a correct direction, 0 for a wrong one, NULL without a direction (averages to a share).
CREATE OR REPLACE TEMP MACRO _correct01(p, o) AS
  CASE _direction(p, o) WHEN 'correct' THEN 1.0 WHEN 'wrong' THEN 0.0 END;

-- Market comparator status of a forecast made at created_at whose latest visible price at or
-- before it was observed at observed_at (NULL: none): 'ok' when the price is at most
-- max_age_days old, 'stale' when older (no comparator, counted), 'none' without a price.
CREATE OR REPLACE TEMP MACRO _comparator_status(observed_at, created_at, max_age_days) AS
  CASE WHEN observed_at IS NULL THEN 'none'
       WHEN (epoch(created_at) - epoch(observed_at)) / 86400.0 <= max_age_days THEN 'ok'
       ELSE 'stale' END;

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

-- (NULL for a missing probability: least() skips NULLs, so least(NULL, 9) alone would put every
-- forecaster's missing probability, such as a stale market comparator, into the top bin)
CREATE OR REPLACE TEMP MACRO _calibration_bin(p) AS
  CASE WHEN p IS NOT NULL THEN least(floor(round(p * 10, 9)), 9)::INTEGER END;
