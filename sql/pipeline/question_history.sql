-- Every stored version of the given questions, oldest first: the latest is what a late
-- ForecastBench round is compared with, the ones before whether the versions stored after the round
-- are copies of older text (a sync's) or a later round's (pipeline/import/write-batch.ts catchUpVersions).
SELECT * FROM raw_questions
WHERE list_contains($ids, question_id)
ORDER BY question_id, ingested_at;
