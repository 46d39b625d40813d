-- Questions a run dated $as_of forecasts: the version of each question known at $as_of (the latest
-- ingested by then) that was open at $as_of (created by then, not closed, no outcome or annulment
-- known by then), with the market's latest observation at or before $as_of and its recent history
-- (newest first, up to 10).
-- The sync's later versions (a close its venue moved, pipeline/sync.ts) are not known before they
-- were ingested: QA review, a run dated before the sync that saw a market closed early was shown
-- that close, and one extended after its first close was forecast again.
-- A question with no version ingested by $as_of is not forecast, though its market opened before:
-- the only text there is of it was written later, and a venue's text carries later edits (outside
-- audit: a run dated 2025-12-15 was shown a Manifold market's background as of the 2026-03-06
-- question set, with the creator's clarification of 2025-12-20 in it).
WITH latest AS (
  SELECT * FROM raw_questions
  WHERE ingested_at <= $as_of
  QUALIFY row_number() OVER (PARTITION BY question_id ORDER BY ingested_at DESC) = 1
),
known_resolutions AS (
  SELECT DISTINCT question_id FROM raw_resolutions WHERE resolved_at <= $as_of
),
prices AS (
  SELECT question_id, observed_at, probability, volume, liquidity
  FROM raw_market_prices
  WHERE observed_at <= $as_of
  QUALIFY row_number() OVER (PARTITION BY question_id, observed_at ORDER BY ingested_at DESC) = 1
),
history AS (
  SELECT question_id,
         list(struct_pack(observed_at := observed_at, probability := probability) ORDER BY observed_at DESC)[1:10] AS history,
         arg_max(probability, observed_at) AS probability,
         max(observed_at) AS observed_at,
         arg_max(volume, observed_at) AS volume,
         arg_max(liquidity, observed_at) AS liquidity
  FROM prices
  GROUP BY question_id
)
SELECT q.question_id, q.title, q.description, q.resolution_criteria, q.url, q.created_at,
       q.close_time, q.category, q.domain,
       h.probability AS market_probability, h.observed_at AS market_observed_at,
       h.volume AS market_volume, h.liquidity AS market_liquidity, h.history AS market_history
FROM latest q
LEFT JOIN history h USING (question_id)
WHERE (q.created_at IS NULL OR q.created_at <= $as_of)
  AND (q.close_time IS NULL OR q.close_time > $as_of)
  AND q.status NOT IN ('resolved', 'annulled')
  AND q.question_id NOT IN (SELECT question_id FROM known_resolutions)
ORDER BY q.question_id;
