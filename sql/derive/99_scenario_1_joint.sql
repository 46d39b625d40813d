-- 99_scenario_1_joint: scenarios (issue 13), each model's joint distribution over the worlds of a
-- scenario, the consensus joint, the pathway and the component distributions.
--
-- Definitions: data/structure/scenarios/*.yaml, loaded by pipeline/scenarios/ into the temp tables
-- _scenario_defs (one row per scenario) and _scenario_components_def (its components, ord = 1..n
-- in pathway order; components not in this snapshot leave the scenario out). _scenario_params
-- holds the run id and the number of IPF sweeps.
--
-- Worlds: the 2^n outcomes of the n components, written as one digit per component in pathway
-- order ('10' = the first YES, the second NO); world_ix is that string read as a binary number.
--
-- Marginals: a model's direct forecast of a component is its latest forecast (created at or before
-- as_of, with a probability, one row per model: translations left out) of the question in the
-- question's headline mode, the first mode of run_params.headline_modes in which the question has
-- any forecast (the headline rule of 85_edges.sql, applied to resolved questions too: a scenario's
-- resolved components keep the forecasts made before they resolved).
--
-- Conditionals: _scenario_conditionals(scenario_id, model, component_ord, condition, probability)
-- = P(component k YES | earlier components as `condition`), condition a string of length k − 1 over
-- '1' (YES), '0' (NO) and '-' (either): '10' = the first YES and the second NO; '1-' = the first YES,
-- whatever the second. The stage creates it (with the conditionals a caller gave, none in a
-- pipeline run); the models' conditional forecasts stored in the warehouse (full conditions only)
-- are read beside it, from 99_scenario_0_conditionals.sql's view _scenario_conditionals_stored; rows with another length, other characters, k < 2,
-- k > n or a probability outside [0, 1] are ignored; duplicates are averaged.
--
-- The joint of a model, and `method`:
--  * chain_rule: the model gave every full conditional (no '-') of components 2..n and a direct
--    forecast of component 1: P(w) = P(c1 = w1) · Π_k P(ck = wk | w1..w(k−1)).
--  * max_entropy_ipf: some conditionals but not the full chain, and a direct forecast of every
--    component: the maximum-entropy joint with the direct marginals and the given conditionals, by
--    iterative proportional fitting in SQL (a recursive CTE, one sweep per step, the sweep a
--    list_reduce over the constraints): from the uniform joint, each projection is the exact
--    I-projection onto one constraint "P(ck = 1 | S) = p" (S: the worlds matching the condition; a
--    marginal is S = every world): worlds in S with ck = 1 are multiplied by e^(λ(1−p)), those with
--    ck = 0 by e^(−λp), all then renormalized, with λ = ln(y·p / (x·(1−p))), x = P(S, ck = 1),
--    y = P(S, ck = 0). Constraints are taken in turn (the marginals in pathway order, then the
--    conditionals by component and condition) until a sweep finds every constraint held within
--    1e-12, at most _scenario_params.ipf_sweeps sweeps. Cyclic I-projections onto linear
--    constraints converge to the I-projection of the uniform joint onto their intersection, which
--    is the maximum-entropy joint (Csiszár 1975); contradictory constraints have no such joint and
--    the sweep limit stops the cycling: the joint is then the last sweep's, in which only the
--    constraint fitted last holds exactly and the others (conditionals too) may be off, so it
--    depends on the constraint order and the sweep count (QA: conditionals off by up to 0.0064,
--    marginals by 0.133, after 200 sweeps); the coherence gap of the marginals shows the
--    contradiction. Targets are clipped to
--    [1e-9, 1 − 1e-9], but contradictory constraints can still drain some worlds sweep after
--    sweep until they underflow to exactly 0; λ is therefore taken as ln(y·t) − ln(x·(1 − t)) with
--    both terms floored at 1e-300 and bounded to [−700, 700] (e^700 is still finite), so an
--    emptied side makes its projection a bounded step instead of ln(0), and the joint stays finite
--    and sums to 1 (test/scenarios/ipf-drift.test.ts).
--  * independent: no conditionals, a direct forecast of every component: the maximum-entropy joint
--    with those marginals, which is their product.
-- A model with neither a direct forecast of every component nor the full chain has no joint.
--
-- Consensus: the mean of the joints of the models that have one, world by world, with the
-- population sd across those models (disagreement). Component distributions: the marginals implied
-- by a joint (sum of the worlds where the component is YES); coherence_gap = implied − the direct
-- forecast (consensus: the mean direct forecast of the models with a joint), zero up to rounding for
-- independent and IPF joints with consistent constraints, and the models' incoherence under the
-- chain rule.
--
-- Resolutions condition the worlds: a world is `consistent` when it agrees with every component
-- resolved (status resolved, outcome 0 or 1) at as_of; conditional_probability = its probability
-- renormalized over the consistent worlds (null for inconsistent worlds or when they have no mass).

CREATE TEMP TABLE IF NOT EXISTS _scenario_defs (scenario_id VARCHAR, title VARCHAR, description VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS _scenario_components_def (scenario_id VARCHAR, ord INTEGER, question_id VARCHAR, label VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS _scenario_conditionals
  (scenario_id VARCHAR, model VARCHAR, component_ord INTEGER, condition VARCHAR, probability DOUBLE);
CREATE TEMP TABLE IF NOT EXISTS _scenario_params (run_id VARCHAR, ipf_sweeps INTEGER);

-- Scenarios whose every component is a question of this snapshot.
CREATE OR REPLACE TABLE _scenario_set AS
SELECT d.scenario_id, d.title, d.description, count(*)::INTEGER AS n_components
FROM _scenario_defs AS d
JOIN _scenario_components_def AS c USING (scenario_id)
GROUP BY d.scenario_id, d.title, d.description
HAVING count(*) = count(*) FILTER (WHERE c.question_id IN (SELECT question_id FROM questions));

-- A component's resolution: its outcome once resolved (status resolved with outcome 0 or 1),
-- else NULL (open).
CREATE OR REPLACE TEMP MACRO _resolution_outcome(status, outcome) AS
  CASE WHEN status = 'resolved' AND outcome IN (0, 1) THEN outcome END;
-- A component list's resolution, aggregated over its components (outcome: _resolution_outcome,
-- ord: 1..n in pathway order), the same for the current definitions (_scenario_resolution) and
-- for the component list of every archived record (99_scenario_2_records.sql):
--   two bit sets over world_ix (component k is bit n − k): which components resolved, and which
--   of those resolved YES; world w agrees with every resolution when
--   w & resolved_mask = resolved_bits;
--   from them, the pattern: a digit per resolved component, '-' for an open one, and component
--   k's outcome (null while open or k > n). (The pattern was an ordered aggregate,
--   string_agg(... ORDER BY ord), as was the records' list of outcomes: sorting each group cost
--   more than the rest of both statements, 12 -> 9 and 7.6 -> 4.9 ms single-threaded on issue 13's
--   bench, 1,000 scenarios.)
CREATE OR REPLACE TEMP MACRO _resolved_mask(outcome, ord, n) AS
  coalesce(sum(1 << (n - ord)) FILTER (WHERE outcome IS NOT NULL), 0)::INTEGER;
CREATE OR REPLACE TEMP MACRO _resolved_bits(outcome, ord, n) AS
  coalesce(sum(1 << (n - ord)) FILTER (WHERE outcome = 1), 0)::INTEGER;
CREATE OR REPLACE TEMP MACRO _outcome_at(mask, bits, n, k) AS
  CASE WHEN k <= n AND (mask >> (n - k)) & 1 = 1 THEN ((bits >> (n - k)) & 1)::DOUBLE END;
CREATE OR REPLACE TEMP MACRO _resolved_pattern(mask, bits, n) AS
  array_to_string(list_transform(range(1, n + 1), lambda k: coalesce(_outcome_at(mask, bits, n, k)::INTEGER::VARCHAR, '-')), '');

-- Components with their resolution as of this run.
CREATE OR REPLACE TABLE _scenario_comp AS
SELECT c.scenario_id, c.ord, c.question_id, c.label, s.n_components,
       q.title, q.venue, q.url, q.category, q.status, q.outcome, q.resolved_at,
       _resolution_outcome(q.status, q.outcome) IS NOT NULL AS is_resolved
FROM _scenario_components_def AS c
JOIN _scenario_set AS s USING (scenario_id)
JOIN questions AS q ON q.question_id = c.question_id;

-- Each scenario's resolution (n_open: components neither resolved nor annulled), and `consistent`, a 0/1 mask over the worlds in world order (1: the
-- world agrees with every resolution).
CREATE OR REPLACE TABLE _scenario_resolution AS
SELECT scenario_id, _resolved_pattern(resolved_mask, resolved_bits, n_components) AS resolved_pattern,
       n_resolved, n_open, n_components, resolved_mask, resolved_bits,
       list_transform(range(1 << n_components), lambda i: CASE WHEN i & resolved_mask = resolved_bits THEN 1.0 ELSE 0.0 END) AS consistent
FROM (
  SELECT scenario_id,
         count(*) FILTER (WHERE is_resolved)::INTEGER AS n_resolved,
         -- components still to be settled: neither resolved nor annulled (an annulled one never
         -- resolves, so a scenario with one and the others resolved has nothing left open)
         count(*) FILTER (WHERE coalesce(status, '') NOT IN ('resolved', 'annulled'))::INTEGER AS n_open,
         any_value(n_components) AS n_components,
         _resolved_mask(_resolution_outcome(status, outcome), ord, n_components) AS resolved_mask,
         _resolved_bits(_resolution_outcome(status, outcome), ord, n_components) AS resolved_bits
  FROM _scenario_comp
  GROUP BY scenario_id
);

-- The world convention in one place (99_scenario_2_records.sql uses these too): component k of n
-- is bit n − k of world_ix (the first component the most significant digit).
CREATE OR REPLACE TEMP MACRO _world_has(w, n, k) AS (w >> (n - k)) & 1 = 1;
-- The heap index of a full conditional: component ord under the earlier components' outcomes
-- `condition` (its digits read as a binary number c) is k = 2^(ord−1) + c, the order the chain rule
-- reads them in; NULL for a condition that is not all digits 0 and 1.
CREATE OR REPLACE TEMP MACRO _heap_index(ord, condition) AS (1 << (ord - 1)) + TRY_CAST('0b' || condition AS INTEGER);
-- The values of a list of {k, v} structs in key order (sorting the aggregated list costs a
-- fraction of an ordered aggregate, list(v ORDER BY k)); it also fixes the order in which a list
-- is later summed or averaged, where a parallel aggregate's order varies from run to run.
CREATE OR REPLACE TEMP MACRO _by_key(pairs) AS list_transform(list_sort(pairs), lambda e: e.v);
-- The marginals a joint implies, in pathway order: P(component k YES) = the sum of p[w + 1] over
-- the worlds w where component k is YES, summed in world order (the same bits on every run).
CREATE OR REPLACE TEMP MACRO _implied_marginals(p, n) AS
  list_transform(range(1, n + 1), lambda k: list_sum(list_transform(p, lambda x, i: CASE WHEN _world_has(i - 1, n, k) THEN x ELSE 0 END)));
-- The same through the components' masks (_scenario_masks: masks[k][w + 1] = 1.0 where component
-- k is YES in world w, else 0.0): a dot product per component, the same sum in the same order
-- (the other worlds add exact zeros), without a lambda per component and world.
CREATE OR REPLACE TEMP MACRO _implied_marginals_masked(p, masks) AS
  list_transform(masks, lambda m: list_dot_product(p, m));
-- Ranks compare probabilities rounded to 9 decimals (as directions, tiers and bins round them,
-- sql/README.md), so that worlds of one probability are tied and ranked by world, as defined:
-- floating point gives the two products of a tie different last bits (P(c1) = 0.4,
-- P(c2 | NO) = 0.6, P(c2 | YES) = 0.1: P('01') = 0.6 · 0.6 = 0.36 and P('10') = 0.4 · 0.9 =
-- 0.36000000000000004), which ranked '10' first and named it the top world
-- (test/scenarios/rank-ties.test.ts). _top_world_ix: the 0-based index of a joint's rank-1 world,
-- the first position holding the largest rounded probability. (sql/api/scenarios-records.sql,
-- which ranks a record's worlds on the API's own connection, rounds the same way.)
CREATE OR REPLACE TEMP MACRO _rank_key(x) AS round(x, 9);
-- (Rounding keeps order, so the largest rounded probability is the largest one rounded: the list is
-- rounded once.)
CREATE OR REPLACE TEMP MACRO _top_world_ix(p) AS
  list_position(list_transform(p, lambda x: _rank_key(x)), _rank_key(list_max(p))) - 1;
-- (`worlds`: the worlds' digit strings, world w at index w + 1)
CREATE OR REPLACE TABLE _scenario_masks AS
SELECT n AS n_components,
       list_transform(range(1, n + 1), lambda k: list_transform(range(1 << n), lambda i: CASE WHEN _world_has(i, n, k) THEN 1.0 ELSE 0.0 END)) AS masks,
       list_transform(range(1 << n), lambda i: lpad(bin(i), n, '0')) AS worlds
FROM (SELECT DISTINCT n_components AS n FROM _scenario_set);

-- Each model's direct forecast of each component: its latest in the question's headline mode, the
-- first headline mode with any forecast (`h`). (One statement: the forecasts and the headline modes
-- were two tables of their own, 18 -> 15 ms single-threaded on issue 13's bench.)
CREATE OR REPLACE TABLE _scenario_direct AS
WITH f AS MATERIALIZED (
  SELECT f.question_id, f.model, f.mode, f.run_id, f.created_at, f.probability
  FROM raw_forecasts AS f
  WHERE f.question_id IN (SELECT question_id FROM _scenario_comp)
    AND f.created_at <= (SELECT as_of FROM run_params)
    AND f.probability IS NOT NULL
    AND f.translation_of IS NULL
    AND f.condition IS NULL -- direct forecasts only: conditionals come through _scenario_conditionals
),
h AS (
  SELECT f.question_id, arg_min(f.mode, list_position(rp.headline_modes, f.mode)) AS mode
  FROM f
  CROSS JOIN run_params AS rp
  WHERE list_position(rp.headline_modes, f.mode) IS NOT NULL
  GROUP BY f.question_id
)
SELECT scenario_id, ord, question_id, model, latest.probability AS probability, latest.run_id AS run_id, forecast_at, mode
FROM (
  SELECT c.scenario_id, c.ord, c.question_id, f.model,
         arg_max({'probability': f.probability, 'run_id': f.run_id}, (f.created_at, f.run_id)) AS latest,
         max(f.created_at) AS forecast_at,
         any_value(h.mode) AS mode
  FROM _scenario_comp AS c
  JOIN h ON h.question_id = c.question_id
  JOIN f ON f.question_id = c.question_id AND f.mode = h.mode
  GROUP BY c.scenario_id, c.ord, c.question_id, f.model
);

-- The conditional forecasts stored in the warehouse (99_scenario_0_conditionals.sql; none when
-- that file did not run).
CREATE TEMP VIEW IF NOT EXISTS _scenario_conditionals_stored AS
SELECT NULL::VARCHAR AS scenario_id, NULL::VARCHAR AS model, NULL::INTEGER AS component_ord,
       NULL::VARCHAR AS question_id, NULL::VARCHAR AS condition, NULL::VARCHAR AS run_id,
       NULL::TIMESTAMP AS created_at, NULL::DOUBLE AS probability, NULL::BOOLEAN AS padded
WHERE false;

-- Well-formed conditionals, duplicates averaged: one row per (scenario, model). A full condition
-- (no '-') names a world prefix c (its digits read as a binary number): those are `fulls`, a list
-- of {k, ord, v} in heap order, k = 2^(ord−1) + c (the order the chain rule reads them in,
-- 99_scenario_1_joint's `q` below); the others are `partials`, a list of {ord, condition, v};
-- n_cond counts both. Of the stored ones, each model's latest of each (scenario, k, outcomes)
-- counts (every run asks them again), its probability then checked (a latest one out of range is
-- not replaced by an earlier one); rows naming the same conditional with k written differently
-- (zero-padded) or given by the stage (_scenario_conditionals) are averaged.
-- Most (scenario, model) pairs have each heap index k once among their stored rows and no stage
-- row (always so on a run's own conditionals): the latest of each is then the row itself, so
-- those pairs (`single`) are grouped once, by (scenario, model), and their chain read from the
-- lists: a complete chain's indices are exactly 2 .. 2^n − 1, so its values are placed by index
-- (list_position) instead of sorted. Only the other pairs (`repeated`) are grouped per conditional
-- and searched for duplicates as before. On issue 13's bench (120,000 conditionals, no repeat)
-- this and the view's single split took the view and this statement from 88-91 to 56-58 ms
-- single-threaded (the per-conditional grouping and the sort of 4,000 lists of 30 were half of it;
-- list(... ORDER BY k) instead of the sort cost 2.5 times as much).
CREATE OR REPLACE TABLE _scenario_cond AS
WITH given AS (
  SELECT c.scenario_id, c.model, c.component_ord, c.condition, c.probability, s.n_components
  FROM _scenario_conditionals AS c
  JOIN _scenario_set AS s USING (scenario_id)
  WHERE regexp_full_match(c.condition, '[01-]*')
    AND c.component_ord BETWEEN 2 AND s.n_components
    AND length(c.condition) = c.component_ord - 1
),
-- (their conditions are all digits 0 and 1: 99_scenario_0_conditionals.sql), each asked about the
-- question that is component k now: one asked under an earlier definition whose component k was
-- another question (a component replaced or moved) is not an answer about this one
stored AS MATERIALIZED (
  SELECT st.scenario_id, st.model, st.component_ord, st.condition, st.padded, st.created_at, st.run_id, st.probability,
         c.n_components, _heap_index(st.component_ord, st.condition) AS k
  FROM _scenario_conditionals_stored AS st
  JOIN _scenario_comp AS c ON c.scenario_id = st.scenario_id AND c.ord = st.component_ord AND c.question_id = st.question_id
  WHERE st.component_ord >= 2
    AND length(st.condition) = st.component_ord - 1
),
-- per (scenario, model): the heap indices and probabilities of the rows in range, and whether
-- every row has its own k (bit k − 2 of a BIGINT, k < 64: at most 6 components; a UBIGINT bit k
-- was widened to HUGEINT, 4 ms more single-threaded on issue 13's bench)
pair AS (
  SELECT scenario_id, model, any_value(n_components) AS n_components,
         list(k) FILTER (WHERE probability BETWEEN 0 AND 1) AS ks,
         list(probability) FILTER (WHERE probability BETWEEN 0 AND 1) AS vs,
         max(k) < 64 AND count(*) = bit_count(bit_or(CASE WHEN k < 64 THEN 1::BIGINT << (k - 2) END)) AS single
  FROM stored
  GROUP BY scenario_id, model
),
repeated AS (
  SELECT scenario_id, model FROM pair WHERE NOT single
  UNION
  SELECT scenario_id, model FROM given
),
k AS (
  SELECT scenario_id, model, component_ord, condition, probability, true AS may_repeat, n_components
  FROM given
  UNION ALL
  SELECT st.scenario_id, st.model, st.component_ord, st.condition,
         arg_max(st.probability, (st.created_at, st.run_id)) AS probability, st.padded, st.n_components
  FROM stored AS st
  SEMI JOIN repeated USING (scenario_id, model)
  GROUP BY st.scenario_id, st.model, st.component_ord, st.condition, st.padded, st.n_components
),
g AS (
  SELECT k.scenario_id, k.model,
         list_sort(list({'k': _heap_index(k.component_ord, k.condition), 'ord': k.component_ord, 'v': k.probability})
                     FILTER (WHERE NOT contains(k.condition, '-'))) AS fulls,
         list({'ord': k.component_ord, 'condition': k.condition, 'v': k.probability}) FILTER (WHERE contains(k.condition, '-')) AS partials,
         bool_or(k.may_repeat) AS may_repeat, any_value(k.n_components) AS n_components
  FROM k
  WHERE k.probability BETWEEN 0 AND 1
  GROUP BY k.scenario_id, k.model
),
d AS (
  SELECT scenario_id, model, n_components,
         CASE WHEN may_repeat
              THEN list_sort(list_transform(list_distinct(list_transform(fulls, lambda e: {'k': e.k, 'ord': e.ord})),
                                            lambda key: {'k': key.k, 'ord': key.ord,
                                                         'v': list_avg(list_transform(list_filter(fulls, lambda e: e.k = key.k), lambda e: e.v))}))
              ELSE fulls END AS fulls,
         CASE WHEN may_repeat
              THEN list_transform(list_distinct(list_transform(partials, lambda e: {'ord': e.ord, 'condition': e.condition})),
                                  lambda key: {'ord': key.ord, 'condition': key.condition,
                                               'v': list_avg(list_transform(list_filter(partials, lambda e: e.ord = key.ord AND e.condition = key.condition), lambda e: e.v))})
              ELSE partials END AS partials
  FROM g
)
SELECT scenario_id, model, coalesce(len(fulls), 0) + coalesce(len(partials), 0) AS n_cond, coalesce(len(fulls), 0) AS n_full,
       -- every full conditional (the chain rule's, 99_scenario_1_joint's `q`), or those there are
       -- (a fit's constraints: a model with every full conditional and a direct forecast of every
       -- component has the chain rule, so only an incomplete chain is ever fitted)
       CASE WHEN len(fulls) = (1 << n_components) - 2 THEN list_transform(fulls, lambda e: e.v) END AS full_v,
       CASE WHEN coalesce(len(fulls), 0) < (1 << n_components) - 2 THEN fulls END AS fulls,
       partials
FROM d
UNION ALL
-- the single pairs, the same columns (no partials: stored conditions are full); component ord of
-- heap index k is its binary length
SELECT p.scenario_id, p.model, len(p.ks) AS n_cond, len(p.ks) AS n_full,
       CASE WHEN len(p.ks) = (1 << p.n_components) - 2
            THEN list_transform(range(2, 1 << p.n_components), lambda ix: p.vs[list_position(p.ks, ix)]) END AS full_v,
       CASE WHEN len(p.ks) < (1 << p.n_components) - 2
            THEN list_sort(list_transform(range(1, len(p.ks) + 1), lambda i: {'k': p.ks[i], 'ord': length(bin(p.ks[i]))::INTEGER, 'v': p.vs[i]})) END AS fulls,
       NULL AS partials
FROM pair AS p
ANTI JOIN repeated USING (scenario_id, model) -- (the pairs `k` above does not read)
WHERE p.ks IS NOT NULL; -- (no row in range: no conditional, as for the others)

-- The method of every (scenario, model) that can have a joint.
CREATE OR REPLACE TABLE _scenario_model_method AS
WITH d AS (
  SELECT scenario_id, model, count(*) AS n_direct, count(*) FILTER (WHERE ord = 1) AS has_first
  FROM _scenario_direct
  GROUP BY scenario_id, model
),
k AS (
  SELECT scenario_id, model, n_cond, n_full
  FROM _scenario_cond
),
facts AS (
  SELECT scenario_id, model, s.n_components,
         coalesce(d.n_direct, 0) AS n_direct, coalesce(d.has_first, 0) AS has_first,
         coalesce(k.n_cond, 0) AS n_cond, coalesce(k.n_full, 0) AS n_full
  FROM d
  FULL JOIN k USING (scenario_id, model)
  JOIN _scenario_set AS s USING (scenario_id)
)
SELECT scenario_id, model, n_components,
       CASE WHEN has_first = 1 AND n_full = (1 << n_components) - 2 THEN 'chain_rule'
            WHEN n_direct = n_components AND n_cond > 0 THEN 'max_entropy_ipf'
            WHEN n_direct = n_components THEN 'independent' END AS method
FROM facts
WHERE (has_first = 1 AND n_full = (1 << n_components) - 2) OR n_direct = n_components;

-- A joint's factors are multiplied, and the models' joints averaged, in a fixed order (pathway
-- order; models by name), never in the order rows reach an aggregate: a parallel aggregate's
-- order varies from run to run, and so would the last bits of a probability and the record's
-- content_hash with them.
--
-- chain_rule: component 1 from the direct forecast, component k from P(k | the world's first
-- k − 1). A model's factors are one list `q` in heap order: q[1] = P(c1), and P(ck | prefix c)
-- (c the first k − 1 digits read as a binary number) at q[2^(k−1) + c].
-- independent: the product of the direct forecasts, the same with `q` = the direct forecasts in
-- pathway order (component k's factor at q[k]).
-- The joint is built one component at a time: the joint of the first k − 1 components, a list
-- over their 2^(k−1) prefixes, becomes that of the first k by splitting each prefix c into the
-- worlds 2c (ck NO) and 2c + 1 (ck YES), each its prefix's probability times ck's factor; so a
-- world's probability is P(c1) · factor 2 · … · factor n, multiplied in pathway order, 2^(n+1) − 2
-- list lookups per joint with no join per factor.
CREATE OR REPLACE TEMP MACRO _factor(q, chain, k, c, yes) AS
  CASE WHEN yes THEN q[CASE WHEN chain THEN (1 << (k - 1)) + c ELSE k END]
       ELSE 1 - q[CASE WHEN chain THEN (1 << (k - 1)) + c ELSE k END] END;
CREATE OR REPLACE TEMP MACRO _extend_joint(p, q, chain, n, k) AS
  CASE WHEN k > n THEN p
       ELSE list_transform(range(2 * len(p)), lambda w: p[(w >> 1) + 1] * _factor(q, chain, k, w >> 1, w & 1 = 1)) END;

CREATE OR REPLACE TABLE _scenario_joint_product AS
WITH direct AS (
  SELECT d.scenario_id, d.model, any_value(m.method) = 'chain_rule' AS chain, _by_key(list({'k': d.ord, 'v': d.probability})) AS q
  FROM _scenario_direct AS d
  JOIN _scenario_model_method AS m USING (scenario_id, model)
  WHERE m.method = 'independent' OR (m.method = 'chain_rule' AND d.ord = 1)
  GROUP BY d.scenario_id, d.model
),
-- chain_rule: the direct forecast of component 1, then every full conditional in heap order
l AS (
  SELECT d.scenario_id, d.model, d.chain, s.n_components AS n,
         CASE WHEN d.chain THEN list_concat(d.q, k.full_v) ELSE d.q END AS q
  FROM direct AS d
  LEFT JOIN _scenario_cond AS k USING (scenario_id, model)
  JOIN _scenario_set AS s USING (scenario_id)
),
j1 AS (SELECT scenario_id, model, chain, n, q, [1 - q[1], q[1]] AS p FROM l),
j2 AS (SELECT scenario_id, model, chain, n, q, _extend_joint(p, q, chain, n, 2) AS p FROM j1),
j3 AS (SELECT scenario_id, model, chain, n, q, _extend_joint(p, q, chain, n, 3) AS p FROM j2),
j4 AS (SELECT scenario_id, model, chain, n, q, _extend_joint(p, q, chain, n, 4) AS p FROM j3),
j5 AS (SELECT scenario_id, model, chain, n, q, _extend_joint(p, q, chain, n, 5) AS p FROM j4)
-- one row per joint, its worlds as a list in world order (p[w + 1] = P(world w))
SELECT scenario_id, model, _extend_joint(p, q, chain, n, 6) AS p
FROM j5;

-- max_entropy_ipf: the constraints in the order they are fitted, listed per (scenario, model) as
-- parallel lists (element j is constraint j): `yes`, `no` and `out`, 0/1 masks over the worlds in
-- world_ix order (in S with the component YES; in S with it NO; outside S), `f`, the same
-- partition as one selector per world (1 outside S, 2 YES, 3 NO: which of the projection's three
-- factors scales the world), and the target `t`. Parallel lists, not one list of structs: the fit
-- reads constraint j's lists by index (see below). Each (constraint, world) is matched once, into
-- `f`, and the masks are read off `f` (one ordered aggregate per constraint where four took twice
-- the time).
CREATE OR REPLACE TABLE _scenario_ipf_constraints AS
WITH ipf AS (
  SELECT scenario_id, model FROM _scenario_model_method WHERE method = 'max_entropy_ipf'
),
c AS (
  SELECT d.scenario_id, d.model, d.ord, '' AS pattern, d.probability, 0 AS kind, '' AS condition
  FROM _scenario_direct AS d
  JOIN _scenario_model_method AS m USING (scenario_id, model)
  WHERE m.method = 'max_entropy_ipf'
  UNION ALL
  SELECT k.scenario_id, k.model, k.e.ord, replace(k.e.condition, '-', '_'), k.e.v, 1, k.e.condition
  FROM (
    SELECT scenario_id, model, {'ord': f.ord, 'condition': lpad(bin(f.k - (1 << (f.ord - 1))), f.ord - 1, '0'), 'v': f.v} AS e
    FROM (SELECT scenario_id, model, unnest(fulls) AS f FROM _scenario_cond SEMI JOIN ipf USING (scenario_id, model))
    UNION ALL
    SELECT scenario_id, model, unnest(partials) AS e FROM _scenario_cond SEMI JOIN ipf USING (scenario_id, model)
  ) AS k
),
-- the worlds of the scenarios fitted: world_ix and its digits
w AS (
  SELECT s.scenario_id, i.ix::INTEGER AS world_ix, lpad(bin(i.ix), s.n_components, '0') AS world
  FROM _scenario_set AS s
  CROSS JOIN LATERAL (SELECT range AS ix FROM range(1 << s.n_components)) AS i
  WHERE s.scenario_id IN (SELECT scenario_id FROM ipf)
),
selectors AS (
  SELECT c.scenario_id, c.model, c.kind, c.ord, c.condition,
         list(CASE WHEN NOT c.in_s THEN 1 WHEN c.ck_yes THEN 2 ELSE 3 END ORDER BY c.world_ix) AS f,
         least(greatest(any_value(c.probability), 1e-9), 1 - 1e-9) AS t
  FROM (
    SELECT c.*, w.world_ix, w.world LIKE c.pattern || '%' AS in_s, substr(w.world, c.ord, 1) = '1' AS ck_yes
    FROM c JOIN w USING (scenario_id)
  ) AS c
  GROUP BY c.scenario_id, c.model, c.kind, c.ord, c.condition
),
steps AS (
  SELECT m.scenario_id, m.model,
         list({'yes': list_transform(m.f, lambda s: (s = 2)::INTEGER::DOUBLE), 'no': list_transform(m.f, lambda s: (s = 3)::INTEGER::DOUBLE),
               'out': list_transform(m.f, lambda s: (s = 1)::INTEGER::DOUBLE), 'f': m.f, 't': m.t} ORDER BY m.kind, m.ord, m.condition) AS steps
  FROM selectors AS m
  GROUP BY m.scenario_id, m.model
)
SELECT scenario_id, model,
       list_transform(steps, lambda k: k.yes) AS yes, list_transform(steps, lambda k: k.no) AS no,
       list_transform(steps, lambda k: k.out) AS out, list_transform(steps, lambda k: k.f) AS f,
       list_transform(steps, lambda k: k.t) AS t
FROM steps;

-- One I-projection of the joint p onto P(ck = 1 | S) = t: x = P(S, ck = 1) = p·yes,
-- y = P(S, ck = 0) = p·no, o = P(not S) = p·out; λ = ln(y·t / (x·(1 − t))) (each product floored
-- at 1e-300 before its logarithm, λ bounded to ±700 so its exponentials stay finite);
-- a = e^(λ(1−t)), b = e^(−λt); z = x·a + y·b + o; then every world scaled by its factor:
-- g0 = 1/z outside S, ga = a/z in S with ck YES, gb = b/z in S with ck NO.
-- P(not S) is summed over the worlds outside S (p·out), not taken as 1 − x − y: when S is every
-- world that difference is rounding noise (±1e-17), and once both scaled terms are smaller (a
-- target clipped to 1e-9 or 1 − 1e-9 against a world already drained) z came out 0 or negative,
-- and the joint NaN or negative. And each world is multiplied by its one factor, selected (by `f`),
-- never by g0 + yes·(ga − g0), which cancels to 0 when ga is below g0's rounding (ga/g0 < 1e-16): a
-- YES world of S was zeroed instead of scaled, the next projection onto that component found
-- x = y = 0 with nothing outside S, and z = 0 made the joint NULL, which failed the consensus and
-- the whole derive (test/scenarios/joint-properties.test.ts: P(c1) = 1, P(c2) = 0,
-- P(c2 | c1 YES) = 1). (Selecting by `f` gives the same products as the earlier
-- yes·ga + no·gb + out·g0 over the masks, one factor plus exact zeros, so the same joints bit for
-- bit.)
CREATE OR REPLACE TEMP MACRO _ipf_lambda(x, y, t) AS
  least(greatest(ln(greatest(y * t, 1e-300)) - ln(greatest(x * (1 - t), 1e-300)), -700), 700);
-- The fit's state between two steps of its reduce (and the type of the reduce's elements, which
-- set only `phase` and `j`: list_reduce wants its elements and its accumulator of one type, or it
-- casts both to their union on every step): the joint p, the largest residual |x/(x + y) − t|
-- met in the current sweep before a projection (`res`), the sweeps done, `done` once the fit
-- stopped, and the projection's scalars (x, y, o, t, then a and b, then the factors g = [g0, ga, gb]).
CREATE OR REPLACE TEMP MACRO _ipf_state(phase, j, p, res, sweep, done, x, y, o, t, a, b, g) AS
  {'phase': phase::INTEGER, 'j': j::INTEGER, 'p': p::DOUBLE[], 'res': res::DOUBLE, 'sweep': sweep::INTEGER,
   'done': done::BOOLEAN, 'x': x::DOUBLE, 'y': y::DOUBLE, 'o': o::DOUBLE, 't': t::DOUBLE, 'a': a::DOUBLE,
   'b': b::DOUBLE, 'g': g::DOUBLE[]};

-- The fit: one row per (scenario, model) holding its joint as a list, from the uniform joint. Each
-- recursive step runs up to 10 sweeps in one list_reduce, each sweep projecting onto every
-- constraint in turn, each projection four steps of the reduce (`phase`): 0 the dot products
-- x, y, o (constraint j's masks read from the row's lists by index), 1 the residual, a and b,
-- 2 the factors, 3 every world scaled by its factor (one list_transform over p zipped with `f`).
-- A group stops once a sweep met no residual above 1e-12 (converged) or after ipf_sweeps sweeps
-- (contradictory constraints never converge): the reduce's last step of that sweep sets `done`, and
-- the steps after it keep the state as it is (the recursion then stops on the same condition).
-- Why so: the fit costs per step of the reduce and per lambda call, far more than its arithmetic on
-- 32 worlds. A state field is the only way a DuckDB expression can keep a value for later (a lambda
-- over a one-element list binds one too, but each such call allocates its vectors and copies its
-- result, p with it: slower than a step of the reduce). The masks were struct fields of the
-- reduce's elements, so every step copied them, and cast elements and accumulator to their union
-- type; the factors chosen with yes·ga + no·gb + out·g0 zipped four lists where zipping p with
-- `f` and indexing g is about a third cheaper; and a recursive step per sweep cost more with few
-- pairs than the ten-sweep batch. Issue 13's bench, this statement: 1.67-1.90 → 0.86-0.91 s with
-- 75 fitted pairs (fit=0.02), 5.7-6.1 → 3.3-3.5 s with 523 (fit=0.135); the fitted joints bit for
-- bit the same.
CREATE OR REPLACE TABLE _scenario_joint_ipf AS
WITH RECURSIVE ipf(scenario_id, model, sweep, p, residual) USING KEY (scenario_id, model) AS (
  SELECT c.scenario_id, c.model, 0, list_transform(c.yes[1], lambda v: 1.0 / len(c.yes[1])), 1.0::DOUBLE
  FROM _scenario_ipf_constraints AS c
  UNION
  (SELECT scenario_id, model, r.sweep, r.p, r.res
   FROM (
     SELECT i.scenario_id, i.model,
            list_reduce(
              list_transform(range(10 * 4 * len(c.t)), lambda s:
                _ipf_state(s % 4, s // 4 % len(c.t) + 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)),
              lambda acc, k: CASE
                WHEN acc.done THEN acc
                WHEN k.phase = 0 THEN _ipf_state(NULL, NULL, acc.p, acc.res, acc.sweep, false,
                  list_dot_product(acc.p, c.yes[k.j]), list_dot_product(acc.p, c.no[k.j]), list_dot_product(acc.p, c.out[k.j]),
                  c.t[k.j], NULL, NULL, NULL)
                WHEN k.phase = 1 THEN _ipf_state(NULL, NULL, acc.p,
                  greatest(CASE WHEN k.j = 1 THEN 0.0 ELSE acc.res END, abs(acc.x / nullif(acc.x + acc.y, 0) - acc.t)),
                  acc.sweep, false, acc.x, acc.y, acc.o, acc.t,
                  exp(_ipf_lambda(acc.x, acc.y, acc.t) * (1 - acc.t)), exp(-_ipf_lambda(acc.x, acc.y, acc.t) * acc.t), NULL)
                WHEN k.phase = 2 THEN _ipf_state(NULL, NULL, acc.p, acc.res, acc.sweep, false, NULL, NULL, NULL, NULL, NULL, NULL,
                  [1 / (acc.x * acc.a + acc.y * acc.b + acc.o), acc.a / (acc.x * acc.a + acc.y * acc.b + acc.o),
                   acc.b / (acc.x * acc.a + acc.y * acc.b + acc.o)])
                ELSE _ipf_state(NULL, NULL, list_transform(list_zip(acc.p, c.f[k.j]), lambda w: w[1] * acc.g[w[2]]), acc.res,
                  acc.sweep + (k.j = len(c.t))::INTEGER,
                  k.j = len(c.t) AND (acc.res < 1e-12 OR acc.sweep + 1 >= sp.sweeps), NULL, NULL, NULL, NULL, NULL, NULL, NULL)
              END,
              _ipf_state(NULL, NULL, i.p, 0.0, i.sweep, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL)) AS r
     FROM ipf AS i
     JOIN _scenario_ipf_constraints AS c USING (scenario_id, model)
     CROSS JOIN (SELECT coalesce(max(ipf_sweeps), 200) AS sweeps FROM _scenario_params) AS sp
     WHERE i.sweep < sp.sweeps AND i.residual >= 1e-12
   ))
)
SELECT scenario_id, model, p
FROM ipf;

-- Every joint (a model's, then the consensus's below) is one row with its worlds as a list in
-- world order: the published worlds and marginals and the archived record are read from it, never
-- re-aggregated from one row per world.
CREATE OR REPLACE TABLE _scenario_model_joint AS
SELECT j.scenario_id, j.model, m.method, j.p
FROM (
  SELECT * FROM _scenario_joint_product
  UNION ALL SELECT * FROM _scenario_joint_ipf
) AS j
JOIN _scenario_model_method AS m USING (scenario_id, model);

-- (every model with a method has a joint over every world, so the models and their methods are
-- counted once per scenario; the models' lists in model order, so each world's mean and sd are
-- taken in the same order on every run; the methods listed, sorted, from the list of the models'
-- methods: string_agg(DISTINCT method, ',' ORDER BY method), an ordered aggregate, cost 12 against
-- 9 ms single-threaded for the statement on issue 13's bench)
CREATE OR REPLACE TABLE _scenario_consensus_joint AS
WITH g AS (
  SELECT scenario_id, _by_key(list({'k': model, 'v': p})) AS ps,
         count(*)::INTEGER AS n_models, array_to_string(list_sort(list_distinct(list(method))), ',') AS methods
  FROM _scenario_model_joint
  GROUP BY scenario_id
)
SELECT scenario_id,
       list_transform(range(1, len(ps[1]) + 1), lambda i: list_avg(list_transform(ps, lambda q: q[i]))) AS p,
       list_transform(range(1, len(ps[1]) + 1), lambda i: list_stddev_pop(list_transform(ps, lambda q: q[i]))) AS sd,
       n_models, methods
FROM g;

-- Published: the pathway distribution of every model with a joint and of the consensus (model
-- NULL, source 'consensus'): every world with its probability, rank 1 = the most likely (ties by
-- world), and its probability given the components resolved so far (rows in no particular order:
-- sort by scenario_id, source, model, rank). Each joint's worlds are ranked by sorting its list
-- of {−probability, world_ix} once, and unnested in that order. (Measured single-threaded on issue
-- 13's bench, 5,000 joints of 32 worlds: the sort is 17 of the statement's 52 ms, the rest mostly
-- writing 160,000 rows. list_grade_up(p, 'DESC') cost the same as the sort of structs, a list
-- sort's cost being per element, not per key, and it leaves ties to the sort; gathering each
-- column in rank order with list_select and unnesting the lists cost 66 ms; row_number() over the
-- unnested rows, 130 against 72 ms CPU with two threads.)
-- Every joint, the models' and the consensus's (model NULL), as the published tables list them.
CREATE OR REPLACE TEMP VIEW _scenario_joints AS
SELECT scenario_id, 'model' AS source, model, method, p, NULL::DOUBLE[] AS sd, 1 AS n_models
FROM _scenario_model_joint
UNION ALL
SELECT scenario_id, 'consensus', NULL, methods, p, sd, n_models
FROM _scenario_consensus_joint;

CREATE OR REPLACE TABLE scenario_worlds AS
WITH ranked AS (
  SELECT j.scenario_id, j.source, j.model, j.method, j.p, j.sd, j.n_models, mk.worlds, r.resolved_mask, r.resolved_bits,
         list_dot_product(j.p, r.consistent) AS consistent_mass,
         list_sort(list_transform(j.p, lambda x, i: {'np': -_rank_key(x), 'ix': (i - 1)::INTEGER})) AS order_
  FROM _scenario_joints AS j
  JOIN _scenario_set AS s USING (scenario_id)
  JOIN _scenario_resolution AS r USING (scenario_id)
  JOIN _scenario_masks AS mk ON mk.n_components = s.n_components
),
w AS (
  SELECT scenario_id, source, model, method, p, sd, n_models, worlds, resolved_mask, resolved_bits, consistent_mass,
         unnest(order_).ix AS world_ix, unnest(range(1, len(order_) + 1))::INTEGER AS rank
  FROM ranked
)
SELECT scenario_id, source, model, method, worlds[world_ix + 1] AS world, world_ix,
       p[world_ix + 1] AS probability, sd[world_ix + 1] AS disagreement_sd, n_models, rank,
       world_ix & resolved_mask = resolved_bits AS consistent,
       CASE WHEN world_ix & resolved_mask = resolved_bits AND consistent_mass > 0
            THEN p[world_ix + 1] / consistent_mass END AS conditional_probability
FROM w;

-- Published: the component distributions implied by each joint, beside the direct forecasts:
-- _implied_marginals of each joint's list, one row per component.
CREATE OR REPLACE TABLE scenario_marginals AS
WITH sums AS (
  SELECT j.scenario_id, j.source, j.model, j.method, _implied_marginals_masked(j.p, mk.masks) AS m
  FROM _scenario_joints AS j
  JOIN _scenario_set AS s USING (scenario_id)
  JOIN _scenario_masks AS mk USING (n_components)
),
implied AS (
  SELECT x.scenario_id, x.source, x.model, x.method, c.ord, c.question_id, x.m[c.ord] AS implied
  FROM sums AS x
  JOIN _scenario_comp AS c USING (scenario_id)
),
direct AS (
  SELECT d.scenario_id, 'model' AS source, d.model, d.ord, d.probability AS direct
  FROM _scenario_direct AS d
  JOIN _scenario_model_method USING (scenario_id, model)
  UNION ALL
  -- the mean taken over the models in name order (_by_key), so its last bit is the same on every run
  -- (avg() adds in arrival order, which a parallel aggregate does not fix)
  SELECT d.scenario_id, 'consensus', NULL, d.ord, list_avg(_by_key(list({'k': d.model, 'v': d.probability})))
  FROM _scenario_direct AS d
  JOIN _scenario_model_method USING (scenario_id, model)
  GROUP BY d.scenario_id, d.ord
)
SELECT i.scenario_id, i.source, i.model, i.method, i.ord, i.question_id, i.implied, d.direct,
       i.implied - d.direct AS coherence_gap
FROM implied AS i
LEFT JOIN direct AS d
  ON d.scenario_id = i.scenario_id AND d.source = i.source AND d.model IS NOT DISTINCT FROM i.model AND d.ord = i.ord
ORDER BY i.scenario_id, i.source, i.model NULLS FIRST, i.ord;

-- Published: every component of every scenario with its resolution and the consensus distribution.
CREATE OR REPLACE TABLE scenario_components AS
SELECT c.scenario_id, c.ord, c.question_id, coalesce(c.label, c.title) AS label, c.title, c.venue, c.url,
       c.category, c.status, CASE WHEN c.is_resolved THEN c.outcome END AS outcome,
       CASE WHEN c.is_resolved THEN c.resolved_at END AS resolved_at,
       m.implied, m.direct, m.coherence_gap
FROM _scenario_comp AS c
LEFT JOIN scenario_marginals AS m ON m.scenario_id = c.scenario_id AND m.source = 'consensus' AND m.ord = c.ord
ORDER BY c.scenario_id, c.ord;
