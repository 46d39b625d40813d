-- 99_scenario_0_conditionals: the conditional forecasts the models gave (issue 13), the
-- _scenario_conditionals_stored input of 99_scenario_1_joint.sql (read there beside the
-- _scenario_conditionals the stage was given).
--
-- A scenario's conditional forecast is a raw `forecasts` row whose `condition` is
-- `<scenario_id>:<k>:<outcomes>` (pipeline/scenarios/conditional-tasks.ts): P(component k YES | the
-- earlier components resolved as `outcomes`, one digit each in pathway order). Per (scenario,
-- model, k, outcomes) the latest such forecast created at or before as_of (its first language
-- only: translations repeat the answer), with the question it was asked about (`question_id`: the
-- component k of the definition it was asked under). A condition whose scenario or component no
-- longer matches the definitions is ignored by 99_scenario_1_joint.sql (wrong length, k out of
-- range, or component k is now another question: a curator replaced or reordered components).
-- Asked under the same components: a conditional is about component k given the outcomes of
-- components 1..k-1 of the definition it was asked under, so it counts only while the definition's
-- first k components are those questions still, in that order (this run's own conditionals were
-- asked under the current definitions; an earlier run's components are its archived record's,
-- 99_scenario_2_records.sql, whose `components` it wrote from the definitions it asked under). QA
-- review: after a curator swapped components 1 and 2, P(c3 | c1, c2) was read as P(c3 | c2, c1),
-- as the joint's constraints. A run with no archived record of the scenario (another run archived
-- its as_of) is not known to have asked under other components: only its component k is checked.
-- A view, read once by 99_scenario_1_joint.sql: copying the conditionals into a table first cost
-- more than reading them.

CREATE TEMP TABLE IF NOT EXISTS _scenario_conditionals
  (scenario_id VARCHAR, model VARCHAR, component_ord INTEGER, condition VARCHAR, probability DOUBLE);
CREATE TEMP TABLE IF NOT EXISTS _scenario_components_def (scenario_id VARCHAR, ord INTEGER, question_id VARCHAR, label VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS _scenario_params (run_id VARCHAR, ipf_sweeps INTEGER);

CREATE OR REPLACE TEMP VIEW _scenario_conditionals_stored AS
WITH asked AS (
  SELECT split_part(f.condition, ':', 1) AS scenario_id,
         f.model,
         TRY_CAST(split_part(f.condition, ':', 2) AS INTEGER) AS component_ord,
         f.question_id,
         split_part(f.condition, ':', 3) AS condition,
         f.run_id, f.created_at, f.probability,
         -- the k written with a leading zero ('05'): another row may name the same component
         starts_with(split_part(f.condition, ':', 2), '0') AS padded
  FROM raw_forecasts AS f
  WHERE f.condition IS NOT NULL
    AND f.created_at <= (SELECT as_of FROM run_params)
    AND f.probability IS NOT NULL
    AND f.translation_of IS NULL
    AND regexp_full_match(f.condition, '[a-z0-9][a-z0-9-]{1,62}:[0-9]+:[01]*')
),
-- the components (pathway order) each run archived a scenario with: those it asked under (only
-- the records of the runs that asked: the archive holds a record per scenario and run)
asked_under AS (
  SELECT r.scenario_id, r.run_id, any_value(string_split(r.components, ',')) AS components
  FROM (SELECT scenario_id, run_id, components FROM raw_scenario_archive
        UNION ALL
        SELECT scenario_id, run_id, components FROM raw_scenario_records) AS r
  SEMI JOIN (SELECT DISTINCT scenario_id, run_id FROM asked) AS k USING (scenario_id, run_id)
  GROUP BY r.scenario_id, r.run_id
),
now AS (
  SELECT scenario_id, list(question_id ORDER BY ord) AS components
  FROM _scenario_components_def
  GROUP BY scenario_id
)
SELECT a.scenario_id, a.model, a.component_ord, a.question_id, a.condition,
       arg_max(a.probability, (a.created_at, a.run_id)) AS probability,
       a.padded
FROM asked AS a
JOIN now AS n ON n.scenario_id = a.scenario_id
LEFT JOIN asked_under AS u ON u.scenario_id = a.scenario_id AND u.run_id = a.run_id
WHERE a.run_id = (SELECT run_id FROM _scenario_params)
   OR u.components IS NULL -- unknown: only its component k is checked (99_scenario_1_joint.sql)
   OR list_slice(u.components, 1, a.component_ord) = list_slice(n.components, 1, a.component_ord)
GROUP BY a.scenario_id, a.model, a.component_ord, a.question_id, a.condition, a.padded;
