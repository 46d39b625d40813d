-- 81_scored_forecast_texts: what each model said in its scored forecast (the model-by-model view
-- of a resolved question in GET /api/predictions/{market_id}).
--
-- One row per (question_id, mode, model, lang) of every scored_forecasts row (30): the raw forecast
-- rows of the scored forecast's run (question, model, mode, run_id), created at or before as_of,
-- with a probability: the answer as given (translation_of NULL) and its translations into the
-- other configured languages (pipeline/forecast/README.md). The raw natural key (run, question,
-- model, mode, lang) makes these rows unique. Columns as latest_forecasts (87). The scores stay in
-- scored_forecasts (join on question_id, model, mode, run_id).
--
-- Cost design: one hash join of the raw forecasts against scored_forecasts (a few rows per resolved
-- question); no window ranking and no sort of the wide rows.

CREATE OR REPLACE TABLE scored_forecast_texts AS
SELECT f.question_id, f.mode, f.model, f.lang, f.run_id, f.created_at, f.probability,
       f.reasoning, f.key_factors, f.evidence_ids, f.provider, f.translation_of
FROM raw_forecasts AS f
JOIN scored_forecasts AS s
  ON s.question_id = f.question_id AND s.model = f.model AND s.mode = f.mode AND s.run_id = f.run_id
WHERE f.created_at <= (SELECT as_of FROM run_params)
  AND f.probability IS NOT NULL
  AND f.condition IS NULL;
