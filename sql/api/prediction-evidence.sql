-- The evidence one question's latest forecasts cite (evidence_used), newest publication first.
-- Parameters: $question_id VARCHAR.
SELECT evidence_id, title, url, published_at, retrieved_at, snippet, source_slug, source_name,
       source_kind, n_forecasts, modes
FROM evidence_used
WHERE question_id = $question_id
ORDER BY published_at DESC NULLS LAST, evidence_id;
