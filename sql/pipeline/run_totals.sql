-- Totals of one run ($run_id) over everything stored for it (all sessions of a resumed run).
SELECT
  (SELECT count(*) FROM raw_model_calls WHERE run_id = $run_id)::BIGINT AS calls,
  (SELECT count(*) FROM raw_model_calls WHERE run_id = $run_id AND status = 'failed')::BIGINT AS failed_calls,
  (SELECT count(*) FROM raw_model_calls WHERE run_id = $run_id AND status = 'skipped')::BIGINT AS skipped_calls,
  (SELECT count(*) FROM raw_model_calls WHERE run_id = $run_id AND error_kind = 'budget_exhausted')::BIGINT AS budget_skipped,
  (SELECT coalesce(sum(tokens_in), 0) FROM raw_model_calls WHERE run_id = $run_id)::BIGINT AS tokens_in,
  (SELECT coalesce(sum(tokens_out), 0) FROM raw_model_calls WHERE run_id = $run_id)::BIGINT AS tokens_out,
  -- in micro-dollars, as the journal's totals: a plain sum of the calls' doubles printed 5.753999999999834
  (SELECT round(coalesce(sum(cost_usd), 0), 6) FROM raw_model_calls WHERE run_id = $run_id)::DOUBLE AS cost_usd,
  (SELECT count(*) FROM raw_forecasts WHERE run_id = $run_id AND translation_of IS NULL)::BIGINT AS forecasts,
  -- the evidence the run's forecasts cite (evidence rows carry no run id: an item another run
  -- stored first is not written again, so "written by this run" cannot be counted from raw)
  (SELECT count(DISTINCT evidence_id) FROM (SELECT unnest(evidence_ids) AS evidence_id FROM raw_forecasts WHERE run_id = $run_id))::BIGINT AS evidence_items;
