-- The members of the theses with thesis_id in [$first, $last] (a page of GET /api/clusters/, or one
-- thesis with $first = $last), in thesis_id then question_id order.
-- Parameters: $first VARCHAR, $last VARCHAR.
SELECT m.*
FROM thesis_members AS m
WHERE m.thesis_id BETWEEN $first AND $last
ORDER BY m.thesis_id, m.question_id;
