-- The scored consensus of one resolved question in each mode (scored_consensus: the latest run
-- before the question's close and resolution), with its scores and market comparator. The
-- comparator is flagged stale by its age at the consensus created_at (the time the forecast was
-- compared with it), not at as_of.
-- Parameters: $question_id VARCHAR, $max_price_age_hours DOUBLE.
SELECT mode, run_id, created_at, n_models, probability AS mean, median, logit_mean, sd, "range", sd_logit,
       providers, outcome, brier, log_loss, direction, market_probability, market_observed_at, market_brier,
       market_log_loss, is_headline,
       CASE WHEN market_probability IS NOT NULL
            THEN (epoch(created_at) - epoch(market_observed_at)) / 3600.0 > $max_price_age_hours END AS market_stale
FROM scored_consensus
WHERE question_id = $question_id;
