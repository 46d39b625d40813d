-- The reasoning languages available in the prediction feeds: those of the active predictions'
-- headline runs (active_predictions.langs), sorted; a language stored in two cases by two runs
-- (QUORUM_LANGS pt-BR, then pt-br: the region is stored as configured) is listed once, in its
-- first form by sort order (the feeds match it in any case).
SELECT min(lang) AS lang
FROM (SELECT DISTINCT unnest(langs) AS lang FROM active_predictions)
GROUP BY lower(lang)
ORDER BY lang;
