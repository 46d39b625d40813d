-- How many active predictions have reasoning in $lang (all pages together).
-- Parameters: $lang VARCHAR (exact, as stored), $category VARCHAR|NULL, $venue VARCHAR|NULL.
SELECT count(*) AS total
FROM active_predictions
WHERE list_contains(langs, $lang)
  AND ($category IS NULL OR category = $category)
  AND ($venue IS NULL OR venue = $venue);
