-- number: the candidates as `events` rows. event_id is derived from (run, type, subject), so a
-- candidate already stored (a repeated run, or one redone after a kill) is left out; the others
-- get the next sequence numbers, in the order of their type, then subject.
WITH fresh AS (
  SELECT c.*, 'evt_' || substr(sha256($run_id || '|' || c.type || '|' || c.subject), 1, 32) AS event_id
  FROM _event_candidates AS c
)
SELECT f.event_id,
  (SELECT coalesce(max(seq), 0) FROM raw_events) + row_number() OVER (ORDER BY f.ord, f.subject) AS seq,
  $run_id AS run_id, f.type, f.subject, f.question_id, f.category,
  CAST($as_of AS TIMESTAMP) AS as_of, CAST($created_at AS TIMESTAMP) AS created_at,
  $snapshot AS snapshot, nullif($previous, '') AS previous_snapshot, CAST(f.data AS VARCHAR) AS data
FROM fresh AS f
WHERE NOT EXISTS (SELECT 1 FROM raw_events AS e WHERE e.event_id = f.event_id)
ORDER BY seq;
