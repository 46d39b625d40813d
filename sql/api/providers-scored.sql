-- The distinct providers of the scored forecasts (what the accuracy summaries score), within one
-- category or overall. Translations are not scored rows, so they never add a provider.
-- Parameters: $category VARCHAR|NULL (NULL: every category).
SELECT DISTINCT provider
FROM scored_forecasts
WHERE provider IS NOT NULL
  AND ($category IS NULL OR category = $category)
ORDER BY provider;
