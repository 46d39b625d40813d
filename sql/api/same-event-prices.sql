-- The other venues' prices of the same event as each question in [$first, $last] (lifecycle,
-- detail and edges items; one question: $first = $last): from same_event_prices
-- (sql/derive/96_question_links.sql). implied_probability is the other price read as this
-- question's YES (1 - p when the other market is phrased as the negation); gap = this market's
-- price - implied_probability. other_market_stale: that price is older than $max_price_age_hours at
-- the snapshot's as_of ($as_of_s, epoch seconds; NULL without a price), as every price shown beside
-- a consensus. Parameters: $first VARCHAR, $last VARCHAR, $as_of_s DOUBLE, $max_price_age_hours DOUBLE.
SELECT question_id, other_question_id, other_venue, other_title, other_url, sign, strength, origin,
       other_market_probability, other_market_observed_at,
       ($as_of_s - epoch(other_market_observed_at)) / 3600.0 > $max_price_age_hours AS other_market_stale,
       implied_probability, gap
FROM same_event_prices
WHERE question_id BETWEEN $first AND $last
ORDER BY question_id, other_question_id;
