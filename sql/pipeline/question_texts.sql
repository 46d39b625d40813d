-- Every stored version's text of the given questions, oldest first: whether the versions stored
-- after a ForecastBench round imported late are copies of older text (a sync's) or a later round's
-- (pipeline/import/write-batch.ts catchUpVersions).
SELECT question_id, ingested_at, title, description, resolution_criteria, url
FROM raw_questions
WHERE list_contains($ids, question_id)
ORDER BY question_id, ingested_at;
