-- The recorded lifecycle of one question, in order (`lifecycle.seq`).
-- Parameters: $question_id VARCHAR.
SELECT seq, state, "at", reason
FROM lifecycle
WHERE question_id = $question_id
ORDER BY seq;
