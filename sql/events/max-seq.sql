-- max-seq: the newest event's sequence number (0 when none has been written).
SELECT coalesce(max(seq), 0) AS seq FROM raw_events;
