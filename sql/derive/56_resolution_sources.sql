-- 56_resolution_sources: the reliability of each source of resolutions (sql/README.md,
-- `resolution_sources`).
--
-- A question's resolution records are its raw `resolutions` rows visible at as_of (resolved_at <=
-- as_of); its final resolution is the one 10_questions publishes (latest resolved_at, then latest
-- retrieved_at), and the question counts for the final record's source_slug (NULL: 'unknown').
-- Per source:
--   resolutions        questions whose final resolution comes from the source (annulled included)
--   annulled           of those, final outcome NULL (the market was voided)
--   amended            questions with more than one distinct (outcome, resolved_at) among their
--                      records: the resolution was disputed or amended after it was first recorded
--   changed            questions whose earliest retrieved record has another outcome than the final
--                      one (NULL, i.e. annulled, counts as an outcome)
--   share_changed      changed / resolutions
--   median_lag_days    median of (final resolved_at − close_time) in days over the questions with a
--                      close_time (negative: resolved before the scheduled close)
--   name, kind         from raw `sources`

CREATE OR REPLACE TABLE resolution_sources AS
WITH recs AS (
  SELECT r.question_id, r.outcome, r.resolved_at, r.retrieved_at, r.source_slug
  FROM raw_resolutions AS r, run_params AS rp
  WHERE r.resolved_at <= rp.as_of
),
per_q AS (
  SELECT question_id,
         count(DISTINCT (outcome, resolved_at)) AS versions,
         arg_min(outcome, (retrieved_at, resolved_at)) AS first_outcome,
         -- whether the earliest record is an annulment (arg_min may skip a NULL outcome)
         arg_min(outcome IS NULL, (retrieved_at, resolved_at)) AS first_annulled
  FROM recs
  GROUP BY question_id
),
final AS (
  SELECT q.question_id, coalesce(q.source_slug, 'unknown') AS source_slug, q.outcome, q.resolved_at,
         q.close_time, q.status
  FROM questions AS q
  WHERE q.status IN ('resolved', 'annulled')
)
SELECT f.source_slug, any_value(s.name) AS name, any_value(s.kind) AS kind,
       count(*)::BIGINT AS resolutions,
       count(*) FILTER (WHERE f.status = 'annulled')::BIGINT AS annulled,
       count(*) FILTER (WHERE p.versions > 1)::BIGINT AS amended,
       count(*) FILTER (WHERE p.first_annulled <> (f.outcome IS NULL)
                          OR (NOT p.first_annulled AND f.outcome IS NOT NULL AND p.first_outcome <> f.outcome))::BIGINT
         AS changed,
       count(*) FILTER (WHERE p.first_annulled <> (f.outcome IS NULL)
                          OR (NOT p.first_annulled AND f.outcome IS NOT NULL AND p.first_outcome <> f.outcome))
         / count(*) AS share_changed,
       median((epoch(f.resolved_at) - epoch(f.close_time)) / 86400.0) AS median_lag_days,
       count(f.close_time)::BIGINT AS n_lag
FROM final AS f
JOIN per_q AS p ON p.question_id = f.question_id
LEFT JOIN (SELECT unnest(arg_max(s, s.name)) FROM raw_sources AS s GROUP BY s.source_slug) AS s
  ON s.source_slug = f.source_slug
GROUP BY f.source_slug
ORDER BY resolutions DESC, f.source_slug;
