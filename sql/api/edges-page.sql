-- One page of divergence signals (edges), largest absolute edge first, keyset-paginated by
-- (abs_edge DESC, question_id ASC). min_edge compares abs_edge as the API publishes it: rounded to
-- 6 decimals, half away from zero on its decimal value (api/http/precision.ts; the DECIMAL cast
-- drops binary noise, so 0.35 - 0.30 = 0.04999999999999999 is 0.05), so that an edge published as
-- 0.0717 (0.0716996 in full) is listed by min_edge=0.0717 and one published as 0.05 by the default.
-- The cursor is the last row's (abs_edge, question_id), compared unrounded.
-- A market price older than $max_price_age_hours at as_of (market_age_hours) is stale: such edges
-- are left out unless $include_stale, and flagged market_stale.
-- Parameters: $min_edge DOUBLE, $include_stale BOOLEAN, $max_price_age_hours DOUBLE,
-- $category VARCHAR|NULL, $venue VARCHAR|NULL, $after BOOLEAN (a cursor is given), $after_abs_edge DOUBLE|NULL,
-- $after_question_id VARCHAR|NULL, $limit BIGINT (page size + 1, to learn whether a page follows).
SELECT
  question_id, venue, venue_market_id, title, url, category, domain, close_time, mode, run_id,
  forecast_at, consensus, n_models, disagreement_sd, disagreement_range, disagreement_sd_logit,
  market_probability, market_observed_at, market_age_hours, liquidity, volume, edge, abs_edge,
  direction, providers, market_age_hours > $max_price_age_hours AS market_stale
FROM edges
WHERE abs_edge IS NOT NULL
  AND round(abs_edge::DECIMAL(18, 15), 6) >= $min_edge
  AND ($include_stale OR market_age_hours <= $max_price_age_hours)
  AND ($category IS NULL OR category = $category)
  AND ($venue IS NULL OR venue = $venue)
  AND (
       NOT $after
    OR abs_edge < $after_abs_edge
    OR (abs_edge = $after_abs_edge AND question_id > $after_question_id)
  )
ORDER BY abs_edge DESC, question_id ASC
LIMIT $limit;
