-- How many edges reach min_edge (all pages together); same rounding as edges-page.sql.
-- Parameters: $min_edge DOUBLE.
SELECT count(*) AS total
FROM edges
WHERE abs_edge IS NOT NULL
  AND round(abs_edge, 9) >= $min_edge;
