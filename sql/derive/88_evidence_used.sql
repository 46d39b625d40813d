-- 88_evidence_used: the evidence the latest forecasts cite (the "evidence used" of a prediction).
--
-- One row per (question_id, evidence_id) where some row of `latest_forecasts` (active questions)
-- or of `scored_forecast_texts` (resolved questions: the scored forecasts, 81) of the question lists
-- evidence_id in its evidence_ids. The two cover disjoint questions (by status). The evidence itself comes from raw `evidence` (one row
-- per evidence_id: the latest retrieved_at wins should it be stored twice) and must have been
-- published by as_of (published_at <= as_of; an item without published_at counts from its
-- retrieved_at; one with neither cannot be placed in time and is left out), like every as-of rule.
-- Cited ids with no visible evidence row are not listed.
-- n_forecasts: how many of those forecasts (models x modes) cite it: a translation (translation_of
-- set) repeats its forecast's evidence_ids in another language and is not another forecast (it
-- counted once per language: four models in five languages were 20 forecasts); modes: the
-- modes citing it, in ladder order (blind, informed, augmented). source_name and source_kind come
-- from raw `sources`; evidence_question_id is the question the evidence was gathered for.
--
-- Cost: only rows with evidence are unnested; plain aggregates (no ordered list aggregate); the raw
-- evidence is probed against the few cited ids.

CREATE OR REPLACE TABLE _evidence_cited AS
WITH cited AS (
  SELECT question_id, mode, unnest(evidence_ids) AS evidence_id
  FROM (SELECT question_id, mode, evidence_ids FROM latest_forecasts WHERE translation_of IS NULL
        UNION ALL
        SELECT question_id, mode, evidence_ids FROM scored_forecast_texts WHERE translation_of IS NULL)
  WHERE len(evidence_ids) > 0
)
SELECT question_id, evidence_id,
       count(*) AS n_forecasts,
       list_filter([CASE WHEN bool_or(mode = 'blind') THEN 'blind' END,
                    CASE WHEN bool_or(mode = 'informed') THEN 'informed' END,
                    CASE WHEN bool_or(mode = 'augmented') THEN 'augmented' END],
                   lambda m: m IS NOT NULL) AS modes
FROM cited
WHERE evidence_id IS NOT NULL
GROUP BY question_id, evidence_id;

CREATE OR REPLACE TABLE evidence_used AS
WITH ev AS (
  SELECT unnest(arg_max(e, coalesce(e.retrieved_at, TIMESTAMP '0001-01-01')))
  FROM raw_evidence AS e
  SEMI JOIN _evidence_cited AS c ON c.evidence_id = e.evidence_id
  GROUP BY e.evidence_id
)
SELECT c.question_id, ev.evidence_id, ev.title, ev.url, ev.published_at, ev.retrieved_at,
       ev.snippet, ev.source_slug, s.name AS source_name, s.kind AS source_kind,
       ev.question_id AS evidence_question_id,
       c.n_forecasts, c.modes
FROM _evidence_cited AS c
JOIN ev ON ev.evidence_id = c.evidence_id
LEFT JOIN (SELECT unnest(arg_max(s, s.name)) FROM raw_sources AS s GROUP BY s.source_slug) AS s
  ON s.source_slug = ev.source_slug
CROSS JOIN run_params AS rp
WHERE coalesce(ev.published_at, ev.retrieved_at) <= rp.as_of
ORDER BY c.question_id, ev.published_at DESC NULLS LAST, ev.evidence_id;
