-- read-since: retained events after sequence $after, oldest first, at most $limit (the API's
-- event feed: stream resume and live polling). Retained: written at or after $retained_from.
SELECT seq, event_id, type, question_id, category, created_at, data
FROM raw_events
WHERE seq > $after AND created_at >= CAST($retained_from AS TIMESTAMP)
ORDER BY seq
LIMIT $limit;
