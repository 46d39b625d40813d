-- 90_claims: the claims database (issue 11) and the sources that made them.
--
-- Two kinds of claims, one table:
--  * imported claims (raw_claims: `quorum import claims`), visible when made at or before
--    run_params.as_of; their resolution (outcome, realized_value) only when resolved_at <= as_of.
--  * Quorum's own scored forecasts and the venues' prices, read through the view _claims_quorum
--    over scored_forecasts, scored_consensus and questions (nothing is copied into raw_claims):
--    - each AI model: its scored forecast of a resolved question in the question's headline mode
--      (the mode of the headline consensus), source `ai-<model>`;
--    - the consensus: the headline consensus, source `quorum-consensus`;
--    - each venue (polymarket, manifold, metaculus, infer, ...): the market comparator price of the
--      headline consensus (the price the AI was compared with), one claim per question.
--    All are probability claims "the question resolves YES"; reference_probability is the
--    market comparator for the models and the consensus (model vs market), NULL for the venues.
--
-- Directional score of a claim (hit): direction claims score their outcome (1 came true, 0 did
-- not, 0.5 a tie); probability claims score 1 when p > 0.5 and the event happened or p < 0.5 and
-- it did not, 0 for the opposite, and 0.5 when p = 0.5 (no direction: a tie counts half) or the
-- outcome is a tie; p is rounded to 9 decimals like _direction. Value claims have no hit.
--
-- Reference for value claims (a pollster against the average of the polls): the mean claimed
-- value of the OTHER claims with the same subject_key (the race) in the same window, the window
-- being the 14-day bucket of horizon_days (floor(horizon_days / 14): polls fielded in the same two
-- weeks counting back from the event). NULL when no other claim shares the window.

CREATE OR REPLACE TEMP MACRO _claim_slug(s) AS
  trim(regexp_replace(lower(s), '[^a-z0-9]+', '-', 'g'), '-');

CREATE OR REPLACE TEMP MACRO _claim_hit(kind, p, o) AS
  CASE WHEN o IS NULL THEN NULL
       WHEN kind = 'direction' THEN o
       WHEN kind = 'probability' AND p IS NOT NULL THEN
         CASE WHEN o = 0.5 OR round(p, 9) = 0.5 THEN 0.5
              WHEN (round(p, 9) > 0.5) = (o = 1) THEN 1.0
              ELSE 0.0 END
       END;

-- Claims' own sources: the kinds of the registry of resolution sources are mapped onto the
-- claims' vocabulary (government, central_bank, regulatory → institution; primary_financial,
-- secondary_reporting → media; analyst → forecaster).
CREATE OR REPLACE TABLE _raw_sources AS
SELECT source_slug,
       min(name) AS name,
       CASE min(kind)
         WHEN 'government' THEN 'institution' WHEN 'central_bank' THEN 'institution'
         WHEN 'regulatory' THEN 'institution' WHEN 'primary_financial' THEN 'media'
         WHEN 'secondary_reporting' THEN 'media' WHEN 'analyst' THEN 'forecaster'
         ELSE coalesce(min(kind), 'other') END AS kind,
       min(url) AS url, min(description) AS description, min(attribution) AS attribution
FROM raw_sources
GROUP BY source_slug;

CREATE OR REPLACE TEMP VIEW _claims_quorum AS
SELECT 'forecast:' || f.question_id || ':' || f.model || ':' || f.mode AS claim_id,
       'ai-' || _claim_slug(f.model) AS source_slug,
       f.created_at AS made_at, f.question_id, q.title AS subject, f.question_id AS subject_key,
       f.category, 'probability' AS kind, f.probability, 'yes' AS side,
       NULL::DOUBLE AS value, NULL::VARCHAR AS unit, NULL::DOUBLE AS threshold, NULL::DOUBLE AS tolerance,
       f.horizon_days, f.outcome, NULL::DOUBLE AS realized_value, f.resolved_at,
       'quorum' AS provenance_dataset, 'scored_forecasts' AS provenance_file, NULL::BIGINT AS provenance_line,
       f.model || ' (' || f.mode || ' mode): ' || f.probability AS claim_text,
       f.market_probability AS reference_probability
FROM scored_forecasts AS f
JOIN scored_consensus AS h ON h.question_id = f.question_id AND h.mode = f.mode AND h.is_headline
LEFT JOIN questions AS q ON q.question_id = f.question_id
UNION ALL
SELECT 'consensus:' || c.question_id || ':' || c.mode, 'quorum-consensus',
       c.created_at, c.question_id, q.title, c.question_id, c.category, 'probability', c.probability, 'yes',
       NULL, NULL, NULL, NULL, c.horizon_days, c.outcome, NULL, c.resolved_at,
       'quorum', 'scored_consensus', NULL,
       -- rounded to 12 decimals: the consensus mean's last bits follow the order rows reach its
       -- aggregate, and the text read 0.35 one run and 0.35000000000000003 the next (QA)
       'Quorum consensus (' || c.mode || ' mode): ' || round(c.probability, 12), c.market_probability
FROM scored_consensus AS c
LEFT JOIN questions AS q ON q.question_id = c.question_id
WHERE c.is_headline
UNION ALL
SELECT 'price:' || c.question_id || ':' || strftime(c.market_observed_at, '%Y-%m-%dT%H:%M:%S'),
       coalesce(q.venue, split_part(c.question_id, ':', 1)),
       c.market_observed_at, c.question_id, q.title, c.question_id, c.category, 'probability',
       c.market_probability, 'yes', NULL, NULL, NULL, NULL,
       _horizon_days(c.market_observed_at, c.resolved_at), c.outcome, NULL, c.resolved_at,
       'quorum', 'market_prices', NULL,
       coalesce(q.venue, 'market') || ' price: ' || c.market_probability, NULL
FROM scored_consensus AS c
LEFT JOIN questions AS q ON q.question_id = c.question_id
WHERE c.is_headline AND c.market_probability IS NOT NULL;

-- A view, not a table: it is read twice (the windows, then the claims), and reading the raw
-- Parquet twice is cheaper than materializing every claim once more.
-- An imported claim's resolution is its own, or, for a claim imported open, the one a later import
-- added (raw claim_resolutions: one per claim; the claim's row is never rewritten).
CREATE OR REPLACE TEMP VIEW _claims_all AS
WITH c AS (
  SELECT c.* REPLACE (
           CASE WHEN r.claim_id IS NULL THEN c.outcome ELSE r.outcome END AS outcome,
           CASE WHEN r.claim_id IS NULL THEN c.realized_value ELSE r.realized_value END AS realized_value,
           CASE WHEN r.claim_id IS NULL THEN c.resolved_at ELSE r.resolved_at END AS resolved_at)
  FROM raw_claims AS c
  LEFT JOIN raw_claim_resolutions AS r ON r.claim_id = c.claim_id AND c.outcome IS NULL AND c.realized_value IS NULL
)
SELECT c.claim_id, c.source_slug, c.claimed_at AS made_at, c.question_id, c.subject, c.subject_key,
       -- lower case: a version before the import checked categories stored them as written
       -- ("Politics"), and the API's category filter never found those claims (QA)
       lower(c.category) AS category, c.kind, c.probability, c.side, c.value, c.unit, c.threshold, c.tolerance,
       c.horizon_days,
       CASE WHEN c.resolved_at <= rp.as_of THEN c.outcome END AS outcome,
       CASE WHEN c.resolved_at <= rp.as_of THEN c.realized_value END AS realized_value,
       CASE WHEN c.resolved_at <= rp.as_of AND (c.outcome IS NOT NULL OR c.realized_value IS NOT NULL)
            THEN c.resolved_at END AS resolved_at,
       c.provenance_dataset, c.provenance_file, c.provenance_line, coalesce(c.claim_text, c.subject) AS claim_text,
       NULL::DOUBLE AS reference_probability, 'import' AS origin
FROM c, run_params AS rp
WHERE c.claimed_at <= rp.as_of AND c.kind IN ('probability', 'direction', 'value')
UNION ALL
SELECT *, 'quorum' FROM _claims_quorum;

-- The windows of the value references: per subject_key and 14-day bucket of horizon_days, the sum
-- and count of claimed values (a hash aggregate joined back: no window sort over all claims).
CREATE OR REPLACE TABLE _claim_windows AS
SELECT subject_key, floor(horizon_days / 14) AS window_no, sum(value) AS total, count(value) AS n
FROM _claims_all
WHERE value IS NOT NULL AND subject_key IS NOT NULL AND horizon_days IS NOT NULL
GROUP BY ALL
HAVING count(value) > 1;

-- Published: every visible claim with its directional hit, its errors and its reference. A view,
-- written to the snapshot when it is exported (like scenario_records): materializing every claim
-- as a table first, a second copy of the raw claims, cost about as much as writing the file (1.1 s
-- of the claims bench's 2.3 s derive). The pipeline pins the raw views for the derive and the
-- export (pipeline/warehouse/raw-views.ts), so the file lists the claims the track records count.
-- The track records read the narrow _claim_facts below.
CREATE OR REPLACE TEMP VIEW claims AS
SELECT a.*,
       a.resolved_at IS NOT NULL AS resolved,
       _claim_hit(a.kind, a.probability, a.outcome) AS hit,
       -- probability claims only: an operator's direction or value claim may carry a probability
       -- too (the column filled on every row), kept but not scored as one (QA: a direction claim
       -- "yes" at 0.3 that came true had hit 1 and a Brier of 0.49, counted in n_probability)
       CASE WHEN a.kind = 'probability' AND a.probability IS NOT NULL AND a.outcome IN (0, 1) THEN _brier(a.probability, a.outcome) END AS brier,
       CASE WHEN a.kind = 'probability' AND a.probability IS NOT NULL AND a.outcome IN (0, 1) THEN _log_loss(a.probability, a.outcome) END AS log_loss,
       CASE WHEN a.kind = 'probability' AND a.reference_probability IS NOT NULL AND a.outcome IN (0, 1) THEN _brier(a.reference_probability, a.outcome) END AS reference_brier,
       a.value - a.realized_value AS error,
       CASE WHEN a.value IS NOT NULL AND a.realized_value IS NOT NULL
            THEN abs(a.value - a.realized_value) <= coalesce(a.tolerance, 0.05 * abs(a.realized_value)) END AS within_tolerance,
       CASE WHEN a.value IS NOT NULL AND w.n > 1 THEN (w.total - a.value) / (w.n - 1) END AS reference_value,
       year(a.made_at)::INTEGER AS year,
       CASE WHEN a.horizon_days IS NULL THEN NULL
            WHEN a.horizon_days <= 365 THEN _horizon_bucket(a.horizon_days)
            -- past 365 days: whole (Julian) years rounded up, from 2y: a horizon in (365, 365.25]
            -- is in the first year bucket after 91-365, not in a '1y' the contract lacks
            ELSE greatest(2, ceil(a.horizon_days / 365.25))::INTEGER || 'y' END AS horizon_bucket
FROM _claims_all AS a
LEFT JOIN _claim_windows AS w
  ON w.subject_key = a.subject_key AND w.window_no = floor(a.horizon_days / 14);

-- The columns the track records (91-94) and claim_sources read, materialized once: the view's
-- texts (claim ids, subjects, claim texts, provenance) are left out, so this costs a fraction of
-- the whole table. (_claim_windows and _claims_all stay: the view reads them when it is exported.)
CREATE OR REPLACE TABLE _claim_facts AS
SELECT source_slug, category, made_at, year, horizon_days, horizon_bucket, resolved, probability,
       outcome, hit, brier, log_loss, reference_brier, error, within_tolerance, reference_value,
       realized_value, unit
FROM claims;

-- Published: every source that made at least one visible claim (imported sources, the venues,
-- the AI models and the consensus), with the categories of its claims.
CREATE OR REPLACE TABLE claim_sources AS
WITH made AS (
  SELECT source_slug, count(*) AS n_claims, list(DISTINCT category ORDER BY category) FILTER (WHERE category IS NOT NULL) AS categories
  FROM _claim_facts GROUP BY source_slug
)
SELECT m.source_slug,
       coalesce(s.name, CASE WHEN m.source_slug = 'quorum-consensus' THEN 'Quorum consensus'
                             WHEN m.source_slug LIKE 'ai-%' THEN substr(m.source_slug, 4) ELSE m.source_slug END) AS name,
       coalesce(s.kind, CASE WHEN m.source_slug = 'quorum-consensus' THEN 'consensus'
                             WHEN m.source_slug LIKE 'ai-%' THEN 'ai_model'
                             WHEN m.source_slug IN (SELECT venue FROM questions) THEN 'market' ELSE 'other' END) AS kind,
       s.url,
       coalesce(s.description, CASE WHEN m.source_slug = 'quorum-consensus' THEN 'The headline consensus of Quorum''s AI models.'
                                    WHEN m.source_slug LIKE 'ai-%' THEN 'An AI model forecasting for Quorum (headline mode).' END) AS description,
       coalesce(s.attribution, CASE WHEN m.source_slug = 'quorum-consensus' OR m.source_slug LIKE 'ai-%' THEN 'Quorum' END) AS attribution,
       coalesce(m.categories, []) AS categories
FROM made AS m
LEFT JOIN _raw_sources AS s ON s.source_slug = m.source_slug;

DROP TABLE _raw_sources;
