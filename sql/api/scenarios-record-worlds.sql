-- The pathway distributions (worlds, most likely first) of the records of the scenarios with
-- scenario_id in [$first, $last]; $latest_only: only each scenario's latest record. A record
-- stores its worlds as a list in world order (scenario_records.probabilities: world i, the
-- world's digits read as a binary number, at index i + 1); they are listed here, each with its
-- rank (1 = the most likely, ties by world), whether it agrees with the components resolved as
-- of the snapshot (scenario_record_scores.resolved_pattern, '-' for an open component), whether
-- it is the realized world, and its probability given those resolutions.
-- Parameters: $first VARCHAR, $last VARCHAR, $latest_only BOOLEAN.
WITH r AS (
  SELECT d.scenario_id, d.run_id, d.as_of, d.n_components, d.probabilities, d.disagreement_sd,
         sc.resolved_pattern, sc.complete
  FROM scenario_records AS d
  JOIN scenario_record_scores AS sc USING (scenario_id, run_id)
  JOIN scenarios AS s USING (scenario_id)
  WHERE d.scenario_id BETWEEN $first AND $last
    AND (NOT $latest_only OR d.run_id = s.latest_run_id)
),
w AS (
  SELECT scenario_id, run_id, as_of, n_components, resolved_pattern, complete,
         unnest(range(len(probabilities)))::INTEGER AS world_ix,
         unnest(probabilities) AS probability,
         unnest(disagreement_sd) AS disagreement_sd
  FROM r
),
c AS (
  SELECT *, lpad(bin(world_ix), n_components, '0') AS world
  FROM w
),
k AS (
  SELECT *, world LIKE replace(resolved_pattern, '-', '_') AS consistent
  FROM c
)
SELECT scenario_id, run_id, as_of, world, probability, disagreement_sd,
       row_number() OVER (PARTITION BY scenario_id, run_id ORDER BY probability DESC, world)::INTEGER AS rank,
       consistent,
       complete AND world = resolved_pattern AS realized,
       CASE WHEN consistent AND sum(probability) FILTER (WHERE consistent) OVER p > 0
            THEN probability / sum(probability) FILTER (WHERE consistent) OVER p END AS conditional_probability
FROM k
WINDOW p AS (PARTITION BY scenario_id, run_id)
ORDER BY scenario_id, run_id, rank;
