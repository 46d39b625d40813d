-- The archived records with their scores of the scenarios with scenario_id in [$first, $last],
-- newest first; $latest_only: only each scenario's latest record (scenarios.latest_run_id). The
-- record's own columns (hash, models, methods, most likely world) come from scenario_records,
-- its distributions are read by scenarios-record-worlds.sql and scenarios-record-components.sql.
-- Parameters: $first VARCHAR, $last VARCHAR, $latest_only BOOLEAN.
SELECT r.*, d.title, d.components, d.content_hash, d.n_models, d.methods, d.n_components, d.n_worlds,
       d.top_world, d.top_probability
FROM scenario_record_scores AS r
JOIN scenario_records AS d USING (scenario_id, run_id)
JOIN scenarios AS s USING (scenario_id)
WHERE r.scenario_id BETWEEN $first AND $last
  AND (NOT $latest_only OR r.run_id = s.latest_run_id)
ORDER BY r.scenario_id, r.as_of DESC, r.run_id DESC;
