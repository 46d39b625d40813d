-- A question of the snapshot by its venue-qualified id, or by its bare venue market id (several
-- questions can share one: the caller decides). At most 6 rows (enough to tell "ambiguous").
-- Parameters: $question_id VARCHAR|NULL, $market_id VARCHAR|NULL (exactly one is non-NULL).
SELECT
  question_id, venue, venue_market_id, title, description, resolution_criteria, url, category,
  domain, tags, created_at, close_time, status, lang, outcome, resolved_at, annulled_reason,
  source_slug, source_name, source_kind, source_url, evidence_excerpt, retrieved_at,
  resolution_method, latest_market_probability, latest_market_observed_at
FROM questions
WHERE ($question_id IS NOT NULL AND question_id = $question_id)
   OR ($market_id IS NOT NULL AND venue_market_id = $market_id)
ORDER BY question_id
LIMIT 6;
