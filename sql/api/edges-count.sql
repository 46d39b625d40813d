-- How many edges reach min_edge (all pages together); same rounding, staleness rule and filters as
-- edges-page.sql.
-- Parameters: $min_edge DOUBLE, $include_stale BOOLEAN, $max_price_age_hours DOUBLE,
-- $category VARCHAR|NULL, $venue VARCHAR|NULL.
SELECT count(*) AS total
FROM edges
WHERE abs_edge IS NOT NULL
  AND round(abs_edge::DECIMAL(18, 15), 6) >= $min_edge
  AND ($include_stale OR market_age_hours <= $max_price_age_hours)
  AND ($category IS NULL OR category = $category)
  AND ($venue IS NULL OR venue = $venue);
