-- The members of the theses with thesis_id in [$first, $last] (a page of GET /api/clusters/, or one
-- thesis with $first = $last), in thesis_id then question_id order.
-- market_stale: the member's latest price is older than $max_price_age_hours at the snapshot's
-- as_of ($as_of_s, epoch seconds), as on every route that shows a price beside a consensus (NULL
-- without a price). Parameters: $first VARCHAR, $last VARCHAR, $as_of_s DOUBLE,
-- $max_price_age_hours DOUBLE.
SELECT m.*,
       ($as_of_s - epoch(m.market_observed_at)) / 3600.0 > $max_price_age_hours AS market_stale
FROM thesis_members AS m
WHERE m.thesis_id BETWEEN $first AND $last
ORDER BY m.thesis_id, m.question_id;
