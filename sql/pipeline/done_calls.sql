-- The model calls already stored for a run ($run_id): their (question, model, mode, condition) are
-- not called again by a resumed or re-run run, and their cost counts toward the run's budget.
SELECT question_id, model, mode, condition, status, cost_usd
FROM raw_model_calls
WHERE run_id = $run_id;
