-- How many active predictions have reasoning in the language (all pages together).
-- Parameters: $langs VARCHAR[] (every code the language is stored under: pt-BR and pt-br, he and iw; api/routes/prediction-params.ts storedLanguages), $category VARCHAR|NULL, $venue VARCHAR|NULL.
SELECT count(*) AS total
FROM active_predictions
WHERE list_has_any(langs, $langs)
  AND ($category IS NULL OR category = $category)
  AND ($venue IS NULL OR venue = $venue);
