-- The reasoning languages available in the prediction feeds: those of the active predictions'
-- headline runs (active_predictions.langs), sorted.
SELECT DISTINCT unnest(langs) AS lang
FROM active_predictions
ORDER BY lang;
