-- The component distributions (implied marginals, outcomes, Brier) of the records of the
-- scenarios with scenario_id in [$first, $last]; $latest_only: only each scenario's latest record.
-- Parameters: $first VARCHAR, $last VARCHAR, $latest_only BOOLEAN.
SELECT c.*
FROM scenario_record_components AS c
JOIN scenarios AS s USING (scenario_id)
WHERE c.scenario_id BETWEEN $first AND $last
  AND (NOT $latest_only OR c.run_id = s.latest_run_id)
ORDER BY c.scenario_id, c.run_id, c.ord;
