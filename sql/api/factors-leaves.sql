-- The leaves (questions) of the factors with factor_id in [$first, $last], by node then question.
-- Parameters: $first VARCHAR, $last VARCHAR.
SELECT l.* FROM factor_leaves AS l
WHERE l.factor_id BETWEEN $first AND $last
ORDER BY l.factor_id, l.node_id, l.question_id;
