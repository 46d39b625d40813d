-- Every run with its state (raw `runs` has one row per state change; key (run_id, status)) and
-- how many model calls are stored for it. Newest first (by the wall-clock start).
WITH r AS (
  SELECT run_id,
         min(as_of) AS as_of,
         min(started_at) AS started_at,
         max(recorded_at) AS last_recorded_at,
         bool_or(status = 'completed') AS completed,
         bool_or(status = 'failed') AS failed,
         bool_or(status = 'interrupted') AS interrupted,
         arg_max(snapshot, recorded_at) AS snapshot
  FROM raw_runs
  GROUP BY run_id
),
c AS (
  SELECT run_id, count(*) AS calls FROM raw_model_calls GROUP BY run_id
)
SELECT r.run_id, r.as_of, r.started_at, r.last_recorded_at, r.completed, r.failed, r.interrupted, r.snapshot,
       coalesce(c.calls, 0)::BIGINT AS calls
FROM r LEFT JOIN c USING (run_id)
ORDER BY r.started_at DESC NULLS LAST, r.run_id DESC;
