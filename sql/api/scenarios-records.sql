-- The archived records of the scenarios with scenario_id in [$first, $last], newest first, each
-- with its scores (scenario_record_scores), its own columns (scenario_records) and its two
-- distributions, both read from the record's lists in this one pass:
--   pathway_worlds: every world, most likely first ({world, probability, disagreement_sd, rank,
--     consistent, conditional_probability}): world i of the lists is the world whose digits read
--     as a binary number give i; rank 1 = the most likely (on probabilities rounded to 9
--     decimals, ties by world); consistent = agrees
--     with the components resolved as of the snapshot (resolved_pattern, '-' for an open one);
--     conditional_probability = its probability renormalized over the consistent worlds;
--   record_components: every component in pathway order ({ord, question_id, implied, outcome,
--     resolved_at, brier}): the question's resolution as of the snapshot (an outcome of 0 or 1
--     with status resolved) and brier = (implied − outcome)², the terms of component_brier.
-- $latest_only: only each scenario's latest record (scenarios.latest_run_id).
-- A page of a history (newest first, keyset (as_of, run_id) descending): $before_us/$before_run,
-- the previous page's oldest record (epoch µs of its as_of, its run id; NULL: from the newest),
-- and $per_scenario, at most that many records per scenario (NULL: all). key_us = epoch_us(as_of),
-- for the next cursor.
-- Parameters: $first VARCHAR, $last VARCHAR, $latest_only BOOLEAN, $before_us BIGINT|NULL,
-- $before_run VARCHAR|NULL, $per_scenario BIGINT|NULL.
WITH r AS (
  SELECT sc.*, epoch_us(sc.as_of) AS key_us, d.title, d.components, d.content_hash, d.n_models, d.methods, d.n_components, d.n_worlds,
         d.top_world, d.top_probability, d.probabilities, d.disagreement_sd, d.marginals
  FROM scenario_record_scores AS sc
  JOIN scenario_records AS d USING (scenario_id, run_id)
  JOIN scenarios AS s USING (scenario_id)
  WHERE sc.scenario_id BETWEEN $first AND $last
    AND (NOT $latest_only OR sc.run_id = s.latest_run_id)
    AND ($before_us IS NULL OR epoch_us(sc.as_of) < $before_us OR (epoch_us(sc.as_of) = $before_us AND sc.run_id < $before_run))
  QUALIFY $per_scenario IS NULL
       OR row_number() OVER (PARTITION BY sc.scenario_id ORDER BY sc.as_of DESC, sc.run_id DESC) <= $per_scenario
),
w AS (
  SELECT scenario_id, run_id, n_components, resolved_pattern,
         unnest(range(len(probabilities)))::INTEGER AS world_ix,
         unnest(probabilities) AS probability,
         unnest(disagreement_sd) AS disagreement_sd
  FROM r
),
k AS (
  SELECT *, lpad(bin(world_ix), n_components, '0') LIKE replace(resolved_pattern, '-', '_') AS consistent
  FROM w
),
ranked AS (
  SELECT scenario_id, run_id, lpad(bin(world_ix), n_components, '0') AS world, probability, disagreement_sd, consistent,
         -- probabilities rounded to 9 decimals, as 99_scenario_1_joint.sql's _rank_key: a tie's two
         -- products may differ in their last bit, and ties go by world
         row_number() OVER (PARTITION BY scenario_id, run_id ORDER BY round(probability, 9) DESC, world_ix)::INTEGER AS rank,
         CASE WHEN consistent AND sum(probability) FILTER (WHERE consistent) OVER p > 0
              THEN probability / sum(probability) FILTER (WHERE consistent) OVER p END AS conditional_probability
  FROM k
  WINDOW p AS (PARTITION BY scenario_id, run_id)
),
pathway AS (
  SELECT scenario_id, run_id,
         list({'world': world, 'probability': probability, 'disagreement_sd': disagreement_sd, 'rank': rank,
               'consistent': consistent, 'conditional_probability': conditional_probability} ORDER BY rank) AS pathway_worlds
  FROM ranked
  GROUP BY scenario_id, run_id
),
c AS (
  SELECT scenario_id, run_id,
         unnest(range(1, len(marginals) + 1))::INTEGER AS ord,
         unnest(string_split(components, ',')) AS question_id,
         unnest(marginals) AS implied
  FROM r
),
resolved AS (
  SELECT c.*, CASE WHEN q.status = 'resolved' AND q.outcome IN (0, 1) THEN q.outcome END AS outcome,
         CASE WHEN q.status = 'resolved' AND q.outcome IN (0, 1) THEN q.resolved_at END AS resolved_at
  FROM c
  LEFT JOIN questions AS q ON q.question_id = c.question_id
),
comps AS (
  SELECT scenario_id, run_id,
         list({'ord': ord, 'question_id': question_id, 'implied': implied, 'outcome': outcome, 'resolved_at': resolved_at,
               'brier': (implied - outcome) * (implied - outcome)} ORDER BY ord) AS record_components
  FROM resolved
  GROUP BY scenario_id, run_id
)
SELECT r.* EXCLUDE (probabilities, disagreement_sd, marginals), p.pathway_worlds, c.record_components
FROM r
JOIN pathway AS p USING (scenario_id, run_id)
JOIN comps AS c USING (scenario_id, run_id)
ORDER BY r.scenario_id, r.as_of DESC, r.run_id DESC;
