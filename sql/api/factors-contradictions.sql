-- GET /api/factors/health/: the contradictions among linked leaves, worst first within a factor.
SELECT c.* FROM factor_contradictions AS c ORDER BY c.factor_id, c.violation DESC, c.question_a, c.question_b;
