-- The current joint of one scenario (GET /api/scenarios/{id}/): the consensus's worlds (model
-- NULL) then each model's, most likely first. Parameters: $scenario_id VARCHAR.
SELECT w.*
FROM scenario_worlds AS w
WHERE w.scenario_id = $scenario_id
ORDER BY w.model NULLS FIRST, w.rank;
