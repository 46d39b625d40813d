-- The horizon of a resolved question's headline scored consensus (resolved_predictions): its
-- bucket and the fractional days from the consensus to the resolution.
-- Parameters: $question_id VARCHAR.
SELECT mode, horizon_bucket, forecast_at, resolved_at,
       (epoch(resolved_at) - epoch(forecast_at)) / 86400.0 AS horizon_days
FROM resolved_predictions
WHERE question_id = $question_id
LIMIT 1;
