-- The archived records with their scores of the scenarios with scenario_id in [$first, $last],
-- newest first; $latest_only: only each scenario's latest record (scenarios.latest_run_id).
-- Parameters: $first VARCHAR, $last VARCHAR, $latest_only BOOLEAN.
SELECT r.*
FROM scenario_record_scores AS r
JOIN scenarios AS s USING (scenario_id)
WHERE r.scenario_id BETWEEN $first AND $last
  AND (NOT $latest_only OR r.run_id = s.latest_run_id)
ORDER BY r.scenario_id, r.as_of DESC, r.run_id DESC;
