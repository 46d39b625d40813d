-- The leaves (questions) of the factors with factor_id in [$first, $last], by node then question.
-- market_stale: the leaf's latest price is older than $max_price_age_hours at the snapshot's as_of
-- ($as_of_s, epoch seconds), as on every route that shows a price beside a consensus (NULL without
-- a price). Parameters: $first VARCHAR, $last VARCHAR, $as_of_s DOUBLE, $max_price_age_hours DOUBLE.
SELECT l.*,
       ($as_of_s - epoch(l.market_observed_at)) / 3600.0 > $max_price_age_hours AS market_stale
FROM factor_leaves AS l
WHERE l.factor_id BETWEEN $first AND $last
ORDER BY l.factor_id, l.node_id, l.question_id;
