-- The reasoning-language codes stored for the active predictions' headline runs, each once, with
-- how many active predictions have reasoning in it (`predictions`) and how many of those were
-- answered in it first (`main_predictions`: the run's first language, its latest_forecasts rows with
-- translation_of NULL; the others are translations of that answer). The API groups the codes into
-- languages (storedLanguages, api/routes/prediction-params.ts) and lists first the language most
-- predictions were answered in (GET /api/events/service_stats/ `languages`). One headline run per
-- question and one code per language in a run, so the counts of one language's codes add up.
WITH stored AS (
  SELECT question_id, mode, run_id, unnest(langs) AS lang
  FROM active_predictions
),
main AS (
  SELECT DISTINCT f.question_id, f.lang
  FROM latest_forecasts AS f
  JOIN active_predictions AS a ON a.question_id = f.question_id AND a.mode = f.mode AND a.run_id = f.run_id
  WHERE f.translation_of IS NULL AND f.lang IS NOT NULL
)
SELECT s.lang, count(*) AS predictions, count(m.question_id) AS main_predictions
FROM stored AS s
LEFT JOIN main AS m ON m.question_id = s.question_id AND m.lang = s.lang
GROUP BY s.lang
ORDER BY s.lang;
