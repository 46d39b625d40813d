-- Markets of one venue that the warehouse tracks: known questions with no outcome or annulment
-- recorded yet, and those whose latest resolution is dated at or after $recheck_since (a
-- TIMESTAMP as text; 'infinity': none), which the venue may still amend. Each sync records a price
-- for the unresolved ones and checks whether they resolved; last_observed_at (the latest price
-- observation, NULL if none) lets it fill a gap left by missed syncs from the venue's price
-- history; close_time (the latest version's) lets it notice that the venue moved the market's
-- close; resolved (with the latest resolution's outcome and resolved_at, as
-- sql/derive/10_questions.sql picks it) marks a resolved market, only checked for an amendment.
-- A market whose every resolution record lacks a time (written by a version that stored a venue's
-- undated resolution so: never visible) is looked up whatever its age, so the sync dates it.
-- arg_max_null, not arg_max: arg_max skips a NULL outcome, so an annulment recorded after a YES/NO
-- read as that YES/NO, and every sync recorded the annulment again (QA: a new resolution record and
-- "resolution amended" lifecycle event per sync, its resolved_at moved to each, rechecked forever).
-- removed_since: when the venue first answered "not found" for the market, if nothing was heard of
-- it since: the question's latest lifecycle event is the `closed` one a sync records then, its
-- reason starting with $removed_prefix (pipeline/venues/removed-market.ts); NULL otherwise. A sync
-- that finds the market again records a later event, which ends it. Only events dated at or before
-- the sync ($now, a TIMESTAMP as text) count: versions before 2026-11-27 dated the `closed` event of
-- a market its venue called closed (closed early: Kalshi's status, Polymarket's `closed`) at its
-- scheduled close, weeks ahead, and that event read as the latest hid the removal, so every sync
-- closed the market again and none annulled it (QA upgrade pass). discovered: the question's
-- first version came from a venue sync (its origin the endpoint it was read from, `<venue>:<url>`),
-- not from a dataset import (`forecastbench:<file>@<commit>`), whose later rounds resolve it: only
-- such a market is closed and annulled when its venue no longer knows it.
WITH latest AS (
  SELECT question_id, venue, venue_market_id, close_time,
         first_value(origin) OVER (PARTITION BY question_id ORDER BY ingested_at) AS first_origin
  FROM raw_questions
  QUALIFY row_number() OVER (PARTITION BY question_id ORDER BY ingested_at DESC) = 1
),
last_price AS (
  SELECT question_id, max(observed_at) AS last_observed_at
  FROM raw_market_prices
  WHERE venue = $venue
  GROUP BY question_id
),
resolution AS (
  SELECT question_id, arg_max_null(outcome, (resolved_at IS NOT NULL, resolved_at, retrieved_at)) AS outcome,
         max(resolved_at) AS resolved_at
  FROM raw_resolutions
  GROUP BY question_id
),
last_event AS (
  SELECT question_id, state, "at", reason FROM raw_lifecycle_events
  WHERE question_id IN (SELECT question_id FROM latest WHERE venue = $venue)
    AND "at" <= $now::TIMESTAMP
  QUALIFY row_number() OVER (
    PARTITION BY question_id
    ORDER BY "at" DESC, list_position(['proposed', 'active', 'closed', 'resolved', 'annulled'], state) DESC, reason DESC
  ) = 1
)
SELECT l.question_id, l.venue_market_id, l.close_time, p.last_observed_at,
       r.question_id IS NOT NULL AS resolved, r.outcome AS resolved_outcome, r.resolved_at,
       CASE WHEN e.state = 'closed' AND starts_with(e.reason, $removed_prefix) THEN e."at" END AS removed_since,
       coalesce(starts_with(l.first_origin, $venue || ':'), false) AS discovered
FROM latest l
LEFT JOIN last_price p USING (question_id)
LEFT JOIN resolution r USING (question_id)
LEFT JOIN last_event e USING (question_id)
WHERE l.venue = $venue
  AND (r.question_id IS NULL OR r.resolved_at IS NULL OR r.resolved_at >= $recheck_since::TIMESTAMP)
ORDER BY l.question_id;
