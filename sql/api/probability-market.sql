-- The probability endpoint's market lookup: a tracked question by venue and venue market id, with
-- its latest market price as of the snapshot. Parameters: $venue VARCHAR, $market_id VARCHAR.
SELECT question_id, venue, venue_market_id, latest_market_probability, latest_market_observed_at
FROM questions
WHERE venue = $venue AND venue_market_id = $market_id
ORDER BY question_id
LIMIT 1;
