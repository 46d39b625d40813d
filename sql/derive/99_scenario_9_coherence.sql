-- 99_scenario_9_coherence: coherence across the book (issue 13 pt 5). How often each model's and
-- the consensus's forecasts break the laws of probability, over every linked pair of questions
-- (question_links, 96) and every scenario (99_scenario_1_joint.sql).
--
-- Forecasts: what each model said in the latest run of each active question per mode
-- (latest_forecasts, its first language: the run of the published consensus; a model that failed
-- in that run is not checked on the question, rather than judged on an older answer beside the
-- others' current ones), and the consensus (mean) of that run (_latest_consensus_by_mode of 85).
-- A pair is checked per forecaster and mode when both questions have that forecaster's forecast in
-- that mode. Checks (value − bound > 1e-9 is a violation, except where a tolerance is named):
--   implies     a ⇒ b (curated or computed): P(a) ≤ P(b); violation = P(a) − P(b);
--   excludes    P(a) + P(b) ≤ 1; violation = P(a) + P(b) − 1;
--   complement  a same_event pair phrased as each other's negation (sign −1): |P(a) + P(b) − 1|
--               within coherence_tolerance (QUORUM_COHERENCE_TOLERANCE, 0.05);
--   same_event  the same question on two venues (sign +1): |P(a) − P(b)| within the tolerance;
--   conjunction every pair of a scenario's active components (i < j) in each joint (a model's, the
--               consensus's): P(ci ∧ cj) ≤ min(P(ci), P(cj)) with the direct forecasts (the
--               consensus: the mean of the models' direct forecasts); a chain-rule joint built from
--               incoherent conditionals can break it;
--   marginal    every active component's implied marginal, rounded to 9 decimals, within [0, 1].
-- Scenario checks, like the linked pairs, are of active questions only (scenario_components.status
-- 'active' at as_of): a component resolved, closed or annulled is no longer checked, so a scenario
-- settled long ago does not add its frozen joint to the book's rates run after run (QA).
-- coherence_checks: one row per check made (check, forecaster, mode, subject, value, bound,
-- violation = how far past the bound, violated). coherence: per forecaster and check (and check
-- 'all'), n, n_violated, rate = n_violated / n, mean_violation over the violated ones.

CREATE OR REPLACE TABLE _coh_p AS
SELECT question_id, mode, model AS forecaster, probability AS p
FROM latest_forecasts
WHERE translation_of IS NULL AND probability IS NOT NULL
UNION ALL
SELECT question_id, mode, 'consensus', mean
FROM _latest_consensus_by_mode
WHERE mean IS NOT NULL;

CREATE OR REPLACE TABLE coherence_checks AS
WITH params AS (
  SELECT coalesce((SELECT max(coherence_tolerance) FROM _health_params), 0.05) AS tol
),
pairs AS (
  SELECT CASE WHEN l.kind = 'same_event' AND l.sign = -1 THEN 'complement' ELSE l.kind END AS "check",
         pa.forecaster, pa.mode, l.a || ' | ' || l.b AS subject, pa.p AS pa, pb.p AS pb
  FROM question_links AS l
  JOIN _coh_p AS pa ON pa.question_id = l.a
  JOIN _coh_p AS pb ON pb.question_id = l.b AND pb.forecaster = pa.forecaster AND pb.mode = pa.mode
  WHERE l.kind IN ('implies', 'excludes', 'same_event')
),
measured AS (
  SELECT "check", forecaster, mode, subject,
         CASE "check" WHEN 'implies' THEN pa WHEN 'excludes' THEN pa + pb
                      WHEN 'complement' THEN abs(pa + pb - 1) ELSE abs(pa - pb) END AS value,
         CASE "check" WHEN 'implies' THEN pb WHEN 'excludes' THEN 1.0 ELSE (SELECT tol FROM params) END AS bound
  FROM pairs
),
joint_pairs AS (
  SELECT w.scenario_id, w.source, w.model, ci.ord AS i, cj.ord AS j,
         -- summed in world order (_by_key), so the last bit is the same on every run
         list_sum(_by_key(list({'k': w.world_ix,
                                'v': CASE WHEN substr(w.world, ci.ord, 1) = '1' AND substr(w.world, cj.ord, 1) = '1'
                                          THEN w.probability ELSE 0 END}))) AS p_both
  FROM scenario_worlds AS w
  JOIN scenario_components AS ci ON ci.scenario_id = w.scenario_id AND ci.status = 'active'
  JOIN scenario_components AS cj ON cj.scenario_id = w.scenario_id AND cj.ord > ci.ord AND cj.status = 'active'
  GROUP BY w.scenario_id, w.source, w.model, ci.ord, cj.ord
),
conjunction AS (
  SELECT 'conjunction' AS "check", coalesce(jp.model, 'consensus') AS forecaster, NULL::VARCHAR AS mode,
         jp.scenario_id || ':' || jp.i || '&' || jp.j AS subject,
         jp.p_both AS value, least(mi.direct, mj.direct) AS bound
  FROM joint_pairs AS jp
  JOIN scenario_marginals AS mi
    ON mi.scenario_id = jp.scenario_id AND mi.source = jp.source AND mi.model IS NOT DISTINCT FROM jp.model AND mi.ord = jp.i
  JOIN scenario_marginals AS mj
    ON mj.scenario_id = jp.scenario_id AND mj.source = jp.source AND mj.model IS NOT DISTINCT FROM jp.model AND mj.ord = jp.j
  WHERE mi.direct IS NOT NULL AND mj.direct IS NOT NULL
),
marginal AS (
  SELECT 'marginal' AS "check", coalesce(m.model, 'consensus') AS forecaster, NULL::VARCHAR AS mode,
         m.scenario_id || ':' || m.ord AS subject, round(m.implied, 9) AS value,
         CASE WHEN round(m.implied, 9) < 0 THEN 0.0 ELSE 1.0 END AS bound
  FROM scenario_marginals AS m
  JOIN scenario_components AS c ON c.scenario_id = m.scenario_id AND c.ord = m.ord AND c.status = 'active'
  WHERE m.implied IS NOT NULL
)
SELECT "check", forecaster, mode, subject, value, bound,
       greatest(CASE WHEN "check" = 'marginal' AND value < 0 THEN -value ELSE value - bound END, 0) AS violation,
       CASE WHEN "check" = 'marginal' THEN value < 0 OR value > 1 ELSE value - bound > 1e-9 END AS violated
FROM (SELECT * FROM measured UNION ALL SELECT * FROM conjunction UNION ALL SELECT * FROM marginal)
ORDER BY "check", forecaster, subject, mode;

CREATE OR REPLACE TABLE coherence AS
SELECT forecaster, coalesce("check", 'all') AS "check",
       count(*) AS n,
       count(*) FILTER (WHERE violated) AS n_violated,
       count(*) FILTER (WHERE violated) / count(*) AS rate,
       -- the mean over the checks in (check, subject, mode) order, the same bits on every run
       list_avg(_by_key(list({'k': {'c': "check", 's': subject, 'm': mode}, 'v': violation}) FILTER (WHERE violated)))
         AS mean_violation,
       (SELECT as_of FROM run_params) AS as_of
FROM coherence_checks
GROUP BY GROUPING SETS ((forecaster, "check"), (forecaster))
ORDER BY forecaster, "check" = 'all' DESC, "check";
