-- Every member of every vintage of one thesis (GET /api/clusters/{id}/), newest vintage first.
-- Parameters: $thesis_id VARCHAR.
SELECT m.*
FROM thesis_vintage_members AS m
WHERE m.thesis_id = $thesis_id
ORDER BY m.as_of DESC, m.run_id DESC, m.question_id;
