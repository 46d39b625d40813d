-- The reasoning-language codes stored for the active predictions' headline runs
-- (active_predictions.langs), each once, sorted. A language may be stored under several codes, one
-- per run's configuration (pt-BR and pt-br: the region is stored as configured; he and iw: two codes
-- of Hebrew); the API groups them into languages (storedLanguages, api/routes/prediction-params.ts).
SELECT DISTINCT unnest(langs) AS lang
FROM active_predictions
ORDER BY lang;
