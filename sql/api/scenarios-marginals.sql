-- The component distributions implied by the current joints of one scenario, with the direct
-- forecasts and the coherence gap: the consensus (model NULL) then each model, in pathway order.
-- Parameters: $scenario_id VARCHAR.
SELECT m.*
FROM scenario_marginals AS m
WHERE m.scenario_id = $scenario_id
ORDER BY m.model NULLS FIRST, m.ord;
