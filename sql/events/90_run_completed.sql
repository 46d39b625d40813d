-- 90_run_completed: one per run, last: the run summary ($summary, JSON from the pipeline) and the
-- number of events of each type this run found.
INSERT INTO _event_candidates
SELECT 'run.completed', $run_id, NULL, NULL, 90,
  json_merge_patch($summary::JSON, json_object('events', coalesce(
    (SELECT json_group_object(type, n) FROM (SELECT type, count(*) AS n FROM _event_candidates GROUP BY type)),
    '{}'::JSON)));
