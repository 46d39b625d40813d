-- 99_factor_1_tree: anchor factors with driver trees and their levels (issue 12).
--
-- Definitions: data/structure/factors/*.yaml, flattened by pipeline/factors/ into the temp tables
-- _factor_defs (one row per factor), _factor_nodes (the factor itself at depth 0, its drivers at 1,
-- sub-drivers at 2; `ord` = depth-first order), _factor_leaves_def (questions listed by hand) and
-- _factor_rule_terms (automatic attachment: one row per term of a rule, group_ord 0.. for its match
-- groups, -1 for its exclude list).
--
-- Leaves: every question of this snapshot listed under a node, plus every question a rule attaches:
-- its category among the rule's categories (NULL: any), its title holding a term of every match
-- group and no exclude term. Titles and terms are compared normalized: lower-cased, each run of
-- characters other than letters and digits one space, padded with a space at both ends, so
-- `contains(title, ' ' || term || ' ')` matches whole words (a plain substring test: no regex is
-- compiled per row, which kept 20,000 questions under a second). Within a factor a question is
-- one leaf: a hand listing wins over rules; among rules, the first in depth-first order (rule_ord).
--
-- Level of a node (the factor or a driver), over the leaves of its subtree with a headline consensus
-- (active_predictions):  level = inv_logit( Σ w·logit(p_signed) / Σ w ), p_signed = p for sign +1
-- and 1 − p for sign −1, p clipped to [0.001, 0.999] (the thesis consensus of 97_theses.sql).
-- previous_level: the same over each leaf's consensus of its previous run (the latest consensus of
-- the same question and mode created before the headline one), leaves with one;
-- change = the level over those same leaves − previous_level. market_level: the same over the active
-- leaves' latest market prices; gap_vs_market = the level over the leaves with both a consensus and
-- a price − the market level over the same leaves. (QA: change and gap compared different sets of
-- leaves, so a leaf newly attached, with no previous consensus, or one without a price moved them
-- though no forecast had changed: an unchanged leaf at 0.6 and one moved toward the statement,
-- beside a new leaf at 0.1, read a change of −10.7 points for +7.4.)

CREATE TEMP TABLE IF NOT EXISTS _factor_defs (factor_id VARCHAR, name VARCHAR, statement VARCHAR, description VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS _factor_nodes
  (node_id VARCHAR, factor_id VARCHAR, parent_id VARCHAR, depth INTEGER, ord INTEGER, name VARCHAR, description VARCHAR);
CREATE TEMP TABLE IF NOT EXISTS _factor_leaves_def
  (node_id VARCHAR, factor_id VARCHAR, question_id VARCHAR, sign INTEGER, weight DOUBLE);
CREATE TEMP TABLE IF NOT EXISTS _factor_rule_terms
  (node_id VARCHAR, factor_id VARCHAR, rule_ord INTEGER, n_groups INTEGER, group_ord INTEGER, term VARCHAR,
   categories VARCHAR, sign INTEGER, weight DOUBLE);

CREATE OR REPLACE TEMP MACRO _factor_norm(s) AS ' ' || trim(regexp_replace(lower(s), '[^\pL\pN]+', ' ', 'g')) || ' ';

CREATE OR REPLACE TABLE _factor_titles AS
SELECT question_id, category, _factor_norm(title) AS text FROM questions WHERE title IS NOT NULL;

CREATE OR REPLACE TABLE _factor_needles AS
SELECT t.*, _factor_norm(t.term) AS needle,
       CASE WHEN t.categories IS NULL THEN NULL ELSE string_split(t.categories, ',') END AS category_list
FROM _factor_rule_terms AS t;

-- (rule, group, question) for every term found; group -1 is the rule's exclude list.
CREATE OR REPLACE TABLE _factor_term_hits AS
SELECT DISTINCT n.factor_id, n.rule_ord, n.group_ord, q.question_id
FROM _factor_needles AS n
JOIN _factor_titles AS q
  ON (n.category_list IS NULL OR list_contains(n.category_list, q.category)) AND contains(q.text, n.needle);

-- Questions a rule attaches: every match group found, no exclude term.
CREATE OR REPLACE TABLE _factor_rule_hits AS
WITH rules AS (
  SELECT DISTINCT factor_id, rule_ord, node_id, n_groups, sign, weight FROM _factor_rule_terms
)
SELECT r.factor_id, r.rule_ord, h.question_id, r.node_id, r.sign, r.weight
FROM rules AS r
JOIN _factor_term_hits AS h ON h.factor_id = r.factor_id AND h.rule_ord = r.rule_ord AND h.group_ord >= 0
GROUP BY r.factor_id, r.rule_ord, h.question_id, r.node_id, r.sign, r.weight, r.n_groups
HAVING count(*) = r.n_groups
   AND NOT EXISTS (SELECT 1 FROM _factor_term_hits AS x
                   WHERE x.factor_id = r.factor_id AND x.rule_ord = r.rule_ord AND x.group_ord = -1 AND x.question_id = h.question_id);

CREATE OR REPLACE TABLE _factor_attach AS
SELECT d.factor_id, d.node_id, d.question_id, d.sign, d.weight, 'curated' AS origin, NULL::INTEGER AS rule_ord
FROM _factor_leaves_def AS d
WHERE d.question_id IN (SELECT question_id FROM questions)
UNION ALL
SELECT h.factor_id, arg_min(h.node_id, h.rule_ord), h.question_id, arg_min(h.sign, h.rule_ord),
       arg_min(h.weight, h.rule_ord), 'rule', min(h.rule_ord)
FROM _factor_rule_hits AS h
WHERE NOT EXISTS (SELECT 1 FROM _factor_leaves_def AS d WHERE d.factor_id = h.factor_id AND d.question_id = h.question_id)
GROUP BY h.factor_id, h.question_id;

-- The previous consensus of each headline consensus: same question and mode, the latest created before.
CREATE OR REPLACE TABLE _factor_previous AS
SELECT ap.question_id, arg_max(c.mean, (c.created_at, c.run_id)) AS previous_consensus, arg_max(c.run_id, (c.created_at, c.run_id)) AS previous_run_id
FROM active_predictions AS ap
JOIN consensus AS c ON c.question_id = ap.question_id AND c.mode = ap.mode AND c.created_at < ap.forecast_at
WHERE ap.question_id IN (SELECT question_id FROM _factor_attach)
GROUP BY ap.question_id;

-- The latest run that forecast anything (at or before as_of: the run of the newest forecast) and
-- how many models it asked, in one pass over the forecasts (per run, then the newest run). No
-- row when there is no forecast. Runs dated at the same time: the greater run_id, as every latest
-- of the snapshot (30_scored_forecasts), and its id and model count from one arg_max, so from the
-- same run.
CREATE OR REPLACE TABLE _factor_latest_run AS
SELECT latest.run_id AS run_id, latest.n_models AS n_models
FROM (
  SELECT arg_max({'run_id': run_id, 'n_models': n_models}, (last_at, run_id)) AS latest
  FROM (
    SELECT f.run_id, max(f.created_at) AS last_at, count(DISTINCT f.model) AS n_models
    FROM raw_forecasts AS f, run_params AS rp
    WHERE f.created_at <= rp.as_of AND f.condition IS NULL
    GROUP BY f.run_id
  )
)
WHERE latest.run_id IS NOT NULL;

CREATE OR REPLACE TABLE _factor_leaf_forecasts AS
SELECT f.question_id,
       max(f.created_at) AS last_forecast_at,
       count(DISTINCT f.model) FILTER (WHERE f.run_id = (SELECT run_id FROM _factor_latest_run)) AS models_latest_run
FROM raw_forecasts AS f, run_params AS rp
WHERE f.created_at <= rp.as_of AND f.condition IS NULL AND f.question_id IN (SELECT question_id FROM _factor_attach)
GROUP BY f.question_id;

CREATE OR REPLACE TABLE factor_leaves AS
SELECT a.factor_id, a.node_id, a.question_id, a.sign, a.weight, a.origin, a.rule_ord,
       q.title, q.venue, q.url, q.category, q.status, q.outcome, q.resolved_at,
       ap.consensus, ap.mode, ap.run_id AS consensus_run_id, ap.forecast_at, ap.n_models, ap.disagreement_sd,
       p.previous_consensus, p.previous_run_id,
       q.latest_market_probability AS market_probability,
       q.latest_market_observed_at AS market_observed_at,
       CASE WHEN a.sign = -1 THEN 1 - ap.consensus ELSE ap.consensus END AS signed_consensus,
       CASE WHEN a.sign = -1 THEN 1 - p.previous_consensus ELSE p.previous_consensus END AS signed_previous_consensus,
       CASE WHEN a.sign = -1 THEN 1 - q.latest_market_probability ELSE q.latest_market_probability END AS signed_market,
       lf.last_forecast_at,
       coalesce(lf.models_latest_run, 0) AS models_latest_run
FROM _factor_attach AS a
JOIN questions AS q ON q.question_id = a.question_id
LEFT JOIN active_predictions AS ap ON ap.question_id = a.question_id
LEFT JOIN _factor_previous AS p ON p.question_id = a.question_id
LEFT JOIN _factor_leaf_forecasts AS lf ON lf.question_id = a.question_id
ORDER BY a.factor_id, a.node_id, a.question_id;

-- Each leaf under its node and every ancestor of that node (trees are at most three levels deep).
CREATE OR REPLACE TABLE _factor_subtree AS
SELECT n.node_id AS ancestor, l.* FROM factor_leaves AS l JOIN _factor_nodes AS n ON n.node_id = l.node_id
UNION ALL
SELECT n.parent_id, l.* FROM factor_leaves AS l JOIN _factor_nodes AS n ON n.node_id = l.node_id WHERE n.parent_id IS NOT NULL
UNION ALL
SELECT p.parent_id, l.* FROM factor_leaves AS l JOIN _factor_nodes AS n ON n.node_id = l.node_id
JOIN _factor_nodes AS p ON p.node_id = n.parent_id WHERE p.parent_id IS NOT NULL;

CREATE OR REPLACE TABLE factor_nodes AS
WITH agg AS (
  SELECT ancestor AS node_id,
         count(*) AS n_leaves,
         count(*) FILTER (WHERE status = 'active') AS n_active,
         count(*) FILTER (WHERE status = 'resolved') AS n_resolved,
         count(signed_consensus) AS n_with_consensus,
         count(signed_previous_consensus) AS n_with_previous,
         count(signed_market) FILTER (WHERE status = 'active') AS n_with_market,
         sum(weight * _logit(signed_consensus)) FILTER (WHERE signed_consensus IS NOT NULL)
           / sum(weight) FILTER (WHERE signed_consensus IS NOT NULL) AS level_logit,
         sum(weight * _logit(signed_previous_consensus)) FILTER (WHERE signed_previous_consensus IS NOT NULL)
           / sum(weight) FILTER (WHERE signed_previous_consensus IS NOT NULL) AS previous_level_logit,
         sum(weight * _logit(signed_market)) FILTER (WHERE signed_market IS NOT NULL AND status = 'active')
           / sum(weight) FILTER (WHERE signed_market IS NOT NULL AND status = 'active') AS market_level_logit,
         -- the level over the leaves previous_level covers (each has a consensus: its previous one is of the same question)
         sum(weight * _logit(signed_consensus)) FILTER (WHERE signed_previous_consensus IS NOT NULL)
           / sum(weight) FILTER (WHERE signed_previous_consensus IS NOT NULL) AS paired_previous_level_logit,
         -- the level and the market level over the leaves with both
         sum(weight * _logit(signed_consensus)) FILTER (WHERE signed_consensus IS NOT NULL AND signed_market IS NOT NULL AND status = 'active')
           / sum(weight) FILTER (WHERE signed_consensus IS NOT NULL AND signed_market IS NOT NULL AND status = 'active') AS paired_market_level_logit,
         sum(weight * _logit(signed_market)) FILTER (WHERE signed_consensus IS NOT NULL AND signed_market IS NOT NULL AND status = 'active')
           / sum(weight) FILTER (WHERE signed_consensus IS NOT NULL AND signed_market IS NOT NULL AND status = 'active') AS market_paired_logit
  FROM _factor_subtree
  GROUP BY ancestor
)
SELECT n.node_id, n.factor_id, n.parent_id, n.depth, n.ord, n.name, n.description,
       coalesce(a.n_leaves, 0) AS n_leaves, coalesce(a.n_active, 0) AS n_active, coalesce(a.n_resolved, 0) AS n_resolved,
       coalesce(a.n_with_consensus, 0) AS n_with_consensus, coalesce(a.n_with_previous, 0) AS n_with_previous,
       coalesce(a.n_with_market, 0) AS n_with_market,
       _inv_logit(a.level_logit) AS level, a.level_logit,
       _inv_logit(a.previous_level_logit) AS previous_level,
       _inv_logit(a.paired_previous_level_logit) - _inv_logit(a.previous_level_logit) AS change,
       _inv_logit(a.market_level_logit) AS market_level,
       _inv_logit(a.paired_market_level_logit) - _inv_logit(a.market_paired_logit) AS gap_vs_market,
       rp.as_of
FROM _factor_nodes AS n
LEFT JOIN agg AS a USING (node_id)
CROSS JOIN run_params AS rp
ORDER BY n.factor_id, n.ord;

CREATE OR REPLACE TABLE factors AS
SELECT d.factor_id, d.name, d.statement, d.description,
       n.n_leaves, n.n_active, n.n_resolved, n.n_with_consensus, n.n_with_previous, n.n_with_market,
       n.level, n.level_logit, n.previous_level, n.change, n.market_level, n.gap_vs_market,
       (SELECT count(*) FROM _factor_nodes AS x WHERE x.factor_id = d.factor_id AND x.depth > 0) AS n_drivers,
       (SELECT max(x.depth) + 1 FROM _factor_nodes AS x WHERE x.factor_id = d.factor_id) AS n_levels,
       -- (an empty list, not NULL, for a factor without a leaf with a category: as claim_sources' categories and the API's [])
       coalesce((SELECT list_sort(list(DISTINCT l.category)) FROM factor_leaves AS l WHERE l.factor_id = d.factor_id AND l.category IS NOT NULL), []::VARCHAR[]) AS categories,
       (SELECT count(*) FROM factor_leaves AS l WHERE l.factor_id = d.factor_id AND l.origin = 'rule') AS n_attached_by_rules,
       n.as_of
FROM _factor_defs AS d
JOIN factor_nodes AS n ON n.node_id = d.factor_id
ORDER BY d.factor_id;
