-- The taxonomy history of one question, oldest first (GET /api/taxonomy/history/{question_id}/).
-- Parameters: $question_id VARCHAR.
SELECT seq, since, change, category, domain, tags, previous_category, previous_domain, previous_tags
FROM taxonomy_history
WHERE question_id = $question_id
ORDER BY seq;
