-- One scenario (GET /api/scenarios/{id}/). Parameters: $scenario_id VARCHAR.
SELECT s.* FROM scenarios AS s WHERE s.scenario_id = $scenario_id;
