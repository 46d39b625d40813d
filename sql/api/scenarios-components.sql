-- The components of the scenarios with scenario_id in [$first, $last] (a page of
-- GET /api/scenarios/, or one scenario with $first = $last), in scenario then pathway order, with
-- the consensus joint's implied marginal, the mean direct forecast and their gap.
-- Parameters: $first VARCHAR, $last VARCHAR.
SELECT c.*
FROM scenario_components AS c
WHERE c.scenario_id BETWEEN $first AND $last
ORDER BY c.scenario_id, c.ord;
