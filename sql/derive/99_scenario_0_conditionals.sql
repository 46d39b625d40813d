-- 99_scenario_0_conditionals: the conditional forecasts the models gave (issue 13), the
-- _scenario_conditionals_stored input of 99_scenario_1_joint.sql (read there beside the
-- _scenario_conditionals the stage was given).
--
-- A scenario's conditional forecast is a raw `forecasts` row whose `condition` is
-- `<scenario_id>:<k>:<outcomes>` (pipeline/scenarios/conditional-tasks.ts): P(component k YES | the
-- earlier components resolved as `outcomes`, one digit each in pathway order). The view lists every
-- such forecast created at or before as_of (its first language only: translations repeat the
-- answer), with the question it was asked about (`question_id`: the component k of the definition
-- it was asked under); 99_scenario_1_joint.sql keeps, per (scenario, model, k, outcomes), the latest
-- of those asked about the question that is component k now. A condition whose scenario or
-- component no longer matches the definitions is ignored there (wrong length, k out of range, or
-- component k is now another question: a curator replaced or reordered components).
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

-- The runs whose archived record of a scenario lists other components than its definition now
-- (`components`, the record's, and `now_components`, in pathway order; the rows of one record
-- agree): only their conditionals need the check above. Records list few distinct component
-- lists (a definition seldom changes), so those are compared once each, and only the records of
-- a list that differs (usually none) are read again, per run: the view below looks every
-- conditional up in this small table. (The view once grouped the archived records of every run
-- that asked by run and joined every conditional to them: DuckDB built that join's hash table on
-- the conditionals, and it cost more than the rest of the view.)
CREATE OR REPLACE TEMP TABLE _scenario_asked_elsewhere AS
WITH now AS (
  -- (sorted after grouping: the ordered aggregate list(question_id ORDER BY ord) cost 2 of the
  -- statement's 11 ms single-threaded on issue 13's bench)
  SELECT scenario_id, list_transform(list_sort(list({'k': ord, 'v': question_id})), lambda e: e.v) AS components
  FROM _scenario_components_def
  GROUP BY scenario_id
),
archived AS (
  SELECT scenario_id, run_id, components FROM raw_scenario_archive
  UNION ALL
  SELECT scenario_id, run_id, components FROM raw_scenario_records
),
moved AS (
  SELECT d.scenario_id, d.components, string_split(d.components, ',') AS archived_components, n.components AS now_components
  -- (a record without components is not known to differ)
  FROM (SELECT DISTINCT scenario_id, components FROM archived WHERE components IS NOT NULL) AS d
  JOIN now AS n USING (scenario_id)
  WHERE string_split(d.components, ',') IS DISTINCT FROM n.components
)
SELECT a.scenario_id, a.run_id, any_value(m.archived_components) AS components, any_value(m.now_components) AS now_components
FROM archived AS a
JOIN moved AS m USING (scenario_id, components)
GROUP BY a.scenario_id, a.run_id;

CREATE OR REPLACE TEMP VIEW _scenario_conditionals_stored AS
WITH asked AS (
  -- the condition split once (`part`: scenario id, k, outcomes), its form checked by one regexp
  -- (split_part per field, three or four times a row, cost 7 of the view's 27 ms single-threaded
  -- on issue 13's bench, 120,000 conditionals; checking each field's characters with ltrim cost
  -- more than the regexp)
  SELECT string_split(f.condition, ':') AS part,
         f.model, f.question_id, f.run_id, f.created_at, f.probability
  FROM raw_forecasts AS f
  WHERE f.condition IS NOT NULL
    AND f.created_at <= (SELECT as_of FROM run_params)
    AND f.probability IS NOT NULL
    AND f.translation_of IS NULL
    AND regexp_full_match(f.condition, '[a-z0-9][a-z0-9-]{1,62}:[0-9]+:[01]*')
)
SELECT a.part[1] AS scenario_id, a.model, TRY_CAST(a.part[2] AS INTEGER) AS component_ord, a.question_id,
       a.part[3] AS condition, a.run_id, a.created_at, a.probability,
       -- the k written with a leading zero ('05'): another row may name the same component
       starts_with(a.part[2], '0') AS padded
FROM asked AS a
LEFT JOIN _scenario_asked_elsewhere AS u ON u.scenario_id = a.part[1] AND u.run_id = a.run_id
WHERE a.run_id = (SELECT run_id FROM _scenario_params)
   OR u.scenario_id IS NULL -- asked under the components now, or unknown: only its component k is checked (99_scenario_1_joint.sql)
   OR list_slice(u.components, 1, TRY_CAST(a.part[2] AS INTEGER)) = list_slice(u.now_components, 1, TRY_CAST(a.part[2] AS INTEGER));
