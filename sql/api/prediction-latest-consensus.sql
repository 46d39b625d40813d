-- The latest consensus (by created_at) of one question in each mode.
-- Parameters: $question_id VARCHAR.
SELECT unnest(arg_max(c, c.created_at))
FROM consensus AS c
WHERE c.question_id = $question_id
GROUP BY c.mode;
