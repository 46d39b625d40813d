-- Export of predictions: every question of the snapshot with its headline consensus (the latest
-- run's consensus in the first headline mode that has one) and its latest market probability.
-- Run by the export engine as `COPY (<this query>) TO '<temp file>' (...)` (wrapped in
-- `SELECT * FROM (...) LIMIT $limit` when a limit applies) with BOUND parameters:
--   $status VARCHAR    'all' | one question status: 'active' | 'closed' | 'resolved' | 'annulled'
--   $updated_since VARCHAR|NULL   UTC timestamp: rows with updated_at >= it
--   $resolved_since VARCHAR|NULL  UTC timestamp: rows with resolved_at >= it
--   $category VARCHAR|NULL  one of the nine categories
--   $headline_modes VARCHAR  the snapshot's headline modes, comma-separated, in preference order
-- updated_at = the latest of created_at, the headline consensus time, the latest market
-- observation, the close of a closed question (its close_time: when its status became `closed`),
-- resolved_at and the resolution's retrieved_at (when Quorum recorded it) (greatest() ignores
-- NULLs). Without the close, a question that closed after its last price and consensus kept an
-- updated_at before its close: a client syncing with updated_since never saw it leave `active`
-- (QA: 43 of 67 closed questions of the sample). Without retrieved_at, a resolution recorded after
-- the previous export but dated before it (an imported resolution set, a venue that dates the
-- outcome by the market's close) was never in a client's updated_since export (QA).
-- outcome is an INTEGER: 1 or 0 for a resolved question, NULL otherwise (annulled, unresolved); a
-- stored outcome other than 0/1 fails the export rather than being rounded.
WITH headline AS (
  SELECT c.question_id, c.mode, c.run_id, c.created_at, c.n_models, c.mean, c.median,
         c.logit_mean, c.sd, c.range, c.sd_logit, c.providers
  FROM consensus AS c
  WHERE list_position(string_split($headline_modes, ','), c.mode) IS NOT NULL
  QUALIFY row_number() OVER (
    PARTITION BY c.question_id
    ORDER BY list_position(string_split($headline_modes, ','), c.mode), c.created_at DESC, c.run_id DESC
  ) = 1
),
rows AS (
  SELECT
    q.question_id,
    q.venue,
    q.venue_market_id,
    q.title,
    q.category,
    q.domain,
    q.status,
    q.url,
    q.created_at,
    q.close_time,
    h.mode,
    h.mean AS consensus,
    h.median AS consensus_median,
    h.logit_mean AS consensus_logit_mean,
    h.n_models,
    h.sd AS disagreement_sd,
    h.range AS disagreement_range,
    h.sd_logit AS disagreement_sd_logit,
    h.created_at AS consensus_at,
    h.run_id AS consensus_run_id,
    h.providers,
    q.latest_market_probability AS market_probability,
    q.latest_market_observed_at AS market_observed_at,
    CASE
      WHEN q.status <> 'resolved' OR q.outcome IS NULL THEN NULL
      WHEN q.outcome IN (0, 1) THEN CAST(q.outcome AS INTEGER)
      ELSE error('question ' || q.question_id || ' has outcome ' || q.outcome || ', neither 0 nor 1')
    END AS outcome,
    q.resolved_at,
    q.source_slug,
    q.source_url,
    greatest(
      q.created_at, h.created_at, q.latest_market_observed_at, q.resolved_at, q.retrieved_at,
      CASE WHEN q.status = 'closed' THEN q.close_time END
    ) AS updated_at
  FROM questions AS q
  LEFT JOIN headline AS h ON h.question_id = q.question_id
)
SELECT *
FROM rows
WHERE ($status = 'all' OR status = $status)
  AND ($updated_since IS NULL OR updated_at >= CAST($updated_since AS TIMESTAMP))
  AND ($resolved_since IS NULL OR resolved_at >= CAST($resolved_since AS TIMESTAMP))
  AND ($category IS NULL OR category = $category)
ORDER BY question_id
