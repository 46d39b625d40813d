-- 98_thesis_vintages: frozen records of the thesis maps (issue 12) and their scores.
--
-- This run's vintage of every thesis (_thesis_vintage_new): its members with sign, weight, headline
-- consensus and market price, the thesis consensus and market consensus (97_theses.sql), the run id
-- (_structure_params.run_id, set by the pipeline's structure stage; without one no vintage is
-- frozen) and content_hash = sha256 of 'statement|' followed by one
-- 'question_id:sign:weight:consensus:market;' per member in question_id order (numbers as DuckDB
-- prints a DOUBLE, consensus and market rounded to 12 decimals first, NULL as empty: a consensus
-- is a parallel mean whose last bits follow the order rows reach the aggregate, so the same content
-- hashed 0.35 one run and 0.35000000000000003 the next; QA). The pipeline appends it to the raw table thesis_vintages
-- after the derive (pipeline/structure/stage.ts); a vintage (thesis_id, run_id) already stored is
-- never recomputed: the stored one is used, so a resumed run keeps its first record. Nor is one
-- frozen for a thesis that has a vintage at this run's as_of already (another run dated at the
-- same time: the upgrade's rescore; QA: every upgrade added a copy of each thesis's vintage).
--
-- Scores (as of this run): a member of a vintage is scored once its question has resolved
-- (questions.status = 'resolved'; annulled ones are left out). Per vintage:
--   n_resolved: resolved members that had a consensus in the vintage;
--   brier: mean (consensus - outcome)^2 over them;
--   n_market: of them, the members that had a market price in the vintage too; market_brier: the
--     mean (market price - outcome)^2 over those, and brier_vs_market the mean of (consensus brier -
--     market brier) over the same members: a paired comparison, as the leaderboard's (a reader
--     comparing brier with market_brier over different members compared different questions);
--   realized: weighted mean of the signed outcomes of those same members (resolved, with a
--     consensus in the vintage; outcome, or 1 - outcome for sign -1): how true the thesis turned
--     out, 0..1, over what the vintage said;
--   direction_held: the vintage's thesis consensus was on the side of 0.5 that `realized` is
--     (null while nothing resolved, or when either is exactly 0.5).

CREATE OR REPLACE TABLE _thesis_vintage_new AS
WITH m AS (
  SELECT t.thesis_id, sp.run_id, rp.as_of, t.origin, t.statement, m.question_id, m.sign, m.weight,
         m.consensus AS member_consensus, m.market_probability AS member_market_probability,
         t.consensus AS thesis_consensus, t.market_consensus AS thesis_market_consensus
  FROM theses AS t
  JOIN thesis_members AS m USING (thesis_id)
  CROSS JOIN _structure_params AS sp
  CROSS JOIN run_params AS rp
  WHERE sp.run_id IS NOT NULL
    -- one vintage per thesis and time: a run dated at a time already frozen (the rescore quorum
    -- start makes after an upgrade is dated at the replaced snapshot's as_of) freezes no copy of it
    AND NOT EXISTS (SELECT 1 FROM raw_thesis_vintages AS r WHERE r.thesis_id = t.thesis_id AND (r.run_id = sp.run_id OR r.as_of = rp.as_of))
),
h AS (
  SELECT thesis_id,
         sha256(any_value(statement) || '|' || string_agg(
           question_id || ':' || sign || ':' || weight || ':' || coalesce(round(member_consensus, 12)::VARCHAR, '') || ':'
             || coalesce(round(member_market_probability, 12)::VARCHAR, '') || ';', '' ORDER BY question_id)) AS content_hash
  FROM m
  GROUP BY thesis_id
)
SELECT m.*, h.content_hash
FROM m JOIN h USING (thesis_id)
ORDER BY m.thesis_id, m.question_id;

-- Every vintage known at as_of: the stored ones frozen at or before it (a run dated in the past
-- does not see later vintages) and this run's.
CREATE OR REPLACE TABLE _thesis_vintage_all AS
SELECT thesis_id, run_id, as_of, origin, statement, question_id, sign, weight, member_consensus,
       member_market_probability, thesis_consensus, thesis_market_consensus, content_hash
FROM raw_thesis_vintages
WHERE as_of <= (SELECT as_of FROM run_params)
UNION ALL
SELECT thesis_id, run_id, as_of, origin, statement, question_id, sign, weight, member_consensus,
       member_market_probability, thesis_consensus, thesis_market_consensus, content_hash
FROM _thesis_vintage_new;

-- Published: every member of every vintage, with its outcome when resolved as of this run.
CREATE OR REPLACE TABLE thesis_vintage_members AS
SELECT v.thesis_id, v.run_id, v.as_of, v.question_id, v.sign, v.weight, v.member_consensus,
       v.member_market_probability,
       CASE WHEN q.status = 'resolved' THEN q.outcome END AS outcome,
       CASE WHEN q.status = 'resolved' THEN q.resolved_at END AS resolved_at,
       CASE WHEN q.status = 'resolved' AND v.member_consensus IS NOT NULL
            THEN (v.member_consensus - q.outcome) * (v.member_consensus - q.outcome) END AS brier,
       CASE WHEN q.status = 'resolved' AND v.member_market_probability IS NOT NULL
            THEN (v.member_market_probability - q.outcome) * (v.member_market_probability - q.outcome) END AS market_brier
FROM _thesis_vintage_all AS v
LEFT JOIN questions AS q ON q.question_id = v.question_id
ORDER BY v.thesis_id, v.as_of, v.run_id, v.question_id;

-- Published: one row per vintage with its scores.
CREATE OR REPLACE TABLE thesis_vintage_scores AS
WITH s AS (
  SELECT thesis_id, run_id,
         any_value(v.as_of) AS as_of,
         any_value(v.origin) AS origin,
         any_value(v.statement) AS statement,
         any_value(v.thesis_consensus) AS thesis_consensus,
         any_value(v.thesis_market_consensus) AS thesis_market_consensus,
         any_value(v.content_hash) AS content_hash,
         count(*) AS n_members,
         count(v.member_consensus) AS n_with_consensus,
         count(*) FILTER (WHERE m.brier IS NOT NULL) AS n_resolved,
         avg(m.brier) AS brier,
         count(*) FILTER (WHERE m.brier IS NOT NULL AND m.market_brier IS NOT NULL) AS n_market,
         avg(m.market_brier) FILTER (WHERE m.brier IS NOT NULL) AS market_brier,
         avg(m.brier - m.market_brier) AS brier_vs_market,
         sum(v.weight * CASE WHEN v.sign = -1 THEN 1 - m.outcome ELSE m.outcome END) FILTER (WHERE m.brier IS NOT NULL)
           / sum(v.weight) FILTER (WHERE m.brier IS NOT NULL) AS realized
  FROM _thesis_vintage_all AS v
  JOIN thesis_vintage_members AS m USING (thesis_id, run_id, question_id)
  GROUP BY thesis_id, run_id
)
SELECT thesis_id, run_id, as_of, origin, statement, n_members, n_with_consensus, thesis_consensus,
       thesis_market_consensus, content_hash, n_resolved, brier, n_market, market_brier, brier_vs_market, realized,
       CASE WHEN n_resolved = 0 OR thesis_consensus IS NULL OR round(thesis_consensus, 9) = 0.5
                 OR round(realized, 9) = 0.5 THEN NULL
            ELSE (round(thesis_consensus, 9) > 0.5) = (round(realized, 9) > 0.5) END AS direction_held
FROM s
ORDER BY thesis_id, as_of, run_id;
