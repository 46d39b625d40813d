-- Every model's forecast of one question's latest run per mode, in every language
-- (latest_forecasts: published for active questions); per model the original answer first, then
-- its translations by language.
-- Parameters: $question_id VARCHAR.
SELECT mode, model, lang, run_id, created_at, probability, reasoning, key_factors, evidence_ids, provider,
       translation_of
FROM latest_forecasts
WHERE question_id = $question_id
ORDER BY mode, model, translation_of IS NOT NULL, lang NULLS LAST;
