-- 85_edges: divergence signals between the AI consensus and the market, for active questions.
--
-- For each question that is active at as_of: the latest consensus of each mode (by created_at),
-- of which the headline mode is the first of run_params.headline_modes that has one; beside it
-- the market's latest observation at or before as_of (probability, liquidity, volume).
-- edge = consensus - market (probability points, rounded to 12 decimals); direction says which
-- side the AI is on ('none' when the rounded edge is 0).
-- Questions without a consensus or without a market price have no edge and are not listed.

CREATE OR REPLACE TABLE _latest_consensus_by_mode AS
SELECT unnest(arg_max(c, (c.created_at, c.run_id))) -- (ties on created_at: the greater run_id, as in 30_scored_forecasts)
FROM consensus AS c
JOIN questions AS q ON q.question_id = c.question_id AND q.status = 'active'
GROUP BY c.question_id, c.mode;

CREATE OR REPLACE TABLE _headline_latest AS
SELECT unnest(arg_min(lc, list_position(rp.headline_modes, lc.mode)))
FROM _latest_consensus_by_mode AS lc
CROSS JOIN run_params AS rp
WHERE list_position(rp.headline_modes, lc.mode) IS NOT NULL
GROUP BY lc.question_id;

CREATE OR REPLACE TABLE _latest_market AS
SELECT p.question_id,
       arg_max(p.probability, p.observed_at) AS probability,
       max(p.observed_at) AS observed_at,
       arg_max(p.liquidity, p.observed_at) AS liquidity,
       arg_max(p.volume, p.observed_at) AS volume
FROM raw_market_prices AS p, run_params AS rp
WHERE p.observed_at <= rp.as_of AND p.probability IS NOT NULL
GROUP BY p.question_id;

CREATE OR REPLACE TABLE edges AS
SELECT
  q.question_id, q.venue, q.venue_market_id, q.title, q.url, q.category, q.domain, q.close_time,
  h.mode, h.run_id, h.created_at AS forecast_at,
  h.mean AS consensus, h.n_models,
  h.sd AS disagreement_sd, h.range AS disagreement_range, h.sd_logit AS disagreement_sd_logit,
  m.probability AS market_probability, m.observed_at AS market_observed_at,
  (epoch(rp.as_of) - epoch(m.observed_at)) / 3600.0 AS market_age_hours, -- (to the microsecond: date_diff('second') dropped as_of's fraction)
  m.liquidity, m.volume,
  -- rounded to 12 decimals (QA): the consensus mean's last bits follow the order the forecasts
  -- reach its aggregate (threads, raw part order), so a consensus at its market price was 'none'
  -- one run and 'ai_above_market' by 5.6e-17 the next, and two equal edges swapped places in the
  -- list (sorted by abs_edge, then question_id) between runs on identical data
  -- + 0.0 turns a rounded −0.0 (an edge of −5.6e-17) into 0.0: Parquet and CSV readers saw "-0.0" (QA)
  round(h.mean - m.probability, 12) + 0.0 AS edge,
  abs(round(h.mean - m.probability, 12)) AS abs_edge,
  CASE
    WHEN round(h.mean - m.probability, 12) > 0 THEN 'ai_above_market'
    WHEN round(h.mean - m.probability, 12) < 0 THEN 'ai_below_market'
    ELSE 'none'
  END AS direction,
  h.providers
FROM _headline_latest AS h
JOIN questions AS q ON q.question_id = h.question_id
JOIN _latest_market AS m ON m.question_id = h.question_id
CROSS JOIN run_params AS rp
ORDER BY abs_edge DESC, q.question_id;
