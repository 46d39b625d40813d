-- Markets of one venue that the warehouse tracks: known questions with no outcome or annulment
-- recorded yet. Each sync records a price for them and checks whether they resolved.
WITH latest AS (
  SELECT question_id, venue, venue_market_id FROM raw_questions
  QUALIFY row_number() OVER (PARTITION BY question_id ORDER BY ingested_at DESC) = 1
)
SELECT question_id, venue_market_id
FROM latest
WHERE venue = $venue
  AND question_id NOT IN (SELECT question_id FROM raw_resolutions)
ORDER BY question_id;
