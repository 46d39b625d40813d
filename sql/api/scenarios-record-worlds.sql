-- The pathway distributions (worlds, most likely first) of the records of the scenarios with
-- scenario_id in [$first, $last]; $latest_only: only each scenario's latest record.
-- Parameters: $first VARCHAR, $last VARCHAR, $latest_only BOOLEAN.
SELECT w.*
FROM scenario_record_worlds AS w
JOIN scenarios AS s USING (scenario_id)
WHERE w.scenario_id BETWEEN $first AND $last
  AND (NOT $latest_only OR w.run_id = s.latest_run_id)
ORDER BY w.scenario_id, w.run_id, w.rank;
