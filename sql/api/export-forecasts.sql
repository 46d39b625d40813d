-- Export of raw model forecasts (with reasoning) as the snapshot saw them: forecasts created at
-- or before the snapshot's as_of, of questions the snapshot knows, with the question's category.
-- Reads `raw_forecasts` (the raw Parquet parts the snapshot was derived from, its manifest's
-- `raw_forecast_parts`, typed as pipeline/warehouse/tables.ts)
-- and the snapshot's `questions`. Run as `COPY (<this query>) TO ...` (wrapped in a bound LIMIT
-- when one applies) with BOUND parameters:
--   $as_of VARCHAR  the snapshot's as_of (ISO, UTC)
--   $created_since VARCHAR|NULL  UTC timestamp: forecasts with created_at >= it
--   $category VARCHAR|NULL  one of the nine categories
SELECT
  f.run_id,
  f.question_id,
  q.category,
  f.model,
  f.mode,
  f.created_at,
  f.probability,
  f.reasoning,
  f.lang,
  -- NULL for the model's forecast, the main language for a translation of its reasoning (same
  -- probability): without it a translation read as another forecast in the export's counts (QA).
  f.translation_of,
  f.key_factors,
  f.evidence_ids,
  f.provider,
  f.prompt_hash
FROM raw_forecasts AS f
JOIN questions AS q ON q.question_id = f.question_id
WHERE f.created_at <= CAST($as_of AS TIMESTAMP)
  AND f.condition IS NULL -- a scenario's conditional forecasts are in the raw Parquet, not this export
  AND ($created_since IS NULL OR f.created_at >= CAST($created_since AS TIMESTAMP))
  AND ($category IS NULL OR q.category = $category)
-- run_id and lang last: two runs dated at the same time, and a forecast's translations, tie on the
-- rest, and a limit or a plan's cap must cut the same rows whatever order the raw parts come in.
ORDER BY f.created_at, f.question_id, f.model, f.mode, f.run_id, f.lang
