-- The component distributions (implied marginals, outcomes, Brier) of the records of the
-- scenarios with scenario_id in [$first, $last]; $latest_only: only each scenario's latest record.
-- A record stores its components (question ids in pathway order) and their implied marginals as
-- lists (scenario_records); each component's resolution is the question's as of the snapshot (an
-- outcome of 0 or 1 with status resolved), and brier = (implied − outcome)² once resolved, the
-- terms of scenario_record_scores.component_brier.
-- Parameters: $first VARCHAR, $last VARCHAR, $latest_only BOOLEAN.
WITH r AS (
  SELECT d.scenario_id, d.run_id, d.as_of, d.components, d.marginals
  FROM scenario_records AS d
  JOIN scenarios AS s USING (scenario_id)
  WHERE d.scenario_id BETWEEN $first AND $last
    AND (NOT $latest_only OR d.run_id = s.latest_run_id)
),
c AS (
  SELECT scenario_id, run_id, as_of,
         unnest(range(1, len(marginals) + 1))::INTEGER AS ord,
         unnest(string_split(components, ',')) AS question_id,
         unnest(marginals) AS implied
  FROM r
)
SELECT c.scenario_id, c.run_id, c.as_of, c.ord, c.question_id, c.implied,
       coalesce(q.status = 'resolved' AND q.outcome IN (0, 1), false) AS resolved,
       CASE WHEN q.status = 'resolved' AND q.outcome IN (0, 1) THEN q.outcome END AS outcome,
       CASE WHEN q.status = 'resolved' AND q.outcome IN (0, 1) THEN q.resolved_at END AS resolved_at,
       CASE WHEN q.status = 'resolved' AND q.outcome IN (0, 1) THEN (c.implied - q.outcome) * (c.implied - q.outcome) END AS brier
FROM c
LEFT JOIN questions AS q ON q.question_id = c.question_id
ORDER BY c.scenario_id, c.run_id, c.ord;
