-- One page of resolved predictions, newest resolution first, keyset-paginated by
-- (resolved_at DESC NULLS LAST, question_id ASC). The cursor is the last row's key:
-- epoch microseconds of resolved_at (NULL for a row without one) and question_id.
-- Parameters: $category VARCHAR|NULL, $venue VARCHAR|NULL, $after BOOLEAN (a cursor is given),
-- $after_resolved_us BIGINT|NULL, $after_question_id VARCHAR|NULL, $limit BIGINT (page size + 1,
-- to learn whether another page follows), $max_price_age_hours DOUBLE.
-- market_stale: the comparator price was observed more than $max_price_age_hours before the
-- forecast it is compared with (forecast_at); NULL without a comparator.
SELECT
  question_id,
  venue,
  venue_market_id,
  title,
  category,
  domain,
  mode,
  consensus,
  consensus_median,
  consensus_logit_mean,
  n_models,
  disagreement_sd,
  disagreement_range,
  disagreement_sd_logit,
  market_probability,
  outcome,
  ai_error,
  market_error,
  forecast_at,
  resolved_at,
  horizon_bucket,
  source_slug,
  source_name,
  source_url,
  evidence_excerpt,
  retrieved_at,
  providers,
  market_observed_at,
  market_status,
  market_age_days,
  CASE WHEN market_probability IS NOT NULL
       THEN (epoch(forecast_at) - epoch(market_observed_at)) / 3600.0 > $max_price_age_hours END AS market_stale,
  epoch_us(resolved_at) AS cursor_resolved_us
FROM resolved_predictions
WHERE ($category IS NULL OR category = $category)
  AND ($venue IS NULL OR venue = $venue)
  AND (
       NOT $after
    OR ($after_resolved_us IS NOT NULL
        AND (epoch_us(resolved_at) < $after_resolved_us
             OR (epoch_us(resolved_at) = $after_resolved_us AND question_id > $after_question_id)
             OR resolved_at IS NULL))
    OR ($after_resolved_us IS NULL AND resolved_at IS NULL AND question_id > $after_question_id)
  )
ORDER BY resolved_at DESC NULLS LAST, question_id ASC
LIMIT $limit;
