-- Export of the scenarios' archived records (issue 13): one row per record known at the snapshot's
-- as_of (scenario_records, sql/derive/99_scenario_2_records.sql) with its scores
-- (scenario_record_scores), by scenario_id, then as_of and run_id: a scenario's record history
-- oldest first. The two tables have the same rows (one per record); the join never drops or
-- repeats one. A whole-file export (the ORDER BY sorts over the join: api/export/tables.ts).
-- BOUND parameters:
--   $created_since VARCHAR|NULL  UTC timestamp: records with as_of (the run's as-of time, when the
--                                record was archived) >= it
--   $category VARCHAR|NULL       records with a component in this category: the components the
--                                record archived (a retired scenario's records too, and a record of
--                                components since replaced by its own), by the questions' categories
--                                in this snapshot. (It read the scenarios defined now: a retired
--                                scenario's records were never in a category; outside test.)
SELECT d.scenario_id, d.run_id, d.as_of, d.title, d.components, d.content_hash, d.n_models, d.methods,
       d.n_components, d.n_worlds, d.top_world, d.top_probability,
       s.n_resolved, s.resolved_pattern, s.complete, s.realized_world, s.realized_probability,
       s.log_score, s.brier, s.component_brier, s.consistent_mass, s.partial_log_score,
       d.probabilities, d.disagreement_sd, d.marginals
FROM scenario_records AS d
JOIN scenario_record_scores AS s USING (scenario_id, run_id)
WHERE ($created_since IS NULL OR d.as_of >= CAST($created_since AS TIMESTAMP))
  AND ($category IS NULL
       OR d.components IN (
         -- (the few distinct component lists, each question looked up once)
         SELECT c.components
         FROM (SELECT components, unnest(string_split(components, ',')) AS question_id
               FROM (SELECT DISTINCT components FROM scenario_records)) AS c
         JOIN questions AS q USING (question_id)
         WHERE q.category = $category))
ORDER BY d.scenario_id, d.as_of, d.run_id
