-- 99_scenario_2_records: archived scenario records (issue 13) and their scores.
--
-- A record is one row (raw table scenario_archive, pipeline/warehouse/tables.ts): the consensus
-- joint of 99_scenario_1_joint.sql as lists in world order (world i, 0-based, is the world whose
-- digits, one per component in pathway order, read as a binary number give i: index i + 1 of
-- `probabilities` and `disagreement_sd`), the component distribution (`marginals`: the implied
-- P(YES) of each component in pathway order), the components (question ids in pathway order,
-- comma-separated), the run id (_scenario_params.run_id, set by the pipeline's scenario stage;
-- without one no record is made) and content_hash = sha256 of the components, '|', then one
-- 'world:probability;' per world in world order (numbers as DuckDB prints a DOUBLE). A record is
-- made only while some component is still open (neither resolved nor annulled at as_of): once the
-- worlds are settled there is nothing left to forecast. The pipeline appends this run's records
-- (_scenario_record_new) to scenario_archive after the derive (pipeline/scenarios/stage.ts); a
-- record (scenario_id, run_id) already stored is never recomputed, so a resumed run keeps its
-- first record, and a scenario with a record at this run's as_of already (another run dated at the
-- same time: the upgrade's rescore) gets no second one. Records of the first format (raw scenario_records, one row per world) are folded
-- into the same shape, so every record ever archived is scored.
--
-- Scores (as of this run), every record known at as_of, over the components it archived (their
-- resolutions now: status resolved with outcome 0 or 1):
--   complete: every component resolved; realized_world = their outcomes in pathway order;
--   log_score = ln(P(realized world)) (P floored at 1e-12 so a world given 0 scores ln 1e-12);
--   brier = Σ over worlds (P(w) − [w = realized])² = Σ P(w)² − 2·P(realized) + 1, the multi-class
--     Brier (0..2);
--   component_briers = per component (marginal − outcome)², null while it is open;
--     component_brier = their mean over the resolved components;
--   partial resolutions condition the remaining worlds: consistent_mass = P(the worlds that agree
--     with every resolved component), partial_log_score = ln of it (floored as above); a world's
--     probability given the resolutions is P(w) / consistent_mass (the API lists them).
-- Every figure is a list operation on the record's row (an element by index, a sum over its
-- consistent worlds picked by the resolution's bit sets), so scoring costs one pass over the
-- records, not over their worlds.

CREATE OR REPLACE TABLE _scenario_record_new AS
WITH due AS (
  -- the scenarios that get a record this run (the others cost nothing below)
  SELECT res.scenario_id, sp.run_id, rp.as_of
  FROM _scenario_resolution AS res
  CROSS JOIN _scenario_params AS sp
  CROSS JOIN run_params AS rp
  WHERE sp.run_id IS NOT NULL
    AND res.n_open > 0 -- a component still open (neither resolved nor annulled)
    -- one record per scenario and time: a run dated at a time already archived (the upgrade's
    -- rescore, dated at the replaced snapshot's as_of) archives no copy of it
    AND NOT EXISTS (SELECT 1 FROM raw_scenario_archive AS x WHERE x.scenario_id = res.scenario_id AND (x.run_id = sp.run_id OR x.as_of = rp.as_of))
    AND NOT EXISTS (SELECT 1 FROM raw_scenario_records AS x WHERE x.scenario_id = res.scenario_id AND (x.run_id = sp.run_id OR x.as_of = rp.as_of))
),
j AS (
  SELECT j.scenario_id, j.p AS probabilities, j.sd AS disagreement_sd, j.n_models, j.methods,
         array_to_string(list_transform(j.p, lambda x, i: lpad(bin(i - 1), s.n_components, '0') || ':' || x || ';'), '') AS hashed_worlds
  FROM _scenario_consensus_joint AS j
  JOIN _scenario_set AS s USING (scenario_id)
  WHERE j.scenario_id IN (SELECT scenario_id FROM due)
),
c AS (
  SELECT scenario_id, string_agg(question_id, ',' ORDER BY ord) AS components
  FROM _scenario_comp
  WHERE scenario_id IN (SELECT scenario_id FROM due)
  GROUP BY scenario_id
)
SELECT j.scenario_id, due.run_id, due.as_of, s.title, c.components, j.probabilities, j.disagreement_sd,
       _implied_marginals_masked(j.probabilities, mk.masks) AS marginals,
       j.n_models, j.methods, sha256(c.components || '|' || j.hashed_worlds) AS content_hash
FROM due
JOIN j USING (scenario_id)
JOIN _scenario_set AS s USING (scenario_id)
JOIN _scenario_masks AS mk USING (n_components)
JOIN c USING (scenario_id)
ORDER BY j.scenario_id;

-- Every record known at as_of: the stored ones archived at or before it (a run dated in the past
-- does not see later records), those of the first format folded into one row each (world strings
-- sort in world order; the marginals as a new record's), and this run's (until they are stored).
-- A first-format record missing a world is left out (its worlds cannot be placed).
CREATE OR REPLACE TEMP VIEW _scenario_record_all AS
SELECT scenario_id, run_id, as_of, title, components, probabilities, disagreement_sd, marginals, n_models, methods, content_hash
FROM raw_scenario_archive
WHERE as_of <= (SELECT as_of FROM run_params)
UNION ALL
SELECT scenario_id, run_id, as_of, title, components, probabilities, disagreement_sd,
       _implied_marginals(probabilities, n_components), n_models, methods, content_hash
FROM (
  SELECT scenario_id, run_id, any_value(as_of) AS as_of, any_value(title) AS title, any_value(components) AS components,
         _by_key(list({'k': world, 'v': probability})) AS probabilities,
         _by_key(list({'k': world, 'v': disagreement_sd})) AS disagreement_sd,
         max(length(world))::INTEGER AS n_components,
         any_value(n_models) AS n_models, any_value(methods) AS methods, any_value(content_hash) AS content_hash
  FROM raw_scenario_records
  WHERE as_of <= (SELECT as_of FROM run_params)
  GROUP BY scenario_id, run_id
  HAVING count(DISTINCT world) = 1 << max(length(world))
     AND max(length(world)) = min(length(world))
     AND max(length(world)) = len(string_split(any_value(components), ','))
)
UNION ALL
SELECT scenario_id, run_id, as_of, title, components, probabilities, disagreement_sd, marginals, n_models, methods, content_hash
FROM _scenario_record_new AS n
WHERE NOT EXISTS (SELECT 1 FROM raw_scenario_archive AS x WHERE x.scenario_id = n.scenario_id AND x.run_id = n.run_id);
-- (The guard matters once the stage has appended this run's records to scenario_archive: the
-- published view scenario_records below is read again when the snapshot is written, and must
-- then find each record once.)

-- The resolutions now of every component list a record archived (records of a scenario share
-- one, so this is per scenario, not per record), by the same macros as _scenario_resolution for the
-- current definitions (99_scenario_1_joint.sql): the pattern ('-' for an open component), the outcomes o1..o6 in pathway order (null while
-- open), and the resolved components and their YES outcomes as bit sets over world_ix (the
-- realized world's index once complete; world w agrees with every resolution when
-- w & resolved_mask = resolved_bits).
CREATE OR REPLACE TABLE _scenario_record_resolution AS
WITH c AS (
  SELECT components, string_split(components, ',') AS ids
  FROM (SELECT DISTINCT components FROM _scenario_record_all)
),
comp AS (
  SELECT components, len(ids)::INTEGER AS n, unnest(range(1, len(ids) + 1))::INTEGER AS ord, unnest(ids) AS question_id
  FROM c
),
o AS (
  SELECT comp.components, comp.n, comp.ord,
         _resolution_outcome(q.status, q.outcome) AS outcome
  FROM comp
  LEFT JOIN questions AS q ON q.question_id = comp.question_id
),
g AS (
  SELECT components, any_value(n) AS n_components,
         count(outcome)::INTEGER AS n_resolved,
         _resolved_mask(outcome, ord, n) AS resolved_mask,
         _resolved_bits(outcome, ord, n) AS resolved_bits
  FROM o
  GROUP BY components
)
SELECT components, n_components, _resolved_pattern(resolved_mask, resolved_bits, n_components) AS resolved_pattern,
       n_resolved, n_resolved = n_components AS complete,
       -- (the outcomes one per column, read beside each record without gathering a list)
       _outcome_at(resolved_mask, resolved_bits, n_components, 1) AS o1, _outcome_at(resolved_mask, resolved_bits, n_components, 2) AS o2,
       _outcome_at(resolved_mask, resolved_bits, n_components, 3) AS o3, _outcome_at(resolved_mask, resolved_bits, n_components, 4) AS o4,
       _outcome_at(resolved_mask, resolved_bits, n_components, 5) AS o5, _outcome_at(resolved_mask, resolved_bits, n_components, 6) AS o6,
       CASE WHEN n_resolved = n_components THEN resolved_bits END AS realized_ix, resolved_mask, resolved_bits
FROM g;

-- Published: one row per archived record known at as_of with its scores (rows in no particular
-- order: sort by scenario_id, as_of, run_id). The record itself (its components, hash and
-- distributions) is in scenario_records. Each component's Brier is listed by the API
-- (sql/api/scenarios-records.sql) from the record's marginals and the outcomes: a list
-- column here made this table cost several times more than the scores.
CREATE OR REPLACE TABLE scenario_record_scores AS
SELECT scenario_id, run_id, as_of, n_resolved, resolved_pattern, complete,
       CASE WHEN complete THEN resolved_pattern END AS realized_world,
       realized_probability,
       -- (greatest() skips a null: the CASE keeps an incomplete record's log score null)
       CASE WHEN complete THEN ln(greatest(realized_probability, 1e-12)) END AS log_score,
       sum_sq - 2 * realized_probability + 1 AS brier,
       component_brier,
       consistent_mass,
       CASE WHEN n_resolved > 0 THEN ln(greatest(consistent_mass, 1e-12)) END AS partial_log_score
FROM (
  SELECT *,
         -- the probabilities · `consistent`, the 0/1 mask of the consistent worlds (the same
         -- products, p · 1.0 or p · 0.0, summed in world order, from the resolution's bit sets:
         -- gathering the mask list beside every record cost more than the sum); once complete,
         -- the mask has one 1 (the realized world), so the sum is that world's probability
         -- (+ 0.0: the sum of exact zeros and it is never −0), read directly when every probability
         -- is finite (sum_sq is: a NaN or ±inf elsewhere would make the sum NaN)
         CASE WHEN n_resolved = 0 THEN NULL
              WHEN complete AND isfinite(sum_sq) THEN realized_probability + 0.0
              ELSE list_sum(list_transform(probabilities, lambda x, i: x * CASE WHEN (i - 1) & resolved_mask = resolved_bits THEN 1.0 ELSE 0.0 END))
         END AS consistent_mass
  FROM (
    SELECT a.scenario_id, a.run_id, a.as_of, a.probabilities, r.resolved_mask, r.resolved_bits,
           r.n_resolved, r.resolved_pattern, r.complete,
           a.probabilities[r.realized_ix + 1] AS realized_probability,
           list_dot_product(a.probabilities, a.probabilities) AS sum_sq,
           -- the mean of (marginal − outcome)² over the resolved components (at most 6; an open
           -- component's outcome is null and adds nothing)
           (coalesce((a.marginals[1] - r.o1) ^ 2, 0) + coalesce((a.marginals[2] - r.o2) ^ 2, 0)
            + coalesce((a.marginals[3] - r.o3) ^ 2, 0) + coalesce((a.marginals[4] - r.o4) ^ 2, 0)
            + coalesce((a.marginals[5] - r.o5) ^ 2, 0) + coalesce((a.marginals[6] - r.o6) ^ 2, 0))
             / nullif(r.n_resolved, 0) AS component_brier
    FROM _scenario_record_all AS a
    JOIN _scenario_record_resolution AS r
      ON r.components = a.components
      -- A record whose lists do not fit its components (2^n probabilities and n marginals for n
      -- components: never written by the pipeline, but the raw files are open to other writers) is
      -- not scored, so it cannot stop the scoring of the others; it stays archived (scenario_records).
      -- (Checked in the join: a filter on the archive itself made DuckDB copy every record's lists.)
      AND len(a.probabilities) = 1 << r.n_components
      AND len(a.marginals) = r.n_components
  )
);

-- Published: every archived record known at as_of as it was archived (one row per record, the
-- rows of scenario_record_scores): its components, hash, models and methods, the consensus
-- joint's most likely world, and the distributions: probabilities and disagreement_sd in world
-- order, marginals in pathway order. A view, written to the snapshot when it is exported: the
-- records are already stored, and copying them into a table first would cost more than scoring
-- them.
CREATE OR REPLACE TEMP VIEW scenario_records AS
SELECT scenario_id, run_id, as_of, title, components, content_hash, n_models, methods,
       len(marginals)::INTEGER AS n_components, len(probabilities)::INTEGER AS n_worlds,
       lpad(bin(top_ix), len(marginals)::INTEGER, '0') AS top_world,
       probabilities[top_ix + 1] AS top_probability,
       probabilities, disagreement_sd, marginals
FROM (SELECT *, _top_world_ix(probabilities) AS top_ix FROM _scenario_record_all);

-- Published: one row per scenario: its definition, the current consensus joint's most likely
-- world, its resolution status and its record history. status: resolved (every component
-- resolved), annulled (nothing open, a component annulled: no world will ever be realized, and no
-- record is archived any more), else active (a component is open: runs still archive records).
CREATE OR REPLACE TABLE scenarios AS
WITH cur AS (
  -- the consensus joint's most likely world (scenario_worlds' rank 1: the largest probability
  -- rounded to 9 decimals, ties by the lowest world_ix, _top_world_ix), read from its list
  SELECT j.scenario_id, lpad(bin(j.top_ix), s.n_components, '0') AS top_world,
         j.p[j.top_ix + 1] AS top_probability, j.n_models, j.methods
  FROM (SELECT *, _top_world_ix(p) AS top_ix FROM _scenario_consensus_joint) AS j
  JOIN _scenario_set AS s USING (scenario_id)
),
rec AS (
  SELECT scenario_id, count(*)::INTEGER AS n_records, arg_max(run_id, (as_of, run_id)) AS latest_run_id,
         max(as_of) AS latest_record_as_of, min(as_of) AS first_record_as_of
  FROM scenario_record_scores
  GROUP BY scenario_id
)
SELECT s.scenario_id, s.title, s.description, s.n_components, (1 << s.n_components)::INTEGER AS n_worlds,
       r.n_resolved, r.resolved_pattern,
       CASE WHEN r.n_resolved = r.n_components THEN 'resolved'
            WHEN r.n_open = 0 THEN 'annulled'
            ELSE 'active' END AS status,
       coalesce(cur.n_models, 0)::INTEGER AS n_models, cur.methods, cur.top_world, cur.top_probability,
       coalesce(rec.n_records, 0)::INTEGER AS n_records, rec.latest_run_id, rec.latest_record_as_of, rec.first_record_as_of,
       rp.as_of
FROM _scenario_set AS s
JOIN _scenario_resolution AS r USING (scenario_id)
LEFT JOIN cur USING (scenario_id)
LEFT JOIN rec USING (scenario_id)
CROSS JOIN run_params AS rp
ORDER BY s.scenario_id;
