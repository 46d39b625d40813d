-- The consensus of one question per run and mode (the forecast history), most recent first, at
-- most $limit rows (the caller asks one more than it shows, to know whether history was cut).
-- Runs dated at the same time: the greater run_id first, the latest as the snapshot's
-- (prediction-latest-consensus.sql), so the first row of a mode is the consensus shown as current.
-- Parameters: $question_id VARCHAR, $limit BIGINT.
SELECT run_id, mode, created_at, n_models, mean, median, logit_mean, sd, "range", sd_logit, providers
FROM consensus
WHERE question_id = $question_id
ORDER BY created_at DESC, mode, run_id DESC
LIMIT $limit;
