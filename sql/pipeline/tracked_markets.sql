-- Markets of one venue that the warehouse tracks: known questions with no outcome or annulment
-- recorded yet. Each sync records a price for them and checks whether they resolved;
-- last_observed_at (the latest price observation, NULL if none) lets it fill a gap left by
-- missed syncs from the venue's price history; close_time (the latest version's) lets it notice
-- that the venue moved the market's close.
WITH latest AS (
  SELECT question_id, venue, venue_market_id, close_time FROM raw_questions
  QUALIFY row_number() OVER (PARTITION BY question_id ORDER BY ingested_at DESC) = 1
),
last_price AS (
  SELECT question_id, max(observed_at) AS last_observed_at
  FROM raw_market_prices
  WHERE venue = $venue
  GROUP BY question_id
)
SELECT l.question_id, l.venue_market_id, l.close_time, p.last_observed_at
FROM latest l
LEFT JOIN last_price p USING (question_id)
WHERE l.venue = $venue
  AND l.question_id NOT IN (SELECT question_id FROM raw_resolutions)
ORDER BY l.question_id;
