-- How many resolved predictions match the filters (all pages together).
-- Parameters: $category VARCHAR|NULL, $venue VARCHAR|NULL.
SELECT count(*) AS total
FROM resolved_predictions
WHERE ($category IS NULL OR category = $category)
  AND ($venue IS NULL OR venue = $venue);
