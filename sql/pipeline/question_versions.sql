-- The latest stored version of each of the given questions: the base of the new version written
-- when a venue moved a tracked market's close time, and what an edited question file is compared with
-- (pipeline/sync.ts).
SELECT * FROM raw_questions
WHERE list_contains($ids, question_id)
QUALIFY row_number() OVER (PARTITION BY question_id ORDER BY ingested_at DESC) = 1;
