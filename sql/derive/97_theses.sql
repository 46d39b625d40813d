-- 97_theses: thesis maps (clusters, issue 12). A thesis is a statement with member questions, each
-- with a sign (+1: YES supports the thesis; -1: YES contradicts it) and a weight.
--
-- Two origins:
--  * curated: data/structure/theses/*.yaml, loaded by the structure stage into _structure_theses
--    and _structure_members (members not in this snapshot are left out);
--  * computed: connected components of the computed links (similar or same_event with sign +1,
--    origin computed, the pair not a negated same_event) of strength >= cluster_threshold, with 3 to max_cluster_size members (a
--    larger component is a chain of loosely related questions, not a thesis). Every member has
--    sign +1 and weight 1. id = 'auto-' + the first 12 hex digits of sha256(the smallest member
--    id), so a cluster keeps its id while it grows; label = its three terms of largest summed
--    TF-IDF weight over the members' title + description.
--
-- Current consensus of a thesis, over its members with a headline consensus (active_predictions):
--   consensus = inv_logit( sum(w * logit(p_signed)) / sum(w) ),
--   p_signed = p for sign +1, 1 - p for sign -1, p clipped to [0.001, 0.999] before the logit.
-- market_consensus: the same over the members' latest market prices (questions), over the members
-- with both a consensus and a price (n_with_market), so that it describes the same members as the
-- consensus it is compared with: a closed or resolved member's last price has no consensus beside
-- it. gap_vs_market = the consensus over those same members − market_consensus. spread: weighted population standard deviation of the members' signed consensus
-- (probability points). disagreement: weighted mean of the members' model disagreement
-- (population sd of the model probabilities).

CREATE TEMP TABLE IF NOT EXISTS _structure_theses (thesis_id VARCHAR, statement VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS _structure_members
  (thesis_id VARCHAR, question_id VARCHAR, sign INTEGER, weight DOUBLE);

-- Edges of the clustering graph, both directions. A pair that is also a negated same_event
-- (sign -1) is no edge: its texts are alike but its YES sides are opposite. Another link with
-- sign -1 (a curated `excludes`) keeps the edge: mutually exclusive questions belong to one map
-- (QA: every sign -1 link removed the edge, against the definition, and a thesis went missing).
CREATE OR REPLACE TABLE _cluster_edges AS
WITH e AS (
  SELECT l.a, l.b FROM question_links AS l, _structure_params AS sp
  WHERE l.origin = 'computed' AND l.kind IN ('similar', 'same_event') AND l.sign = 1 AND l.strength >= sp.cluster_threshold
    AND NOT EXISTS (SELECT 1 FROM question_links AS n WHERE n.a = l.a AND n.b = l.b AND n.kind = 'same_event' AND n.sign = -1)
)
SELECT a AS src, b AS dst FROM e
UNION
SELECT b AS src, a AS dst FROM e;

-- Connected components: every node takes the smallest id reachable (min-label propagation; a
-- node is revisited only when its label shrinks).
CREATE OR REPLACE TABLE _cluster_components AS
WITH RECURSIVE cc(node, comp) USING KEY (node) AS (
  SELECT DISTINCT src AS node, src AS comp FROM _cluster_edges
  UNION
  (SELECT e.dst AS node, min(cc.comp) AS comp
   FROM cc
   JOIN _cluster_edges AS e ON e.src = cc.node
   JOIN recurring.cc AS r ON r.node = e.dst
   GROUP BY e.dst
   HAVING min(cc.comp) < min(r.comp))
)
SELECT node AS question_id, comp FROM cc;

CREATE OR REPLACE TABLE _clusters AS
SELECT comp, 'auto-' || substr(sha256(comp), 1, 12) AS thesis_id, count(*) AS n
FROM _cluster_components
GROUP BY comp
HAVING count(*) >= 3 AND count(*) <= (SELECT max_cluster_size FROM _structure_params);

CREATE OR REPLACE TABLE _cluster_labels AS
SELECT thesis_id, string_agg(term, ', ' ORDER BY score DESC, term) AS label
FROM (
  -- the summed weight rounded to 9 decimals before ranking: a floating sum's last bits follow the
  -- order rows reach the aggregate (threads, raw part order), and two terms of mathematically
  -- equal weight swapped places between runs on identical data (QA: 'nba, finals, conference' vs
  -- 'nba, finals, eastern'); equal weights are ranked by term
  SELECT k.thesis_id, v.term, round(sum(v.w), 9) AS score
  FROM _clusters AS k
  JOIN _cluster_components AS c ON c.comp = k.comp
  JOIN _link_vectors AS v ON v.question_id = c.question_id AND v.field = 'text'
  GROUP BY k.thesis_id, v.term
  QUALIFY row_number() OVER (PARTITION BY k.thesis_id ORDER BY round(sum(v.w), 9) DESC, v.term) <= 3
)
GROUP BY thesis_id;

-- Every thesis and its members (questions of this snapshot only).
CREATE OR REPLACE TABLE _thesis_defs AS
SELECT t.thesis_id, 'curated' AS origin, t.statement, NULL::VARCHAR AS label
FROM _structure_theses AS t
UNION ALL
SELECT k.thesis_id, 'computed', 'Linked questions: ' || l.label, l.label
FROM _clusters AS k JOIN _cluster_labels AS l USING (thesis_id);

CREATE OR REPLACE TABLE thesis_members AS
WITH m AS (
  SELECT thesis_id, question_id, sign::INTEGER AS sign, weight::DOUBLE AS weight FROM _structure_members
  UNION ALL
  SELECT k.thesis_id, c.question_id, 1, 1.0 FROM _clusters AS k JOIN _cluster_components AS c ON c.comp = k.comp
)
SELECT m.thesis_id, m.question_id, m.sign, m.weight,
       q.title, q.venue, q.url, q.category, q.status, q.outcome, q.resolved_at,
       ap.consensus, ap.disagreement_sd, ap.n_models, ap.mode, ap.run_id AS consensus_run_id,
       q.latest_market_probability AS market_probability,
       q.latest_market_observed_at AS market_observed_at,
       CASE WHEN m.sign = -1 THEN 1 - ap.consensus ELSE ap.consensus END AS signed_consensus,
       CASE WHEN m.sign = -1 THEN 1 - q.latest_market_probability ELSE q.latest_market_probability END AS signed_market
FROM m
JOIN questions AS q ON q.question_id = m.question_id
LEFT JOIN active_predictions AS ap ON ap.question_id = m.question_id
ORDER BY m.thesis_id, m.question_id;

CREATE OR REPLACE TABLE theses AS
WITH agg AS (
  SELECT thesis_id,
         count(*) AS n_members,
         count(*) FILTER (WHERE status = 'active') AS n_active,
         count(*) FILTER (WHERE status = 'resolved') AS n_resolved,
         count(signed_consensus) AS n_with_consensus,
         count(*) FILTER (WHERE signed_consensus IS NOT NULL AND signed_market IS NOT NULL) AS n_with_market,
         sum(weight * _logit(signed_consensus)) FILTER (WHERE signed_consensus IS NOT NULL)
           / sum(weight) FILTER (WHERE signed_consensus IS NOT NULL) AS consensus_logit,
         sum(weight * _logit(signed_market)) FILTER (WHERE signed_consensus IS NOT NULL AND signed_market IS NOT NULL)
           / sum(weight) FILTER (WHERE signed_consensus IS NOT NULL AND signed_market IS NOT NULL) AS market_logit,
         sum(weight * _logit(signed_consensus)) FILTER (WHERE signed_consensus IS NOT NULL AND signed_market IS NOT NULL)
           / sum(weight) FILTER (WHERE signed_consensus IS NOT NULL AND signed_market IS NOT NULL) AS paired_consensus_logit,
         sum(weight * signed_consensus) FILTER (WHERE signed_consensus IS NOT NULL)
           / sum(weight) FILTER (WHERE signed_consensus IS NOT NULL) AS consensus_wmean,
         sum(weight * signed_consensus * signed_consensus) FILTER (WHERE signed_consensus IS NOT NULL)
           / sum(weight) FILTER (WHERE signed_consensus IS NOT NULL) AS consensus_wsq,
         sum(weight * disagreement_sd) FILTER (WHERE disagreement_sd IS NOT NULL)
           / sum(weight) FILTER (WHERE disagreement_sd IS NOT NULL) AS disagreement
  FROM thesis_members
  GROUP BY thesis_id
)
SELECT d.thesis_id, d.origin, d.statement, d.label,
       a.n_members, a.n_active, a.n_resolved, a.n_with_consensus, a.n_with_market,
       _inv_logit(a.consensus_logit) AS consensus,
       a.consensus_logit,
       _inv_logit(a.market_logit) AS market_consensus,
       a.market_logit AS market_consensus_logit,
       _inv_logit(a.paired_consensus_logit) - _inv_logit(a.market_logit) AS gap_vs_market,
       -- (NULL without a member with a consensus, like consensus: greatest() skips a NULL and gave 0; QA)
       CASE WHEN a.consensus_wmean IS NOT NULL THEN sqrt(greatest(a.consensus_wsq - a.consensus_wmean * a.consensus_wmean, 0)) END AS spread,
       a.disagreement,
       rp.as_of
FROM _thesis_defs AS d
JOIN agg AS a USING (thesis_id)
CROSS JOIN run_params AS rp
ORDER BY d.thesis_id;
