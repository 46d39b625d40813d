-- 99_scenario_2_records: archived scenario records (issue 13) and their scores.
--
-- This run's record of every scenario (_scenario_record_new): the consensus joint of
-- 99_scenario_1_joint.sql, one row per world, with the components in pathway order, the run id
-- (_scenario_params.run_id, set by the pipeline's scenario stage; without one no record is made)
-- and content_hash = sha256 of the comma-separated components, '|', then one
-- 'world:probability;' per world in world order (numbers as DuckDB prints a DOUBLE). A record is
-- made only while some component is still open (not every component resolved at as_of): once the
-- worlds are settled there is nothing left to forecast. The pipeline appends it to the raw table
-- scenario_records after the derive (pipeline/scenarios/stage.ts); a record (scenario_id, run_id)
-- already stored is never recomputed, so a resumed run keeps its first record.
--
-- Scores (as of this run), every record known at as_of, over the components it archived (their
-- resolutions now: status resolved with outcome 0 or 1):
--   complete: every component resolved; realized_world = their outcomes in pathway order;
--   log_score = ln(P(realized world)) (P floored at 1e-12 so a world given 0 scores ln 1e-12);
--   brier = Σ over worlds (P(w) − [w = realized])², the multi-class Brier (0..2);
--   component_brier = mean over the resolved components of (implied marginal − outcome)², the
--     implied marginal = Σ P(w) over the worlds where the component is YES;
--   partial resolutions condition the remaining worlds: consistent_mass = P(the worlds that agree
--     with every resolved component), partial_log_score = ln of it (floored as above), and each
--     consistent world's conditional_probability = P(w) / consistent_mass (scenario_record_worlds).

CREATE OR REPLACE TABLE _scenario_record_new AS
WITH r AS (
  SELECT j.scenario_id, sp.run_id, rp.as_of, s.title,
         (SELECT string_agg(c.question_id, ',' ORDER BY c.ord) FROM _scenario_comp AS c WHERE c.scenario_id = j.scenario_id) AS components,
         j.world, j.probability, j.disagreement_sd, j.n_models, j.methods
  FROM _scenario_consensus_joint AS j
  JOIN _scenario_set AS s USING (scenario_id)
  JOIN _scenario_resolution AS res USING (scenario_id)
  CROSS JOIN _scenario_params AS sp
  CROSS JOIN run_params AS rp
  WHERE sp.run_id IS NOT NULL
    AND res.n_resolved < res.n_components
    AND NOT EXISTS (SELECT 1 FROM raw_scenario_records AS x WHERE x.scenario_id = j.scenario_id AND x.run_id = sp.run_id)
),
h AS (
  SELECT scenario_id,
         sha256(any_value(components) || '|' || string_agg(world || ':' || probability || ';', '' ORDER BY world)) AS content_hash
  FROM r
  GROUP BY scenario_id
)
SELECT r.scenario_id, r.run_id, r.as_of, r.title, r.components, r.world, r.probability, r.disagreement_sd,
       r.n_models, r.methods, h.content_hash
FROM r JOIN h USING (scenario_id)
ORDER BY r.scenario_id, r.world;

-- Every record known at as_of: the stored ones archived at or before it (a run dated in the past
-- does not see later records) and this run's.
CREATE OR REPLACE TEMP VIEW _scenario_record_all AS
SELECT scenario_id, run_id, as_of, title, components, world, probability, disagreement_sd, n_models, methods, content_hash
FROM raw_scenario_records
WHERE as_of <= (SELECT as_of FROM run_params)
UNION ALL
SELECT scenario_id, run_id, as_of, title, components, world, probability, disagreement_sd, n_models, methods, content_hash
FROM _scenario_record_new;

-- Published: every archived component of every record with its resolution now and its Brier.
CREATE OR REPLACE TABLE scenario_record_components AS
WITH rec AS (
  SELECT DISTINCT scenario_id, run_id, as_of, components FROM _scenario_record_all
),
comp AS (
  SELECT rec.scenario_id, rec.run_id, rec.as_of, o.ord::INTEGER AS ord, string_split(rec.components, ',')[o.ord] AS question_id
  FROM rec
  CROSS JOIN LATERAL (SELECT range AS ord FROM range(1, len(string_split(rec.components, ',')) + 1)) AS o
),
-- The implied marginals of a record in one pass over its worlds (a scenario has at most 6
-- components): m[k] = Σ P(w) over the worlds whose k-th digit is 1. One grouped pass instead of
-- joining every component to every world.
marginals AS (
  SELECT scenario_id, run_id,
         [sum(CASE WHEN substr(world, 1, 1) = '1' THEN probability ELSE 0 END),
          sum(CASE WHEN substr(world, 2, 1) = '1' THEN probability ELSE 0 END),
          sum(CASE WHEN substr(world, 3, 1) = '1' THEN probability ELSE 0 END),
          sum(CASE WHEN substr(world, 4, 1) = '1' THEN probability ELSE 0 END),
          sum(CASE WHEN substr(world, 5, 1) = '1' THEN probability ELSE 0 END),
          sum(CASE WHEN substr(world, 6, 1) = '1' THEN probability ELSE 0 END)] AS m
  FROM _scenario_record_all
  GROUP BY scenario_id, run_id
),
implied AS (
  SELECT c.scenario_id, c.run_id, c.ord, m.m[c.ord] AS implied
  FROM comp AS c
  JOIN marginals AS m USING (scenario_id, run_id)
)
SELECT c.scenario_id, c.run_id, c.as_of, c.ord, c.question_id, i.implied,
       q.status = 'resolved' AND q.outcome IN (0, 1) AS resolved,
       CASE WHEN q.status = 'resolved' AND q.outcome IN (0, 1) THEN q.outcome END AS outcome,
       CASE WHEN q.status = 'resolved' AND q.outcome IN (0, 1) THEN q.resolved_at END AS resolved_at,
       CASE WHEN q.status = 'resolved' AND q.outcome IN (0, 1) THEN (i.implied - q.outcome) * (i.implied - q.outcome) END AS brier
FROM comp AS c
JOIN implied AS i USING (scenario_id, run_id, ord)
LEFT JOIN questions AS q ON q.question_id = c.question_id
ORDER BY c.scenario_id, c.as_of, c.run_id, c.ord;

-- Each record's resolutions now as a pattern ('-' for an open component).
CREATE OR REPLACE TABLE _scenario_record_resolution AS
SELECT scenario_id, run_id,
       string_agg(CASE WHEN resolved THEN outcome::INTEGER::VARCHAR ELSE '-' END, '' ORDER BY ord) AS resolved_pattern,
       count(*)::INTEGER AS n_components,
       count(*) FILTER (WHERE resolved)::INTEGER AS n_resolved,
       avg(brier) AS component_brier
FROM scenario_record_components
GROUP BY scenario_id, run_id;

-- Published: every world of every record, conditioned on the resolutions so far (rows in no
-- particular order).
CREATE OR REPLACE TABLE scenario_record_worlds AS
WITH w AS (
  SELECT a.scenario_id, a.run_id, a.as_of, a.world, a.probability, a.disagreement_sd,
         a.world LIKE replace(r.resolved_pattern, '-', '_') AS consistent,
         r.n_resolved = r.n_components AND a.world = r.resolved_pattern AS realized
  FROM _scenario_record_all AS a
  JOIN _scenario_record_resolution AS r USING (scenario_id, run_id)
)
SELECT scenario_id, run_id, as_of, world, probability, disagreement_sd,
       row_number() OVER (PARTITION BY scenario_id, run_id ORDER BY probability DESC, world)::INTEGER AS rank,
       consistent, realized,
       CASE WHEN consistent AND sum(probability) FILTER (WHERE consistent) OVER p > 0
            THEN probability / sum(probability) FILTER (WHERE consistent) OVER p END AS conditional_probability
FROM w
WINDOW p AS (PARTITION BY scenario_id, run_id);
-- (no ORDER BY: sorting every world of every record cost more than the rest of the table; `rank`
-- orders a record's worlds, and the API sorts what it serves. Tried and slower on the scenarios
-- bench's 3.2 M world rows: the mass's window sharing the rank's sort as a framed sum (the window
-- operator 9.2 s of CPU against 3.0 s); one list of worlds per record, every figure from list
-- lambdas (the bench's whole scenario derive 8.7 s against 5.8 s))

-- Published: one row per record with its scores.
CREATE OR REPLACE TABLE scenario_record_scores AS
WITH s AS (
  -- The worlds' figures per record (no join back to the world rows: the record-level values
  -- repeat on every world row, so they are taken from _scenario_record_all per record below).
  SELECT w.scenario_id, w.run_id,
         count(*)::INTEGER AS n_worlds,
         arg_min(w.world, w.rank) AS top_world,
         max(w.probability) AS top_probability,
         sum(w.probability) FILTER (WHERE w.consistent) AS consistent_mass,
         sum(w.probability) FILTER (WHERE w.realized) AS realized_probability,
         sum((w.probability - CASE WHEN w.realized THEN 1 ELSE 0 END) ^ 2) AS brier_all
  FROM scenario_record_worlds AS w
  GROUP BY w.scenario_id, w.run_id
),
a AS (
  SELECT scenario_id, run_id, any_value(as_of) AS as_of, any_value(title) AS title, any_value(components) AS components,
         any_value(content_hash) AS content_hash, any_value(n_models) AS n_models, any_value(methods) AS methods
  FROM _scenario_record_all
  GROUP BY scenario_id, run_id
)
SELECT s.scenario_id, s.run_id, a.as_of, a.title, a.components, a.content_hash, a.n_models, a.methods,
       r.n_components, s.n_worlds, s.top_world, s.top_probability,
       r.n_resolved, r.resolved_pattern,
       r.n_resolved = r.n_components AS complete,
       CASE WHEN r.n_resolved = r.n_components THEN r.resolved_pattern END AS realized_world,
       CASE WHEN r.n_resolved = r.n_components THEN s.realized_probability END AS realized_probability,
       CASE WHEN r.n_resolved = r.n_components THEN ln(greatest(s.realized_probability, 1e-12)) END AS log_score,
       CASE WHEN r.n_resolved = r.n_components THEN s.brier_all END AS brier,
       r.component_brier,
       CASE WHEN r.n_resolved > 0 THEN s.consistent_mass END AS consistent_mass,
       CASE WHEN r.n_resolved > 0 THEN ln(greatest(s.consistent_mass, 1e-12)) END AS partial_log_score
FROM s
JOIN a USING (scenario_id, run_id)
JOIN _scenario_record_resolution AS r USING (scenario_id, run_id)
ORDER BY s.scenario_id, a.as_of, s.run_id;

-- Published: one row per scenario: its definition, the current consensus joint's most likely
-- world, its resolution status (resolved: every component resolved) and its record history.
CREATE OR REPLACE TABLE scenarios AS
WITH cur AS (
  SELECT scenario_id, arg_min(world, rank) AS top_world, max(probability) AS top_probability,
         any_value(n_models) AS n_models, any_value(method) AS methods
  FROM scenario_worlds
  WHERE source = 'consensus'
  GROUP BY scenario_id
),
rec AS (
  SELECT scenario_id, count(*)::INTEGER AS n_records, arg_max(run_id, (as_of, run_id)) AS latest_run_id,
         max(as_of) AS latest_record_as_of, min(as_of) AS first_record_as_of
  FROM scenario_record_scores
  GROUP BY scenario_id
)
SELECT s.scenario_id, s.title, s.description, s.n_components, (1 << s.n_components)::INTEGER AS n_worlds,
       r.n_resolved, r.resolved_pattern,
       CASE WHEN r.n_resolved = r.n_components THEN 'resolved' ELSE 'active' END AS status,
       coalesce(cur.n_models, 0)::INTEGER AS n_models, cur.methods, cur.top_world, cur.top_probability,
       coalesce(rec.n_records, 0)::INTEGER AS n_records, rec.latest_run_id, rec.latest_record_as_of, rec.first_record_as_of,
       rp.as_of
FROM _scenario_set AS s
JOIN _scenario_resolution AS r USING (scenario_id)
LEFT JOIN cur USING (scenario_id)
LEFT JOIN rec USING (scenario_id)
CROSS JOIN run_params AS rp
ORDER BY s.scenario_id;
