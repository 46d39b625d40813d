-- A question of the snapshot by its venue-qualified id, or by its bare venue market id (several
-- questions can share one: the caller decides). At most 6 rows (enough to tell "ambiguous").
-- market_stale: the latest market price is older than $max_price_age_hours at the snapshot's as_of
-- ($as_of_s: its epoch seconds); NULL without a price.
-- Parameters: $question_id VARCHAR|NULL, $market_id VARCHAR|NULL (exactly one is non-NULL),
-- $as_of_s DOUBLE, $max_price_age_hours DOUBLE.
SELECT
  question_id, venue, venue_market_id, title, description, resolution_criteria, url, category,
  domain, tags, created_at, close_time, status, lang, outcome, resolved_at, annulled_reason,
  source_slug, source_name, source_kind, source_url, evidence_excerpt, retrieved_at,
  resolution_method, latest_market_probability, latest_market_observed_at,
  CASE WHEN latest_market_probability IS NOT NULL
       THEN ($as_of_s - epoch(latest_market_observed_at)) / 3600.0 > $max_price_age_hours END AS market_stale
FROM questions
WHERE ($question_id IS NOT NULL AND question_id = $question_id)
   OR ($market_id IS NOT NULL AND venue_market_id = $market_id)
ORDER BY question_id
LIMIT 6;
