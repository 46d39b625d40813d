-- The latest consensus (by created_at; ties: the greater run_id, as the snapshot's) of one question
-- in each mode.
-- Parameters: $question_id VARCHAR.
SELECT unnest(arg_max(c, (c.created_at, c.run_id)))
FROM consensus AS c
WHERE c.question_id = $question_id
GROUP BY c.mode;
