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
-- A view, read once by 99_scenario_1_joint.sql: copying the conditionals into a table first cost
-- more than reading them.

CREATE TEMP TABLE IF NOT EXISTS _scenario_conditionals
  (scenario_id VARCHAR, model VARCHAR, component_ord INTEGER, condition VARCHAR, probability DOUBLE);

CREATE OR REPLACE TEMP VIEW _scenario_conditionals_stored AS
SELECT split_part(f.condition, ':', 1) AS scenario_id,
       f.model,
       TRY_CAST(split_part(f.condition, ':', 2) AS INTEGER) AS component_ord,
       f.question_id,
       split_part(f.condition, ':', 3) AS condition,
       arg_max(f.probability, (f.created_at, f.run_id)) AS probability,
       -- the k written with a leading zero ('05'): another row may name the same component
       starts_with(split_part(f.condition, ':', 2), '0') AS padded
FROM raw_forecasts AS f
WHERE f.condition IS NOT NULL
  AND f.created_at <= (SELECT as_of FROM run_params)
  AND f.probability IS NOT NULL
  AND f.translation_of IS NULL
  AND regexp_full_match(f.condition, '[a-z0-9][a-z0-9-]{1,62}:[0-9]+:[01]*')
GROUP BY f.model, f.condition, f.question_id;
